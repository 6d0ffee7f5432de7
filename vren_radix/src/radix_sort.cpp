#include "vren_radix/vren_radix.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <new>
#include <span>
#include <string>
#include <tuple>

#include "radix_shared.h"
#include "spirv/radix_copy.h"
#include "spirv/radix_copy_u64.h"
#include "spirv/radix_count.h"
#include "spirv/radix_count_u64.h"
#include "spirv/radix_histogram.h"
#include "spirv/radix_histogram_u64.h"
#include "spirv/radix_onesweep.h"
#include "spirv/radix_onesweep_u64.h"
#include "spirv/radix_onesweep_tickets.h"
#include "spirv/radix_onesweep_tickets_u64.h"
#include "spirv/radix_gather.h"
#include "spirv/radix_gather_u64.h"
#include "spirv/radix_scan.h"
#include "spirv/radix_scatter.h"
#include "spirv/radix_scatter_u64.h"
#include "spirv/radix_scatter_wide.h"
#include "spirv/radix_scatter_wide_u64.h"
#include "spirv/radix_segment_classify.h"
#include "spirv/radix_segment_copy.h"
#include "spirv/radix_segment_copy_u64.h"
#include "spirv/radix_segment_ids.h"
#include "spirv/radix_segment_small.h"
#include "spirv/radix_segment_sweep.h"
#include "spirv/radix_segment_sweep_u64.h"
#include "spirv/radix_setup.h"
#include "spirv/radix_sort_block.h"
#include "spirv/radix_sort_block_u64.h"
#include "spirv/radix_topk.h"
#include "sorter.h"
#include "tuning.h"

