#version 460
// Sort setup: one thread fixes the element count (from the push constants, or read on the GPU
// for cmdSortIndirect, clamped to the count the memory was sized for), derives the tile count
// and the indirect dispatch grids the later passes run on (one workgroup per tile; the count
// pass one per COUNT_TILES tiles), and marks pass 0's input as the caller's buffer. For the
// look-back (pc.pass: the pass count), the whole workgroup zeroes every pass's digit totals,
// which the histogram adds to (1024 stores are 5 us for one thread on an H200), and the passes'
// tickets.
#extension GL_GOOGLE_include_directive : require
#include "radix_common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) const uint WORKGROUP_SIZE = 256;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 8;
layout(constant_id = VREN_RADIX_SPEC_COUNT_TILES) const uint COUNT_TILES = 4;

// A 2D grid of at least `groups` workgroups, at most max_groups_x wide.
void write_grid(uint word, uint groups) {
  const uint x = min(groups, pc.max_groups_x);
  pc.internal.data[word + 0u] = x;
  pc.internal.data[word + 1u] = x == 0u ? 0u : (groups + x - 1u) / x;
  pc.internal.data[word + 2u] = 1u;
}

void main() {
  if ((pc.flags & VREN_RADIX_FLAG_LOOKBACK) != 0u) {
    for (uint j = gl_LocalInvocationIndex; j < pc.pass * BINS; j += gl_WorkGroupSize.x)
      pc.internal.data[pass_totals_at(0u, j)] = 0u;
    if (gl_LocalInvocationIndex < VREN_RADIX_LOOKBACK_PASSES)
      pc.internal.data[VREN_RADIX_STATE_TICKETS + gl_LocalInvocationIndex] = 0u;
  }
  if (gl_LocalInvocationIndex != 0u) return;
  const uint tile_size = WORKGROUP_SIZE * KEYS_PER_THREAD;
  uint count = pc.count;
  if ((pc.flags & VREN_RADIX_FLAG_INDIRECT) != 0u) count = min(pc.count_address.data[0], pc.count);
  const uint tiles = count / tile_size + (count % tile_size != 0u ? 1u : 0u);
  pc.internal.data[VREN_RADIX_STATE_COUNT] = count;
  pc.internal.data[VREN_RADIX_STATE_TILES] = tiles;
  write_grid(VREN_RADIX_STATE_TILE_GRID, tiles);
  write_grid(VREN_RADIX_STATE_COUNT_GRID, tiles / COUNT_TILES + (tiles % COUNT_TILES != 0u ? 1u : 0u));
  pc.internal.data[VREN_RADIX_STATE_PARITY] = 0u;
#ifdef VREN_RADIX_SHADER_CLOCKS
  for (uint k = 0u; k < VREN_RADIX_CLOCK_WORDS; ++k) pc.internal.data[VREN_RADIX_STATE_CLOCKS + k] = 0u;
#endif
}
