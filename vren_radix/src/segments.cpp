// Segmented sorts and top-k on the sorter's passes.
//
// Five ways. With a promised max_segment_length (or, without offsets, the whole count) the host
// records the one that holds it; without one, radix_segment_classify.comp finds on the GPU which
// ways some segment takes and writes each way's grid (empty if none), all of them recorded.
// - One thread per segment up to 16 32-bit keys, one subgroup per segment up to 8 keys per lane
//   (radix_segment_small.comp): each key's place by comparison, one dispatch.
// - One workgroup per segment (radix_sort_block.comp, VREN_RADIX_FLAG_SEGMENTED) up to a block:
//   one dispatch, each segment read and written once.
// - One workgroup per segment running every pass over it (radix_segment_sweep.comp) while the
//   longest segment is short enough and the segments many enough (tuning.h): one dispatch.
// - Otherwise two stable sorts, least significant first: copy the keys (radix_segment_copy.comp),
//   sort them by key carrying their input indices, turn each index into its segment
//   (radix_segment_ids.comp), sort by segment carrying the indices, and read the elements from
//   the untouched input in that order (radix_gather.comp). Any segment lengths, a fixed number of
//   dispatches. Both sorts are cmdSortIndirect on the element count the copy stores.
// Top-k is either way with its output mapped: segment s's first k results go to s * k.
#include <algorithm>
#include <bit>
#include <cassert>

#include "sorter.h"
#include "vren_radix/vren_radix.h"

