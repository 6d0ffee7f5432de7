#version 460
// Radix pass, step 3 of 3: rank each key within its tile and scatter it to its global place.
//
// Same tiles as the count pass. A key's destination is
//   digit_base[bin] + offsets[bin][tile]            (global: scan pass + lower bins' totals)
//   + rank of the key among its tile's keys of that bin, in input order  (workgroup-local)
// Ranks are stable because each thread owns KEYS_PER_THREAD consecutive keys and threads are
// ranked in input order (ordered_thread): rank = keys of the bin in earlier subgroups
// + in earlier lanes of this subgroup (subgroupExclusiveAdd) + earlier keys of this thread.
// The tile is loaded with coalesced reads into shared memory, where each thread picks up its
// consecutive keys; after ranking, the keys are sorted by bin inside the tile in shared memory,
// so that the global writes of one bin come from consecutive threads to consecutive addresses.
//
// Shared memory (bytes), T = WORKGROUP_SIZE * KEYS_PER_THREAD, P = T + T / 32, S = MAX_SUBGROUPS:
//   s_keys        4 P      the tile: first as loaded (padded), then in bin order
//   s_values      4 P      their values (VALUE_SLOTS = 1 when sorting keys only)
//   s_subgroup_*  32 S     packed per-subgroup bin counts
//   s_subgroup_base 64 S   per-subgroup start inside each bin
//   s_bin_*       192      tile totals, tile-local starts, global destination bases
#extension GL_GOOGLE_include_directive : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;
layout(constant_id = VREN_RADIX_SPEC_VALUE_SLOTS) const uint VALUE_SLOTS = 1;

const bool WITH_VALUES = VALUE_SLOTS > 1u;
const uint TILE_SIZE = gl_WorkGroupSize.x * KEYS_PER_THREAD;
const bool VECTOR_LOADS = KEYS_PER_THREAD % 4u == 0u;

shared uint s_keys[TILE_SIZE + TILE_SIZE / 32u];
shared uint s_values[VALUE_SLOTS];
shared uvec4 s_subgroup_lo[MAX_SUBGROUPS];
shared uvec4 s_subgroup_hi[MAX_SUBGROUPS];
shared uint s_subgroup_base[MAX_SUBGROUPS * BINS];
shared uint s_bin_total[BINS];
shared uint s_bin_start[BINS];
shared uint s_bin_destination[BINS];  // global index of tile slot 0 if it held this bin

// One padding word every 32: a thread reading KEYS_PER_THREAD consecutive slots hits distinct banks.
uint padded(uint slot) { return slot + (slot >> 5u); }

void main() {
  const uint tile = tile_index();
  if (tile >= pc.num_tiles) return;  // uniform per workgroup: the 2D grid's overhang
  const uint tile_begin = tile * TILE_SIZE;
  const uint tile_keys = min(TILE_SIZE, pc.count - tile_begin);

  // 1. Stage the tile in shared memory with coalesced loads. Slots past the end hold no key.
  const uint thread = gl_LocalInvocationIndex;
  if (VECTOR_LOADS && tile_keys == TILE_SIZE) {
    ReadUvec4s keys4 = ReadUvec4s(pc.keys_in);
    ReadUvec4s values4 = ReadUvec4s(pc.values_in);
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD / 4u; ++i) {
      const uint quad = i * gl_WorkGroupSize.x + thread;
      const uvec4 k = keys4.data[tile_begin / 4u + quad];
      [[unroll]] for (uint j = 0u; j < 4u; ++j) s_keys[padded(4u * quad + j)] = k[j];
      if (WITH_VALUES) {
        const uvec4 v = values4.data[tile_begin / 4u + quad];
        [[unroll]] for (uint j = 0u; j < 4u; ++j) s_values[padded(4u * quad + j)] = v[j];
      }
    }
  } else {
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
      const uint slot = i * gl_WorkGroupSize.x + thread;
      s_keys[padded(slot)] = slot < tile_keys ? pc.keys_in.data[tile_begin + slot] : 0xFFFFFFFFu;
      if (WITH_VALUES) s_values[padded(slot)] = slot < tile_keys ? pc.values_in.data[tile_begin + slot] : 0u;
    }
  }
  barrier();  // the staged tile is visible to every thread

  // Each thread takes KEYS_PER_THREAD consecutive keys and counts them per bin. Slots past the
  // end get the last bin, so they land behind every real key of the tile and are never written.
  const uint first = ordered_thread() * KEYS_PER_THREAD;
  uint keys[KEYS_PER_THREAD];
  uint values[KEYS_PER_THREAD];
  uvec4 lo = uvec4(0u), hi = uvec4(0u);
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    keys[i] = s_keys[padded(first + i)];
    if (WITH_VALUES) values[i] = s_values[padded(first + i)];
    add_to_bin(lo, hi, first + i < tile_keys ? bin_of(keys[i]) : PADDING_BIN);
  }

  // 2. Rank threads within the subgroup; publish subgroup totals.
  uvec4 rank_lo = subgroupExclusiveAdd(lo);
  uvec4 rank_hi = subgroupExclusiveAdd(hi);
  lo = subgroupAdd(lo);
  hi = subgroupAdd(hi);
  if (subgroupElect()) {
    s_subgroup_lo[gl_SubgroupID] = lo;
    s_subgroup_hi[gl_SubgroupID] = hi;
  }
  barrier();  // subgroup totals visible to the per-bin threads; every thread is done reading the staged tile

  // 3. Per bin: each subgroup's start inside the bin, and the tile's bin totals.
  const uint lane_bin = gl_LocalInvocationIndex;
  if (lane_bin < BINS) {
    uint running = 0u;
    for (uint s = 0u; s < gl_NumSubgroups; ++s) {
      s_subgroup_base[s * BINS + lane_bin] = running;
      running += bin_counter(s_subgroup_lo[s], s_subgroup_hi[s], lane_bin);
    }
    s_bin_total[lane_bin] = running;
  }
  barrier();  // bin totals visible to every per-bin thread

  // 4. Per bin: where the bin starts inside the tile, and globally.
  if (lane_bin < BINS) {
    uint tile_start = 0u;
    uint digit_base = 0u;
    for (uint b = 0u; b < lane_bin; ++b) {
      tile_start += s_bin_total[b];
      digit_base += pc.counts.data[BINS * pc.num_tiles + b];
    }
    s_bin_start[lane_bin] = tile_start;
    const uint global_start = digit_base + pc.counts.data[lane_bin * pc.num_tiles + tile];
    s_bin_destination[lane_bin] = global_start - tile_start;
  }
  barrier();  // starts visible to every thread

  // 5. Sort the tile by bin in shared memory.
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint bin = first + i < tile_keys ? bin_of(keys[i]) : PADDING_BIN;
    const uint local = s_bin_start[bin] + s_subgroup_base[gl_SubgroupID * BINS + bin] + bin_counter(rank_lo, rank_hi, bin);
    add_to_bin(rank_lo, rank_hi, bin);
    s_keys[local] = keys[i];
    if (WITH_VALUES) s_values[local] = values[i];
  }
  barrier();  // the tile is in bin order

  // 6. Write out: consecutive threads write consecutive slots of a bin.
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint slot = i * gl_WorkGroupSize.x + thread;
    if (slot < tile_keys) {
      const uint key = s_keys[slot];
      const uint destination = s_bin_destination[bin_of(key)] + slot;
      pc.keys_out.data[destination] = key;
      if (WITH_VALUES) pc.values_out.data[destination] = s_values[slot];
    }
  }
}
