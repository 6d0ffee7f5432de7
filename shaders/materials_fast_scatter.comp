#version 460
// Material sort, fast path, step 3 of 3: the range offsets, stable rank of each pixel within its
// material, the map
//   new_to_old[offsets[m] + rank] = pixel,
// and the padding slots.
//
// Offsets: every workgroup has the M totals (from step 2) and scans them, padded to
// range_alignment, beside its chunk's own scan over materials (phase 3); workgroup 0 writes them
// to offsets. That costs each workgroup one load per material thread, issued with its chunk's
// prefixes, where a one-workgroup offsets step between the scan and this one cost a serial
// chain of its own. Padding: workgroup c fills the padding slots of materials c, c + C, ...
// (C = chunk_count): no padding dispatch beside this one.
//
// Step 2 runs beside this one, not before it: a dependent dispatch costs more (about 3 us on an
// H200) than the scan itself. Its prefixes and totals are published words
// (materials_published.glsl), read at the start and, for a word not yet published, polled again
// after ranking, when the scan has usually long finished (it starts with this dispatch and has
// a few thousand words to add up). For a word still unpublished when its thread's polls run out
// (POLL_BUDGET in all: nothing promises that the scan's workgroups run while this one waits),
// phase 3 adds the prefix and total up from the chunks' counts itself: slow, but it needs no
// other workgroup.
//
// Chunks, segments, ballots and owned counts as in materials_fast.glsl. A pixel's rank among its
// chunk's pixels of material m is
//     pixels of m in earlier subgroups' segments      (scan of s_count over subgroups, phase 3)
//   + pixels of m in earlier rounds of this segment   (the owning lane's running count, phase 2)
//   + pixels of m in earlier lanes of this round      (bit count of the peers below the lane)
// and its destination that plus offsets[m] + the pixels of m in earlier chunks (from step 2), so
// pixels keep their scan order within each material: the map is stable.
// Its chunk-local position, in the chunk sorted by material, is the rank plus the chunk's pixels
// of lower materials (the material's start).
// The running counts live in registers of the lanes that own the materials, and a lane reads its
// material's with one shuffle per round: a round touches no shared memory and needs no barrier.
// The chunk is then sorted by material in shared memory and written out in that order:
// consecutive threads write consecutive slots, where scattering straight from the ranks would
// write one short run per material and round (one 32-byte sector per pixel with 64 random
// materials). Three workgroup barriers per chunk.
//
// Config: WORKGROUP_SIZE threads, ROUNDS pixels per thread (WORKGROUP_SIZE * ROUNDS <= 65536),
// BITS, MAX_SUBGROUPS >= gl_NumSubgroups, HISTOGRAM_SIZE >= material_count (<= 64 and <=
// WORKGROUP_SIZE).
// Shared memory (bytes), W = WORKGROUP_SIZE, G = MAX_SUBGROUPS, H = HISTOGRAM_SIZE:
//   s_count    4 H G      (2 KiB for 64 materials in 8 subgroups)
//   s_delta    4 H
//   s_range_*  8 H
//   s_sorted   4 W ROUNDS (16 KiB for 256 threads and 16 rounds)
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "materials_fast.glsl"
#include "materials_published.glsl"

layout(constant_id = VREN_RADIX_MATERIALS_SPEC_POLL_BUDGET) const uint POLL_BUDGET = 4096;

// Subgroup s's row, [s * material_count, (s + 1) * material_count): its segment's pixels per
// material (phase 2), then per material the chunk-local position of its first pixel in the
// segment: start + pixels in earlier subgroups' segments (phase 3).
shared uint s_count[HISTOGRAM_SIZE * MAX_SUBGROUPS];
// Per material: the published pixels of m in earlier chunks (phase 2, flag and all), then
// destination minus chunk-local position (phase 3), for phase 5.
shared uint s_delta[HISTOGRAM_SIZE];
// Per material: the published total of m (phase 2), then the total (phase 3), and offsets[m]
// (phase 3), for the padding.
shared uint s_range_count[HISTOGRAM_SIZE];
shared uint s_range_offset[HISTOGRAM_SIZE];
// The chunk in material order: pixel index within the chunk | material << 16.
shared uint s_sorted[gl_WorkGroupSize.x * ROUNDS];

