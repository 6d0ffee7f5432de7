#version 460
// Top-k of a whole buffer of 32-bit keys (k < count, k <= VREN_RADIX_TOPK_MAX_K) by radix select:
// find the k-th key of the stable order digit by digit, gather the k elements before it, rank
// them among themselves. Reads the keys 5 times (4 levels and the gather) and moves k elements,
// instead of sorting them all.
//
// Phases (pc.pass), each a dispatch behind a barrier:
// - zero:    the histograms and the candidate count.
// - level l: (l > 0) the threshold of level l - 1 from its histogram: the bin where the k-th key
//            lies, given the keys already below the prefix; every workgroup finds the same one,
//            and workgroup 0 stores the new prefix and count below for the next phase. Then the
//            8-bit digit l of the keys whose higher digits equal the prefix, counted in shared
//            memory and added to the level's histogram; the last level also stores each
//            workgroup's counts.
// - collect: the last threshold gives the k-th key K exactly. Every key below K is a candidate,
//            and so are the first k - below keys equal to K in input order: each workgroup's
//            equal keys start after the earlier workgroups' (from their last-level counts), and
//            within a workgroup a scan per round orders them. Exactly k candidates, in any order.
// - rank:    each candidate's place is the number of candidates before it in (key, index)
//            order, which is the stable order; it is written there with its value.
// The level and collect phases run the same grid (at most VREN_RADIX_TOPK_MAX_GROUPS
// workgroups), each workgroup over the same contiguous run of keys.
//
// Keys are compared by their sort field: the order map of signed and float keys, bits
// [pc.shift, pc.end_bit), reversed for the largest (VREN_RADIX_FLAG_DESCENDING).
// pc.keys[0] / pc.values[0]: the input; pc.keys[1] / pc.values[1]: the k results; pc.internal:
// the words of radix_shared.h's VREN_RADIX_TOPK_* layout.
//
// Shared memory (bytes), W = WORKGROUP_SIZE, S = MAX_SUBGROUPS:
//   s_bins        4 * 256    the workgroup's digit counts
//   s_fields      4 W        a chunk of candidates' fields (rank)
//   s_indices     4 W        and their indices
//   workgroup scan 4 (S + 1), threshold 8
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;

#include "workgroup_scan.glsl"

const uint WG = gl_WorkGroupSize.x;
const uint DIGIT = 8u;
const uint BINS_PER_THREAD = (VREN_RADIX_MAX_BINS + WG - 1u) / WG;

shared uint s_bins[VREN_RADIX_MAX_BINS];
shared uint s_fields[WG];
shared uint s_indices[WG];
shared uint s_threshold;
shared uint s_threshold_below;

uint field_bits() { return pc.end_bit - pc.shift; }
uint field_mask() { return field_bits() >= 32u ? 0xFFFFFFFFu : (1u << field_bits()) - 1u; }
// The key's place in the order: smaller first.
uint field_of(uint key) {
  const uint f = bits_from(key, pc.shift) & field_mask();
  return (pc.flags & VREN_RADIX_FLAG_DESCENDING) != 0u ? f ^ field_mask() : f;
}
uint levels() { return (field_bits() + DIGIT - 1u) / DIGIT; }
// Level l's digit: bits [low, low + width) of the field, from the top.
uint level_low(uint l) { return field_bits() > DIGIT * (l + 1u) ? field_bits() - DIGIT * (l + 1u) : 0u; }
uint level_width(uint l) { return field_bits() - DIGIT * l - level_low(l); }

uint word(uint i) { return pc.internal.data[i]; }

// The bin of level l's histogram in which the need-th key lies (need >= 1): s_threshold, and the
// keys in the bins before it, s_threshold_below. Every thread calls it.
void find_threshold(uint l, uint need) {
  const uint first = ordered_thread() * BINS_PER_THREAD;
  uint counts[BINS_PER_THREAD];
  uint sum = 0u;
  [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
    counts[j] = first + j < VREN_RADIX_MAX_BINS ? word(VREN_RADIX_TOPK_HISTOGRAMS + l * VREN_RADIX_MAX_BINS + first + j) : 0u;
    sum += counts[j];
  }
  if (gl_LocalInvocationIndex == 0u) {  // only if the counts lie: the last bin
    s_threshold = VREN_RADIX_MAX_BINS - 1u;
    s_threshold_below = 0u;
  }
  uint total;
  uint before = workgroup_exclusive_add(sum, total);  // its barriers order the defaults first
  [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
    if (before < need && need <= before + counts[j]) {
      s_threshold = first + j;
      s_threshold_below = before;
    }
    before += counts[j];
  }
  barrier();  // the threshold visible to every thread
}

// The prefix and keys below it entering level l (l >= 1), from level l - 1's state and histogram.
uvec2 state_entering(uint l) {
  const uint prefix = word(VREN_RADIX_TOPK_STATE + 2u * (l - 1u));
  const uint below = word(VREN_RADIX_TOPK_STATE + 2u * (l - 1u) + 1u);
  find_threshold(l - 1u, pc.k - below);
  return uvec2((prefix << level_width(l - 1u)) | s_threshold, below + s_threshold_below);
}

// This workgroup's run of keys: [x, y).
uvec2 run_of_keys() {
  const uint per_group = (pc.count + gl_NumWorkGroups.x - 1u) / gl_NumWorkGroups.x;
  const uint first = min(gl_WorkGroupID.x * per_group, pc.count);
  return uvec2(first, min(first + per_group, pc.count));
}

