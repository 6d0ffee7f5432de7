// Decoupled look-back with bounded waits: how a tile of a one-dispatch radix pass finds, per
// bin, how many keys of that bin the earlier tiles hold, without a separate count and scan.
//
// Each tile counts its keys per bin into s_lookback_count and publishes the counts at once
// (LOOKBACK_AGGREGATE words; tile 0 publishes its LOOKBACK_PREFIX, its counts). Later, one
// thread per bin adds the published words of the earlier tiles, newest first, until one holds an
// inclusive prefix, and publishes its own (lookback_offsets). Nothing promises that a tile this
// one waits for is running (lavapipe runs each thread's block of workgroups in turn), and
// lavapipe silently leaves the loops of a shader invocation after 65535 iterations in all: so
// the polls of each thread are bounded, and a walk still waiting after them stops. The
// workgroup then counts the newest tile any walk stopped at from its keys, and the walks stopped
// there go on past it; at most one such round per earlier tile.
//
// The including shader declares, before including this file:
//   POLL_ATOMIC, POLL_BUDGET   specialization constants (see radix_onesweep.comp)
//   TILE_SIZE, KEYS_PER_THREAD the tile, and how many keys each thread counts of a missing tile
//   BINS_PER_THREAD            consecutive bins per thread, from ordered_thread() * BINS_PER_THREAD
// and it may lend the count of a missing tile (used only inside lookback_offsets, so it may share
// memory free there): it defines LOOKBACK_MISSING_WORDS, a shared uint array whose BINS words
// from the const uint LOOKBACK_MISSING_BASE hold it where the const bool LOOKBACK_MISSING_LENT
// holds; else it keeps its own array, then of one word.
// Published words live in the internal buffer, lookback_at(set, tile, bin): two sets, by pass
// parity; a pass clears the other set's words of its tile for the next pass.
//
// Shared memory (bytes): s_lookback_count 4 BINS, s_lookback_missing 4 BINS (4 where lent),
// flags 8.

#include "published_words.glsl"

shared uint s_lookback_count[BINS];  // this tile's keys per bin
#ifdef LOOKBACK_MISSING_WORDS
shared uint s_lookback_missing[LOOKBACK_MISSING_LENT ? 1u : BINS];  // a missing tile's keys per bin
#else
shared uint s_lookback_missing[BINS];
#endif
shared uint s_lookback_stuck[2];  // per round parity: 1 + the newest tile a walk stopped at, 0: none

// A missing tile's count of `bin`, wherever it is.
void lookback_missing_clear(uint bin) {
#ifdef LOOKBACK_MISSING_WORDS
  if (LOOKBACK_MISSING_LENT) {
    LOOKBACK_MISSING_WORDS[LOOKBACK_MISSING_BASE + bin] = 0u;
    return;
  }
#endif
  s_lookback_missing[bin] = 0u;
}
void lookback_missing_count(uint bin) {
#ifdef LOOKBACK_MISSING_WORDS
  if (LOOKBACK_MISSING_LENT) {
    atomicAdd(LOOKBACK_MISSING_WORDS[LOOKBACK_MISSING_BASE + bin], 1u);
    return;
  }
#endif
  atomicAdd(s_lookback_missing[bin], 1u);
}
uint lookback_missing(uint bin) {
#ifdef LOOKBACK_MISSING_WORDS
  if (LOOKBACK_MISSING_LENT) return LOOKBACK_MISSING_WORDS[LOOKBACK_MISSING_BASE + bin];
#endif
  return s_lookback_missing[bin];
}

// Published words hold a count or prefix in the low 30 bits and one of these flags; 0 is
// unpublished.
const uint LOOKBACK_AGGREGATE = 1u << 30u;
const uint LOOKBACK_PREFIX = 1u << 31u;
const uint LOOKBACK_VALUE_MASK = LOOKBACK_AGGREGATE - 1u;
// Earlier tiles' words read at once. 16 lost on an H200 (onesweep, 2026-12-02): keys 0.4905 /
// 1.771 ms at 2^24 / 2^26 against 0.4870 / 1.755, pairs 0.672 / 2.503 against 0.664 / 2.480.
const uint LOOKBACK_WINDOW = 8u;

uint lookback_poll(uint at) { return poll_word(PublishedAtomics(pc.internal), at); }
void lookback_publish(uint at, uint word) { publish_word(PublishedAtomics(pc.internal), at, word); }
// This tile's inclusive prefix for `bin`, from the earlier tiles' keys of it.
void lookback_publish_prefix(uint set, uint tile, uint bin, uint exclusive) {
  lookback_publish(lookback_at(set, tile, bin), LOOKBACK_PREFIX | (exclusive + s_lookback_count[bin]));
}

