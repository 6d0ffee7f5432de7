#version 460
// Radix pass, step 1 of 3: count each tile's keys per digit.
//
// Each workgroup owns one tile of WORKGROUP_SIZE * KEYS_PER_THREAD consecutive keys. Order does
// not matter for counting, so threads read the tile in coalesced 16-byte loads, count their keys
// in packed registers (see radix_common.glsl), subgroups sum them with subgroupAdd, and the
// subgroup sums are added in shared memory. No atomics.
// Output: counts[bin * num_tiles + tile], digit-major so that the scan pass makes them global.
//
// Shared memory: 2 * MAX_SUBGROUPS * 16 bytes (2 KiB for 64 subgroups).
#extension GL_GOOGLE_include_directive : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;

const bool VECTOR_LOADS = KEYS_PER_THREAD % 4u == 0u;

shared uvec4 s_subgroup_lo[MAX_SUBGROUPS];
shared uvec4 s_subgroup_hi[MAX_SUBGROUPS];

void main() {
  const uint tile = tile_index();
  if (tile >= pc.num_tiles) return;  // uniform per workgroup: the 2D grid's overhang
  const uint tile_size = gl_WorkGroupSize.x * KEYS_PER_THREAD;
  const uint tile_begin = tile * tile_size;
  const uint tile_keys = min(tile_size, pc.count - tile_begin);
  const uint thread = gl_LocalInvocationIndex;

  // 1. Count this thread's share of the tile.
  uvec4 lo = uvec4(0u), hi = uvec4(0u);
  if (VECTOR_LOADS && tile_keys == tile_size) {
    ReadUvec4s keys4 = ReadUvec4s(pc.keys_in);
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD / 4u; ++i) {
      const uvec4 k = keys4.data[tile_begin / 4u + i * gl_WorkGroupSize.x + thread];
      add_to_bin(lo, hi, bin_of(k.x));
      add_to_bin(lo, hi, bin_of(k.y));
      add_to_bin(lo, hi, bin_of(k.z));
      add_to_bin(lo, hi, bin_of(k.w));
    }
  } else {
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
      const uint slot = i * gl_WorkGroupSize.x + thread;
      if (slot < tile_keys) add_to_bin(lo, hi, bin_of(pc.keys_in.data[tile_begin + slot]));
    }
  }

  // 2. Sum over the subgroup.
  lo = subgroupAdd(lo);
  hi = subgroupAdd(hi);
  if (subgroupElect()) {
    s_subgroup_lo[gl_SubgroupID] = lo;
    s_subgroup_hi[gl_SubgroupID] = hi;
  }
  barrier();  // subgroup sums visible to the threads that add them up

  // 3. Sum over the workgroup, one thread per bin.
  const uint bin = thread;
  if (bin < BINS) {
    uint total = 0u;
    for (uint s = 0u; s < gl_NumSubgroups; ++s) total += bin_counter(s_subgroup_lo[s], s_subgroup_hi[s], bin);
    pc.counts.data[bin * pc.num_tiles + tile] = total;
  }
}