namespace vren::radix {
namespace {

using detail::PassConstants;

constexpr uint32_t kMaxScanWorkgroupSize = 1024;
// The final copy's grid at most (its workgroups stride over the keys): enough to fill a GPU,
// few enough that returning at once costs nothing.
constexpr uint32_t kCopyWorkgroups = 1024;
// The histogram's grid at most (radix_histogram.comp: 15 keys per thread and batch), and so its
// global atomics: passes x 256 per workgroup at most.
constexpr uint32_t kHistogramWorkgroups = 1024;
constexpr uint32_t kHistogramBatch = 15;
using detail::kCountTiles;
using detail::DeviceFunctions;
using detail::divCeil;
using detail::fail;
using detail::kAlignment;
using detail::kUsage;
using detail::KeyPipelines;
using detail::ScatterPipelines;

using detail::PipelineSpec;

VkResult createPipeline(Sorter& s, const VkPipelineCache cache, const PipelineSpec& spec, uint32_t required_subgroup_size,
                        VkPipeline* out) {
  return detail::makePipeline(s, cache, spec.code, spec.code_size, detail::specializationValues(spec),
                              spec.pinned_subgroup_size ? required_subgroup_size : 0, out);
}

}  // namespace

namespace detail {

KeyPipelines planKeyPipelines(const TuningConfig& requested, const DeviceFacts& limits, uint32_t key_words) {
  KeyPipelines p;
  p.tuning = clampTuning(requested, limits, key_words);
  p.tile_size = p.tuning.workgroup_size * p.tuning.keys_per_thread;
  p.pairs_scatter = pairsScatterShape(p.tuning, limits, key_words);

  KeyPipelines::Lookback& lookback = p.lookback;
  for (uint32_t i = 0; i < kLookbackTiles; ++i)
    lookback.tiles[i].tuning = lookbackTuning(requested, limits, key_words, lookbackTileKind(i), lookbackTileChoice(i));
  lookback.large_min_count = requested.large_tile_min_count;
  lookback.large_slots = requested.large_tile_slots ? requested.large_tile_slots : limits.compute_units;
  lookback.max_count = lookback.tiles[0].tuning.lookback_max_count;
  lookback.loop_max_tiles = loopMaxTiles(limits);
  // Workgroups loop over large tiles only, and only on as many workgroups as run at once.
  for (uint32_t i = 0; i < kLookbackTiles; ++i) {
    TuningConfig& shape = lookback.tiles[i].tuning;
    const bool loops = lookbackTileKind(i) != LookbackTile::kSmall && lookback.large_slots > 0;
    shape.large_tile_loop = loops && requested.large_tile_loop != 0;
    shape.large_tile_pairs_loop = loops && requested.large_tile_pairs_loop != 0;
  }
  // A large tile that does not fit: small ones below large_min_count keys, no look-back above.
  if (lookback.tiles[kLargeKeysTile].tuning.lookback_max_count == 0 ||
      lookback.tiles[kLargePairsTile].tuning.lookback_max_count == 0)
    lookback.max_count = std::min(lookback.max_count, std::max(lookback.large_min_count, 1u) - 1);
  // Within one allocation and the shaders' u32 word indices, as the tile count's internal words.
  const uint64_t internal_words = std::min(limits.max_allocation / 4, uint64_t{1} << 32);
  const uint64_t tiles_by_internal =
      internal_words > VREN_RADIX_LOOKBACK_WORDS ? (internal_words - VREN_RADIX_LOOKBACK_WORDS) / (2 * VREN_RADIX_MAX_BINS) : 0;
  for (uint32_t i = 0; i < kLookbackTiles; ++i) {
    KeyPipelines::Lookback::Tiles& t = lookback.tiles[i];
    // Large tiles only where some count takes them; none without the look-back. A smaller shape
    // only where it fits, is asked for and is smaller than every shape before it: 64-bit keys
    // shrink large shapes to what fits whole, and a smaller one asked for may fit in halves and
    // come out larger (512 x 24 pairs become 512 x 8, 512 x 16 stay).
    if (lookback.max_count == 0 || (i != 0 && lookback.large_min_count > lookback.max_count)) continue;
    const TuningConfig& shape = t.tuning;
    if (lookbackTileChoice(i) > 0) {
      bool kept = shape.lookback_max_count != 0;
      for (uint32_t j = i - lookbackTileChoice(i); j < i && kept; ++j)
        kept = lookback.tiles[j].tile_size == 0 ||
               shape.workgroup_size * shape.keys_per_thread < lookback.tiles[j].tile_size;
      if (!kept) continue;
    }
    t.tile_size = shape.workgroup_size * shape.keys_per_thread;
    t.slots = static_cast<uint32_t>(
        std::min<uint64_t>(uint64_t{lookback.large_slots} * shape.large_tile_per_unit, 0xFFFFFFFFu));
    t.max_tiles = static_cast<uint32_t>(std::min<uint64_t>(lookbackMaxTiles(limits), tiles_by_internal));
    // Without polls every tile counts every earlier one: the work grows with the square of the
    // tiles, so larger sorts take the passes.
    if (shape.lookback_poll_budget == 0) t.max_tiles = std::min(t.max_tiles, kLookbackUnpolledMaxTiles);
    t.cost = largeTileCost(shape, limits, key_words, lookbackTileKind(i));
  }

  p.block.shapes = blockShapes(limits, key_words);
  uint32_t largest = 0;
  for (const TuningConfig& t : p.block.shapes) largest = std::max(largest, t.workgroup_size * t.keys_per_thread);
  p.block.max_count = std::min(requested.block_max_count, largest);
  return p;
}

std::vector<KeyPipelineRow> keyPipelineRows(KeyPipelines& p, const DeviceFacts& limits, uint32_t key_words) {
  const bool wide = key_words == 2;
  std::vector<KeyPipelineRow> rows;
  auto maxSubgroups = [&](const TuningConfig& t) { return std::max(1u, t.workgroup_size / limits.min_subgroup_size); };
  // A pass's pipeline for a tuning, from the 32- or 64-bit key build of its shader.
  auto spec = [&](const uint32_t* code, size_t size, const uint32_t* code_u64, size_t size_u64, const TuningConfig& t) {
    return PipelineSpec{wide ? code_u64 : code, wide ? size_u64 : size, t.workgroup_size, t.keys_per_thread,
                        maxSubgroups(t), 1, t.digit_bits};
  };
#define VREN_RADIX_SPIRV(name)                              \
  vren_radix_##name##_spv, sizeof(vren_radix_##name##_spv), \
      vren_radix_##name##_u64_spv, sizeof(vren_radix_##name##_u64_spv)
  auto setupSpec = [&](const TuningConfig& t) {
    PipelineSpec setup{vren_radix_setup_spv, sizeof(vren_radix_setup_spv), t.workgroup_size, t.keys_per_thread, 1, 1,
                       t.digit_bits};
    setup.pinned_subgroup_size = false;
    return setup;
  };
  // The same tile as `keys`, possibly over the threads of `pairs`; values take a shared slot per key.
  auto pairsSpec = [&](PipelineSpec keys, const TuningConfig& pairs) {
    keys.value_slots = keys.workgroup_size * keys.keys_per_thread;
    keys.workgroup_size = pairs.workgroup_size;
    keys.keys_per_thread = pairs.keys_per_thread;
    keys.max_subgroups = maxSubgroups(pairs);
    return keys;
  };
  // A pass, and for 32-bit keys the same with the signed / float order map (64-bit keys are
  // unsigned: no map).
  auto add = [&](std::string name, const PipelineSpec& pass, VkPipeline* target, VkPipeline* mapped_target = nullptr) {
    rows.push_back({name, pass, target});
    if (mapped_target && !wide) {
      PipelineSpec mapped = pass;
      mapped.key_map = true;
      rows.push_back({name + "_mapped", mapped, mapped_target});
    }
  };
  auto addScatters = [&](const std::string& name, const PipelineSpec& keys, const PipelineSpec& pairs,
                         ScatterPipelines& set) {
    add(name + "_keys", keys, &set.keys, &set.keys_mapped);
    add(name + "_pairs", pairs, &set.pairs, &set.pairs_mapped);
  };

  const TuningConfig& tuning = p.tuning;
  add("setup", setupSpec(tuning), &p.setup);
  add("count", spec(VREN_RADIX_SPIRV(count), tuning), &p.count, &p.count_mapped);
  add("copy", spec(VREN_RADIX_SPIRV(copy), tuning), &p.copy);
  // 256 bins rank with running counts (radix_scatter_wide.comp), 16 with per-round counts.
  const PipelineSpec scatter = binCount(tuning) > 16 ? spec(VREN_RADIX_SPIRV(scatter_wide), tuning)
                                                     : spec(VREN_RADIX_SPIRV(scatter), tuning);
  addScatters(binCount(tuning) > 16 ? "scatter_wide" : "scatter", scatter, pairsSpec(scatter, p.pairs_scatter),
              p.scatter);

  // One pipeline for keys and pairs, every key type: values take a shared slot per key either
  // way, and the order map is a few XORs per key and pass. Shapes past the first that holds
  // max_count keys are not made.
  uint32_t covered = 0;
  for (size_t i = 0; i < p.block.shapes.size() && covered < p.block.max_count; ++i) {
    const TuningConfig& t = p.block.shapes[i];
    if (t.workgroup_size == 0) continue;
    PipelineSpec block = spec(VREN_RADIX_SPIRV(sort_block), t);
    block.value_slots = t.workgroup_size * t.keys_per_thread;
    block.key_map = true;
    add("sort_block_" + std::to_string(t.workgroup_size * t.keys_per_thread), block, &p.block.pipelines[i]);
    covered = t.workgroup_size * t.keys_per_thread;
  }

  KeyPipelines::Lookback& lookback = p.lookback;
  if (lookback.max_count == 0) return rows;
  // Small tiles sort keys alone and with values; a large tile's shape only the one it is for.
  for (uint32_t i = 0; i < kLookbackTiles; ++i) {
    KeyPipelines::Lookback::Tiles& t = lookback.tiles[i];
    if (t.tile_size == 0) continue;  // not used (planKeyPipelines)
    const auto tile = lookbackTileKind(i);
    const std::string shape = std::to_string(t.tuning.workgroup_size) + "x" + std::to_string(t.tuning.keys_per_thread) + "_";
    const std::string tiles = tile == LookbackTile::kSmall       ? ""
                              : tile == LookbackTile::kLargeKeys ? "large_" + shape
                                                                 : "large_pairs_" + shape;
    add(tiles + "lookback_setup", setupSpec(t.tuning), &t.setup);
    if (tile != LookbackTile::kLargePairs)
      add(tiles + "onesweep_keys", onesweepSpec(t.tuning, limits, key_words, false), &t.scatter.keys,
          &t.scatter.keys_mapped);
    if (tile != LookbackTile::kLargeKeys)
      add(tiles + "onesweep_pairs", onesweepSpec(t.tuning, limits, key_words, true), &t.scatter.pairs,
          &t.scatter.pairs_mapped);
  }
  add("histogram", spec(VREN_RADIX_SPIRV(histogram), lookback.tiles[0].tuning), &lookback.histogram,
      &lookback.histogram_mapped);
#undef VREN_RADIX_SPIRV
  return rows;
}

}  // namespace detail

namespace {

// Segmented sorts' and top-k's pipelines (segments.cpp), one row each: its SPIR-V, the shape it
// runs at and its value slots (VREN_RADIX_SPEC_VALUE_SLOTS), and where the sorter keeps it.
struct SegmentPipelineRow {
  const char* name;
  const uint32_t* code;
  size_t code_size;
  enum class Shape {
    kStriding,       // striding_workgroup_size threads, grids striding over the elements
    kShortSegments,  // the same, a subgroup per segment of up to kSmallSegmentKeys keys per lane
    kSweepU32,       // the look-back's small tile of 32-bit keys (none without a look-back)
    kSweepU64,       // the same for 64-bit keys
  } shape;
  uint32_t value_slots;
  VkPipeline* pipeline;
};
using SegmentShape = SegmentPipelineRow::Shape;

std::array<SegmentPipelineRow, 11> segmentPipelineRows(Sorter& s) {
  auto row = [](const char* name, const uint32_t* code, size_t size, SegmentShape shape, uint32_t value_slots,
                VkPipeline* pipeline) { return SegmentPipelineRow{name, code, size, shape, value_slots, pipeline}; };
  return {
      row("segment copy", vren_radix_segment_copy_spv, sizeof(vren_radix_segment_copy_spv), SegmentShape::kStriding, 1,
          &s.segments_u32.copy),
      row("segment copy u64", vren_radix_segment_copy_u64_spv, sizeof(vren_radix_segment_copy_u64_spv),
          SegmentShape::kStriding, 1, &s.segments_u64.copy),
      row("gather", vren_radix_gather_spv, sizeof(vren_radix_gather_spv), SegmentShape::kStriding, 1,
          &s.segments_u32.gather),
      row("gather u64", vren_radix_gather_u64_spv, sizeof(vren_radix_gather_u64_spv), SegmentShape::kStriding, 1,
          &s.segments_u64.gather),
      row("segment ids", vren_radix_segment_ids_spv, sizeof(vren_radix_segment_ids_spv), SegmentShape::kStriding, 1,
          &s.segment_ids),
      row("top-k", vren_radix_topk_spv, sizeof(vren_radix_topk_spv), SegmentShape::kStriding, 1, &s.topk),
      // The per-segment select holds VREN_RADIX_TOPK_SEGMENT_MAX_K candidates in shared memory.
      row("top-k per segment", vren_radix_topk_spv, sizeof(vren_radix_topk_spv), SegmentShape::kStriding,
          VREN_RADIX_TOPK_SEGMENT_MAX_K, &s.topk_segments),
      row("segment classification", vren_radix_segment_classify_spv, sizeof(vren_radix_segment_classify_spv),
          SegmentShape::kStriding, 1, &s.segment_classify),
      row("short segments", vren_radix_segment_small_spv, sizeof(vren_radix_segment_small_spv),
          SegmentShape::kShortSegments, 1, &s.segment_small),
      row("segment sweep", vren_radix_segment_sweep_spv, sizeof(vren_radix_segment_sweep_spv), SegmentShape::kSweepU32,
          1, &s.segments_u32.sweep),
      row("segment sweep u64", vren_radix_segment_sweep_u64_spv, sizeof(vren_radix_segment_sweep_u64_spv),
          SegmentShape::kSweepU64, 1, &s.segments_u64.sweep),
  };
}

// A row's pipeline spec on this device; workgroup_size 0 if the device does not take it. Every
// one has the order map on: they compare signed and float keys by it.
PipelineSpec segmentPipelineSpec(const Sorter& s, const detail::DeviceFacts& limits, const TuningConfig& tuning,
                                 const SegmentPipelineRow& row) {
  const uint32_t size = s.striding_workgroup_size;
  const uint32_t subgroups = std::max(1u, size / limits.min_subgroup_size);
  switch (row.shape) {
    case SegmentShape::kStriding: {
      PipelineSpec spec{row.code, row.code_size, size, 1, subgroups, row.value_slots, tuning.digit_bits, true};
      // radix_topk.comp's settle phase waits for its workgroups as the look-back does.
      spec.poll_atomic = detail::pollsWithAtomics(limits.driver_id);
      spec.poll_budget = s.u32.lookback.tiles[0].tuning.lookback_poll_budget;
      return spec;
    }
    case SegmentShape::kShortSegments:
      return {row.code, row.code_size, size, detail::kSmallSegmentKeys, subgroups, 1, tuning.digit_bits, true};
    case SegmentShape::kSweepU32:
    case SegmentShape::kSweepU64: {
      const KeyPipelines& keys = row.shape == SegmentShape::kSweepU32 ? s.u32 : s.u64;
      const uint32_t key_words = row.shape == SegmentShape::kSweepU32 ? 1 : 2;
      TuningConfig t = keys.lookback.tiles[0].tuning;
      if (keys.lookback.max_count == 0) return {row.code, row.code_size, 0, 0, 0, 0, 0};
      t.lookback_counters_in_stage = 0;  // radix_segment_sweep.comp keeps its counters beside the tile
      // The onesweep pass's tile and ranking, its own SPIR-V, which stages tiles whole: a part's
      // keys of a tile the onesweep stages in parts.
      t.keys_per_thread = divCeil(t.keys_per_thread, onesweepStageParts(t, limits, key_words, false));
      PipelineSpec sweep = detail::onesweepSpec(t, limits, key_words, false);
      sweep.code = row.code;
      sweep.code_size = row.code_size;
      sweep.key_map = true;
      return sweep;
    }
  }
  return {row.code, row.code_size, 0, 0, 0, 0, 0};
}

}  // namespace

VkResult createSorter(const SorterCreateInfo& info, Sorter** out, std::string* why) {
  if (!out) return VK_ERROR_INITIALIZATION_FAILED;
  *out = nullptr;
  detail::DeviceFacts limits;
  DeviceFunctions fn;
  const detail::DeviceRequest request{
      "vren_radix", VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT,
      "subgroup arithmetic or ballot operations", sizeof(PassConstants)};
  VkResult result = detail::bindDevice(info.binding, "SorterCreateInfo", request, &limits, &fn, why);
  if (result != VK_SUCCESS) return result;
  const uint32_t required_subgroup_size = limits.required_subgroup_size;

  const TuningConfig requested = info.tuning ? *info.tuning : detail::defaultTuning(limits.vendor_id);
  const KeyPipelines plan_u32 = detail::planKeyPipelines(requested, limits, 1);
  const KeyPipelines plan_u64 = detail::planKeyPipelines(requested, limits, 2);
  const TuningConfig& tuning = plan_u32.tuning;
  const TuningConfig& tuning_u64 = plan_u64.tuning;
  // One scan pipeline and one internal layout serve both key widths: their digits must agree.
  assert(tuning.digit_bits == tuning_u64.digit_bits);
  for (const auto& [t, words] : {std::pair{tuning, 1u}, std::pair{tuning_u64, 2u}}) {
    const uint32_t max_subgroups = std::max(1u, t.workgroup_size / limits.min_subgroup_size);
    if (detail::scatterSharedBytes(t, max_subgroups, true, words) > limits.max_shared_memory)
      return fail(why, "The device has too little compute shared memory for the smallest radix tile.",
                  VK_ERROR_FEATURE_NOT_PRESENT);
  }

  Sorter* s = new (std::nothrow) Sorter;
  if (!s) return VK_ERROR_OUT_OF_HOST_MEMORY;
  s->max_groups_x = limits.max_groups[0];
  s->u32 = plan_u32;
  s->u64 = plan_u64;
  const uint32_t tile = tuning.workgroup_size * tuning.keys_per_thread;
  const uint32_t tile_u64 = tuning_u64.workgroup_size * tuning_u64.keys_per_thread;
  s->properties.tuning = tuning;
  s->properties.tuning_u64 = tuning_u64;
  for (auto [reported, lookback, key_words] : {std::tuple{&s->properties.tuning, &s->u32.lookback, 1u},
                                               std::tuple{&s->properties.tuning_u64, &s->u64.lookback, 2u}}) {
    const TuningConfig& small = lookback->tiles[0].tuning;
    const TuningConfig& large = lookback->tiles[detail::kLargeKeysTile].tuning;
    const TuningConfig& large_pairs = lookback->tiles[detail::kLargePairsTile].tuning;
    reported->lookback_max_count = std::min(lookback->max_count, detail::kLookbackMaxCount);
    reported->lookback_workgroup_size = small.workgroup_size;
    reported->lookback_keys_per_thread = small.keys_per_thread;
    reported->lookback_poll_budget = small.lookback_poll_budget;
    // 1 where any look-back tile that sorts values (the small ones and the large pairs ones) stages
    // its keys, then its values; and where any keeps its counters inside its stage (lookbackTuning
    // keeps the request only where that changes how the tile stages).
    reported->lookback_values_apart = reported->lookback_counters_in_stage = 0;
    for (uint32_t i = 0; i < detail::kLookbackTiles; ++i) {
      const auto& t = lookback->tiles[i];
      if (t.tile_size == 0) continue;
      if (detail::lookbackTileKind(i) != detail::LookbackTile::kLargeKeys &&
          onesweepValuesApart(t.tuning, limits, key_words, true))
        reported->lookback_values_apart = 1;
      if (t.tuning.lookback_counters_in_stage) reported->lookback_counters_in_stage = 1;
    }
    reported->large_tile_min_count = lookback->large_min_count;
    reported->large_tile_workgroup_size = large.workgroup_size;
    reported->large_tile_keys_per_thread = large.keys_per_thread;
    reported->large_tile_pairs_workgroup_size = large_pairs.workgroup_size;
    reported->large_tile_pairs_keys_per_thread = large_pairs.keys_per_thread;
    // The smallest shapes made (the asked minimum may have shrunk with the tile, or made none).
    reported->large_tile_min_keys_per_thread = reported->large_tile_pairs_min_keys_per_thread = 0;
    for (uint32_t c = 1; c < detail::kLargeTileChoices; ++c) {
      const auto& keys = lookback->tiles[detail::kLargeKeysTile + c];
      const auto& pairs = lookback->tiles[detail::kLargePairsTile + c];
      if (keys.tile_size) reported->large_tile_min_keys_per_thread = keys.tuning.keys_per_thread;
      if (pairs.tile_size) reported->large_tile_pairs_min_keys_per_thread = pairs.tuning.keys_per_thread;
    }
    reported->large_tile_slots = lookback->large_slots;
    reported->large_tile_loop = large.large_tile_loop;
    reported->large_tile_pairs_loop = large_pairs.large_tile_pairs_loop;
    reported->large_tile_per_unit = large.large_tile_per_unit;
    reported->large_tile_pairs_per_unit = large_pairs.large_tile_per_unit;
  }
  s->properties.tuning.block_max_count = s->u32.block.max_count;
  s->properties.tuning_u64.block_max_count = s->u64.block.max_count;
  s->properties.block_size = s->u32.block.max_count;
  s->properties.block_size_u64 = s->u64.block.max_count;
  s->properties.tile_size = tile;
  s->properties.subgroup_size = limits.subgroup_size;
  // Limits: u32 indices in the shaders (64-bit keys index words), the 2D dispatch grid, and the
  // largest allocation.
  const uint64_t by_index = ((uint64_t{1} << 31) - std::max(tile, tile_u64));
  const uint64_t groups = uint64_t{limits.max_groups[0]} * limits.max_groups[1];
  const uint64_t by_grid = std::min(groups, by_index) * std::min(tile, tile_u64);
  const uint64_t by_memory = limits.max_allocation / 8;
  // The internal buffer: the state block and two words per bin and tile (see internalSize),
  // within one allocation and within the shaders' u32 word indices.
  const uint64_t internal_words = std::min(limits.max_allocation / 4, uint64_t{1} << 32);
  const uint64_t per_tile_words = uint64_t{2} * detail::binCount(tuning);
  const uint64_t tiles_by_internal =
      internal_words > VREN_RADIX_STATE_WORDS ? (internal_words - VREN_RADIX_STATE_WORDS) / per_tile_words : 0;
  const uint64_t by_internal = tiles_by_internal * std::min(tile, tile_u64);
  s->properties.max_count = static_cast<uint32_t>(std::min({by_index, by_grid, by_memory, by_internal}));

  result = detail::initModule(*s, info.binding, fn, request);

  const uint32_t scan_size = std::min(kMaxScanWorkgroupSize, detail::floorPow2(limits.max_workgroup_size));
  const PipelineSpec scan{vren_radix_scan_spv, sizeof(vren_radix_scan_spv), scan_size, 1,
                          std::max(1u, scan_size / limits.min_subgroup_size), 1, tuning.digit_bits};
  if (result == VK_SUCCESS)
    result = createPipeline(*s, info.binding.pipeline_cache, scan, required_subgroup_size, &s->scan);
  std::string failed = "sort pipelines";
  try {  // the rows' names are heap strings
    for (auto [p, words] : {std::pair{&s->u32, 1u}, std::pair{&s->u64, 2u}}) {
      for (const detail::KeyPipelineRow& row : detail::keyPipelineRows(*p, limits, words)) {
        if (result != VK_SUCCESS) break;
        result = createPipeline(*s, info.binding.pipeline_cache, row.spec, required_subgroup_size, row.target);
        if (result != VK_SUCCESS) failed = row.name + (words == 2 ? " (64-bit keys)" : "") + " pipeline";
      }
    }
  } catch (const std::bad_alloc&) {
    result = VK_ERROR_OUT_OF_HOST_MEMORY;
  }
  // Segmented sorts' and top-k's pipelines, from their table.
  s->striding_workgroup_size = std::min(256u, detail::floorPow2(limits.max_workgroup_size));
  s->compute_units = limits.compute_units;
  s->select_settle_max_count = tuning.select_settle_max_count;
  s->small_segments_per_group = std::max(1u, s->striding_workgroup_size / limits.min_subgroup_size);
  s->small_segment_max = limits.min_subgroup_size * detail::kSmallSegmentKeys;
  for (const SegmentPipelineRow& row : segmentPipelineRows(*s)) {
    const PipelineSpec spec = segmentPipelineSpec(*s, limits, tuning, row);
    if (result != VK_SUCCESS || spec.workgroup_size == 0) continue;
    result = createPipeline(*s, info.binding.pipeline_cache, spec, required_subgroup_size, row.pipeline);
    if (result != VK_SUCCESS) failed = std::string(row.name) + " pipeline";
  }
  s->properties.lookback_tile_size = s->u32.lookback.max_count ? s->u32.lookback.tiles[0].tile_size : 0;
  s->properties.lookback_tile_size_u64 = s->u64.lookback.max_count ? s->u64.lookback.tiles[0].tile_size : 0;
  s->properties.large_tile_size = s->u32.lookback.tiles[detail::kLargeKeysTile].tile_size;
  s->properties.large_tile_size_u64 = s->u64.lookback.tiles[detail::kLargeKeysTile].tile_size;
  s->properties.large_tile_pairs_size = s->u32.lookback.tiles[detail::kLargePairsTile].tile_size;
  s->properties.large_tile_pairs_size_u64 = s->u64.lookback.tiles[detail::kLargePairsTile].tile_size;

  return detail::finishModule(s, result, "the " + failed, out, why);
}

void destroySorter(Sorter* s) { detail::deleteModule(s); }

SorterProperties getSorterProperties(const Sorter* s) { return s->properties; }

namespace detail {

std::array<uint32_t, kSpecConstantCount> specializationValues(const PipelineSpec& spec) {
  std::array<uint32_t, kSpecConstantCount> v{};
  v[VREN_RADIX_SPEC_WORKGROUP_SIZE] = spec.workgroup_size;
  v[VREN_RADIX_SPEC_KEYS_PER_THREAD] = spec.keys_per_thread;
  v[VREN_RADIX_SPEC_MAX_SUBGROUPS] = spec.max_subgroups;
  v[VREN_RADIX_SPEC_VALUE_SLOTS] = spec.value_slots;
  v[VREN_RADIX_SPEC_COUNT_TILES] = kCountTiles;
  v[VREN_RADIX_SPEC_KEY_MAP] = spec.key_map ? VK_TRUE : VK_FALSE;
  v[VREN_RADIX_SPEC_DIGIT_BITS] = spec.digit_bits;
  v[VREN_RADIX_SPEC_POLL_ATOMIC] = spec.poll_atomic ? VK_TRUE : VK_FALSE;
  v[VREN_RADIX_SPEC_POLL_BUDGET] = spec.poll_budget;
  v[VREN_RADIX_SPEC_RANK_PACKED] = spec.rank_packed ? VK_TRUE : VK_FALSE;
  v[VREN_RADIX_SPEC_STAGE_PARTS] = spec.stage_parts;
  v[VREN_RADIX_SPEC_LOOP_TILES] = spec.loop_tiles ? VK_TRUE : VK_FALSE;
  v[VREN_RADIX_SPEC_VALUES_APART] = spec.values_apart ? VK_TRUE : VK_FALSE;
  v[VREN_RADIX_SPEC_COUNTERS_IN_STAGE] = spec.counters_in_stage ? VK_TRUE : VK_FALSE;
  return v;
}

PipelineSpec onesweepSpec(const TuningConfig& shape, const DeviceFacts& limits, uint32_t key_words, bool with_values) {
  const bool wide = key_words == 2;
  PipelineSpec spec{wide ? vren_radix_onesweep_u64_spv : vren_radix_onesweep_spv,
                    wide ? sizeof(vren_radix_onesweep_u64_spv) : sizeof(vren_radix_onesweep_spv),
                    shape.workgroup_size,
                    shape.keys_per_thread,
                    std::max(1u, shape.workgroup_size / std::max(1u, limits.min_subgroup_size)),
                    with_values ? 2u : 1u,  // values move with the keys, staged beside them
                    shape.digit_bits};
  // Volatile loads on NVIDIA's driver, where they are honoured and faster (see the shader).
  spec.poll_atomic = detail::pollsWithAtomics(limits.driver_id);
  spec.poll_budget = shape.lookback_poll_budget;
  spec.stage_parts = onesweepStageParts(shape, limits, key_words, with_values);
  spec.rank_packed = onesweepRankPacked(shape, limits, key_words, with_values);
  spec.loop_tiles = (with_values ? shape.large_tile_pairs_loop : shape.large_tile_loop) != 0;
  spec.values_apart = onesweepValuesApart(shape, limits, key_words, with_values);
  spec.counters_in_stage = shape.lookback_counters_in_stage != 0;
  // Where several workgroups are meant to share a unit, looping ones take their tiles by ticket
  // (the shader's own SPIR-V).
  if (spec.loop_tiles && shape.large_tile_per_unit > 1) {
    spec.code = wide ? vren_radix_onesweep_tickets_u64_spv : vren_radix_onesweep_tickets_spv;
    spec.code_size = wide ? sizeof(vren_radix_onesweep_tickets_u64_spv) : sizeof(vren_radix_onesweep_tickets_spv);
  }
  return spec;
}

uint32_t keyBits(KeyType t) { return t == KeyType::kU64 ? 64 : 32; }
uint32_t keyBytes(KeyType t) { return t == KeyType::kU64 ? 8 : 4; }

const KeyPipelines& pipelinesFor(const Sorter* s, KeyType t) { return t == KeyType::kU64 ? s->u64 : s->u32; }

const KeyPipelines::Lookback::Tiles& KeyPipelines::Lookback::tilesFor(uint32_t count, bool with_values,
                                                                      uint32_t expected) const {
  if (count < large_min_count) return tiles[0];
  const uint32_t first = with_values ? kLargePairsTile : kLargeKeysTile;
  if (expected == 0) return tiles[first];
  std::array<uint32_t, kLargeTileChoices> sizes{}, most{};
  std::array<LargeTileCost, kLargeTileChoices> costs{};
  for (uint32_t c = 0; c < kLargeTileChoices; ++c)
    sizes[c] = tiles[first + c].tile_size, most[c] = tiles[first + c].max_tiles, costs[c] = tiles[first + c].cost;
  return tiles[first + chooseLargeTile(expected, count, sizes.data(), most.data(), kLargeTileChoices,
                                       tiles[first].slots, costs.data())];
}

// Whether a sort of `count` keys runs in one workgroup (TuningConfig::block_max_count).
bool usesBlock(const KeyPipelines& p, uint32_t count) { return count <= p.block.max_count; }

// Whether a sort of `count` keys over `bits` bits, alone or with values, takes the look-back
// (TuningConfig::lookback_max_count). A range of one 4-bit digit on large tiles does not: with
// 16 of 256 bins in use, the subgroups' counters contend, and one 4-bit pass is faster (H200,
// keys below 16, bits [0, 4), 2^26: 0.37 ms against 0.75 ms).
bool usesLookback(const KeyPipelines& p, uint32_t count, uint32_t bits, bool with_values) {
  // The largest shape decides: it has the fewest tiles, and the choice takes only shapes that fit.
  const KeyPipelines::Lookback::Tiles& t = p.lookback.tilesFor(count, with_values, 0);
  if (bits <= VREN_RADIX_DEFAULT_DIGIT_BITS && count >= p.lookback.large_min_count) return false;
  return count <= std::min(p.lookback.max_count, detail::kLookbackMaxCount) && t.tile_size > 0 &&
         divCeil(count, t.tile_size) <= t.max_tiles;
}

VkDeviceSize internalSize(const Sorter* s, uint32_t count, KeyType key_type) {
  // The smaller tile of the two key widths gives the most tiles.
  const uint32_t tile = std::min(s->u32.tile_size, s->u64.tile_size);
  const uint32_t tiles = std::max(1u, divCeil(count, tile));
  // Per-tile digit counts, then their sums per count workgroup (rows of tiles / kCountTiles
  // words; reserved as rows of `tiles` words so that the size stays affine in the tile count).
  const VkDeviceSize count_words = VkDeviceSize{2} * detail::binCount(s->u32.tuning) * tiles;
  VkDeviceSize words = VREN_RADIX_STATE_WORDS + count_words;
  // Or the look-back's: every pass's totals and two sets of published words per tile of this key
  // width, for the most keys it sorts up to `count`, so that the size never shrinks as the count
  // grows.
  {
    const KeyPipelines::Lookback& lookback = pipelinesFor(s, key_type).lookback;
    const uint32_t max_count = std::min(lookback.max_count, detail::kLookbackMaxCount);
    // Small tiles below large_min_count keys, large ones (keys alone or with values) from it.
    const std::pair<uint32_t, uint32_t> small{
        1, std::min(lookback.large_min_count == 0 ? 0 : lookback.large_min_count - 1, max_count)};
    const std::pair<uint32_t, uint32_t> large{lookback.large_min_count, max_count};
    for (const KeyPipelines::Lookback::Tiles& t : lookback.tiles) {
      if (t.tile_size == 0) continue;  // not made (planKeyPipelines)
      const std::pair<uint32_t, uint32_t>& range = &t == &lookback.tiles[0] ? small : large;
      const uint32_t last = std::min({std::max(count, 1u), range.second,
                                      static_cast<uint32_t>(std::min<uint64_t>(uint64_t{t.max_tiles} * t.tile_size, ~0u))});
      if (range.first > last) continue;
      const uint32_t lookback_tiles = std::max(1u, divCeil(last, t.tile_size));
      words = std::max(words, VREN_RADIX_LOOKBACK_WORDS + VkDeviceSize{2} * VREN_RADIX_MAX_BINS * lookback_tiles);
    }
  }
  return words * 4;
}

uint32_t passCount(uint32_t begin_bit, uint32_t end_bit, uint32_t digit_bits) {
  return end_bit > begin_bit ? divCeil(end_bit - begin_bit, digit_bits) : 0;
}

VkDeviceAddress addressOf(const Sorter* s, const BufferRange& r) { return addressOf(s->fn, s->device, r); }

}  // namespace detail

using detail::addressOf;
using detail::internalSize;
using detail::keyBits;
using detail::keyBytes;
using detail::overlaps;
using detail::passCount;
using detail::pipelinesFor;
using detail::tooSmall;
using detail::usesBlock;
using detail::usesLookback;

MemoryRequirements getMemoryRequirements(const Sorter* s, uint32_t max_count, bool with_values, KeyType key_type) {
  MemoryRequirements r{};
  r.keys_temp_size = VkDeviceSize{std::max(1u, max_count)} * keyBytes(key_type);
  r.values_temp_size = with_values ? VkDeviceSize{std::max(1u, max_count)} * 4 : 0;
  r.internal_size = internalSize(s, max_count, key_type);
  r.alignment = kAlignment;
  r.usage = kUsage;
  r.internal_usage = kUsage | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
  return r;
}

uint32_t getPassCount(const Sorter* s, const SortInfo& info) {
  if (info.count == 0) return 0;
  const KeyPipelines& p = pipelinesFor(s, info.key_type);
  const bool eight_bits = usesBlock(p, info.count) || usesLookback(p, info.count, info.end_bit - info.begin_bit,
                                                                   info.values.buffer != VK_NULL_HANDLE);
  return passCount(info.begin_bit, info.end_bit, eight_bits ? VREN_RADIX_MAX_DIGIT_BITS : p.tuning.digit_bits);
}

const char* validateSortInfo(const Sorter* s, const SortInfo& info) {
  if (static_cast<uint32_t>(info.key_type) > static_cast<uint32_t>(KeyType::kU64)) return "Unknown key type.";
  if (info.begin_bit > info.end_bit || info.end_bit > keyBits(info.key_type))
    return "The bit range must satisfy begin_bit <= end_bit <= 32 (64 for kU64 keys).";
  const bool with_values = info.values.buffer != VK_NULL_HANDLE;
  if (info.argsort && (!with_values || info.begin_bit == info.end_bit))
    return "argsort needs values and values_temp buffers and a non-empty bit range.";
  if (info.expected_count > info.count)
    return "expected_count exceeds count: it is about how many keys the GPU-side count will hold, at most count.";
  if (info.count == 0 || info.begin_bit == info.end_bit) return nullptr;
  if (info.count > s->properties.max_count) return "The count exceeds the largest count this device can sort.";
  const VkDeviceSize key_bytes = VkDeviceSize{info.count} * keyBytes(info.key_type);
  const VkDeviceSize value_bytes = VkDeviceSize{info.count} * 4;
  if (!info.keys.buffer || !info.keys_temp.buffer || !info.internal.buffer)
    return "keys, keys_temp and internal buffers are required.";
  if (with_values && !info.values_temp.buffer) return "values_temp is required when values are given.";
  for (const BufferRange* r : {&info.keys, &info.keys_temp, &info.values, &info.values_temp, &info.internal})
    if (r->offset % kAlignment) return "Buffer offsets must be multiples of MemoryRequirements::alignment (16 bytes).";
  if (tooSmall(info.keys, key_bytes) || tooSmall(info.keys_temp, key_bytes))
    return "A keys buffer is smaller than count keys.";
  if (with_values && (tooSmall(info.values, value_bytes) || tooSmall(info.values_temp, value_bytes)))
    return "A values buffer is smaller than count * 4 bytes.";
  const VkDeviceSize internal_bytes = internalSize(s, info.count, info.key_type);
  if (tooSmall(info.internal, internal_bytes))
    return "The internal buffer is smaller than getMemoryRequirements() asks for this count.";
  for (const BufferRange* r : {&info.keys, &info.keys_temp, &info.values, &info.values_temp, &info.internal})
    if (r->buffer && addressOf(s, *r) % kAlignment)
      return "A buffer's device address is not 16-byte aligned; bind its memory at a 16-byte aligned offset.";
  const std::pair<const BufferRange*, VkDeviceSize> data[] = {
      {&info.keys, key_bytes}, {&info.keys_temp, key_bytes}, {&info.values, value_bytes},
      {&info.values_temp, value_bytes}, {&info.internal, internal_bytes}};
  for (size_t i = 0; i < std::size(data); ++i)
    for (size_t j = i + 1; j < std::size(data); ++j)
      if (data[i].first->buffer && overlaps(*data[i].first, data[i].second, *data[j].first, data[j].second))
        return "The keys, values, temp and internal buffers must not overlap.";
  return nullptr;
}

namespace detail {

void computeToComputeBarrier(const Sorter* s, VkCommandBuffer cmd, bool grids) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  VkPipelineStageFlags dst_stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  if (grids) {
    barrier.dstAccessMask |= VK_ACCESS_INDIRECT_COMMAND_READ_BIT;
    dst_stages |= VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT;
  }
  s->fn.cmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, dst_stages, 0, 1, &barrier, 0, nullptr, 0,
                           nullptr);
}

