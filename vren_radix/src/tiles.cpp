#include "vren_radix/tiles.h"

#include <algorithm>
#include <cassert>
#include <new>

#include "device.h"
#include "tuning.h"
#include "spirv/tiles_pack.h"
#include "tiles_shared.h"

namespace vren::radix {

static_assert(kTilePadding == VREN_RADIX_TILES_PADDING, "the public padding value is the shaders'");
namespace {

using detail::TilePackConstants;

constexpr VkDeviceSize kAlignment = 4;
constexpr VkBufferUsageFlags kUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;

using detail::DeviceFunctions;
using detail::divCeil;
using detail::fail;
using detail::isPow2;

uint64_t alignUp(uint64_t n, uint32_t alignment) { return (n + alignment - 1) / alignment * alignment; }

VkResult checkParameters(const TilePackerCreateInfo& info, std::string* why) {
  if (!isPow2(info.tile_size) || info.tile_size < kMinTileSize || info.tile_size > kMaxTileSize)
    return fail(why,
                "tile_size is " + std::to_string(info.tile_size) + "; it must be a power of two from " +
                    std::to_string(kMinTileSize) + " to " + std::to_string(kMaxTileSize) + ".",
                VK_ERROR_INITIALIZATION_FAILED);
  if (info.container_count < 1 || info.container_count > kMaxTileContainers)
    return fail(why,
                "container_count is " + std::to_string(info.container_count) + "; it must be from 1 to " +
                    std::to_string(kMaxTileContainers) + ".",
                VK_ERROR_INITIALIZATION_FAILED);
  if (!isPow2(info.alignment) || info.alignment > kMaxTileAlignment)
    return fail(why,
                "alignment is " + std::to_string(info.alignment) + "; it must be a power of two from 1 to " +
                    std::to_string(kMaxTileAlignment) + ".",
                VK_ERROR_INITIALIZATION_FAILED);
  if (info.workgroup_size != 0 && !isPow2(info.workgroup_size))
    return fail(why, "workgroup_size is " + std::to_string(info.workgroup_size) + "; it must be 0 or a power of two.",
                VK_ERROR_INITIALIZATION_FAILED);
  return VK_SUCCESS;
}

}  // namespace

struct TilePacker : detail::ModuleCore {
  VkPipeline pipeline = VK_NULL_HANDLE;
  TilePackerProperties properties{};
  uint32_t max_groups[2] = {};
};

namespace {

uint32_t sharedBytes(uint32_t containers) {
  return 12 * containers + 4 * VREN_RADIX_TILES_SIZE_CLASSES + 8;
}

VkResult createPipeline(TilePacker& p, VkPipelineCache cache, uint32_t required_subgroup_size) {
  const TilePackerProperties& props = p.properties;
  return detail::makePipeline(
      p, cache, vren_radix_tiles_pack_spv, sizeof(vren_radix_tiles_pack_spv),
      detail::tilePackSpecializationValues(props.workgroup_size, props.tile_size, props.container_count, props.alignment),
      required_subgroup_size, &p.pipeline);
}

}  // namespace

VkResult createTilePacker(const TilePackerCreateInfo& info, TilePacker** out, std::string* why) {
  if (!out) return VK_ERROR_INITIALIZATION_FAILED;
  *out = nullptr;
  VkResult result = checkParameters(info, why);
  if (result != VK_SUCCESS) return result;
  detail::DeviceFacts facts;
  DeviceFunctions fn;
  const detail::DeviceRequest request{"the tile packer",
                                      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
                                          VK_SUBGROUP_FEATURE_BALLOT_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT,
                                      "subgroup arithmetic, ballot and shuffle", sizeof(TilePackConstants)};
  result = detail::bindDevice(info.binding, "TilePackerCreateInfo", request, &facts, &fn, why);
  if (result != VK_SUCCESS) return result;

  const uint32_t workgroup_size = detail::tilePackWorkgroupSize(info.workgroup_size, info.tile_size, facts);
  if (workgroup_size > facts.max_workgroup_size)
    return fail(why, "The device's workgroups are smaller than one subgroup at the pinned subgroup size.",
                VK_ERROR_FEATURE_NOT_PRESENT);
  if (sharedBytes(info.container_count) > facts.max_shared_memory)
    return fail(why,
                "The device has too little compute shared memory for " + std::to_string(info.container_count) +
                    " containers; use fewer.",
                VK_ERROR_FEATURE_NOT_PRESENT);

  TilePacker* p = new (std::nothrow) TilePacker;
  if (!p) return VK_ERROR_OUT_OF_HOST_MEMORY;
  p->max_groups[0] = facts.max_groups[0];
  p->max_groups[1] = facts.max_groups[1];
  p->properties = {info.tile_size, info.container_count, info.alignment, workgroup_size, facts.subgroup_size};

  result = detail::initModule(*p, info.binding, fn, request);
  if (result == VK_SUCCESS) result = createPipeline(*p, info.binding.pipeline_cache, facts.required_subgroup_size);
  return detail::finishModule(p, result, "the tile packing pipeline", out, why);
}

void destroyTilePacker(TilePacker* p) { detail::deleteModule(p); }

TilePackerProperties getTilePackerProperties(const TilePacker* p) { return p->properties; }

namespace {

// Slots of a screen's largest output: full tiles, the right column, the bottom row, the corner.
uint64_t maxSlots(const TilePacker* p, uint32_t width, uint32_t height) {
  const uint32_t t = p->properties.tile_size;
  const uint32_t a = p->properties.alignment;
  const uint64_t full_x = width / t, full_y = height / t, rest_x = width % t, rest_y = height % t;
  return full_x * full_y * alignUp(uint64_t{t} * t, a) + full_y * alignUp(rest_x * t, a) +
         full_x * alignUp(uint64_t{t} * rest_y, a) + alignUp(rest_x * rest_y, a);
}

using detail::overlaps;
using detail::tooSmall;

VkDeviceAddress addressOf(const TilePacker* p, const BufferRange& r) { return detail::addressOf(p->fn, p->device, r); }

}  // namespace

TileMemoryRequirements getTileMemoryRequirements(const TilePacker* p, uint32_t width, uint32_t height) {
  assert(width <= kMaxTileScreenSize && height <= kMaxTileScreenSize);
  TileMemoryRequirements r{};
  r.tiles_x = divCeil(width, p->properties.tile_size);
  r.tiles_y = divCeil(height, p->properties.tile_size);
  r.pixels_size = std::max<uint64_t>(1, maxSlots(p, width, height)) * 4;
  r.tile_ranges_size = std::max<uint64_t>(1, uint64_t{r.tiles_x} * r.tiles_y) * 8;
  r.counter_size = 4;
  r.containers_size = r.pixels_size;
  r.alignment = kAlignment;
  r.usage = kUsage;
  return r;
}

const char* validateTilePackInfo(const TilePacker* p, const TilePackInfo& info) {
  if (info.width > kMaxTileScreenSize || info.height > kMaxTileScreenSize)
    return "The screen is larger than 65535 pixels in width or height; pixel coordinates are packed into 16 bits.";
  if (info.probes > kMaxTileProbes) return "probes must be at most 15.";
  if (info.width == 0 || info.height == 0) return nullptr;
  if (!info.keys.buffer || !info.counter.buffer || !info.pixels.buffer || !info.tile_ranges.buffer)
    return "keys, counter, pixels and tile_ranges buffers are required.";
  for (const BufferRange* r : {&info.keys, &info.counter, &info.pixels, &info.tile_ranges, &info.containers})
    if (r->offset % kAlignment) return "Buffer offsets must be multiples of TileMemoryRequirements::alignment (4 bytes).";
  const TileMemoryRequirements req = getTileMemoryRequirements(p, info.width, info.height);
  if (uint64_t{req.tiles_x} > p->max_groups[0] || uint64_t{req.tiles_y} > p->max_groups[1])
    return "The screen has more tiles per row or column than the device can dispatch; use a larger tile_size.";
  const VkDeviceSize key_bytes = VkDeviceSize{info.width} * info.height * 4;
  if (tooSmall(info.keys, key_bytes)) return "The keys buffer is smaller than width * height * 4 bytes.";
  if (tooSmall(info.counter, req.counter_size)) return "The counter buffer is smaller than 4 bytes.";
  if (tooSmall(info.pixels, req.pixels_size))
    return "The pixels buffer is smaller than getTileMemoryRequirements().pixels_size for this screen.";
  if (tooSmall(info.tile_ranges, req.tile_ranges_size))
    return "The tile_ranges buffer is smaller than 8 bytes per tile.";
  if (info.containers.buffer && tooSmall(info.containers, req.containers_size))
    return "The containers buffer is smaller than getTileMemoryRequirements().containers_size for this screen.";
  const BufferRange* ranges[] = {&info.keys, &info.counter, &info.pixels, &info.tile_ranges, &info.containers};
  const VkDeviceSize sizes[] = {key_bytes, req.counter_size, req.pixels_size, req.tile_ranges_size,
                                req.containers_size};
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 5; ++j)
      if (overlaps(*ranges[i], sizes[i], *ranges[j], sizes[j]))
        return "The keys, counter, pixels, tile_ranges and containers buffers must not overlap.";
  return nullptr;
}

