// Benchmarks segmented sorts and top-k: the shapes CUB's DeviceSegmentedSort is compared on
// (vren_radix_cub_bench --segmented runs the same shapes), and top-k against vren_radix's own
// full sort of the same input.
//
// Each iteration records kSortsPerSubmit calls back to back in one command buffer, with
// timestamps around each, and reports their median as manual time; the inputs are only read, so
// nothing is restored in between. Every case is checked once against std::stable_sort per segment
// before it is timed, after 500 ms of warm-up.
//
// Flags, besides Google Benchmark's: --device=N (the Vulkan device, numbered as by
// `vren-radix info`).
#include <benchmark/benchmark.h>
#include <volk.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "bench_common.h"
#include "bench_context.h"
#include "gpu_timing.h"
#include "vren_radix/context.h"
#include "warmup.h"

namespace {

using namespace vren::radix;
using namespace vren::radix::bench;

constexpr uint32_t kSortsPerSubmit = 16;

struct Shape {
  const char* name;
  KeyType key_type;
  uint32_t segments;        // 0: the whole buffer, one segment (top-k only)
  uint32_t segment_length;  // every segment's length (the whole count without segments)
  uint32_t k;               // 0: a segmented sort
  bool argsort;
  uint32_t promise;  // max_segment_length (0: none)
  Dist dist = Dist::kUniform;  // of the u32 keys
};

// f32 keys uniform in [-1, 1); u32 keys as `dist` says.
std::vector<uint32_t> makeInput(KeyType type, uint32_t count, Dist dist) {
  std::vector<uint32_t> words = makeKeys(type == KeyType::kF32 ? Dist::kUniform : dist, count);
  if (type == KeyType::kF32)
    for (uint32_t& w : words) {
      const float f = static_cast<float>(w) * (2.0f / 4294967296.0f) - 1.0f;
      std::memcpy(&w, &f, 4);
    }
  return words;
}

uint32_t ordered(uint32_t key, KeyType type) {
  if (type == KeyType::kF32) return key ^ ((key >> 31) ? 0xFFFFFFFFu : 0x80000000u);
  return key;
}

struct Buffers {
  explicit Buffers(Context& c) : ctx(c) {}
  ~Buffers() {
    for (GpuBuffer& b : list) ctx.destroyBuffer(&b);
  }
  BufferRange make(VkDeviceSize bytes, VkBufferUsageFlags usage, std::string* error, bool host = false) {
    GpuBuffer b;
    if (!ctx.createBuffer(std::max<VkDeviceSize>(bytes, 16), usage, host, &b, error)) return {};
    list.push_back(b);
    return {b.buffer, 0, bytes};
  }
  void* mapped(const BufferRange& r) const {
    for (const GpuBuffer& b : list)
      if (b.buffer == r.buffer) return b.mapped;
    return nullptr;
  }
  Context& ctx;
  std::vector<GpuBuffer> list;
};

void copy(const Context& ctx, VkCommandBuffer cmd, const BufferRange& from, const BufferRange& to, VkDeviceSize bytes) {
  ctx.cmdCopy(cmd, from.buffer, from.offset, to.buffer, to.offset, bytes);
}

// Checks the result: per segment, the stable order of the keys (descending for largest), first k.
std::string check(const Shape& shape, const std::vector<uint32_t>& keys, const uint32_t* out_keys,
                  const uint32_t* out_values, bool largest) {
  const uint32_t segments = std::max(1u, shape.segments);
  std::vector<uint32_t> order;
  for (uint32_t s = 0; s < segments; ++s) {
    const uint32_t first = s * shape.segment_length;
    order.resize(shape.segment_length);
    std::iota(order.begin(), order.end(), first);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const uint32_t x = ordered(keys[a], shape.key_type), y = ordered(keys[b], shape.key_type);
      return largest ? x > y : x < y;
    });
    const uint32_t results = shape.k ? std::min(shape.k, shape.segment_length) : shape.segment_length;
    const uint64_t to = shape.k ? uint64_t{s} * shape.k : first;
    for (uint32_t r = 0; r < results; ++r)
      if (out_keys[to + r] != keys[order[r]] || (out_values && out_values[to + r] != order[r]))
        return "mismatch in segment " + std::to_string(s) + " at " + std::to_string(r);
  }
  return {};
}