namespace vren::radix {
namespace {

using detail::addressOf;
using detail::divCeil;
using detail::kAlignment;
using detail::keyBytes;
using detail::overlaps;
using detail::PassConstants;
using detail::tooSmall;

// The grids of the striding passes at most: enough to fill a GPU.
constexpr uint32_t kStridingWorkgroups = 2048;

// The internal buffer of the multi-pass path, in order: the segment scratch block, the key copy
// and its ping-pong partner (then the segments' keys), the indices and their partner, and the
// sorts' own internal words.
struct Layout {
  VkDeviceSize keys[2], indices[2], sort, end;
};
Layout layoutFor(const Sorter* s, uint32_t count, KeyType key_type) {
  Layout l{};
  const uint32_t n = std::max(1u, count);
  const uint32_t key_words = static_cast<uint32_t>(keyBytes(key_type) / 4);
  const VkDeviceSize key_bytes = VkDeviceSize{VREN_RADIX_SWEEP_SPAN(n * key_words)} * 4;
  l.keys[0] = VREN_RADIX_SEGMENTS_WORDS * 4;
  l.keys[1] = l.keys[0] + key_bytes;
  l.indices[0] = VkDeviceSize{VREN_RADIX_SWEEP_VALUES(n, key_words)} * 4;
  l.indices[1] = l.indices[0] + VkDeviceSize{VREN_RADIX_SWEEP_SPAN(n)} * 4;
  l.sort = l.indices[1] + VkDeviceSize{VREN_RADIX_SWEEP_SPAN(n)} * 4;
  l.end = l.sort + std::max(detail::internalSize(s, count, key_type), detail::internalSize(s, count, KeyType::kU32));
  return l;
}

BufferRange sub(const BufferRange& r, VkDeviceSize offset, VkDeviceSize size) {
  return {r.buffer, r.offset + offset, size};
}

// Workgroups of a pass striding over `items` words.
uint32_t stridingGrid(const Sorter* s, uint64_t items) {
  return std::min(kStridingWorkgroups, std::max(1u, divCeil(items, s->striding_workgroup_size)));
}

// What either way writes: where, the order, and k (0: whole segments at their offsets).
struct Output {
  BufferRange keys, values;
  bool descending;
  uint32_t k;
};

bool wholeBuffer(const SegmentedSortInfo& info) {
  return info.offsets.buffer == VK_NULL_HANDLE;
}

// `pc` with what a one-dispatch way writes: the output, the order, argsort's indices, the bit
// range and k.
PassConstants withOutput(const Sorter* s, PassConstants pc, const SortInfo& in, const Output& out) {
  pc.keys[1] = addressOf(s, out.keys);
  pc.values[1] = addressOf(s, out.values);
  pc.flags |= (out.descending ? VREN_RADIX_FLAG_DESCENDING : 0) | (in.argsort ? VREN_RADIX_FLAG_INDEX_VALUES : 0);
  pc.shift = in.begin_bit;
  pc.end_bit = in.end_bit;
  pc.k = out.k;
  return pc;
}

// The block pipeline that sorts every segment in one workgroup, or null.
VkPipeline blockPipeline(const Sorter* s, const SegmentedSortInfo& info) {
  const detail::KeyPipelines& p = detail::pipelinesFor(s, info.sort.key_type);
  const uint32_t longest = wholeBuffer(info) ? info.sort.count : info.max_segment_length;
  if (longest == 0 || longest > p.block.max_count) return VK_NULL_HANDLE;
  return p.block.pipelineFor(longest);
}

// Push constants with the segments: offsets (none without), their number, and a GPU-side number.
PassConstants segmentConstants(const Sorter* s, const SegmentedSortInfo& info) {
  const BufferRange* segment_count = info.segment_count_buffer.buffer ? &info.segment_count_buffer : nullptr;
  PassConstants pc = detail::sortConstants(s, info.sort, segment_count);
  pc.segments = addressOf(s, info.offsets);
  pc.segment_count = wholeBuffer(info) ? 0 : info.segment_count;
  return pc;
}

// A one-dispatch way's dispatch over `groups` workgroups, or with `grid_word` (not 0) on the
// grid the classification wrote at that word of the segment scratch block.
void dispatchWay(const Sorter* s, VkCommandBuffer cmd, const SegmentedSortInfo& info, VkPipeline pipeline,
                 const PassConstants& pc, uint32_t groups, uint32_t grid_word) {
  if (grid_word) {
    detail::recordDispatchIndirect(s, cmd, pipeline, pc, info.sort.internal.buffer,
                                   info.sort.internal.offset + 4 * grid_word);
    return;
  }
  const detail::Grid grid = detail::gridFor(groups, s->max_groups_x);
  detail::recordDispatch(s, cmd, pipeline, pc, grid.x, grid.y);
}

// The one-dispatch ways, each for the segments of lengths [min_length, max_length] (max_length
// 0: all): a thread each up to 16 32-bit keys, a subgroup each up to small_segment_max, a
// workgroup each (`block`) up to its tile, and a workgroup each for every pass (the sweep).
void recordThreads(const Sorter* s, VkCommandBuffer cmd, const SegmentedSortInfo& info, const Output& out,
                   uint32_t segments, bool by_thread, uint32_t min_length, uint32_t max_length, uint32_t grid_word) {
  PassConstants pc = withOutput(s, segmentConstants(s, info), info.sort, out);
  if (by_thread) pc.flags |= VREN_RADIX_FLAG_THREAD_SEGMENTS;
  pc.min_length = min_length;
  pc.max_length = max_length;
  const uint32_t per_group = by_thread ? s->striding_workgroup_size : s->small_segments_per_group;
  dispatchWay(s, cmd, info, s->segment_small, pc, divCeil(segments, per_group), grid_word);
}
uint32_t recordBlocks(const Sorter* s, VkCommandBuffer cmd, const SegmentedSortInfo& info, const Output& out,
                      uint32_t segments, VkPipeline block, uint32_t min_length, uint32_t max_length,
                      uint32_t grid_word) {
  PassConstants pc = withOutput(s, segmentConstants(s, info), info.sort, out);
  pc.flags |= VREN_RADIX_FLAG_SEGMENTED;
  pc.pass = detail::passCount(info.sort.begin_bit, info.sort.end_bit, VREN_RADIX_MAX_DIGIT_BITS);
  pc.min_length = min_length;
  pc.max_length = max_length;
  dispatchWay(s, cmd, info, block, pc, segments, grid_word);
  return pc.pass;
}

// The per-segment multi-pass sort (radix_segment_sweep.comp), or null.
VkPipeline sweepPipeline(const Sorter* s, KeyType key_type) {
  return (key_type == KeyType::kU64 ? s->segments_u64 : s->segments_u32).sweep;
}
// Whether a promised longest segment takes the sweep (tuning.h; radix_segment_classify.comp
// decides the same on the GPU without a promise).
bool sweeps(const Sorter* s, const SegmentedSortInfo& info, uint32_t longest) {
  return sweepPipeline(s, info.sort.key_type) && longest <= detail::kSweepMaxLength &&
         longest <= info.sort.count / detail::kSweepWorkgroups * 2;
}
uint32_t recordSweep(const Sorter* s, VkCommandBuffer cmd, const SegmentedSortInfo& info, const Output& out,
                     uint32_t segments, uint32_t min_length, uint32_t grid_word) {
  PassConstants pc = withOutput(s, segmentConstants(s, info), info.sort, out);  // internal: the scratch halves
  pc.pass = detail::passCount(info.sort.begin_bit, info.sort.end_bit, VREN_RADIX_MAX_DIGIT_BITS);
  pc.min_length = min_length;
  dispatchWay(s, cmd, info, sweepPipeline(s, info.sort.key_type), pc, segments, grid_word);
  return pc.pass;
}

uint32_t recordSegments(const Sorter* s, VkCommandBuffer cmd, const SegmentedSortInfo& info, const Output& out) {
  const SortInfo& in = info.sort;
  const uint32_t segments = wholeBuffer(info) ? 1 : info.segment_count;
  const bool wide = in.key_type == KeyType::kU64;
  detail::beginLabel(s, cmd, out.k ? "vren_radix top-k" : "vren_radix segmented sort");

  // A promised length (or a whole buffer's count): the one way that holds it, one dispatch.
  const uint32_t longest = wholeBuffer(info) ? in.count : info.max_segment_length;
  if (!wide && longest > 0 && longest <= s->small_segment_max) {
    recordThreads(s, cmd, info, out, segments, longest <= VREN_RADIX_THREAD_SEGMENT_MAX, 0, 0, 0);
    detail::endLabel(s, cmd);
    return 1;
  }
  if (VkPipeline block = blockPipeline(s, info)) {
    const uint32_t passes = recordBlocks(s, cmd, info, out, segments, block, 0, 0, 0);
    detail::endLabel(s, cmd);
    return passes;
  }
  if (longest > 0 && sweeps(s, info, longest)) {
    const uint32_t passes = recordSweep(s, cmd, info, out, segments, 0, 0);
    detail::endLabel(s, cmd);
    return passes;
  }

  // No promise: each one-dispatch way takes the segments of its lengths, and the multi-pass path
  // behind them runs only if the GPU finds a longer segment (radix_segment_classify.comp): when it
  // finds none, its dispatches are recorded but do nothing.
  const detail::KeyPipelines& p = detail::pipelinesFor(s, in.key_type);
  const uint32_t block_max = p.block.max_count;
  const uint32_t small_max = wide ? 0 : s->small_segment_max;
  const uint32_t one_dispatch_max = std::max(small_max, block_max);
  const bool classify = longest == 0 && one_dispatch_max > 0;
  if (classify) {
    // Per segment its way, then the grids: each way's covers the segments if any takes it, else
    // is empty.
    PassConstants pc = segmentConstants(s, info);
    pc.digit_mask = small_max;
    pc.bin_flip = block_max;
    pc.max_length = one_dispatch_max;
    pc.min_length = stridingGrid(s, uint64_t{in.count} * keyBytes(in.key_type) / 4);
    pc.k = sweepPipeline(s, in.key_type) ? detail::kSweepMaxLength : 0;
    pc.pass = detail::kSweepWorkgroups;
    pc.result_parity = s->small_segments_per_group;
    detail::recordDispatch(
        s, cmd, s->segment_classify, pc,
        std::min<uint32_t>(VREN_RADIX_SEGMENTS_MAX_PARTS, divCeil(segments, s->striding_workgroup_size)), 1);
    detail::computeToComputeBarrier(s, cmd);
    pc.flags |= VREN_RADIX_FLAG_REDUCE;
    detail::recordDispatch(s, cmd, s->segment_classify, pc, 1, 1);
    detail::computeToComputeBarrier(s, cmd, true);
    if (!wide) {
      recordThreads(s, cmd, info, out, segments, true, 0, VREN_RADIX_THREAD_SEGMENT_MAX,
                    VREN_RADIX_SEGMENTS_THREAD_GRID);
      recordThreads(s, cmd, info, out, segments, false, VREN_RADIX_THREAD_SEGMENT_MAX + 1, small_max,
                    VREN_RADIX_SEGMENTS_SMALL_GRID);
    }
    if (block_max > small_max)
      recordBlocks(s, cmd, info, out, segments, p.block.pipelineFor(block_max), small_max + 1, block_max,
                   VREN_RADIX_SEGMENTS_BLOCK_GRID);
    if (sweepPipeline(s, in.key_type))
      recordSweep(s, cmd, info, out, segments, one_dispatch_max + 1, VREN_RADIX_SEGMENTS_SWEEP_GRID);
  }

  // The multi-pass path.
  const Layout l = layoutFor(s, in.count, in.key_type);
  const VkDeviceSize key_bytes = VkDeviceSize{in.count} * keyBytes(in.key_type);
  const VkDeviceSize index_bytes = VkDeviceSize{in.count} * 4;
  const BufferRange count_word = sub(in.internal, 4 * VREN_RADIX_SEGMENTS_COUNT, 4);
  const BufferRange keys[2] = {sub(in.internal, l.keys[0], key_bytes), sub(in.internal, l.keys[1], key_bytes)};
  const BufferRange indices[2] = {sub(in.internal, l.indices[0], index_bytes),
                                  sub(in.internal, l.indices[1], index_bytes)};
  const BufferRange sort_internal = sub(in.internal, l.sort, l.end - l.sort);
  const detail::SegmentPipelines& pipelines = in.key_type == KeyType::kU64 ? s->segments_u64 : s->segments_u32;
  const uint32_t words = static_cast<uint32_t>(keyBytes(in.key_type) / 4);

  // 1. copy       the keys -> internal, the element count -> the scratch block | barrier
  PassConstants pc = segmentConstants(s, info);  // internal: the scratch block, for the count
  pc.keys[1] = addressOf(s, keys[0]);
  // Striding passes: on the grid the classification wrote, or a direct one.
  auto striding = [&](VkPipeline pipeline, const PassConstants& constants, uint64_t items) {
    if (classify)
      detail::recordDispatchIndirect(s, cmd, pipeline, constants, in.internal.buffer,
                                     in.internal.offset + 4 * VREN_RADIX_SEGMENTS_GRID);
    else
      detail::recordDispatch(s, cmd, pipeline, constants, stridingGrid(s, items), 1);
  };
  striding(pipelines.copy, pc, uint64_t{in.count} * words);
  detail::computeToComputeBarrier(s, cmd);

  // 2. by key     a stable argsort of the copy on the stored count      | barrier
  SortInfo by_key{};
  by_key.count = in.count;
  by_key.key_type = in.key_type;
  by_key.keys = keys[0];
  by_key.keys_temp = keys[1];
  by_key.values = indices[0];
  by_key.values_temp = indices[1];
  by_key.internal = sort_internal;
  by_key.begin_bit = in.begin_bit;
  by_key.end_bit = in.end_bit;
  by_key.descending = out.descending;
  by_key.argsort = true;
  const SortResult first = detail::recordSort(s, cmd, by_key, &count_word);
  detail::computeToComputeBarrier(s, cmd);
  BufferRange order = first.values;
  uint32_t passes = first.passes;

  if (segments > 1) {
    // 3. segments   each index's segment, as the key of the second sort    | barrier
    const BufferRange segment_keys = sub(in.internal, l.keys[0], index_bytes);
    pc = segmentConstants(s, info);
    pc.values[0] = addressOf(s, order);
    pc.keys[1] = addressOf(s, segment_keys);
    striding(s->segment_ids, pc, in.count);
    detail::computeToComputeBarrier(s, cmd);
    // 4. by segment a stable sort of the segments, carrying the indices     | barrier
    SortInfo by_segment{};
    by_segment.count = in.count;
    by_segment.keys = segment_keys;
    by_segment.keys_temp = sub(in.internal, l.keys[1], index_bytes);
    by_segment.values = order;
    by_segment.values_temp = order.offset == indices[0].offset ? indices[1] : indices[0];
    by_segment.internal = sort_internal;
    by_segment.end_bit = static_cast<uint32_t>(std::bit_width(segments - 1));
    const SortResult second = detail::recordSort(s, cmd, by_segment, &count_word);
    detail::computeToComputeBarrier(s, cmd);
    order = second.values;
    passes += second.passes;
  }

  // 5. gather     the elements in that order from the input -> the output
  pc = segmentConstants(s, info);
  pc.keys[1] = addressOf(s, out.keys);
  pc.values[1] = addressOf(s, out.values);
  pc.internal = addressOf(s, order);
  pc.flags |= (in.argsort ? VREN_RADIX_FLAG_INDEX_VALUES : 0);
  pc.k = out.k;
  striding(pipelines.gather, pc, in.count);
  detail::endLabel(s, cmd);
  return passes;
}

// Top-k of a whole buffer by radix select (radix_topk.comp) when k is below the count and within
// its candidate buffer, for 32-bit keys too many for one workgroup: 5 dispatches (6 with three
// digit levels and no settle phase), of which the GPU skips one (two), and their reads of the
// keys, when the first levels leave few enough candidates to gather.
bool selectsTopK(const Sorter* s, const TopKInfo& info) {
  const SortInfo& in = info.input.sort;
  return wholeBuffer(info.input) && in.key_type != KeyType::kU64 && info.k < in.count &&
         info.k <= VREN_RADIX_TOPK_MAX_K && !blockPipeline(s, info.input);
}

// Top-k of each segment by radix select in one workgroup per segment (radix_topk.comp's segments
// phase), for 32-bit keys and k within its shared candidates, unless the caller promised segments
// short enough to sort whole in one subgroup or workgroup, or the segments average more than
// kSegmentSelectMaxAverage elements: a segment's workgroup reads its keys 4 times alone, so a few
// huge segments would leave the GPU idle, where the sorts spread them over every workgroup.
bool selectsSegmentTopK(const Sorter* s, const TopKInfo& info) {
  const SegmentedSortInfo& input = info.input;
  const bool promised_short =
      input.max_segment_length > 0 && (input.max_segment_length <= s->small_segment_max || blockPipeline(s, input));
  const bool few_huge = uint64_t{input.sort.count} > uint64_t{input.segment_count} * detail::kSegmentSelectMaxAverage;
  return !wholeBuffer(input) && input.sort.key_type != KeyType::kU64 && info.k <= VREN_RADIX_TOPK_SEGMENT_MAX_K &&
         !promised_short && !few_huge;
}

void recordSegmentSelect(const Sorter* s, VkCommandBuffer cmd, const TopKInfo& info, const Output& out) {
  detail::beginLabel(s, cmd, "vren_radix top-k");
  PassConstants pc = withOutput(s, segmentConstants(s, info.input), info.input.sort, out);
  pc.pass = VREN_RADIX_TOPK_PHASE_SEGMENTS;
  const detail::Grid grid = detail::gridFor(info.input.segment_count, s->max_groups_x);
  detail::recordDispatch(s, cmd, s->topk_segments, pc, grid.x, grid.y);
  detail::endLabel(s, cmd);
}

void recordSelect(const Sorter* s, VkCommandBuffer cmd, const TopKInfo& info, const Output& out) {
  const SortInfo& in = info.input.sort;
  detail::beginLabel(s, cmd, "vren_radix top-k");
  PassConstants pc = withOutput(s, detail::sortConstants(s, in, nullptr), in, out);
  // The level and collect phases: at most VREN_RADIX_TOPK_MAX_GROUPS workgroups, level 0 fewer
  // unless it is the last.
  auto groupsFor = [&](uint32_t keys_per_thread) {
    return std::min<uint32_t>(VREN_RADIX_TOPK_MAX_GROUPS,
                              divCeil(in.count, keys_per_thread * s->striding_workgroup_size));
  };
  const uint32_t groups = groupsFor(detail::kSelectKeysPerThread);
  const uint32_t levels = divCeil(in.end_bit - in.begin_bit, VREN_RADIX_TOPK_DIGIT_BITS);
  const uint32_t level0_groups = levels > 1 ? groupsFor(detail::kSelectLevel0KeysPerThread) : groups;
  auto phase = [&](uint32_t p, uint32_t grid) {
    pc.pass = p;
    detail::recordDispatch(s, cmd, s->topk, pc, grid, 1);
  };
  auto indirect = [&](uint32_t p, uint32_t grid_word) {
    pc.pass = p;
    detail::recordDispatchIndirect(s, cmd, s->topk, pc, in.internal.buffer, in.internal.offset + 4 * grid_word);
  };
  phase(VREN_RADIX_TOPK_PHASE_ZERO, 1);
  detail::computeToComputeBarrier(s, cmd);
  phase(VREN_RADIX_TOPK_PHASE_LEVEL, level0_groups);
  detail::computeToComputeBarrier(s, cmd);
  if (levels == 1) {  // a field of one digit: no level 1 to gather or write the grids
    phase(VREN_RADIX_TOPK_PHASE_COLLECT, groups);
    detail::computeToComputeBarrier(s, cmd);
    phase(VREN_RADIX_TOPK_PHASE_RANK, divCeil(info.k, s->striding_workgroup_size / VREN_RADIX_TOPK_RANK_SPLIT));
    detail::endLabel(s, cmd);
    return;
  }
  // Level 1 gathers the candidates when they fit, and then empties the grid of the rest: the
  // collect, with three levels after the last level, or instead of both the settle phase
  // (TuningConfig::select_settle_max_count), whose workgroups wait for each other: one per
  // compute unit, where the device says how many. pc.wait_groups tells level 1 that grid.
  const bool settles = levels > 2 && in.count <= s->select_settle_max_count;
  pc.wait_groups = !settles ? 0u : s->compute_units ? s->compute_units : VREN_RADIX_TOPK_MAX_GROUPS;
  phase(VREN_RADIX_TOPK_PHASE_LEVEL + 1, groups);
  detail::computeToComputeBarrier(s, cmd, true);
  if (levels > 2 && !settles) {
    indirect(VREN_RADIX_TOPK_PHASE_LEVEL + 2, VREN_RADIX_TOPK_SKIPPABLE_GRID);
    detail::computeToComputeBarrier(s, cmd);
  }
  indirect(settles ? VREN_RADIX_TOPK_PHASE_SETTLE : VREN_RADIX_TOPK_PHASE_COLLECT, VREN_RADIX_TOPK_SKIPPABLE_GRID);
  detail::computeToComputeBarrier(s, cmd);
  indirect(VREN_RADIX_TOPK_PHASE_RANK, VREN_RADIX_TOPK_RANK_GRID);
  detail::endLabel(s, cmd);
}

// Checks shared by segmented sorts and top-k: the input, the offsets and the internal buffer.
// `temps`: the result goes to keys_temp / values_temp.
const char* validateInput(const Sorter* s, const SegmentedSortInfo& info, bool temps) {
  const SortInfo& in = info.sort;
  if (static_cast<uint32_t>(in.key_type) > static_cast<uint32_t>(KeyType::kU64)) return "Unknown key type.";
  if (in.begin_bit > in.end_bit || in.end_bit > detail::keyBits(in.key_type))
    return "The bit range must satisfy begin_bit <= end_bit <= 32 (64 for kU64 keys).";
  const bool with_values = in.values.buffer != VK_NULL_HANDLE;
  if (in.argsort && (!with_values || in.begin_bit == in.end_bit))
    return "argsort needs the values buffer (its input is not read), a buffer for the resulting indices and a "
           "non-empty bit range.";
  if (in.timestamp_pool) return "Segmented sorts and top-k take no timestamps: write them around the call.";
  if (info.segment_count_buffer.buffer && info.segment_count_buffer.offset % 4)
    return "segment_count_buffer's offset must be a multiple of 4.";
  if (!wholeBuffer(info)) {
    if (info.offsets.offset % 4) return "The offsets buffer's offset must be a multiple of 4.";
    if (tooSmall(info.offsets, (VkDeviceSize{info.segment_count} + 1) * 4))
      return "The offsets buffer is smaller than segment_count + 1 u32 offsets.";
    if (info.segment_count > 0x7FFFFFFFu) return "segment_count must be below 2^31.";
  }
  if (in.count == 0 || (!wholeBuffer(info) && info.segment_count == 0)) return nullptr;
  if (in.count > s->properties.max_count) return "The count exceeds the largest count this device can sort.";
  if (!in.keys.buffer || !in.internal.buffer) return "keys and internal buffers are required.";
  if (temps && !in.keys_temp.buffer) return "keys_temp is required: it receives the sorted keys.";
  if (temps && with_values && !in.values_temp.buffer)
    return "values_temp is required with values or argsort: it receives the sorted values.";
  const VkDeviceSize key_bytes = VkDeviceSize{in.count} * keyBytes(in.key_type);
  const VkDeviceSize value_bytes = with_values ? VkDeviceSize{in.count} * 4 : 0;
  const VkDeviceSize internal_bytes = layoutFor(s, in.count, in.key_type).end;
  const BufferRange* buffers[] = {&in.keys, &in.values, &in.internal, &in.keys_temp, &in.values_temp};
  for (const BufferRange* r : buffers)
    if (r->buffer && r->offset % kAlignment)
      return "Buffer offsets must be multiples of MemoryRequirements::alignment (16 bytes).";
  if (tooSmall(in.keys, key_bytes) || (temps && tooSmall(in.keys_temp, key_bytes)))
    return "A keys buffer is smaller than count keys.";
  if (with_values && (tooSmall(in.values, value_bytes) || (temps && tooSmall(in.values_temp, value_bytes))))
    return "A values buffer is smaller than count * 4 bytes.";
  if (tooSmall(in.internal, internal_bytes))
    return "The internal buffer is smaller than the memory requirements ask for this count.";
  for (const BufferRange* r : buffers)
    if (r->buffer && addressOf(s, *r) % kAlignment)
      return "A buffer's device address is not 16-byte aligned; bind its memory at a 16-byte aligned offset.";
  return nullptr;
}

// No buffer written may overlap another buffer of the call.
bool anyOverlap(std::span<const std::pair<BufferRange, VkDeviceSize>> read,
                std::span<const std::pair<BufferRange, VkDeviceSize>> written) {
  for (size_t i = 0; i < written.size(); ++i) {
    for (size_t j = i + 1; j < written.size(); ++j)
      if (overlaps(written[i].first, written[i].second, written[j].first, written[j].second)) return true;
    for (const auto& r : read)
      if (overlaps(written[i].first, written[i].second, r.first, r.second)) return true;
  }
  return false;
}

}  // namespace

MemoryRequirements getSegmentedMemoryRequirements(const Sorter* s, uint32_t max_count, uint32_t max_segments,
                                                  bool with_values, KeyType key_type) {
  (void)max_segments;
  MemoryRequirements r = getMemoryRequirements(s, max_count, with_values, key_type);
  r.internal_size = layoutFor(s, max_count, key_type).end;
  return r;
}

MemoryRequirements getTopKMemoryRequirements(const Sorter* s, uint32_t max_count, uint32_t max_segments, uint32_t k,
                                             bool with_values, KeyType key_type) {
  // The select's words, if larger, whatever k (a buffer sized once serves every k), and the
  // outputs are the caller's: k changes no size here.
  (void)k;
  MemoryRequirements r = getSegmentedMemoryRequirements(s, max_count, max_segments, with_values, key_type);
  if (key_type != KeyType::kU64)
    r.internal_size = std::max<VkDeviceSize>(r.internal_size, VkDeviceSize{VREN_RADIX_TOPK_WORDS} * 4);
  r.keys_temp_size = 0;
  r.values_temp_size = 0;
  return r;
}

const char* validateSegmentOffsets(std::span<const uint32_t> offsets, uint32_t count) {
  if (offsets.empty()) return "Segment offsets need at least one value (0 segments: {0}).";
  if (offsets.front() != 0) return "The first segment offset must be 0.";
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] < offsets[i - 1]) return "Segment offsets must never decrease.";
  if (offsets.back() != count) return "The last segment offset must equal the element count.";
  return nullptr;
}

