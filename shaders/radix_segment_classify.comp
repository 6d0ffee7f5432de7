#version 460
// Segmented sorts without a promised segment length, first step: one workgroup finds the longest
// segment in use. If a one-dispatch way takes every segment (none longer than pc.max_length), it
// stores an element count of 0 and an empty grid, so that the multi-pass path behind it (copy,
// two sorts on that count, segment keys, gather on that grid) records its dispatches but does
// nothing; otherwise the element count and a grid of pc.min_length workgroups for the striding
// passes.
//
// pc.internal: the segment scratch block. Shared memory: 4 * MAX_SUBGROUPS bytes.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "radix_common.glsl"
#include "radix_segments.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;

shared uint s_longest[MAX_SUBGROUPS];

void main() {
  const uint segments = segments_in_use();
  uint longest = 0u;
  for (uint s = gl_LocalInvocationIndex; s < segments; s += gl_WorkGroupSize.x) {
    const uvec2 range = segment_range(s);
    longest = max(longest, range.y - range.x);
  }
  longest = subgroupMax(longest);
  if (subgroupElect()) s_longest[gl_SubgroupID] = longest;
  barrier();  // every subgroup's longest
  if (gl_LocalInvocationIndex != 0u) return;
  for (uint g = 0u; g < gl_NumSubgroups; ++g) longest = max(longest, s_longest[g]);
  const bool passes = longest > pc.max_length;
  pc.internal.data[VREN_RADIX_SEGMENTS_COUNT] = passes ? segmented_count() : 0u;
  pc.internal.data[VREN_RADIX_SEGMENTS_GRID] = passes ? pc.min_length : 0u;
  pc.internal.data[VREN_RADIX_SEGMENTS_GRID + 1u] = 1u;
  pc.internal.data[VREN_RADIX_SEGMENTS_GRID + 2u] = 1u;
}
