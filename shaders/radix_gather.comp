#version 460
// Segmented sorts, last step of the multi-pass path: the sorts left the input index of the
// element that belongs at each position; this pass reads those elements from the caller's
// untouched input. Segmented sorts write every position; top-k (pc.k > 0) writes position p,
// the r-th of its segment s, to s * k + r when r < k. A grid striding over the positions.
//
// pc.internal: the input indices in sorted order; pc.keys / pc.values: [0] the caller's input,
// [1] the output. Argsort (VREN_RADIX_FLAG_INDEX_VALUES) writes the indices as the values.
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
  const uint segments = segments_in_use();
  const uint count = offset_at(segments);
  const bool with_values = (pc.flags & VREN_RADIX_FLAG_VALUES) != 0u;
  const bool index_values = (pc.flags & VREN_RADIX_FLAG_INDEX_VALUES) != 0u;
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  ReadUints order = ReadUints(pc.internal);
  ReadUints keys_in = ReadUints(pc.keys[0]);
  WriteUints keys_out = WriteUints(pc.keys[1]);
  ReadUints values_in = ReadUints(pc.values[0]);
  WriteUints values_out = WriteUints(pc.values[1]);
  for (uint p = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationIndex; p < count; p += stride) {
    uint to = p;
    if (pc.k > 0u) {
      const uint s = segment_of(p, segments);
      const uint r = p - offset_at(s);
      if (r >= pc.k) continue;
      to = s * pc.k + r;
    }
    const uint from = min(order.data[p], count - 1u);  // in bounds whatever the offsets held
    [[unroll]] for (uint w = 0u; w < KEY_WORDS; ++w) keys_out.data[to * KEY_WORDS + w] = keys_in.data[from * KEY_WORDS + w];
    if (with_values) values_out.data[to] = index_values ? from : values_in.data[from];
  }
}
