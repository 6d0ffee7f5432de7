// Ranking a tile by one digit inside a workgroup, in a stable order and with no scan after the
// ranking (the Onesweep way; radix_onesweep.comp and radix_segment_sweep.comp):
// 1. rank_clear(), a barrier; each subgroup counts its keys per bin with rank_count(bin), a
//    barrier;
// 2. per unit of counters (RANK_UNIT_BINS bins), one thread turns the subgroups' counts into each
//    subgroup's start inside the bin (rank_unit_counts), and once the bins' starts in the tile
//    are known (a scan over the counts) places the unit there (rank_place_unit); a barrier;
// 3. round after round of keys in input order, rank_key(bin, valid) gives a key its slot in the
//    tile: it finds the lanes of the same bin (its peers), the highest peer advances its
//    subgroup's start of the bin by their number with one shared atomic and hands the old value
//    on by shuffle; slot = old value + peers below. A subgroup barrier follows each round.
//    Every lane reading its bin's start at the round's start instead (off the chain of the
//    leader's atomic and the shuffle; the leader then stores the start advanced) lost on an H200:
//    keys 0.515 / 1.86 ms at 2^24 / 2^26 against 0.512 / 1.85, pairs 0.752 / 2.78 against 0.733 /
//    2.72 (2026-11-28): a read of random bins per lane costs the shared memory more than the
//    atomic's wait and the shuffle it saves (and 512 x 24 pairs spilled 16 bytes).
// Peers are found by DIGIT_BITS + 1 ballots over the digit's bits, or, where the includer lends
// shared memory that is free during the ranking, by the OR matcher (radix_match_or.glsl; on an
// H200 at 2^26 keys, 512 x 26 in halves, 2.18 ms against 2.40 with ballots). Each subgroup's
// counter of a bin beside its own matcher word of it (one read giving a key its peers and its
// start, the leader's one write clearing the word and advancing the start, no atomic add or
// shuffle) lost: pairs 0.742 / 2.776 ms at 2^24 / 2^26 against 0.672 / 2.512, a round's random
// bins then falling on 16 banks of the pairs' stride instead of 32 (2026-12-02).
// With RANK_PACKED, two bins share a counter word (bin 2p in the low half: counters hold slots
// of the tile, below 2^16), which halves the counters' shared memory so that more subgroups fit
// a tile. Two bins then share each shared atomic's address, and a thread owns both: on an H200
// at 2^26 keys, 384 x 20 keys takes 3.04 ms packed and 2.87 unpacked, but only packed does
// 768 x 10 fit (2.77 ms).
//
// The including shader declares MAX_SUBGROUPS (an upper bound on gl_NumSubgroups), includes
// radix_common.glsl and enables GL_KHR_shader_subgroup_shuffle. For the OR matcher it defines
// RANK_MATCH_WORDS, a shared uint array that no other step uses between rank_clear() and the last
// rank_key(), and the const uint RANK_MATCH_CAPACITY, its length in words (0: ballots). It may
// lend the counters too: it defines RANK_COUNTER_WORDS, a shared uint array of which the
// RANK_COUNTER_SIZE words (radix_tile_rank_sizes.glsl) from the const uint RANK_COUNTER_BASE hold
// the counters from rank_clear() to the last rank_key() (clear of the OR matcher's words) where
// the const bool RANK_COUNTERS_LENT holds; else they keep their own array (then of one word).
// Not lent, they stay apart rather than past the end of the includer's array: on an H200 the
// onesweep shader with them past the stage's end sorted 2^24 / 2^26 keys in 0.521 / 1.881 ms
// against 0.512 / 1.846 with arrays apart; this map, 0.512 / 1.847 in a later run beside 0.511 /
// 1.849 for the arrays apart of before (2026-12-02).
//
// Shared memory (bytes): the counters 4 * MAX_SUBGROUPS * BINS, half that with RANK_PACKED (in
// s_subgroup_bins unless lent, 4 where lent); s_bin_start 4 * BINS.

#include "radix_tile_rank_sizes.glsl"

#ifdef RANK_COUNTER_WORDS
shared uint s_subgroup_bins[RANK_COUNTERS_LENT ? 1u : RANK_COUNTER_SIZE];
#else
shared uint s_subgroup_bins[RANK_COUNTER_SIZE];
#endif
shared uint s_bin_start[BINS];  // where each bin starts in the tile

// Counter word i (rank_counter's), wherever the counters are.
uint rank_counter_load(uint i) {
#ifdef RANK_COUNTER_WORDS
  if (RANK_COUNTERS_LENT) return RANK_COUNTER_WORDS[RANK_COUNTER_BASE + i];
#endif
  return s_subgroup_bins[i];
}
void rank_counter_store(uint i, uint word) {
#ifdef RANK_COUNTER_WORDS
  if (RANK_COUNTERS_LENT) {
    RANK_COUNTER_WORDS[RANK_COUNTER_BASE + i] = word;
    return;
  }
#endif
  s_subgroup_bins[i] = word;
}
uint rank_counter_add(uint i, uint word) {
#ifdef RANK_COUNTER_WORDS
  if (RANK_COUNTERS_LENT) return atomicAdd(RANK_COUNTER_WORDS[RANK_COUNTER_BASE + i], word);
#endif
  return atomicAdd(s_subgroup_bins[i], word);
}

