#version 460
// Tile packing: one workgroup groups one screen tile's pixels by sort key and writes their
// coordinates, grouped, into a range of the output reserved with one global atomic.
//
// Algorithm (after the tile-local material/light binning used by deferred and visibility-buffer
// renderers; here at any subgroup size):
// - A pixel's key (0: no work) falls into container home = hash(key) % CONTAINERS, with a 32-bit
//   integer hash that keeps hash(0) = 0 (lowbias32, C. Wellons, "Prospecting for hash functions").
// - Conflict resolution (flag): a container remembers the first key that claims it
//   (compare-and-swap on s_owner); a different key probes the next pc.probes containers and
//   shares its home container only when all of them belong to other keys. Owners never change
//   and every pixel of a key walks the same probe sequence, so a key's pixels always meet in one
//   container.
// - A shared atomic counts each pixel into its container; its result is the pixel's rank there.
// - Container offsets inside the tile come from an exclusive scan: over the container sizes in
//   container order, or (container ordering, flag) over size classes: a one-digit radix sort of
//   the containers by clamped size, containers whose size is a multiple of ALIGNMENT first, then
//   by decreasing size. Inside a class, containers take their place with a shared atomic.
// - One global atomic per tile reserves the tile's output range, rounded up to ALIGNMENT; the
//   slots past the tile's pixels get VREN_RADIX_TILES_PADDING.
// Pixels are visited in Morton order inside the tile, so a subgroup covers a compact block and
// ranks inside a container roughly follow Morton order. A subgroup whose pixels all share one key
// (a large surface) claims and counts once for all its lanes.
//
// Config (specialization constants): WORKGROUP_SIZE threads, TILE_SIZE^2 pixels per tile,
// PIXELS_PER_THREAD = ceil(TILE_SIZE^2 / WORKGROUP_SIZE), CONTAINERS (<= 1024),
// CONTAINERS_PER_THREAD = ceil(CONTAINERS / WORKGROUP_SIZE), SCAN_ITEMS = ceil(max(CONTAINERS,
// SIZE_CLASSES) / WORKGROUP_SIZE), MAX_SUBGROUPS, ALIGNMENT (a power of two).
//
// Shared memory (bytes), C = CONTAINERS, S = MAX_SUBGROUPS:
//   s_owner         4 C    key that claimed each container (0: free)
//   s_count         4 C    pixels per container
//   s_offset        4 C    start of each container inside the tile
//   s_class         512    size-class totals, then their running starts
//   s_subgroup_sum  4 S    scan: per-subgroup totals
//   s_total, s_base 8      pixels with work in the tile; the tile's first output slot
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

#include "tiles_shared.h"

