#version 460
// Splats, pass 3: blend the visible splats, back to front in sorted order, into the image.
//
// One workgroup per TILE x TILE pixel tile, one thread per pixel (tiles at the right and bottom
// edges keep their threads outside the image: they help fetch, and write nothing). The
// workgroup walks the sorted list BATCH = TILE * TILE splats at a time:
// 1. Fetch: thread t (in the scan's thread order) takes entry batch + t of the sorted list, looks
//    up its splat ID (the sort's value; with argsort, visible_ids[the sorted index]) and the
//    splat's projection, and keeps it if the box of half-width radius around its mean overlaps
//    the tile's pixel centres.
// 2. Compact: a workgroup exclusive scan of the keep flags places the kept splats in shared
//    memory in list order: the blend's order must stay the sorted order.
// 3. Blend: each thread composites the kept splats over its pixel with the "over" operator on
//    premultiplied colour, C = a c + (1 - a) C and A = a + (1 - a) A, where
//    a = min(MAX_ALPHA, opacity * exp(-d^T conic d / 2)) at the pixel centre (d: from the mean),
//    and a splat with a < MIN_ALPHA is skipped (as in 3DGS).
// After the last batch the background shows through: RGB = C + (1 - A) background.
//
// Work: every tile fetches every visible splat, so the cost grows with tiles x visible splats:
// a reference compositor, plain rather than fast, not a rasteriser (a viewer draws the sorted splats as
// instanced quads with hardware blending instead).
//
// Config: TILE = SPLATS_TILE. The scan's MAX_SUBGROUPS is BATCH / 4: subgroups of 4 lanes or
// more.
//
// Shared memory, BATCH = 256 entries (bytes per entry, in all):
//   s_mean            8 B     2048   kept splats' means (pixels)
//   s_conic_opacity   16 B    4096   kept splats' conics (xx, xy, yy) and opacities
//   s_colour          16 B    4096   kept splats' colours (RGB, unused)
//   s_scan_*                   260   workgroup_scan.glsl: 4 (MAX_SUBGROUPS + 1)
//   10,500 bytes in all.
//
// Barriers: kept splats stored (before the blend reads them); blend done (before the next batch
// overwrites them); and the scan's own.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

#define SPLATS_BLEND_PASS
#include "splats_shared.h"

const uint TILE = SPLATS_TILE;
const uint BATCH = TILE * TILE;
const uint MAX_SUBGROUPS = BATCH / 4u;
layout(local_size_x = TILE, local_size_y = TILE) in;

#include "workgroup_scan.glsl"

shared vec2 s_mean[BATCH];
shared vec4 s_conic_opacity[BATCH];
shared vec4 s_colour[BATCH];

void main() {
  const uvec2 origin = gl_WorkGroupID.xy * TILE;
  const uvec2 pixel = origin + gl_LocalInvocationID.xy;
  const vec2 centre = vec2(pixel) + 0.5;
  const vec2 tile_first = vec2(origin) + 0.5;         // first pixel centre of the tile
  const vec2 tile_last = vec2(origin + TILE - 1u) + 0.5;  // last
  const uint thread = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
  const uint count = min(pc.draw.instance_count, pc.max_count);

  vec3 colour = vec3(0.0);
  float alpha = 0.0;
  for (uint batch = 0u; batch < count; batch += BATCH) {
    // 1. Fetch.
    const uint entry = batch + thread;
    bool keep = false;
    ProjectedSplat splat;
    if (entry < count) {
      uint id = pc.order.data[entry];
      if ((pc.flags & SPLATS_FLAG_ARGSORT) != 0u) id = pc.visible_ids.data[id];
      splat = pc.projected.data[id];
      const vec2 mean = splat.mean_radius_opacity.xy;
      const float radius = splat.mean_radius_opacity.z;
      keep = all(greaterThanEqual(mean + radius, tile_first)) && all(lessThanEqual(mean - radius, tile_last));
    }

    // 2. Compact.
    uint kept;
    const uint at = workgroup_exclusive_add(keep ? 1u : 0u, kept);
    if (keep) {
      s_mean[at] = splat.mean_radius_opacity.xy;
      s_conic_opacity[at] = vec4(splat.conic.xyz, splat.mean_radius_opacity.w);
      s_colour[at] = splat.colour;
    }
    barrier();  // the batch's kept splats visible to every pixel

    // 3. Blend.
    for (uint k = 0u; k < kept; ++k) {
      const vec2 d = centre - s_mean[k];
      const vec4 conic_opacity = s_conic_opacity[k];
      const float power = -0.5 * (conic_opacity.x * d.x * d.x + conic_opacity.z * d.y * d.y) -
                          conic_opacity.y * d.x * d.y;
      const float a = min(SPLATS_MAX_ALPHA, conic_opacity.w * exp(power));
      if (a < SPLATS_MIN_ALPHA) continue;
      colour = a * s_colour[k].rgb + (1.0 - a) * colour;
      alpha = a + (1.0 - a) * alpha;
    }
    barrier();  // every pixel is done with the batch before the next one overwrites it
  }

  if (pixel.x < pc.width && pixel.y < pc.height)
    pc.image.data[pixel.y * pc.width + pixel.x] = packUnorm4x8(vec4(colour + (1.0 - alpha) * pc.background.rgb, alpha));
}
