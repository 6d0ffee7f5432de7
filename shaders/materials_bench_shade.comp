#version 460
// Benchmark helper: shading whose cost differs strongly per material, run either sorted (one
// indirect dispatch per material, MATERIAL = that material) or unsorted (MATERIAL = UBER: every
// pixel in scan order, looping as long as its own material asks). Material m costs
// 4^(m % 6) rounds of an integer hash (1 ... 1024), so a subgroup of mixed materials pays for
// its most expensive lane. Integer-only, so both variants write identical words.
//
// Shared memory: none.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MATERIAL = 0xFFFFFFFFu;
const uint UBER = 0xFFFFFFFFu;

#include "materials_shading.glsl"

layout(buffer_reference, std430, buffer_reference_align = 4) buffer BenchUints { uint data[]; };

layout(push_constant, std430) uniform BenchConstants {
  BenchUints ids;
  BenchUints counts;
  BenchUints offsets;
  BenchUints new_to_old;
  BenchUints colour;
  uint pixel_count;
  uint pad;
} pc;

uint shade(uint pixel, uint material) {
  const uint rounds = 1u << (2u * (material % 6u));
  uint h = pixel * 0x9E3779B1u + material;
  for (uint r = 0u; r < rounds; ++r) {
    h ^= h >> 15u;
    h *= 0x85EBCA77u;
    h ^= h >> 13u;
    h += 0x632BE5ABu;
  }
  return h;
}

void main() {
  const uint i = material_invocation();
  if (MATERIAL == UBER) {
    if (i >= pc.pixel_count) return;
    pc.colour.data[i] = shade(i, pc.ids.data[i]);
  } else {
    if (i >= pc.counts.data[MATERIAL]) return;
    const uint pixel = pc.new_to_old.data[pc.offsets.data[MATERIAL] + i];
    pc.colour.data[pixel] = shade(pixel, MATERIAL);
  }
}
