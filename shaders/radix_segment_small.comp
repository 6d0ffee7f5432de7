#version 460
// Segmented sorts and top-k of short segments of 32-bit keys: each subgroup sorts whole segments
// of at most gl_SubgroupSize * KEYS_PER_THREAD keys, one at a time. Its lanes hold the keys in
// registers and their sort fields in the subgroup's slice of shared memory; a key's place is the
// number of keys of its segment before it in (field, index) order, which is the stable order, so
// each key is read once and written once straight to its place, with no pass and no barrier
// between subgroups.
//
// Workgroup w takes segments w * MAX_SUBGROUPS, ...: as many as it has subgroups at the smallest
// subgroup size, each subgroup looping over its share at the size it runs at. The host takes
// this way only for segments of at most min_subgroup_size * KEYS_PER_THREAD keys; longer ones
// (past a broken promise) are cut to what the subgroup holds.
//
// Segments of at most VREN_RADIX_THREAD_SEGMENT_MAX keys (VREN_RADIX_FLAG_THREAD_SEGMENTS) take a
// thread each instead, the same way in registers alone: a subgroup per segment of 16 keys spent
// its instructions on idle lanes (1M segments of 16: 1.43 ms on an H200).
//
// Keys are compared by their sort field: the order map of signed and float keys, bits
// [pc.shift, pc.end_bit), reversed for descending order. Output as radix_sort_block.comp's
// segmented sorts: the temp buffers at the segment's offsets, or with pc.k > 0 the first k at
// s * k.
//
// Shared memory (bytes): s_fields 4 * WORKGROUP_SIZE * max(KEYS_PER_THREAD, 16).
#extension GL_GOOGLE_include_directive : require
#include "radix_common.glsl"
#include "radix_segments.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;

// The subgroups' fields, or the thread way's keys.
const uint SHARED_WORDS =
    gl_WorkGroupSize.x * (KEYS_PER_THREAD > VREN_RADIX_THREAD_SEGMENT_MAX ? KEYS_PER_THREAD : VREN_RADIX_THREAD_SEGMENT_MAX);
shared uint s_fields[SHARED_WORDS];

uint field_of(uint key) {
  const uint bits = pc.end_bit - pc.shift;
  const uint mask = bits >= 32u ? 0xFFFFFFFFu : (1u << bits) - 1u;
  const uint f = bits_from(key, pc.shift) & mask;
  return (pc.flags & VREN_RADIX_FLAG_DESCENDING) != 0u ? f ^ mask : f;
}

// Writes the value of the key at input index `source` to `to` (argsort: the index itself).
void write_value(uint to, uint source) {
  if ((pc.flags & VREN_RADIX_FLAG_VALUES) != 0u)
    WriteUints(pc.values[1]).data[to] =
        (pc.flags & VREN_RADIX_FLAG_INDEX_VALUES) != 0u ? source : ReadUints(pc.values[0]).data[source];
}

// Writes a key of `segment` whose input slot is `slot` at its place.
void write_result(uint segment, uint first, uint slot, uint place, uint key) {
  if (pc.k > 0u && place >= pc.k) return;
  const uint to = pc.k > 0u ? segment * pc.k + place : first + place;
  WriteUints(pc.keys[1]).data[to] = key;
  write_value(to, first + slot);
}

