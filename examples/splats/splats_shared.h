// Layouts shared by the splats example's passes (cull.comp, blend.comp) and its host code: the
// splat records, the draw command whose instanceCount is the visible count, one push-constant
// block per pass, and the constants both sides use. Compiled by both: C++ sees plain numbers,
// GLSL sees buffer references. A pass defines SPLATS_CULL_PASS or SPLATS_BLEND_PASS before
// including it to get its push-constant block.
#ifndef VREN_RADIX_SPLATS_SHARED_H
#define VREN_RADIX_SPLATS_SHARED_H

// cull.comp: threads per workgroup, one splat each.
#define SPLATS_CULL_WORKGROUP 256
// blend.comp: a workgroup is a TILE x TILE pixel tile, one thread per pixel, and takes the sorted
// list TILE * TILE splats at a time.
#define SPLATS_TILE 16
// The cull keeps a splat whose centre is at most this factor outside the frustum's side planes
// (its footprint reaches past its centre), as 3DGS viewers do (3DGS clamps at 1.3 too).
#define SPLATS_FRUSTUM_MARGIN 1.3
// Added to the projected covariance's diagonal (pixels^2): every splat covers about a pixel, and
// the 2D covariance stays invertible (3DGS's low-pass filter).
#define SPLATS_COVARIANCE_BLUR 0.3
// A splat's alpha at a pixel is opacity * exp(-d^2 / 2) (d: Mahalanobis distance), clamped to
// MAX_ALPHA; below MIN_ALPHA it is skipped, so its footprint is finite.
#define SPLATS_MIN_ALPHA (1.0 / 255.0)
#define SPLATS_MAX_ALPHA 0.99

// BlendConstants.flags: the sorted values are argsort indices into the visible list, whose IDs
// the cull kept in visible_ids, rather than splat IDs.
#define SPLATS_FLAG_ARGSORT 1u

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vren::radix::splats {

// One Gaussian in the scene (world space).
struct Splat {
  float position[3];
  float opacity;
  float scale[4];     // standard deviations along the splat's own axes; [3] unused
  float rotation[4];  // unit quaternion (x, y, z, w) from the splat's axes to the world
  float colour[4];    // linear RGB; [3] unused
};
static_assert(sizeof(Splat) == 64, "Splat must match the GLSL struct");

// A visible splat projected to the screen, at projected[splat ID].
struct ProjectedSplat {
  float mean[2];  // pixels; pixel (x, y) has its centre at (x + 0.5, y + 0.5)
  float radius;   // pixels: farther from the mean in x or y, alpha is below SPLATS_MIN_ALPHA
  float opacity;
  float conic[4];   // inverse 2D covariance (xx, xy, yy); [3] unused
  float colour[4];  // RGB; [3] unused
};
static_assert(sizeof(ProjectedSplat) == 48, "ProjectedSplat must match the GLSL struct");

// VkDrawIndirectCommand: a viewer draws a quad (vertexCount 4) per visible splat.
struct DrawCommand {
  uint32_t vertex_count;
  uint32_t instance_count;
  uint32_t first_vertex;
  uint32_t first_instance;
};
static_assert(sizeof(DrawCommand) == 16 && offsetof(DrawCommand, instance_count) == 4,
              "DrawCommand must be laid out like VkDrawIndirectCommand");

struct CullConstants {
  float view[3][4];  // world to view: rows right, down, forward; [3] the translation
  uint64_t splats;
  uint64_t projected;
  uint64_t keys;      // [slot] depth key
  uint64_t slot_ids;  // [slot] splat ID: the sort's values, or with argsort the visible IDs
  uint64_t draw;      // DrawCommand; instance_count is the next free slot
  float focal[2];     // pixels
  float centre[2];    // principal point, pixels
  float clip[2];      // SPLATS_FRUSTUM_MARGIN * tan(half field of view), x and y
  float near_plane;
  uint32_t count;  // splats
};
static_assert(sizeof(CullConstants) == 120 && offsetof(CullConstants, splats) == 48 &&
                  offsetof(CullConstants, focal) == 88 && offsetof(CullConstants, count) == 116,
              "CullConstants must match the GLSL push-constant block");

struct BlendConstants {
  float background[4];  // RGB; [3] unused
  uint64_t projected;
  uint64_t order;        // the sort's values: splat IDs, or argsort indices into visible_ids
  uint64_t visible_ids;  // argsort only: the cull's slot IDs
  uint64_t draw;
  uint64_t image;  // RGBA8 per pixel, rows top to bottom
  uint32_t width;
  uint32_t height;
  uint32_t max_count;  // splats: bounds the visible count
  uint32_t flags;
};
static_assert(sizeof(BlendConstants) == 72 && offsetof(BlendConstants, projected) == 16 &&
                  offsetof(BlendConstants, width) == 56,
              "BlendConstants must match the GLSL push-constant block");

}  // namespace vren::radix::splats
#else
struct Splat {
  vec4 position_opacity;
  vec4 scale;
  vec4 rotation;
  vec4 colour;
};

struct ProjectedSplat {
  vec4 mean_radius_opacity;
  vec4 conic;
  vec4 colour;
};

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Splats {
  Splat data[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) buffer ProjectedSplats {
  ProjectedSplat data[];
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer SplatWords {
  uint data[];
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer DrawCommand {
  uint vertex_count;
  uint instance_count;
  uint first_vertex;
  uint first_instance;
};

#if defined(SPLATS_CULL_PASS)
layout(push_constant, std430) uniform CullConstants {
  vec4 view[3];
  Splats splats;
  ProjectedSplats projected;
  SplatWords keys;
  SplatWords slot_ids;
  DrawCommand draw;
  vec2 focal;
  vec2 centre;
  vec2 clip;
  float near_plane;
  uint count;
}
pc;
#elif defined(SPLATS_BLEND_PASS)
layout(push_constant, std430) uniform BlendConstants {
  vec4 background;
  ProjectedSplats projected;
  SplatWords order;
  SplatWords visible_ids;
  DrawCommand draw;
  SplatWords image;
  uint width;
  uint height;
  uint max_count;
  uint flags;
}
pc;
#endif
#endif

#endif
