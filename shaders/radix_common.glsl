// Helpers shared by the radix passes.
//
// Per-thread digit histograms live in registers as sixteen 16-bit counters packed into two uvec4:
// bin b is component (b >> 1) & 3 of `lo` (b < 8) or `hi` (b >= 8), at bit (b & 1) * 16.
// A tile holds at most 32768 keys, so no counter, prefix or local position overflows 16 bits,
// and subgroup adds over the packed words never carry between counters.

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

#include "radix_shared.h"

const uint BINS = VREN_RADIX_BINS;
// Bin of the tile slots past the last key: the last bin, so they sort behind every real key.
const uint PADDING_BIN = BINS - 1u;

// Tiles may be dispatched as a 2D grid when there are more than maxComputeWorkGroupCount[0].
uint tile_index() {
  return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

// The thread's place in input order: subgroup-major, so a subgroup scan ranks threads in order
// without assuming how the driver maps gl_LocalInvocationIndex to subgroups.
uint ordered_thread() {
  return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
}

uint bin_of(uint key) {
  uint digit = (key >> pc.shift) & pc.digit_mask;
  return (pc.flags & VREN_RADIX_FLAG_DESCENDING) != 0u ? pc.digit_mask - digit : digit;
}

void add_to_bin(inout uvec4 lo, inout uvec4 hi, uint bin) {
  uvec4 one = uvec4(equal(uvec4((bin >> 1u) & 3u), uvec4(0u, 1u, 2u, 3u))) << ((bin & 1u) * 16u);
  bool low_half = bin < 8u;
  lo += low_half ? one : uvec4(0u);
  hi += low_half ? uvec4(0u) : one;
}

uint bin_counter(uvec4 lo, uvec4 hi, uint bin) {
  uint word = bin < 8u ? lo[(bin >> 1u) & 3u] : hi[(bin >> 1u) & 3u];
  return (word >> ((bin & 1u) * 16u)) & 0xFFFFu;
}
