#version 460
// Material sort, padding (with alignment > 1): fill each material's unused tail slots.
//
// Thread i handles slot i % alignment past the start of material i / alignment's tail:
// slots [offsets[m] + counts[m], offsets[m] + round_up(counts[m], alignment)) receive
// VREN_RADIX_MATERIALS_PADDING_SLOT. Runs after step 4, beside step 5: the two write disjoint slots.
//
// Shared memory: none.
#extension GL_GOOGLE_include_directive : require
#include "materials_common.glsl"

layout(local_size_x_id = VREN_RADIX_MATERIALS_SPEC_WORKGROUP_SIZE) in;

void main() {
  const uint thread = workgroup_index() * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
  const uint material = thread / pc.alignment;
  if (material >= pc.material_count) return;
  const uint count = pc.counts.data[material];
  const uint slot = count + thread % pc.alignment;
  const uint padded = (count + pc.alignment - 1u) & ~(pc.alignment - 1u);
  if (slot < padded) pc.new_to_old.data[pc.offsets.data[material] + slot] = VREN_RADIX_MATERIALS_PADDING_SLOT;
}
