#version 460
// Material sort, fast path, step 1 of 3: count each chunk's pixels per material.
//
// Chunks, segments, ballots and owned counts as in materials_fast.glsl. Each lane first loads
// all ROUNDS of its pixels (independent loads in flight together). Then, per round, BITS ballots
// and, per pass on each lane, one AND per bit and one bit count give the round's pixels of the
// lane's owned material, summed in a register over the rounds: no shared memory, atomics or
// barriers inside the rounds, and no per-pixel rank (counting needs none). Each subgroup writes
// its segment's counts to its own row of s_count; one barrier, and a thread per material sums the
// rows. The histogram is written material-major,
//   chunk_counts[material * chunk_count + chunk],
// so that materials_fast_scan.comp's workgroup for a material reads its row contiguously. Beside
// them it clears the words the scan will publish the chunk's prefixes in (and workgroup 0 those
// of the totals): the scan and the scatter run side by side, and the scatter tells a published
// word from a stale one by its flag (materials_published.glsl).
//
// Config: WORKGROUP_SIZE threads, ROUNDS pixels per thread, BITS, MAX_SUBGROUPS >=
// gl_NumSubgroups, HISTOGRAM_SIZE >= material_count (<= WORKGROUP_SIZE).
// Shared memory: s_count, 4 * HISTOGRAM_SIZE * MAX_SUBGROUPS bytes (2 KiB for 64 materials in
// 8 subgroups).
#extension GL_GOOGLE_include_directive : require
#include "materials_fast.glsl"
#include "materials_published.glsl"

// material_ids 16 bytes at a time (BufferRange offsets are multiples of 16).
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer MaterialReadUvec4s { uvec4 data[]; };

// [subgroup][material]: the subgroup's pixels of each material in its segment.
shared uint s_count[HISTOGRAM_SIZE * MAX_SUBGROUPS];

void main() {
  const uint chunk = workgroup_index();
  if (chunk >= pc.chunk_count) return;  // uniform per workgroup: the 2D grid's overhang
  const uint materials = pc.material_count;
  const uint first = segment_pixel(chunk);

  // 1. Load every round's material. Counting needs no order inside the segment, so full chunks
  //    load 4 consecutive pixels per lane at once (a quarter of the load instructions), and
  //    round 4j + c takes component c of load j.
  uint material[ROUNDS];
  const bool full_chunk = (chunk + 1u) * ROUNDS * gl_WorkGroupSize.x <= pc.pixel_count;  // uniform
  if (ROUNDS % 4u == 0u && full_chunk) {
    MaterialReadUvec4s ids4 = MaterialReadUvec4s(pc.material_ids);
    const uint segment_quad = (first - gl_SubgroupInvocationID) / 4u;  // 16-byte aligned: ROUNDS % 4 == 0
    [[unroll]] for (uint j = 0u; j < ROUNDS / 4u; ++j) {
      const uvec4 ids = ids4.data[segment_quad + j * gl_SubgroupSize + gl_SubgroupInvocationID];
      [[unroll]] for (uint c = 0u; c < 4u; ++c) material[4u * j + c] = min(ids[c], materials - 1u);
    }
  } else {
    [[unroll]] for (uint r = 0u; r < ROUNDS; ++r) {
      const uint pixel = first + r * gl_SubgroupSize;
      material[r] = pixel < pc.pixel_count ? load_material(pixel) : 0u;
    }
  }

  // 2. Count the segment's pixels of each owned material. Pixels past the end (the last chunk
  //    only) are left out by the ballot of valid lanes.
  uint count[MAX_PASSES];
  [[unroll]] for (uint k = 0u; k < MAX_PASSES; ++k) count[k] = 0u;
  [[unroll]] for (uint r = 0u; r < ROUNDS; ++r) {
    uvec4 ballots[BITS];
    bit_ballots(material[r], ballots);
    const uvec4 valid = subgroupBallot(first + r * gl_SubgroupSize < pc.pixel_count);
    const uvec4 owned = owned_lanes(valid, ballots);
    [[unroll]] for (uint k = 0u; k < MAX_PASSES; ++k) {
      if (pass_in_use(k)) count[k] += subgroupBallotBitCount(pass_lanes(k, owned, ballots));  // uniform
    }
  }
  [[unroll]] for (uint k = 0u; k < MAX_PASSES; ++k) {
    const uint mine = k * gl_SubgroupSize + gl_SubgroupInvocationID;
    if (mine < materials) s_count[gl_SubgroupID * materials + mine] = count[k];
  }
  barrier();  // every subgroup's row written before the rows are summed

  // 3. Sum the rows and write the chunk's.
  for (uint m = gl_LocalInvocationIndex; m < materials; m += gl_WorkGroupSize.x) {
    uint total = 0u;
    for (uint s = 0u; s < gl_NumSubgroups; ++s) total += s_count[s * materials + m];
    pc.chunk_counts.data[m * pc.chunk_count + chunk] = total;
    pc.chunk_counts.data[published_prefix_at(m, chunk)] = 0u;
    if (chunk == 0u) pc.chunk_counts.data[published_total_at(m)] = 0u;
  }
}
