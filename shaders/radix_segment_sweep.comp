#version 460
// Segmented sorts of segments longer than a block: workgroup s sorts segment s alone, every pass
// of 8-bit digits in this one dispatch, tile after tile in input order. No look-back and no
// other workgroup: the workgroup keeps each bin's next output index in shared memory, so a tile's
// keys of a bin go right after the earlier tiles' (stable).
//
// Per pass:
// 1. The bins' starts: the exclusive scan of the pass's digit counts. Pass 0 counts the segment
//    first; each pass counts the next pass's digits of the keys it writes.
// 2. Per tile, as radix_onesweep.comp ranks one: load (subgroup s owns the contiguous
//    SUBGROUP_SIZE * KEYS_PER_THREAD keys from s * SUBGROUP_SIZE * KEYS_PER_THREAD), count per
//    subgroup and bin, each subgroup's start in each bin, then per round of keys ballots find the
//    lanes of the same bin and the highest one advances the subgroup's start with one shared
//    atomic. The tile, staged in bin order, goes out in slot order to the bin's next index, and
//    the bins' next indices advance by the tile's counts. Values follow through the same stage.
// Pass 0 reads the input (argsort's values: input indices), the last pass writes the temp
// buffers at the segment's offsets (with pc.k > 0 its first k elements at s * k), and the
// passes in between ping-pong through the internal buffer (pc.internal: the segment scratch
// block, then the keys' two halves and the values' two, radix_shared.h's VREN_RADIX_SWEEP_*),
// read after this workgroup's own writes through coherent views.
// Segments whose length is outside [pc.min_length, pc.max_length] are left to the other ways.
// pc.pass is the pass count; pc.shift and pc.end_bit the bit range.
//
// Shared memory (bytes), T = WORKGROUP_SIZE * KEYS_PER_THREAD, S = MAX_SUBGROUPS, W = key words:
//   s_stage           4 W T      the tile in bin order, keys then values
//   rank counters     4 S BINS   radix_tile_rank.glsl (half with RANK_PACKED), and s_bin_start
//                                4 BINS, where each bin starts in the tile
//   s_tile_count      4 BINS     the tile's keys per bin
//   s_next            4 BINS     each bin's next output index
//   s_counts          4 BINS     the next pass's digit counts
//   workgroup scan    4 (S + 1)
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "radix_common.glsl"
#include "radix_segments.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;

#include "workgroup_scan.glsl"
#include "radix_tile_rank.glsl"

layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer SweepUints { uint data[]; };

const uint WG = gl_WorkGroupSize.x;
const uint TILE_SIZE = WG * KEYS_PER_THREAD;
const uint BINS_PER_THREAD = (BINS + WG - 1u) / WG;
const uint UNITS_PER_THREAD = (RANK_UNITS + WG - 1u) / WG;  // radix_tile_rank.glsl's counter words
#ifdef VREN_RADIX_KEY64
const uint KEY_WORDS = 2u;
#else
const uint KEY_WORDS = 1u;
#endif

shared uint s_stage[TILE_SIZE * KEY_WORDS];
shared uint s_tile_count[BINS];
shared uint s_next[BINS];
shared uint s_counts[BINS];

// Where pass p reads (from == true) or writes: 0 the input / the output, else 1 + the internal
// buffer's ping-pong half.
uint buffer_of(uint p, bool from) {
  if (from) return p == 0u ? 0u : 1u + ((p - 1u) & 1u);
  return p + 1u == pc.pass ? 0u : 1u + (p & 1u);
}
Key read_key(uint where, uint i) {
  if (where == 0u) return load_key(ReadUints(pc.keys[0]), i);
  SweepUints internal = SweepUints(pc.internal);
  const uint base = VREN_RADIX_SEGMENTS_WORDS + (where - 1u) * VREN_RADIX_SWEEP_SPAN(pc.count * KEY_WORDS);
#ifdef VREN_RADIX_KEY64
  return uvec2(internal.data[base + 2u * i], internal.data[base + 2u * i + 1u]);
#else
  return internal.data[base + i];
#endif
}
void write_key(uint where, uint i, Key key) {
  SweepUints internal = SweepUints(pc.internal);
  const uint base = VREN_RADIX_SEGMENTS_WORDS + (where - 1u) * VREN_RADIX_SWEEP_SPAN(pc.count * KEY_WORDS);
#ifdef VREN_RADIX_KEY64
  internal.data[base + 2u * i] = key.x;
  internal.data[base + 2u * i + 1u] = key.y;
#else
  internal.data[base + i] = key;
#endif
}
uint value_word(uint where, uint i) {
  return VREN_RADIX_SWEEP_VALUES(pc.count, KEY_WORDS) + (where - 1u) * VREN_RADIX_SWEEP_SPAN(pc.count) + i;
}

