#version 460
// Top-k of a whole buffer of 32-bit keys (k < count, k <= VREN_RADIX_TOPK_MAX_K) by radix select:
// find the bin of the k-th key of the stable order digit by digit, gather the candidates, rank
// them among themselves. At most 6 dispatches, 5 with the settle phase; usually the GPU skips those
// between level 1 and the rank, and the keys are read twice (the first level and the gather),
// else 4 times.
//
// Phases (pc.pass), each a dispatch behind a barrier:
// - zero:    the histograms, the candidate count and the settle phase's count.
// - level l: (l > 0) the threshold of level l - 1 from its histogram: the bin where the k-th key
//            lies, given the keys already below the prefix; every workgroup finds the same one,
//            and workgroup 0 stores the new prefix and count below for the next phase. Then the
//            11-bit digit l of the keys whose higher digits equal the prefix, counted in shared
//            memory and added to the level's histogram; the last level also stores each
//            workgroup's counts.
//            Level 1 first checks whether the keys in level 0's bins up to the threshold's fit
//            the candidates (VREN_RADIX_TOPK_MAX_CANDIDATES; for uniform keys about
//            k + count / 2048). If so it gathers them instead of counting, grouped by level-0 bin
//            in bin order (one atomic per key, or per bin for runs of one round), and workgroup 0
//            empties the indirect grid of the phases before the rank (level 2 and collect, or
//            settle); it also writes the rank's.
// - settle:  (three levels, level 1 counted, pc.wait_groups > 0) level 2 and the collect in
//            one dispatch: each workgroup counts its run's last digits, publishes them, and
//            waits a bounded time for every workgroup's (see settle()); then as collect.
// - collect: (without the settle phase) the last threshold gives the k-th key K exactly.
//            Every key below K is a candidate, and so are the first k - below keys equal to K
//            in input order: each workgroup's equal keys start after the earlier workgroups'
//            (from their last-level counts), and within a workgroup one scan per round of keys
//            (16 consecutive ones per thread) ranks both kinds. Each round that takes any takes
//            its slots with one atomic. Exactly k candidates, in any order.
// - rank:    each candidate's place is the number of candidates before it in (key, index)
//            order, which is the stable order; RANK_SPLIT threads share each candidate's
//            comparisons, over chunks of the candidates in shared memory (grouped ones: only those
//            of the workgroup's own bins). It is written there with its value if below k.
// - segments: top-k of each segment (k <= VREN_RADIX_TOPK_SEGMENT_MAX_K), one workgroup per
//            segment doing all of the above alone: levels counted in shared memory, candidates
//            gathered in input order into shared memory, ranked there. One dispatch; each
//            segment's keys read 4 times by its workgroup, mostly from cache.
// Each workgroup of a phase takes a contiguous run of keys. Level 0 runs fewer workgroups than
// the rest (fewer histogram atomics); the collect runs the last level's grid, whose workgroups'
// counts it reads.
//
// Keys are compared by their sort field: the order map of signed and float keys, bits
// [pc.shift, pc.end_bit), reversed for the largest (VREN_RADIX_FLAG_DESCENDING).
// pc.keys[0] / pc.values[0]: the input; pc.keys[1] / pc.values[1]: the k results; pc.internal:
// the words of radix_shared.h's VREN_RADIX_TOPK_* layout.
//
// Shared memory (bytes), W = WORKGROUP_SIZE, S = MAX_SUBGROUPS:
//   s_bins        4 * 2048   the workgroup's digit counts; the rank's chunk of fields; level 1's
//                            first slot of each level-0 bin when it gathers
//   s_candidate_* segments: 12 * 1024, the candidates' keys, fields and indices; the whole
//                 buffer: 4 W / RANK_SPLIT + 4 + 4 * 2048, the rank's places and chunk of indices,
//                 level 1's places per bin when it gathers
//   workgroup scan 4 (S + 1), threshold, keys below and in it, round base, wait's outcome 20
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "radix_common.glsl"
#include "radix_segments.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;

#include "workgroup_scan.glsl"