const char* validateSegmentedSortInfo(const Sorter* s, const SegmentedSortInfo& info) {
  if (wholeBuffer(info)) return "A segmented sort needs an offsets buffer.";
  if (const char* why = validateInput(s, info, true)) return why;
  const SortInfo& in = info.sort;
  if (in.count == 0 || info.segment_count == 0 || in.begin_bit == in.end_bit) return nullptr;
  const VkDeviceSize key_bytes = VkDeviceSize{in.count} * keyBytes(in.key_type);
  const VkDeviceSize value_bytes = in.values.buffer ? VkDeviceSize{in.count} * 4 : 0;
  const std::pair<BufferRange, VkDeviceSize> read[] = {
      {in.keys, key_bytes},
      {in.values, in.argsort ? 0 : value_bytes},
      {info.offsets, (VkDeviceSize{info.segment_count} + 1) * 4},
      {info.segment_count_buffer, info.segment_count_buffer.buffer ? 4 : 0}};
  const std::pair<BufferRange, VkDeviceSize> written[] = {
      {in.keys_temp, key_bytes}, {in.values_temp, value_bytes}, {in.internal, layoutFor(s, in.count, in.key_type).end}};
  if (anyOverlap(read, written))
    return "The buffers a segmented sort writes (keys_temp, values_temp, internal) must not overlap each other or "
           "its inputs.";
  return nullptr;
}

