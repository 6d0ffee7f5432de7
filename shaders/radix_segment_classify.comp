#version 460
// Segmented sorts without a promised segment length: which way sorts which segment, found on the
// GPU in two steps, so that each way's dispatch covers the segments only if any segment takes it.
//
// 1. Each workgroup, striding over the segments in use: its longest segment and the ways its
//    segments take (bits: a thread each up to VREN_RADIX_THREAD_SEGMENT_MAX elements, a subgroup
//    each up to pc.digit_mask, a workgroup each up to pc.bin_flip, longer than pc.max_length),
//    stored at VREN_RADIX_SEGMENTS_PARTS + 2 * workgroup.
// 2. (VREN_RADIX_FLAG_REDUCE) One workgroup combines them, stores the ways taken
//    (VREN_RADIX_SEGMENTS_WAYS) and writes the grids:
//    - each one-dispatch way's (THREAD_GRID: a thread per segment, SMALL_GRID: pc.result_parity
//      segments per workgroup, BLOCK_GRID: one each), empty if no segment takes it;
//    - the longer segments take the sweep (radix_segment_sweep.comp, a workgroup per segment,
//      SWEEP_GRID) if the longest holds at most pc.k elements (0: no sweep) and at most
//      2 * count / pc.pass, else the two sorts: the element count and a grid of pc.min_length
//      workgroups for the striding passes (VREN_RADIX_SEGMENTS_COUNT, _GRID); otherwise a count
//      of 0 and an empty grid, so that the multi-pass path (copy, two sorts on that count,
//      segment keys, gather on that grid) records its dispatches but does nothing.
// Grids past maxComputeWorkGroupCount[0] (pc.max_groups_x) are 2D.
//
// pc.internal: the segment scratch block. Shared memory: 8 * MAX_SUBGROUPS bytes.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "radix_common.glsl"
#include "radix_segments.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;

const uint WAY_THREAD = VREN_RADIX_WAY_THREAD, WAY_SMALL = VREN_RADIX_WAY_SMALL, WAY_BLOCK = VREN_RADIX_WAY_BLOCK,
           WAY_LONG = VREN_RADIX_WAY_LONG;

shared uint s_longest[MAX_SUBGROUPS];
shared uint s_ways[MAX_SUBGROUPS];

uint ways_of(uint length) {
  const uint small_max = pc.digit_mask, block_max = pc.bin_flip;
  if (length == 0u) return 0u;
  uint ways = 0u;
  if (small_max > 0u && length <= VREN_RADIX_THREAD_SEGMENT_MAX) ways |= WAY_THREAD;
  if (length > VREN_RADIX_THREAD_SEGMENT_MAX && length <= small_max) ways |= WAY_SMALL;
  if (length > small_max && length <= block_max) ways |= WAY_BLOCK;
  if (length > pc.max_length) ways |= WAY_LONG;
  return ways;
}

void write_grid(uint word, bool used, uint groups) {
  const uint x = min(max(groups, 1u), pc.max_groups_x);
  pc.internal.data[word] = used ? x : 0u;
  pc.internal.data[word + 1u] = (max(groups, 1u) + x - 1u) / x;
  pc.internal.data[word + 2u] = 1u;
}

void main() {
  const uint segments = segments_in_use();
  const bool reduce = (pc.flags & VREN_RADIX_FLAG_REDUCE) != 0u;
  uint longest = 0u, ways = 0u;
  if (reduce) {
    for (uint g = gl_LocalInvocationIndex; g < VREN_RADIX_SEGMENTS_MAX_PARTS; g += gl_WorkGroupSize.x) {
      if (g >= (segments + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x) break;
      longest = max(longest, pc.internal.data[VREN_RADIX_SEGMENTS_PARTS + 2u * g]);
      ways |= pc.internal.data[VREN_RADIX_SEGMENTS_PARTS + 2u * g + 1u];
    }
  } else {
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint s = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationIndex; s < segments; s += stride) {
      const uvec2 range = segment_range(s);
      longest = max(longest, range.y - range.x);
      ways |= ways_of(range.y - range.x);
    }
  }
  longest = subgroupMax(longest);
  ways = subgroupOr(ways);
  if (subgroupElect()) {
    s_longest[gl_SubgroupID] = longest;
    s_ways[gl_SubgroupID] = ways;
  }
  barrier();  // every subgroup's
  if (gl_LocalInvocationIndex != 0u) return;
  for (uint g = 0u; g < gl_NumSubgroups; ++g) {
    longest = max(longest, s_longest[g]);
    ways |= s_ways[g];
  }
  if (!reduce) {
    pc.internal.data[VREN_RADIX_SEGMENTS_PARTS + 2u * gl_WorkGroupID.x] = longest;
    pc.internal.data[VREN_RADIX_SEGMENTS_PARTS + 2u * gl_WorkGroupID.x + 1u] = ways;
    return;
  }
  const uint count = segmented_count();
  const bool sweep = (ways & WAY_LONG) != 0u && longest <= pc.k && longest <= count / pc.pass * 2u;
  const bool passes = (ways & WAY_LONG) != 0u && !sweep;
  write_grid(VREN_RADIX_SEGMENTS_THREAD_GRID, (ways & WAY_THREAD) != 0u,
             (segments + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x);
  write_grid(VREN_RADIX_SEGMENTS_SMALL_GRID, (ways & WAY_SMALL) != 0u,
             (segments + pc.result_parity - 1u) / max(pc.result_parity, 1u));
  write_grid(VREN_RADIX_SEGMENTS_BLOCK_GRID, (ways & WAY_BLOCK) != 0u, segments);
  write_grid(VREN_RADIX_SEGMENTS_SWEEP_GRID, sweep, segments);
  pc.internal.data[VREN_RADIX_SEGMENTS_WAYS] = ways;
  pc.internal.data[VREN_RADIX_SEGMENTS_COUNT] = passes ? count : 0u;
  pc.internal.data[VREN_RADIX_SEGMENTS_GRID] = passes ? pc.min_length : 0u;
  pc.internal.data[VREN_RADIX_SEGMENTS_GRID + 1u] = 1u;
  pc.internal.data[VREN_RADIX_SEGMENTS_GRID + 2u] = 1u;
}
