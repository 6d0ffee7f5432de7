#version 460
// Tile packing: one workgroup groups one screen tile's pixels by sort key and writes their
// coordinates, grouped, into a range of the output reserved with one global atomic.
//
// Algorithm (after the tile-local material/light binning used by deferred and visibility-buffer
// renderers; here at any subgroup size):
// - A thread owns quads: 4 horizontally adjacent pixels, read with one 16-byte load where the
//   keys allow it. Quads are numbered in a Morton-like order (2 rows first, then x and y bits
//   alternately), so a subgroup covers a compact block (16 x 8 pixels at 32 lanes).
// - A pixel's key (0: no work) falls into container home = hash(key) % CONTAINERS, with a 32-bit
//   integer hash that keeps hash(0) = 0 (lowbias32, C. Wellons, "Prospecting for hash functions").
// - Conflict resolution (flag): a container remembers the first key that claims it
//   (compare-and-swap on s_owner); a different key probes the next pc.probes containers and
//   shares its home container only when all of them belong to other keys. Owners never change
//   and every claim of a key walks the same probe sequence, so a key's pixels always meet in one
//   container.
// - A subgroup finds its distinct keys one at a time, smallest first (subgroupMin); each pixel's
//   rank among the subgroup's pixels of its key comes from ballot bit counts (position inside
//   the quad, then lane), with no shared memory. Round r's key and pixel count go to lane r.
//   Then lanes 0..rounds-1 claim their keys' containers and reserve each key's run with one
//   shared atomic, all at once: a subgroup waits for one claim and one atomic, however many keys
//   it holds, and the work follows the number of distinct keys, not the number of pixels. A
//   pixel fetches its key's run from that key's lane (subgroupShuffle). After
//   min(MATCH_ROUNDS, subgroup size) keys, the remaining pixels claim and count one by one.
// - Container offsets inside the tile come from an exclusive scan by one subgroup: over the
//   container sizes in container order, or (container ordering, flag) over size classes, a
//   counting sort of the containers by clamped size: containers whose size is a multiple of
//   ALIGNMENT first, then by decreasing size. Inside a class, containers take their place with a
//   shared atomic, a thread per container; a pixel finds its container's place as class start +
//   place in class.
// - One global atomic per tile reserves the tile's output range, rounded up to ALIGNMENT; the
//   slots past the tile's pixels get VREN_RADIX_TILES_PADDING. The tile's pixel count is known
//   once the last subgroup's keys are in: that subgroup issues the atomic before its claims,
//   so the round trip to L2 hides behind the claims and the offsets.
//
// Config (specialization constants): WORKGROUP_SIZE threads, TILE_SIZE^2 pixels per tile,
// QUADS_PER_THREAD = ceil(TILE_SIZE^2 / 4 / WORKGROUP_SIZE), CONTAINERS (<= 1024), ALIGNMENT (a
// power of two). The dispatch has one workgroup per tile.
//
// Shared memory (bytes), C = CONTAINERS:
//   s_owner         4 C    key that claimed each container (0: free)
//   s_count         4 C    pixels per container
//   s_offset        4 C    each container's place: (size class << 16) | start inside its class
//   s_class         512    size-class totals, then their starts inside the tile (unordered: one
//                          class, starting at 0)
//   s_total         4      (subgroups counted << TOTAL_BITS) | pixels with work in the tile
//   s_base          4      the tile's first output slot
//
// Barriers: containers cleared (after the ranking rounds, which use no shared memory);
// containers counted; (ordering) class totals final; offsets and base final: three, four when
// ordering.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require

#include "tiles_shared.h"

layout(local_size_x_id = VREN_RADIX_TILES_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_TILES_SPEC_TILE_SIZE) const uint TILE_SIZE = 64;
layout(constant_id = VREN_RADIX_TILES_SPEC_QUADS_PER_THREAD) const uint QUADS_PER_THREAD = 1;
layout(constant_id = VREN_RADIX_TILES_SPEC_CONTAINERS) const uint CONTAINERS = 127;
layout(constant_id = VREN_RADIX_TILES_SPEC_ALIGNMENT) const uint ALIGNMENT = 32;

