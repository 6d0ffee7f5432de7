// Constants and push-constant layout shared by the C++ record path and the GLSL passes.
// Compiled by both: C++ sees plain integers, GLSL sees buffer references.
#ifndef VREN_RADIX_SHARED_H
#define VREN_RADIX_SHARED_H

#define VREN_RADIX_DIGIT_BITS 4
#define VREN_RADIX_BINS 16

// Specialization-constant IDs.
#define VREN_RADIX_SPEC_WORKGROUP_SIZE 0
#define VREN_RADIX_SPEC_KEYS_PER_THREAD 1
#define VREN_RADIX_SPEC_MAX_SUBGROUPS 2
#define VREN_RADIX_SPEC_VALUE_SLOTS 3

// PassConstants.flags
#define VREN_RADIX_FLAG_DESCENDING 1u

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vren::radix::detail {
struct PassConstants {
  uint64_t keys_in;
  uint64_t keys_out;
  uint64_t values_in;
  uint64_t values_out;
  uint64_t counts;
  uint32_t count;
  uint32_t num_tiles;
  uint32_t shift;
  uint32_t digit_mask;
  uint32_t flags;
  uint32_t pad0;
};
static_assert(sizeof(PassConstants) == 64, "PassConstants must match the GLSL push-constant block");
static_assert(offsetof(PassConstants, count) == 40, "PassConstants must match the GLSL push-constant block");
}  // namespace vren::radix::detail
#else
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer ReadUints { uint data[]; };
// The same memory read 16 bytes at a time; every buffer address is 16-byte aligned.
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer ReadUvec4s { uvec4 data[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer WriteUints { uint data[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Uints { uint data[]; };

// counts: digit-major per-tile counts [BINS][num_tiles], then the BINS digit totals.
layout(push_constant, std430) uniform PassConstants {
  ReadUints keys_in;
  WriteUints keys_out;
  ReadUints values_in;
  WriteUints values_out;
  Uints counts;
  uint count;
  uint num_tiles;
  uint shift;
  uint digit_mask;
  uint flags;
  uint pad0;
} pc;
#endif

#endif