void beginLabel(const Sorter* s, VkCommandBuffer cmd, const char* name) {
  if (!s->fn.cmdBeginDebugUtilsLabel) return;
  VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
  label.pLabelName = name;
  s->fn.cmdBeginDebugUtilsLabel(cmd, &label);
}

void endLabel(const Sorter* s, VkCommandBuffer cmd) {
  if (s->fn.cmdEndDebugUtilsLabel) s->fn.cmdEndDebugUtilsLabel(cmd);
}

Grid gridFor(uint32_t groups, uint32_t max_x) {
  const uint32_t x = std::min(groups, max_x);
  return {x, x == 0 ? 0 : divCeil(groups, x)};
}

PassConstants sortConstants(const Sorter* s, const SortInfo& info, const BufferRange* count_buffer) {
  const bool with_values = info.values.buffer != VK_NULL_HANDLE;
  PassConstants pc{};
  pc.keys[0] = addressOf(s, info.keys);
  pc.keys[1] = addressOf(s, info.keys_temp);
  pc.values[0] = addressOf(s, info.values);
  pc.values[1] = addressOf(s, info.values_temp);
  pc.internal = addressOf(s, info.internal);
  pc.count_address = count_buffer ? addressOf(s, *count_buffer) : 0;
  pc.count = info.count;
  pc.max_groups_x = s->max_groups_x;
  pc.flags = (with_values ? VREN_RADIX_FLAG_VALUES : 0) | (count_buffer ? VREN_RADIX_FLAG_INDIRECT : 0);
  const bool signed_order = info.key_type == KeyType::kI32 || info.key_type == KeyType::kF32;
  pc.key_flip = signed_order ? 0x80000000u : 0;
  pc.negative_flip = info.key_type == KeyType::kF32 ? 0x7FFFFFFFu : 0;
  return pc;
}

