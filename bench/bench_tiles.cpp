// Benchmarks the tile packer (tiles.h) on procedural screens of meshlet IDs at 2560 x 1440 and
// 3840 x 2160, for three variants: conflict resolution and container order ("both"),
// resolution only ("resolution"), neither ("neither").
//
// GPU time comes from Vulkan timestamps around each pass (TilePackInfo::timestamp_pool). A run
// records all its passes into one submission, each behind its own counter clear and barrier
// (outside its timestamps), after discarded warm-up submissions of the same for 500 ms: the GPU
// works back to back and keeps its clocks up, where one submission and one host wait per pass
// left it idle most of the time (and, after the CPU check of a large screen, idle long enough to
// clock down: that made the 3840 x 2160 runs slow and noisy). Each case is verified once against a
// CPU check (every pixel with work exactly once, inside its tile's range) before it is timed.
// Reported per case: the manual time (mean of the run), median_us (median of the run's passes),
// pixels per second, and mixed_pct, the share of containers holding more than one key. For a
// median over runs, add --benchmark_repetitions=N.
//
// Flags, besides Google Benchmark's:
//   --device=N     the Vulkan device, numbered as by `vren-radix info`
//   --workgroup=N  TilePackerCreateInfo::workgroup_size (0, the default, lets the packer choose)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <volk.h>

#include "bench_context.h"
#include "gpu_timing.h"
#include "warmup.h"
#include "vren_radix/context.h"
#include "vren_radix/tiles.h"

namespace {

using namespace vren::radix;
using bench::median;

constexpr int kGpuPassesPerRun = 200;
constexpr int kCpuDevicePassesPerRun = 3;

struct Variant {
  const char* name;
  bool conflict_resolution;
  bool order_containers;
};
constexpr Variant kVariants[] = {{"both", true, true}, {"resolution", true, false}, {"neither", false, false}};
constexpr std::pair<uint32_t, uint32_t> kScreens[] = {{2560, 1440}, {3840, 2160}};

// A scene of meshlet IDs: sky (no work) above the horizon, a ground plane whose meshlets grow
// towards the camera, and overlapping objects drawn back to front, each cut into meshlets of
// 5-16 pixels. Deterministic for a given size.
std::vector<uint32_t> meshletScreen(uint32_t width, uint32_t height) {
  std::mt19937 gen(20240611u + width);
  std::vector<uint32_t> keys(size_t{width} * height, 0);
  const uint32_t horizon = height * 3 / 10;
  for (uint32_t y = horizon; y < height; ++y) {
    const uint32_t cell = 3 + 21 * (y - horizon) / (height - horizon);
    for (uint32_t x = 0; x < width; ++x) keys[size_t{y} * width + x] = 1 + ((y - horizon) / cell) * 4096 + x / (2 * cell);
  }
  const uint32_t objects = static_cast<uint32_t>(uint64_t{width} * height / 6000);
  std::uniform_real_distribution<float> unit(0, 1);
  for (uint32_t o = 0; o < objects; ++o) {
    const float radius = 12 + 250 * unit(gen) * unit(gen);
    const float cx = unit(gen) * width, cy = unit(gen) * height, aspect = 0.5f + unit(gen);
    const float rx = radius * aspect, ry = radius / aspect;
    const float cell = std::clamp(radius / 6, 5.0f, 16.0f);
    const uint32_t base = (o + 1) << 14;
    const int x0 = std::max(0, static_cast<int>(cx - rx)), x1 = std::min<int>(width - 1, static_cast<int>(cx + rx));
    const int y0 = std::max(0, static_cast<int>(cy - ry)), y1 = std::min<int>(height - 1, static_cast<int>(cy + ry));
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        const float dx = (x - cx) / rx, dy = (y - cy) / ry;
        if (dx * dx + dy * dy > 1) continue;
        const int u = static_cast<int>((x - cx) / cell) + 64, v = static_cast<int>((y - cy) / cell) + 64;
        keys[size_t(y) * width + x] = 0x80000000u | base | static_cast<uint32_t>(v * 128 + u);
      }
    }
  }
  return keys;
}

