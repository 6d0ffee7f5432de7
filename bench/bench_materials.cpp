// Benchmarks the material sort (materials.h) at 1920x1080, 2560x1440 and 3840x2160 with 8 and
// 64 materials, on two ID maps: "random" (every pixel its own material, as after a diffuse
// bounce) and "blocks" (16x16-pixel patches of one material with 10% strays, as primary hits).
//
//   materials/sort/<map>/<W>x<H>/<M>     steps 1-5 of cmdSortMaterials
//   materials/shade/<map>/<W>x<H>/<M>    sort + one indirect shading dispatch per material,
//                                        against one unsorted "uber" dispatch
//
// GPU time comes from Vulkan timestamps: the manual time of a sort is the interval between two
// timestamps recorded right before and after cmdSortMaterials, with nothing else between them;
// median_us is the median over the run. count_us, scan_us, offsets_us and scatter_us are the
// medians of the steps of a second sort after each timed one, profiled with the sort's own
// timestamps between its steps (on the fast path, up to fast_material_count materials, the scan
// runs beside the scatter: scan_us and offsets_us are ~0, and scatter_us covers the scan). The
// timestamps between the steps cost a little, so
// the steps add up to slightly more than median_us. A run records all its sorts, timed and
// profiled, into one submission, each behind a barrier outside its timestamps, after discarded
// warm-up submissions of the same for 500 ms: the GPU works back to back, as in a frame, instead
// of idling for a host wait between sorts (bench_tiles.cpp times its passes the same way).
// The shading case times, in one submission, the sort, the sorted shading and the uber
// shading; its manual time is sort + sorted shading, and it reports the medians sort_us,
// sorted_shading_us, uber_us, net_gain_us = uber - (sort + sorted shading) and
// speedup = uber / (sort + sorted shading).
// Shading costs 4^(m % 6) hash rounds for material m (shaders/materials_bench_shade.comp).
// Every case is verified once before it is timed: the sort against a CPU reference, the sorted
// shading against the uber shading.
//
// Flags, besides Google Benchmark's:
//   --device=N   the Vulkan device, numbered as by `vren-radix info`
//   --small      320x180 and 640x360 only, a few passes: a quick check on a CPU device
//   --tuning=WxR MaterialTuning: W threads per workgroup, at least R rounds per chunk
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <volk.h>

#include "bench_common.h"
#include "bench_context.h"
#include "gpu_timing.h"
#include "warmup.h"
#include "spirv/materials_bench_shade.h"
#include "vren_radix/context.h"
#include "vren_radix/materials.h"

namespace {

using namespace vren::radix;
using bench::SplitMix64;
using bench::median;

constexpr int kGpuPassesPerRun = 200;
constexpr int kCpuDevicePassesPerRun = 3;
constexpr uint32_t kShadingWorkgroup = 64;
constexpr uint32_t kUber = 0xFFFFFFFFu;
constexpr uint32_t kMaterialCounts[] = {8, 64};
constexpr uint32_t kMaxBenchMaterials = 64;
// Timestamps per timed sort: two around it, then the profiled sort's own.
constexpr uint32_t kQueriesPerSort = 2 + vren::radix::kMaterialSortTimestampCount;
constexpr std::pair<uint32_t, uint32_t> kScreens[] = {{1920, 1080}, {2560, 1440}, {3840, 2160}};
constexpr std::pair<uint32_t, uint32_t> kSmallScreens[] = {{320, 180}, {640, 360}};

enum class Map { kRandom, kBlocks };
const char* name(Map m) { return m == Map::kRandom ? "random" : "blocks"; }


// The same map for a kind, size and material count in every run.
std::vector<uint32_t> makeIds(Map map, uint32_t width, uint32_t height, uint32_t materials) {
  SplitMix64 rng{(uint64_t{width} << 32) + height * 131 + materials + (map == Map::kBlocks ? 7 : 0)};
  std::vector<uint32_t> ids(size_t{width} * height);
  if (map == Map::kRandom) {
    for (auto& id : ids) id = rng.next() % materials;
    return ids;
  }
  const uint32_t cells_x = (width + 15) / 16, cells_y = (height + 15) / 16;
  std::vector<uint32_t> cells(size_t{cells_x} * cells_y);
  for (auto& c : cells) c = rng.next() % materials;
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x)
      ids[size_t{y} * width + x] = rng.next() % 10 == 0 ? rng.next() % materials : cells[(y / 16) * cells_x + x / 16];
  return ids;
}

