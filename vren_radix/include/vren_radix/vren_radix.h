// vren_radix: stable LSD radix sort of u32 keys (and u32 values) on Vulkan compute.
//
// Create a Sorter once per device, ask getMemoryRequirements() how large the scratch buffers
// must be for your largest count, then record cmdSort() into your own command buffer as often
// as you like. The library never allocates memory, submits or waits on the record path.
//
//   vren::radix::Sorter* sorter = nullptr;
//   vren::radix::createSorter(create_info, &sorter);
//   auto req = vren::radix::getMemoryRequirements(sorter, max_count, /*with_values=*/false);
//   // ... create keys_temp (req.keys_temp_size) and internal (req.internal_size) with req.usage
//   auto result = vren::radix::cmdSort(sorter, cmd, {.count = n, .keys = keys, .keys_temp = tmp, .internal = internal});
//   // barrier: COMPUTE_SHADER / SHADER_WRITE -> your stage; sorted keys are in result.keys
//
// Device requirements: Vulkan 1.2, the bufferDeviceAddress feature enabled, and subgroup
// basic, arithmetic and ballot operations in compute shaders. Any subgroup size works.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <vulkan/vulkan.h>

#define VREN_RADIX_VERSION_MAJOR 0
#define VREN_RADIX_VERSION_MINOR 3
#define VREN_RADIX_VERSION_PATCH 0
#define VREN_RADIX_VERSION_STRING "0.3.0"

