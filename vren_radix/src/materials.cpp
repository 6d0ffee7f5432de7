#include "vren_radix/materials.h"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <new>

#include "device.h"
#include "materials_shared.h"
#include "spirv/materials_count.h"
#include "spirv/materials_fast_count.h"
#include "spirv/materials_fast_scan.h"
#include "spirv/materials_fast_scatter.h"
#include "spirv/materials_offsets.h"
#include "spirv/materials_pad.h"
#include "spirv/materials_scan.h"
#include "spirv/materials_scatter.h"
#include "tuning.h"

namespace vren::radix {

static_assert(kPaddingSlot == VREN_RADIX_MATERIALS_PADDING_SLOT, "the public padding value is the shaders'");
namespace {

using detail::MaterialConstants;
static_assert(sizeof(detail::MaterialDispatch) == sizeof(VkDispatchIndirectCommand));

constexpr VkDeviceSize kAlignment = 16;
constexpr VkBufferUsageFlags kUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
constexpr uint32_t kMaxRangeAlignment = 1024;
constexpr uint32_t kMaxMaterialCount = 65536;
constexpr uint32_t kMaxMinRounds = 64;
// Count and scatter pipelines per histogram size (256, 4096, the device's largest), so that few
// materials do not pay for the largest shared-memory footprint in occupancy.
constexpr uint32_t kSmallHistogram = 256;
constexpr uint32_t kMediumHistogram = 4096;
constexpr uint32_t kMaxHistograms = 3;
// The scatter pass walks the peer-group lists of every earlier subgroup in the workgroup, so the
// default workgroup holds at most this many subgroups: 256 threads at 32 or 64 lanes, 64 at 8.
// lavapipe, 8 lanes, 640x360 random IDs: scatter 15.8 ms at 64 threads vs 48.7 ms at 256.
constexpr uint32_t kDefaultSubgroupsPerWorkgroup = 8;
// The fast path (shaders/materials_fast_*): up to this many materials (6 ID bits, 6 ballots per
// round), and at most one per thread of a workgroup (its scatter loads each material's chunk
// destination with a thread of its own).
constexpr uint32_t kMaxFastMaterials = 64;
// One count and one scatter pipeline per ID width (tuning.h).
constexpr auto& kFastBits = detail::kMaterialFastBits;
constexpr uint32_t kFastVariants = 2;
static_assert(std::size(kFastBits) == kFastVariants && (1u << kFastBits[kFastVariants - 1]) >= kMaxFastMaterials);
// The fast path's scan is a workgroup per material, one pipeline per width: a sort takes the
// narrowest whose threads hold at most kFastScanChunksPerThread chunks of a row each (else the
// widest). Wider workgroups pay for more subgroups in the scan's barriers, narrower ones for a
// longer chain of adds per thread. H200, bench_materials, random IDs, 8 materials, us, widths
// 256 / 512 / 1024: 1920x1080 (1013 chunks) 19.0 / 19.1 / 20.0, 2560x1440 (1800) 26.5 / 25.4 /
// 26.3, 3840x2160 (4050) 53.3 / 52.6 / 51.6 (H200, 2026-11-22).
constexpr uint32_t kFastScanWorkgroupSizes[] = {256, 512, 1024};
constexpr uint32_t kFastScanSizes = std::size(kFastScanWorkgroupSizes);
constexpr uint32_t kFastScanChunksPerThread = 4;
// The scatter's rounds of polls for what the scan beside it publishes, at most: lavapipe counts a
// SIMD vector's polls against its 65,535-iteration loop cap together (see lookbackTuning in
// tuning.cpp).
constexpr uint32_t kMaxPollBudget = 1u << 16;
constexpr uint32_t kMaxPollBudgetLavapipe = 1024;
// lavapipe stops an invocation's loops after 65,535 iterations in all. It runs dispatches one
// after the other, so its scatter finds every word published, unless the budget is 0: then its
// fallback loops, ceil(materials / subgroup size) * ceil(chunks / 4) iterations, must stay below
// this, which leaves room for the shader's other loops: at 8 lanes validateMaterialSortInfo refuses
// over about 15 million pixels of 64 materials, or 120 million of 8.
constexpr uint64_t kMaxFallbackIterationsLavapipe = 60000;

using detail::DeviceFunctions;
using detail::divCeil;
using detail::fail;
using detail::floorPow2;
using detail::isPow2;

using detail::DeviceFacts;

// Shared memory of the fast path's scatter pass, the larger of its passes.
uint32_t fastScatterSharedBytes(uint32_t materials, uint32_t max_subgroups, const MaterialTuning& t) {
  return 4 * materials * max_subgroups + 12 * materials + 4 * t.workgroup_size * t.min_rounds;
}

// Shared memory of the scatter pass, the largest of the passes.
uint32_t scatterSharedBytes(uint32_t histogram, uint32_t workgroup_size, uint32_t max_subgroups) {
  return 4 * histogram + 12 * workgroup_size + 4 * max_subgroups;
}

MaterialTuning clampTuning(MaterialTuning t, const DeviceFacts& d) {
  t.poll_budget = std::min(t.poll_budget, d.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE ? kMaxPollBudgetLavapipe : kMaxPollBudget);
  // A power of two, holding whole subgroups of the largest size the device may pick.
  t.workgroup_size = floorPow2(std::clamp(t.workgroup_size, 32u, std::max(32u, d.max_workgroup_size)));
  t.workgroup_size = std::max(t.workgroup_size, floorPow2(d.max_subgroup_size));
  t.min_rounds = std::clamp(t.min_rounds, 1u, kMaxMinRounds);
  return t;
}

}  // namespace

struct MaterialSorter : detail::ModuleCore {
  // count and scatter per histogram size, ascending.
  uint32_t histogram_sizes[kMaxHistograms] = {};
  uint32_t histogram_count = 0;
  VkPipeline count[kMaxHistograms] = {};
  VkPipeline scatter[kMaxHistograms] = {};
  VkPipeline scan = VK_NULL_HANDLE;
  VkPipeline offsets = VK_NULL_HANDLE;
  VkPipeline pad = VK_NULL_HANDLE;
  // The fast path, for material_count <= properties.fast_material_count (0: none).
  // count and scatter per ID width kFastBits[i], for material counts up to 2^kFastBits[i].
  VkPipeline fast_count[kFastVariants] = {};
  VkPipeline fast_scan[kFastScanSizes] = {};
  uint32_t fast_scan_size[kFastScanSizes] = {};  // their workgroup sizes, increasing
  uint32_t fast_scan_count = 0;                  // distinct sizes (the tuning's may exceed 256)
  VkPipeline fast_scatter[kFastVariants] = {};
  MaterialSorterProperties properties{};
  uint32_t max_groups_y = 0;
  bool poll_atomic = true;  // the fast path's polls: atomic loads, else volatile ones
  bool lavapipe = false;    // its loop cap bounds the fast path's fallback (kMaxFallbackIterationsLavapipe)
};

namespace {

struct PipelineSpec {
  const uint32_t* code;
  size_t code_size;
  uint32_t histogram_size;
  uint32_t workgroup_size = 0;  // 0: the tuning's
  uint32_t bits = 0;            // fast path: bits per material ID
};

VkResult createPipeline(MaterialSorter& s, VkPipelineCache cache, const PipelineSpec& spec, uint32_t max_subgroups,
                        uint32_t required_subgroup_size, VkPipeline* out) {
  const uint32_t workgroup_size = spec.workgroup_size ? spec.workgroup_size : s.properties.tuning.workgroup_size;
  return detail::makePipeline(s, cache, spec.code, spec.code_size,
                              detail::materialSpecializationValues(s.properties.tuning, workgroup_size, max_subgroups,
                                                                   spec.histogram_size, spec.bits, s.poll_atomic),
                              required_subgroup_size, out);
}

}  // namespace

VkResult createMaterialSorter(const MaterialSorterCreateInfo& info, MaterialSorter** out, std::string* why) {
  if (!out) return VK_ERROR_INITIALIZATION_FAILED;
  *out = nullptr;
  DeviceFacts facts;
  DeviceFunctions fn;
  const detail::DeviceRequest request{
      "the material sort",
      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT,
      "subgroup arithmetic or ballot operations (subgroupMin, subgroupBallot)", sizeof(MaterialConstants)};
  if (VkResult r = detail::bindDevice(info.binding, "MaterialSorterCreateInfo", request, &facts, &fn, why);
      r != VK_SUCCESS)
    return r;

  MaterialTuning tuning = detail::kMaterialTuning;
  tuning.workgroup_size = std::min(tuning.workgroup_size, kDefaultSubgroupsPerWorkgroup * facts.min_subgroup_size);
  tuning = clampTuning(info.tuning ? *info.tuning : tuning, facts);
  const uint32_t max_subgroups = std::max(1u, tuning.workgroup_size / facts.min_subgroup_size);
  // The largest histogram that fits beside the scatter pass's per-round lists.
  const uint32_t fixed = scatterSharedBytes(0, tuning.workgroup_size, max_subgroups);
  uint32_t max_materials = facts.max_shared_memory > fixed ? (facts.max_shared_memory - fixed) / 4 : 0;
  max_materials = std::min(max_materials / kSmallHistogram * kSmallHistogram, kMaxMaterialCount);
  if (max_materials < kSmallHistogram)
    return fail(why, "The device has too little compute shared memory for a 256-material histogram.",
                VK_ERROR_FEATURE_NOT_PRESENT);

  MaterialSorter* s = new (std::nothrow) MaterialSorter;
  if (!s) return VK_ERROR_OUT_OF_HOST_MEMORY;
  s->properties.tuning = tuning;
  s->poll_atomic = detail::pollsWithAtomics(facts.driver_id);
  s->lavapipe = facts.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE;
  s->properties.subgroup_size = facts.subgroup_size;
  s->properties.max_material_count = max_materials;
  // u32 pixel and slot indices with room to spare, and one allocation of u32 per pixel; counts
  // below 2^31, clear of the flag of the fast path's published words.
  s->properties.max_pixel_count =
      static_cast<uint32_t>(std::min<uint64_t>((uint64_t{1} << 31) - 1, facts.max_allocation / 4));
  s->properties.max_range_alignment = kMaxRangeAlignment;
  s->properties.max_workgroup_count_x = facts.max_groups[0];
  s->max_groups_y = facts.max_groups[1];
  // Fast path: one material per thread in its scatter's phase 1, and the chunk and per-subgroup
  // counts in shared memory; the chunk stays min_rounds rounds (the chunk formula in materials.h).
  // Its scatter packs a pixel's index in the chunk into 16 bits, and reads each material's
  // running count from the lane that owns it (a shuffle).
  const bool small_chunk = uint64_t{tuning.workgroup_size} * tuning.min_rounds <= (uint64_t{1} << 16);
  const bool shuffle = (facts.subgroup_operations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) != 0;
  uint32_t fast_materials = shuffle && small_chunk ? std::min(kMaxFastMaterials, tuning.workgroup_size) : 0;
  while (fast_materials > 0 && fastScatterSharedBytes(fast_materials, max_subgroups, tuning) > facts.max_shared_memory)
    fast_materials /= 2;
  s->properties.fast_material_count = fast_materials;
  for (uint32_t size : {kSmallHistogram, kMediumHistogram, max_materials})
    if (size <= max_materials && (s->histogram_count == 0 || size > s->histogram_sizes[s->histogram_count - 1]))
      s->histogram_sizes[s->histogram_count++] = size;

  VkResult result = detail::initModule(*s, info.binding, fn, request);

  struct {
    PipelineSpec spec;
    VkPipeline* target;
  } pipelines[3 + kFastScanSizes + 2 * kFastVariants + 2 * kMaxHistograms] = {
      {{vren_radix_materials_scan_spv, sizeof(vren_radix_materials_scan_spv), 1}, &s->scan},
      {{vren_radix_materials_offsets_spv, sizeof(vren_radix_materials_offsets_spv), 1}, &s->offsets},
      {{vren_radix_materials_pad_spv, sizeof(vren_radix_materials_pad_spv), 1}, &s->pad},
  };
  uint32_t pipeline_count = 3;
  if (fast_materials > 0) {
    for (uint32_t i = 0; i < kFastScanSizes; ++i) {
      const uint32_t width = std::max(floorPow2(std::min(kFastScanWorkgroupSizes[i], facts.max_workgroup_size)),
                                      tuning.workgroup_size);
      const uint32_t n = s->fast_scan_count;
      if (n > 0 && s->fast_scan_size[n - 1] == width) continue;
      s->fast_scan_size[n] = width;
      pipelines[pipeline_count++] = {
          {vren_radix_materials_fast_scan_spv, sizeof(vren_radix_materials_fast_scan_spv), fast_materials, width},
          &s->fast_scan[n]};
      ++s->fast_scan_count;
    }
    // A variant per width, up to the first that holds fast_materials.
    for (uint32_t v = 0; v < kFastVariants && (v == 0 || (1u << kFastBits[v - 1]) < fast_materials); ++v) {
      // Histograms and owned-count passes sized for the variant's materials only.
      const uint32_t bits = kFastBits[v];
      const uint32_t h = std::min(1u << bits, fast_materials);
      pipelines[pipeline_count++] = {
          {vren_radix_materials_fast_count_spv, sizeof(vren_radix_materials_fast_count_spv), h, 0, bits},
          &s->fast_count[v]};
      pipelines[pipeline_count++] = {
          {vren_radix_materials_fast_scatter_spv, sizeof(vren_radix_materials_fast_scatter_spv), h, 0, bits},
          &s->fast_scatter[v]};
    }
  }
  for (uint32_t i = 0; i < s->histogram_count; ++i) {
    const uint32_t h = s->histogram_sizes[i];
    pipelines[pipeline_count++] = {{vren_radix_materials_count_spv, sizeof(vren_radix_materials_count_spv), h},
                                   &s->count[i]};
    pipelines[pipeline_count++] = {{vren_radix_materials_scatter_spv, sizeof(vren_radix_materials_scatter_spv), h},
                                   &s->scatter[i]};
  }
  for (uint32_t i = 0; i < pipeline_count && result == VK_SUCCESS; ++i) {
    // The scan's own workgroup size holds more subgroups than the tuning's.
    const uint32_t own_size = pipelines[i].spec.workgroup_size;
    result = createPipeline(*s, info.binding.pipeline_cache, pipelines[i].spec,
                            own_size ? std::max(1u, own_size / facts.min_subgroup_size) : max_subgroups,
                            facts.required_subgroup_size, pipelines[i].target);
  }
  return detail::finishModule(s, result, "the material sort pipelines", out, why);
}

void destroyMaterialSorter(MaterialSorter* s) { detail::deleteModule(s); }

MaterialSorterProperties getMaterialSorterProperties(const MaterialSorter* s) { return s->properties; }

namespace {

uint32_t roundsPerChunk(const MaterialSorter* s, uint32_t material_count) {
  return std::max(s->properties.tuning.min_rounds, divCeil(material_count, s->properties.tuning.workgroup_size));
}

// Words of chunk_counts: the chunks' counts; on the fast path also the words its scan publishes,
// a prefix per chunk and a total per material (shaders/materials_published.glsl).
uint64_t chunkCountsWords(const MaterialSorter* s, uint32_t material_count, uint32_t chunk_count) {
  const uint64_t counts = uint64_t{material_count} * chunk_count;
  return material_count <= s->properties.fast_material_count ? 2 * counts + material_count : counts;
}

uint64_t maxSlotCount(uint32_t pixel_count, uint32_t material_count, uint32_t alignment) {
  return uint64_t{pixel_count} + uint64_t{std::min(pixel_count, material_count)} * (std::max(alignment, 1u) - 1);
}

using detail::overlaps;
using detail::tooSmall;

}  // namespace

MaterialSortRequirements getMaterialSortRequirements(const MaterialSorter* s, uint32_t pixel_count,
                                                     uint32_t material_count, const MaterialSortOptions& options) {
  const uint32_t materials = std::max(1u, material_count);
  MaterialSortRequirements r{};
  r.chunk_size = roundsPerChunk(s, materials) * s->properties.tuning.workgroup_size;
  r.chunk_count = divCeil(pixel_count, r.chunk_size);
  r.chunk_counts_size = std::max<VkDeviceSize>(1, chunkCountsWords(s, materials, r.chunk_count)) * 4;
  r.counts_size = VkDeviceSize{materials} * 4;
  r.offsets_size = VkDeviceSize{materials} * 4;
  r.dispatch_size = VkDeviceSize{materials} * sizeof(VkDispatchIndirectCommand);
  const uint64_t slots = maxSlotCount(pixel_count, materials, options.range_alignment);
  r.max_slot_count = static_cast<uint32_t>(std::min<uint64_t>(slots, UINT32_MAX));
  r.new_to_old_size = std::max<VkDeviceSize>(1, slots) * 4;
  r.alignment = kAlignment;
  r.usage = kUsage;
  r.dispatch_usage = kUsage | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
  return r;
}

const char* validateMaterialSortInfo(const MaterialSorter* s, const MaterialSortInfo& info) {
  const MaterialSorterProperties& p = s->properties;
  const MaterialSortOptions& o = info.options;
  if (info.material_count == 0) return "material_count must be at least 1.";
  if (info.material_count > p.max_material_count)
    return "material_count exceeds the largest material count this device supports (max_material_count).";
  if (info.pixel_count > p.max_pixel_count) return "pixel_count exceeds the largest pixel count this device supports.";
  if (!isPow2(o.range_alignment) || o.range_alignment > kMaxRangeAlignment)
    return "range_alignment must be a power of two from 1 to 1024.";
  if (o.void_material != kNoVoidMaterial && o.void_material >= info.material_count)
    return "void_material must be below material_count, or kNoVoidMaterial.";
  if (o.shading_workgroup_size == 0) return "shading_workgroup_size must be at least 1.";
  const uint64_t shading_groups = divCeil(info.pixel_count, o.shading_workgroup_size);
  if (divCeil(shading_groups, p.max_workgroup_count_x) > s->max_groups_y)
    return "pixel_count / shading_workgroup_size exceeds the device's 2D dispatch grid: use larger shading workgroups.";

  const MaterialSortRequirements req = getMaterialSortRequirements(s, info.pixel_count, info.material_count, o);
  if (chunkCountsWords(s, info.material_count, req.chunk_count) > UINT32_MAX)
    return "The scratch for material_count materials and pixel_count pixels exceeds 2^32 words: sort fewer pixels at a time.";
  if (s->lavapipe && p.tuning.poll_budget == 0 && info.material_count <= p.fast_material_count &&
      uint64_t{divCeil(info.material_count, p.subgroup_size)} * divCeil(req.chunk_count, 4) > kMaxFallbackIterationsLavapipe)
    return "With MaterialTuning::poll_budget 0, lavapipe cannot run the loops this many pixels need: use a poll budget above 0.";
  if (maxSlotCount(info.pixel_count, info.material_count, o.range_alignment) > UINT32_MAX)
    return "pixel_count plus the padding of range_alignment exceeds 2^32 - 1 slots.";
  if (!info.chunk_counts.buffer || !info.counts.buffer || !info.offsets.buffer || !info.dispatch.buffer)
    return "chunk_counts, counts, offsets and dispatch buffers are required.";
  if (info.pixel_count > 0 && (!info.material_ids.buffer || !info.new_to_old.buffer))
    return "material_ids and new_to_old buffers are required when pixel_count is not 0.";
  const BufferRange* ranges[] = {&info.material_ids, &info.chunk_counts, &info.counts,
                                 &info.offsets,      &info.dispatch,     &info.new_to_old};
  const VkDeviceSize bytes[] = {VkDeviceSize{info.pixel_count} * 4, req.chunk_counts_size, req.counts_size,
                                req.offsets_size, req.dispatch_size, req.new_to_old_size};
  for (const BufferRange* r : ranges)
    if (r->offset % kAlignment)
      return "Buffer offsets must be multiples of MaterialSortRequirements::alignment (16 bytes).";
  if (tooSmall(info.material_ids, bytes[0])) return "material_ids is smaller than pixel_count * 4 bytes.";
  if (tooSmall(info.chunk_counts, bytes[1]))
    return "chunk_counts is smaller than getMaterialSortRequirements() asks for these counts.";
  if (tooSmall(info.counts, bytes[2]) || tooSmall(info.offsets, bytes[3]))
    return "counts and offsets need material_count * 4 bytes each.";
  if (tooSmall(info.dispatch, bytes[4]))
    return "dispatch needs material_count * sizeof(VkDispatchIndirectCommand) bytes.";
  if (tooSmall(info.new_to_old, bytes[5]))
    return "new_to_old is smaller than getMaterialSortRequirements() asks for these counts and range_alignment.";
  for (int i = 0; i < 6; ++i)
    for (int j = i + 1; j < 6; ++j)
      if (overlaps(*ranges[i], bytes[i], *ranges[j], bytes[j]))
        return "The material_ids, chunk_counts, counts, offsets, dispatch and new_to_old ranges overlap.";
  return nullptr;
}

namespace {

VkDeviceAddress addressOf(const MaterialSorter* s, const BufferRange& r) {
  return detail::addressOf(s->fn, s->device, r);
}

// Orders one step's shader writes before the next step's shader reads and writes.
void computeToComputeBarrier(const MaterialSorter* s, VkCommandBuffer cmd) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  s->fn.cmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                           &barrier, 0, nullptr, 0, nullptr);
}