void recordDispatch(const Sorter* s, VkCommandBuffer cmd, VkPipeline pipeline, const PassConstants& pc, uint32_t x,
                    uint32_t y) {
  s->fn.cmdPushConstants(cmd, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
  s->fn.cmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  s->fn.cmdDispatch(cmd, x, y, 1);
}

void recordDispatchIndirect(const Sorter* s, VkCommandBuffer cmd, VkPipeline pipeline, const PassConstants& pc,
                            VkBuffer buffer, VkDeviceSize offset) {
  s->fn.cmdPushConstants(cmd, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
  s->fn.cmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  s->fn.cmdDispatchIndirect(cmd, buffer, offset);
}

}  // namespace detail

namespace {

using detail::computeToComputeBarrier;
using detail::beginLabel;
using detail::endLabel;
using detail::Grid;
using detail::gridFor;

// A sort as the commands it records, in order: dispatches, the barriers between them, and the
// places of the optional per-dispatch timestamps. cmdSort records one plan with its
// timestamps; cmdSortBatch records several, stage by stage (the dispatches between two
// barriers), with one barrier per stage for all of them.
struct Op {
  enum Kind : uint8_t { kDispatch, kBarrier, kMark } kind = kDispatch;
  bool grids = false;  // kBarrier: indirect dispatches read a grid written before it
  VkPipeline pipeline = VK_NULL_HANDLE;
  PassConstants pc{};
  uint32_t x = 0, y = 0;                 // a direct grid, or
  VkDeviceSize indirect_offset = ~VkDeviceSize{0};  // an indirect one in the internal buffer
};
// Setup, histogram and copy, and per pass (at most VREN_RADIX_MAX_PASSES) count, scan and
// scatter with their barriers and marks.
constexpr uint32_t kMaxOps = 8 + 9 * VREN_RADIX_MAX_PASSES;
struct Plan {
  std::array<Op, kMaxOps> ops;
  uint32_t size = 0;
  VkBuffer internal = VK_NULL_HANDLE;
  SortResult result{};
  void dispatch(VkPipeline pipeline, const PassConstants& pc, uint32_t x, uint32_t y) {
    Op& op = ops[size++];
    op.kind = Op::kDispatch;
    op.indirect_offset = ~VkDeviceSize{0};
    op.pipeline = pipeline;
    op.pc = pc;
    op.x = x;
    op.y = y;
  }
  void dispatchIndirect(VkPipeline pipeline, const PassConstants& pc, VkDeviceSize offset) {
    dispatch(pipeline, pc, 0, 0);
    ops[size - 1].indirect_offset = offset;
  }
  void barrier(bool grids = false) {
    ops[size].kind = Op::kBarrier;
    ops[size++].grids = grids;
  }
  void mark() { ops[size++].kind = Op::kMark; }
};

// Whether a look-back sort with a GPU-side count may dispatch the tiles of info.count: they
// exceed the tiles of the count it expects by at most the large tiles that run at once.
bool fewExcessTiles(const KeyPipelines::Lookback::Tiles& t, const SortInfo& info) {
  if (info.expected_count == 0 || t.slots == 0) return false;
  return divCeil(info.count, t.tile_size) - divCeil(info.expected_count, t.tile_size) <= t.slots;
}

void planSort(const Sorter* s, const SortInfo& info, const BufferRange* count_buffer, Plan& plan) {
  assert(validateSortInfo(s, info) == nullptr);
  const bool with_values = info.values.buffer != VK_NULL_HANDLE;
  const KeyPipelines& p = pipelinesFor(s, info.key_type);
  // info.count bounds a GPU-side count too.
  const bool lookback = usesLookback(p, info.count, info.end_bit - info.begin_bit, with_values);
  const KeyPipelines::Lookback::Tiles& lookback_tiles =
      p.lookback.tilesFor(info.count, with_values, count_buffer ? info.expected_count : info.count);
  const uint32_t digit_bits = lookback ? VREN_RADIX_MAX_DIGIT_BITS : p.tuning.digit_bits;
  const uint32_t tile_size = lookback ? lookback_tiles.tile_size : p.tile_size;
  const uint32_t passes = getPassCount(s, info);
  plan.size = 0;
  plan.internal = info.internal.buffer;
  plan.result = {passes, passes % 2 == 1, passes % 2 ? info.keys_temp : info.keys,
                 with_values ? (passes % 2 ? info.values_temp : info.values) : BufferRange{}};
  if (passes == 0) return;
  const VkDeviceSize grid = info.internal.offset + 4 * VREN_RADIX_STATE_TILE_GRID;
  const VkDeviceSize count_grid = info.internal.offset + 4 * VREN_RADIX_STATE_COUNT_GRID;

  // 1. setup    count (maybe from the GPU), tiles, dispatch grid, pass 0 input  | barrier
  //    then per pass p, from one ping-pong buffer into the other:
  // 2. count    keys per digit per tile, and per group of kCountTiles tiles -> internal | barrier
  // 3. scan     digit-major group sums, exclusive; skip?  -> internal group sums, state   | barrier
  // 4. scatter  rank within tile, write globally        -> the other buffer       | barrier
  // 5. copy     only if skipped passes left the result in the other buffer
  // Look-back sorts: after the setup, a histogram of every pass's digits (| barrier); then each
  // pass is one onesweep dispatch, which counts its tile and takes the earlier tiles' counts as
  // they publish them.
  PassConstants pc = detail::sortConstants(s, info, count_buffer);
  pc.result_parity = passes % 2;
  const uint32_t flags = pc.flags;
  const bool signed_order = info.key_type == KeyType::kI32 || info.key_type == KeyType::kF32;

  if (usesBlock(p, info.count)) {  // one workgroup: every pass in one dispatch, no barrier
    pc.flags = flags | (info.descending ? VREN_RADIX_FLAG_DESCENDING : 0) |
               (info.argsort ? VREN_RADIX_FLAG_INDEX_VALUES : 0);
    pc.pass = passes;
    pc.shift = info.begin_bit;
    pc.end_bit = info.end_bit;
    plan.dispatch(p.block.pipelineFor(info.count), pc, 1, 1);
    for (uint32_t i = 0; i < 3 * passes; ++i) plan.mark();  // the layout of SortInfo's timestamps
    return;
  }

  // The setup and the histogram take the pass count and the bit range.
  pc.flags = flags | (lookback ? VREN_RADIX_FLAG_LOOKBACK : 0) | (info.descending ? VREN_RADIX_FLAG_DESCENDING : 0);
  pc.pass = passes;
  pc.shift = info.begin_bit;
  pc.end_bit = info.end_bit;
  plan.dispatch(lookback ? lookback_tiles.setup : p.setup, pc, 1, 1);
  // With the count on the host the passes' grids are known here, and the passes dispatch them
  // directly; with a GPU-side count the setup writes them, for indirect dispatches after this
  // barrier. Look-back passes dispatch the tiles of `count` directly even then, when they exceed
  // those of the expected count by at most the tiles that run at once: the tiles past the
  // GPU-side count return at once, where an indirect dispatch costs each pass up to about 0.7 us
  // more on NVIDIA (H200, the same tiles: splat sorts of 1.05 M and 4.20 M visible keys and
  // values 2.8 and 2.3 us faster; 2^24 keys within 1 us).
  // Large tiles on looping workgroups (TuningConfig::large_tile_loop) need no grid of the tiles.
  const bool looping =
      lookback && (with_values ? lookback_tiles.tuning.large_tile_pairs_loop : lookback_tiles.tuning.large_tile_loop) != 0;
  const bool direct_grids = count_buffer == nullptr || (lookback && fewExcessTiles(lookback_tiles, info)) || looping;
  plan.barrier(!direct_grids);
  if (lookback) {  // a direct grid: its workgroups stride over a GPU-side count's keys
    plan.dispatch(signed_order ? p.lookback.histogram_mapped : p.lookback.histogram, pc,
                  std::min(divCeil(info.count, p.lookback.tiles[0].tuning.workgroup_size * kHistogramBatch),
                           kHistogramWorkgroups),
                  1);
    plan.barrier();
  }
  // At most this many tiles.
  const uint32_t tiles = divCeil(info.count, tile_size);
  const Grid tile_grid = gridFor(tiles, s->max_groups_x);
  const Grid count_groups = gridFor(divCeil(tiles, detail::kCountTiles), s->max_groups_x);
  auto dispatch = [&](VkPipeline pipeline, const Grid& known, VkDeviceSize written) {
    if (direct_grids)
      plan.dispatch(pipeline, pc, known.x, known.y);
    else
      plan.dispatchIndirect(pipeline, pc, written);
  };

  for (uint32_t pass = 0; pass < passes; ++pass) {
    pc.pass = pass;
    pc.shift = info.begin_bit + pass * digit_bits;
    pc.digit_mask = (1u << std::min<uint32_t>(digit_bits, info.end_bit - pc.shift)) - 1;
    pc.bin_flip = info.descending ? pc.digit_mask : 0;
    // Argsort: the first pass makes the indices, so it must not be skipped.
    pc.flags = flags | (info.argsort && pass == 0 ? VREN_RADIX_FLAG_INDEX_VALUES | VREN_RADIX_FLAG_NEVER_SKIP : 0);
    // Look-back sorts have no count and scan dispatches: empty intervals (the first pass's count
    // interval holds the histogram) keep the timestamp layout fixed.
    if (!lookback) dispatch(signed_order ? p.count_mapped : p.count, count_groups, count_grid);
    plan.mark();
    if (!lookback) {
      plan.barrier();
      plan.dispatch(s->scan, pc, detail::binCount(p.tuning), 1);
      plan.barrier();
    }
    plan.mark();
    const ScatterPipelines& set = lookback ? lookback_tiles.scatter : p.scatter;
    const VkPipeline scatter =
        with_values ? (signed_order ? set.pairs_mapped : set.pairs) : (signed_order ? set.keys_mapped : set.keys);
    if (looping) {  // a direct grid whatever the count: the workgroups loop over the tiles there are
      const uint32_t groups = std::max(lookback_tiles.slots, divCeil(tiles, p.lookback.loop_max_tiles));
      const Grid loop_grid = gridFor(std::min(tiles, groups), s->max_groups_x);
      plan.dispatch(scatter, pc, loop_grid.x, loop_grid.y);
    } else {
      dispatch(scatter, tile_grid, grid);
    }
    plan.mark();
    plan.barrier();
  }

  pc.pass = passes;
  pc.flags = flags;
  // Usually every workgroup returns at once: only skipped passes leave the result in the other
  // buffer. A direct grid: a barrier before an indirect one costs about 2 us more on NVIDIA.
  plan.dispatch(p.copy, pc, std::min(tiles, kCopyWorkgroups), 1);
}

void recordDispatch(const Sorter* s, VkCommandBuffer cmd, const Plan& plan, const Op& op) {
  s->fn.cmdPushConstants(cmd, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(op.pc), &op.pc);
  s->fn.cmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, op.pipeline);
  if (op.indirect_offset != ~VkDeviceSize{0})
    s->fn.cmdDispatchIndirect(cmd, plan.internal, op.indirect_offset);
  else
    s->fn.cmdDispatch(cmd, op.x, op.y, 1);
}

}  // namespace

