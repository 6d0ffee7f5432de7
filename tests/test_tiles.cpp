// The tile packer against a CPU model: every pixel with work exactly once inside its own tile's
// range, one container per key, conflict resolution and container order rules, screen sizes that
// are not multiples of the tile, several tile sizes / container counts / alignments, keys read a
// quad at a time or one by one, poisoned outputs and canaries. Then the `tiles` command's usage
// errors and outputs. Runs under the validation layer.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>

#include <doctest/doctest.h>
#include <unistd.h>
#include <volk.h>

#include "files.h"
#include "gpu_test.h"
#include "tiles_command.h"
#include "vren_radix/tiles.h"

namespace vren::radix::test {
namespace {

constexpr uint32_t kPoison = 0xDCDCDCDCu;
constexpr uint32_t kCanary = 0xC0FFEE11u;
constexpr VkDeviceSize kCanaryBytes = 64;

struct PackerConfig {
  uint32_t tile_size = 64;
  uint32_t containers = 127;
  uint32_t alignment = 32;
  uint32_t workgroup_size = 0;
};

std::string describe(const PackerConfig& c) {
  std::ostringstream s;
  s << "tile " << c.tile_size << ", " << c.containers << " containers, alignment " << c.alignment;
  if (c.workgroup_size) s << ", workgroup " << c.workgroup_size;
  return s.str();
}

TilePackerCreateInfo createInfo(Context& ctx, const PackerConfig& c) {
  TilePackerCreateInfo ci = ctx.createInfo<TilePackerCreateInfo>();
  ci.binding.required_subgroup_size = ctx.subgroupSizeControlEnabled() ? ctx.device().subgroup_size : 0;
  ci.tile_size = c.tile_size;
  ci.container_count = c.containers;
  ci.alignment = c.alignment;
  ci.workgroup_size = c.workgroup_size;
  return ci;
}

// One packer per configuration, made on first use and destroyed before the test context.
const TilePacker* packer(const PackerConfig& c) {
  Context& ctx = context();
  struct Destroy {
    void operator()(TilePacker* p) const { destroyTilePacker(p); }
  };
  static std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, std::unique_ptr<TilePacker, Destroy>> packers;
  auto& slot = packers[{c.tile_size, c.containers, c.alignment, c.workgroup_size}];
  if (!slot) {
    TilePacker* p = nullptr;
    std::string why;
    REQUIRE_MESSAGE(createTilePacker(createInfo(ctx, c), &p, &why) == VK_SUCCESS, why);
    slot.reset(p);
  }
  return slot.get();
}

struct Screen {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint32_t> keys;
};

struct PackOptions {
  bool conflict_resolution = true;
  bool order_containers = true;
  uint32_t probes = 3;
  uint32_t counter_start = 0;
  uint32_t keys_offset = 0;  // bytes; 16-byte aligned keys of a width divisible by 4 are read a quad at a time
};

std::string describe(const PackOptions& o) {
  std::ostringstream s;
  s << "resolution " << (o.conflict_resolution ? "on" : "off") << " (probes " << o.probes << "), order "
    << (o.order_containers ? "on" : "off") << ", counter from " << o.counter_start << ", keys at byte "
    << o.keys_offset;
  return s.str();
}

struct PackOutput {
  std::vector<uint32_t> pixels;      // the whole pixels buffer: poison where the pass wrote nothing
  std::vector<uint32_t> containers;  // likewise
  std::vector<uint32_t> ranges;
  uint32_t counter = 0;
  bool canaries_intact = false;
};

// Poisons every output and guards each with canary words, packs, and reads everything back.
void runPack(const TilePacker* p, const Screen& s, const PackOptions& o, PackOutput* out) {
  Context& ctx = context();
  const TileMemoryRequirements req = getTileMemoryRequirements(p, s.width, s.height);
  const VkDeviceSize key_bytes = std::max<VkDeviceSize>(4, s.keys.size() * 4);
  const VkDeviceSize sizes[] = {key_bytes + o.keys_offset, 4, req.pixels_size + VkDeviceSize{o.counter_start} * 4,
                                req.tile_ranges_size, req.containers_size + VkDeviceSize{o.counter_start} * 4};
  GpuBuffer buffers[5], staging;
  std::string error;
  for (int i = 0; i < 5; ++i) REQUIRE_MESSAGE(ctx.createBuffer(sizes[i] + kCanaryBytes, req.usage, false, &buffers[i], &error), error);
  VkDeviceSize staging_bytes = key_bytes;
  for (VkDeviceSize size : sizes) staging_bytes += size + kCanaryBytes;
  REQUIRE_MESSAGE(ctx.createBuffer(staging_bytes, 0, true, &staging, &error), error);
  if (!s.keys.empty()) std::memcpy(staging.mapped, s.keys.data(), s.keys.size() * 4);

  TilePackInfo info;
  info.width = s.width;
  info.height = s.height;
  info.keys = {buffers[0].buffer, o.keys_offset, key_bytes};
  info.counter = {buffers[1].buffer, 0, sizes[1]};
  info.pixels = {buffers[2].buffer, 0, sizes[2]};
  info.tile_ranges = {buffers[3].buffer, 0, sizes[3]};
  info.containers = {buffers[4].buffer, 0, sizes[4]};
  info.conflict_resolution = o.conflict_resolution;
  info.order_containers = o.order_containers;
  info.probes = o.probes;
  const char* invalid = validateTilePackInfo(p, info);
  REQUIRE_MESSAGE(invalid == nullptr, invalid);

  const bool ok = ctx.submit(
      [&](VkCommandBuffer cmd) {
        ctx.cmdCopy(cmd, staging.buffer, 0, buffers[0].buffer, o.keys_offset, key_bytes);
        vkCmdFillBuffer(cmd, buffers[1].buffer, 0, 4, o.counter_start);
        for (int i = 2; i < 5; ++i) vkCmdFillBuffer(cmd, buffers[i].buffer, 0, sizes[i], kPoison);
        for (int i = 1; i < 5; ++i) vkCmdFillBuffer(cmd, buffers[i].buffer, sizes[i], kCanaryBytes, kCanary);
        ctx.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        cmdPackTiles(p, cmd, info);
        ctx.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        VkDeviceSize at = key_bytes;
        for (int i = 1; i < 5; ++i) {
          ctx.cmdCopy(cmd, buffers[i].buffer, 0, staging.buffer, at, sizes[i] + kCanaryBytes);
          at += sizes[i] + kCanaryBytes;
        }
        ctx.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
      },
      &error);
  REQUIRE_MESSAGE(ok, error);

  const auto* words = static_cast<const uint32_t*>(staging.mapped) + key_bytes / 4;
  std::vector<uint32_t>* targets[] = {nullptr, nullptr, &out->pixels, &out->ranges, &out->containers};
  out->canaries_intact = true;
  for (int i = 1; i < 5; ++i) {
    const size_t n = sizes[i] / 4;
    if (i == 1) out->counter = words[0];
    else targets[i]->assign(words, words + n);
    out->canaries_intact = out->canaries_intact && std::all_of(words + n, words + n + kCanaryBytes / 4,
                                                               [](uint32_t w) { return w == kCanary; });
    words += n + kCanaryBytes / 4;
  }
  for (GpuBuffer& b : buffers) ctx.destroyBuffer(&b);
  ctx.destroyBuffer(&staging);
}

struct MixStats {
  size_t containers = 0;  // containers holding pixels
  size_t mixed = 0;       // ... of more than one key
  double rate() const { return containers ? static_cast<double>(mixed) / containers : 0; }
};

// Checks one pack against the CPU model; returns the first violation, or an empty string.
std::string checkPack(const Screen& s, const PackerConfig& cfg, const PackOptions& o, const PackOutput& out,
                      MixStats* stats) {
  const uint32_t t = cfg.tile_size, a = cfg.alignment, c_count = cfg.containers;
  const uint32_t tiles_x = (s.width + t - 1) / t, tiles_y = (s.height + t - 1) / t;
  auto alignUp = [a](uint64_t n) { return (n + a - 1) / a * a; };
  std::ostringstream err;
  if (!out.canaries_intact) return "a canary word past an output buffer was overwritten";
  if (out.ranges.size() < 2 * size_t{tiles_x} * tiles_y) return "tile_ranges is too short";

  std::vector<uint8_t> seen(s.keys.size(), 0);
  std::vector<std::pair<uint64_t, uint64_t>> intervals;  // [start, padded end) per tile
  uint64_t slots = 0;
  for (uint32_t ty = 0; ty < tiles_y; ++ty) {
    for (uint32_t tx = 0; tx < tiles_x; ++tx) {
      const uint32_t tile = ty * tiles_x + tx;
      err << "tile (" << tx << ", " << ty << "): ";
      uint32_t expected = 0;
      for (uint32_t y = ty * t; y < std::min(s.height, (ty + 1) * t); ++y)
        for (uint32_t x = tx * t; x < std::min(s.width, (tx + 1) * t); ++x) expected += s.keys[size_t{y} * s.width + x] != 0;
      const uint32_t start = out.ranges[2 * tile], count = out.ranges[2 * tile + 1];
      const uint64_t padded = alignUp(count);
      if (count != expected) return err.str() + "count " + std::to_string(count) + ", expected " + std::to_string(expected);
      if (start % a) return err.str() + "start " + std::to_string(start) + " is not a multiple of the alignment";
      if (start < o.counter_start || start + padded > out.counter || start + padded > out.pixels.size())
        return err.str() + "range [" + std::to_string(start) + ", +" + std::to_string(padded) + ") outside the used slots";
      intervals.push_back({start, start + padded});
      slots += padded;

      // Walk the tile's slots: containers come in runs, each key in one container.
      std::map<uint32_t, uint32_t> container_of;          // key -> container
      std::map<uint32_t, std::set<uint32_t>> keys_in;     // container -> keys
      std::vector<std::pair<uint32_t, uint32_t>> runs;    // (container, size) in slot order
      for (uint32_t i = 0; i < count; ++i) {
        const uint32_t v = out.pixels[start + i], c = out.containers[start + i];
        const uint32_t x = v & 0xFFFF, y = v >> 16;
        if (v == kTilePadding || x >= s.width || y >= s.height || x / t != tx || y / t != ty)
          return err.str() + "slot " + std::to_string(i) + " holds " + std::to_string(v) + ", not a pixel of this tile";
        const size_t pixel = size_t{y} * s.width + x;
        const uint32_t key = s.keys[pixel];
        if (key == 0) return err.str() + "pixel (" + std::to_string(x) + ", " + std::to_string(y) + ") has no work";
        if (seen[pixel]++) return err.str() + "pixel (" + std::to_string(x) + ", " + std::to_string(y) + ") appears twice";
        if (c >= c_count) return err.str() + "container " + std::to_string(c) + " out of range";
        if (runs.empty() || runs.back().first != c) {
          for (const auto& run : runs)
            if (run.first == c) return err.str() + "container " + std::to_string(c) + " is not contiguous";
          runs.push_back({c, 0});
        }
        ++runs.back().second;
        auto [it, inserted] = container_of.emplace(key, c);
        if (!inserted && it->second != c) return err.str() + "key " + std::to_string(key) + " is in two containers";
        keys_in[c].insert(key);
      }
      for (uint64_t i = count; i < padded; ++i)
        if (out.pixels[start + i] != kTilePadding || out.containers[start + i] != kTilePadding)
          return err.str() + "padding slot " + std::to_string(i) + " is not 0xFFFFFFFF";

      // Conflict rules. Without resolution a key sits in its home container. With it, a key sits
      // in its probe window after containers that hold other keys, or shares its home when every
      // container of its window holds other keys; a container has at most one key that is not
      // such a sharer (its owner).
      auto held = [&](uint32_t c) { return keys_in.count(c % c_count) > 0; };
      for (const auto& [key, c] : container_of) {
        const uint32_t home = hashTileKey(key) % c_count;
        if (!o.conflict_resolution) {
          if (c != home) return err.str() + "key " + std::to_string(key) + " is not in its home container";
          continue;
        }
        const uint32_t distance = (c + c_count - home) % c_count;
        if (distance > o.probes) return err.str() + "key " + std::to_string(key) + " is outside its probe window";
        for (uint32_t d = 0; d < distance; ++d)
          if (!held(home + d)) return err.str() + "key " + std::to_string(key) + " skipped a free container";
      }
      if (o.conflict_resolution) {
        for (const auto& [c, set] : keys_in) {
          if (set.size() < 2) continue;
          int owners = 0;
          for (uint32_t key : set) {
            bool sharer = hashTileKey(key) % c_count == c;
            for (uint32_t d = 1; d <= o.probes && sharer; ++d) sharer = held(c + d);
            owners += !sharer;
          }
          if (owners > 1) return err.str() + "container " + std::to_string(c) + " mixes keys that had free containers";
        }
      }

      // Container order.
      if (o.order_containers) {
        bool in_multiples = true;
        uint32_t last = UINT32_MAX;
        for (const auto& [c, size] : runs) {
          if (size % a == 0) {
            if (!in_multiples) return err.str() + "a container whose size is a multiple of the alignment comes late";
          } else {
            in_multiples = false;
            if (std::min(size, 127u) > last) return err.str() + "containers are not ordered by decreasing size";
            last = std::min(size, 127u);
          }
        }
      } else {
        for (size_t i = 1; i < runs.size(); ++i)
          if (runs[i].first <= runs[i - 1].first) return err.str() + "containers are not in index order";
      }
      stats->containers += keys_in.size();
      for (const auto& [c, set] : keys_in) stats->mixed += set.size() > 1;
      err.str("");
    }
  }

  if (out.counter != o.counter_start + slots)
    return "counter " + std::to_string(out.counter) + ", expected " + std::to_string(o.counter_start + slots);
  std::sort(intervals.begin(), intervals.end());
  for (size_t i = 1; i < intervals.size(); ++i)
    if (intervals[i].first < intervals[i - 1].second) return "two tiles' ranges overlap";
  for (size_t i = 0; i < out.pixels.size(); ++i) {
    if (i >= o.counter_start && i < out.counter) continue;
    if (out.pixels[i] != kPoison || out.containers[i] != kPoison)
      return "slot " + std::to_string(i) + " outside the used slots was written";
  }
  for (size_t i = 0; i < s.keys.size(); ++i)
    if (s.keys[i] != 0 && !seen[i]) return "pixel " + std::to_string(i) + " with work is missing";
  return {};
}

MixStats packAndCheck(const PackerConfig& cfg, const Screen& s, const PackOptions& o) {
  INFO(describe(cfg) << "; " << describe(o) << "; screen " << s.width << " x " << s.height);
  PackOutput out;
  runPack(packer(cfg), s, o, &out);
  MixStats stats;
  const std::string error = checkPack(s, cfg, o, out, &stats);
  CHECK_MESSAGE(error.empty(), error);
  return stats;
}

// Rectangles of keys from a pool of `distinct` keys (0 among them with probability zero_share),
// sprinkled with single pixels: subgroups with one key and subgroups with several.
Screen blockScreen(uint32_t width, uint32_t height, uint32_t distinct, double zero_share, std::mt19937& gen) {
  Screen s{width, height, std::vector<uint32_t>(size_t{width} * height, 0)};
  std::vector<uint32_t> pool(distinct);
  std::bernoulli_distribution zero(zero_share);
  for (auto& k : pool) k = zero(gen) ? 0 : 1 + gen() % 0xFFFFFFFEu;
  std::uniform_int_distribution<uint32_t> side(1, 24);
  const size_t rectangles = s.keys.size() / 60 + 4;
  for (size_t r = 0; r < rectangles; ++r) {
    const uint32_t w = side(gen), h = side(gen), x0 = gen() % width, y0 = gen() % height, key = pool[gen() % distinct];
    for (uint32_t y = y0; y < std::min(height, y0 + h); ++y)
      for (uint32_t x = x0; x < std::min(width, x0 + w); ++x) s.keys[size_t{y} * width + x] = key;
  }
  for (size_t i = 0; i < s.keys.size() / 50; ++i) s.keys[gen() % s.keys.size()] = pool[gen() % distinct];
  return s;
}

// Cells around jittered sites `spacing` pixels apart, one distinct key each (meshlet-like).
Screen cellScreen(uint32_t width, uint32_t height, uint32_t spacing, std::mt19937& gen) {
  const uint32_t gx = width / spacing + 3, gy = height / spacing + 3;
  std::vector<std::pair<float, float>> sites(size_t{gx} * gy);
  std::vector<uint32_t> site_keys(sites.size());
  std::uniform_real_distribution<float> jitter(0, static_cast<float>(spacing));
  for (uint32_t j = 0; j < gy; ++j) {
    for (uint32_t i = 0; i < gx; ++i) {
      sites[size_t{j} * gx + i] = {(static_cast<float>(i) - 1) * spacing + jitter(gen),
                                   (static_cast<float>(j) - 1) * spacing + jitter(gen)};
      site_keys[size_t{j} * gx + i] = 1 + gen() % 0xFFFFFFFEu;
    }
  }
  Screen s{width, height, std::vector<uint32_t>(size_t{width} * height)};
  for (uint32_t y = 0; y < height; ++y) {
    for (uint32_t x = 0; x < width; ++x) {
      const uint32_t ci = x / spacing + 1, cj = y / spacing + 1;
      float best = 1e30f;
      for (uint32_t j = cj - 1; j <= cj + 1; ++j) {
        for (uint32_t i = ci - 1; i <= ci + 1; ++i) {
          const auto [sx, sy] = sites[size_t{j} * gx + i];
          const float d = (sx - x) * (sx - x) + (sy - y) * (sy - y);
          if (d < best) {
            best = d;
            s.keys[size_t{y} * width + x] = site_keys[size_t{j} * gx + i];
          }
        }
      }
    }
  }
  return s;
}

// A key other than those in `used` whose home container is `home`.
uint32_t keyWithHome(uint32_t home, uint32_t containers, std::set<uint32_t>& used, std::mt19937& gen) {
  for (uint32_t k = 1 + gen() % 0x7FFFFFFFu;; ++k) {
    if (k != 0 && hashTileKey(k) % containers == home && used.insert(k).second) return k;
  }
}

constexpr PackOptions kAllOptions[] = {{true, true}, {true, false}, {false, true}, {false, false}};

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "tile packing: every pixel once, inside its tile, at edge screen sizes" *
                               doctest::test_suite("subgroup")) {
  const std::pair<uint32_t, uint32_t> sizes[] = {{1, 1},   {63, 1},  {1, 65},   {64, 64},
                                                 {65, 65}, {100, 37}, {130, 200}, {257, 70}};
  for (auto [w, h] : sizes) {
    const Screen s = blockScreen(w, h, 40, 0.15, rng());
    for (const PackOptions& o : kAllOptions) packAndCheck({}, s, o);
  }
}

TEST_CASE_FIXTURE(GpuTest, "tile packing: uniform, empty, striped and all-distinct tiles") {
  const uint32_t w = 192, h = 130;
  Screen s{w, h, std::vector<uint32_t>(size_t{w} * h, 0)};
  packAndCheck({}, s, {});  // nothing to do: every count 0, the counter stays at 0
  packAndCheck({}, Screen{0, 5, {}}, {});  // no tiles: nothing recorded, nothing written
  std::fill(s.keys.begin(), s.keys.end(), 0xFFFFFFFFu);
  packAndCheck({}, s, {});  // one key per tile: whole subgroups at once
  for (size_t i = 0; i < s.keys.size(); ++i) s.keys[i] = i % 2 ? 7u : 0u;
  packAndCheck({}, s, {});  // no subgroup holds a single key
  for (size_t i = 0; i < s.keys.size(); ++i) s.keys[i] = (i % w) % 3 + 1;
  for (const PackOptions& o : kAllOptions) packAndCheck({}, s, o);
  const uint32_t extremes[] = {0u, 1u, 0xFFFFFFFFu, 0xFFFFFFFEu};
  for (size_t i = 0; i < s.keys.size(); ++i) s.keys[i] = extremes[(i / 3) % 4];
  for (const PackOptions& o : kAllOptions) packAndCheck({}, s, o);  // the smallest and largest keys beside no work
  for (size_t i = 0; i < s.keys.size(); ++i) s.keys[i] = static_cast<uint32_t>(i) * 2654435761u | 1u;
  for (const PackOptions& o : kAllOptions) packAndCheck({}, s, o);  // 4096 keys per tile: probes fail, keys share
  PackOptions probes;
  for (uint32_t n : {0u, 1u, 15u}) {
    probes.probes = n;
    packAndCheck({}, blockScreen(w, h, 300, 0.1, rng()), probes);
  }
}

TEST_CASE_FIXTURE(GpuTest, "tile packing: a handful of keys per tile never share a container") {
  // Tile i holds 1 + i % 8 keys, in up to two groups of at most four keys with one home
  // container each: with 3 probes every key finds a container of its own, whatever the order in
  // which pixels claim them. Without resolution the keys of a group share their home.
  const PackerConfig cfg;
  const uint32_t tiles_x = 8, tiles_y = 4, t = cfg.tile_size;
  Screen s{tiles_x * t, tiles_y * t, std::vector<uint32_t>(size_t{tiles_x} * t * tiles_y * t)};
  std::bernoulli_distribution empty(0.1);
  size_t shared_homes = 0;  // containers that hold two or more keys without resolution
  for (uint32_t tile = 0; tile < tiles_x * tiles_y; ++tile) {
    const uint32_t n = 1 + tile % 8;
    const uint32_t home = rng()() % cfg.containers;
    std::set<uint32_t> used;
    std::vector<uint32_t> keys;
    for (uint32_t i = 0; i < n; ++i)
      keys.push_back(keyWithHome(i < 4 ? home : (home + 60) % cfg.containers, cfg.containers, used, rng()));
    shared_homes += (std::min(n, 4u) >= 2) + (n >= 6);
    for (uint32_t y = 0; y < t; ++y)
      for (uint32_t x = 0; x < t; ++x)
        s.keys[size_t{tile / tiles_x * t + y} * s.width + tile % tiles_x * t + x] = empty(rng()) ? 0 : keys[rng()() % n];
  }
  for (bool ordered : {true, false}) {
    const MixStats on = packAndCheck(cfg, s, {true, ordered});
    CHECK(on.mixed == 0);
    const MixStats off = packAndCheck(cfg, s, {false, ordered});
    CHECK(off.mixed == shared_homes);
  }
}

TEST_CASE_FIXTURE(GpuTest, "tile packing: conflict resolution makes mixed containers rare") {
  // About 50 keys per tile in 127 containers: hash collisions are common.
  const Screen s = cellScreen(1024, 512, 9, rng());
  const MixStats on = packAndCheck({}, s, {true, true});
  const MixStats off = packAndCheck({}, s, {false, true});
  MESSAGE("mixed containers over " << (s.width / 64) * (s.height / 64) << " tiles: " << 100 * on.rate()
                                   << " % with conflict resolution (" << on.mixed << " of " << on.containers << "), "
                                   << 100 * off.rate() << " % without (" << off.mixed << " of " << off.containers
                                   << ")");
  CHECK(off.rate() > 0.05);
  CHECK(on.rate() < off.rate() / 3);
}

TEST_CASE_FIXTURE(GpuTest, "tile packing: tile sizes, container counts, alignments, workgroup sizes" *
                               doctest::test_suite("subgroup")) {
  const PackerConfig configs[] = {
      {16, 7, 32, 0},     // a tile of 256 pixels; more keys than containers
      {8, 1, 4, 0},       // one container: every key shares it
      {32, 1024, 64, 0},  // more containers than threads
      {128, 127, 32, 0},  // the largest tile
      {64, 127, 1, 64},   // alignment 1: every container is a multiple
      {8, 127, 256, 0},   // alignment past the tile's pixels
      {16, 31, 8, 16},    // 16 threads (raised to one whole subgroup where subgroups are wider)
  };
  for (const PackerConfig& cfg : configs) {
    const Screen s = blockScreen(150, 97, 60, 0.1, rng());
    for (const PackOptions& o : kAllOptions) packAndCheck(cfg, s, o);
  }
}

TEST_CASE_FIXTURE(GpuTest, "tile packing: keys read a quad at a time or one by one" * doctest::test_suite("subgroup")) {
  // Width 192 is divisible by 4: at a 16-byte aligned address the keys are read as quads, at
  // byte 4 or 8 one by one; both must pack alike. Width 190 is always read one by one.
  for (uint32_t w : {192u, 190u}) {
    const Screen s = blockScreen(w, 70, 30, 0.1, rng());
    for (uint32_t offset : {0u, 4u, 8u}) {
      PackOptions o;
      o.keys_offset = offset;
      packAndCheck({}, s, o);
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "tile packing: the counter appends to an earlier value") {
  PackOptions o;
  o.counter_start = 96;
  packAndCheck({}, blockScreen(200, 100, 30, 0.2, rng()), o);
  o.conflict_resolution = false;
  o.order_containers = false;
  packAndCheck({}, blockScreen(64, 64, 30, 0.2, rng()), o);
}

TEST_CASE_FIXTURE(GpuTest, "tile packing: invalid pack info is refused with a sentence" * doctest::test_suite("host")) {
  const TilePacker* p = packer({});
  const TileMemoryRequirements req = getTileMemoryRequirements(p, 100, 70);
  CHECK(req.tiles_x == 2);
  CHECK(req.tiles_y == 2);
  CHECK(req.pixels_size == 4 * (4096 + 36 * 64 + 64 * 6 + 224));  // 36 x 6 rounds up to 224
  CHECK(req.tile_ranges_size == 32);
  VkBuffer fake = reinterpret_cast<VkBuffer>(uintptr_t{0x1000});
  VkBuffer other = reinterpret_cast<VkBuffer>(uintptr_t{0x2000});
  TilePackInfo info;
  info.width = 100;
  info.height = 70;
  CHECK(validateTilePackInfo(p, info) != nullptr);  // no buffers
  info.keys = {fake, 0, 100 * 70 * 4};
  info.counter = {fake, 100 * 70 * 4, 4};
  info.pixels = {other, 0, req.pixels_size};
  info.tile_ranges = {other, req.pixels_size, req.tile_ranges_size};
  CHECK(validateTilePackInfo(p, info) == nullptr);
  TilePackInfo bad = info;
  bad.width = 70000;
  CHECK(validateTilePackInfo(p, bad) != nullptr);
  bad = info;
  bad.probes = 16;
  CHECK(validateTilePackInfo(p, bad) != nullptr);
  bad = info;
  bad.keys.size = 100 * 70 * 4 - 4;
  CHECK(validateTilePackInfo(p, bad) != nullptr);
  bad = info;
  bad.pixels.size = req.pixels_size - 4;
  CHECK(validateTilePackInfo(p, bad) != nullptr);
  bad = info;
  bad.tile_ranges.offset = req.pixels_size - 8;  // overlaps pixels
  CHECK(validateTilePackInfo(p, bad) != nullptr);
  bad = info;
  bad.counter.offset = 2;
  CHECK(validateTilePackInfo(p, bad) != nullptr);
  bad = info;
  bad.width = 0;
  CHECK(validateTilePackInfo(p, bad) == nullptr);  // nothing to record
}

TEST_CASE_FIXTURE(GpuTest, "tile packing: creation refuses bad parameters and leaks nothing" *
                               doctest::test_suite("host")) {
  Context& ctx = context();
  const PackerConfig bad[] = {{48, 127, 32, 0}, {4, 127, 32, 0},   {256, 127, 32, 0}, {64, 0, 32, 0},
                              {64, 1025, 32, 0}, {64, 127, 24, 0}, {64, 127, 512, 0}, {64, 127, 32, 100}};
  for (const PackerConfig& cfg : bad) {
    INFO(describe(cfg));
    TilePacker* p = reinterpret_cast<TilePacker*>(uintptr_t{1});
    std::string why;
    CHECK(createTilePacker(createInfo(ctx, cfg), &p, &why) != VK_SUCCESS);
    CHECK(p == nullptr);
    CHECK(!why.empty());
    CHECK(why.back() == '.');
  }
  TilePacker* p = nullptr;
  std::string why;
  REQUIRE_MESSAGE(createTilePacker(createInfo(ctx, {64, 127, 32, 0}), &p, &why) == VK_SUCCESS, why);
  const TilePackerProperties props = getTilePackerProperties(p);
  CHECK(props.subgroup_size == ctx.device().subgroup_size);
  CHECK(props.workgroup_size % props.subgroup_size == 0);
  destroyTilePacker(p);
}

namespace {

int runCommand(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return cli::runTiles(static_cast<int>(argv.size()), argv.data());
}

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("vren_radix_tiles_test_" + std::to_string(getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace

TEST_CASE("tiles command: usage errors and bad input" * doctest::test_suite("host")) {
  TempDir dir;
  std::string error;
  const std::vector<uint32_t> keys(16, 5);
  REQUIRE(cli::writeWordsAtomically(dir / "keys.u32", keys.data(), keys.size(), &error));
  const std::string k = dir / "keys.u32", out = dir / "out";
  CHECK(runCommand({}) == 2);
  CHECK(runCommand({"--keys", k, "--width", "4", "--height", "4"}) == 2);              // no --out
  CHECK(runCommand({"--keys", k, "--width", "4", "--height", "4", "--out"}) == 2);     // --out without a value
  CHECK(runCommand({"--keys", k, "--width", "4", "--height", "4", "--out", out, "--bogus"}) == 2);
  CHECK(runCommand({"--keys", k, "--width", "four", "--height", "4", "--out", out}) == 2);
  CHECK(runCommand({"--keys", k, "--width", "0", "--height", "4", "--out", out}) == 2);
  CHECK(runCommand({"--keys", k, "--width", "65536", "--height", "4", "--out", out}) == 2);
  CHECK(runCommand({"--keys", k, "--width", "4", "--height", "4", "--out", out, "--device", "x"}) == 2);
  CHECK(runCommand({"--keys", k, "--keys", k, "--width", "4", "--height", "4", "--out", out}) == 2);
  CHECK(runCommand({"--keys", dir / "missing.u32", "--width", "4", "--height", "4", "--out", out}) == 1);
  CHECK(runCommand({"--keys", k, "--width", "5", "--height", "4", "--out", out}) == 1);  // 16 keys for 20 pixels
  REQUIRE(cli::writeWordsAtomically(dir / "file", keys.data(), 1, &error));
  CHECK(runCommand({"--keys", k, "--width", "4", "--height", "4", "--out", dir / "file"}) == 1);  // not a directory
  CHECK(!std::filesystem::exists(out));
}

TEST_CASE("tiles command: writes packed pixels, ranges, counter and pictures") {
  TempDir dir;
  std::string error;
  const Screen s = blockScreen(100, 70, 12, 0.2, rng());
  REQUIRE(cli::writeWordsAtomically(dir / "keys.u32", s.keys.data(), s.keys.size(), &error));
  REQUIRE(runCommand({"--keys", dir / "keys.u32", "--width", "100", "--height", "70", "--out", dir / "out",
                      "--no-container-sort"}) == 0);
  std::vector<uint32_t> counter, ranges, pixels;
  REQUIRE(cli::readWords(dir / "out/counter.u32", &counter, &error));
  REQUIRE(cli::readWords(dir / "out/tile_ranges.u32", &ranges, &error));
  REQUIRE(cli::readWords(dir / "out/sorted_pixels.u32", &pixels, &error));
  REQUIRE(counter.size() == 1);
  CHECK(pixels.size() == counter[0]);
  REQUIRE(ranges.size() == 8);
  size_t work = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    CHECK(ranges[2 * i] % 32 == 0);
    CHECK(ranges[2 * i] + ranges[2 * i + 1] <= counter[0]);
    work += ranges[2 * i + 1];
  }
  CHECK(work == static_cast<size_t>(std::count_if(s.keys.begin(), s.keys.end(), [](uint32_t k) { return k != 0; })));
  CHECK(std::filesystem::file_size(dir / "out/keys.png") > 100 * 70 * 3);
  CHECK(std::filesystem::file_size(dir / "out/packed.png") > 128 * 128 * 3);
}

}  // namespace vren::radix::test