void count_level(uint l) {
  uvec2 state = uvec2(0u);
  if (l > 0u) state = state_entering(l);
  if (gl_WorkGroupID.x == 0u && gl_LocalInvocationIndex == 0u) {
    pc.internal.data[VREN_RADIX_TOPK_STATE + 2u * l] = state.x;
    pc.internal.data[VREN_RADIX_TOPK_STATE + 2u * l + 1u] = state.y;
  }
  for (uint b = gl_LocalInvocationIndex; b < VREN_RADIX_MAX_BINS; b += WG) s_bins[b] = 0u;
  barrier();  // counters zeroed
  const uint low = level_low(l), width = level_width(l);
  const uint above = low + width;  // the prefix's bits start here (32 for level 0: no prefix)
  const uvec2 run = run_of_keys();
  ReadUints keys = ReadUints(pc.keys[0]);
  for (uint i = run.x + gl_LocalInvocationIndex; i < run.y; i += WG) {
    const uint f = field_of(keys.data[i]);
    if (above >= 32u || (f >> above) == state.x) atomicAdd(s_bins[(f >> low) & ((1u << width) - 1u)], 1u);
  }
  barrier();  // every key counted
  const bool last = l + 1u == levels();
  for (uint b = gl_LocalInvocationIndex; b < VREN_RADIX_MAX_BINS; b += WG) {
    const uint c = s_bins[b];
    if (c != 0u) atomicAdd(pc.internal.data[VREN_RADIX_TOPK_HISTOGRAMS + l * VREN_RADIX_MAX_BINS + b], c);
    if (last) pc.internal.data[VREN_RADIX_TOPK_GROUP_HISTOGRAMS + gl_WorkGroupID.x * VREN_RADIX_MAX_BINS + b] = c;
  }
}

void collect() {
  const uvec2 state = state_entering(levels());  // the full field of the k-th key, keys below it
  const uint kth = state.x, below = state.y;
  const uint ties_needed = pc.k - below;
  // Keys equal to the k-th in earlier workgroups' runs.
  uint earlier = 0u;
  for (uint g = gl_LocalInvocationIndex; g < gl_WorkGroupID.x; g += WG)
    earlier += word(VREN_RADIX_TOPK_GROUP_HISTOGRAMS + g * VREN_RADIX_MAX_BINS + s_threshold);
  uint ties_before;
  workgroup_exclusive_add(earlier, ties_before);
  const uvec2 run = run_of_keys();
  ReadUints keys = ReadUints(pc.keys[0]);
  for (uint start = run.x; start < run.y; start += WG) {  // uniform: rounds in input order
    const uint i = start + ordered_thread();
    const uint key = i < run.y ? keys.data[i] : 0u;
    const uint f = field_of(key);
    const bool tie = i < run.y && f == kth;
    uint round_ties;
    const uint tie_rank = ties_before + workgroup_exclusive_add(tie ? 1u : 0u, round_ties);
    ties_before += round_ties;
    if ((i < run.y && f < kth) || (tie && tie_rank < ties_needed)) {
      const uint slot = atomicAdd(pc.internal.data[VREN_RADIX_TOPK_CANDIDATES], 1u);
      if (slot < VREN_RADIX_TOPK_MAX_K) {  // exactly k, unless the histograms lie
        pc.internal.data[VREN_RADIX_TOPK_CANDIDATE_KEYS + slot] = key;
        pc.internal.data[VREN_RADIX_TOPK_CANDIDATE_INDICES + slot] = i;
      }
    }
  }
}

void rank() {
  const uint k = min(pc.k, VREN_RADIX_TOPK_MAX_K);
  const uint mine = gl_WorkGroupID.x * WG + gl_LocalInvocationIndex;
  const uint key = mine < k ? word(VREN_RADIX_TOPK_CANDIDATE_KEYS + mine) : 0u;
  const uint index = mine < k ? word(VREN_RADIX_TOPK_CANDIDATE_INDICES + mine) : 0u;
  const uint f = field_of(key);
  uint place = 0u;
  for (uint base = 0u; base < k; base += WG) {  // uniform
    const uint j = base + gl_LocalInvocationIndex;
    if (j < k) {
      s_fields[gl_LocalInvocationIndex] = field_of(word(VREN_RADIX_TOPK_CANDIDATE_KEYS + j));
      s_indices[gl_LocalInvocationIndex] = word(VREN_RADIX_TOPK_CANDIDATE_INDICES + j);
    }
    barrier();  // the chunk loaded
    const uint chunk = min(WG, k - base);
    for (uint c = 0u; c < chunk; ++c) {
      const uint other = s_fields[c];
      if (other < f || (other == f && s_indices[c] < index)) ++place;
    }
    barrier();  // every thread done with the chunk before the next load
  }
  if (mine >= k || place >= k) return;  // place < k unless the candidates lie
  WriteUints(pc.keys[1]).data[place] = key;
  if ((pc.flags & VREN_RADIX_FLAG_VALUES) != 0u) {
    const bool index_values = (pc.flags & VREN_RADIX_FLAG_INDEX_VALUES) != 0u;
    WriteUints(pc.values[1]).data[place] = index_values ? index : ReadUints(pc.values[0]).data[min(index, pc.count - 1u)];
  }
}

void main() {
  if (pc.pass == VREN_RADIX_TOPK_PHASE_ZERO) {
    for (uint i = gl_LocalInvocationIndex; i < VREN_RADIX_TOPK_STATE; i += WG) pc.internal.data[VREN_RADIX_TOPK_HISTOGRAMS + i] = 0u;
    if (gl_LocalInvocationIndex == 0u) pc.internal.data[VREN_RADIX_TOPK_CANDIDATES] = 0u;
  } else if (pc.pass < VREN_RADIX_TOPK_PHASE_COLLECT) {
    count_level(pc.pass - VREN_RADIX_TOPK_PHASE_LEVEL);
  } else if (pc.pass == VREN_RADIX_TOPK_PHASE_COLLECT) {
    collect();
  } else {
    rank();
  }
}
