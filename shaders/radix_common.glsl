// Helpers shared by the radix passes: the state block, key access for 32- and 64-bit keys
// (VREN_RADIX_KEY64 selects the latter at compile time), and the digit of a key.

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_memory_scope_semantics : require

#include "radix_shared.h"

layout(constant_id = VREN_RADIX_SPEC_DIGIT_BITS) const uint DIGIT_BITS = VREN_RADIX_DEFAULT_DIGIT_BITS;
const uint BINS = 1u << DIGIT_BITS;
// Bin of the tile slots past the last key: the last bin, so they sort behind every real key.
const uint PADDING_BIN = BINS - 1u;

uint state(uint word) { return pc.internal.data[word]; }
uint element_count() { return state(VREN_RADIX_STATE_COUNT); }
uint tile_count() { return state(VREN_RADIX_STATE_TILES); }
// Which ping-pong buffer (0: the caller's, 1: temp) holds the input of pass p.
uint parity(uint p) { return state(VREN_RADIX_STATE_PARITY + p); }
// Tile-major: a tile's counts are one contiguous row, written and read in coalesced accesses.
uint counts_at(uint bin, uint tile) { return VREN_RADIX_STATE_WORDS + tile * BINS + bin; }
// Count workgroups (groups of count_tiles tiles) and their digit counts, digit-major: the scan
// walks each bin's row of groups in coalesced loads (group-major made it 2.5x slower).
uint group_count(uint count_tiles) { return (tile_count() + count_tiles - 1u) / count_tiles; }
uint group_sums_at(uint bin, uint group, uint count_tiles) {
  return VREN_RADIX_STATE_WORDS + BINS * tile_count() + bin * group_count(count_tiles) + group;
}

// Where the tile's keys of `bin` start among the pass's keys of that bin (the scatter adds the
// lower bins' totals): the scan's offset of the tile's count group plus the counts of the group's
// earlier tiles. A fixed trip count, so that the loads unroll and are in flight together.
uint earlier_tiles_count(uint bin, uint tile, uint count_tiles) {
  const uint group = tile / count_tiles;
  uint count = 0u;
  [[unroll]] for (uint i = 0u; i + 1u < count_tiles; ++i) {
    const uint earlier = group * count_tiles + i;
    if (earlier < tile) count += pc.internal.data[counts_at(bin, earlier)];
  }
  return count;
}
uint tile_offset(uint bin, uint tile, uint count_tiles) {
  const uint offset = pc.internal.data[group_sums_at(bin, tile / count_tiles, count_tiles)];
  return offset + earlier_tiles_count(bin, tile, count_tiles);
}

// Look-back sorts: pass p's digit totals, from the histogram, and the word `tile` publishes for
// `bin` in set `set` (pass parity). Tile-major, so that no address needs the tile count: a
// load that each poll would otherwise repeat after the stores around it.
uint pass_totals_at(uint pass, uint bin) { return VREN_RADIX_LOOKBACK_TOTALS + pass * BINS + bin; }
uint lookback_at(uint set, uint tile, uint bin) { return VREN_RADIX_LOOKBACK_WORDS + (2u * tile + set) * BINS + bin; }

// Sets the input parity of pass p + 1; after the last pass, where the result is.
void set_next_parity(uint next_parity) { pc.internal.data[VREN_RADIX_STATE_PARITY + pc.pass + 1u] = next_parity; }

// The thread's place in input order: subgroup-major, so a subgroup scan ranks threads in order
// without assuming how the driver maps gl_LocalInvocationIndex to subgroups.
uint ordered_thread() { return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID; }

// Tiles may be dispatched as a 2D grid when there are more than maxComputeWorkGroupCount[0].
uint tile_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

#ifdef VREN_RADIX_KEY64
#define Key uvec2
const Key NO_KEY = uvec2(0xFFFFFFFFu);
Key load_key(ReadUints keys_buffer, uint i) { return uvec2(keys_buffer.data[2u * i], keys_buffer.data[2u * i + 1u]); }
void store_key(WriteUints keys_buffer, uint i, Key key) {
  keys_buffer.data[2u * i] = key.x;
  keys_buffer.data[2u * i + 1u] = key.y;
}
// The key's bits from `shift` upwards (a digit may straddle the two words).
uint bits_from(Key key, uint shift) {
  if (shift >= 32u) return key.y >> (shift - 32u);
  return shift == 0u ? key.x : (key.x >> shift) | (key.y << (32u - shift));
}
#else
#define Key uint
const Key NO_KEY = 0xFFFFFFFFu;
// Off for u32 keys, which need no map: the pipelines for them skip its per-key work.
layout(constant_id = VREN_RADIX_SPEC_KEY_MAP) const bool KEY_MAP = true;
Key load_key(ReadUints keys_buffer, uint i) { return keys_buffer.data[i]; }
void store_key(WriteUints keys_buffer, uint i, Key key) { keys_buffer.data[i] = key; }
// Signed and float keys are ordered through a bijection to unsigned order, applied on the fly
// (i32: flip the sign bit; f32: flip every bit of negatives, the sign bit of the rest): stored
// keys are never changed, so no pass needs to map them back.
uint bits_from(Key key, uint shift) {
  if (KEY_MAP) key ^= (uint(int(key) >> 31) & pc.negative_flip) | pc.key_flip;
  return key >> shift;
}
#endif

// Descending order reverses the bins: digit_mask - digit, as an XOR with the all-ones mask.
uint bin_at(Key key, uint shift, uint digit_mask, uint bin_flip) { return (bits_from(key, shift) & digit_mask) ^ bin_flip; }
uint bin_of(Key key) { return bin_at(key, pc.shift, pc.digit_mask, pc.bin_flip); }

// The subgroup's barrier for its shared memory: every lane's accesses before it happen before
// every lane's after it. subgroupBarrier() with subgroupMemoryBarrierShared() orders the buffer
// and image accesses too; this one only shared memory, all that a subgroup's rounds here share.
// On an H200 (onesweep ranking, 2026-12-02, two runs alternating): keys 2^24 / 2^26 0.487 /
// 1.755 ms against 0.493 / 1.781, pairs 0.664 / 2.480 against 0.669 / 2.502.
void subgroup_barrier_shared() {
  controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
}

// Lanes of this subgroup whose bin equals this lane's, among the lanes that vote (bits past the
// subgroup size are junk; the ballot bit counts ignore them).
uvec4 peers_of(uint bin, bool votes) {
  uvec4 peers = subgroupBallot(votes);
  [[unroll]] for (uint b = 0u; b < DIGIT_BITS; ++b) {
    const bool set = ((bin >> b) & 1u) != 0u;
    const uvec4 ballot = subgroupBallot(set);
    peers &= set ? ballot : ~ballot;
  }
  return peers;
}