// The settle phase's bounded wait (published_words.glsl).
layout(constant_id = VREN_RADIX_SPEC_POLL_ATOMIC) const bool POLL_ATOMIC = true;
layout(constant_id = VREN_RADIX_SPEC_POLL_BUDGET) const uint POLL_BUDGET = 4096;
#include "published_words.glsl"
// The words the settle phase's workgroups write for each other.
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CoherentUints { uint data[]; };

const uint WG = gl_WorkGroupSize.x;
const uint DIGIT = VREN_RADIX_TOPK_DIGIT_BITS;
const uint SELECT_BINS = VREN_RADIX_TOPK_BINS;
const uint BINS_PER_THREAD = (SELECT_BINS + WG - 1u) / WG;
const uint RANK_SPLIT = VREN_RADIX_TOPK_RANK_SPLIT;  // the workgroup size is a multiple
const uint ROUND_KEYS = VREN_RADIX_TOPK_ROUND_KEYS;

shared uint s_bins[SELECT_BINS];
shared uint s_threshold;
shared uint s_threshold_below;
shared uint s_threshold_count;
shared uint s_round_base;
shared uint s_all_counted;
// Two pipelines: the segments phase's holds VREN_RADIX_TOPK_SEGMENT_MAX_K candidates per
// workgroup, the whole buffer's (1) only the rank's places and chunk of indices. Shared memory
// costs the level phases: H200, k = 2048 of 2^20 and of 2^24 in one pipeline with 24 KB, 0.049
// and 0.441 ms; with 20 KB, 0.045 and 0.305 ms.
layout(constant_id = VREN_RADIX_SPEC_VALUE_SLOTS) const uint SEGMENT_SLOTS = 1;
const uint RANK_CHUNK = SEGMENT_SLOTS > 1u ? SEGMENT_SLOTS : SELECT_BINS;
shared uint s_candidate_keys[SEGMENT_SLOTS > WG / RANK_SPLIT ? SEGMENT_SLOTS : WG / RANK_SPLIT];
shared uint s_candidate_fields[SEGMENT_SLOTS];
shared uint s_candidate_indices[RANK_CHUNK];

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

// The bin of level l's histogram (or, with `local`, of s_bins) in which the need-th key lies
// (need >= 1): s_threshold, the keys in the bins before it, s_threshold_below, and in it,
// s_threshold_count. Without `local`, s_bins receives each bin's keys before it. Every thread
// calls it.
void find_threshold(uint l, uint need, bool local) {
  const uint first = ordered_thread() * BINS_PER_THREAD;
  uint counts[BINS_PER_THREAD];
  uint sum = 0u;
  [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
    counts[j] = first + j >= SELECT_BINS ? 0u
                : local                  ? s_bins[first + j]
                                         : word(VREN_RADIX_TOPK_HISTOGRAMS + l * SELECT_BINS + first + j);
    sum += counts[j];
  }
  if (gl_LocalInvocationIndex == 0u) {  // only if the counts lie: the last bin, too full to gather
    s_threshold = SELECT_BINS - 1u;
    s_threshold_below = 0u;
    s_threshold_count = VREN_RADIX_TOPK_MAX_CANDIDATES + 1u;
  }
  uint total;
  uint before = workgroup_exclusive_add(sum, total);  // its barriers order the defaults first
  [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
    if (before < need && need <= before + counts[j]) {
      s_threshold = first + j;
      s_threshold_below = before;
      s_threshold_count = counts[j];
    }
    if (!local && first + j < SELECT_BINS) s_bins[first + j] = before;
    before += counts[j];
  }
  barrier();  // the threshold visible to every thread
}

// The prefix and keys below it entering level l (l >= 1), from level l - 1's state and histogram.
uvec2 state_entering(uint l) {
  const uint prefix = word(VREN_RADIX_TOPK_STATE + 2u * (l - 1u));
  const uint below = word(VREN_RADIX_TOPK_STATE + 2u * (l - 1u) + 1u);
  find_threshold(l - 1u, pc.k - below, false);
  return uvec2((prefix << level_width(l - 1u)) | s_threshold, below + s_threshold_below);
}

// This workgroup's run of keys: [x, y).
uvec2 run_of_keys() {
  const uint per_group = (pc.count + gl_NumWorkGroups.x - 1u) / gl_NumWorkGroups.x;
  const uint first = min(gl_WorkGroupID.x * per_group, pc.count);
  return uvec2(first, min(first + per_group, pc.count));
}