void cmdPackTiles(const TilePacker* p, VkCommandBuffer cmd, const TilePackInfo& info) {
  assert(validateTilePackInfo(p, info) == nullptr);
  if (info.timestamp_pool)
    // Written once all earlier commands are done, so the interval holds the pass alone.
    p->fn.cmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, info.timestamp_pool, info.first_query);
  if (info.width != 0 && info.height != 0) {
    const TileMemoryRequirements req = getTileMemoryRequirements(p, info.width, info.height);
    TilePackConstants pc{};
    pc.keys = addressOf(p, info.keys);
    pc.pixels = addressOf(p, info.pixels);
    pc.tile_ranges = addressOf(p, info.tile_ranges);
    pc.counter = addressOf(p, info.counter);
    pc.containers = addressOf(p, info.containers);
    pc.width = info.width;
    pc.height = info.height;
    pc.tiles_x = req.tiles_x;
    pc.pixel_capacity = info.pixels.size == VK_WHOLE_SIZE
                            ? UINT32_MAX
                            : static_cast<uint32_t>(std::min<VkDeviceSize>(info.pixels.size / 4, UINT32_MAX));
    const bool key_quads = pc.keys % 16 == 0 && info.width % detail::kTilePixelsPerQuad == 0;
    pc.flags = (info.conflict_resolution ? VREN_RADIX_TILES_FLAG_CONFLICT_RESOLUTION : 0u) |
               (info.order_containers ? VREN_RADIX_TILES_FLAG_ORDER_CONTAINERS : 0u) |
               (info.containers.buffer ? VREN_RADIX_TILES_FLAG_WRITE_CONTAINERS : 0u) |
               (key_quads ? VREN_RADIX_TILES_FLAG_KEY_QUADS : 0u);
    pc.probes = info.probes;

    if (p->fn.cmdBeginDebugUtilsLabel) {
      VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
      label.pLabelName = "vren_radix pack tiles";
      p->fn.cmdBeginDebugUtilsLabel(cmd, &label);
    }
    p->fn.cmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
    p->fn.cmdPushConstants(cmd, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
    p->fn.cmdDispatch(cmd, req.tiles_x, req.tiles_y, 1);
    if (p->fn.cmdEndDebugUtilsLabel) p->fn.cmdEndDebugUtilsLabel(cmd);
  }
  if (info.timestamp_pool)
    p->fn.cmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, info.timestamp_pool, info.first_query + 1);
}

}  // namespace vren::radix
