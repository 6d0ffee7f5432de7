#version 460
// material_render, pass 3: shade pixels into the image.
//
// MATERIAL < UBER: one material's pixels, dispatched with vkCmdDispatchIndirect on the material
// sort's arguments; invocation i shades pixel new_to_old[offsets[MATERIAL] + i]. The material is
// a specialization constant, so each pipeline holds only its own shading code.
// MATERIAL == UBER: every pixel in scan order, branching on its material (the unsorted
// reference). Both call the same shade_surface(), so the images must be identical.
//
// Shared memory: none.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MATERIAL = 0xFFFFFFFFu;
const uint UBER = 0xFFFFFFFFu;

#include "materials_shading.glsl"
#include "render_shared.glsl"
#include "scene.glsl"

void main() {
  const uint i = material_invocation();
  uint pixel, material;
  if (MATERIAL == UBER) {
    if (i >= pc.width * pc.height) return;
    pixel = i;
    material = pc.ids.data[pixel];
    if (material == MATERIAL_VOID) return;
  } else {
    if (i >= pc.counts.data[MATERIAL]) return;
    pixel = pc.new_to_old.data[pc.offsets.data[MATERIAL] + i];
    material = MATERIAL;
  }
  const HitRecord hit = pc.hits.data[pixel];
  const vec3 colour = shade_surface(material, hit.position.xyz, hit.normal.xyz, hit.direction.xyz);
  pc.image.data[pixel] = to_rgba8(colour * hit.throughput.rgb);
}