VkDeviceAddress addressOf(VkDevice device, VkBuffer buffer) {
  VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  info.buffer = buffer;
  return vkGetBufferDeviceAddress(device, &info);
}

// materials_bench_shade.comp's push constants.
struct ShadeConstants {
  VkDeviceAddress ids, counts, offsets, new_to_old, colour;
  uint32_t pixel_count, pad;
};

// Pipelines of the shading benchmark: one per material and the uber one.
struct ShadePipelines {
  VkDevice device = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  std::vector<VkPipeline> sorted;
  VkPipeline uber = VK_NULL_HANDLE;

  ~ShadePipelines() {
    for (VkPipeline p : sorted) vkDestroyPipeline(device, p, nullptr);
    vkDestroyPipeline(device, uber, nullptr);
    vkDestroyPipelineLayout(device, layout, nullptr);
  }

  bool create(VkDevice d, uint32_t materials) {
    device = d;
    const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(ShadeConstants)};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    if (vkCreatePipelineLayout(device, &layout_info, nullptr, &layout) != VK_SUCCESS) return false;
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = sizeof(vren_radix_materials_bench_shade_spv);
    module_info.pCode = vren_radix_materials_bench_shade_spv;
    VkShaderModule module = VK_NULL_HANDLE;
    if (vkCreateShaderModule(device, &module_info, nullptr, &module) != VK_SUCCESS) return false;
    bool ok = true;
    sorted.assign(materials, VK_NULL_HANDLE);
    for (uint32_t m = 0; m <= materials && ok; ++m) {
      const uint32_t values[] = {kShadingWorkgroup, m == materials ? kUber : m};
      const VkSpecializationMapEntry entries[] = {{0, 0, 4}, {1, 4, 4}};
      const VkSpecializationInfo spec{2, entries, sizeof(values), values};
      VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
      info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT, module,
                    "main", &spec};
      info.layout = layout;
      ok = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, m == materials ? &uber : &sorted[m]) ==
           VK_SUCCESS;
    }
    vkDestroyShaderModule(device, module, nullptr);
    return ok;
  }
};

// One ID map on the device, the sort's buffers, and the shading outputs.
class Bench {
 public:
  Bench(Context& ctx, const MaterialSorter* sorter)
      : ctx_(ctx), sorter_(sorter), timestamps_(ctx.vkDevice(), ctx.device().timestamp_period_ns) {}
  ~Bench() { release(); }

  bool prepare(Map map, uint32_t width, uint32_t height, uint32_t materials, uint32_t alignment, std::string* error) {
    if (map == map_ && width == width_ && height == height_ && materials == materials_ && alignment == alignment_)
      return true;
    release();
    ids_ = makeIds(map, width, height, materials);
    map_ = map;
    width_ = width;
    height_ = height;
    materials_ = materials;
    alignment_ = alignment;
    info_ = {};
    info_.pixel_count = static_cast<uint32_t>(ids_.size());
    info_.material_count = materials;
    info_.options.range_alignment = alignment;
    info_.options.shading_workgroup_size = kShadingWorkgroup;
    req_ = getMaterialSortRequirements(sorter_, info_.pixel_count, materials, info_.options);
    const VkDeviceSize bytes = ids_.size() * 4;
    const VkDeviceSize sizes[] = {bytes, req_.chunk_counts_size, req_.counts_size, req_.offsets_size,
                                  req_.dispatch_size, req_.new_to_old_size, bytes, bytes};
    for (int i = 0; i < 8; ++i)
      if (!ctx_.createBuffer(sizes[i], i == 4 ? req_.dispatch_usage : req_.usage, false, &buffers_[i], error))
        return false;
    if (!ctx_.createBuffer(std::max(req_.new_to_old_size, bytes) + 2 * bytes, 0, true, &staging_, error)) return false;
    BufferRange* ranges[] = {&info_.material_ids, &info_.chunk_counts, &info_.counts,
                             &info_.offsets,      &info_.dispatch,     &info_.new_to_old};
    for (int i = 0; i < 6; ++i) *ranges[i] = {buffers_[i].buffer, 0, sizes[i]};
    if (const char* invalid = validateMaterialSortInfo(sorter_, info_)) {
      *error = invalid;
      return false;
    }
    std::memcpy(staging_.mapped, ids_.data(), bytes);
    return ctx_.submit(
        [&](VkCommandBuffer cmd) {
          ctx_.cmdCopy(cmd, staging_.buffer, 0, buffers_[0].buffer, 0, bytes);
        },
        error);
  }

