#version 460
// Small sorts in one dispatch: a single workgroup sorts all the keys (at most TILE_SIZE) in
// shared memory, every pass of 8-bit digits, and writes them out once, to the buffer the pass
// count's parity names (as the multi-pass sort would leave them). No setup, count, scan or
// copy dispatch, and no barrier between dispatches: a sort of 1024 keys costs one launch.
//
// Each pass ranks the keys as radix_scatter_wide.comp ranks a tile: subgroup s owns the
// contiguous segment of SUBGROUP_SIZE * R slots starting at s * SUBGROUP_SIZE * R and walks it
// in R rounds of one slot per lane, keeping a running count per bin; R = ceil(count /
// WORKGROUP_SIZE) <= KEYS_PER_THREAD, so that every subgroup takes a share of a small sort. A
// key's rank is the bin's running count plus its peers below it in the round, found by the OR
// matcher in s_keys's words (radix_match_or.glsl) where they fit, else by ballots over the digit's bits.
// Rounds follow slot order, so the ranks are stable. The subgroups' counts, scanned per bin
// across subgroups and then across bins, give each key its new slot, and the keys move there in
// shared memory for the next pass.
// Slots past the count take the last bin and so stay behind every key. Passes whose digit is
// the same for every key move nothing and are not skipped: the result's buffer depends only on
// the pass count.
//
// pc.pass is the pass count, pc.shift the begin bit, pc.end_bit the end bit; the digit mask and
// the descending flip of each pass follow from them as in recordSort. The count is pc.count, or
// for cmdSortIndirect the GPU-side count clamped to it; the internal buffer is not used.
//
// Segmented sorts (VREN_RADIX_FLAG_SEGMENTED): workgroup s sorts segment s (radix_segments.glsl)
// the same way, its first TILE_SIZE elements (the caller promised no more), argsort's values
// being input indices, and writes it to the temp buffers at the segment's offsets, or with
// pc.k > 0 its first k elements to the outputs at s * k (top-k).
//
// Shared memory (bytes), T = WORKGROUP_SIZE * KEYS_PER_THREAD, S = MAX_SUBGROUPS, W = key words:
//   s_keys            4 W T      the keys in the current pass's order; during a pass's rounds,
//                                the OR matcher's words (4 BINS per 32 threads)
//   s_values          4 T        their values (the sorter gives every shape VALUE_SLOTS = T)
//   s_subgroup_bins   2 S BINS   running counts, then each subgroup's start inside each bin:
//                                16 bits each (a count is at most T <= 4096), two bins a word
//   s_bin_start       4 BINS     where each bin starts
//   workgroup scan    4 (S + 1)
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "radix_common.glsl"
#include "radix_segments.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 4;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;
layout(constant_id = VREN_RADIX_SPEC_VALUE_SLOTS) const uint VALUE_SLOTS = 1;

#include "workgroup_scan.glsl"

