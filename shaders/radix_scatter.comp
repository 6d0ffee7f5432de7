#version 460
// Radix pass, step 3 of 3: rank each key within its tile and scatter it to its global place.
//
// Same tiles as the count pass. A key's destination is
//   digit_base[bin] + offsets[bin][tile]            (global: lower bins' totals + the scan of
//                                                    the count groups + earlier tiles of the group)
//   + rank of the key among its tile's keys of that bin, in input order  (workgroup-local)
//
// Ranking (warp-level multisplit): subgroup s owns the contiguous segment of SUBGROUP_SIZE *
// KEYS_PER_THREAD keys starting at s * SUBGROUP_SIZE * KEYS_PER_THREAD, and walks it in
// KEYS_PER_THREAD rounds of one coalesced key per lane. In each round, four ballots over the
// digit's bits give each lane the mask of lanes holding the same bin (its peers); the peers
// below it are its rank within the round, and the lowest peer records the round's count for the
// bin. Rounds do not wait on each other: a scan over the rounds' counts afterwards turns them
// into each round's start per bin, and a scan of the subgroup totals across subgroups makes the
// ranks workgroup-wide. Every step follows input order, so the sort is stable.
// The keys are then sorted by bin inside the tile in shared memory, so that the global writes
// of one bin come from consecutive threads to consecutive addresses.
// A pass the scan marked as skipped (one bin holds every key) returns at once.
//
// Shared memory (bytes), T = WORKGROUP_SIZE * KEYS_PER_THREAD, S = MAX_SUBGROUPS, W = key words:
//   s_keys            4 W T    the tile in bin order (keys only, or 64-bit keys)
//   s_values          4 T      their values (64-bit keys; VALUE_SLOTS = 1 when sorting keys only)
//   s_pairs           8 T      32-bit keys with values: key and value side by side, so that
//                              phases 4 and 5 move each with one 8-byte access
//   s_round_bins      64 S K   per-round bin counts of each subgroup, then each round's start
//   s_subgroup_bins   64 S     per-subgroup bin counts, then each subgroup's start in each bin
//   s_bin_*, s_digit  256      tile totals and starts, global destination bases, digit totals
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;
layout(constant_id = VREN_RADIX_SPEC_VALUE_SLOTS) const uint VALUE_SLOTS = 1;
layout(constant_id = VREN_RADIX_SPEC_COUNT_TILES) const uint COUNT_TILES = 4;

const bool WITH_VALUES = VALUE_SLOTS > 1u;
// Subgroups' counts of a bin loaded at once in step 3.
const uint SUBGROUP_BATCH = 8;
const uint TILE_SIZE = gl_WorkGroupSize.x * KEYS_PER_THREAD;

#ifdef VREN_RADIX_KEY64
shared Key s_keys[TILE_SIZE];
shared uint s_values[VALUE_SLOTS];
#else
shared Key s_keys[WITH_VALUES ? 1u : TILE_SIZE];
shared uvec2 s_pairs[VALUE_SLOTS];
#endif
shared uint s_round_bins[MAX_SUBGROUPS * KEYS_PER_THREAD * BINS];
shared uint s_subgroup_bins[MAX_SUBGROUPS * BINS];
shared uint s_bin_total[BINS];        // the tile's keys per bin
shared uint s_bin_start[BINS];        // where each bin starts inside the tile
shared uint s_bin_destination[BINS];  // global index of tile slot 0 if it held this bin
shared uint s_digit_total[BINS];      // the pass's digit totals