// One screen's keys on the device and the buffers of its output.
class Bench {
 public:
  Bench(Context& ctx, const TilePacker* packer)
      : ctx_(ctx), packer_(packer), timestamps_(ctx.vkDevice(), ctx.device().timestamp_period_ns) {}
  ~Bench() { release(); }

  bool prepare(uint32_t width, uint32_t height, std::string* error) {
    if (width == width_ && height == height_) return true;
    release();
    keys_ = meshletScreen(width, height);
    width_ = width;
    height_ = height;
    req_ = getTileMemoryRequirements(packer_, width, height);
    const VkDeviceSize key_bytes = keys_.size() * 4;
    const VkDeviceSize readback = req_.pixels_size + req_.containers_size + req_.tile_ranges_size + 4;
    if (!ctx_.createBuffer(key_bytes, req_.usage, false, &keys_buffer_, error) ||
        !ctx_.createBuffer(4, req_.usage, false, &counter_, error) ||
        !ctx_.createBuffer(req_.pixels_size, req_.usage, false, &pixels_, error) ||
        !ctx_.createBuffer(req_.tile_ranges_size, req_.usage, false, &ranges_, error) ||
        !ctx_.createBuffer(req_.containers_size, req_.usage, false, &containers_, error) ||
        !ctx_.createBuffer(std::max(key_bytes, readback), 0, true, &staging_, error))
      return false;
    std::memcpy(staging_.mapped, keys_.data(), key_bytes);
    return ctx_.submit(
        [&](VkCommandBuffer cmd) {
          ctx_.cmdCopy(cmd, staging_.buffer, 0, keys_buffer_.buffer, 0, key_bytes);
        },
        error);
  }

  TilePackInfo info(const Variant& v, bool with_containers) const {
    TilePackInfo info;
    info.width = width_;
    info.height = height_;
    info.keys = {keys_buffer_.buffer, 0, keys_.size() * 4};
    info.counter = {counter_.buffer, 0, 4};
    info.pixels = {pixels_.buffer, 0, req_.pixels_size};
    info.tile_ranges = {ranges_.buffer, 0, req_.tile_ranges_size};
    if (with_containers) info.containers = {containers_.buffer, 0, req_.containers_size};
    info.conflict_resolution = v.conflict_resolution;
    info.order_containers = v.order_containers;
    return info;
  }