  // Records `sorts` sorts into one submission, each timed by two timestamps right around
  // cmdSortMaterials (us: the five steps alone, not the barriers or the timestamps between
  // steps), and each followed by a profiled sort with the sort's own timestamps between its steps
  // (steps_us). The barrier in front of each sort orders everything before it, outside its
  // timestamps.
  bool timeSorts(uint32_t sorts, std::vector<double>* us, std::vector<double> steps_us[4], std::string* error) {
    if (!timestamps_.reserve(sorts * kQueriesPerSort, error)) return false;
    const VkQueryPool pool = timestamps_.pool();
    const bool ok = ctx_.submit(
        [&](VkCommandBuffer cmd) {
          vkCmdResetQueryPool(cmd, pool, 0, sorts * kQueriesPerSort);
          for (uint32_t i = 0; i < sorts; ++i) {
            const uint32_t first = i * kQueriesPerSort;
            MaterialSortInfo profiled = info_;
            profiled.timestamp_pool = pool;
            profiled.first_query = first + 2;
            ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
            vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, first);
            cmdSortMaterials(sorter_, cmd, info_);
            vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, first + 1);
            ctx_.cmdBarrier(
                cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
            cmdSortMaterials(sorter_, cmd, profiled);
          }
        },
        error);
    std::vector<uint64_t> ticks;
    if (!ok || !timestamps_.read(sorts * kQueriesPerSort, &ticks, error)) return false;
    us->resize(sorts);
    for (int k = 0; k < 4; ++k) steps_us[k].resize(sorts);
    for (uint32_t i = 0; i < sorts; ++i) {
      const uint64_t* t = ticks.data() + i * kQueriesPerSort;
      (*us)[i] = timestamps_.microseconds(t[1] - t[0]);
      for (int k = 0; k < 4; ++k) steps_us[k][i] = timestamps_.microseconds(t[k + 3] - t[k + 2]);
    }
    return true;
  }

  // Sort, sorted shading, uber shading in one submission: times[0..2] in milliseconds.
  bool shade(const ShadePipelines& p, double times[3], std::string* error) {
    if (!timestamps_.reserve(4, error)) return false;
    const VkQueryPool pool = timestamps_.pool();
    const VkDevice device = ctx_.vkDevice();
    ShadeConstants pc{addressOf(device, buffers_[0].buffer), addressOf(device, buffers_[2].buffer),
                      addressOf(device, buffers_[3].buffer), addressOf(device, buffers_[5].buffer),
                      addressOf(device, buffers_[6].buffer), info_.pixel_count, 0};
    const uint32_t max_x = getMaterialSorterProperties(sorter_).max_workgroup_count_x;
    const uint32_t groups = (info_.pixel_count + kShadingWorkgroup - 1) / kShadingWorkgroup;
    const uint32_t groups_y = (groups + max_x - 1) / max_x;
    const bool ok = ctx_.submit(
        [&](VkCommandBuffer cmd) {
          ctx_.cmdBarrier(cmd,
                          VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
                              VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT,
                          VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                              VK_ACCESS_INDIRECT_COMMAND_READ_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
          vkCmdResetQueryPool(cmd, pool, 0, 4);
          vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 0);
          cmdSortMaterials(sorter_, cmd, info_);
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                          VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                          VK_ACCESS_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_SHADER_READ_BIT);
          vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 1);
          pc.colour = addressOf(device, buffers_[6].buffer);
          vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
          for (uint32_t m = 0; m < materials_; ++m) {
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.sorted[m]);
            vkCmdDispatchIndirect(cmd, info_.dispatch.buffer, m * sizeof(VkDispatchIndirectCommand));
          }
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
          vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2);
          pc.colour = addressOf(device, buffers_[7].buffer);
          vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
          vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.uber);
          vkCmdDispatch(cmd, (groups + groups_y - 1) / groups_y, groups_y, 1);
          vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 3);
        },
        error);
    std::vector<uint64_t> ticks;
    if (!ok || !timestamps_.read(4, &ticks, error)) return false;
    for (int i = 0; i < 3; ++i) times[i] = timestamps_.microseconds(ticks[i + 1] - ticks[i]) * 1e-3;
    return true;
  }

  // Sorts once and compares counts, offsets and new_to_old with a CPU reference.
  std::string verifySort() {
    std::string error;
    std::vector<double> us, steps[4];
    if (!timeSorts(1, &us, steps, &error)) return error;
    const VkDeviceSize at_offsets = req_.counts_size, at_map = at_offsets + req_.offsets_size;
    if (!readBack({{info_.counts.buffer, 0, req_.counts_size},
                   {info_.offsets.buffer, at_offsets, req_.offsets_size},
                   {info_.new_to_old.buffer, at_map, req_.new_to_old_size}},
                  &error))
      return error;
    const auto* words = static_cast<const uint32_t*>(staging_.mapped);
    std::vector<uint32_t> counts(materials_, 0), next(materials_);
    for (uint32_t id : ids_) ++counts[id];
    uint32_t slots = 0;
    for (uint32_t m = 0; m < materials_; ++m) {
      if (words[m] != counts[m]) return "counts[" + std::to_string(m) + "] differs from the CPU reference.";
      if (words[at_offsets / 4 + m] != slots) return "offsets[" + std::to_string(m) + "] differs from the CPU reference.";
      next[m] = slots;
      slots += (counts[m] + alignment_ - 1) / alignment_ * alignment_;
    }
    const uint32_t* map = words + at_map / 4;
    for (uint32_t p = 0; p < ids_.size(); ++p)
      if (map[next[ids_[p]]++] != p) return "new_to_old differs from the stable CPU reference at pixel " + std::to_string(p) + ".";
    return {};
  }

  // Shades once both ways and compares the two outputs word for word.
  std::string verifyShade(const ShadePipelines& p) {
    std::string error;
    double times[3];
    if (!shade(p, times, &error)) return error;
    const VkDeviceSize bytes = ids_.size() * 4;
    if (!readBack({{buffers_[6].buffer, 0, bytes}, {buffers_[7].buffer, bytes, bytes}}, &error)) return error;
    const auto* words = static_cast<const uint32_t*>(staging_.mapped);
    if (!std::equal(words, words + ids_.size(), words + ids_.size()))
      return "The sorted shading differs from the uber shading.";
    return {};
  }

  uint64_t pixels() const { return ids_.size(); }

 private:
  struct Copy {
    VkBuffer buffer;
    VkDeviceSize at, bytes;
  };

  bool readBack(const std::vector<Copy>& copies, std::string* error) {
    return ctx_.submit(
        [&](VkCommandBuffer cmd) {
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
          for (const Copy& c : copies) ctx_.cmdCopy(cmd, c.buffer, 0, staging_.buffer, c.at, c.bytes);
          ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                          VK_ACCESS_HOST_READ_BIT);
        },
        error);
  }

  void release() {
    for (GpuBuffer& b : buffers_)
      if (b.buffer) ctx_.destroyBuffer(&b);
    if (staging_.buffer) ctx_.destroyBuffer(&staging_);
    width_ = height_ = materials_ = 0;
  }

  Context& ctx_;
  const MaterialSorter* sorter_;
  Map map_ = Map::kRandom;
  uint32_t width_ = 0, height_ = 0, materials_ = 0, alignment_ = 0;
  std::vector<uint32_t> ids_;
  MaterialSortRequirements req_{};
  MaterialSortInfo info_;
  // ids, chunk_counts, counts, offsets, dispatch, new_to_old, sorted colour, uber colour
  GpuBuffer buffers_[8];
  GpuBuffer staging_;
  bench::Timestamps timestamps_;
};

