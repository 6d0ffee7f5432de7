#version 460
// Radix pass, step 3 of 3, for wide digits (256 bins): rank each key within its tile and
// scatter it to its global place. The same contract as radix_scatter.comp; only the ranking
// differs, because per-round counters for 256 bins would not fit in shared memory.
//
// Ranking: subgroup s owns the contiguous segment of SUBGROUP_SIZE * KEYS_PER_THREAD keys
// starting at s * SUBGROUP_SIZE * KEYS_PER_THREAD and walks it in KEYS_PER_THREAD rounds of one
// coalesced key per lane, keeping a running count per bin in shared memory. In each round the
// ballots over the digit's bits give each lane its peers (the lanes holding the same bin); a
// key's rank is the bin's running count plus its peers below it, and the lowest peer then adds
// the round's peers to the count. Rounds follow input order, so the ranks are stable; the
// subgroups' counts, scanned per bin across subgroups and then across bins, make them
// tile-wide.
//
// Shared memory (bytes), T = WORKGROUP_SIZE * KEYS_PER_THREAD, S = MAX_SUBGROUPS, W = key words:
//   s_keys            4 W T      the tile in bin order
//   s_values          4 T        their values (VALUE_SLOTS = 1 when sorting keys only)
//   s_subgroup_bins   4 S BINS   running counts, then each subgroup's start inside each bin
//   s_bin_*           8 BINS     where each bin starts in the tile and globally
//   workgroup scan    4 (S + 1)
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;
layout(constant_id = VREN_RADIX_SPEC_VALUE_SLOTS) const uint VALUE_SLOTS = 1;
layout(constant_id = VREN_RADIX_SPEC_COUNT_TILES) const uint COUNT_TILES = 4;

#include "workgroup_scan.glsl"

