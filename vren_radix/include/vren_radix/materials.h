// vren_radix materials: sort a path tracer's pixels by material, so that each material is shaded
// by its own indirect dispatch over only its pixels.
//
// Given one u32 material ID per pixel (pixel_count pixels, material_count materials), one
// recorded cmdSortMaterials() produces, on the GPU:
//   counts[m]      pixels of material m
//   offsets[m]     first slot of material m's range in new_to_old (exclusive sum of the counts,
//                  each rounded up to options.range_alignment)
//   dispatch[m]    a VkDispatchIndirectCommand covering counts[m] invocations of the caller's
//                  shading shader (local size L = options.shading_workgroup_size x 1 x 1):
//                  {groups, 1, 1} with groups = ceil(counts[m] / L), or, when groups exceeds
//                  maxComputeWorkGroupCount[0], a 2D grid {ceil(groups / y), y, 1} with
//                  y = ceil(groups / maxComputeWorkGroupCount[0]); {0, 1, 1} for the void material
//   new_to_old[offsets[m] + i] = the i-th pixel of material m in scan order (stable)
// Shade material m with
//   vkCmdDispatchIndirect(cmd, dispatch_buffer, dispatch_offset + m * sizeof(VkDispatchIndirectCommand));
// and, in the shader (shaders/materials_shading.glsl has it as material_invocation()):
//   uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x
//            + gl_LocalInvocationID.x;
//   if (i >= counts[m]) return;            // the last group, and 2D grids, overhang
//   uint pixel = new_to_old[offsets[m] + i];
//
//   vren::radix::MaterialSorter* sorter = nullptr;
//   vren::radix::createMaterialSorter(create_info, &sorter);
//   auto req = vren::radix::getMaterialSortRequirements(sorter, w * h, materials, options);
//   // ... create the buffers (req.*_size, req.usage; the dispatch buffer also req.dispatch_usage)
//   vren::radix::cmdSortMaterials(sorter, cmd, info);
//   // barrier: COMPUTE_SHADER / SHADER_WRITE -> DRAW_INDIRECT / INDIRECT_COMMAND_READ and
//   //          COMPUTE_SHADER / SHADER_READ; then one vkCmdDispatchIndirect per material
//
// Device requirements: as vren_radix.h (Vulkan 1.2, bufferDeviceAddress, subgroup basic,
// arithmetic and ballot operations in compute shaders). Any subgroup size from 4 to 128 works.
// The fast path (MaterialSorterProperties::fast_material_count) also needs subgroup shuffles;
// without them every material count takes the general path.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <vulkan/vulkan.h>

#include "vren_radix/vren_radix.h"