// Appends this workgroup's keys of `run` with field < kth, and the first ties_needed -
// ties_before keys with field == kth, to the candidates: rounds of WG * ROUND_KEYS keys in input
// order, ROUND_KEYS consecutive ones per thread, both kinds ranked by one scan; a round that
// takes any takes its slots with one atomic.
void append_candidates(uvec2 run, uint kth, uint ties_before, uint ties_needed) {
  ReadUints keys = ReadUints(pc.keys[0]);
  for (uint start = run.x; start < run.y; start += WG * ROUND_KEYS) {  // uniform
    const uint first = start + ordered_thread() * ROUND_KEYS;
    uint round_keys[ROUND_KEYS];
    uint counts = 0u;  // keys below K in the low half, keys equal to it in the high half
    [[unroll]] for (uint e = 0u; e < ROUND_KEYS; ++e) {
      round_keys[e] = first + e < run.y ? keys.data[first + e] : 0u;
      const uint f = field_of(round_keys[e]);
      if (first + e < run.y) counts += f < kth ? 1u : (f == kth ? 0x10000u : 0u);
    }
    uint totals;
    uint ranks = workgroup_exclusive_add(counts, totals);
    const uint ties_taken = min(totals >> 16u, ties_needed - min(ties_before, ties_needed));
    const uint takes = (totals & 0xFFFFu) + ties_taken;
    if (takes != 0u) {  // uniform
      if (gl_LocalInvocationIndex == 0u) s_round_base = atomicAdd(pc.internal.data[VREN_RADIX_TOPK_CANDIDATES], takes);
      barrier();  // the round's slots known
      [[unroll]] for (uint e = 0u; e < ROUND_KEYS; ++e) {
        if (first + e >= run.y) break;
        const uint f = field_of(round_keys[e]);
        const uint tie_rank = ranks >> 16u;
        if (f < kth || (f == kth && tie_rank < ties_taken)) {
          const uint slot = s_round_base + (ranks & 0xFFFFu) + min(tie_rank, ties_taken);
          if (slot < VREN_RADIX_TOPK_MAX_CANDIDATES) {  // within the buffer, unless the histograms lie
            pc.internal.data[VREN_RADIX_TOPK_CANDIDATE_KEYS + slot] = round_keys[e];
            pc.internal.data[VREN_RADIX_TOPK_CANDIDATE_INDICES + slot] = first + e;
          }
        }
        ranks += f < kth ? 1u : (f == kth ? 0x10000u : 0u);
      }
      barrier();  // every thread has read the base before the next round's
    }
    ties_before += totals >> 16u;
  }
}

// The input index of this thread's key e in the round of keys from `start` (coalesced: key e of
// every thread, then key e + 1).
uint round_index(uint start, uint e) { return start + e * WG + gl_LocalInvocationIndex; }

// This thread's keys of the round from `start`, loaded together (0 at or past `end`).
void load_round(uint start, uint end, out uint round_keys[ROUND_KEYS]) {
  ReadUints keys = ReadUints(pc.keys[0]);
  [[unroll]] for (uint e = 0u; e < ROUND_KEYS; ++e)
    round_keys[e] = round_index(start, e) < end ? keys.data[round_index(start, e)] : 0u;
}

// Counts into s_bins the digit [low, low + width) of the keys of `span` whose field's bits from
// low + width up equal `prefix` (every key when there are none), a round of keys at a time.
void count_digit(uvec2 span, uint low, uint width, uint prefix) {
  const uint above = low + width;
  for (uint start = span.x; start < span.y; start += WG * ROUND_KEYS) {  // uniform
    uint round_keys[ROUND_KEYS];  // loaded together, then counted
    load_round(start, span.y, round_keys);
    [[unroll]] for (uint e = 0u; e < ROUND_KEYS; ++e) {
      const uint f = field_of(round_keys[e]);
      if (round_index(start, e) < span.y && (above >= 32u || (f >> above) == prefix))
        atomicAdd(s_bins[(f >> low) & ((1u << width) - 1u)], 1u);
    }
  }
}