SortResult detail::recordSort(const Sorter* s, VkCommandBuffer cmd, const SortInfo& info, const BufferRange* count_buffer) {
  Plan plan;
  planSort(s, info, count_buffer, plan);
  const bool every_dispatch = info.timestamp_pool && info.timestamp_every_dispatch;
  uint32_t query = info.first_query;
  auto timestamp = [&] {
    s->fn.cmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, info.timestamp_pool, query++);
  };
  // Written once all earlier commands are done, so the interval holds the sort alone.
  if (info.timestamp_pool) timestamp();
  if (plan.size > 0) beginLabel(s, cmd, "vren_radix sort");
  for (uint32_t i = 0; i < plan.size; ++i) {
    const Op& op = plan.ops[i];
    if (op.kind == Op::kDispatch)
      recordDispatch(s, cmd, plan, op);
    else if (op.kind == Op::kBarrier)
      computeToComputeBarrier(s, cmd, op.grids);
    else if (every_dispatch)
      timestamp();
  }
  if (plan.size > 0) endLabel(s, cmd);
  if (info.timestamp_pool) timestamp();
  return plan.result;
}

using detail::recordSort;

const char* validateSortBatch(const Sorter* s, std::span<const BatchSort> sorts, uint32_t* bad_sort) {
  for (uint32_t i = 0; i < sorts.size(); ++i) {
    if (bad_sort) *bad_sort = i;
    const SortInfo& info = sorts[i].info;
    if (const char* why = validateSortInfo(s, info)) return why;
    if (info.timestamp_pool)
      return "Sorts of a batch take no timestamps: write them around cmdSortBatch.";
    const BufferRange& count = sorts[i].count_buffer;
    if (count.buffer && count.offset % 4) return "A batch sort's count_buffer offset must be a multiple of 4.";
  }
  // Each sort writes its ping-pong buffers and internal words and reads its count: no buffer of
  // one sort may overlap a buffer another sort writes.
  auto ranges = [&](const BatchSort& b, std::array<std::pair<BufferRange, VkDeviceSize>, 6>& out) {
    const SortInfo& info = b.info;
    const VkDeviceSize key_bytes = VkDeviceSize{info.count} * keyBytes(info.key_type);
    const VkDeviceSize value_bytes = info.values.buffer ? VkDeviceSize{info.count} * 4 : 0;
    const bool empty = info.count == 0 || info.begin_bit == info.end_bit;
    out = {{{info.keys, empty ? 0 : key_bytes},
            {info.keys_temp, empty ? 0 : key_bytes},
            {info.values, empty ? 0 : value_bytes},
            {info.values_temp, empty ? 0 : value_bytes},
            {info.internal, empty ? 0 : internalSize(s, info.count, info.key_type)},
            {b.count_buffer, empty || !b.count_buffer.buffer ? 0 : 4}}};
  };
  for (uint32_t i = 0; i < sorts.size(); ++i) {
    std::array<std::pair<BufferRange, VkDeviceSize>, 6> a, b;
    ranges(sorts[i], a);
    for (uint32_t j = i + 1; j < sorts.size(); ++j) {
      ranges(sorts[j], b);
      for (size_t x = 0; x < a.size(); ++x)
        for (size_t y = 0; y < b.size(); ++y) {
          // Two count buffers may be one: both only read it.
          if (x == 5 && y == 5) continue;
          if (a[x].first.buffer && overlaps(a[x].first, a[x].second, b[y].first, b[y].second)) {
            if (bad_sort) *bad_sort = j;
            return "The buffers of two sorts in a batch overlap; each sort needs its own keys, values, temp and "
                   "internal buffers.";
          }
        }
    }
  }
  return nullptr;
}