struct Case {
  Map map;
  uint32_t width, height, materials;
};

void benchSort(benchmark::State& state, Bench& bench, const Case& c) {
  std::string error;
  if (!bench.prepare(c.map, c.width, c.height, c.materials, 1, &error)) return state.SkipWithError(error.c_str());
  if (const std::string why = bench.verifySort(); !why.empty()) return state.SkipWithError(why.c_str());
  // Iterations() fixes the count, so the sorts can be timed before the loop, in one submission.
  const uint32_t sorts = static_cast<uint32_t>(state.max_iterations);
  std::vector<double> samples, steps[4];
  if (!vren::radix::bench::warmUp([&] { return bench.timeSorts(sorts, &samples, steps, &error); }))
    return state.SkipWithError(error.c_str());
  if (!bench.timeSorts(sorts, &samples, steps, &error)) return state.SkipWithError(error.c_str());
  size_t i = 0;
  for (auto _ : state) state.SetIterationTime(samples[i++ % samples.size()] * 1e-6);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bench.pixels()));
  state.counters["median_us"] = median(samples);
  const char* names[] = {"count_us", "scan_us", "offsets_us", "scatter_us"};
  for (int k = 0; k < 4; ++k) state.counters[names[k]] = median(steps[k]);
}

void benchShade(benchmark::State& state, Bench& bench, const ShadePipelines& pipelines, const Case& c) {
  std::string error;
  if (!bench.prepare(c.map, c.width, c.height, c.materials, 32, &error)) return state.SkipWithError(error.c_str());
  if (const std::string why = bench.verifyShade(pipelines); !why.empty()) return state.SkipWithError(why.c_str());
  double t[3];
  if (!vren::radix::bench::warmUp([&] { return bench.shade(pipelines, t, &error); }))
    return state.SkipWithError(error.c_str());
  std::vector<double> sort_ms, sorted_ms, uber_ms, total_ms;
  for (auto _ : state) {
    if (!bench.shade(pipelines, t, &error)) return state.SkipWithError(error.c_str());
    state.SetIterationTime((t[0] + t[1]) * 1e-3);
    sort_ms.push_back(t[0]);
    sorted_ms.push_back(t[1]);
    uber_ms.push_back(t[2]);
    total_ms.push_back(t[0] + t[1]);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bench.pixels()));
  const double total = median(total_ms), uber = median(uber_ms);
  state.counters["sort_us"] = median(sort_ms) * 1e3;
  state.counters["sorted_shading_us"] = median(sorted_ms) * 1e3;
  state.counters["uber_us"] = uber * 1e3;
  state.counters["net_gain_us"] = (uber - total) * 1e3;
  state.counters["speedup"] = total > 0 ? uber / total : 0;
}

}  // namespace

