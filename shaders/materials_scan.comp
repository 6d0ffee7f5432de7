#version 460
// Material sort, step 2 of 5: per material, exclusive scan over chunks, and the material's total.
//
// Workgroup m scans row m of chunk_counts (chunk_count entries) in place, WORKGROUP_SIZE entries
// per block with a running carry, and writes the row's sum to counts[m]. Afterwards
// chunk_counts[m][c] is the rank of chunk c's first pixel of material m among all pixels of m.
//
// Shared memory: workgroup_scan.glsl, (MAX_SUBGROUPS + 1) * 4 bytes.
#extension GL_GOOGLE_include_directive : require
#include "materials_common.glsl"
#include "workgroup_scan.glsl"

layout(local_size_x_id = VREN_RADIX_MATERIALS_SPEC_WORKGROUP_SIZE) in;

void main() {
  const uint material = workgroup_index();
  if (material >= pc.material_count) return;  // uniform per workgroup
  const uint row = material * pc.chunk_count;

  uint carry = 0u;
  for (uint base = 0u; base < pc.chunk_count; base += gl_WorkGroupSize.x) {  // uniform
    const uint chunk = base + ordered_thread();
    const uint count = chunk < pc.chunk_count ? pc.chunk_counts.data[row + chunk] : 0u;
    uint block_total;
    const uint prefix = workgroup_exclusive_add(count, block_total);
    if (chunk < pc.chunk_count) pc.chunk_counts.data[row + chunk] = carry + prefix;
    carry += block_total;
  }
  if (gl_LocalInvocationIndex == 0u) pc.counts.data[material] = carry;
}