const bool WITH_VALUES = VALUE_SLOTS > 1u;
const uint TILE_SIZE = gl_WorkGroupSize.x * KEYS_PER_THREAD;
// Each thread owns this many consecutive bins in the per-bin steps (workgroups may be smaller
// than the bin count).
const uint BINS_PER_THREAD = (BINS + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;

shared Key s_keys[TILE_SIZE];
shared uint s_values[VALUE_SLOTS];
shared uint s_subgroup_bins[MAX_SUBGROUPS * BINS];
shared uint s_bin_start[BINS];        // where each bin starts inside the tile
shared uint s_bin_destination[BINS];  // global index of tile slot 0 if it held this bin
// Slots past the end take the last bin: behind every real key of the tile, never written.
uint key_bin(Key key, uint slot, uint tile_keys) { return slot < tile_keys ? bin_of(key) : PADDING_BIN; }

void main() {
  const uint tile = tile_index();
  if (tile >= tile_count()) return;  // uniform per workgroup: the 2D grid's overhang
  const uint source = parity(pc.pass);
  if (parity(pc.pass + 1u) == source) return;  // skipped: every key has the same digit
  ReadUints keys_in = ReadUints(pc.keys[source]);
  ReadUints values_in = ReadUints(pc.values[source]);
  WriteUints keys_out = WriteUints(pc.keys[source ^ 1u]);
  WriteUints values_out = WriteUints(pc.values[source ^ 1u]);
  const uint tile_begin = tile * TILE_SIZE;
  const uint tile_keys = min(TILE_SIZE, element_count() - tile_begin);
  const uint thread = gl_LocalInvocationIndex;
  const uint subgroup_bins = gl_SubgroupID * BINS;
  const bool index_values = (pc.flags & VREN_RADIX_FLAG_INDEX_VALUES) != 0u;
  const uint first_bin = ordered_thread() * BINS_PER_THREAD;  // this thread's bins in steps 0, 2

  // 0. Step 2's global inputs, loaded first so that their latency hides behind the ranking: for
  //    this thread's bins, the digit total and the tile's offset from the scan, which covered
  //    whole count groups, plus the counts of the group's tiles before this one.
  uint digit_total[BINS_PER_THREAD];
  uint bin_offset[BINS_PER_THREAD];
  [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
    const uint bin = first_bin + j;
    digit_total[j] = bin < BINS ? state(VREN_RADIX_STATE_TOTALS + bin) : 0u;
    bin_offset[j] = bin < BINS ? tile_offset(bin, tile, COUNT_TILES) : 0u;
  }

  // 1. Rank each key among its subgroup's keys of the same bin, in input order.
  for (uint j = gl_SubgroupInvocationID; j < BINS; j += gl_SubgroupSize) s_subgroup_bins[subgroup_bins + j] = 0u;
  subgroup_barrier_shared();  // running counts zeroed before the first round reads them

  const uint segment = gl_SubgroupID * gl_SubgroupSize * KEYS_PER_THREAD;
  Key keys[KEYS_PER_THREAD];
  uint values[KEYS_PER_THREAD];
  uint ranks[KEYS_PER_THREAD];
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint slot = segment + i * gl_SubgroupSize + gl_SubgroupInvocationID;
    const bool valid = slot < tile_keys;
    keys[i] = valid ? load_key(keys_in, tile_begin + slot) : NO_KEY;
    if (WITH_VALUES) values[i] = index_values ? tile_begin + slot : (valid ? values_in.data[tile_begin + slot] : 0u);
  }
  // Bins are recomputed where needed rather than kept: registers decide how many workgroups
  // share an SM.
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint bin = key_bin(keys[i], segment + i * gl_SubgroupSize + gl_SubgroupInvocationID, tile_keys);
    const uvec4 peers = peers_of(bin, true);
    const uint below = subgroupBallotExclusiveBitCount(peers);
    const uint running = s_subgroup_bins[subgroup_bins + bin];
    ranks[i] = running + below;
    subgroup_barrier_shared();  // every peer has read the running count before the lowest one adds
    if (below == 0u) s_subgroup_bins[subgroup_bins + bin] = running + subgroupBallotBitCount(peers);
    subgroup_barrier_shared();  // the next round reads the updated counts
  }
  barrier();  // every subgroup's counts visible to the per-bin threads

  // 2. Per bin: each subgroup's start inside the bin and the bin's tile total; then, by scans
  //    across the bins, where each bin starts inside the tile and in the output.
  uint tile_total[BINS_PER_THREAD];
  uint thread_tile_sum = 0u, thread_digit_sum = 0u;
  [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
    const uint bin = first_bin + j;
    tile_total[j] = 0u;
    if (bin < BINS) {
      for (uint s = 0u; s < gl_NumSubgroups; ++s) {
        const uint count = s_subgroup_bins[s * BINS + bin];
        s_subgroup_bins[s * BINS + bin] = tile_total[j];
        tile_total[j] += count;
      }
    }
    thread_tile_sum += tile_total[j];
    thread_digit_sum += digit_total[j];
  }
  uint unused_total;
  uint tile_start = workgroup_exclusive_add(thread_tile_sum, unused_total);
  uint digit_base = workgroup_exclusive_add(thread_digit_sum, unused_total);
  [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
    const uint bin = first_bin + j;
    if (bin < BINS) {
      s_bin_start[bin] = tile_start;
      s_bin_destination[bin] = digit_base + bin_offset[j] - tile_start;
    }
    tile_start += tile_total[j];
    digit_base += digit_total[j];
  }
  barrier();  // starts and destinations visible to every thread

  // 3. Sort the tile by bin in shared memory.
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint bin = key_bin(keys[i], segment + i * gl_SubgroupSize + gl_SubgroupInvocationID, tile_keys);
    const uint local = s_bin_start[bin] + s_subgroup_bins[subgroup_bins + bin] + ranks[i];
    s_keys[local] = keys[i];
    if (WITH_VALUES) s_values[local] = values[i];
  }
  barrier();  // the tile is in bin order

  // 4. Write out: consecutive threads write consecutive slots of a bin.
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint slot = i * gl_WorkGroupSize.x + thread;
    if (slot < tile_keys) {
      const Key key = s_keys[slot];
      const uint index = s_bin_destination[bin_of(key)] + slot;
      store_key(keys_out, index, key);
      if (WITH_VALUES) values_out.data[index] = s_values[slot];
    }
  }
}