void beginLabel(const MaterialSorter* s, VkCommandBuffer cmd, const char* name) {
  if (!s->fn.cmdBeginDebugUtilsLabel) return;
  VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
  label.pLabelName = name;
  s->fn.cmdBeginDebugUtilsLabel(cmd, &label);
}

void endLabel(const MaterialSorter* s, VkCommandBuffer cmd) {
  if (s->fn.cmdEndDebugUtilsLabel) s->fn.cmdEndDebugUtilsLabel(cmd);
}

void timestamp(const MaterialSorter* s, VkCommandBuffer cmd, const MaterialSortInfo& info, uint32_t index) {
  if (info.timestamp_pool)
    s->fn.cmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, info.timestamp_pool, info.first_query + index);
}

// `groups` workgroups, as a 2D grid past maxComputeWorkGroupCount[0]; the shaders linearise.
void dispatchGroups(const MaterialSorter* s, VkCommandBuffer cmd, VkPipeline pipeline, uint32_t groups) {
  if (groups == 0) return;
  s->fn.cmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  const uint32_t x = std::min(groups, s->properties.max_workgroup_count_x);
  s->fn.cmdDispatch(cmd, x, divCeil(groups, x), 1);
}

// A dispatch inside its debug label.
void recordLabelled(const MaterialSorter* s, VkCommandBuffer cmd, const char* name, VkPipeline pipeline,
                    uint32_t groups) {
  beginLabel(s, cmd, name);
  dispatchGroups(s, cmd, pipeline, groups);
  endLabel(s, cmd);
}

