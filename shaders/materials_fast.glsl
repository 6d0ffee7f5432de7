// Helpers of the material sort's fast path (material_count <= the sorter's fast-path limit, at
// most 64): its count and scatter steps group pixels with subgroup ballots, one per ID bit,
// instead of find_peers().
//
// Chunks: workgroup c owns pixels [c * ROUNDS * W, (c + 1) * ROUNDS * W), W = workgroup size.
// Inside the chunk, subgroup s owns the segment of ROUNDS * S consecutive pixels starting at
// s * ROUNDS * S (S = subgroup size), and takes it in ROUNDS rounds of S pixels: lane l reads
// pixel segment + r * S + l in round r. Scan order is therefore subgroup, round, lane: what the
// scatter's per-subgroup counts rely on. Every load of a round is one contiguous run of S words.
//
// Ballots (multisplit, as in Ashkiani et al., "GPU Multisplit", and Onesweep's warp-level
// multisplit): with BITS bits per ID, ballots[b] holds the lanes whose ID has bit b set, so the
// lanes holding any material m are the AND over b of ballots[b] or its complement, as m's bit b
// says (lanes_of()). A round costs BITS ballots however many materials it holds, and any lane
// can evaluate lanes_of() for any material. Two uses:
//   - peers: lanes_of(own material) ranks a lane among the lanes of its material;
//   - owned counts: in pass k, lane l evaluates lanes_of(k * S + l), so that the lanes between
//     them count every material of the round with one bit count each: no shared atomics, no
//     leader election. ceil(material_count / S) passes, each with a register per lane: one pass
//     for up to S materials (8 materials on 32 lanes), two for 64. The passes share the round's
//     ballots, and the AND over the low log2(S) bits, which are the lane's in every pass
//     (owned_lanes()); a pass adds only its high bits (pass_lanes()).
//
// BITS is a specialization constant, one pipeline per ID width (materials.cpp picks the narrowest
// that holds material_count, and HISTOGRAM_SIZE = min(2^BITS, fast-path limit)), so that the
// loops over bits, rounds and passes unroll into straight-line code: the rounds' ballots are
// independent and interleave, where a loop bound read from push constants made each round a
// loop of its own. uvec4 ballots cover up to 128 lanes.

#include "materials_common.glsl"

// Declared here, not in the including shader: the helpers below read gl_WorkGroupSize, which
// keeps its default (1, 1, 1) until the local size is declared.
layout(local_size_x_id = VREN_RADIX_MATERIALS_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_MATERIALS_SPEC_ROUNDS) const uint ROUNDS = 8;
// Bits of an ID: material_count <= 2^BITS. IDs are clamped below material_count by
// load_material(), so they never have a bit set past BITS.
layout(constant_id = VREN_RADIX_MATERIALS_SPEC_BITS) const uint BITS = 6;
layout(constant_id = VREN_RADIX_MATERIALS_SPEC_HISTOGRAM_SIZE) const uint HISTOGRAM_SIZE = 64;
// Owned-count passes for HISTOGRAM_SIZE materials at the smallest subgroup size the pipeline may
// run at, WORKGROUP_SIZE / MAX_SUBGROUPS (materials.cpp sizes MAX_SUBGROUPS so).
const uint MAX_PASSES = (HISTOGRAM_SIZE * MAX_SUBGROUPS + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;

// The first pixel of this lane's segment, round 0.
uint segment_pixel(uint chunk) {
  return chunk * ROUNDS * gl_WorkGroupSize.x + gl_SubgroupID * ROUNDS * gl_SubgroupSize + gl_SubgroupInvocationID;
}

// ballots[b]: the lanes whose `material` has bit b set. The subgroup must be in uniform control
// flow.
void bit_ballots(uint material, out uvec4 ballots[BITS]) {
  [[unroll]] for (uint b = 0u; b < BITS; ++b) ballots[b] = subgroupBallot(((material >> b) & 1u) != 0u);
}

// The lanes among `lanes` whose material is `material`. Bits past the subgroup size are junk;
// the ballot bit counts ignore them. Per bit, the ballot or its complement: an XOR with 0 where
// `material` has the bit set, all ones where not, so one AND-XOR per bit, and for a material
// that is the same every round (an owned one) the masks are computed once, outside the rounds.
uvec4 lanes_of(uint material, uvec4 lanes, uvec4 ballots[BITS]) {
  [[unroll]] for (uint b = 0u; b < BITS; ++b) lanes &= ballots[b] ^ (((material >> b) & 1u) - 1u);
  return lanes;
}

// Bits of a lane index. gl_SubgroupSize is a compile-time constant to the drivers that pick the
// size when they compile (NVIDIA, lavapipe), so the tests on it below fold away.
uint lane_bits() {
  return uint(findLSB(gl_SubgroupSize));
}

// Owned counts, step 1: the lanes among `lanes` whose material agrees with this lane's index on
// the low lane_bits() bits, as every material this lane owns does.
uvec4 owned_lanes(uvec4 lanes, uvec4 ballots[BITS]) {
  [[unroll]] for (uint b = 0u; b < BITS; ++b) {
    if (b < lane_bits()) lanes &= ballots[b] ^ (((gl_SubgroupInvocationID >> b) & 1u) - 1u);
  }
  return lanes;
}

// Owned counts, step 2: of owned_lanes(), those whose material's high bits are pass k's: the
// lanes holding material k * S + this lane.
uvec4 pass_lanes(uint k, uvec4 owned, uvec4 ballots[BITS]) {
  [[unroll]] for (uint b = 0u; b < BITS; ++b) {
    if (b >= lane_bits()) owned &= ballots[b] ^ ((((k * gl_SubgroupSize) >> b) & 1u) - 1u);
  }
  return owned;
}

// Whether owned-count pass k has materials: lane l counts materials l, S + l, ... in passes 0,
// 1, ..., up to material_count. Pass 0 always does, which lets the compiler drop the test there.
bool pass_in_use(uint k) {
  return k == 0u || k * gl_SubgroupSize < pc.material_count;
}