void main() {
  const uint chunk = workgroup_index();
  if (chunk >= pc.chunk_count) return;  // uniform per workgroup: the 2D grid's overhang
  const uint materials = pc.material_count;
  const uint chunk_size = gl_WorkGroupSize.x * ROUNDS;
  const uint chunk_begin = chunk * chunk_size;
  const uint first = segment_pixel(chunk);
  const uint row = gl_SubgroupID * materials;
  const uint t = gl_LocalInvocationIndex;

  // 1. Load every round's material and, one material per thread (materials <= W), the chunk's
  //    prefix and the total that step 2 publishes: their latency hides behind ranking, and
  //    after it the words not yet published are polled again.
  uint material[ROUNDS];
  [[unroll]] for (uint r = 0u; r < ROUNDS; ++r) {
    const uint pixel = first + r * gl_SubgroupSize;
    material[r] = pixel < pc.pixel_count ? load_material(pixel) : 0u;
  }
  uint chunk_base = t < materials && POLL_BUDGET > 0u ? poll(published_prefix_at(t, chunk)) : 0u;
  uint material_total = t < materials && POLL_BUDGET > 0u ? poll(published_total_at(t)) : 0u;

  // 2. Rank within the segment: earlier lanes of this round (peers below) + earlier rounds (the
  //    owner's running count). Material m's count is before[m / S] of lane m % S (S is a power of
  //    two); a lane reads it from every pass's owner lane and keeps the one of its pass. Pixels
  //    past the end (the last chunk only) are left out by the ballot of valid lanes.
  uint before[MAX_PASSES];  // pixels of material k * S + lane in this segment's earlier rounds
  [[unroll]] for (uint k = 0u; k < MAX_PASSES; ++k) before[k] = 0u;
  uint rank[ROUNDS];
  [[unroll]] for (uint r = 0u; r < ROUNDS; ++r) {
    uvec4 ballots[BITS];
    bit_ballots(material[r], ballots);
    const uvec4 valid = subgroupBallot(first + r * gl_SubgroupSize < pc.pixel_count);
    rank[r] = subgroupBallotExclusiveBitCount(lanes_of(material[r], valid, ballots));
    const uint owner = material[r] & (gl_SubgroupSize - 1u);
    const uvec4 owned = owned_lanes(valid, ballots);
    [[unroll]] for (uint k = 0u; k < MAX_PASSES; ++k) {
      if (pass_in_use(k)) {  // uniform
        const uint owner_before = subgroupShuffle(before[k], owner);
        if (material[r] - k * gl_SubgroupSize < gl_SubgroupSize) rank[r] += owner_before;
        before[k] += subgroupBallotBitCount(pass_lanes(k, owned, ballots));
      }
    }
  }
  [[unroll]] for (uint k = 0u; k < MAX_PASSES; ++k) {
    const uint mine = k * gl_SubgroupSize + gl_SubgroupInvocationID;
    if (mine < materials) s_count[row + mine] = before[k];
  }
  if (t < materials) {
    // The polls left after the first reads (the budget is per thread, in all); the words go to
    // phase 3 with their flags.
    for (uint polls = 1u; (chunk_base & material_total & PUBLISHED) == 0u && polls < POLL_BUDGET; ++polls) {
      if ((chunk_base & PUBLISHED) == 0u) chunk_base = poll(published_prefix_at(t, chunk));
      if ((material_total & PUBLISHED) == 0u) material_total = poll(published_total_at(t));
    }
    s_delta[t] = chunk_base;
    s_range_count[t] = material_total;
  }
  barrier();  // every subgroup's row, the prefixes and the totals in place before phase 3 reads them

  // 3. Per material, gl_SubgroupSize at a time in the first subgroup: the chunk's total (sum of
  //    the rows), the material's start (exclusive scan of the totals), then each row's entry
  //    becomes start + the earlier rows' sum: phase 4 adds one shared word to a rank. Beside
  //    it, the range offsets (exclusive scan of the padded totals).
  if (gl_SubgroupID == 0u) {
    uint carry = 0u;
    uint range_carry = 0u;
    for (uint base = 0u; base < materials; base += gl_SubgroupSize) {  // uniform
      const uint m = base + gl_SubgroupInvocationID;
      uint total = 0u;
      if (m < materials)
        for (uint s = 0u; s < gl_NumSubgroups; ++s) total += s_count[s * materials + m];
      const uint start = carry + subgroupExclusiveAdd(total);
      uint count = m < materials ? s_range_count[m] : PUBLISHED;
      uint earlier_chunks = m < materials ? s_delta[m] : PUBLISHED;
      // Words still unpublished: the material's lane adds its row of chunk counts up, complete
      // since the count step, 4 at a time. (Lanes of the whole subgroup sharing each row cost 11
      // more registers, and a workgroup per SM. lavapipe, which never gets here unless the
      // budget is 0, stops an invocation's loops after 65,535 iterations in all: materials.cpp
      // refuses sorts that would reach that.)
      if ((count & earlier_chunks & PUBLISHED) == 0u) {
        const uint row_begin = m * pc.chunk_count;
        uvec2 sums = uvec2(0u);  // x: chunks before this one, y: all
        for (uint c = 0u; c < pc.chunk_count; c += 4u) {
          uint n[4];
          [[unroll]] for (uint k = 0u; k < 4u; ++k) n[k] = c + k < pc.chunk_count ? pc.chunk_counts.data[row_begin + c + k] : 0u;
          [[unroll]] for (uint k = 0u; k < 4u; ++k) sums += uvec2(c + k < chunk ? n[k] : 0u, n[k]);
        }
        earlier_chunks = sums.x;
        count = sums.y;
      }
      count &= ~PUBLISHED;
      earlier_chunks &= ~PUBLISHED;
      if (m < materials) s_range_count[m] = count;
      const uint padded = (count + pc.alignment - 1u) & ~(pc.alignment - 1u);
      const uint offset = range_carry + subgroupExclusiveAdd(padded);
      range_carry += subgroupAdd(padded);
      if (m < materials) {
        s_delta[m] = earlier_chunks + offset - start;
        s_range_offset[m] = offset;
        if (chunk == 0u) pc.offsets.data[m] = offset;
        uint position = start;
        for (uint s = 0u; s < gl_NumSubgroups; ++s) {
          const uint n = s_count[s * materials + m];
          s_count[s * materials + m] = position;
          position += n;
        }
      }
      carry += subgroupAdd(total);
    }
  }
  barrier();  // rows, deltas and offsets visible to every lane

  // 4. Sort the chunk in shared memory, so that phase 5 writes runs of consecutive slots.
  const uint segment = gl_SubgroupID * ROUNDS * gl_SubgroupSize + gl_SubgroupInvocationID;
  [[unroll]] for (uint r = 0u; r < ROUNDS; ++r) {
    if (first + r * gl_SubgroupSize < pc.pixel_count) {
      const uint m = material[r];
      s_sorted[s_count[row + m] + rank[r]] = (segment + r * gl_SubgroupSize) | (m << 16);
    }
  }
  barrier();  // the sorted chunk complete before it is written out

  // 5. Write the map: thread i takes chunk-local positions i, i + W, ...; consecutive threads
  //    mostly write consecutive slots of one material.
  const uint pixels = min(chunk_size, pc.pixel_count - chunk_begin);
  [[unroll]] for (uint r = 0u; r < ROUNDS; ++r) {
    const uint i = r * gl_WorkGroupSize.x + t;
    if (i < pixels) {
      const uint e = s_sorted[i];
      pc.new_to_old.data[s_delta[e >> 16] + i] = chunk_begin + (e & 0xFFFFu);
    }
  }

  // 6. Padding slots (range_alignment > 1): [offsets[m] + counts[m], offsets[m] + padded count)
  //    of materials chunk, chunk + C, ...: disjoint from every pixel's slot.
  if (pc.alignment > 1u) {  // uniform
    for (uint m = chunk; m < materials; m += pc.chunk_count) {
      const uint count = s_range_count[m];
      const uint padded = (count + pc.alignment - 1u) & ~(pc.alignment - 1u);
      for (uint slot = count + t; slot < padded; slot += gl_WorkGroupSize.x)
        pc.new_to_old.data[s_range_offset[m] + slot] = VREN_RADIX_MATERIALS_PADDING_SLOT;
    }
  }
}