// Gathers this workgroup's keys of `run` whose level-0 digit is at most last_bin, each at its
// bin's next slot (s_bins holds each bin's first): the candidates grouped by bin, in bin order,
// which the rank uses. A run of one round counts its keys' places per bin in shared memory (in
// s_candidate_indices), then takes each bin's slots with one atomic: k = 2048 of 2^20, about 10
// keys a workgroup in 5 bins (H200, 2026-11-27, one session: an atomic per key on its bin's
// cursor 29.5 us in all, this 28.7 us). Longer runs take an atomic per key: a round at a time,
// the atomics' round trips add up (k = 2048 of 2^24, 8 rounds a workgroup: 114 -> 129 us).
void gather_by_bin(uvec2 run, uint last_bin) {
  const uint low = level_low(0u);
  const bool one_round = run.y - run.x <= WG * ROUND_KEYS;
  for (uint start = run.x; start < run.y; start += WG * ROUND_KEYS) {  // uniform
    uint round_keys[ROUND_KEYS];
    load_round(start, run.y, round_keys);
    uint places[ROUND_KEYS];
    if (one_round) {  // uniform
      for (uint b = gl_LocalInvocationIndex; b <= last_bin; b += WG) s_candidate_indices[b] = 0u;
      barrier();  // the places zeroed
      [[unroll]] for (uint e = 0u; e < ROUND_KEYS; ++e) {
        const uint bin = field_of(round_keys[e]) >> low;
        const bool takes = round_index(start, e) < run.y && bin <= last_bin;
        places[e] = takes ? atomicAdd(s_candidate_indices[bin], 1u) : 0u;
      }
      barrier();  // the run's keys per bin counted
      for (uint b = gl_LocalInvocationIndex; b <= last_bin; b += WG) {
        const uint c = s_candidate_indices[b];
        if (c != 0u) s_candidate_indices[b] = s_bins[b] + atomicAdd(pc.internal.data[VREN_RADIX_TOPK_BIN_CURSORS + b], c);
      }
      barrier();  // the run's first slot per bin
    }
    [[unroll]] for (uint e = 0u; e < ROUND_KEYS; ++e) {
      const uint i = round_index(start, e);
      const uint bin = field_of(round_keys[e]) >> low;
      if (i < run.y && bin <= last_bin) {
        const uint slot = one_round ? s_candidate_indices[bin] + places[e]
                                    : s_bins[bin] + atomicAdd(pc.internal.data[VREN_RADIX_TOPK_BIN_CURSORS + bin], 1u);
        if (slot < VREN_RADIX_TOPK_MAX_CANDIDATES) {  // within the buffer, unless the histograms lie
          pc.internal.data[VREN_RADIX_TOPK_CANDIDATE_KEYS + slot] = round_keys[e];
          pc.internal.data[VREN_RADIX_TOPK_CANDIDATE_INDICES + slot] = i;
        }
      }
    }
  }
}

