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
// Shared memory (bytes): s_fields 4 * WORKGROUP_SIZE * KEYS_PER_THREAD.
#extension GL_GOOGLE_include_directive : require
#include "radix_common.glsl"
#include "radix_segments.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;

shared uint s_fields[gl_WorkGroupSize.x * KEYS_PER_THREAD];

uint field_of(uint key) {
  const uint bits = pc.end_bit - pc.shift;
  const uint mask = bits >= 32u ? 0xFFFFFFFFu : (1u << bits) - 1u;
  const uint f = bits_from(key, pc.shift) & mask;
  return (pc.flags & VREN_RADIX_FLAG_DESCENDING) != 0u ? f ^ mask : f;
}

// Writes a key of `segment` whose input slot is `slot` at its place.
void write_result(uint segment, uint first, uint slot, uint place, uint key) {
  if (pc.k > 0u && place >= pc.k) return;
  const uint to = pc.k > 0u ? segment * pc.k + place : first + place;
  WriteUints(pc.keys[1]).data[to] = key;
  if ((pc.flags & VREN_RADIX_FLAG_VALUES) != 0u)
    WriteUints(pc.values[1]).data[to] =
        (pc.flags & VREN_RADIX_FLAG_INDEX_VALUES) != 0u ? first + slot : ReadUints(pc.values[0]).data[first + slot];
}

// One thread per segment: every pair of keys compared once, in registers.
void sort_by_thread() {
  const uint TINY = VREN_RADIX_THREAD_SEGMENT_MAX;
  const uint segment = tile_index() * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
  if (segment >= segments_in_use()) return;
  const uvec2 range = segment_range(segment);
  if (!length_taken(range.y - range.x)) return;  // another way sorts it
  const uint length = min(range.y - range.x, TINY);
  ReadUints keys_in = ReadUints(pc.keys[0]);
  uint keys[TINY], fields[TINY], places[TINY];
  [[unroll]] for (uint i = 0u; i < TINY; ++i) {
    keys[i] = i < length ? keys_in.data[range.x + i] : 0u;
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
  [[unroll]] for (uint i = 0u; i < TINY; ++i)
    if (i < length) write_result(segment, range.x, i, places[i], keys[i]);
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
    subgroupMemoryBarrierShared();
    subgroupBarrier();  // the segment's fields visible to every lane
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
    subgroupMemoryBarrierShared();
    subgroupBarrier();  // every lane done with the fields before the next segment's
  }
}
