#version 460
// Radix pass, step 1 of 3: count each tile's keys per digit.
//
// Each workgroup counts COUNT_TILES consecutive tiles of WORKGROUP_SIZE * KEYS_PER_THREAD keys
// (more keys per workgroup than the scatter can hold amortise the per-workgroup work). Order does
// not matter for counting, so threads read each tile in coalesced (16-byte, for full tiles of
// 32-bit keys) loads. With 16 bins each subgroup has its own counters, summed per bin
// afterwards, because every subgroup hits the same few. Where packed_counts() allows (16 bins,
// at most 15 keys per thread, subgroup size x keys per thread at most 255: 32 lanes x 4 keys, not
// 64 x 4 or 32 x 8), a thread counts its keys of a tile in sixteen 4-bit counters packed in two
// words, and the subgroup adds them, widened to bytes, with four subgroup additions per tile.
// Otherwise, and for 256 bins, one subgroup ballot per digit bit gives the lanes that share a
// key's bin, and the lowest of them adds their number to the counter for that bin (distinct
// bins, distinct counters: no contention inside a subgroup); 256 bins spread the adds enough to
// share one set per tile (and per-subgroup sets would not fit in shared memory). No global
// atomics.
// Output: counts[tile * bins + bin], contiguous per tile, and their sums over this workgroup's
// tiles, group_sums[bin * num_groups + group]: the scan pass makes the group sums global, and
// the scatter adds the counts of the earlier tiles of its group.
// Tile 0 also presets the next pass's input parity (flipped: this pass will scatter); the scan
// pass undoes that when it finds the pass can be skipped.
//
// Shared memory: COUNT_TILES * (COUNTER_SETS + 1) * BINS * 4 bytes (packed counters use 4 of
// each set's 16 words).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;
layout(constant_id = VREN_RADIX_SPEC_COUNT_TILES) const uint COUNT_TILES = 4;

#ifdef VREN_RADIX_KEY64
const bool VECTOR_LOADS = false;
#else
const bool VECTOR_LOADS = KEYS_PER_THREAD % 4u == 0u;
#endif

// Counter sets per tile: one per subgroup for 16 bins, one shared by all for more.
const uint COUNTER_SETS = BINS <= 16u ? MAX_SUBGROUPS : 1u;
uint counter_set() { return BINS <= 16u ? gl_SubgroupID : 0u; }
uint counter_sets_used() { return BINS <= 16u ? gl_NumSubgroups : 1u; }

shared uint s_subgroup_bins[COUNT_TILES * COUNTER_SETS * BINS];  // [tile of this workgroup][set][bin]
shared uint s_tile_bins[COUNT_TILES * BINS];                    // [tile of this workgroup][bin]

// 16 bins, packed: a thread counts its keys of a tile in 4-bit counters, bins 0-7 in `low` and
// 8-15 in `high` (at most 15 keys per thread and tile), and the subgroup adds them once per tile,
// widened to bytes (at most 255 per bin and subgroup): a few instructions per key where the
// ballots take five ballots, a bit count and a shared atomic, and four subgroup additions per
// tile.
bool packed_counts() {
  return BINS == 16u && KEYS_PER_THREAD <= 15u && gl_SubgroupSize * KEYS_PER_THREAD <= 255u;
}

// Counts one key of a tile (if `counted`): in this thread's packed counters, or, the subgroup
// voting, into the subgroup's counter set.
void count_key(uint bin, bool counted, bool packed, uint subgroup_bins, inout uint low, inout uint high) {
  if (packed) {
    const uint one = counted ? 1u << ((bin & 7u) * 4u) : 0u;
    if (bin < 8u) low += one;
    else high += one;
  } else {
    const uvec4 peers = peers_of(bin, counted);
    if (counted && subgroupBallotExclusiveBitCount(peers) == 0u)
      atomicAdd(s_subgroup_bins[subgroup_bins + bin], subgroupBallotBitCount(peers));
  }
}

// Four 4-bit counters (the low 16 bits of x) as four bytes.
uint nibbles_to_bytes(uint x) {
  x = (x | (x << 8u)) & 0x00FF00FFu;
  return (x | (x << 4u)) & 0x0F0F0F0Fu;
}

// The subgroup's totals of one tile into its counter set, one byte per bin in the set's first
// four words (written, not added: the set is the subgroup's alone, and each tile is counted
// once); counter() reads them.
void store_packed(uint low, uint high, uint subgroup_bins) {
  const uvec4 bytes = uvec4(subgroupAdd(nibbles_to_bytes(low & 0xFFFFu)), subgroupAdd(nibbles_to_bytes(low >> 16u)),
                            subgroupAdd(nibbles_to_bytes(high & 0xFFFFu)), subgroupAdd(nibbles_to_bytes(high >> 16u)));
  if (subgroupElect()) {
    [[unroll]] for (uint w = 0u; w < 4u; ++w) s_subgroup_bins[subgroup_bins + w] = bytes[w];
  }
}

// A bin's count in a counter set.
uint counter(uint subgroup_bins, uint bin, bool packed) {
  if (!packed) return s_subgroup_bins[subgroup_bins + bin];
  return (s_subgroup_bins[subgroup_bins + bin / 4u] >> ((bin % 4u) * 8u)) & 0xFFu;
}

