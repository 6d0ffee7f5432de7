#version 460
// Material sort, step 3 and 4 of 5: dispatch arguments and range offsets, one workgroup.
//
// Per material m, with count = counts[m] from step 2 and L = shading_workgroup_size:
//   dispatch[m] = {ceil(count / L), 1, 1}, or, past maxComputeWorkGroupCount[0] groups, a 2D
//                 grid {x, y, 1} with y = ceil(groups / max_x), x = ceil(groups / y), so that
//                 x * y >= groups: the shading shader linearises the group index and
//                 bounds-checks against counts[m]. {0, 1, 1} for the void material.
//   offsets[m]  = exclusive sum over lower materials of count rounded up to `alignment`.
// Materials are taken WORKGROUP_SIZE per block with a running carry.
//
// Shared memory: workgroup_scan.glsl, (MAX_SUBGROUPS + 1) * 4 bytes.
#extension GL_GOOGLE_include_directive : require
#include "materials_common.glsl"
#include "workgroup_scan.glsl"

layout(local_size_x_id = VREN_RADIX_MATERIALS_SPEC_WORKGROUP_SIZE) in;

void main() {
  uint carry = 0u;
  for (uint base = 0u; base < pc.material_count; base += gl_WorkGroupSize.x) {  // uniform
    const uint material = base + ordered_thread();
    const bool valid = material < pc.material_count;
    const uint count = valid ? pc.counts.data[material] : 0u;
    const uint padded = (count + pc.alignment - 1u) & ~(pc.alignment - 1u);
    uint block_total;
    const uint prefix = workgroup_exclusive_add(padded, block_total);
    if (valid) {
      pc.offsets.data[material] = carry + prefix;
      pc.dispatch.data[material] = dispatch_for(material, count);
    }
    carry += block_total;
  }
}