void main() {
  const uint tile = tile_index();
  if (tile >= tile_count()) return;  // uniform per workgroup: the 2D grid's overhang
  const uint source = parity(pc.pass);
  if (parity(pc.pass + 1u) == source) return;  // skipped: every key has the same digit
  ReadUints keys_in = ReadUints(pc.keys[source]);
  ReadUints values_in = ReadUints(pc.values[source]);
  WriteUints keys_out = WriteUints(pc.keys[source ^ 1u]);
  WriteUints values_out = WriteUints(pc.values[source ^ 1u]);
  const uint tile_begin = tile * TILE_SIZE;
  const uint tile_keys = min(TILE_SIZE, element_count() - tile_begin);
  const uint thread = gl_LocalInvocationIndex;
  const uint subgroup_bins = gl_SubgroupID * BINS;
  const bool index_values = (pc.flags & VREN_RADIX_FLAG_INDEX_VALUES) != 0u;

  // 0. Step 3's global inputs, loaded first so that their latency hides behind the ranking: the
  //    digit totals, and this tile's offset per bin from the scan, which covered whole count
  //    groups, plus the counts of the group's tiles before this one.
  uint group_offset = 0u;
  if (thread < BINS) {
    s_digit_total[thread] = state(VREN_RADIX_STATE_TOTALS + thread);
    group_offset = tile_offset(thread, tile, COUNT_TILES);
  }

  // 1. Rank each key within its round, and count each round's keys per bin.
  const uint round_bins = gl_SubgroupID * KEYS_PER_THREAD * BINS;
  for (uint j = gl_SubgroupInvocationID; j < KEYS_PER_THREAD * BINS; j += gl_SubgroupSize) s_round_bins[round_bins + j] = 0u;
  subgroup_barrier_shared();  // round counters zeroed before any round records its counts

  const uint segment = gl_SubgroupID * gl_SubgroupSize * KEYS_PER_THREAD;
  Key keys[KEYS_PER_THREAD];
  uint values[KEYS_PER_THREAD];
  // The key's bin, then (bin << 16) | rank within the segment (ranks are below TILE_SIZE <=
  // 32768, tuning.cpp's kMaxTileSize): phases 2 and 4 read the bin here instead of computing it
  // from the key again.
  uint ranks[KEYS_PER_THREAD];
  // Every load is issued before the first ballot: the compiler does not move loads across the
  // subgroup operations and shared stores of a round.
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint slot = segment + i * gl_SubgroupSize + gl_SubgroupInvocationID;
    const bool valid = slot < tile_keys;
    keys[i] = valid ? load_key(keys_in, tile_begin + slot) : NO_KEY;
    if (WITH_VALUES) values[i] = index_values ? tile_begin + slot : (valid ? values_in.data[tile_begin + slot] : 0u);
    // Slots past the end take the last bin: behind every real key of the tile, never written.
    ranks[i] = valid ? bin_of(keys[i]) : PADDING_BIN;
  }
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint bin = ranks[i];
    const uvec4 peers = peers_of(bin, true);
    const uint rank = subgroupBallotExclusiveBitCount(peers);
    if (rank == 0u) s_round_bins[round_bins + i * BINS + bin] = subgroupBallotBitCount(peers);
    ranks[i] = (bin << 16u) | rank;
  }
  subgroup_barrier_shared();  // every round's counts recorded

  // 2. Per bin, scan over the rounds: each round's start within the subgroup's segment.
  for (uint b = gl_SubgroupInvocationID; b < BINS; b += gl_SubgroupSize) {
    uint running = 0u;
    for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
      const uint count = s_round_bins[round_bins + i * BINS + b];
      s_round_bins[round_bins + i * BINS + b] = running;
      running += count;
    }
    s_subgroup_bins[subgroup_bins + b] = running;
  }
  subgroup_barrier_shared();  // round starts visible to the whole subgroup
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i)
    ranks[i] += s_round_bins[round_bins + i * BINS + (ranks[i] >> 16u)];
  barrier();  // every subgroup's bin counts (and the group sums) visible to the per-bin threads

  // 3. Per bin: each subgroup's start inside the bin; then where the bin starts inside the tile
  //    (a scan over the bins' tile totals, shared through s_bin_total) and globally.
  //    Both walks load first and add after, with fixed trip counts: the loads are in flight
  //    together instead of one dependent round trip each (the bin walk took about 1000 cycles
  //    of a 7700-cycle tile on an H200 as a loop up to the thread's bin).
  const uint lane_bin = thread;
  if (lane_bin < BINS) {
    uint tile_total = 0u;
    for (uint first = 0u; first < gl_NumSubgroups; first += SUBGROUP_BATCH) {  // uniform
      uint counts[SUBGROUP_BATCH];
      [[unroll]] for (uint i = 0u; i < SUBGROUP_BATCH; ++i)
        counts[i] = first + i < gl_NumSubgroups ? s_subgroup_bins[(first + i) * BINS + lane_bin] : 0u;
      [[unroll]] for (uint i = 0u; i < SUBGROUP_BATCH; ++i) {
        if (first + i < gl_NumSubgroups) s_subgroup_bins[(first + i) * BINS + lane_bin] = tile_total;
        tile_total += counts[i];
      }
    }
    s_bin_total[lane_bin] = tile_total;
  }
  barrier();  // bin totals visible to every thread
  if (lane_bin < BINS) {
    uint tile_start = 0u, digit_base = 0u;
    [[unroll]] for (uint b = 0u; b < BINS; ++b) {
      const bool lower = b < lane_bin;
      tile_start += lower ? s_bin_total[b] : 0u;
      digit_base += lower ? s_digit_total[b] : 0u;
    }
    s_bin_start[lane_bin] = tile_start;
    s_bin_destination[lane_bin] = digit_base + group_offset - tile_start;
  }
  barrier();  // starts and destinations visible to every thread

  // 4. Sort the tile by bin in shared memory.
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint bin = ranks[i] >> 16u;
    const uint local = s_bin_start[bin] + s_subgroup_bins[subgroup_bins + bin] + (ranks[i] & 0xFFFFu);
#ifdef VREN_RADIX_KEY64
    s_keys[local] = keys[i];
    if (WITH_VALUES) s_values[local] = values[i];
#else
    if (WITH_VALUES)
      s_pairs[local] = uvec2(keys[i], values[i]);
    else
      s_keys[local] = keys[i];
#endif
  }
  barrier();  // the tile is in bin order

  // 5. Write out: consecutive threads write consecutive slots of a bin.
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint slot = i * gl_WorkGroupSize.x + thread;
    if (slot < tile_keys) {
#ifdef VREN_RADIX_KEY64
      const Key key = s_keys[slot];
      const uint value = WITH_VALUES ? s_values[slot] : 0u;
#else
      const uvec2 pair = WITH_VALUES ? s_pairs[slot] : uvec2(s_keys[slot], 0u);
      const Key key = pair.x;
      const uint value = pair.y;
#endif
      const uint index = s_bin_destination[bin_of(key)] + slot;
      store_key(keys_out, index, key);
      if (WITH_VALUES) values_out.data[index] = value;
    }
  }
}