// One labelled step: its dispatch, a barrier before the next step unless it is the last, and
// the timestamp that closes it.
void recordStep(const MaterialSorter* s, VkCommandBuffer cmd, const MaterialSortInfo& info, const char* name,
                VkPipeline pipeline, uint32_t groups, uint32_t closing_timestamp, bool last = false) {
  recordLabelled(s, cmd, name, pipeline, groups);
  if (!last) computeToComputeBarrier(s, cmd);
  timestamp(s, cmd, info, closing_timestamp);
}

// Padding slots, with range_alignment > 1: after offsets are known, beside the scatter (disjoint
// slots, no barrier between them).
void recordPadding(const MaterialSorter* s, VkCommandBuffer cmd, const MaterialSortInfo& info) {
  if (info.options.range_alignment > 1 && info.pixel_count > 0)
    dispatchGroups(s, cmd, s->pad,
                   divCeil(uint64_t{info.material_count} * info.options.range_alignment,
                           s->properties.tuning.workgroup_size));
}

// material_count <= fast_material_count: three dispatches, with or without padding, each ranking
// with one ballot per ID bit (shaders/materials_fast.glsl). Offsets need every material's total,
// so the scatter, which reads them all anyway, computes them (workgroup 0 writes them out) and
// writes the padding slots: no step waits on a one-workgroup offsets pass. The scan and the
// scatter run side by side, behind one barrier: the scatter polls for the words the scan
// publishes (shaders/materials_published.glsl), where a barrier between them cost more than
// the scan. Timestamps 1 to 3 coincide.
//   1. count    material-major histograms, cleared words   -> chunk_counts | barrier
//   2. scan     a workgroup per material: row, total       -> chunk_counts (published), counts, dispatch
//   3. scatter  offsets, stable ranks, padding slots       -> offsets, new_to_old
void recordFastPath(const MaterialSorter* s, VkCommandBuffer cmd, const MaterialSortInfo& info,
                    const MaterialSortRequirements& req) {
  uint32_t v = 0;
  while ((1u << kFastBits[v]) < info.material_count) ++v;
  recordStep(s, cmd, info, "vren_radix materials: count", s->fast_count[v], req.chunk_count, 1);
  timestamp(s, cmd, info, 2);
  timestamp(s, cmd, info, 3);
  uint32_t scan = 0;
  while (scan + 1 < s->fast_scan_count && s->fast_scan_size[scan] * kFastScanChunksPerThread < req.chunk_count) ++scan;
  recordLabelled(s, cmd, "vren_radix materials: scan", s->fast_scan[scan], info.material_count);  // no barrier
  recordStep(s, cmd, info, "vren_radix materials: scatter", s->fast_scatter[v], req.chunk_count, 4, true);
}

}  // namespace