const uint TILE_QUADS = TILE_SIZE * TILE_SIZE / 4u;
const uint SIZE_CLASSES = VREN_RADIX_TILES_SIZE_CLASSES;
const uint NO_PIXEL = 0xFFFFFFFFu;  // slot value of a pixel without work
// Between loading and claiming, a pixel's key is held minus one: key 0 (no work) wraps to NO_KEY,
// the value a pixel also takes once a round has ranked it, so the least key a subgroup still
// holds is NO_KEY exactly when it has no pixel left to rank: no separate mask of pending pixels.
const uint NO_KEY = 0xFFFFFFFFu;
// s_total packs the pixels with work (at most 128^2 < 2^20) under the subgroups counted so far
// (at most 1024 < 2^12).
const uint TOTAL_BITS = 20u;
const uint TOTAL_MASK = (1u << TOTAL_BITS) - 1u;
// Distinct keys a subgroup takes together per quad before the rest go pixel by pixel (fewer on
// subgroups narrower than this: lane r holds round r's key). At 32 lanes (16 x 8 pixels),
// bench_tiles.cpp's meshlet screens have 3.2 on average, 8 or fewer in 98.5 % of blocks and 16
// or fewer in all. A round is a handful of subgroup operations, while the pixel-by-pixel path
// makes the lanes of one key contend for one shared address: with 8 rounds, 1.5 % of subgroups
// (about a third of the tiles: 32 subgroups each) took it. Noise has up to 128 keys per block;
// there the pixel-by-pixel path is the cheaper one, as its lanes rarely contend.
const uint MATCH_ROUNDS = 16u;

// The keys as quads: only where pc.flags has VREN_RADIX_TILES_FLAG_KEY_QUADS (16-byte aligned
// keys, width a multiple of 4), so that a quad is one aligned 16-byte load.
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer TileKeyQuads { uvec4 data[]; };

shared uint s_owner[CONTAINERS];
shared uint s_count[CONTAINERS];
shared uint s_offset[CONTAINERS];
shared uint s_class[SIZE_CLASSES];
shared uint s_total;
shared uint s_base;

uint hash_key(uint x) {
  x ^= x >> 16u;
  x *= 0x7feb352du;
  x ^= x >> 15u;
  x *= 0x846ca68bu;
  x ^= x >> 16u;
  return x;
}

// The even bits of v, packed: one coordinate of a Morton index.
uint compact_bits(uint v) {
  v &= 0x55555555u;
  v = (v | (v >> 1u)) & 0x33333333u;
  v = (v | (v >> 2u)) & 0x0F0F0F0Fu;
  v = (v | (v >> 4u)) & 0x00FF00FFu;
  v = (v | (v >> 8u)) & 0x0000FFFFu;
  return v;
}

// Left pixel of the quad with index q, relative to the tile's corner. Bits of q, lowest first:
// y0 y1, then x0 y2 x1 y3 ...: quads are 4 x 1 pixels, so two rows first keep blocks square.
uvec2 quad_pixel(uint q) {
  return uvec2(compact_bits(q >> 2u) * 4u, (q & 3u) | (compact_bits(q >> 3u) << 2u));
}

uint align_up(uint n) {
  return (n + ALIGNMENT - 1u) & ~(ALIGNMENT - 1u);
}

// Class 0: a multiple of the alignment (whole consumer subgroups); then decreasing clamped size.
uint size_class(uint size) {
  return size % ALIGNMENT == 0u ? 0u : SIZE_CLASSES - min(size, SIZE_CLASSES - 1u);
}

