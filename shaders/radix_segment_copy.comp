#version 460
// Segmented sorts, first step of the multi-pass path: copies the keys of every segment
// (elements [0, the last offset)) into the internal buffer, where the sort by key may overwrite
// them, and stores the element count for the sorts that follow (their GPU-side count). A grid
// striding over the keys.
//
// pc.keys[0]: the caller's keys; pc.keys[1]: their copy; pc.internal: the segment scratch block.
#extension GL_GOOGLE_include_directive : require
#include "radix_common.glsl"
#include "radix_segments.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;

#ifdef VREN_RADIX_KEY64
const uint KEY_WORDS = 2u;
#else
const uint KEY_WORDS = 1u;
#endif

void main() {
  const uint count = segmented_count();
  const uint first = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
  if (first == 0u) pc.internal.data[VREN_RADIX_SEGMENTS_COUNT] = count;
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  ReadUints keys_in = ReadUints(pc.keys[0]);
  WriteUints keys_out = WriteUints(pc.keys[1]);
  // By key: u32 indices of keys below 2^31 cannot wrap past the count (words of u64 keys could).
  for (uint i = first; i < count; i += stride) {
    [[unroll]] for (uint w = 0u; w < KEY_WORDS; ++w) keys_out.data[i * KEY_WORDS + w] = keys_in.data[i * KEY_WORDS + w];
  }
}