  // Clears the counter, then packs in a second submission; gpu_ms times the pass alone.
  bool pack(const TilePackInfo& info, double* gpu_ms, std::string* error) {
    const bool cleared = ctx_.submit(
        [&](VkCommandBuffer cmd) {
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_ACCESS_TRANSFER_WRITE_BIT);
          vkCmdFillBuffer(cmd, counter_.buffer, 0, 4, 0);
          // Orders the clear before the pass of the next submission, outside its timed region.
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        },
        error);
    return cleared && ctx_.submit([&](VkCommandBuffer cmd) { cmdPackTiles(packer_, cmd, info); }, error, gpu_ms);
  }

  // Records `passes` packs into one submission, each after its own counter clear, and returns
  // each pass's GPU time from its own pair of timestamps.
  bool timePasses(TilePackInfo info, uint32_t passes, std::vector<double>* us, std::string* error) {
    if (!timestamps_.reserve(2 * passes, error)) return false;
    info.timestamp_pool = timestamps_.pool();
    const bool ran = ctx_.submit(
        [&](VkCommandBuffer cmd) {
          vkCmdResetQueryPool(cmd, timestamps_.pool(), 0, 2 * passes);
          for (uint32_t i = 0; i < passes; ++i) {
            // The previous pass ends before the clear (which also orders its output writes
            // before this pass's), and the clear before this pass: both barriers lie outside
            // this pass's timestamps.
            ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_ACCESS_TRANSFER_WRITE_BIT);
            vkCmdFillBuffer(cmd, counter_.buffer, 0, 4, 0);
            ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
            info.first_query = 2 * i;
            cmdPackTiles(packer_, cmd, info);
          }
        },
        error);
    std::vector<uint64_t> ticks;
    if (!ran || !timestamps_.read(2 * passes, &ticks, error)) return false;
    us->resize(passes);
    for (uint32_t i = 0; i < passes; ++i) (*us)[i] = timestamps_.microseconds(ticks[2 * i + 1] - ticks[2 * i]);
    return true;
  }

  // Packs once with the container output, reads everything back and checks it. Returns the
  // share of mixed containers through mixed_pct.
  std::string verify(const Variant& v, double* mixed_pct) {
    std::string error;
    double ms = 0;
    if (!pack(info(v, true), &ms, &error)) return error;
    const VkDeviceSize at_containers = req_.pixels_size, at_ranges = at_containers + req_.containers_size,
                       at_counter = at_ranges + req_.tile_ranges_size;
    const bool read = ctx_.submit(
        [&](VkCommandBuffer cmd) {
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
          const VkBufferCopy pixels{0, 0, req_.pixels_size}, containers{0, at_containers, req_.containers_size},
              ranges{0, at_ranges, req_.tile_ranges_size}, counter{0, at_counter, 4};
          vkCmdCopyBuffer(cmd, pixels_.buffer, staging_.buffer, 1, &pixels);
          vkCmdCopyBuffer(cmd, containers_.buffer, staging_.buffer, 1, &containers);
          vkCmdCopyBuffer(cmd, ranges_.buffer, staging_.buffer, 1, &ranges);
          vkCmdCopyBuffer(cmd, counter_.buffer, staging_.buffer, 1, &counter);
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                          VK_ACCESS_HOST_READ_BIT);
        },
        &error);
    if (!read) return error;
    const auto* words = static_cast<const uint32_t*>(staging_.mapped);
    const uint32_t* containers = words + at_containers / 4;
    const uint32_t* ranges = words + at_ranges / 4;
    const uint32_t counter = words[at_counter / 4];
    const TilePackerProperties props = getTilePackerProperties(packer_);
    const uint32_t t = props.tile_size;
    std::vector<uint8_t> seen(keys_.size(), 0);
    uint64_t slots = 0, with_work = 0, all_containers = 0, mixed = 0;
    for (uint32_t tile = 0; tile < req_.tiles_x * req_.tiles_y; ++tile) {
      const uint32_t start = ranges[2 * tile], count = ranges[2 * tile + 1];
      const uint32_t padded = (count + props.alignment - 1) / props.alignment * props.alignment;
      if (start % props.alignment || uint64_t{start} + padded > counter) return "A tile's range is misplaced.";
      slots += padded;
      std::map<uint32_t, std::set<uint32_t>> keys_in;
      for (uint32_t i = start; i < start + count; ++i) {
        const uint32_t x = words[i] & 0xFFFF, y = words[i] >> 16;
        if (x >= width_ || y >= height_ || (y / t) * req_.tiles_x + x / t != tile) return "A slot holds a foreign pixel.";
        const size_t pixel = size_t{y} * width_ + x;
        if (keys_[pixel] == 0 || seen[pixel]++) return "A pixel without work, or twice.";
        keys_in[containers[i]].insert(keys_[pixel]);
      }
      all_containers += keys_in.size();
      for (const auto& [c, set] : keys_in) mixed += set.size() > 1;
    }
    for (size_t i = 0; i < keys_.size(); ++i) with_work += keys_[i] != 0 && seen[i];
    if (with_work != static_cast<uint64_t>(std::count_if(keys_.begin(), keys_.end(), [](uint32_t k) { return k; })))
      return "A pixel with work is missing.";
    if (slots != counter) return "The counter does not match the tiles' ranges.";
    *mixed_pct = all_containers ? 100.0 * mixed / all_containers : 0;
    return {};
  }

  uint64_t pixels() const { return keys_.size(); }
  bool timestamps() const { return ctx_.device().timestamp_period_ns > 0; }
  uint32_t distinctKeysPerTile() const {
    const uint32_t t = getTilePackerProperties(packer_).tile_size;
    uint64_t total = 0;
    for (uint32_t ty = 0; ty < req_.tiles_y; ++ty) {
      for (uint32_t tx = 0; tx < req_.tiles_x; ++tx) {
        std::set<uint32_t> distinct;
        for (uint32_t y = ty * t; y < std::min(height_, ty * t + t); ++y)
          for (uint32_t x = tx * t; x < std::min(width_, tx * t + t); ++x)
            if (keys_[size_t{y} * width_ + x]) distinct.insert(keys_[size_t{y} * width_ + x]);
        total += distinct.size();
      }
    }
    return static_cast<uint32_t>(total / (uint64_t{req_.tiles_x} * req_.tiles_y));
  }

 private:
  void release() {
    for (GpuBuffer* b : {&keys_buffer_, &counter_, &pixels_, &ranges_, &containers_, &staging_})
      if (b->buffer) ctx_.destroyBuffer(b);
    width_ = height_ = 0;
  }

  Context& ctx_;
  const TilePacker* packer_;
  uint32_t width_ = 0, height_ = 0;
  std::vector<uint32_t> keys_;
  TileMemoryRequirements req_{};
  GpuBuffer keys_buffer_, counter_, pixels_, ranges_, containers_, staging_;
  bench::Timestamps timestamps_;
};

