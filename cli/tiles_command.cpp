#include "tiles_command.h"

#include <volk.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "args.h"
#include "files.h"
#include "png.h"
#include "vren_radix/context.h"
#include "vren_radix/tiles.h"

namespace vren::radix::cli {
namespace {

int usageError(const std::string& message) { return cli::usageError("vren-radix tiles", message); }
int failure(const std::string& message) { return cli::failure("vren-radix tiles", message); }

struct Options {
  std::string keys_path;
  std::string out_dir;
  uint32_t width = 0;
  uint32_t height = 0;
  int device = -1;
  bool conflict_resolution = true;
  bool order_containers = true;
  bool quiet = false;
};

bool parseNumber(const std::string& text, uint32_t min, uint32_t max, uint32_t* value) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  const unsigned long v = std::stoul(text);
  if (v < min || v > max) return false;
  *value = static_cast<uint32_t>(v);
  return true;
}

bool parseOptions(int argc, char** argv, Options* o, std::string* error) {
  std::map<std::string, std::string> values;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-conflict-resolution") {
      o->conflict_resolution = false;
    } else if (arg == "--no-container-sort") {
      o->order_containers = false;
    } else if (arg == "--quiet") {
      o->quiet = true;
    } else if (arg == "--keys" || arg == "--width" || arg == "--height" || arg == "--out" || arg == "--device") {
      if (i + 1 >= argc) {
        *error = "Option '" + arg + "' needs a value.";
        return false;
      }
      if (values.count(arg)) {
        *error = "Option '" + arg + "' is given twice.";
        return false;
      }
      values[arg] = argv[++i];
    } else {
      *error = "Unknown option '" + arg + "' for tiles.";
      return false;
    }
  }
  for (const char* required : {"--keys", "--width", "--height", "--out"}) {
    if (!values.count(required)) {
      *error = "tiles needs --keys, --width, --height and --out; " + std::string(required) + " is missing.";
      return false;
    }
  }
  o->keys_path = values["--keys"];
  o->out_dir = values["--out"];
  const std::string limit = std::to_string(kMaxTileScreenSize);
  if (!parseNumber(values["--width"], 1, kMaxTileScreenSize, &o->width)) {
    *error = "--width takes a number of pixels from 1 to " + limit + ", not '" + values["--width"] + "'.";
    return false;
  }
  if (!parseNumber(values["--height"], 1, kMaxTileScreenSize, &o->height)) {
    *error = "--height takes a number of pixels from 1 to " + limit + ", not '" + values["--height"] + "'.";
    return false;
  }
  if (values.count("--device")) {
    uint32_t device = 0;
    if (!parseNumber(values["--device"], 0, 1024, &device)) {
      *error = "--device takes a device number from `vren-radix info`, not '" + values["--device"] + "'.";
      return false;
    }
    o->device = static_cast<int>(device);
  }
  return true;
}

struct Packed {
  std::vector<uint32_t> pixels;       // the used slots: [0, counter)
  std::vector<uint32_t> tile_ranges;  // (start, count) per tile
  std::vector<uint32_t> containers;   // container per used slot
  uint32_t counter = 0;
  double gpu_ms = -1;
};

// Device-local buffers for one screen, and a host-visible staging buffer for both directions.
class Buffers {
 public:
  explicit Buffers(Context& ctx) : ctx_(ctx) {}
  ~Buffers() {
    for (GpuBuffer* b : {&keys, &counter, &pixels, &ranges, &containers, &staging})
      if (b->buffer) ctx_.destroyBuffer(b);
  }
  bool create(const TileMemoryRequirements& req, VkDeviceSize key_bytes, std::string* error) {
    const VkDeviceSize readback = req.pixels_size + req.containers_size + req.tile_ranges_size + req.counter_size;
    return ctx_.createBuffer(key_bytes, req.usage, false, &keys, error) &&
           ctx_.createBuffer(req.counter_size, req.usage, false, &counter, error) &&
           ctx_.createBuffer(req.pixels_size, req.usage, false, &pixels, error) &&
           ctx_.createBuffer(req.tile_ranges_size, req.usage, false, &ranges, error) &&
           ctx_.createBuffer(req.containers_size, req.usage, false, &containers, error) &&
           ctx_.createBuffer(std::max(key_bytes, readback), 0, true, &staging, error);
  }
  GpuBuffer keys, counter, pixels, ranges, containers, staging;

 private:
  Context& ctx_;
};

void memoryBarrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src, VkPipelineStageFlags dst_stage,
                   VkAccessFlags dst) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = src;
  b.dstAccessMask = dst;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}

