// Constants and push-constant layout shared by the tile packer's C++ record path (tiles.cpp)
// and its pass (tiles_pack.comp). Compiled by both: C++ sees plain integers, GLSL sees buffer
// references.
#ifndef VREN_RADIX_TILES_SHARED_H
#define VREN_RADIX_TILES_SHARED_H

// Specialization-constant IDs.
#define VREN_RADIX_TILES_SPEC_WORKGROUP_SIZE 0
#define VREN_RADIX_TILES_SPEC_TILE_SIZE 1
#define VREN_RADIX_TILES_SPEC_QUADS_PER_THREAD 2
#define VREN_RADIX_TILES_SPEC_CONTAINERS 3
#define VREN_RADIX_TILES_SPEC_ALIGNMENT 4

// Size classes of the container order: class 0 holds the containers whose size is a multiple of
// the alignment, classes 1..127 the others by decreasing size, sizes clamped to 127.
#define VREN_RADIX_TILES_SIZE_CLASSES 128

// Output element of a tile's padding (never a pixel: coordinates are below 65535).
#define VREN_RADIX_TILES_PADDING 0xFFFFFFFFu

// TilePackConstants.flags
#define VREN_RADIX_TILES_FLAG_CONFLICT_RESOLUTION 1u
#define VREN_RADIX_TILES_FLAG_ORDER_CONTAINERS 2u
#define VREN_RADIX_TILES_FLAG_WRITE_CONTAINERS 4u
// The keys start at a 16-byte aligned address and the width is a multiple of 4: each quad of 4
// horizontally adjacent pixels is one aligned 16-byte load.
#define VREN_RADIX_TILES_FLAG_KEY_QUADS 8u

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vren::radix::detail {
struct TilePackConstants {
  uint64_t keys;
  uint64_t pixels;
  uint64_t tile_ranges;
  uint64_t counter;
  uint64_t containers;
  uint32_t width;
  uint32_t height;
  uint32_t tiles_x;
  uint32_t pixel_capacity;
  uint32_t flags;
  uint32_t probes;
};
static_assert(sizeof(TilePackConstants) == 64, "TilePackConstants must match the GLSL push-constant block");
static_assert(offsetof(TilePackConstants, width) == 40, "TilePackConstants must match the GLSL push-constant block");
static_assert(offsetof(TilePackConstants, probes) == 60, "TilePackConstants must match the GLSL push-constant block");
}  // namespace vren::radix::detail
#else
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer TileKeys { uint data[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer TileWords { uint data[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer TileCounter { uint value; };

// keys: width * height, row-major. pixels / containers: one element per output slot.
// tile_ranges: (start, count) per tile, tiles row-major. counter: the next free output slot.
layout(push_constant, std430) uniform TilePackConstants {
  TileKeys keys;
  TileWords pixels;
  TileWords tile_ranges;
  TileCounter counter;
  TileWords containers;
  uint width;
  uint height;
  uint tiles_x;
  uint pixel_capacity;
  uint flags;
  uint probes;
} pc;
#endif

#endif