void benchPack(benchmark::State& state, Bench& bench, const Variant& v, uint32_t width, uint32_t height) {
  std::string error;
  if (!bench.prepare(width, height, &error)) return state.SkipWithError(error.c_str());
  double mixed_pct = 0;
  if (const std::string why = bench.verify(v, &mixed_pct); !why.empty()) return state.SkipWithError(why.c_str());
  if (!bench.timestamps()) return state.SkipWithError("The device's queue has no timestamps.");
  const TilePackInfo info = bench.info(v, false);
  // Iterations() fixes the count, so the passes can be timed before the loop, in one submission.
  const uint32_t passes = static_cast<uint32_t>(state.max_iterations);
  std::vector<double> samples;
  if (!vren::radix::bench::warmUp([&] { return bench.timePasses(info, passes, &samples, &error); }))
    return state.SkipWithError(error.c_str());
  if (!bench.timePasses(info, passes, &samples, &error)) return state.SkipWithError(error.c_str());
  size_t i = 0;
  for (auto _ : state) state.SetIterationTime(samples[i++ % samples.size()] * 1e-6);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bench.pixels()));
  state.counters["median_us"] = median(samples);
  state.counters["mixed_pct"] = mixed_pct;
  state.counters["keys_per_tile"] = bench.distinctKeysPerTile();
}

}  // namespace

int main(int argc, char** argv) {
  ContextOptions options;
  uint32_t workgroup_size = 0;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--device=", 9) == 0) options.device_index = std::atoi(argv[i] + 9);
    else if (std::strncmp(argv[i], "--workgroup=", 12) == 0)
      workgroup_size = static_cast<uint32_t>(std::atoi(argv[i] + 12));
    else argv[kept++] = argv[i];
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  std::unique_ptr<Context> ctx = bench::createBenchContext("vren_radix_bench_tiles", options);
  if (!ctx) return 1;
  std::string error;
  TilePackerCreateInfo ci = ctx->createInfo<TilePackerCreateInfo>();
  ci.workgroup_size = workgroup_size;
  TilePacker* raw = nullptr;
  if (createTilePacker(ci, &raw, &error) != VK_SUCCESS) {
    std::fprintf(stderr, "vren_radix_bench_tiles: %s\n", error.c_str());
    return 1;
  }
  std::unique_ptr<TilePacker, void (*)(TilePacker*)> packer(raw, destroyTilePacker);
  const TilePackerProperties props = getTilePackerProperties(packer.get());
  benchmark::AddCustomContext("subgroup_size", std::to_string(props.subgroup_size));
  benchmark::AddCustomContext("tile_packer", "tile " + std::to_string(props.tile_size) + ", " +
                                                 std::to_string(props.container_count) + " containers, alignment " +
                                                 std::to_string(props.alignment) + ", workgroup " +
                                                 std::to_string(props.workgroup_size));

  auto bench = std::make_unique<Bench>(*ctx, packer.get());
  Bench* b = bench.get();
  const int passes = ctx->device().type == "CPU" ? kCpuDevicePassesPerRun : kGpuPassesPerRun;
  for (const auto& [w, h] : kScreens) {
    for (const Variant& v : kVariants) {
      const std::string name = "tiles/" + std::string(v.name) + "/" + std::to_string(w) + "x" + std::to_string(h);
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) { benchPack(state, *b, v, w, h); })
          ->UseManualTime()
          ->Iterations(passes)
          ->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