// One thread per segment: every pair of keys compared once, in registers. The workgroup's
// segments are contiguous: when they hold at most WORKGROUP_SIZE * VREN_RADIX_THREAD_SEGMENT_MAX
// elements, their keys come in through shared memory in coalesced loads, and if this way sorts
// all of them (other ways write the others' elements) they go out the same way: each thread's
// strided accesses took 0.195 ms for 1M segments of 16 keys on an H200, this 0.114 ms (0.154
// when the workgroup agreed on the way out through per-subgroup flags in shared memory).
void sort_by_thread() {
  const uint TINY = VREN_RADIX_THREAD_SEGMENT_MAX;
  const uint WG = gl_WorkGroupSize.x;
  const uint segments = segments_in_use();
  const uint first_segment = tile_index() * WG;
  if (first_segment >= segments) return;  // uniform: the whole workgroup
  const uint begin = offset_at(first_segment);
  const uint end = max(offset_at(min(first_segment + WG, segments)), begin);
  const bool staged = end - begin <= WG * TINY;  // uniform
  const uint segment = first_segment + gl_LocalInvocationIndex;
  ReadUints keys_in = ReadUints(pc.keys[0]);
  uvec2 range = uvec2(0u);  // read while the run comes in
  if (segment < segments) range = segment_range(segment);
  if (staged) {
    uint run_keys[TINY];  // loaded together, then stored
    [[unroll]] for (uint r = 0u; r < TINY; ++r) {
      const uint i = r * WG + gl_LocalInvocationIndex;
      run_keys[r] = i < end - begin ? keys_in.data[begin + i] : 0u;
    }
    [[unroll]] for (uint r = 0u; r < TINY; ++r) {
      const uint i = r * WG + gl_LocalInvocationIndex;
      if (i < end - begin) s_fields[i] = run_keys[r];
    }
    barrier();  // the keys in shared memory
  }
  const bool taken = segment < segments && length_taken(range.y - range.x);  // else another way sorts it
  const uint length = taken ? min(range.y - range.x, TINY) : 0u;
  // Offsets that lie may put a segment outside the workgroup's run: read it from memory.
  const bool from_stage = staged && range.x >= begin && range.x + length <= end;
  uint keys[TINY], fields[TINY], places[TINY];
  [[unroll]] for (uint i = 0u; i < TINY; ++i) {
    keys[i] = i >= length ? 0u : from_stage ? s_fields[range.x - begin + i] : keys_in.data[range.x + i];
    fields[i] = field_of(keys[i]);
    places[i] = 0u;
  }
  [[unroll]] for (uint i = 1u; i < TINY; ++i) {
    [[unroll]] for (uint j = 0u; j < i; ++j) {
      if (i < length) {  // j < i: j goes first unless its field is larger
        if (fields[j] <= fields[i]) ++places[i];
        else ++places[j];
      }
    }
  }
  // Whole segments at their offsets go out through shared memory, the rest straight to memory.
  // The run goes out whole only if no other way writes part of it: every segment takes this way
  // (no length range), or the classification found no segment of another way.
  const bool every_length = pc.min_length == 0u && pc.max_length == 0u;
  const bool to_stage = staged && pc.k == 0u &&
                        (every_length || pc.internal.data[VREN_RADIX_SEGMENTS_WAYS] == VREN_RADIX_WAY_THREAD);
  if (to_stage) barrier();  // every thread has read its keys
  [[unroll]] for (uint i = 0u; i < TINY; ++i) {
    if (i >= length) continue;
    if (to_stage && from_stage) {
      s_fields[range.x - begin + places[i]] = keys[i];
      write_value(range.x + places[i], range.x + i);
    } else {
      write_result(segment, range.x, i, places[i], keys[i]);
    }
  }
  if (!to_stage) return;
  barrier();  // the segments sorted in shared memory
  WriteUints keys_out = WriteUints(pc.keys[1]);
  for (uint i = gl_LocalInvocationIndex; i < end - begin; i += WG) keys_out.data[begin + i] = s_fields[i];
}

void main() {
  if ((pc.flags & VREN_RADIX_FLAG_THREAD_SEGMENTS) != 0u) {
    sort_by_thread();
    return;
  }
  const uint capacity = gl_SubgroupSize * KEYS_PER_THREAD;
  const uint slice = gl_SubgroupID * capacity;
  const uint lane = gl_SubgroupInvocationID;
  const uint last = min((tile_index() + 1u) * MAX_SUBGROUPS, segments_in_use());
  ReadUints keys_in = ReadUints(pc.keys[0]);
  // Uniform per subgroup.
  for (uint segment = tile_index() * MAX_SUBGROUPS + gl_SubgroupID; segment < last; segment += gl_NumSubgroups) {
    const uvec2 range = segment_range(segment);
    if (!length_taken(range.y - range.x)) continue;  // uniform per subgroup: another way sorts it
    const uint length = min(range.y - range.x, capacity);
    uint keys[KEYS_PER_THREAD], fields[KEYS_PER_THREAD];
    [[unroll]] for (uint r = 0u; r < KEYS_PER_THREAD; ++r) {
      const uint slot = r * gl_SubgroupSize + lane;
      keys[r] = slot < length ? keys_in.data[range.x + slot] : 0u;
      fields[r] = field_of(keys[r]);
      if (slot < length) s_fields[slice + slot] = fields[r];
    }
    subgroup_barrier_shared();  // the segment's fields visible to every lane
    uint places[KEYS_PER_THREAD];
    [[unroll]] for (uint r = 0u; r < KEYS_PER_THREAD; ++r) places[r] = 0u;
    for (uint j = 0u; j < length; ++j) {  // uniform
      const uint other = s_fields[slice + j];
      [[unroll]] for (uint r = 0u; r < KEYS_PER_THREAD; ++r)
        places[r] += (other < fields[r] || (other == fields[r] && j < r * gl_SubgroupSize + lane)) ? 1u : 0u;
    }
    [[unroll]] for (uint r = 0u; r < KEYS_PER_THREAD; ++r) {
      const uint slot = r * gl_SubgroupSize + lane;
      if (slot < length) write_result(segment, range.x, slot, places[r], keys[r]);
    }
    subgroup_barrier_shared();  // every lane done with the fields before the next segment's
  }
}