SortResult cmdSortSegmented(const Sorter* s, VkCommandBuffer cmd, const SegmentedSortInfo& info) {
  assert(validateSegmentedSortInfo(s, info) == nullptr);
  const SortInfo& in = info.sort;
  const bool with_values = in.values.buffer != VK_NULL_HANDLE;
  if (in.count == 0 || info.segment_count == 0 || in.begin_bit == in.end_bit)
    return {0, false, in.keys, with_values ? in.values : BufferRange{}};
  const uint32_t passes =
      recordSegments(s, cmd, info, {in.keys_temp, with_values ? in.values_temp : BufferRange{}, in.descending, 0});
  return {passes, true, in.keys_temp, with_values ? in.values_temp : BufferRange{}};
}

const char* validateTopKInfo(const Sorter* s, const TopKInfo& info) {
  const SegmentedSortInfo& input = info.input;
  const SortInfo& in = input.sort;
  if (info.k == 0) return "k must be at least 1.";
  if (in.descending) return "Top-k takes its order from `largest`; leave input.sort.descending false.";
  if (in.begin_bit == in.end_bit) return "Top-k needs a non-empty bit range.";
  if (wholeBuffer(input) && input.segment_count_buffer.buffer)
    return "A GPU-side segment count needs an offsets buffer.";
  if (const char* why = validateInput(s, input, false)) return why;
  const uint64_t segments = wholeBuffer(input) ? 1 : input.segment_count;
  const uint64_t slots = segments * info.k;
  if (in.count == 0 || segments == 0) return nullptr;
  if (slots > 0x3FFFFFFFu) return "segment_count * k must be below 2^30.";
  const bool with_values = in.values.buffer != VK_NULL_HANDLE;
  if (!info.out_keys.buffer) return "out_keys is required.";
  if (with_values && !info.out_values.buffer) return "out_values is required with values or argsort.";
  const VkDeviceSize out_key_bytes = slots * keyBytes(in.key_type);
  const VkDeviceSize out_value_bytes = with_values ? slots * 4 : 0;
  if (tooSmall(info.out_keys, out_key_bytes)) return "out_keys is smaller than segment_count * k keys.";
  if (with_values && tooSmall(info.out_values, out_value_bytes))
    return "out_values is smaller than segment_count * k * 4 bytes.";
  for (const BufferRange* r : {&info.out_keys, &info.out_values})
    if (r->buffer && (r->offset % kAlignment || addressOf(s, *r) % kAlignment))
      return "Buffer offsets and device addresses must be multiples of 16 bytes.";
  const VkDeviceSize key_bytes = VkDeviceSize{in.count} * keyBytes(in.key_type);
  const std::pair<BufferRange, VkDeviceSize> read[] = {
      {in.keys, key_bytes},
      {in.values, in.argsort || !with_values ? 0 : VkDeviceSize{in.count} * 4},
      {input.offsets, input.offsets.buffer ? (segments + 1) * 4 : 0},
      {input.segment_count_buffer, input.segment_count_buffer.buffer ? 4 : 0}};
  if (selectsTopK(s, info) && tooSmall(in.internal, VkDeviceSize{VREN_RADIX_TOPK_WORDS} * 4))
    return "The internal buffer is smaller than getTopKMemoryRequirements() asks for this count and k.";
  // The select's words where it runs, else the multi-pass path's layout.
  const VkDeviceSize internal_bytes =
      std::max(layoutFor(s, in.count, in.key_type).end,
               selectsTopK(s, info) ? VkDeviceSize{VREN_RADIX_TOPK_WORDS} * 4 : VkDeviceSize{0});
  const std::pair<BufferRange, VkDeviceSize> written[] = {
      {info.out_keys, out_key_bytes}, {info.out_values, out_value_bytes}, {in.internal, internal_bytes}};
  if (anyOverlap(read, written))
    return "The buffers top-k writes (out_keys, out_values, internal) must not overlap each other or its inputs.";
  return nullptr;
}

void cmdTopK(const Sorter* s, VkCommandBuffer cmd, const TopKInfo& info) {
  assert(validateTopKInfo(s, info) == nullptr);
  const SortInfo& in = info.input.sort;
  if (in.count == 0 || (!wholeBuffer(info.input) && info.input.segment_count == 0)) return;
  const Output out{info.out_keys, in.values.buffer ? info.out_values : BufferRange{}, info.largest, info.k};
  if (selectsTopK(s, info))
    recordSelect(s, cmd, info, out);
  else if (selectsSegmentTopK(s, info))
    recordSegmentSelect(s, cmd, info, out);
  else
    recordSegments(s, cmd, info.input, out);
}

}  // namespace vren::radix