const uint TILE_SIZE = gl_WorkGroupSize.x * KEYS_PER_THREAD;
// Each thread owns an even number of consecutive bins in step 2, so that no two threads write
// halves of one counter word.
const uint BINS_PER_THREAD = ((BINS + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x + 1u) / 2u * 2u;
const uint HALF_BINS = BINS / 2u;

shared Key s_keys[TILE_SIZE];
shared uint s_values[VALUE_SLOTS];
shared uint s_subgroup_bins[MAX_SUBGROUPS * HALF_BINS];

// Subgroup s's 16-bit counter of `bin`: its word, and its shift in the word.
uint counter_word(uint s, uint bin) { return s * HALF_BINS + (bin >> 1u); }
uint counter_shift(uint bin) { return (bin & 1u) << 4u; }
uint counter(uint s, uint bin) { return (s_subgroup_bins[counter_word(s, bin)] >> counter_shift(bin)) & 0xFFFFu; }
shared uint s_bin_start[BINS];

// The OR matcher (radix_match_or.glsl): during a pass's rounds the keys are in registers, so
// s_keys lends its words where they fit (32-bit keys); else ballots.
#ifdef VREN_RADIX_KEY64
bool matching_or() { return false; }  // s_keys holds uvec2
#else
#define MATCH_OR_WORDS s_keys
#include "radix_match_or.glsl"
bool matching_or() { return MATCH_OR_SIZE <= TILE_SIZE && match_or_runs(); }
#endif

void main() {
  const bool segmented = (pc.flags & VREN_RADIX_FLAG_SEGMENTED) != 0u;
  uint count = pc.count;
  uint base = 0u;  // the first element's index in the buffers
  if (segmented) {
    if (tile_index() >= segments_in_use()) return;  // uniform: the whole workgroup
    const uvec2 range = segment_range(tile_index());
    if (!length_taken(range.y - range.x)) return;  // uniform: another way sorts it
    base = range.x;
    count = min(range.y - range.x, TILE_SIZE);
  } else if ((pc.flags & VREN_RADIX_FLAG_INDIRECT) != 0u) {
    count = min(pc.count_address.data[0], pc.count);
  }
  const bool with_values = (pc.flags & VREN_RADIX_FLAG_VALUES) != 0u;
  const bool index_values = (pc.flags & VREN_RADIX_FLAG_INDEX_VALUES) != 0u;
  const bool descending = (pc.flags & VREN_RADIX_FLAG_DESCENDING) != 0u;
  const uint thread = gl_LocalInvocationIndex;
  const uint first_bin = ordered_thread() * BINS_PER_THREAD;  // this thread's bins in step 2
  // Rounds per pass: the keys spread over every subgroup, whatever the count (uniform).
  const uint rounds = (count + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;
  const uint segment = gl_SubgroupID * gl_SubgroupSize * rounds;

  // 0. Load the keys into shared memory, coalesced; argsort's values are the input indices.
  ReadUints keys_in = ReadUints(pc.keys[0]);
  ReadUints values_in = ReadUints(pc.values[0]);
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint slot = i * gl_WorkGroupSize.x + thread;
    if (slot < count) {
      s_keys[slot] = load_key(keys_in, base + slot);
      if (with_values) s_values[slot] = index_values ? base + slot : values_in.data[base + slot];
    }
  }
  barrier();  // the keys in shared memory

  for (uint pass = 0u; pass < pc.pass; ++pass) {  // uniform
    const uint shift = pc.shift + pass * DIGIT_BITS;
    const uint digit_mask = (1u << min(DIGIT_BITS, pc.end_bit - shift)) - 1u;
    const uint bin_flip = descending ? digit_mask : 0u;

    // 1. Rank each key among its subgroup's keys of the same bin, in slot order.
    for (uint j = gl_SubgroupInvocationID; j < HALF_BINS; j += gl_SubgroupSize)
      s_subgroup_bins[gl_SubgroupID * HALF_BINS + j] = 0u;
    Key keys[KEYS_PER_THREAD];
    uint values[KEYS_PER_THREAD];
    uint bins[KEYS_PER_THREAD];
    uint ranks[KEYS_PER_THREAD];
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
      const uint slot = segment + i * gl_SubgroupSize + gl_SubgroupInvocationID;
      const bool valid = i < rounds && slot < count;
      keys[i] = valid ? s_keys[slot] : NO_KEY;
      values[i] = valid && with_values ? s_values[slot] : 0u;
      bins[i] = valid ? bin_at(keys[i], shift, digit_mask, bin_flip) : PADDING_BIN;
    }
    if (matching_or()) {
      barrier();  // every key read out of s_keys: its words are the matcher's until the moves
#ifndef VREN_RADIX_KEY64
      match_or_zero();
#endif
      barrier();  // the words zeroed (and the running counts)
    } else {
      subgroup_barrier_shared();  // running counts zeroed before the first round reads them
    }
    // Subgroups whose segment holds no key skip the rounds (uniform per subgroup): their zero
    // counts leave the padding out of every bin's total, and no key is placed from them.
    if (segment < count) [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
      if (i >= rounds) break;  // uniform
      uint below, peer_count, peer_bits = 0u;
      uvec2 place = uvec2(0u);
#ifndef VREN_RADIX_KEY64
      if (matching_or()) {
        peer_bits = match_or_peers(bins[i], true, place);  // every lane has a key or the padding bin
        below = bitCount(peer_bits & gl_SubgroupLtMask.x);
        peer_count = bitCount(peer_bits);
      } else
#endif
      {
        const uvec4 peers = peers_of(bins[i], true);
        below = subgroupBallotExclusiveBitCount(peers);
        peer_count = subgroupBallotBitCount(peers);
      }
      ranks[i] = counter(gl_SubgroupID, bins[i]) + below;
      subgroup_barrier_shared();  // every peer has read the running count (and the word) before the lowest one adds
      // Atomic: the lowest lanes of two bins that share a word add in the same round.
      if (below == 0u) {
        atomicAdd(s_subgroup_bins[counter_word(gl_SubgroupID, bins[i])], peer_count << counter_shift(bins[i]));
#ifndef VREN_RADIX_KEY64
        if (matching_or()) match_or_clear(place, peer_bits);
#endif
      }
      subgroup_barrier_shared();  // the next round reads the updated counts
    }
    barrier();  // every subgroup's counts complete; every key read out of s_keys

    // 2. Per bin: each subgroup's start inside the bin, then the bins' starts by a scan.
    uint bin_total[BINS_PER_THREAD];
    uint thread_sum = 0u;
    [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
      const uint bin = first_bin + j;
      bin_total[j] = 0u;
      if (bin < BINS) {
        for (uint s = 0u; s < gl_NumSubgroups; ++s) {
          const uint word = counter_word(s, bin), shift = counter_shift(bin);
          const uint c = (s_subgroup_bins[word] >> shift) & 0xFFFFu;
          s_subgroup_bins[word] = (s_subgroup_bins[word] & ~(0xFFFFu << shift)) | (bin_total[j] << shift);
          bin_total[j] += c;
        }
      }
      thread_sum += bin_total[j];
    }
    // One barrier, no trailing one (the barrier below orders the reads before the next pass's
    // writes): on an H200 2^10 keys / pairs sort in 0.01205 / 0.01248 ms and 2^12 in 0.02041 /
    // 0.02277 against 0.01305 / 0.01355 and 0.02145 / 0.0238 with workgroup_exclusive_add, and
    // 4096 rows of 4096 f32 (segmented argsort) in 0.618 against 0.651, one run each (2026-12-02).
    uint start = workgroup_exclusive_add_lean(thread_sum);
    [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
      if (first_bin + j < BINS) s_bin_start[first_bin + j] = start;
      start += bin_total[j];
    }
    barrier();  // bin starts visible to every thread

    // 3. Move each key to its slot for the next pass.
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
      const uint slot = segment + i * gl_SubgroupSize + gl_SubgroupInvocationID;
      if (i < rounds && slot < count) {
        const uint to = s_bin_start[bins[i]] + counter(gl_SubgroupID, bins[i]) + ranks[i];
        s_keys[to] = keys[i];
        if (with_values) s_values[to] = values[i];
      }
    }
    barrier();  // the keys in this pass's order before the next pass reads them
  }

  // 4. Write out, coalesced, to the buffer an unskipped multi-pass sort would end in; segments
  //    to the temp buffers at their offsets, or their first k to the outputs at s * k.
  const uint result = segmented ? 1u : pc.pass & 1u;
  WriteUints keys_out = WriteUints(pc.keys[result]);
  WriteUints values_out = WriteUints(pc.values[result]);
  const uint written = segmented && pc.k > 0u ? min(count, pc.k) : count;
  const uint to = segmented ? (pc.k > 0u ? tile_index() * pc.k : base) : 0u;
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint slot = i * gl_WorkGroupSize.x + thread;
    if (slot < written) {
      store_key(keys_out, to + slot, s_keys[slot]);
      if (with_values) values_out.data[to + slot] = s_values[slot];
    }
  }
}
