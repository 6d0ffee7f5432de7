// Buffer layouts and push constants shared by the material_render passes (and mirrored in
// main.cpp's RenderConstants, checked there with static_assert).
#extension GL_EXT_buffer_reference : require

struct HitRecord {
  vec4 position;    // xyz, w: ray distance
  vec4 normal;      // xyz
  vec4 direction;   // xyz: the ray that made the hit
  vec4 throughput;  // rgb: mirror tint picked up on the way
};

layout(buffer_reference, std430, buffer_reference_align = 16) buffer HitRecords { HitRecord data[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer RenderUints { uint data[]; };

layout(push_constant, std430) uniform RenderConstants {
  HitRecords hits;
  RenderUints ids;
  RenderUints image;       // RGBA8 per pixel
  RenderUints counts;      // from the material sort
  RenderUints offsets;
  RenderUints new_to_old;
  uint width;
  uint height;
} pc;
