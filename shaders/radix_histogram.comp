#version 460
// Look-back sorts, before the first pass: every pass's digit totals in one read of the keys (a
// permutation keeps them, so the input gives them for every pass), and the tiles' published
// words cleared. 8-bit digits; pc.pass is the pass count, pc.shift the begin bit.
//
// The workgroups stride over the keys in batches of BATCH keys per thread, loads first, and
// count them per pass in shared memory; each workgroup then adds its non-zero totals to the
// global ones, which the setup zeroed: at most passes x 256 atomics per workgroup, not one per
// key. On an H200 the setup and this dispatch take 0.045 / 0.136 ms at 2^24 / 2^26 keys (2026-12-03,
// `vren-radix demo --profile`'s count, two rounds within 3 us). What lost or did not pay there:
// - copies of the counters, thread t adding to copy t % 16 in 16-bit halves (two passes a word,
//   32 KiB) on 1024-thread workgroups: keys 2^20 / 2^24 / 2^26 0.0687 / 0.510 / 1.787 ms against
//   0.0674 / 0.488 / 1.759 (2026-12-02; likely as one workgroup an SM then runs the 1024 in eight
//   waves, where these 4 KiB workgroups run in one);
// - 2 or 4 copies, [pass][bin][t % copies], 32-bit: 0.203 / 0.208 ms against 0.194 at 2^26 (with
//   the keys' adds in the earlier order);
// - in the earlier order, 128-, 256- or 1024-thread workgroups, 528 workgroups of 512, batches
//   of 8 or 30 keys: 0.179-0.194 ms against 0.194 at 2^26 (1024 threads the best; not retried in
//   this order);
// - 16-byte loads of 4 keys (batches of 4 or 8), this order: 0.133-0.135 ms, no gain worth a
//   second path for the tail and for unaligned keys;
// - in this order, 512- or 1024-thread workgroups, 264 workgroups of 1024, 2048 of 256: whole
//   sorts of 2^24 / 2^26 keys and 2^24 pairs within 0.3 % of these 256-thread ones (0.476 / 1.705
//   / 0.657 ms; 2026-12-03, two rounds alternating);
// - OpAtomicIIncrement (GL_EXT_spirv_intrinsics) for these adds and the tiles' counts: 2^26 keys
//   1.701 ms against 1.700, pairs 2.419 against 2.421, and the setup with this dispatch 0.137 ms
//   either way (2026-12-03). Neither the shape nor the instruction moves it.
// - each batch's loads issued before the previous batch's adds: the setup with this dispatch
//   0.046 / 0.138 ms at 2^24 / 2^26 keys against 0.044 / 0.136 (2026-12-03). The loads already
//   overlap the adds; what bounds it is the adds: counting the first pass alone, in that form,
//   takes 0.035 / 0.090 ms, so each further pass's adds cost about 15 us at 2^26.
// - the passes counting the next pass's digits instead (a shared add per key in the onesweep's
//   ranking rounds, 256 global adds per looping workgroup, a skipped pass counting as it loads;
//   this dispatch then counting the first pass alone): the passes took on what this dispatch
//   gave up. 2^26 keys / pairs: the setup with this dispatch 0.090 / 0.093 ms against 0.136 /
//   0.137, the passes 1.614 / 2.322 against 1.568 / 2.293; whole sorts 2^20 / 2^22 / 2^24 / 2^26
//   keys 0.0658 / 0.1593 / 0.4767 / 1.702 against 0.0667 / 0.1582 / 0.4738 / 1.701, pairs 0.0710
//   / 0.2041 / 0.6504 / 2.403 against 0.0714 / 0.2055 / 0.651 / 2.421 (2026-12-03; a second run
//   2^24 / 2^26 pairs 0.6502 / 2.407 against 0.6533 / 2.424). Within 1 % for a further kilobyte
//   of shared memory a tile: not kept. The adds in the tiles' count step instead lost 1-4 %;
//   just before the look-back (every thread's, or those of the threads without a bin to walk,
//   the rest in the rounds), 2^24 / 2^26 pairs 0.6526 / 2.405 and 0.6488 / 2.402 ms against
//   0.6537 / 2.424, 2^26 keys 1.700 and 1.730 against 1.699 (one round each): no better.
#extension GL_GOOGLE_include_directive : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;

#ifdef VREN_RADIX_KEY64
const uint MAX_PASSES = VREN_RADIX_LOOKBACK_PASSES;
#else
const uint MAX_PASSES = VREN_RADIX_LOOKBACK_PASSES / 2u;
#endif
const uint BATCH = 15u;  // keys per thread in flight; radix_sort.cpp sizes the grid by it

shared uint s_totals[MAX_PASSES * BINS];  // [pass][bin]

void main() {
  const uint passes = pc.pass;
  const uint thread = gl_LocalInvocationIndex;
  const uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint id = gl_WorkGroupID.x * gl_WorkGroupSize.x + thread;
  for (uint j = thread; j < passes * BINS; j += gl_WorkGroupSize.x) s_totals[j] = 0u;
  const uint published_words = 2u * BINS * tile_count();
  for (uint j = id; j < published_words; j += threads) pc.internal.data[lookback_at(0u, 0u, j)] = 0u;
  barrier();  // totals zeroed before any thread adds to them

  const uint count = element_count();
  const bool descending = (pc.flags & VREN_RADIX_FLAG_DESCENDING) != 0u;
  ReadUints keys_in = ReadUints(pc.keys[0]);
  for (uint first = 0u; first < count; first += BATCH * threads) {
    Key keys[BATCH];
    [[unroll]] for (uint k = 0u; k < BATCH; ++k) {
      const uint i = first + k * threads + id;
      keys[k] = i < count ? load_key(keys_in, i) : NO_KEY;
    }
    // Pass by pass, each pass's adds over the batch's keys (key by key, every pass's adds per key,
    // took 0.194 ms at 2^26 keys against 0.136).
    [[unroll]] for (uint p = 0u; p < MAX_PASSES; ++p) {
      if (p >= passes) break;
      // As the scatter's push constants have it for pass p (see recordSort).
      const uint shift = pc.shift + p * DIGIT_BITS;
      const uint digit_mask = (1u << min(DIGIT_BITS, pc.end_bit - shift)) - 1u;
      const uint bin_flip = descending ? digit_mask : 0u;
      [[unroll]] for (uint k = 0u; k < BATCH; ++k) {
        if (first + k * threads + id >= count) break;
        atomicAdd(s_totals[p * BINS + bin_at(keys[k], shift, digit_mask, bin_flip)], 1u);
      }
    }
  }
  barrier();  // every thread's keys counted
  for (uint j = thread; j < passes * BINS; j += gl_WorkGroupSize.x) {
    if (s_totals[j] != 0u) atomicAdd(pc.internal.data[pass_totals_at(0u, j)], s_totals[j]);
  }
}
