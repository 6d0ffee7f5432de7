// The sorter's insides, shared by the files that record with it: radix_sort.cpp (the sort and
// its batches) and segments.cpp (segmented sorts and top-k on the same passes).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

#include "device.h"
#include "radix_shared.h"
#include "tuning.h"
#include "vren_radix/vren_radix.h"

namespace vren::radix {
namespace detail {

constexpr VkDeviceSize kAlignment = 16;
constexpr VkBufferUsageFlags kUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;

// What a radix pass's pipeline is made from: its SPIR-V and the values of its specialization
// constants (radix_shared.h's VREN_RADIX_SPEC_*). The sorter and the pipeline statistics tool
// (bench/pipeline_stats.cpp) both make pipelines from these.
struct PipelineSpec {
  const uint32_t* code;
  size_t code_size;
  uint32_t workgroup_size;
  uint32_t keys_per_thread;
  uint32_t max_subgroups;
  uint32_t value_slots;
  uint32_t digit_bits;
  bool key_map = false;
  bool poll_atomic = true;
  uint32_t poll_budget = 0;
  bool rank_packed = false;  // radix_tile_rank.glsl: two bins' counters per word
  uint32_t stage_parts = 1;  // radix_onesweep.comp: the tile staged whole (1) or in parts
  bool loop_tiles = false;   // radix_onesweep.comp: workgroups loop over the tiles
  bool values_apart = false;  // radix_onesweep.comp: the tile's keys staged whole, then its values
  bool counters_in_stage = false;  // radix_onesweep.comp: the rank counters inside the stage
  // False for a pass that uses no subgroup operations and may not be whole subgroups (the setup,
  // 64 threads): it runs at any subgroup size instead of the pinned one.
  bool pinned_subgroup_size = true;
};
constexpr uint32_t kSpecConstantCount = VREN_RADIX_SPEC_COUNTERS_IN_STAGE + 1;
// Specialization constant i's value at index i (7 is unused: 0).
std::array<uint32_t, kSpecConstantCount> specializationValues(const PipelineSpec& spec);
// The look-back pass (radix_onesweep.comp) of `shape` (lookbackTuning's) on this device, for
// keys of key_words words, alone or with values.
PipelineSpec onesweepSpec(const TuningConfig& shape, const DeviceFacts& limits, uint32_t key_words, bool with_values);

// The scatters of one key width: keys alone or with values, and for 32-bit keys the same with
// the signed / float order map (the first two go without).
struct ScatterPipelines {
  VkPipeline keys = VK_NULL_HANDLE;
  VkPipeline pairs = VK_NULL_HANDLE;
  VkPipeline keys_mapped = VK_NULL_HANDLE;
  VkPipeline pairs_mapped = VK_NULL_HANDLE;
};

// The pipelines for one key width; they share a tile size.
struct KeyPipelines {
  TuningConfig tuning{};
  TuningConfig pairs_scatter{};  // the key/value scatter's shape: the same tile
  uint32_t tile_size = 0;
  VkPipeline setup = VK_NULL_HANDLE;
  VkPipeline count = VK_NULL_HANDLE;
  VkPipeline count_mapped = VK_NULL_HANDLE;
  ScatterPipelines scatter;
  VkPipeline copy = VK_NULL_HANDLE;
  // Look-back sorts (TuningConfig::lookback_max_count): the histogram of every pass, then one
  // onesweep dispatch per pass, on small tiles or from large_min_count keys on large ones (up to
  // detail::kLargeTileChoices shapes for keys alone, as many with values, the largest first).
  struct Lookback {
    struct Tiles {
      TuningConfig tuning{};  // lookback_max_count 0: not on this device
      uint32_t tile_size = 0;
      uint32_t max_tiles = 0;  // detail::lookbackMaxTiles(), within the internal buffer's words
      // Tiles of this shape at once: large_slots times its workgroups per unit
      // (TuningConfig::large_tile_per_unit); 0: unknown.
      uint32_t slots = 0;
      detail::LargeTileCost cost{};       // large tiles: what detail::chooseLargeTile weighs
      VkPipeline setup = VK_NULL_HANDLE;  // the tile count and grid for this tile
      ScatterPipelines scatter;  // large tiles: the keys' or the pairs' only
    };
    std::array<Tiles, detail::kLookbackTiles> tiles;  // at detail::lookbackTileIndex(); tile_size 0: none
    uint32_t max_count = 0;        // 0: no look-back on this device
    uint32_t large_min_count = 0;  // from here the large tiles
    uint32_t large_slots = 0;      // large tiles at once (TuningConfig::large_tile_slots), 0: unknown
    uint32_t loop_max_tiles = 0;   // detail::loopMaxTiles(): tiles per looping workgroup at most
    VkPipeline histogram = VK_NULL_HANDLE;
    VkPipeline histogram_mapped = VK_NULL_HANDLE;
    // The tiles a sort of `count` keys (a GPU-side count: at most that many) takes: from
    // large_min_count the large shape that fills the device's waves best for `expected` keys
    // (detail::chooseLargeTile) among those whose tiles for `count` keys the look-back takes;
    // `expected` 0: the largest shape.
    const Tiles& tilesFor(uint32_t count, bool with_values, uint32_t expected) const;
  } lookback;
  // Sorts of one workgroup (TuningConfig::block_max_count): the whole sort in one dispatch, on
  // the smallest workgroup shape that holds the keys.
  struct Block {
    std::array<TuningConfig, detail::kBlockShapes> shapes;  // detail::blockShapes()
    std::array<VkPipeline, detail::kBlockShapes> pipelines{};  // null for shapes not needed
    uint32_t max_count = 0;  // the tuning's block_max_count, at most the largest shape's keys
    // The pipeline for `count` keys (count <= max_count).
    VkPipeline pipelineFor(uint32_t count) const {
      for (size_t i = 0; i < shapes.size(); ++i)
        if (pipelines[i] && count <= shapes[i].workgroup_size * shapes[i].keys_per_thread) return pipelines[i];
      return VK_NULL_HANDLE;
    }
  } block;
};

// A key width's pipelines before they are made: its tuning, tiles and shapes for `requested` on
// this device, with keys of key_words 32-bit words.
KeyPipelines planKeyPipelines(const TuningConfig& requested, const DeviceFacts& limits, uint32_t key_words);

// One pipeline of a key width's set: a name for messages and tools ("count_mapped",
// "large_512x24_onesweep_pairs"), how it is specialized, and where KeyPipelines keeps it.
struct KeyPipelineRow {
  std::string name;
  PipelineSpec spec;
  VkPipeline* target;
};
// Every pipeline `p` (planKeyPipelines') needs, one row each: the sorter makes them from this
// table, and the statistics tool reports them.
std::vector<KeyPipelineRow> keyPipelineRows(KeyPipelines& p, const DeviceFacts& limits, uint32_t key_words);

// Segmented sorts and top-k (segments.cpp): the one-dispatch sort per segment runs on the block
// pipelines; the multi-pass path adds these, around two sorts.
struct SegmentPipelines {
  VkPipeline copy = VK_NULL_HANDLE;    // radix_segment_copy.comp: the keys into the internal buffer
  VkPipeline gather = VK_NULL_HANDLE;  // radix_gather.comp: the sorted elements from the input
  // radix_segment_sweep.comp: every pass of each segment in one workgroup, on the look-back's
  // small tile (null where the device has no look-back).
  VkPipeline sweep = VK_NULL_HANDLE;
};

}  // namespace detail

struct Sorter : detail::ModuleCore {
  VkPipeline scan = VK_NULL_HANDLE;
  detail::KeyPipelines u32;
  detail::KeyPipelines u64;
  detail::SegmentPipelines segments_u32;
  detail::SegmentPipelines segments_u64;
  VkPipeline segment_ids = VK_NULL_HANDLE;  // radix_segment_ids.comp
  VkPipeline topk = VK_NULL_HANDLE;         // radix_topk.comp: top-k of a whole buffer of 32-bit keys
  VkPipeline topk_segments = VK_NULL_HANDLE;  // the same, its segments phase (candidates in shared memory)
  VkPipeline segment_small = VK_NULL_HANDLE;  // radix_segment_small.comp: short segments, a subgroup each
  VkPipeline segment_classify = VK_NULL_HANDLE;  // radix_segment_classify.comp: the longest segment
  uint32_t small_segment_max = 0;             // the longest segment it takes (0: none)
  uint32_t small_segments_per_group = 0;      // segments per workgroup
  uint32_t striding_workgroup_size = 0;     // of the segment pipelines, whose grids stride
  SorterProperties properties{};
  uint32_t max_groups_x = 0;
  uint32_t compute_units = 0;  // DeviceFacts::compute_units (0: unknown)
  uint32_t select_settle_max_count = 0;  // TuningConfig::select_settle_max_count
};

namespace detail {

uint32_t keyBits(KeyType t);
uint32_t keyBytes(KeyType t);
const KeyPipelines& pipelinesFor(const Sorter* s, KeyType t);
// Passes of `digit_bits` over bits [begin_bit, end_bit).
uint32_t passCount(uint32_t begin_bit, uint32_t end_bit, uint32_t digit_bits);
// Internal bytes of a sort of `count` keys of key_type (getMemoryRequirements).
VkDeviceSize internalSize(const Sorter* s, uint32_t count, KeyType key_type);
VkDeviceAddress addressOf(const Sorter* s, const BufferRange& r);

// Orders one dispatch's shader writes before the next dispatch's shader reads and writes, and,
// with `grids`, before the indirect dispatches read a grid written since the last such barrier.
void computeToComputeBarrier(const Sorter* s, VkCommandBuffer cmd, bool grids = false);
void beginLabel(const Sorter* s, VkCommandBuffer cmd, const char* name);
void endLabel(const Sorter* s, VkCommandBuffer cmd);

// A 2D grid of at least `groups` workgroups, at most max_x wide: radix_setup.comp's write_grid().
struct Grid {
  uint32_t x, y;
};
Grid gridFor(uint32_t groups, uint32_t max_x);

// The push constants every pass of a sort of `info` shares: buffers, count, order map, flags
// for values and a GPU-side count.
PassConstants sortConstants(const Sorter* s, const SortInfo& info, const BufferRange* count_buffer);
// Records one dispatch with its push constants.
void recordDispatch(const Sorter* s, VkCommandBuffer cmd, VkPipeline pipeline, const PassConstants& pc, uint32_t x,
                    uint32_t y);

// The same on a grid read from `buffer` at `offset` (a VkDispatchIndirectCommand).
void recordDispatchIndirect(const Sorter* s, VkCommandBuffer cmd, VkPipeline pipeline, const PassConstants& pc,
                            VkBuffer buffer, VkDeviceSize offset);

// cmdSort, or with count_buffer cmdSortIndirect.
SortResult recordSort(const Sorter* s, VkCommandBuffer cmd, const SortInfo& info, const BufferRange* count_buffer);

}  // namespace detail
}  // namespace vren::radix