layout(local_size_x_id = VREN_RADIX_TILES_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_TILES_SPEC_TILE_SIZE) const uint TILE_SIZE = 64;
layout(constant_id = VREN_RADIX_TILES_SPEC_PIXELS_PER_THREAD) const uint PIXELS_PER_THREAD = 16;
layout(constant_id = VREN_RADIX_TILES_SPEC_CONTAINERS) const uint CONTAINERS = 127;
layout(constant_id = VREN_RADIX_TILES_SPEC_CONTAINERS_PER_THREAD) const uint CONTAINERS_PER_THREAD = 1;
layout(constant_id = VREN_RADIX_TILES_SPEC_SCAN_ITEMS) const uint SCAN_ITEMS = 1;
layout(constant_id = VREN_RADIX_TILES_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;
layout(constant_id = VREN_RADIX_TILES_SPEC_ALIGNMENT) const uint ALIGNMENT = 32;

const uint TILE_PIXELS = TILE_SIZE * TILE_SIZE;
const uint SIZE_CLASSES = VREN_RADIX_TILES_SIZE_CLASSES;
const uint NO_PIXEL = 0xFFFFFFFFu;  // slot value of a pixel without work

shared uint s_owner[CONTAINERS];
shared uint s_count[CONTAINERS];
shared uint s_offset[CONTAINERS];
shared uint s_class[SIZE_CLASSES];
shared uint s_subgroup_sum[MAX_SUBGROUPS];
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

// Pixel of this thread's k-th Morton index, relative to the tile's corner.
uvec2 tile_pixel(uint k) {
  const uint i = k * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
  return uvec2(compact_bits(i), compact_bits(i >> 1u));
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

// Exclusive scan, in workgroup order, of s_class (ordered) or of s_count into s_offset.
// Each thread owns SCAN_ITEMS consecutive entries; subgroups are ranked by gl_SubgroupID, so any
// subgroup size works. Reads entries written before the caller's last barrier.
void scan_offsets(bool ordered) {
  const uint entries = ordered ? SIZE_CLASSES : CONTAINERS;
  const uint first = (gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID) * SCAN_ITEMS;
  uint values[SCAN_ITEMS];
  uint sum = 0u;
  [[unroll]] for (uint i = 0u; i < SCAN_ITEMS; ++i) {
    const uint e = first + i;
    values[i] = e < entries ? (ordered ? s_class[e] : s_count[e]) : 0u;
    sum += values[i];
  }
  uint running = subgroupExclusiveAdd(sum);
  const uint subgroup_total = subgroupAdd(sum);
  if (subgroupElect()) s_subgroup_sum[gl_SubgroupID] = subgroup_total;
  barrier();  // every subgroup's total is visible to the later subgroups
  for (uint s = 0u; s < gl_SubgroupID; ++s) running += s_subgroup_sum[s];
  [[unroll]] for (uint i = 0u; i < SCAN_ITEMS; ++i) {
    const uint e = first + i;
    if (e < entries) {
      if (ordered) s_class[e] = running;
      else s_offset[e] = running;
    }
    running += values[i];
  }
}

void main() {
  const uvec2 corner = gl_WorkGroupID.xy * TILE_SIZE;
  const uint tile = gl_WorkGroupID.y * pc.tiles_x + gl_WorkGroupID.x;
  const uint thread = gl_LocalInvocationIndex;
  const bool ordered = (pc.flags & VREN_RADIX_TILES_FLAG_ORDER_CONTAINERS) != 0u;

  // 1. Load this thread's keys; pixels outside the screen (or the tile) have no work.
  uint keys[PIXELS_PER_THREAD];
  [[unroll]] for (uint k = 0u; k < PIXELS_PER_THREAD; ++k) {
    const uvec2 p = corner + tile_pixel(k);
    const bool inside = k * gl_WorkGroupSize.x + thread < TILE_PIXELS && p.x < pc.width && p.y < pc.height;
    keys[k] = inside ? pc.keys.data[p.y * pc.width + p.x] : 0u;
  }

  // 2. Clear the containers and size classes (while the loads are in flight).
  for (uint c = thread; c < CONTAINERS; c += gl_WorkGroupSize.x) {
    s_owner[c] = 0u;
    s_count[c] = 0u;
  }
  for (uint c = thread; c < SIZE_CLASSES; c += gl_WorkGroupSize.x) s_class[c] = 0u;
  if (thread == 0u) s_total = 0u;
  barrier();  // containers are clear before any pixel claims or counts

  // 3. Claim a container per pixel and count the pixel into it; its slot records container and
  //    rank. A subgroup with one key throughout claims and counts once for all its lanes.
  uint slots[PIXELS_PER_THREAD];
  uint work = 0u;
  [[unroll]] for (uint k = 0u; k < PIXELS_PER_THREAD; ++k) {
    const uint key = keys[k];
    slots[k] = NO_PIXEL;
    if (subgroupMin(key) == subgroupMax(key)) {
      if (key != 0u) {
        const uint lanes = subgroupAdd(1u);
        uint first = 0u;
        if (subgroupElect()) {
          const uint container = claim_container(key);
          first = (container << 16u) | atomicAdd(s_count[container], lanes);
        }
        slots[k] = subgroupMax(first) + subgroupExclusiveAdd(1u);
      }
    } else if (key != 0u) {
      const uint container = claim_container(key);
      slots[k] = (container << 16u) | atomicAdd(s_count[container], 1u);
    }
    work += key != 0u ? 1u : 0u;
  }
  work = subgroupAdd(work);
  if (subgroupElect() && work != 0u) atomicAdd(s_total, work);
  barrier();  // container sizes and the tile's total are final

  // 4. Reserve the tile's output range. The result is first needed at the end of step 5, so the
  //    atomic's latency hides behind the offsets.
  const uint total = s_total;
  uint base = 0u;
  if (thread == 0u) base = atomicAdd(pc.counter.value, align_up(total));

  // 5. Container offsets inside the tile.
  uint sizes[CONTAINERS_PER_THREAD];
  [[unroll]] for (uint j = 0u; j < CONTAINERS_PER_THREAD; ++j) {
    const uint c = j * gl_WorkGroupSize.x + thread;
    sizes[j] = c < CONTAINERS ? s_count[c] : 0u;
  }
  if (ordered) {
    // 5a. Total size per size class.
    [[unroll]] for (uint j = 0u; j < CONTAINERS_PER_THREAD; ++j)
      if (sizes[j] != 0u) atomicAdd(s_class[size_class(sizes[j])], sizes[j]);
    barrier();  // size-class totals are final before the scan reads them
  }
  // 5b. Exclusive scan: of the class totals (ordered) or of the container sizes.
  scan_offsets(ordered);
  if (ordered) {
    barrier();  // class starts are final before containers take their places
    // 5c. Each container takes its place inside its class.
    [[unroll]] for (uint j = 0u; j < CONTAINERS_PER_THREAD; ++j) {
      if (sizes[j] != 0u) s_offset[j * gl_WorkGroupSize.x + thread] = atomicAdd(s_class[size_class(sizes[j])], sizes[j]);
    }
  }
  if (thread == 0u) {
    s_base = base;
    pc.tile_ranges.data[2u * tile] = base;
    pc.tile_ranges.data[2u * tile + 1u] = total;
  }
  barrier();  // offsets and the tile's base are visible to every pixel

  // 6. Write each pixel's coordinates to its place, then pad the range to the alignment.
  base = s_base;
  const bool with_containers = (pc.flags & VREN_RADIX_TILES_FLAG_WRITE_CONTAINERS) != 0u;
  [[unroll]] for (uint k = 0u; k < PIXELS_PER_THREAD; ++k) {
    if (slots[k] != NO_PIXEL) {
      const uint container = slots[k] >> 16u;
      const uint destination = base + s_offset[container] + (slots[k] & 0xFFFFu);
      const uvec2 p = corner + tile_pixel(k);
      if (destination < pc.pixel_capacity) {
        pc.pixels.data[destination] = (p.y << 16u) | p.x;
        if (with_containers) pc.containers.data[destination] = container;
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