bool pack(Context& ctx, const Options& o, const std::vector<uint32_t>& keys, Packed* out, TilePackerProperties* props,
          std::string* error) {
  TilePackerCreateInfo ci = ctx.createInfo<TilePackerCreateInfo>();
  ci.binding.required_subgroup_size = ctx.subgroupSizeControlEnabled() ? ctx.device().subgroup_size : 0;
  TilePacker* packer = nullptr;
  std::string why;
  if (createTilePacker(ci, &packer, &why) != VK_SUCCESS) {
    *error = "Device '" + ctx.device().name + "': " + why;
    return false;
  }
  struct Guard {
    TilePacker* p;
    ~Guard() { destroyTilePacker(p); }
  } guard{packer};
  *props = getTilePackerProperties(packer);

  const TileMemoryRequirements req = getTileMemoryRequirements(packer, o.width, o.height);
  const VkDeviceSize key_bytes = keys.size() * 4;
  Buffers b(ctx);
  if (!b.create(req, key_bytes, error)) return false;
  TilePackInfo info;
  info.width = o.width;
  info.height = o.height;
  info.keys = {b.keys.buffer, 0, key_bytes};
  info.counter = {b.counter.buffer, 0, req.counter_size};
  info.pixels = {b.pixels.buffer, 0, req.pixels_size};
  info.tile_ranges = {b.ranges.buffer, 0, req.tile_ranges_size};
  info.containers = {b.containers.buffer, 0, req.containers_size};
  info.conflict_resolution = o.conflict_resolution;
  info.order_containers = o.order_containers;
  if (const char* invalid = validateTilePackInfo(packer, info)) {
    *error = invalid;
    return false;
  }

  std::memcpy(b.staging.mapped, keys.data(), key_bytes);
  const bool uploaded = ctx.submit(
      [&](VkCommandBuffer cmd) {
        ctx.cmdCopy(cmd, b.staging.buffer, 0, b.keys.buffer, 0, key_bytes);
        vkCmdFillBuffer(cmd, b.counter.buffer, 0, 4, 0);
        // Orders the upload before the pass of the next submission, outside its timed region.
        memoryBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      },
      error);
  if (!uploaded) return false;
  const bool packed = ctx.submit([&](VkCommandBuffer cmd) { cmdPackTiles(packer, cmd, info); }, error, &out->gpu_ms);
  if (!packed) return false;
  const VkDeviceSize at_containers = req.pixels_size, at_ranges = at_containers + req.containers_size,
                     at_counter = at_ranges + req.tile_ranges_size;
  const bool read = ctx.submit(
      [&](VkCommandBuffer cmd) {
        memoryBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const VkBufferCopy pixels{0, 0, req.pixels_size}, containers{0, at_containers, req.containers_size},
            ranges{0, at_ranges, req.tile_ranges_size}, counter{0, at_counter, 4};
        vkCmdCopyBuffer(cmd, b.pixels.buffer, b.staging.buffer, 1, &pixels);
        vkCmdCopyBuffer(cmd, b.containers.buffer, b.staging.buffer, 1, &containers);
        vkCmdCopyBuffer(cmd, b.ranges.buffer, b.staging.buffer, 1, &ranges);
        vkCmdCopyBuffer(cmd, b.counter.buffer, b.staging.buffer, 1, &counter);
        memoryBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                      VK_ACCESS_HOST_READ_BIT);
      },
      error);
  if (!read) return false;

  const auto* words = static_cast<const uint32_t*>(b.staging.mapped);
  out->counter = words[at_counter / 4];
  if (out->counter > req.pixels_size / 4) {
    *error = "The GPU used " + std::to_string(out->counter) + " output slots, more than the " +
             std::to_string(req.pixels_size / 4) + " the screen can need; the result is wrong.";
    return false;
  }
  out->pixels.assign(words, words + out->counter);
  out->containers.assign(words + at_containers / 4, words + at_containers / 4 + out->counter);
  out->tile_ranges.assign(words + at_ranges / 4, words + at_ranges / 4 + 2 * size_t{req.tiles_x} * req.tiles_y);
  return true;
}

