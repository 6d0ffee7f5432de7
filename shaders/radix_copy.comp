#version 460
// Sort epilogue: skipped passes leave the data in the other ping-pong buffer than the pass count
// predicts; this pass moves it to where the API says the result is. A small grid striding over
// the keys, dispatched directly: when nothing was skipped (or an even number of passes was)
// every workgroup returns at once, and no barrier waits on a grid written by the passes.
#extension GL_GOOGLE_include_directive : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;

#ifdef VREN_RADIX_KEY64
const uint KEY_WORDS = 2u;
#else
const uint KEY_WORDS = 1u;
#endif

void main() {
  const uint source = parity(pc.pass);
  if (source == pc.result_parity) return;
  const uint first = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint count = element_count();
  ReadUints keys_in = ReadUints(pc.keys[source]);
  WriteUints keys_out = WriteUints(pc.keys[pc.result_parity]);
  for (uint i = first; i < count; i += stride) {  // by key: u32 indices, count < 2^31
    [[unroll]] for (uint w = 0u; w < KEY_WORDS; ++w) keys_out.data[i * KEY_WORDS + w] = keys_in.data[i * KEY_WORDS + w];
  }
  if ((pc.flags & VREN_RADIX_FLAG_VALUES) != 0u) {
    ReadUints values_in = ReadUints(pc.values[source]);
    WriteUints values_out = WriteUints(pc.values[pc.result_parity]);
    for (uint i = first; i < count; i += stride) values_out.data[i] = values_in.data[i];
  }
}