uint claim_container(uint key) {
  const uint home = hash_key(key) % CONTAINERS;
  if ((pc.flags & VREN_RADIX_TILES_FLAG_CONFLICT_RESOLUTION) == 0u) return home;
  uint container = home;
  for (uint probe = 0u; probe <= pc.probes; ++probe) {
    const uint owner = atomicCompSwap(s_owner[container], 0u, key);
    if (owner == 0u || owner == key) return container;
    container = container + 1u == CONTAINERS ? 0u : container + 1u;
  }
  return home;
}

// Container c, if it has pixels, takes its place inside its size class: s_offset gets (class <<
// 16) | start inside the class, and the class totals in s_class add up. The container sizes are
// final.
void place_in_class(uint c) {
  const uint size = s_count[c];
  if (size != 0u) {
    const uint size_cls = size_class(size);
    s_offset[c] = (size_cls << 16u) | atomicAdd(s_class[size_cls], size);
  }
}

// Exclusive scan of the size classes (in place) or of the container sizes (into s_offset, all
// in class 0), by the calling subgroup alone: each lane sums a run of consecutive entries. Lanes
// are counted from a ballot, so a partial subgroup works too. Reads entries written before the
// caller's last barrier.
void subgroup_scan_offsets(bool classes) {
  const uint entries = classes ? SIZE_CLASSES : CONTAINERS;
  const uvec4 everyone = subgroupBallot(true);
  const uint lanes = subgroupBallotBitCount(everyone);
  const uint per_lane = (entries + lanes - 1u) / lanes;
  const uint first = min(subgroupBallotExclusiveBitCount(everyone) * per_lane, entries);
  const uint end = min(first + per_lane, entries);
  uint sum = 0u;
  for (uint e = first; e < end; ++e) sum += classes ? s_class[e] : s_count[e];
  uint running = subgroupExclusiveAdd(sum);
  for (uint e = first; e < end; ++e) {
    if (classes) {
      const uint size = s_class[e];
      s_class[e] = running;
      running += size;
    } else {
      s_offset[e] = running;
      running += s_count[e];
    }
  }
}

