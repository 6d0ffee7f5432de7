#version 460
// Look-back sorts, before the first pass: every pass's digit totals in one read of the keys (a
// permutation keeps them, so the input gives them for every pass), and the tiles' published
// words cleared. 8-bit digits; pc.pass is the pass count, pc.shift the begin bit.
//
// The workgroups stride over the keys in batches of BATCH keys per thread, loads first, and
// count them per pass in shared memory; each workgroup then adds its non-zero totals to the
// global ones, which the setup zeroed: at most passes x 256 atomics per workgroup, not one per
// key. Copies of the counters, thread t adding to copy t % 16 in 16-bit halves (two passes a
// word, 32 KiB) so that a subgroup's adds fall on distinct banks, on 1024-thread workgroups, lost
// on an H200: keys 2^20 / 2^24 / 2^26 0.0687 / 0.510 / 1.787 ms against 0.0674 / 0.488 / 1.759,
// pairs 0.0734 / 0.690 / 2.516 against 0.0719 / 0.669 / 2.492 (2026-12-02; likely as one workgroup
// an SM then runs the 1024 in eight waves, where these 4 KiB workgroups run in one).
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
    [[unroll]] for (uint k = 0u; k < BATCH; ++k) {
      if (first + k * threads + id >= count) break;
      [[unroll]] for (uint p = 0u; p < MAX_PASSES; ++p) {
        if (p >= passes) break;
        // As the scatter's push constants have it for pass p (see recordSort).
        const uint shift = pc.shift + p * DIGIT_BITS;
        const uint digit_mask = (1u << min(DIGIT_BITS, pc.end_bit - shift)) - 1u;
        atomicAdd(s_totals[p * BINS + bin_at(keys[k], shift, digit_mask, descending ? digit_mask : 0u)], 1u);
      }
    }
  }
  barrier();  // every thread's keys counted
  for (uint j = thread; j < passes * BINS; j += gl_WorkGroupSize.x) {
    if (s_totals[j] != 0u) atomicAdd(pc.internal.data[pass_totals_at(0u, j)], s_totals[j]);
  }
}
