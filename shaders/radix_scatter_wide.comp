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
// LOOKBACK: the whole pass in one dispatch, for sorts of few tiles (radix_sort.cpp bounds the
// tile count). The digit totals come from the histogram of every pass (radix_histogram.comp).
// The offsets, which the count and scan passes give otherwise, come from a decoupled look-back:
// each tile counts its keys per bin and publishes the counts (AGGREGATE) before it ranks them;
// one thread per bin then adds the published words of the earlier tiles, newest first, until
// one holds an inclusive prefix (PREFIX), and publishes its own. Tile 0 publishes its prefix at
// once. Nothing promises that a tile this one waits for is running (lavapipe runs each thread's
// block of workgroups in turn), and lavapipe silently leaves the loops of a shader invocation
// after 65535 iterations in all: so the polls of each thread are bounded, and a walk still
// waiting after them stops. The workgroup then counts the newest tile any walk stopped at from
// its keys, and the walks stopped there go on past it; at most one such round per earlier tile.
//
// Shared memory (bytes), T = WORKGROUP_SIZE * KEYS_PER_THREAD, S = MAX_SUBGROUPS, W = key words:
//   s_keys            4 W T      the tile in bin order
//   s_values          4 T        their values (VALUE_SLOTS = 1 when sorting keys only)
//   s_subgroup_bins   4 S BINS   running counts, then each subgroup's start inside each bin
//   s_bin_*           8 BINS     where each bin starts in the tile and globally; look-back: the
//                                tile's count per bin, a missing tile's count per bin
//   look-back flags   12
//   workgroup scan    4 (S + 1)
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_memory_scope_semantics : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;
layout(constant_id = VREN_RADIX_SPEC_VALUE_SLOTS) const uint VALUE_SLOTS = 1;
layout(constant_id = VREN_RADIX_SPEC_COUNT_TILES) const uint COUNT_TILES = 4;
layout(constant_id = VREN_RADIX_SPEC_LOOKBACK) const bool LOOKBACK = false;
// Drivers that compile volatile loads as plain ones, which a loop may hoist (lavapipe), poll
// with atomic loads; on NVIDIA those cost 10 us per 2^20-key sort (bench/RESULTS.md).
layout(constant_id = VREN_RADIX_SPEC_POLL_ATOMIC) const bool POLL_ATOMIC = true;
// Polls per thread of words not yet published, in all; 0: no word is read at all, every earlier
// tile is counted from its keys.
layout(constant_id = VREN_RADIX_SPEC_POLL_BUDGET) const uint POLL_BUDGET = 4096;

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
// Look-back, before step 2 needs those two arrays: the tile's keys per bin, and a missing tile's.
#define s_tile_count s_bin_start
#define s_missing s_bin_destination
shared uint s_stuck[2];  // per round parity: 1 + the newest tile a walk stopped at, 0 for none
shared bool s_skipped;   // every key has the same digit

// Look-back: published words hold a count or prefix in the low bits and one of these flags;
// 0 is unpublished.
const uint FLAG_AGGREGATE = 1u << 30u;
const uint FLAG_PREFIX = 1u << 31u;
const uint VALUE_MASK = FLAG_AGGREGATE - 1u;
const uint LOOKBACK_WINDOW = 8u;  // earlier tiles' words read at once