void stage_key(uint slot, Key key) {
#ifdef VREN_RADIX_KEY64
  s_stage[2u * slot] = key.x;
  s_stage[2u * slot + 1u] = key.y;
#else
  s_stage[slot] = key;
#endif
}
Key staged_key(uint slot) {
#ifdef VREN_RADIX_KEY64
  return uvec2(s_stage[2u * slot], s_stage[2u * slot + 1u]);
#else
  return s_stage[slot];
#endif
}

// Pass p's bin of a key: digits from pc.shift up, reversed for descending order.
uint pass_bin(Key key, uint p) {
  const uint shift = pc.shift + p * DIGIT_BITS;
  const uint digit_mask = (1u << min(DIGIT_BITS, pc.end_bit - shift)) - 1u;
  return bin_at(key, shift, digit_mask, (pc.flags & VREN_RADIX_FLAG_DESCENDING) != 0u ? digit_mask : 0u);
}

void main() {
  const uint segment = tile_index();
  if (segment >= segments_in_use()) return;  // uniform: the whole workgroup
  const uvec2 range = segment_range(segment);
  const uint size = range.y - range.x;
  if (!length_taken(size)) return;  // uniform: another way sorts it
  const bool with_values = (pc.flags & VREN_RADIX_FLAG_VALUES) != 0u;
  const bool index_values = (pc.flags & VREN_RADIX_FLAG_INDEX_VALUES) != 0u;
  const uint thread = gl_LocalInvocationIndex;
  const uint first_bin = ordered_thread() * BINS_PER_THREAD;
  const uint first_unit = ordered_thread() * UNITS_PER_THREAD;
  const uint run = gl_SubgroupID * gl_SubgroupSize * KEYS_PER_THREAD;  // this subgroup's keys in a tile

  // Pass 0's digit counts, a tile's keys loaded together before they are counted. H200, 256
  // segments of 2^16 keys: 0.976 ms with one key loaded per iteration, 0.907 ms so.
  for (uint b = thread; b < BINS; b += WG) s_counts[b] = 0u;
  barrier();  // counters zeroed
  for (uint base = 0u; base < size; base += TILE_SIZE) {  // uniform
    Key keys[KEYS_PER_THREAD];  // loaded together, then counted
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
      const uint slot = base + i * WG + thread;
      keys[i] = slot < size ? read_key(0u, range.x + slot) : NO_KEY;
    }
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i)
      if (base + i * WG + thread < size) atomicAdd(s_counts[pass_bin(keys[i], 0u)], 1u);
  }

  for (uint p = 0u; p < pc.pass; ++p) {  // uniform
    const uint from = buffer_of(p, true), to = buffer_of(p, false);
    const bool last_pass = p + 1u == pc.pass;
    // 1. Each bin's first output index (relative to the segment); the next pass's counts zeroed.
    barrier();  // the counts complete
    uint counts[BINS_PER_THREAD];
    uint thread_sum = 0u;
    [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
      counts[j] = first_bin + j < BINS ? s_counts[first_bin + j] : 0u;
      thread_sum += counts[j];
    }
    uint unused_total;
    uint start = workgroup_exclusive_add(thread_sum, unused_total);  // its barriers: counts read
    [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
      if (first_bin + j < BINS) {
        s_next[first_bin + j] = start;
        s_counts[first_bin + j] = 0u;
      }
      start += counts[j];
    }

    for (uint tile_begin = 0u; tile_begin < size; tile_begin += TILE_SIZE) {  // uniform
      const uint tile_keys = min(TILE_SIZE, size - tile_begin);
      rank_clear();
      Key keys[KEYS_PER_THREAD];
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
        const uint slot = run + i * gl_SubgroupSize + gl_SubgroupInvocationID;
        keys[i] = slot < tile_keys ? read_key(from, range.x + tile_begin + slot) : NO_KEY;
      }
      barrier();  // counters zeroed (and the previous tile's stage read out)

      // 2. Each subgroup's keys per bin; the tile's per bin; starts in the tile.
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
        if (run + i * gl_SubgroupSize + gl_SubgroupInvocationID < tile_keys)
          rank_count(pass_bin(keys[i], p));
      }
      barrier();  // the subgroups' counts complete
      uint thread_tile_sum = 0u;
      uint unit_counts[UNITS_PER_THREAD];
      [[unroll]] for (uint j = 0u; j < UNITS_PER_THREAD; ++j) {
        const uint unit = first_unit + j;
        unit_counts[j] = 0u;
        if (unit < RANK_UNITS) {
          unit_counts[j] = rank_unit_counts(unit);
          [[unroll]] for (uint h = 0u; h < RANK_UNIT_BINS; ++h) {
            s_tile_count[unit * RANK_UNIT_BINS + h] = rank_unit_part(unit_counts[j], h);
            thread_tile_sum += rank_unit_part(unit_counts[j], h);
          }
        }
      }
      uint tile_start = workgroup_exclusive_add(thread_tile_sum, unused_total);
      [[unroll]] for (uint j = 0u; j < UNITS_PER_THREAD; ++j) {
        const uint unit = first_unit + j;
        if (unit < RANK_UNITS) tile_start = rank_place_unit(unit, unit_counts[j], tile_start);
      }
      barrier();  // every subgroup's starts final

      // 3. Rank straight into the key's slot in the tile (radix_onesweep.comp, step 4).
      uint ranks[KEYS_PER_THREAD];
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
        const bool valid = run + i * gl_SubgroupSize + gl_SubgroupInvocationID < tile_keys;
        uint bin = pass_bin(keys[i], p);
        if (i > 0u) bin ^= ranks[i - 1u] >> 31u;  // keeps the rounds' ballots in order
        ranks[i] = rank_key(bin, valid);
        if (valid) stage_key(ranks[i], keys[i]);
        subgroup_barrier_shared();  // the next round's leader's atomic follows this one's
      }
      barrier();  // the tile in bin order

      // 4. Out in slot order to each bin's next index; the next pass's digits counted.
      uint destination[KEYS_PER_THREAD];
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
        const uint slot = i * WG + thread;
        destination[i] = 0xFFFFFFFFu;
        if (slot < tile_keys) {
          const Key key = staged_key(slot);
          const uint bin = pass_bin(key, p);
          const uint place = s_next[bin] + slot - s_bin_start[bin];  // in the segment
          if (last_pass) {
            if (pc.k == 0u || place < pc.k) {
              destination[i] = pc.k > 0u ? segment * pc.k + place : range.x + place;
              store_key(WriteUints(pc.keys[1]), destination[i], key);
            }
          } else {
            destination[i] = range.x + place;
            write_key(to, destination[i], key);
            atomicAdd(s_counts[pass_bin(key, p + 1u)], 1u);
          }
        }
      }
      if (with_values) {
        uint values[KEYS_PER_THREAD];
        [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
          const uint slot = run + i * gl_SubgroupSize + gl_SubgroupInvocationID;
          const uint at = range.x + tile_begin + slot;
          values[i] = 0u;
          if (slot < tile_keys)
            values[i] = from != 0u     ? SweepUints(pc.internal).data[value_word(from, at)]
                        : index_values ? at
                                       : ReadUints(pc.values[0]).data[at];
        }
        barrier();  // every key read out of the stage
        [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
          if (run + i * gl_SubgroupSize + gl_SubgroupInvocationID < tile_keys) s_stage[ranks[i]] = values[i];
        }
        barrier();  // the values in bin order
        [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
          if (destination[i] == 0xFFFFFFFFu) continue;
          const uint value = s_stage[i * WG + thread];
          if (last_pass) WriteUints(pc.values[1]).data[destination[i]] = value;
          else SweepUints(pc.internal).data[value_word(to, destination[i])] = value;
        }
      }
      barrier();  // every thread has read the bins' next indices and the stage
      [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j)
        if (first_bin + j < BINS) s_next[first_bin + j] += s_tile_count[first_bin + j];
    }
    memoryBarrierBuffer();
    barrier();  // this pass's output written before the next pass reads it
  }
}