void main() {
  const uint first_tile = tile_index() * COUNT_TILES;
  const uint tiles = tile_count();
  if (first_tile >= tiles) return;  // uniform per workgroup: the 2D grid's overhang
  const uint tile_size = gl_WorkGroupSize.x * KEYS_PER_THREAD;
  const uint thread = gl_LocalInvocationIndex;
  const uint input_parity = parity(pc.pass);
  ReadUints keys_in = ReadUints(pc.keys[input_parity]);
  ReadUvec4s keys4 = ReadUvec4s(pc.keys[input_parity]);
  if (first_tile == 0u && thread == 0u) set_next_parity(input_parity ^ 1u);

  // 1. Count this thread's share of each tile into the subgroup's counters for that tile.
  // Counters that ballots add to start at zero; packed ones are written whole by store_packed().
  const bool packed = packed_counts();
  if (BINS <= 16u && !packed) {
    for (uint j = gl_SubgroupInvocationID; j < COUNT_TILES * BINS; j += gl_SubgroupSize)
      s_subgroup_bins[((j / BINS) * COUNTER_SETS + counter_set()) * BINS + j % BINS] = 0u;
    subgroup_barrier_shared();  // the subgroup's counters zeroed before its first add
  } else if (BINS > 16u) {
    for (uint j = thread; j < COUNT_TILES * BINS; j += gl_WorkGroupSize.x) s_subgroup_bins[j] = 0u;
    barrier();  // the shared counters zeroed before the first add
  }
  const uint full_tiles = element_count() / tile_size;
  if (VECTOR_LOADS && first_tile + COUNT_TILES <= full_tiles) {
    // Every tile full (all workgroups but the last): issue all the loads before counting, so
    // that each thread has COUNT_TILES * KEYS_PER_THREAD * 4 bytes in flight at once.
    const uint vectors = KEYS_PER_THREAD / 4u;
    uvec4 k[COUNT_TILES * ((KEYS_PER_THREAD + 3u) / 4u)];  // never an empty array (vector loads need K >= 4)
    [[unroll]] for (uint t = 0u; t < COUNT_TILES; ++t) {
      [[unroll]] for (uint i = 0u; i < vectors; ++i)
        k[t * vectors + i] = keys4.data[(first_tile + t) * tile_size / 4u + i * gl_WorkGroupSize.x + thread];
    }
    [[unroll]] for (uint t = 0u; t < COUNT_TILES; ++t) {
      const uint subgroup_bins = (t * COUNTER_SETS + counter_set()) * BINS;
      uint low = 0u, high = 0u;
      [[unroll]] for (uint i = 0u; i < vectors; ++i) {
        [[unroll]] for (uint j = 0u; j < 4u; ++j)
          count_key(bin_of(Key(k[t * vectors + i][j])), true, packed, subgroup_bins, low, high);
      }
      if (packed) store_packed(low, high, subgroup_bins);
    }
  } else [[unroll]] for (uint t = 0u; t < COUNT_TILES; ++t) {
    const uint tile = first_tile + t;
    if (tile >= tiles) break;  // uniform
    const uint tile_begin = tile * tile_size;
    const uint tile_keys = min(tile_size, element_count() - tile_begin);
    const uint subgroup_bins = (t * COUNTER_SETS + counter_set()) * BINS;
    uint low = 0u, high = 0u;
    if (VECTOR_LOADS && tile_keys == tile_size) {
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD / 4u; ++i) {
        const uvec4 k = keys4.data[tile_begin / 4u + i * gl_WorkGroupSize.x + thread];
        [[unroll]] for (uint j = 0u; j < 4u; ++j) count_key(bin_of(Key(k[j])), true, packed, subgroup_bins, low, high);
      }
    } else {
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
        const uint slot = i * gl_WorkGroupSize.x + thread;
        const bool valid = slot < tile_keys;
        const uint bin = valid ? bin_of(load_key(keys_in, tile_begin + slot)) : 0u;
        count_key(bin, valid, packed, subgroup_bins, low, high);
      }
    }
    if (packed) store_packed(low, high, subgroup_bins);
  }
  barrier();  // every subgroup's counters visible to the per-bin threads

  // 2. Sum over the counter sets, one thread per tile and bin; then over the tiles, per bin.
  for (uint j = thread; j < COUNT_TILES * BINS; j += gl_WorkGroupSize.x) {
    const uint t = j / BINS, bin = j % BINS;
    uint total = 0u;
    if (first_tile + t < tiles) {
      for (uint s = 0u; s < counter_sets_used(); ++s) total += counter((t * COUNTER_SETS + s) * BINS, bin, packed);
      pc.internal.data[counts_at(bin, first_tile + t)] = total;
    }
    s_tile_bins[j] = total;
  }
  barrier();  // every tile's totals visible to the per-bin threads
  for (uint bin = thread; bin < BINS; bin += gl_WorkGroupSize.x) {
    uint total = 0u;
    for (uint t = 0u; t < COUNT_TILES; ++t) total += s_tile_bins[t * BINS + bin];
    pc.internal.data[group_sums_at(bin, tile_index(), COUNT_TILES)] = total;
  }
}