int main(int argc, char** argv) {
  ContextOptions options;
  bool small = false;
  MaterialTuning tuning{};
  bool tuned = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--device=", 9) == 0) options.device_index = std::atoi(argv[i] + 9);
    else if (std::strcmp(argv[i], "--small") == 0) small = true;
    else if (std::sscanf(argv[i], "--tuning=%ux%u", &tuning.workgroup_size, &tuning.min_rounds) == 2) tuned = true;
    else argv[kept++] = argv[i];
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  std::unique_ptr<Context> ctx = bench::createBenchContext("vren_radix_bench_materials", options);
  if (!ctx) return 1;
  std::string error;
  MaterialSorterCreateInfo ci = ctx->createInfo<MaterialSorterCreateInfo>();
  if (tuned) ci.tuning = &tuning;
  MaterialSorter* raw = nullptr;
  if (createMaterialSorter(ci, &raw, &error) != VK_SUCCESS) {
    std::fprintf(stderr, "vren_radix_bench_materials: %s\n", error.c_str());
    return 1;
  }
  std::unique_ptr<MaterialSorter, void (*)(MaterialSorter*)> sorter(raw, destroyMaterialSorter);
  ShadePipelines pipelines;
  if (!pipelines.create(ctx->vkDevice(), kMaxBenchMaterials)) {
    std::fprintf(stderr, "vren_radix_bench_materials: creating the shading pipelines failed.\n");
    return 1;
  }
  const MaterialSorterProperties props = getMaterialSorterProperties(sorter.get());
  benchmark::AddCustomContext("subgroup_size", std::to_string(props.subgroup_size));
  benchmark::AddCustomContext("material_sorter", "workgroup " + std::to_string(props.tuning.workgroup_size) +
                                                     ", min rounds " + std::to_string(props.tuning.min_rounds) +
                                                     ", up to " + std::to_string(props.max_material_count) +
                                                     " materials, fast path up to " +
                                                     std::to_string(props.fast_material_count));

  auto bench = std::make_unique<Bench>(*ctx, sorter.get());
  Bench* b = bench.get();
  const ShadePipelines* p = &pipelines;
  const int passes = small || ctx->device().type == "CPU" ? kCpuDevicePassesPerRun : kGpuPassesPerRun;
  std::vector<std::pair<uint32_t, uint32_t>> screens(std::begin(kScreens), std::end(kScreens));
  if (small) screens.assign(std::begin(kSmallScreens), std::end(kSmallScreens));
  for (const bool shading : {false, true}) {
    for (const Map map : {Map::kRandom, Map::kBlocks}) {
      for (const auto& [w, h] : screens) {
        for (const uint32_t m : kMaterialCounts) {
          const Case c{map, w, h, m};
          const std::string name = std::string("materials/") + (shading ? "shade/" : "sort/") + ::name(map) + "/" +
                                   std::to_string(w) + "x" + std::to_string(h) + "/" + std::to_string(m);
          auto* registered =
              shading ? benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { benchShade(s, *b, *p, c); })
                      : benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { benchSort(s, *b, c); });
          registered->UseManualTime()->Iterations(passes)->Unit(benchmark::kMicrosecond);
        }
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