void cmdSortMaterials(const MaterialSorter* s, VkCommandBuffer cmd, const MaterialSortInfo& info) {
  assert(validateMaterialSortInfo(s, info) == nullptr);
  const MaterialSortRequirements req =
      getMaterialSortRequirements(s, info.pixel_count, info.material_count, info.options);
  const bool fast = info.material_count <= s->properties.fast_material_count;
  uint32_t h = 0;
  while (s->histogram_sizes[h] < info.material_count) ++h;

  MaterialConstants pc{};
  pc.material_ids = addressOf(s, info.material_ids);
  pc.chunk_counts = addressOf(s, info.chunk_counts);
  pc.counts = addressOf(s, info.counts);
  pc.offsets = addressOf(s, info.offsets);
  pc.dispatch = addressOf(s, info.dispatch);
  pc.new_to_old = addressOf(s, info.new_to_old);
  pc.pixel_count = info.pixel_count;
  pc.material_count = info.material_count;
  pc.chunk_count = req.chunk_count;
  pc.rounds = req.chunk_size / s->properties.tuning.workgroup_size;
  pc.alignment = info.options.range_alignment;
  pc.void_material = info.options.void_material;
  pc.shading_workgroup_size = info.options.shading_workgroup_size;
  pc.max_groups_x = s->properties.max_workgroup_count_x;
  // One push serves every step: all pipelines share the layout.
  s->fn.cmdPushConstants(cmd, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);

  timestamp(s, cmd, info, 0);
  if (fast) {
    recordFastPath(s, cmd, info, req);
    return;
  }
  //   1. count    chunk x material histograms  -> chunk_counts  | barrier
  //   2. scan     per material over chunks     -> chunk_counts, counts | barrier
  //   3-4. offsets and dispatch arguments      -> offsets, dispatch | barrier
  //   5. scatter  stable ranks                 -> new_to_old (padding beside it, disjoint slots)
  recordStep(s, cmd, info, "vren_radix materials: count", s->count[h], req.chunk_count, 1);
  recordStep(s, cmd, info, "vren_radix materials: scan", s->scan, info.material_count, 2);
  recordStep(s, cmd, info, "vren_radix materials: offsets", s->offsets, 1, 3);
  recordPadding(s, cmd, info);  // beside the scatter: disjoint slots
  recordStep(s, cmd, info, "vren_radix materials: scatter", s->scatter[h], req.chunk_count, 4, true);
}

}  // namespace vren::radix
