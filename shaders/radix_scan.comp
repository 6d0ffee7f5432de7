#version 460
// Radix pass, step 2 of 3: global exclusive scan of the counts, in digit-major order.
//
// One workgroup per bin scans that bin's row of count-workgroup sums (COUNT_TILES tiles each, a
// quarter of the tile counts at the default) in place and writes the bin's total to the state
// block. The scatter pass adds the counts of the earlier tiles of its group and the exclusive
// sum of the totals of the lower bins, which completes the scan in digit-major order:
// offset(bin, tile) = sum of all counts before (bin, tile) in that order.
// A bin holding every key means the pass would not move anything: its workgroup marks the pass
// as skipped by keeping the next pass's input where this pass's input is.
//
// The row is walked in chunks of WORKGROUP_SIZE * 4 counts, each thread taking 4 consecutive
// counts: thread sums, a workgroup scan of them (workgroup_scan.glsl), and a carry from chunk
// to chunk.
//
// Shared memory: the workgroup scan's, (MAX_SUBGROUPS + 1) * 4 bytes.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;
layout(constant_id = VREN_RADIX_SPEC_COUNT_TILES) const uint COUNT_TILES = 4;

const uint PER_THREAD = 4u;

#include "workgroup_scan.glsl"

void main() {
  const uint bin = gl_WorkGroupID.x;
  const uint groups = group_count(COUNT_TILES);  // the row's length
  const uint row = group_sums_at(bin, 0u, COUNT_TILES);
  const uint chunk = gl_WorkGroupSize.x * PER_THREAD;
  uint carry = 0u;

  for (uint base = 0u; base < groups; base += chunk) {
    // 1. Load PER_THREAD consecutive counts; sum them.
    const uint first = base + ordered_thread() * PER_THREAD;
    uint counts[PER_THREAD];
    uint sum = 0u;
    [[unroll]] for (uint i = 0u; i < PER_THREAD; ++i) {
      counts[i] = first + i < groups ? pc.internal.data[row + first + i] : 0u;
      sum += counts[i];
    }

    // 2. Exclusive scan of the thread sums across the workgroup.
    uint chunk_total;
    uint offset = carry + workgroup_exclusive_add(sum, chunk_total);

    // 3. Write exclusive offsets; carry the chunk total into the next chunk.
    [[unroll]] for (uint i = 0u; i < PER_THREAD; ++i) {
      if (first + i < groups) pc.internal.data[row + first + i] = offset;
      offset += counts[i];
    }
    carry += chunk_total;
  }
  if (gl_LocalInvocationIndex == 0u) {
    pc.internal.data[VREN_RADIX_STATE_TOTALS + bin] = carry;
    const uint count = element_count();
    if (carry == count && count != 0u && (pc.flags & VREN_RADIX_FLAG_NEVER_SKIP) == 0u)
      set_next_parity(parity(pc.pass));
  }
}