uint poll(uint at) {
  if (POLL_ATOMIC) return atomicLoad(pc.internal.data[at], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  return PublishedUints(pc.internal).data[at];
}
void publish(uint at, uint word) {
  if (POLL_ATOMIC) atomicStore(pc.internal.data[at], word, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  else PublishedUints(pc.internal).data[at] = word;
}
// This tile's inclusive prefix for `bin`, from the earlier tiles' keys of it.
void publish_prefix(uint set, uint tile, uint bin, uint exclusive) {
  publish(lookback_at(set, tile, bin), FLAG_PREFIX | (exclusive + s_tile_count[bin]));
}

// Walks `bin` back from tile `newest`, adding the published counts to `exclusive`, until a
// prefix (then publishes this tile's and clears `walking`) or a word still unpublished when the
// polls run out (then `newest` is that tile).
void walk_back(uint set, uint tile, uint bin, inout uint exclusive, inout uint newest, inout bool walking,
               inout uint polls_left) {
  for (;;) {
    const uint base = newest;
    uint words[LOOKBACK_WINDOW];
    [[unroll]] for (uint k = 0u; k < LOOKBACK_WINDOW; ++k) {
      if (base < k) words[k] = FLAG_PREFIX;  // below tile 0: nothing
      else words[k] = POLL_BUDGET > 0u ? poll(lookback_at(set, base - k, bin)) : 0u;
    }
    [[unroll]] for (uint k = 0u; k < LOOKBACK_WINDOW; ++k) {
      while ((words[k] & (FLAG_AGGREGATE | FLAG_PREFIX)) == 0u && polls_left > 0u) {
        --polls_left;
        words[k] = poll(lookback_at(set, base - k, bin));
      }
      if ((words[k] & (FLAG_AGGREGATE | FLAG_PREFIX)) == 0u) {
        newest = base - k;
        return;
      }
      exclusive += words[k] & VALUE_MASK;
      newest = base - k - 1u;
      if ((words[k] & FLAG_PREFIX) != 0u) {
        walking = false;
        publish_prefix(set, tile, bin, exclusive);
        return;
      }
    }
  }
}

// Slots past the end take the last bin: behind every real key of the tile, never written.
uint key_bin(Key key, uint slot, uint tile_keys) { return slot < tile_keys ? bin_of(key) : PADDING_BIN; }

void main() {
  const uint tile = tile_index();
  if (tile >= tile_count()) return;  // uniform per workgroup: the 2D grid's overhang
  const uint source = parity(pc.pass);
  const uint set = pc.pass & 1u;  // look-back: this pass's published words
  if (LOOKBACK) {
    // The next pass's words start unpublished. Skipped, as the histogram's totals tell.
    for (uint b = gl_LocalInvocationIndex; b < BINS; b += gl_WorkGroupSize.x) {
      pc.internal.data[lookback_at(set ^ 1u, tile, b)] = 0u;
      s_tile_count[b] = 0u;
    }
    if (gl_LocalInvocationIndex == 0u) {
      s_skipped = false;
      s_stuck[0] = 0u;
      s_stuck[1] = 0u;
    }
    barrier();  // flags and counts zeroed
    if ((pc.flags & VREN_RADIX_FLAG_NEVER_SKIP) == 0u) {
      for (uint b = gl_LocalInvocationIndex; b < BINS; b += gl_WorkGroupSize.x)
        if (state(pass_totals_at(pc.pass, b)) == element_count()) s_skipped = true;
    }
    barrier();  // the skip flag final
    if (tile == 0u && gl_LocalInvocationIndex == 0u) set_next_parity(s_skipped ? source : source ^ 1u);
    if (s_skipped) return;  // uniform: the keys stay where they are for the next pass
  } else if (parity(pc.pass + 1u) == source) {
    return;  // skipped: every key has the same digit
  }
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
  //    whole count groups, plus the counts of the group's tiles before this one (the look-back
  //    finds the offset below instead).
  uint digit_total[BINS_PER_THREAD];
  uint bin_offset[BINS_PER_THREAD];
  [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
    const uint bin = first_bin + j;
    digit_total[j] = bin < BINS ? state(LOOKBACK ? pass_totals_at(pc.pass, bin) : VREN_RADIX_STATE_TOTALS + bin) : 0u;
    bin_offset[j] = bin < BINS && !LOOKBACK ? tile_offset(bin, tile, COUNT_TILES) : 0u;
  }

  // 1. Rank each key among its subgroup's keys of the same bin, in input order.
  for (uint j = gl_SubgroupInvocationID; j < BINS; j += gl_SubgroupSize) s_subgroup_bins[subgroup_bins + j] = 0u;
  subgroupMemoryBarrierShared();
  subgroupBarrier();  // running counts zeroed before the first round reads them

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
  // Look-back: the tile's counts published before the ranking, so that later tiles rarely wait
  // for them; then this thread's bins walk back.
  uint exclusive[BINS_PER_THREAD], newest[BINS_PER_THREAD];
  bool walking[BINS_PER_THREAD];
  uint polls_left = POLL_BUDGET;
  if (LOOKBACK) {
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
      if (segment + i * gl_SubgroupSize + gl_SubgroupInvocationID < tile_keys) atomicAdd(s_tile_count[bin_of(keys[i])], 1u);
    }
    barrier();  // the tile's counts complete
    [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
      const uint bin = first_bin + j;
      if (bin < BINS) publish(lookback_at(set, tile, bin), (tile == 0u ? FLAG_PREFIX : FLAG_AGGREGATE) | s_tile_count[bin]);
      walking[j] = bin < BINS && tile > 0u;
      exclusive[j] = 0u;
      newest[j] = tile - 1u;
      if (walking[j]) walk_back(set, tile, bin, exclusive[j], newest[j], walking[j], polls_left);
    }
  }
  // Bins are recomputed where needed rather than kept: registers decide how many workgroups
  // share an SM.
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint bin = key_bin(keys[i], segment + i * gl_SubgroupSize + gl_SubgroupInvocationID, tile_keys);
    const uvec4 peers = peers_of(bin, true);
    const uint below = subgroupBallotExclusiveBitCount(peers);
    const uint running = s_subgroup_bins[subgroup_bins + bin];
    ranks[i] = running + below;
    subgroupMemoryBarrierShared();
    subgroupBarrier();  // every peer has read the running count before the lowest one adds
    if (below == 0u) s_subgroup_bins[subgroup_bins + bin] = running + subgroupBallotBitCount(peers);
    subgroupMemoryBarrierShared();
    subgroupBarrier();  // the next round reads the updated counts
  }
  if (LOOKBACK) {
    [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j)
      if (walking[j]) atomicMax(s_stuck[0], newest[j] + 1u);
  }
  barrier();  // every subgroup's counts visible to the per-bin threads; look-back: stopped walks known
  if (LOOKBACK) {
    // Walks stopped at an unpublished word: the workgroup counts the newest such tile, and the
    // walks stopped there go on past it, until none is stopped.
    for (uint round = 0u;; ++round) {  // uniform
      const uint stuck = s_stuck[round & 1u];
      if (stuck == 0u) break;
      if (gl_LocalInvocationIndex == 0u) s_stuck[(round + 1u) & 1u] = 0u;  // last read a round ago
      const uint missing = stuck - 1u;
      for (uint b = gl_LocalInvocationIndex; b < BINS; b += gl_WorkGroupSize.x) s_missing[b] = 0u;
      barrier();  // zeroed
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
        const uint index = missing * TILE_SIZE + i * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
        if (index < element_count()) atomicAdd(s_missing[bin_of(load_key(keys_in, index))], 1u);
      }
      barrier();  // the missing tile counted
      [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
        const uint bin = first_bin + j;
        if (walking[j] && newest[j] == missing) {
          exclusive[j] += s_missing[bin];
          newest[j] = missing - 1u;
          if (missing == 0u) {  // tile 0's count is its prefix
            walking[j] = false;
            publish_prefix(set, tile, bin, exclusive[j]);
          } else {
            walk_back(set, tile, bin, exclusive[j], newest[j], walking[j], polls_left);
          }
        }
        if (walking[j]) atomicMax(s_stuck[(round + 1u) & 1u], newest[j] + 1u);
      }
      barrier();  // the next round's stopped walks known
    }
    [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) bin_offset[j] = exclusive[j];
  }

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
