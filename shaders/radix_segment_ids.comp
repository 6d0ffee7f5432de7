#version 460
// Segmented sorts, between the two sorts of the multi-pass path: after the stable sort by key
// (which moved each element's input index with it), each element's segment, found from its input
// index in the offsets, becomes its key for the stable sort by segment that follows. A grid
// striding over the elements.
//
// pc.values[0]: the input indices in key order; pc.keys[1]: their segments.
#extension GL_GOOGLE_include_directive : require
#include "radix_common.glsl"
#include "radix_segments.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;

void main() {
  const uint segments = segments_in_use();
  const uint count = offset_at(segments);
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  ReadUints indices = ReadUints(pc.values[0]);
  WriteUints segment_keys = WriteUints(pc.keys[1]);
  for (uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationIndex; i < count; i += stride)
    segment_keys.data[i] = segment_of(indices.data[i], segments);
}