uint rank_counter(uint subgroup, uint bin) { return subgroup * RANK_UNITS + bin / RANK_UNIT_BINS; }
uint rank_shift(uint bin) { return RANK_PACKED ? (bin & 1u) << 4u : 0u; }
// Bin `h` of a unit's packed counts or starts.
uint rank_unit_part(uint packed, uint h) { return RANK_PACKED ? (packed >> (16u * h)) & 0xFFFFu : packed; }

// The OR matcher runs where its words fit the lent array and a subgroup fits a word.
#ifdef RANK_MATCH_WORDS
#define MATCH_OR_WORDS RANK_MATCH_WORDS
#include "radix_match_or.glsl"
const bool RANK_MATCH_OR = MATCH_OR_SIZE <= RANK_MATCH_CAPACITY;
bool rank_matching_or() { return RANK_MATCH_OR && match_or_runs(); }
#else
bool rank_matching_or() { return false; }
#endif

// Counters (and the OR matcher's words) to zero; a barrier must follow.
void rank_clear() {
#ifdef RANK_MATCH_WORDS
  if (rank_matching_or()) match_or_zero();
#endif
  for (uint j = gl_LocalInvocationIndex; j < gl_NumSubgroups * RANK_UNITS; j += gl_WorkGroupSize.x)
    rank_counter_store(j, 0u);
}

void rank_count(uint bin) { rank_counter_add(rank_counter(gl_SubgroupID, bin), 1u << rank_shift(bin)); }

// The tile's counts of the unit's bins, packed as its counters; each subgroup's counters of them
// now hold its start inside the bin (with RANK_PACKED both halves are summed at once: no half
// reaches 2^16).
uint rank_unit_counts(uint unit) {
  uint start = 0u;
  [[unroll]] for (uint s = 0u; s < MAX_SUBGROUPS; ++s) {
    if (s < gl_NumSubgroups) {
      const uint count = rank_counter_load(s * RANK_UNITS + unit);
      rank_counter_store(s * RANK_UNITS + unit, start);
      start += count;
    }
  }
  return start;
}

// Places the unit's bins in the tile from `tile_start`, where its first bin starts, and its
// counts (rank_unit_counts): s_bin_start, and every subgroup's starts of them. Returns where the
// next unit starts. (Every subgroup's counts of the unit kept in registers from rank_unit_counts
// to here, its starts then stored once, lost on an H200: keys 0.503 / 1.829 ms at 2^24 / 2^26
// against 0.487 / 1.755, pairs 0.675 / 2.517 against 0.664 / 2.480, 2026-12-02.)
uint rank_place_unit(uint unit, uint counts, uint tile_start) {
  uint starts = 0u;  // packed as the counts
  [[unroll]] for (uint h = 0u; h < RANK_UNIT_BINS; ++h) {
    s_bin_start[unit * RANK_UNIT_BINS + h] = tile_start;
    starts |= tile_start << (16u * h);
    tile_start += rank_unit_part(counts, h);
  }
  [[unroll]] for (uint s = 0u; s < MAX_SUBGROUPS; ++s)
    if (s < gl_NumSubgroups) rank_counter_store(s * RANK_UNITS + unit, rank_counter_load(s * RANK_UNITS + unit) + starts);
  return tile_start;
}

// The subgroup's start of `bin` advanced by `peers` (the leader's call): the start before.
uint rank_advance(uint bin, uint peers) {
  const uint shift = rank_shift(bin);
  const uint old = rank_counter_add(rank_counter(gl_SubgroupID, bin), peers << shift);
  return rank_unit_part(old >> shift, 0u);
}

#ifdef RANK_MATCH_WORDS
// The caller's subgroup barrier after each round (step 3) orders the leader's clear before the
// next round's OR.
uint rank_key_or(uint bin, bool valid) {
  uvec2 place;
  const uint peers = match_or_peers(bin, valid, place);
  const uint leader = uint(findMSB(peers));
  subgroup_barrier_shared();  // every peer's word read before the leader clears the bits
  uint before = 0u;
  if (valid && gl_SubgroupInvocationID == leader) {
    before = rank_advance(bin, bitCount(peers));
    match_or_clear(place, peers);
  }
  // Every lane takes part in the shuffle; invalid lanes read a lane of their own choosing.
  return subgroupShuffle(before, valid ? leader : gl_SubgroupInvocationID) + bitCount(peers & gl_SubgroupLtMask.x);
}
#endif

// The slot in the tile of this lane's key of `bin`; every lane of the subgroup calls it, those
// without a key (valid false) get junk.
uint rank_key(uint bin, bool valid) {
#ifdef RANK_MATCH_WORDS
  if (rank_matching_or()) return rank_key_or(bin, valid);
#endif
  const uvec4 peers = peers_of(bin, valid);
  const uint leader = subgroupBallotFindMSB(peers);
  uint before = 0u;
  if (valid && gl_SubgroupInvocationID == leader) before = rank_advance(bin, subgroupBallotBitCount(peers));
  // Every lane takes part in the shuffle; invalid lanes read a lane of their own choosing.
  return subgroupShuffle(before, valid ? leader : gl_SubgroupInvocationID) + subgroupBallotExclusiveBitCount(peers);
}
