// Layouts shared by the material-sort record path (C++) and its passes (GLSL): one push-constant
// block for every pass, the per-material dispatch arguments, and the specialization-constant IDs.
// Compiled by both: C++ sees plain integers, GLSL sees buffer references.
#ifndef VREN_RADIX_MATERIALS_SHARED_H
#define VREN_RADIX_MATERIALS_SHARED_H

// Specialization-constant IDs.
#define VREN_RADIX_MATERIALS_SPEC_WORKGROUP_SIZE 0
#define VREN_RADIX_MATERIALS_SPEC_MAX_SUBGROUPS 1
#define VREN_RADIX_MATERIALS_SPEC_HISTOGRAM_SIZE 2
// Fast path (materials_fast_*): pixel rounds per thread, unrolled.
#define VREN_RADIX_MATERIALS_SPEC_ROUNDS 3
// Fast path: bits per material ID, material_count <= 2^BITS (one pipeline per width).
#define VREN_RADIX_MATERIALS_SPEC_BITS 4
// Fast path: the scan publishes beside the scatter, which polls with atomic loads (else volatile
// loads) in at most POLL_BUDGET rounds per thread (0: reads nothing published).
#define VREN_RADIX_MATERIALS_SPEC_POLL_ATOMIC 5
#define VREN_RADIX_MATERIALS_SPEC_POLL_BUDGET 6

// Written into padding slots of new_to_old.
#define VREN_RADIX_MATERIALS_PADDING_SLOT 0xFFFFFFFFu

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vren::radix::detail {

// One VkDispatchIndirectCommand.
struct MaterialDispatch {
  uint32_t x;
  uint32_t y;
  uint32_t z;
};
static_assert(sizeof(MaterialDispatch) == 12, "MaterialDispatch must match VkDispatchIndirectCommand");

struct MaterialConstants {
  uint64_t material_ids;  // [pixel_count]
  uint64_t chunk_counts;  // [material_count][chunk_count] (both paths), then the fast path's published words
  uint64_t counts;        // [material_count]
  uint64_t offsets;       // [material_count]
  uint64_t dispatch;      // MaterialDispatch[material_count]
  uint64_t new_to_old;    // [slots]
  uint32_t pixel_count;
  uint32_t material_count;
  uint32_t chunk_count;
  uint32_t rounds;        // workgroup-sized rounds per chunk (fast path: VREN_RADIX_MATERIALS_SPEC_ROUNDS)
  uint32_t alignment;     // power of two
  uint32_t void_material;
  uint32_t shading_workgroup_size;
  uint32_t max_groups_x;  // maxComputeWorkGroupCount[0]
};
static_assert(sizeof(MaterialConstants) == 80, "MaterialConstants must match the GLSL push-constant block");
static_assert(offsetof(MaterialConstants, pixel_count) == 48, "MaterialConstants must match the GLSL push-constant block");
static_assert(offsetof(MaterialConstants, max_groups_x) == 76, "MaterialConstants must match the GLSL push-constant block");

}  // namespace vren::radix::detail
#else
struct MaterialDispatch {
  uint x;
  uint y;
  uint z;
};

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer MaterialReadUints { uint data[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer MaterialWriteUints { uint data[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer MaterialUints { uint data[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer MaterialDispatches {
  MaterialDispatch data[];
};

layout(push_constant, std430) uniform MaterialConstants {
  MaterialReadUints material_ids;
  MaterialUints chunk_counts;
  MaterialUints counts;
  MaterialUints offsets;
  MaterialDispatches dispatch;
  MaterialWriteUints new_to_old;
  uint pixel_count;
  uint material_count;
  uint chunk_count;
  uint rounds;
  uint alignment;
  uint void_material;
  uint shading_workgroup_size;
  uint max_groups_x;
} pc;
#endif

#endif
