#version 460
// Sort epilogue: skipped passes leave the data in the other ping-pong buffer than the pass count
// predicts; this pass moves it to where the API says the result is, one tile per workgroup.
// When nothing was skipped (or an even number of passes was), the last pass has made its grid
// empty.
#extension GL_GOOGLE_include_directive : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;

#ifdef VREN_RADIX_KEY64
const uint KEY_WORDS = 2u;
#else
const uint KEY_WORDS = 1u;
#endif

void main() {
  const uint tile = tile_index();
  if (tile >= tile_count()) return;
  const uint source = parity(pc.pass);
  if (source == pc.result_parity) return;
  const uint tile_size = gl_WorkGroupSize.x * KEYS_PER_THREAD;
  const uint tile_begin = tile * tile_size;
  const uint tile_keys = min(tile_size, element_count() - tile_begin);
  const bool with_values = (pc.flags & VREN_RADIX_FLAG_VALUES) != 0u;
  ReadUints keys_in = ReadUints(pc.keys[source]);
  WriteUints keys_out = WriteUints(pc.keys[pc.result_parity]);
  for (uint slot = gl_LocalInvocationIndex; slot < tile_keys * KEY_WORDS; slot += gl_WorkGroupSize.x)
    keys_out.data[tile_begin * KEY_WORDS + slot] = keys_in.data[tile_begin * KEY_WORDS + slot];
  if (with_values) {
    ReadUints values_in = ReadUints(pc.values[source]);
    WriteUints values_out = WriteUints(pc.values[pc.result_parity]);
    for (uint slot = gl_LocalInvocationIndex; slot < tile_keys; slot += gl_WorkGroupSize.x)
      values_out.data[tile_begin + slot] = values_in.data[tile_begin + slot];
  }
}