void main() {
  const uint thread = gl_LocalInvocationIndex;
  const bool ordered = (pc.flags & VREN_RADIX_TILES_FLAG_ORDER_CONTAINERS) != 0u;
  const uvec2 corner = gl_WorkGroupID.xy * TILE_SIZE;
  const uint tile = gl_WorkGroupID.y * pc.tiles_x + gl_WorkGroupID.x;

  // 1. Load the quads and count the pixels with work. Pixels outside the screen (or the tile)
  //    have none.
  uvec4 keys[QUADS_PER_THREAD];
  [[unroll]] for (uint k = 0u; k < QUADS_PER_THREAD; ++k) {
    const uint quad = k * gl_WorkGroupSize.x + thread;
    const uvec2 p = corner + quad_pixel(quad);
    const bool inside = quad < TILE_QUADS && p.y < pc.height && p.x < pc.width;
    const uint at = p.y * pc.width + p.x;
    keys[k] = uvec4(0u);
    if ((pc.flags & VREN_RADIX_TILES_FLAG_KEY_QUADS) != 0u) {
      // The width is a multiple of 4: a quad lies wholly inside the screen or wholly outside.
      if (inside) keys[k] = TileKeyQuads(pc.keys).data[at >> 2u];
    } else if (inside) {
      [[unroll]] for (uint j = 0u; j < 4u; ++j)
        if (p.x + j < pc.width) keys[k][j] = pc.keys.data[at + j];
    }
    keys[k] -= 1u;  // see NO_KEY
  }
  uint work = 0u;
  [[unroll]] for (uint k = 0u; k < QUADS_PER_THREAD; ++k)
    [[unroll]] for (uint j = 0u; j < 4u; ++j) work += keys[k][j] != NO_KEY ? 1u : 0u;

  // 2. Clear the containers, the size classes and the tile's total. The barrier that makes the
  //    clears visible comes after step 3, which touches no shared memory: the first subgroups
  //    to start rank their pixels while the last ones are still being launched.
  for (uint c = thread; c < CONTAINERS; c += gl_WorkGroupSize.x) {
    s_owner[c] = 0u;
    s_count[c] = 0u;
  }
  for (uint c = thread; c < SIZE_CLASSES; c += gl_WorkGroupSize.x) s_class[c] = 0u;
  if (thread == 0u) s_total = 0u;

  // 3. Per quad, the subgroup finds its distinct keys one round at a time and ranks each pixel
  //    among the subgroup's pixels of its key; lane r keeps round r's key and pixel count. No
  //    more rounds than lanes, as lane r holds round r's key (a workgroup smaller than a
  //    subgroup fills lanes 0.. of a partial one).
  const uint max_rounds = min(MATCH_ROUNDS, subgroupBallotBitCount(subgroupBallot(true)));
  // Until the runs are known, a ranked pixel's slot holds (round << 16) | rank, and its key turns
  // NO_KEY: the pixels left after max_rounds keys are ranked one by one in step 5.
  uvec4 slots[QUADS_PER_THREAD];
  uint lane_key[QUADS_PER_THREAD];    // round gl_SubgroupInvocationID's key (minus one) ...
  uint lane_count[QUADS_PER_THREAD];  // ... and the subgroup's pixels of it
  uint rounds[QUADS_PER_THREAD];
  [[unroll]] for (uint k = 0u; k < QUADS_PER_THREAD; ++k) {
    slots[k] = uvec4(NO_PIXEL);
    lane_key[k] = 0u;
    lane_count[k] = 0u;
    uint round = 0u;
    // Not unrolled: most subgroups leave after a few rounds, and MATCH_ROUNDS copies would only
    // grow the code.
    [[dont_unroll]] for (; round < max_rounds; ++round) {
      const uvec4 quad = keys[k];
      const uint key = subgroupMin(min(min(quad.x, quad.y), min(quad.z, quad.w)));
      if (key == NO_KEY) break;  // uniform: no lane has a pixel left
      const bvec4 matches = equal(quad, uvec4(key));
      // Ranks inside the key's run: pixel position first, then lane, so that each of the stores
      // in step 8 writes consecutive slots from consecutive lanes.
      uint count = 0u;
      [[unroll]] for (uint j = 0u; j < 4u; ++j) {
        const uvec4 lanes = subgroupBallot(matches[j]);
        if (matches[j]) slots[k][j] = (round << 16u) | (count + subgroupBallotExclusiveBitCount(lanes));
        count += subgroupBallotBitCount(lanes);
      }
      keys[k] = mix(quad, uvec4(NO_KEY), matches);
      if (gl_SubgroupInvocationID == round) {
        lane_key[k] = key;
        lane_count[k] = count;
      }
    }
    rounds[k] = round;
  }
  work = subgroupAdd(work);
  barrier();  // containers and the total are clear before any subgroup adds to them

  // 4. Each subgroup adds its pixels with work to the tile's total, and counts itself in the same
  //    atomic. The last subgroup to do so knows the total, and reserves the tile's output range
  //    at once: the atomic travels to L2 and back during the claims and the offsets (its result
  //    is first needed before the last barrier).
  bool reserved = false;  // this lane issued the reservation ...
  uint base = 0u;         // ... whose result is the tile's first slot
  if (subgroupElect()) {
    const uint before = atomicAdd(s_total, (1u << TOTAL_BITS) | work);
    if ((before >> TOTAL_BITS) + 1u == gl_NumSubgroups) {
      reserved = true;
      base = atomicAdd(pc.counter.value, align_up((before & TOTAL_MASK) + work));
    }
  }

  // 5. Lanes 0..rounds-1 claim their keys' containers and reserve the runs together, and each
  //    pixel records its slot: (container << 16) | rank; then the pixels left after the rounds
  //    claim one by one.
  [[unroll]] for (uint k = 0u; k < QUADS_PER_THREAD; ++k) {
    // One claim and one atomic per key, every key of the quad round in parallel.
    uint run = 0u;
    if (gl_SubgroupInvocationID < rounds[k]) {
      const uint container = claim_container(lane_key[k] + 1u);
      run = (container << 16u) | atomicAdd(s_count[container], lane_count[k]);
    }
    // Shuffles in uniform control flow: every lane reads, pixels without a round drop the value.
    [[unroll]] for (uint j = 0u; j < 4u; ++j) {
      const uint ranked = slots[k][j];
      const uint key_run = subgroupShuffle(run, ranked == NO_PIXEL ? 0u : ranked >> 16u);
      if (ranked != NO_PIXEL) slots[k][j] = key_run + (ranked & 0xFFFFu);
    }
    // Keys left after the rounds (a subgroup over noise-like keys, where few lanes share one):
    // pixel by pixel, each with its own atomic, so that the cost stays bounded.
    [[unroll]] for (uint j = 0u; j < 4u; ++j) {
      if (keys[k][j] != NO_KEY) {
        const uint container = claim_container(keys[k][j] + 1u);
        slots[k][j] = (container << 16u) | atomicAdd(s_count[container], 1u);
      }
    }
  }
  barrier();  // container sizes are final

  // 6. Container offsets inside the tile. Ordered: every container takes its place in its size
  //    class, a thread each, then one subgroup scans the class totals. Unordered: one subgroup
  //    scans the container sizes.
  if (ordered) {
    for (uint c = thread; c < CONTAINERS; c += gl_WorkGroupSize.x) place_in_class(c);
    barrier();  // the class totals are final before the scan reads them
  }
  if (gl_SubgroupID == 0u) subgroup_scan_offsets(ordered);
  // 7. The lane that reserved the tile's range (step 4) publishes it; only here does it wait
  //    for the atomic's result. Every subgroup added to s_total before the barrier after step
  //    5, so the total is read again rather than kept in a register through steps 5 and 6.
  const uint total = s_total & TOTAL_MASK;
  if (reserved) {
    s_base = base;
    pc.tile_ranges.data[2u * tile] = base;
    pc.tile_ranges.data[2u * tile + 1u] = total;
  }
  barrier();  // offsets and the tile's base are visible to every pixel

  // 8. Write each pixel's coordinates to its place, then pad the range to the alignment.
  base = s_base;
  const bool with_containers = (pc.flags & VREN_RADIX_TILES_FLAG_WRITE_CONTAINERS) != 0u;
  [[unroll]] for (uint k = 0u; k < QUADS_PER_THREAD; ++k) {
    // Recomputed rather than kept from step 1: a few ALU operations against a register per quad
    // held across every barrier.
    const uvec2 p = corner + quad_pixel(k * gl_WorkGroupSize.x + thread);
    const uint origin = (p.y << 16u) | p.x;  // the quad's left pixel, as an output value
    [[unroll]] for (uint j = 0u; j < 4u; ++j) {
      const uint slot = slots[k][j];
      if (slot != NO_PIXEL) {
        const uint container = slot >> 16u;
        const uint place = s_offset[container];
        const uint destination = base + s_class[place >> 16u] + (place & 0xFFFFu) + (slot & 0xFFFFu);
        if (destination < pc.pixel_capacity) {
          pc.pixels.data[destination] = origin + j;
          if (with_containers) pc.containers.data[destination] = container;
        }
      }
    }
  }
  for (uint i = total + thread; i < align_up(total); i += gl_WorkGroupSize.x) {
    if (base + i < pc.pixel_capacity) {
      pc.pixels.data[base + i] = VREN_RADIX_TILES_PADDING;
      if (with_containers) pc.containers.data[base + i] = VREN_RADIX_TILES_PADDING;
    }
  }
}