namespace vren::radix {

struct Sorter;

// Key types. Signed and float keys are ordered through an order-preserving map to unsigned
// integers applied on the fly: the stored keys come back unchanged.
//   kI32: two's complement.
//   kF32: IEEE-754 total order: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN (NaNs with the
//         sign bit set come first, by payload, those without it last).
//   kU64: 64-bit keys (two little-endian u32 words each), with u32 values; up to 16 passes (8
//         with 8-bit digits).
enum class KeyType : uint32_t { kU32, kI32, kF32, kU64 };

// Per-device tuning. A tile is workgroup_size * keys_per_thread keys (at most 32768).
// digit_bits is 4 (16 bins, the default) or 8 (256 bins: half the passes, each doing more work
// per key); values above 4 are taken as 8, the others as 4. getSorterProperties() tells which.
struct TuningConfig {
  uint32_t workgroup_size = 256;
  uint32_t keys_per_thread = 8;
  uint32_t digit_bits = 4;
  // Sorts of at most lookback_max_count keys, keys alone or with values, run one dispatch per
  // pass instead of three, on 8-bit digits whatever digit_bits says: each workgroup ranks a
  // tile and finds where its keys go from the earlier tiles' published counts (a decoupled
  // look-back) after a histogram of every pass's digits (radix_onesweep.comp). Tiles are
  // lookback_workgroup_size threads (whole subgroups) x lookback_keys_per_thread keys, and from
  // large_tile_min_count keys on large_tile_workgroup_size x large_tile_keys_per_thread, and
  // with values (or argsort) on large_tile_pairs_workgroup_size x large_tile_pairs_keys_per_thread:
  // large tiles win on many keys, small ones keep small sorts spread over the GPU; values take
  // registers, so pairs may want another shape. SorterProperties::lookback_tile_size,
  // large_tile_size and large_tile_pairs_size tell the tiles after clamping to the device's
  // shared memory: an even keys per thread is kept where the tile's keys fit staged in two
  // halves, else keys per thread shrink until they fit whole (u64 keys, twice the bytes: on
  // NVIDIA's 48 KiB both default large tiles become 512 x 8); keys with values stage in as many
  // parts as they need. At most 2^30 - 1 keys take the
  // look-back; lookback_max_count 0 turns it off.
  uint32_t lookback_max_count = 1u << 20;
  uint32_t lookback_keys_per_thread = 8;
  uint32_t lookback_workgroup_size = 256;
  uint32_t large_tile_min_count = 0xFFFFFFFFu;
  uint32_t large_tile_keys_per_thread = 20;
  uint32_t large_tile_workgroup_size = 384;
  uint32_t large_tile_pairs_keys_per_thread = 20;
  uint32_t large_tile_pairs_workgroup_size = 384;
  // Large tiles in several sizes: besides the keys per thread above, down to these in steps of 2
  // (at most 5 shapes each; 0: only the one). Per count the sorter takes the shape whose tiles
  // fill the device's waves best: a sort whose last wave of tiles leaves most of the GPU idle
  // takes smaller tiles in the same number of waves, or larger ones in fewer. A smaller shape
  // that shrinks to no smaller a tile than a larger one (64-bit keys) is not made.
  // large_tile_slots units run large tiles (0: the SMs or compute units, where the driver tells
  // their number; where it does not, the largest shape), each one at a time or
  // large_tile_per_unit (below). A count read on the GPU takes the largest shape, unless SortInfo::expected_count
  // names the count to choose for.
  uint32_t large_tile_min_keys_per_thread = 0;
  uint32_t large_tile_pairs_min_keys_per_thread = 0;
  uint32_t large_tile_slots = 0;
  // 1: the passes on large tiles of keys alone (large_tile_loop) or with values
  // (large_tile_pairs_loop) dispatch as many workgroups as large tiles run at once
  // (large_tile_slots units, times large_tile_per_unit; fewer where there are fewer tiles, more
  // where a driver bounds a workgroup's loops) that take the tiles in turn (or by ticket, below),
  // at most their share each, each loading its next tile's keys while it stores the current one's;
  // 0: a workgroup per tile. Taken only where large_tile_slots is known; worth it
  // where that many workgroups all run at once (a workgroup whose earlier tiles' counts do not
  // come counts those tiles itself, as any look-back tile does).
  uint32_t large_tile_loop = 0;
  uint32_t large_tile_pairs_loop = 0;
  // n > 1: n workgroups of large tiles of keys alone (large_tile_per_unit) or with values
  // (large_tile_pairs_per_unit) are meant to share an SM or compute unit: each tile's shared
  // memory is held within 1/n of the device's (tiles stage in more parts, pack their counters, or
  // shrink; none is made where nothing fits), and n tiles a unit run at once for the shape's
  // choice, the looping grid and the GPU-side count's excess tiles. Looping workgroups then take
  // their tiles by an atomic ticket in the order they ask, so that where fewer run at once the
  // tiles go to those that run. 0 or 1: one a unit; at most 64.
  uint32_t large_tile_per_unit = 1;
  uint32_t large_tile_pairs_per_unit = 1;
  // 1: where a look-back tile's keys fit shared memory whole but not with their values, the
  // keys are staged whole and stored, then the values, each staged once; 0: the tile with its
  // values staged in parts.
  uint32_t lookback_values_apart = 0;
  // 1: look-back tiles staged after their ranking (in parts, or with values apart) keep the
  // ranking's counters inside the stage, which is free from the counting to the stores: the
  // counters take no shared memory of their own, so such tiles fit more keys whole, or in fewer
  // parts, with their counters unpacked (u32 pairs with values apart on 48 KiB: up to 512 x 22
  // against 512 x 17 with packed counters beside the stage). Only where that changes how a tile
  // stages (fewer parts, values apart, unpacked counters): the counters apart measured faster
  // where it changes nothing, and a sorter's properties say 1 only where some tile took it.
  // 0: the counters beside the stage.
  uint32_t lookback_counters_in_stage = 0;
  // How often each look-back thread polls, in all per tile, for earlier tiles' counts not yet published
  // before its workgroup counts such a tile from its keys itself: nothing in Vulkan promises
  // that an earlier workgroup is running. A larger budget waits longer for a slow tile, a
  // smaller one counts its keys again sooner. 0 reads no published count at all (each tile
  // counts every earlier tile: slow, the same result; such look-back sorts stop at 1024 tiles).
  // Any value is taken, except on a driver that ends a shader's loops after a fixed number of
  // iterations: the library then chooses a smaller cap that fits. SorterProperties::tuning
  // tells the value in use.
  uint32_t lookback_poll_budget = 4096;
  // Sorts of at most block_max_count keys that fit one workgroup (SorterProperties::block_size)
  // run in a single dispatch: one workgroup holds them in shared memory and runs every pass on
  // 8-bit digits. Above it, the look-back or the separate passes. 0 turns this off.
  uint32_t block_max_count = 0xFFFFFFFFu;
  // Top-k over a whole buffer (cmdTopK) of at most select_settle_max_count 32-bit keys, whose
  // keys after the first two digit levels still leave too many candidates to gather, finishes
  // the last level and the collect in one dispatch instead of two: its workgroups, one per SM or
  // compute unit where the driver tells their number, else up to 512, wait for each other's
  // counts within lookback_poll_budget polls, and a workgroup whose wait runs out counts every
  // key itself (the same result, far slower). Worth it only where those workgroups all run at
  // once; 0 (the default where the device is not measured) turns it off.
  uint32_t select_settle_max_count = 0;
};

// The device a module (sorter, material sorter, tile packer) works on, and how it reaches
// Vulkan; every create info holds one. instance, physical_device, device and
// get_instance_proc_addr are required.
struct DeviceBinding {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  // Entry points: the only way the library reaches Vulkan. get_device_proc_addr may be left
  // null; it is then looked up through get_instance_proc_addr.
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  PFN_vkGetDeviceProcAddr get_device_proc_addr = nullptr;
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  const VkAllocationCallbacks* allocator = nullptr;
  // Set when the device was created with the subgroupSizeControl and computeFullSubgroups
  // features of Vulkan 1.3. The module then pins the subgroup size: required_subgroup_size if
  // non-zero, else the device's largest. Ignored on devices older than Vulkan 1.3.
  bool subgroup_size_control_enabled = false;
  uint32_t required_subgroup_size = 0;
};

struct SorterCreateInfo {
  DeviceBinding binding;
  // Null: chosen from the device (see tuning.cpp). Clamped to the device's limits.
  const TuningConfig* tuning = nullptr;
};

struct SorterProperties {
  TuningConfig tuning;         // 32-bit keys
  TuningConfig tuning_u64;     // 64-bit keys (shared memory holds twice the key bytes)
  uint32_t tile_size;          // keys per workgroup, 32-bit keys
  uint32_t lookback_tile_size;     // the same for look-back sorts (0: none on this device)
  uint32_t lookback_tile_size_u64; // and for 64-bit keys
  uint32_t large_tile_size;        // look-back sorts from TuningConfig::large_tile_min_count keys
                                   // (0: none, as when that exceeds lookback_max_count); the
                                   // largest of the shapes when there are several
  uint32_t large_tile_size_u64;    // and for 64-bit keys
  uint32_t large_tile_pairs_size;  // the same for keys with values (or argsort)
  uint32_t large_tile_pairs_size_u64;
  uint32_t block_size;         // most keys a one-dispatch sort takes (0: none on this device)
  uint32_t block_size_u64;     // and for 64-bit keys
  uint32_t subgroup_size;      // the size the passes run at (pinned or the device default)
  uint32_t max_count;          // largest count this device can sort
};

// Creates the pipelines for one device. On failure returns an error, leaves *sorter null,
// leaks nothing, and, if `why` is given, says what is missing.
VkResult createSorter(const SorterCreateInfo& info, Sorter** sorter, std::string* why = nullptr);
void destroySorter(Sorter* sorter);
SorterProperties getSorterProperties(const Sorter* sorter);

struct MemoryRequirements {
  VkDeviceSize keys_temp_size;       // ping-pong partner of the keys
  VkDeviceSize values_temp_size;     // ping-pong partner of the values (0 without values)
  VkDeviceSize internal_size;        // sort state, per-tile digit counts, their sums per group;
                                     // for look-back sorts, 2 KiB of published counts per tile
                                     // of key_type's tiles (2^26 u32 keys on 7680-key tiles:
                                     // 17.1 MiB; u64 keys, on half the tile, twice that)
  VkDeviceSize alignment;            // every BufferRange offset must be a multiple of this
  VkBufferUsageFlags usage;          // every buffer passed to cmdSort needs these, the caller's too
  VkBufferUsageFlags internal_usage; // the internal buffer: usage plus INDIRECT_BUFFER
};

// Sizes for sorting up to max_count elements of key_type. max_count must not exceed
// getSorterProperties().max_count.
MemoryRequirements getMemoryRequirements(const Sorter* sorter, uint32_t max_count, bool with_values,
                                         KeyType key_type = KeyType::kU32);

struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = VK_WHOLE_SIZE;  // bytes from offset; VK_WHOLE_SIZE skips the size check
};