namespace vren::radix {

struct MaterialSorter;

// options.void_material when there is none.
inline constexpr uint32_t kNoVoidMaterial = 0xFFFFFFFFu;
// What padding slots of new_to_old hold (with range_alignment > 1).
inline constexpr uint32_t kPaddingSlot = 0xFFFFFFFFu;
// Timestamps written by cmdSortMaterials when a query pool is given.
inline constexpr uint32_t kMaterialSortTimestampCount = 5;

// Per-device tuning. A chunk (one workgroup's share of the pixels) is workgroup_size pixels
// times max(min_rounds, ceil(material_count / workgroup_size)) rounds: at least as many pixels
// as materials, so that the per-chunk histogram work never exceeds the per-pixel work. (On the
// fast path material_count <= workgroup_size, so a chunk is min_rounds rounds.)
//
// poll_budget: on the fast path the scan runs beside the scatter, whose threads read the prefixes
// and totals the scan publishes in at most this many rounds of polls each, and past that add
// them up from the chunks' counts themselves (slow, but no workgroup waits on another: Vulkan
// does not promise that they run meanwhile). It bounds how long a scatter workgroup can wait.
// 0 reads nothing published: every scatter workgroup adds up its own, which is slow. Values
// above 65,536 are taken as 65,536. A driver that ends a shader's loops after a fixed number of
// iterations gets a smaller cap, chosen by the library; with 0 there, validateMaterialSortInfo
// refuses the sorts whose sums would need more iterations (many pixels of many materials).
// MaterialSorterProperties::tuning tells the value in use.
struct MaterialTuning {
  uint32_t workgroup_size = 256;
  uint32_t min_rounds = 8;
  uint32_t poll_budget = 4096;
};

struct MaterialSorterCreateInfo {
  DeviceBinding binding;
  // Null: the default, 256 threads but at most 8 subgroups (64 threads at 8 lanes), and 8
  // rounds. Clamped to the device's limits. The fast path (see
  // MaterialSorterProperties::fast_material_count) keeps min_rounds pixels per thread in
  // registers and a chunk in shared memory: large products of the two may disable it.
  const MaterialTuning* tuning = nullptr;
};

struct MaterialSorterProperties {
  MaterialTuning tuning;           // after clamping
  uint32_t subgroup_size;          // the size the passes run at (pinned or the device default)
  uint32_t max_material_count;     // bounded by shared memory: at least 4096 with 32 KiB
  uint32_t max_pixel_count;       // below 2^31, and a u32 per pixel in one allocation
  uint32_t max_range_alignment;    // 1024
  uint32_t max_workgroup_count_x;  // dispatch arguments are clamped to this
  // Material counts up to this (64, or the workgroup size if smaller; less, or 0, if a chunk of
  // the tuning does not fit in shared memory; 0 without subgroup shuffles) take the fast path:
  // three steps instead of four, ranking pixels with one subgroup ballot per bit of the material
  // ID. The outputs are the same.
  uint32_t fast_material_count;
};

// Creates the pipelines for one device. On failure returns an error, leaves *sorter null,
// leaks nothing, and, if `why` is given, says what is missing.
VkResult createMaterialSorter(const MaterialSorterCreateInfo& info, MaterialSorter** sorter, std::string* why = nullptr);
void destroyMaterialSorter(MaterialSorter* sorter);
MaterialSorterProperties getMaterialSorterProperties(const MaterialSorter* sorter);

struct MaterialSortOptions {
  // Each material's range starts at a multiple of this (a power of two up to 1024); unused
  // slots at the end of each range hold kPaddingSlot. 32 keeps a subgroup of 32 from mixing
  // materials when the shading workgroup size is a multiple of it.
  uint32_t range_alignment = 1;
  // A material that is never shaded (rays that died earlier): its pixels are counted and
  // mapped like any other's, but its dispatch arguments are {0, 1, 1}.
  uint32_t void_material = kNoVoidMaterial;
  // local_size_x of the caller's shading shaders (local size y and z must be 1).
  uint32_t shading_workgroup_size = 64;
};

struct MaterialSortRequirements {
  VkDeviceSize chunk_counts_size;  // scratch: u32 per chunk and material, and more; layout internal
  VkDeviceSize counts_size;        // u32 [material_count]
  VkDeviceSize offsets_size;       // u32 [material_count]
  VkDeviceSize dispatch_size;      // VkDispatchIndirectCommand [material_count]
  VkDeviceSize new_to_old_size;    // u32 [max_slot_count]
  uint32_t chunk_size;             // pixels per chunk
  uint32_t chunk_count;
  uint32_t max_slot_count;         // pixel_count, plus the most padding the alignment can add
  VkDeviceSize alignment;          // every BufferRange offset must be a multiple of this
  VkBufferUsageFlags usage;        // every buffer passed to cmdSortMaterials needs these
  VkBufferUsageFlags dispatch_usage;  // the dispatch buffer needs these too (INDIRECT_BUFFER)
};

// Sizes for sorting pixel_count pixels of material_count materials; ask with the material count
// you will sort: the scratch need not grow with it (the fast path's takes more words per chunk,
// and more materials make larger chunks). material_count must be in
// [1, max_material_count], pixel_count at most max_pixel_count, and options valid (see
// validateMaterialSortInfo).
MaterialSortRequirements getMaterialSortRequirements(const MaterialSorter* sorter, uint32_t pixel_count,
                                                     uint32_t material_count, const MaterialSortOptions& options);

struct MaterialSortInfo {
  uint32_t pixel_count = 0;
  uint32_t material_count = 0;
  MaterialSortOptions options;
  BufferRange material_ids;  // u32 per pixel, read only; IDs must be < material_count
  BufferRange chunk_counts;  // scratch
  BufferRange counts;        // out
  BufferRange offsets;       // out
  BufferRange dispatch;      // out
  BufferRange new_to_old;    // out; slots past the last material's range are left untouched
  // Optional: kMaterialSortTimestampCount timestamps (queries reset by the caller) from
  // first_query: before step 1, after step 1 (count), after step 2 (scan), after steps 3-4
  // (offsets, dispatch), after step 5 (scatter, and padding). On the path for few materials
  // (see cmdSortMaterials) the second, third and fourth are taken at the same point, after the
  // count, and the scan runs between them and the fifth, beside the scatter.
  VkQueryPool timestamp_pool = VK_NULL_HANDLE;
  uint32_t first_query = 0;
};

// Returns null if `info` is valid for `sorter`, else one sentence saying what is wrong.
const char* validateMaterialSortInfo(const MaterialSorter* sorter, const MaterialSortInfo& info);

// Records the material sort into `cmd`. Records only: no allocation, submission or wait. Binds
// compute pipelines and sets push constants: rebind yours afterwards.
//
// Steps (each ends with a compute-to-compute barrier, except the last; see the fast path below):
//   1. count    per chunk and material, shared histogram   -> chunk_counts
//   2. scan     per material over chunks, exclusive        -> chunk_counts, counts
//   3-4. offsets, dispatch arguments (one workgroup)        -> offsets, dispatch
//   5. scatter  stable rank within material                 -> new_to_old
//      (padding slots, with range_alignment > 1, are written beside step 5)
// With material_count <= fast_material_count (see MaterialSorterProperties), the call records
// three dispatches, padding or not: count, a barrier, then side by side the scan (counts,
// dispatch) and the scatter, which polls for the scan's results and also writes offsets and the
// padding slots. The timestamps after steps 1, 2 and 3-4 are taken at the same point, after the
// count.
//
// Synchronisation contract:
// - First access: step 1 reads material_ids and writes chunk_counts at
//   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT. Before the call, make the writes of material_ids
//   available to COMPUTE_SHADER / SHADER_READ, and order earlier uses of every other buffer
//   (e.g. last frame's vkCmdDispatchIndirect and shading reads) before COMPUTE_SHADER /
//   SHADER_WRITE.
// - Last access: counts, offsets and dispatch are written by step 2-4 (offsets by step 5 on the
//   fast path) and new_to_old by step 5, all at COMPUTE_SHADER / SHADER_WRITE. Before shading,
//   add a barrier from there to DRAW_INDIRECT / INDIRECT_COMMAND_READ (dispatch) and
//   COMPUTE_SHADER / SHADER_READ.
//
// Preconditions (checked by validateMaterialSortInfo, asserted in debug builds):
// material_count must be in [1, max_material_count]; pixel_count must not exceed
// max_pixel_count; every buffer must have MaterialSortRequirements::usage (the dispatch buffer
// dispatch_usage too), offsets must be multiples of its alignment, and sizes at least the
// requirements for (pixel_count, material_count, options); the output buffers and the scratch
// must not overlap each other or material_ids. IDs >= material_count are a caller error: they
// are counted as material_count - 1, never written out of bounds.
void cmdSortMaterials(const MaterialSorter* sorter, VkCommandBuffer cmd, const MaterialSortInfo& info);

// The number of new_to_old slots in use for these counts: offsets.back() + the last padded
// count. Host-side helper for reading results back.
inline uint64_t materialSlotCount(std::span<const uint32_t> counts, uint32_t range_alignment) {
  uint64_t slots = 0;
  for (uint32_t c : counts) slots += (uint64_t{c} + range_alignment - 1) / range_alignment * range_alignment;
  return slots;
}

}  // namespace vren::radix