void benchShape(benchmark::State& state, Context& ctx, const Shape& shape) {
  const Sorter* sorter = ctx.sorter();
  const uint32_t segments = std::max(1u, shape.segments);
  const uint32_t n = segments * shape.segment_length;
  const bool topk = shape.k > 0;
  const bool values = shape.argsort;
  const uint64_t out_slots = topk ? uint64_t{segments} * shape.k : n;
  const MemoryRequirements req = topk ? getTopKMemoryRequirements(sorter, n, segments, shape.k, values, shape.key_type)
                                      : getSegmentedMemoryRequirements(sorter, n, segments, values, shape.key_type);
  std::string error;
  Buffers buffers(ctx);
  const VkBufferUsageFlags usage = req.usage | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  const std::vector<uint32_t> keys = makeInput(shape.key_type, n, shape.dist);
  std::vector<uint32_t> offsets(segments + 1);
  for (uint32_t s = 0; s <= segments; ++s) offsets[s] = s * shape.segment_length;
  SegmentedSortInfo info;
  info.sort.count = n;
  info.sort.key_type = shape.key_type;
  info.sort.argsort = shape.argsort;
  info.sort.end_bit = 32;
  info.sort.keys = buffers.make(VkDeviceSize{n} * 4, usage, &error);
  if (values) info.sort.values = buffers.make(VkDeviceSize{n} * 4, usage, &error);
  info.sort.internal = buffers.make(req.internal_size, req.internal_usage | VK_BUFFER_USAGE_TRANSFER_DST_BIT, &error);
  if (shape.segments) {
    info.offsets = buffers.make(offsets.size() * 4, usage, &error);
    info.segment_count = segments;
  }
  info.max_segment_length = shape.promise;
  const BufferRange out_keys = buffers.make(out_slots * 4, usage, &error);
  const BufferRange out_values = values ? buffers.make(out_slots * 4, usage, &error) : BufferRange{};
  const VkDeviceSize staging_bytes = std::max<VkDeviceSize>(VkDeviceSize{n} * 4, offsets.size() * 4);
  const BufferRange staging = buffers.make(staging_bytes * 2, usage, &error, true);
  if (!error.empty()) return state.SkipWithError(error.c_str());
  TopKInfo topk_info;
  if (topk) {
    topk_info.input = info;
    topk_info.k = shape.k;
    topk_info.out_keys = out_keys;
    topk_info.out_values = out_values;
    if (const char* why = validateTopKInfo(sorter, topk_info)) return state.SkipWithError(why);
  } else {
    info.sort.keys_temp = out_keys;
    info.sort.values_temp = out_values;
    if (const char* why = validateSegmentedSortInfo(sorter, info)) return state.SkipWithError(why);
  }
  auto record = [&](VkCommandBuffer cmd) {
    if (topk)
      cmdTopK(sorter, cmd, topk_info);
    else
      cmdSortSegmented(sorter, cmd, info);
    ctx.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT);
  };

  // Upload, run once, check.
  auto* host = static_cast<uint32_t*>(buffers.mapped(staging));
  std::memcpy(host, keys.data(), VkDeviceSize{n} * 4);
  std::memcpy(host + staging_bytes / 4, offsets.data(), offsets.size() * 4);
  const BufferRange staged_offsets{staging.buffer, staging_bytes, offsets.size() * 4};
  bool ok = ctx.submit(
      [&](VkCommandBuffer cmd) {
        copy(ctx, cmd, staging, info.sort.keys, VkDeviceSize{n} * 4);
        if (shape.segments) copy(ctx, cmd, staged_offsets, info.offsets, offsets.size() * 4);
        ctx.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
        record(cmd);
        copy(ctx, cmd, out_keys, staging, out_slots * 4);
        if (values) copy(ctx, cmd, out_values, {staging.buffer, staging_bytes, 0}, out_slots * 4);
        ctx.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT);
      },
      &error);
  if (!ok) return state.SkipWithError(error.c_str());
  const std::string mismatch = check(shape, keys, host, values ? host + staging_bytes / 4 : nullptr, false);
  if (!mismatch.empty()) return state.SkipWithError(mismatch.c_str());

  Timestamps timestamps(ctx.vkDevice(), ctx.device().timestamp_period_ns);
  if (!timestamps.reserve(2 * kSortsPerSubmit, &error)) return state.SkipWithError(error.c_str());
  std::vector<uint64_t> ticks;
  std::vector<double> times;
  auto run = [&] {
    return ctx.submit(
        [&](VkCommandBuffer cmd) {
          vkCmdResetQueryPool(cmd, timestamps.pool(), 0, 2 * kSortsPerSubmit);
          for (uint32_t i = 0; i < kSortsPerSubmit; ++i) {
            vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps.pool(), 2 * i);
            record(cmd);
            vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps.pool(), 2 * i + 1);
          }
        },
        &error);
  };
  if (!warmUp(run)) return state.SkipWithError(error.c_str());
  for (auto _ : state) {
    if (!run() || !timestamps.read(2 * kSortsPerSubmit, &ticks, &error)) return state.SkipWithError(error.c_str());
    times.clear();
    for (uint32_t i = 0; i < kSortsPerSubmit; ++i)
      times.push_back(timestamps.microseconds(ticks[2 * i + 1] - ticks[2 * i]));
    state.SetIterationTime(median(times) * 1e-6);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * n);
}