struct SortInfo {
  uint32_t count = 0;       // cmdSortIndirect: the largest count the GPU-side count may be
  // cmdSortIndirect: about how many keys the GPU-side count will hold (at most count; a splat
  // viewer may give the last frame's visible count), for the choice of tile shapes (see
  // TuningConfig::large_tile_min_keys_per_thread), and where count's tiles exceed its by at most
  // one wave, direct dispatch grids, whose tiles past the GPU-side count return at once (an
  // indirect grid costs up to about 0.7 us a pass on NVIDIA; a GPU-side count far below a hint
  // near `count` pays for count's tiles each pass instead). Any count up to `count` still sorts.
  // 0: the largest shapes, indirect grids. cmdSort ignores it.
  uint32_t expected_count = 0;
  KeyType key_type = KeyType::kU32;
  BufferRange keys;         // count keys; may receive the result
  BufferRange keys_temp;    // room for count keys; may receive the result
  BufferRange values;       // optional: count u32 values moved with their keys
  BufferRange values_temp;  // required with values
  BufferRange internal;     // getMemoryRequirements().internal_size bytes for count
  // Sort by bits [begin_bit, end_bit) of the key only: ceil((end - begin) / digit_bits) passes.
  // end_bit is at most 32, or 64 for kU64 keys.
  uint32_t begin_bit = 0;
  uint32_t end_bit = 32;
  bool descending = false;  // still stable: equal keys keep their input order
  // Argsort: values receives each key's input index (0, 1, ...) moved with the key; the values
  // buffer's input is not read. Needs values and values_temp, and begin_bit < end_bit.
  bool argsort = false;
  // Optional: two timestamps (first_query, first_query + 1) around the recorded passes. With
  // timestamp_every_dispatch, 2 + 3 * passes timestamps instead: the start, one after each
  // pass's count, scan and scatter dispatch (a profile of where the time goes), and the end.
  // Look-back sorts (see TuningConfig) run no count and scan dispatches: their intervals are
  // empty, except the first count interval, which holds the histogram. One-dispatch sorts
  // (TuningConfig::block_max_count) hold the whole sort in the first count interval.
  // getPassCount() gives the passes.
  VkQueryPool timestamp_pool = VK_NULL_HANDLE;
  uint32_t first_query = 0;
  bool timestamp_every_dispatch = false;
};