// Walks `bin` back from tile `newest`, adding the published counts to `exclusive`, until a
// prefix (then publishes this tile's and clears `walking`) or a word still unpublished when the
// polls run out (then `newest` is that tile).
void lookback_walk(uint set, uint tile, uint bin, inout uint exclusive, inout uint newest, inout bool walking,
                   inout uint polls_left) {
  for (;;) {
    const uint base = newest;
    uint words[LOOKBACK_WINDOW];
    [[unroll]] for (uint k = 0u; k < LOOKBACK_WINDOW; ++k) {
      if (base < k) words[k] = LOOKBACK_PREFIX;  // below tile 0: nothing
      else words[k] = POLL_BUDGET > 0u ? lookback_poll(lookback_at(set, base - k, bin)) : 0u;
    }
    [[unroll]] for (uint k = 0u; k < LOOKBACK_WINDOW; ++k) {
      while ((words[k] & (LOOKBACK_AGGREGATE | LOOKBACK_PREFIX)) == 0u && polls_left > 0u) {
        --polls_left;
        words[k] = lookback_poll(lookback_at(set, base - k, bin));
      }
      if ((words[k] & (LOOKBACK_AGGREGATE | LOOKBACK_PREFIX)) == 0u) {
        newest = base - k;
        return;
      }
      exclusive += words[k] & LOOKBACK_VALUE_MASK;
      newest = base - k - 1u;
      if ((words[k] & LOOKBACK_PREFIX) != 0u) {
        walking = false;
        lookback_publish_prefix(set, tile, bin, exclusive);
        return;
      }
    }
  }
}

// Per bin of this thread, the keys of that bin in the tiles before `tile` (the exclusive
// prefix), and this tile's inclusive prefix published. Every thread of the workgroup calls it
// (it holds barriers), after publishing its counts. `keys_in` holds the pass's keys, for
// counting tiles whose words never came.
void lookback_offsets(uint set, uint tile, ReadUints keys_in, out uint exclusive[BINS_PER_THREAD]) {
  const uint first_bin = ordered_thread() * BINS_PER_THREAD;
  uint newest[BINS_PER_THREAD];
  bool walking[BINS_PER_THREAD];
  uint polls_left = POLL_BUDGET;
  if (gl_LocalInvocationIndex == 0u) {
    s_lookback_stuck[0] = 0u;
    s_lookback_stuck[1] = 0u;
  }
  barrier();  // flags cleared before any walk stops
  [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
    const uint bin = first_bin + j;
    walking[j] = bin < BINS && tile > 0u;
    exclusive[j] = 0u;
    newest[j] = tile - 1u;
    if (walking[j]) lookback_walk(set, tile, bin, exclusive[j], newest[j], walking[j], polls_left);
    if (walking[j]) atomicMax(s_lookback_stuck[0], newest[j] + 1u);
  }
  barrier();  // stopped walks known
  // Walks stopped at an unpublished word: the workgroup counts the newest such tile, and the
  // walks stopped there go on past it, until none is stopped.
  for (uint round = 0u;; ++round) {  // uniform
    const uint stuck = s_lookback_stuck[round & 1u];
    if (stuck == 0u) break;
    if (gl_LocalInvocationIndex == 0u) s_lookback_stuck[(round + 1u) & 1u] = 0u;  // last read a round ago
    const uint missing = stuck - 1u;
#ifdef VREN_RADIX_SHADER_CLOCKS
    if (gl_LocalInvocationIndex == 0u) atomicAdd(pc.internal.data[VREN_RADIX_STATE_CLOCKS + VREN_RADIX_CLOCK_MISSING], 1u);
#endif
    for (uint b = gl_LocalInvocationIndex; b < BINS; b += gl_WorkGroupSize.x) lookback_missing_clear(b);
    barrier();  // zeroed
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
      const uint index = missing * TILE_SIZE + i * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
      if (index < element_count()) lookback_missing_count(bin_of(load_key(keys_in, index)));
    }
    barrier();  // the missing tile counted
    [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
      const uint bin = first_bin + j;
      if (walking[j] && newest[j] == missing) {
        exclusive[j] += lookback_missing(bin);
        newest[j] = missing - 1u;
        if (missing == 0u) {  // tile 0's count is its prefix
          walking[j] = false;
          lookback_publish_prefix(set, tile, bin, exclusive[j]);
        } else {
          lookback_walk(set, tile, bin, exclusive[j], newest[j], walking[j], polls_left);
        }
      }
      if (walking[j]) atomicMax(s_lookback_stuck[(round + 1u) & 1u], newest[j] + 1u);
    }
    barrier();  // the next round's stopped walks known
  }
}