// The shapes of vren_radix_cub_bench --segmented, and top-k.
const Shape kShapes[] = {
    // Segmented sorts: with max_segment_length promised (the one way that holds it), and without
    // (the GPU finds each segment's way).
    {"argsort_rows/4096x4096/f32/promised", KeyType::kF32, 4096, 4096, 0, true, 4096},
    {"argsort_rows/4096x4096/f32/unknown", KeyType::kF32, 4096, 4096, 0, true, 0},
    {"small_segments/1Mx16/promised", KeyType::kU32, 1u << 20, 16, 0, false, 16},
    {"small_segments/1Mx16/unknown", KeyType::kU32, 1u << 20, 16, 0, false, 0},
    {"large_segments/256x65536/promised", KeyType::kU32, 256, 1u << 16, 0, false, 1u << 16},
    {"large_segments/256x65536/unknown", KeyType::kU32, 256, 1u << 16, 0, false, 0},
    // Top-k of a whole buffer (radix select), and per row (the two sorts).
    {"topk_whole/k2048/1048576/argsort", KeyType::kU32, 0, 1u << 20, 2048, true, 0},
    {"topk_whole/k1/1048576/argsort", KeyType::kU32, 0, 1u << 20, 1, true, 0},
    {"topk_whole/k4096/1048576/argsort", KeyType::kU32, 0, 1u << 20, 4096, true, 0},
    {"topk_whole/k2048/65536/argsort", KeyType::kU32, 0, 1u << 16, 2048, true, 0},
    {"topk_whole/k2048/16777216/argsort", KeyType::kU32, 0, 1u << 24, 2048, true, 0},
    // Keys below 2^8: no gather; the last level and the collect (on NVIDIA in one dispatch up to 2^21).
    {"topk_whole/k2048/1048576/low8/argsort", KeyType::kU32, 0, 1u << 20, 2048, true, 0, Dist::kLow8},
    {"topk_whole/k2048/16777216/low8/argsort", KeyType::kU32, 0, 1u << 24, 2048, true, 0, Dist::kLow8},
    {"topk_rows/k40/512x32000/f32/argsort", KeyType::kF32, 512, 32000, 40, true, 0},
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  ContextOptions options;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--device=", 9) == 0) options.device_index = std::atoi(argv[i] + 9);
  std::unique_ptr<Context> ctx = createBenchContext("vren_radix_bench_segments", options);
  if (!ctx) return 1;
  Context* context = ctx.get();
  for (const Shape& shape : kShapes) {
    const uint64_t n = uint64_t{std::max(1u, shape.segments)} * shape.segment_length;
    if (n > ctx->maxCount()) continue;
    benchmark::RegisterBenchmark((std::string("vren_radix_segments/") + shape.name).c_str(),
                                 [=](benchmark::State& state) { benchShape(state, *context, shape); })
        ->UseManualTime()
        ->Iterations(8)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