struct SortResult {
  uint32_t passes;     // radix passes recorded (some may be skipped on the GPU, see cmdSort)
  bool in_temp;        // odd pass count: the sorted data is in keys_temp / values_temp
  BufferRange keys;    // the buffer holding the sorted keys
  BufferRange values;  // the buffer holding the sorted values (if any)
};

// Returns null if `info` is valid for `sorter`, else one sentence saying what is wrong.
const char* validateSortInfo(const Sorter* sorter, const SortInfo& info);

// The radix passes cmdSort records for `info`: ceil((end_bit - begin_bit) / digit bits), with the
// digit width of the tuning for info.key_type, or 8 bits for one-dispatch and look-back sorts
// (info.count, the bit range and whether info.values is set decide: keys alone and keys with
// values may take look-back tiles of different sizes); 0 for no elements or an empty bit range.
// Its parity tells where the result is (SortResult::in_temp).
uint32_t getPassCount(const Sorter* sorter, const SortInfo& info);

// Records the sort into `cmd`. Records only: no allocation, submission or wait.
//
// A pass whose digit is the same for every key is detected on the GPU from the counts and
// skips its scatter; if skipping leaves the data in the other ping-pong buffer, a copy at the
// end moves it to the buffer named in the result, so the result is where it says whatever the
// data. A one-dispatch sort (TuningConfig::block_max_count) reads keys/values and writes only
// the buffers named in the result, once; it does not touch internal.
//
// Synchronisation contract:
// - First access: the first pass reads keys/values and writes keys_temp/values_temp and
//   internal at VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT. Before cmdSort, make earlier writes to
//   keys/values available to COMPUTE_SHADER / SHADER_READ, and order earlier uses of the temp
//   and internal buffers (e.g. a previous sort) before COMPUTE_SHADER / SHADER_WRITE.
// - Between passes the library records its own compute-to-compute barriers.
// - Last access: the last pass writes result.keys/result.values at COMPUTE_SHADER /
//   SHADER_WRITE. Add a barrier from there before reading them.
// Both ping-pong buffers are overwritten; the one not named in the result holds garbage.
// count == 0 or begin_bit == end_bit records nothing except the optional timestamps.
//
// Preconditions (checked by validateSortInfo, asserted in debug builds):
// count must be <= the max_count the buffers were sized for; buffers must have
// MemoryRequirements::usage; offsets must be multiples of MemoryRequirements::alignment;
// keys/values and their temps must not overlap; begin_bit <= end_bit <= key bits.
SortResult cmdSort(const Sorter* sorter, VkCommandBuffer cmd, const SortInfo& info);