void cmdSortBatch(const Sorter* s, VkCommandBuffer cmd, std::span<const BatchSort> sorts, SortResult* results) {
  assert(validateSortBatch(s, sorts) == nullptr);
  // Stage by stage: every sort's dispatches between its stage-th and next barrier, then one
  // barrier for all. The plans are made again for each stage rather than kept: the record path
  // allocates nothing, and a plan costs a few hundred stores.
  bool labelled = false;
  for (uint32_t stage = 0;; ++stage) {
    bool recorded = false, more = false, grids = false;
    for (size_t i = 0; i < sorts.size(); ++i) {
      Plan plan;
      planSort(s, sorts[i].info, sorts[i].count_buffer.buffer ? &sorts[i].count_buffer : nullptr, plan);
      if (stage == 0 && results) results[i] = plan.result;
      uint32_t at = 0;
      for (uint32_t barriers = 0; at < plan.size && barriers < stage; ++at)
        if (plan.ops[at].kind == Op::kBarrier) ++barriers;
      for (; at < plan.size && plan.ops[at].kind != Op::kBarrier; ++at) {
        if (plan.ops[at].kind != Op::kDispatch) continue;
        if (!labelled) beginLabel(s, cmd, "vren_radix sort batch");
        labelled = true;
        recordDispatch(s, cmd, plan, plan.ops[at]);
        recorded = true;
      }
      if (at < plan.size) {  // a barrier ends this sort's stage
        grids = grids || plan.ops[at].grids;
        more = true;
      }
    }
    if (!more) break;
    if (recorded) computeToComputeBarrier(s, cmd, grids);
  }
  if (labelled) endLabel(s, cmd);
}

SortResult cmdSort(const Sorter* s, VkCommandBuffer cmd, const SortInfo& info) {
  return recordSort(s, cmd, info, nullptr);
}

SortResult cmdSortIndirect(const Sorter* s, VkCommandBuffer cmd, const SortInfo& info,
                           const BufferRange& count_buffer) {
  assert(count_buffer.buffer && count_buffer.offset % 4 == 0);
  return recordSort(s, cmd, info, &count_buffer);
}

}  // namespace vren::radix