void count_level(uint l) {
  uvec2 state = uvec2(0u);
  if (l > 0u) state = state_entering(l);
  const uvec2 run = run_of_keys();
  if (l == 1u) {
    // Every key in level 0's bins up to the k-th key's, if they fit the candidates: gathered
    // now, and the later levels and the collect are skipped (their grid is empty).
    const uint candidates = state.y + s_threshold_count;
    const bool gather = candidates <= VREN_RADIX_TOPK_MAX_CANDIDATES;
    if (gather && gl_WorkGroupID.x == 0u) {
      for (uint b = gl_LocalInvocationIndex; b <= s_threshold; b += WG)
        pc.internal.data[VREN_RADIX_TOPK_BIN_STARTS + b] = s_bins[b];
    }
    if (gl_WorkGroupID.x == 0u && gl_LocalInvocationIndex == 0u) {
      if (gather) {
        pc.internal.data[VREN_RADIX_TOPK_CANDIDATES] = candidates;
        pc.internal.data[VREN_RADIX_TOPK_GROUPED] = s_threshold + 1u;
      }
      // The settle phase's workgroups, as many as run at once (pc.wait_groups, 0: no settle
      // phase); else this grid, whose runs the last level and the collect read again.
      const uint rest = pc.wait_groups != 0u ? min(gl_NumWorkGroups.x, pc.wait_groups) : gl_NumWorkGroups.x;
      pc.internal.data[VREN_RADIX_TOPK_SKIPPABLE_GRID] = gather ? 0u : rest;
      pc.internal.data[VREN_RADIX_TOPK_SKIPPABLE_GRID + 1u] = 1u;
      pc.internal.data[VREN_RADIX_TOPK_SKIPPABLE_GRID + 2u] = 1u;
      pc.internal.data[VREN_RADIX_TOPK_RANK_GRID] = ((gather ? candidates : pc.k) + WG / RANK_SPLIT - 1u) / (WG / RANK_SPLIT);
      pc.internal.data[VREN_RADIX_TOPK_RANK_GRID + 1u] = 1u;
      pc.internal.data[VREN_RADIX_TOPK_RANK_GRID + 2u] = 1u;
    }
    if (gather) {
      gather_by_bin(run, s_threshold);
      return;
    }
  }
  if (gl_WorkGroupID.x == 0u && gl_LocalInvocationIndex == 0u) {
    pc.internal.data[VREN_RADIX_TOPK_STATE + 2u * l] = state.x;
    pc.internal.data[VREN_RADIX_TOPK_STATE + 2u * l + 1u] = state.y;
  }
  for (uint b = gl_LocalInvocationIndex; b < SELECT_BINS; b += WG) s_bins[b] = 0u;
  barrier();  // counters zeroed
  count_digit(run, level_low(l), level_width(l), state.x);
  barrier();  // every key counted
  const bool last = l + 1u == levels();
  for (uint b = gl_LocalInvocationIndex; b < SELECT_BINS; b += WG) {
    const uint c = s_bins[b];
    if (c != 0u) atomicAdd(pc.internal.data[VREN_RADIX_TOPK_HISTOGRAMS + l * SELECT_BINS + b], c);
    if (last) pc.internal.data[VREN_RADIX_TOPK_GROUP_HISTOGRAMS + gl_WorkGroupID.x * SELECT_BINS + b] = c;
  }
}

// The keys of the earlier workgroups' runs in the last level's bin `bin` (those equal to the
// k-th), from their rows of the group histograms. Every thread calls it.
uint ties_in_earlier_runs(uint bin) {
  CoherentUints words = CoherentUints(pc.internal);
  uint earlier = 0u;
  for (uint g = gl_LocalInvocationIndex; g < gl_WorkGroupID.x; g += WG)
    earlier += words.data[VREN_RADIX_TOPK_GROUP_HISTOGRAMS + g * SELECT_BINS + bin];
  uint ties;
  workgroup_exclusive_add(earlier, ties);
  return ties;
}

void collect() {
  const uvec2 state = state_entering(levels());  // the full field of the k-th key, keys below it
  append_candidates(run_of_keys(), state.x, ties_in_earlier_runs(s_threshold), pc.k - state.y);
}