// Like cmdSort, with the element count read on the GPU from the u32 at count_buffer (written by
// earlier GPU work, e.g. a compaction), clamped to info.count, which the buffers are sized for.
// Adds to the contract: the count is read at COMPUTE_SHADER / SHADER_READ before anything else.
// count_buffer needs MemoryRequirements::usage and a 4-byte aligned offset.
SortResult cmdSortIndirect(const Sorter* sorter, VkCommandBuffer cmd, const SortInfo& info,
                           const BufferRange& count_buffer);

// One sort of a batch: as for cmdSort, or with count_buffer.buffer set as for cmdSortIndirect.
struct BatchSort {
  SortInfo info;
  BufferRange count_buffer;
};

// Returns null if every sort is valid (validateSortInfo), takes no timestamps and shares no
// buffer with another sort of the batch (count buffers excepted: they are only read); else one
// sentence, and the index of the sort it names in *bad_sort if given.
const char* validateSortBatch(const Sorter* sorter, std::span<const BatchSort> sorts, uint32_t* bad_sort = nullptr);

// Records independent sorts into `cmd` at once: they may differ in buffers, counts, key types,
// bit ranges and options, and they share barriers (the dispatches of every sort up to its next
// barrier, then one barrier for all), so the batch records no more barriers than its largest
// sort alone and its small sorts run beside each other. The results (results[i], if given) are
// those of cmdSort / cmdSortIndirect for each sort, with the same synchronisation contract for
// each sort's buffers. Preconditions: validateSortBatch.
void cmdSortBatch(const Sorter* sorter, VkCommandBuffer cmd, std::span<const BatchSort> sorts,
                  SortResult* results = nullptr);

// Segmented sorts: one buffer of elements split into segments by offsets, each segment sorted on
// its own, stably, with every option of SortInfo.
struct SegmentedSortInfo {
  // As for cmdSort, except:
  // - count is the most elements (the buffers are sized for it); the element count is the last
  //   offset, read on the GPU, clamped to count;
  // - keys and values are only read; the result goes to keys_temp and values_temp (values_temp
  //   is required with values or argsort, and receives argsort's input indices);
  // - internal is getSegmentedMemoryRequirements().internal_size bytes;
  // - no timestamps.
  SortInfo sort;
  // segment_count + 1 u32, 4-byte aligned, possibly written by earlier GPU work: offsets[0] = 0,
  // offsets never decrease, offsets[segment_count] = the element count. Segment s is elements
  // [offsets[s], offsets[s + 1]). The GPU reads them clamped to count: whatever they hold,
  // nothing is written outside the buffers (bad offsets give a wrong order, never a stray write).
  BufferRange offsets;
  uint32_t segment_count = 0;
  // Optional: the number of segments, a u32 written by earlier GPU work, clamped to
  // segment_count (which then sizes the internal buffer).
  BufferRange segment_count_buffer;
  // Optional promise: no segment holds more elements (0: unknown). Segments are sorted by a
  // thread up to 16 32-bit keys, by a subgroup up to 8 keys per lane of the smallest subgroup
  // size (256 at 32 lanes), by a workgroup up to getSorterProperties().block_size (block_size_u64
  // for kU64 keys), in one dispatch each. Longer ones are sorted by a workgroup each running every
  // pass (one dispatch) while the longest holds at most 2^18 elements and at most
  // 2 * count / 256 (so that enough workgroups share the work); past that the whole buffer is
  // sorted by key and then by segment. With a promise only the way that holds it is recorded.
  // Without one, the GPU first finds each segment's way (two small dispatches): each way's
  // dispatch covers the segments only if any segment takes it, and the two sorts run only if a
  // segment is too long for the others, their dispatches recorded either way. A segment longer
  // than promised is not sorted as a whole (results past what its thread, subgroup or workgroup
  // holds are missing), but nothing is written outside the buffers.
  uint32_t max_segment_length = 0;
};