bool writePictures(const Options& o, const std::vector<uint32_t>& keys, const Packed& packed, uint32_t tile_size,
                   std::string* error) {
  std::vector<uint8_t> rgb(size_t{o.width} * o.height * 3);
  for (size_t i = 0; i < keys.size(); ++i) png::labelColour(keys[i], true, &rgb[3 * i]);
  if (!png::writeRgb(o.out_dir + "/keys.png", o.width, o.height, rgb, error)) return false;

  // Each tile's slots, row-major inside the tile's square, coloured by their pixel's key.
  const uint32_t tiles_x = (o.width + tile_size - 1) / tile_size, tiles_y = (o.height + tile_size - 1) / tile_size;
  const uint32_t w = tiles_x * tile_size, h = tiles_y * tile_size;
  rgb.assign(size_t{w} * h * 3, 0);
  for (uint32_t t = 0; t < tiles_x * tiles_y; ++t) {
    const uint32_t start = packed.tile_ranges[2 * t], count = packed.tile_ranges[2 * t + 1];
    for (uint32_t i = 0; i < count && i < tile_size * tile_size && start + i < packed.counter; ++i) {
      const uint32_t slot = packed.pixels[start + i];
      if (slot == kTilePadding) continue;
      const uint32_t x = slot & 0xFFFF, y = slot >> 16;
      if (x >= o.width || y >= o.height) continue;
      const size_t at = (size_t{t / tiles_x * tile_size + i / tile_size} * w + t % tiles_x * tile_size + i % tile_size) * 3;
      png::labelColour(keys[size_t{y} * o.width + x], true, &rgb[at]);
    }
  }
  return png::writeRgb(o.out_dir + "/packed.png", w, h, rgb, error);
}

}  // namespace

int runTiles(int argc, char** argv) {
  Options o;
  std::string error;
  if (!parseOptions(argc, argv, &o, &error)) return usageError(error);

  std::vector<uint32_t> keys;
  if (!readWords(o.keys_path, &keys, &error)) return failure(error);
  const uint64_t pixels = uint64_t{o.width} * o.height;
  if (keys.size() != pixels)
    return failure("'" + o.keys_path + "' holds " + std::to_string(keys.size()) + " keys but a " +
                   std::to_string(o.width) + " x " + std::to_string(o.height) + " screen needs " +
                   std::to_string(pixels) + " (one little-endian u32 per pixel, row-major).");
  if (!createDirectories(o.out_dir, &error)) return failure(error);

  ContextOptions options;
  options.device_index = o.device;
  auto ctx = Context::create(options, &error);
  if (!ctx) return failure(error);
  Packed packed;
  TilePackerProperties props{};
  if (!pack(*ctx, o, keys, &packed, &props, &error)) return failure(error);

  // All outputs or none: a failure removes the output files, including ones this run wrote.
  const std::string dir = o.out_dir + "/";
  const std::string outputs[] = {dir + "sorted_pixels.u32", dir + "tile_ranges.u32", dir + "counter.u32",
                                 dir + "keys.png", dir + "packed.png"};
  if (!writeWordsAtomically(outputs[0], packed.pixels.data(), packed.pixels.size(), &error) ||
      !writeWordsAtomically(outputs[1], packed.tile_ranges.data(), packed.tile_ranges.size(), &error) ||
      !writeWordsAtomically(outputs[2], &packed.counter, 1, &error) ||
      !writePictures(o, keys, packed, props.tile_size, &error)) {
    for (const std::string& path : outputs) std::remove(path.c_str());  // a failure leaves no output behind
    return failure(error);
  }
  if (o.quiet) return kOk;

  // Containers that hold pixels, and those among them that hold more than one key.
  size_t work = 0, containers = 0, mixed = 0;
  const size_t tiles = packed.tile_ranges.size() / 2;
  for (size_t t = 0; t < tiles; ++t) {
    std::map<uint32_t, std::set<uint32_t>> keys_of;
    const uint32_t start = packed.tile_ranges[2 * t], count = packed.tile_ranges[2 * t + 1];
    work += count;
    for (uint32_t i = start; i < start + count && i < packed.counter; ++i) {
      const uint32_t slot = packed.pixels[i];
      if (slot != kTilePadding) keys_of[packed.containers[i]].insert(keys[size_t{slot >> 16} * o.width + (slot & 0xFFFF)]);
    }
    containers += keys_of.size();
    for (const auto& [c, set] : keys_of) mixed += set.size() > 1;
  }
  std::printf("device      %s, subgroup size %u\n", ctx->device().name.c_str(), props.subgroup_size);
  std::printf("tiles       %zu of %u x %u pixels, %u containers each; conflict resolution %s, container order %s\n",
              tiles, props.tile_size, props.tile_size, props.container_count, o.conflict_resolution ? "on" : "off",
              o.order_containers ? "on" : "off");
  std::printf("pixels      %zu with work of %llu; %u output slots with padding to %u\n", work,
              static_cast<unsigned long long>(pixels), packed.counter, props.alignment);
  std::printf("containers  %zu holding pixels, %zu of them mixing keys (%.2f %%)\n", containers, mixed,
              containers ? 100.0 * mixed / containers : 0.0);
  if (packed.gpu_ms >= 0) std::printf("GPU time    %.3f ms\n", packed.gpu_ms);
  return kOk;
}

}  // namespace vren::radix::cli
