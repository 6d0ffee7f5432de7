// vren_radix tile packing: cheap, tile-local sorting of screen pixels by a key (material,
// meshlet or light-list ID), so that later passes run coherent subgroups without a full-screen
// sort.
//
// One compute pass, one workgroup per tile: each tile's pixels with work (key != 0) are grouped
// into containers by key, and their coordinates ((y << 16) | x) are written to a range of
// `pixels` reserved with one atomic on `counter`. A consumer walks `pixels` in groups of
// `alignment` elements (its subgroup size); pixels of one container are contiguous.
//
//   vren::radix::TilePacker* packer = nullptr;
//   vren::radix::createTilePacker(create_info, &packer);
//   auto req = vren::radix::getTileMemoryRequirements(packer, width, height);
//   // ... create pixels (req.pixels_size), tile_ranges (req.tile_ranges_size), counter (4 bytes)
//   // ... zero the counter (vkCmdFillBuffer) and add a barrier to COMPUTE_SHADER
//   vren::radix::cmdPackTiles(packer, cmd, {.width = w, .height = h, .keys = keys, .counter = counter,
//                                           .pixels = pixels, .tile_ranges = ranges});
//   // barrier: COMPUTE_SHADER / SHADER_WRITE -> your stage; counter holds the slots used
//
// Device requirements: as vren_radix.h (Vulkan 1.2, bufferDeviceAddress), plus subgroup basic,
// arithmetic, ballot and shuffle operations in compute shaders. Any subgroup size works.
#pragma once

#include <cstdint>
#include <string>

#include <vulkan/vulkan.h>

#include "vren_radix/vren_radix.h"