// Sizes for segmented sorts of up to max_count elements in up to max_segments segments:
// keys_temp_size and values_temp_size (for the result) and internal_size.
MemoryRequirements getSegmentedMemoryRequirements(const Sorter* sorter, uint32_t max_count, uint32_t max_segments,
                                                  bool with_values, KeyType key_type = KeyType::kU32);

// Returns null if `info` is valid for `sorter`, else one sentence saying what is wrong. The
// offsets themselves live on the GPU: check them on the host with validateSegmentOffsets.
const char* validateSegmentedSortInfo(const Sorter* sorter, const SegmentedSortInfo& info);

// Returns null if `offsets` (segment_count + 1 values) are valid segment offsets for `count`
// elements, else one sentence saying which offset is wrong.
const char* validateSegmentOffsets(std::span<const uint32_t> offsets, uint32_t count);

// Records the segmented sort into `cmd`: a fixed number of dispatches, whatever the number of
// segments (one with max_segment_length promised within what one workgroup sorts; otherwise the
// two classifying steps, the one-dispatch ways, and a copy, the sort by key, the segments' keys,
// the sort by segment and a gather that do nothing unless a segment is too long for the others).
// The result is in keys_temp/values_temp (in_temp true) unless the sort is empty (count,
// segment_count or the bit range 0: nothing is recorded, and the result names keys/values).
//
// Synchronisation contract: reads offsets, the segment count, keys and values, and writes
// internal, keys_temp and values_temp, all at COMPUTE_SHADER; it records its own barriers in
// between. Before it, make earlier writes to what it reads available to COMPUTE_SHADER /
// SHADER_READ and order earlier uses of what it writes before COMPUTE_SHADER / SHADER_WRITE; after
// it, add a barrier from COMPUTE_SHADER / SHADER_WRITE before reading the result.
// Preconditions: validateSegmentedSortInfo.
SortResult cmdSortSegmented(const Sorter* sorter, VkCommandBuffer cmd, const SegmentedSortInfo& info);

// Top-k: the k smallest keys (or with `largest` the k largest) of each segment, or of the whole
// buffer, sorted (descending for `largest`), with their values or input indices. Ties keep the
// lower input index first: the result equals the first k elements of the stable sort.
// For 32-bit keys a radix select finds the k-th key without sorting: over a whole buffer with
// k <= 4096 (at most six dispatches, five with TuningConfig::select_settle_max_count; those
// between the second and the last are empty when the first 11 bits leave at most 16384
// candidates), per segment with k <= 1024 (one dispatch, a workgroup per segment, unless short
// segments were promised or the segments average over 2^18 elements).
// Otherwise the segments are sorted as by cmdSortSegmented and their first k kept.
struct TopKInfo {
  // The input, as for cmdSortSegmented; input.sort.descending must be false (largest says the
  // order), and keys_temp / values_temp are not used. Without offsets (input.offsets.buffer
  // null) the whole of input.sort.count elements is one segment.
  SegmentedSortInfo input;
  uint32_t k = 0;
  bool largest = false;
  // Segment s's min(k, length) results go to out_keys / out_values at s * k (segment_count * k
  // elements, or k without offsets, below 2^30); the slots past a short segment's results are not
  // written.
  // out_values is required with values or argsort.
  BufferRange out_keys;
  BufferRange out_values;
};

// Sizes for top-k of up to max_count elements in up to max_segments segments (1 without
// offsets), for any k: internal_size (keys_temp_size and values_temp_size are 0: the results go
// to the outputs, of max_segments * k elements). Segmented sorts and top-k keep about 16 bytes
// per element in the internal buffer (24 for kU64 keys) besides the sort's own words: one
// allocation bounds them below getSorterProperties().max_count.
MemoryRequirements getTopKMemoryRequirements(const Sorter* sorter, uint32_t max_count, uint32_t max_segments,
                                             uint32_t k, bool with_values, KeyType key_type = KeyType::kU32);

// Returns null if `info` is valid for `sorter`, else one sentence saying what is wrong.
const char* validateTopKInfo(const Sorter* sorter, const TopKInfo& info);

// Records top-k into `cmd`, with the synchronisation contract of cmdSortSegmented, the outputs
// written instead of the temp buffers. Preconditions: validateTopKInfo.
void cmdTopK(const Sorter* sorter, VkCommandBuffer cmd, const TopKInfo& info);

}  // namespace vren::radix