// Each candidate's place among the candidates in (field, index) order, which is its place in
// the stable order: every key before it is a candidate too. Written there if below k. The
// candidates pass through shared memory in chunks of RANK_CHUNK (fields in s_bins, indices in
// s_candidate_indices; the places in s_candidate_keys), each thread comparing four at a time.
// Candidates grouped by level-0 bin (VREN_RADIX_TOPK_GROUPED) are compared only with those of
// the workgroup's own bins: those of earlier bins all come before.
// H200, k = 2048 of 2^20 (about 2600 candidates), in one session: 1024-candidate chunks compared
// one at a time 0.066 ms in all, 2048 four at a time 0.048 ms; k = 4096: 0.109 -> 0.063 ms.
// Grouped, with the comparisons free of branches (2026-11-27, one session): k = 2048 of 2^20
// 0.034 -> 0.029 ms in all, of 2^24 (one bin of about 8200) 0.167 -> 0.114; k = 4096 of 2^20
// 0.048 -> 0.032.
void rank() {
  const uint per_group = WG / RANK_SPLIT;
  const uint local = gl_LocalInvocationIndex / RANK_SPLIT, part = gl_LocalInvocationIndex % RANK_SPLIT;
  const uint base = gl_WorkGroupID.x * per_group, mine = base + local;
  // Loaded together, from slots within the candidate buffer whatever the count holds.
  const uint stored = word(VREN_RADIX_TOPK_CANDIDATES);
  const uint grouped = word(VREN_RADIX_TOPK_GROUPED);
  const uint key = word(VREN_RADIX_TOPK_CANDIDATE_KEYS + min(mine, VREN_RADIX_TOPK_MAX_CANDIDATES - 1u));
  const uint index = word(VREN_RADIX_TOPK_CANDIDATE_INDICES + min(mine, VREN_RADIX_TOPK_MAX_CANDIDATES - 1u));
  const uint candidates = min(stored, VREN_RADIX_TOPK_MAX_CANDIDATES);
  if (base >= candidates) return;  // uniform
  // The candidates to compare with: [from, to).
  uint from = 0u, to = candidates;
  if (grouped != 0u) {  // uniform
    const uint low = level_low(0u);
    const uint first_bin = min(field_of(word(VREN_RADIX_TOPK_CANDIDATE_KEYS + base)) >> low, SELECT_BINS - 1u);
    const uint last_key = word(VREN_RADIX_TOPK_CANDIDATE_KEYS + min(base + per_group, candidates) - 1u);
    const uint last_bin = field_of(last_key) >> low;
    to = last_bin + 1u < grouped ? min(word(VREN_RADIX_TOPK_BIN_STARTS + last_bin + 1u), candidates) : candidates;
    from = min(word(VREN_RADIX_TOPK_BIN_STARTS + first_bin), to);
  }
  if (part == 0u) s_candidate_keys[local] = from;
  const uint f = field_of(key);
  uint place = 0u;
  for (uint chunk = from; chunk < to; chunk += RANK_CHUNK) {  // uniform
    const uint size = min(to - chunk, RANK_CHUNK);
    barrier();  // the previous chunk compared (and, the first time, the places set)
    [[unroll]] for (uint r = 0u; r < (RANK_CHUNK + WG - 1u) / WG; ++r) {
      const uint j = r * WG + gl_LocalInvocationIndex;
      if (j < size) {
        s_bins[j] = field_of(word(VREN_RADIX_TOPK_CANDIDATE_KEYS + chunk + j));
        s_candidate_indices[j] = word(VREN_RADIX_TOPK_CANDIDATE_INDICES + chunk + j);
      }
    }
    barrier();  // the chunk in shared memory
    if (mine >= candidates) continue;
    uint j = part;
    for (; j + 3u * RANK_SPLIT < size; j += 4u * RANK_SPLIT) {  // without branches
      const uint o0 = s_bins[j], o1 = s_bins[j + RANK_SPLIT];
      const uint o2 = s_bins[j + 2u * RANK_SPLIT], o3 = s_bins[j + 3u * RANK_SPLIT];
      const uint i0 = s_candidate_indices[j], i1 = s_candidate_indices[j + RANK_SPLIT];
      const uint i2 = s_candidate_indices[j + 2u * RANK_SPLIT], i3 = s_candidate_indices[j + 3u * RANK_SPLIT];
      place += uint(o0 < f || (o0 == f && i0 < index)) + uint(o1 < f || (o1 == f && i1 < index)) +
               uint(o2 < f || (o2 == f && i2 < index)) + uint(o3 < f || (o3 == f && i3 < index));
    }
    for (; j < size; j += RANK_SPLIT) {
      const uint other = s_bins[j];
      place += uint(other < f || (other == f && s_candidate_indices[j] < index));
    }
  }
  if (mine < candidates) atomicAdd(s_candidate_keys[local], place);
  barrier();  // every share counted
  if (mine >= candidates || part != 0u) return;
  place = s_candidate_keys[local];
  if (place >= pc.k) return;
  WriteUints(pc.keys[1]).data[place] = key;
  if ((pc.flags & VREN_RADIX_FLAG_VALUES) != 0u) {
    const bool index_values = (pc.flags & VREN_RADIX_FLAG_INDEX_VALUES) != 0u;
    WriteUints(pc.values[1]).data[place] = index_values ? index : ReadUints(pc.values[0]).data[min(index, pc.count - 1u)];
  }
}

