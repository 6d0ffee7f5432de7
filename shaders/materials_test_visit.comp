#version 460
// Test helper: a shading dispatch over one material's pixels that records what it visits, to
// check the dispatch arguments, the 2D-grid linearisation and the range bounds together.
// visits[pixel] += 1 + (material << 8) for every pixel the dispatch reaches.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require

layout(local_size_x_id = 0) in;

#include "materials_shading.glsl"

layout(buffer_reference, std430, buffer_reference_align = 4) buffer VisitUints { uint data[]; };

layout(push_constant, std430) uniform VisitConstants {
  VisitUints counts;
  VisitUints offsets;
  VisitUints new_to_old;
  VisitUints visits;
  uint material;
} pc;

void main() {
  const uint i = material_invocation();
  if (i >= pc.counts.data[pc.material]) return;
  const uint pixel = pc.new_to_old.data[pc.offsets.data[pc.material] + i];
  atomicAdd(pc.visits.data[pixel], 1u + (pc.material << 8u));
}
