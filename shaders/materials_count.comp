#version 460
// Material sort, step 1 of 5: count each chunk's pixels per material.
//
// Each workgroup owns one chunk (see materials_common.glsl). Per round, find_peers() groups the
// subgroup's lanes by material with subgroup arithmetic, and one lane per group adds the group's
// size to a shared-memory histogram: one shared atomic per distinct material per subgroup,
// no global atomics. The histogram is then written out material-major,
//   chunk_counts[material * chunk_count + chunk],
// so that step 2 scans each material's row of chunks.
//
// Config: WORKGROUP_SIZE threads; HISTOGRAM_SIZE >= material_count (a per-size pipeline).
// Shared memory: 4 * HISTOGRAM_SIZE bytes (16 KiB for 4096 materials).
#extension GL_GOOGLE_include_directive : require
#include "materials_common.glsl"

layout(local_size_x_id = VREN_RADIX_MATERIALS_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_MATERIALS_SPEC_HISTOGRAM_SIZE) const uint HISTOGRAM_SIZE = 256;

shared uint s_histogram[HISTOGRAM_SIZE];

void main() {
  const uint chunk = workgroup_index();
  if (chunk >= pc.chunk_count) return;  // uniform per workgroup: the 2D grid's overhang
  const uint threads = gl_WorkGroupSize.x;
  const uint chunk_begin = chunk * pc.rounds * threads;

  // 1. Clear the histogram.
  for (uint m = gl_LocalInvocationIndex; m < pc.material_count; m += threads) s_histogram[m] = 0u;
  barrier();  // cleared before any lane adds to it

  // 2. Count: one shared atomic per peer group.
  for (uint round = 0u; round < pc.rounds; ++round) {
    const uint pixel = chunk_begin + round * threads + ordered_thread();
    const uint material = pixel < pc.pixel_count ? load_material(pixel) : NO_MATERIAL;
    uint group, rank, size;
    find_peers(material, group, rank, size);
    if (material != NO_MATERIAL && rank == 0u) atomicAdd(s_histogram[material], size);
  }
  barrier();  // every group added before the histogram is read

  // 3. Write the chunk's column of the material-major matrix.
  for (uint m = gl_LocalInvocationIndex; m < pc.material_count; m += threads)
    pc.chunk_counts.data[m * pc.chunk_count + chunk] = s_histogram[m];
}