// Three levels, when level 1 counted: the last level's digits, then the collect, in one dispatch.
// Each workgroup counts its run's digits, stores them in its row of the group histograms and
// adds them to the level's histogram, then waits (polls within POLL_BUDGET) until every
// workgroup of the grid says it has; a workgroup whose wait runs out counts every key's digit
// itself, and the keys equal to the k-th in the earlier runs. Either way it finds the same k-th
// key and appends its candidates.
void settle() {
  const uint l = levels() - 1u;
  const uvec2 state = state_entering(l);  // the prefix entering the last level, keys below it
  const uvec2 run = run_of_keys();
  const uint bins = 1u << level_width(l);
  for (uint b = gl_LocalInvocationIndex; b < SELECT_BINS; b += WG) s_bins[b] = 0u;
  barrier();  // counters zeroed
  count_digit(run, level_low(l), level_width(l), state.x);
  barrier();  // every key counted
  CoherentUints words = CoherentUints(pc.internal);
  for (uint b = gl_LocalInvocationIndex; b < bins; b += WG) {
    const uint c = s_bins[b];
    words.data[VREN_RADIX_TOPK_GROUP_HISTOGRAMS + gl_WorkGroupID.x * SELECT_BINS + b] = c;
    if (c != 0u) atomicAdd(words.data[VREN_RADIX_TOPK_HISTOGRAMS + l * SELECT_BINS + b], c);
  }
  memoryBarrierBuffer();
  barrier();  // the workgroup's counts stored before it says so
  if (gl_LocalInvocationIndex == 0u) {
    PublishedAtomics published = PublishedAtomics(pc.internal);
    uint settled = atomicAdd(pc.internal.data[VREN_RADIX_TOPK_SETTLED], 1u) + 1u;  // the last one need not poll
    for (uint polls = 0u; settled < gl_NumWorkGroups.x && polls < POLL_BUDGET; ++polls)
      settled = poll_word(published, VREN_RADIX_TOPK_SETTLED);
    s_all_counted = settled >= gl_NumWorkGroups.x ? 1u : 0u;
    memoryBarrierBuffer();
  }
  barrier();  // the wait's outcome known
  const uint need = pc.k - state.y;
  const bool all_counted = s_all_counted != 0u;
  if (all_counted) {  // uniform
    for (uint b = gl_LocalInvocationIndex; b < SELECT_BINS; b += WG)
      s_bins[b] = b < bins ? words.data[VREN_RADIX_TOPK_HISTOGRAMS + l * SELECT_BINS + b] : 0u;
  } else {  // every key's digit counted here
    for (uint b = gl_LocalInvocationIndex; b < SELECT_BINS; b += WG) s_bins[b] = 0u;
    barrier();  // counters zeroed
    count_digit(uvec2(0u, pc.count), level_low(l), level_width(l), state.x);
  }
  barrier();  // the level's histogram here
  find_threshold(l, need, true);
  const uint kth = (state.x << level_width(l)) | s_threshold;
  uint ties_before;
  if (all_counted) {
    ties_before = ties_in_earlier_runs(s_threshold);
  } else {
    ReadUints keys = ReadUints(pc.keys[0]);
    uint earlier = 0u;
    for (uint i = gl_LocalInvocationIndex; i < run.x; i += WG) earlier += field_of(keys.data[i]) == kth ? 1u : 0u;
    workgroup_exclusive_add(earlier, ties_before);
  }
  append_candidates(run, kth, ties_before, need - s_threshold_below);
}