namespace vren::radix {

struct TilePacker;

// Value of the output slots that pad a tile's range up to the alignment.
inline constexpr uint32_t kTilePadding = 0xFFFFFFFFu;
// The size limits of a tile packer and of the screens it packs.
inline constexpr uint32_t kMinTileSize = 8;
inline constexpr uint32_t kMaxTileSize = 128;
inline constexpr uint32_t kMaxTileContainers = 1024;
inline constexpr uint32_t kMaxTileAlignment = 256;
inline constexpr uint32_t kMaxTileProbes = 15;
inline constexpr uint32_t kMaxTileScreenSize = 65535;

// The hash that folds keys into containers: a key's home container is
// hashTileKey(key) % container_count. lowbias32 (C. Wellons); hashTileKey(0) == 0.
constexpr uint32_t hashTileKey(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

struct TilePackerCreateInfo {
  DeviceBinding binding;
  // Tile edge in pixels: a power of two in [kMinTileSize, kMaxTileSize].
  uint32_t tile_size = 64;
  // Containers per tile, in [1, kMaxTileContainers]. Keys are folded into them by hash; a prime
  // count spreads keys that differ by a multiple of a power of two.
  uint32_t container_count = 127;
  // The consumer's subgroup size: a power of two in [1, kMaxTileAlignment]. Tile ranges are
  // reserved in multiples of it, and container ordering puts the containers whose size is a
  // multiple of it first.
  uint32_t alignment = 32;
  // Threads per tile: 0 chooses (1024: one thread per 4 pixels of a 64 x 64 tile), clamped to
  // the device and to one thread per 4 pixels of the tile, then raised to at least one whole
  // subgroup; a non-zero value must be a power of two and is clamped the same way.
  uint32_t workgroup_size = 0;
};

struct TilePackerProperties {
  uint32_t tile_size;
  uint32_t container_count;
  uint32_t alignment;
  uint32_t workgroup_size;  // threads per tile, after clamping
  uint32_t subgroup_size;   // the size the pass runs at (pinned or the device default)
};

// Creates the pipeline for one device. On failure returns an error, leaves *packer null, leaks
// nothing, and, if `why` is given, says in one sentence what is wrong or missing.
VkResult createTilePacker(const TilePackerCreateInfo& info, TilePacker** packer, std::string* why = nullptr);
void destroyTilePacker(TilePacker* packer);
TilePackerProperties getTilePackerProperties(const TilePacker* packer);

struct TileMemoryRequirements {
  uint32_t tiles_x;                  // tiles per row: ceil(width / tile_size)
  uint32_t tiles_y;                  // tile rows: ceil(height / tile_size)
  VkDeviceSize pixels_size;          // every pixel with work, each tile rounded up to the alignment
  VkDeviceSize tile_ranges_size;     // 8 bytes per tile
  VkDeviceSize counter_size;         // 4 bytes
  VkDeviceSize containers_size;      // the optional container output: as pixels_size
  VkDeviceSize alignment;            // every BufferRange offset must be a multiple of this
  VkBufferUsageFlags usage;          // every buffer passed to cmdPackTiles needs these
};

// Sizes for packing a width x height screen (each at most kMaxTileScreenSize). Sizes are at
// least 4 bytes, so that buffers for an empty screen can still be created.
TileMemoryRequirements getTileMemoryRequirements(const TilePacker* packer, uint32_t width, uint32_t height);

struct TilePackInfo {
  uint32_t width = 0;
  uint32_t height = 0;
  // width * height u32 sort keys, row-major, tightly packed; 0 means "no work at this pixel".
  BufferRange keys;
  // One u32: the first free slot of `pixels` (usually 0; keep it a multiple of the alignment).
  // The pass adds each tile's padded pixel count to it atomically; afterwards it holds the end
  // of the used slots.
  BufferRange counter;
  // Output: per pixel with work, (y << 16) | x. Tile t owns slots [start_t, start_t +
  // align_up(count_t)); its first count_t slots are its pixels, grouped by container, the rest
  // hold kTilePadding. Inside a container, pixels come block by block (16 x 8 pixels at 32
  // lanes; with more quads than threads, one block per quad round), and inside a block by x % 4,
  // then in Morton order; pixels of a subgroup with more distinct keys than its match rounds
  // come after those ranked in the rounds, in atomic order. The order of blocks, the order
  // of containers of equal class and the order of tiles' ranges follow the order in which the
  // GPU's atomics land, so they may change from run to run. At least
  // getTileMemoryRequirements().pixels_size bytes. Slots past the range's size are never
  // written (VK_WHOLE_SIZE clips nothing): when the counter starts above 0 and the screen needs
  // more slots than remain, the counter ends past the range, which tells the caller.
  BufferRange pixels;
  // Output: (start_t, count_t) per tile, tiles in row-major order; count_t = pixels with work.
  BufferRange tile_ranges;
  // Optional output for tools and tests: per slot of `pixels`, the pixel's tile-local container
  // (kTilePadding on padding slots).
  BufferRange containers;
  // Each container is claimed by the first key that reaches it; a different key probes up to
  // `probes` (<= kMaxTileProbes) following containers before it shares its home container.
  // Without it, keys whose hashes collide share a container. Either way, all pixels of one key
  // land in one container.
  bool conflict_resolution = true;
  uint32_t probes = 3;
  // Containers whose size is a multiple of the alignment first, then by decreasing size (sizes
  // clamped to 127), so that a consumer's subgroups stay on one container where they can.
  // Without it, containers follow their index.
  bool order_containers = true;
  // Optional: two timestamps (first_query, first_query + 1) around the recorded pass.
  VkQueryPool timestamp_pool = VK_NULL_HANDLE;
  uint32_t first_query = 0;
};

// Returns null if `info` is valid for `packer`, else one sentence saying what is wrong.
const char* validateTilePackInfo(const TilePacker* packer, const TilePackInfo& info);

// Records the packing of one screen into `cmd`: one dispatch of tiles_x * tiles_y workgroups.
// Records only: no allocation, submission or wait.
//
// Synchronisation contract:
// - First access, at VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT: keys are read (SHADER_READ); counter
//   is read and written atomically (SHADER_READ | SHADER_WRITE); pixels, tile_ranges and
//   containers are written (SHADER_WRITE). Before cmdPackTiles, make the keys and the counter's
//   initial value available to COMPUTE_SHADER / SHADER_READ | SHADER_WRITE, and order earlier
//   uses of the outputs (e.g. last frame's consumer) before COMPUTE_SHADER / SHADER_WRITE.
// - The pass records no barrier of its own.
// - Last access: counter, pixels, tile_ranges and containers are written at COMPUTE_SHADER /
//   SHADER_WRITE. Add a barrier from there before reading them (e.g. an indirect dispatch
//   sized from the counter reads it at DRAW_INDIRECT / INDIRECT_COMMAND_READ).
// width == 0 or height == 0 records nothing except the optional timestamps.
//
// Preconditions (checked by validateTilePackInfo, asserted in debug builds): width and height
// must be at most kMaxTileScreenSize; keys, counter, pixels and tile_ranges must be given and
// large enough for the screen; buffers must have TileMemoryRequirements::usage and offsets must
// be multiples of TileMemoryRequirements::alignment; outputs must not overlap each other or the
// keys; probes must be at most kMaxTileProbes.
void cmdPackTiles(const TilePacker* packer, VkCommandBuffer cmd, const TilePackInfo& info);

}  // namespace vren::radix