// Top-k of segment tile_index(), every phase in this workgroup: the levels count into s_bins,
// the candidates gather in input order into shared memory (a running count, no atomics), and each
// is ranked among them.
void select_segment() {
  const uint segment = tile_index();
  if (segment >= segments_in_use()) return;  // uniform: the whole workgroup
  const uvec2 range = segment_range(segment);
  const uint k = min(min(pc.k, range.y - range.x), VREN_RADIX_TOPK_SEGMENT_MAX_K);
  if (k == 0u) return;
  ReadUints keys = ReadUints(pc.keys[0]);
  uint prefix = 0u, below = 0u;
  for (uint l = 0u; l < levels(); ++l) {  // uniform
    for (uint b = gl_LocalInvocationIndex; b < SELECT_BINS; b += WG) s_bins[b] = 0u;
    barrier();  // counters zeroed
    count_digit(range, level_low(l), level_width(l), prefix);
    barrier();  // every key counted
    find_threshold(l, k - below, true);
    prefix = (prefix << level_width(l)) | s_threshold;
    below += s_threshold_below;
  }
  const uint kth = prefix, ties_needed = k - below;
  uint taken = 0u, ties_before = 0u;
  for (uint start = range.x; start < range.y && taken < k; start += WG * ROUND_KEYS) {  // uniform
    const uint first = start + ordered_thread() * ROUND_KEYS;
    uint round_keys[ROUND_KEYS];
    uint counts = 0u;
    [[unroll]] for (uint e = 0u; e < ROUND_KEYS; ++e) {
      round_keys[e] = first + e < range.y ? keys.data[first + e] : 0u;
      const uint f = field_of(round_keys[e]);
      if (first + e < range.y) counts += f < kth ? 1u : (f == kth ? 0x10000u : 0u);
    }
    uint totals;
    uint ranks = workgroup_exclusive_add(counts, totals);
    const uint ties_taken = min(totals >> 16u, ties_needed - min(ties_before, ties_needed));
    [[unroll]] for (uint e = 0u; e < ROUND_KEYS; ++e) {
      if (first + e >= range.y) break;
      const uint f = field_of(round_keys[e]);
      const uint tie_rank = ranks >> 16u;
      if (f < kth || (f == kth && tie_rank < ties_taken)) {
        const uint slot = taken + (ranks & 0xFFFFu) + min(tie_rank, ties_taken);
        if (slot < k) {  // exactly k, unless the counts lie
          s_candidate_keys[slot] = round_keys[e];
          s_candidate_fields[slot] = f;
          s_candidate_indices[slot] = first + e;
        }
      }
      ranks += f < kth ? 1u : (f == kth ? 0x10000u : 0u);
    }
    taken += (totals & 0xFFFFu) + ties_taken;
    ties_before += totals >> 16u;
  }
  barrier();  // every candidate in shared memory, in input order
  const bool with_values = (pc.flags & VREN_RADIX_FLAG_VALUES) != 0u;
  const bool index_values = (pc.flags & VREN_RADIX_FLAG_INDEX_VALUES) != 0u;
  for (uint c = gl_LocalInvocationIndex; c < k; c += WG) {
    const uint f = s_candidate_fields[c];
    uint place = 0u;
    for (uint j = 0u; j < k; ++j) {
      const uint other = s_candidate_fields[j];
      if (other < f || (other == f && j < c)) ++place;
    }
    const uint to = segment * pc.k + place;
    WriteUints(pc.keys[1]).data[to] = s_candidate_keys[c];
    const uint index = s_candidate_indices[c];
    if (with_values) WriteUints(pc.values[1]).data[to] = index_values ? index : ReadUints(pc.values[0]).data[index];
  }
}

void main() {
  if (pc.pass == VREN_RADIX_TOPK_PHASE_SEGMENTS) {
    select_segment();
    return;
  }
  if (pc.pass == VREN_RADIX_TOPK_PHASE_ZERO) {
    for (uint i = gl_LocalInvocationIndex; i < VREN_RADIX_TOPK_STATE; i += WG) pc.internal.data[VREN_RADIX_TOPK_HISTOGRAMS + i] = 0u;
    if (gl_LocalInvocationIndex == 0u) {
      pc.internal.data[VREN_RADIX_TOPK_CANDIDATES] = 0u;
      pc.internal.data[VREN_RADIX_TOPK_GROUPED] = 0u;
      pc.internal.data[VREN_RADIX_TOPK_SETTLED] = 0u;
    }
  } else if (pc.pass < VREN_RADIX_TOPK_PHASE_COLLECT) {
    count_level(pc.pass - VREN_RADIX_TOPK_PHASE_LEVEL);
  } else if (pc.pass == VREN_RADIX_TOPK_PHASE_COLLECT) {
    collect();
  } else if (pc.pass == VREN_RADIX_TOPK_PHASE_SETTLE) {
    settle();
  } else {
    rank();
  }
}
