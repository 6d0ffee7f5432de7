// For shading shaders dispatched with vkCmdDispatchIndirect on the arguments of
// vren::radix::cmdSortMaterials (local size shading_workgroup_size x 1 x 1).
//
// The arguments for material m are {ceil(counts[m] / local_size_x), 1, 1}, or a 2D grid
// {x, y, 1} with x * y >= that many groups when it exceeds maxComputeWorkGroupCount[0]. Either
// way the invocation index below runs over [0, x * y * local_size_x); indices >= counts[m] have
// no pixel and must return. The invocation's pixel is new_to_old[offsets[m] + index].
//
//   uint i = material_invocation();
//   if (i >= counts[m]) return;
//   uint pixel = new_to_old[offsets[m] + i];
//
// Include it after the shader's `layout(local_size_x = ...) in;` (or local_size_x_id)
// declaration: glslang fixes gl_WorkGroupSize where it is first used, and before the declaration
// that is (1, 1, 1).

#ifndef VREN_RADIX_MATERIALS_SHADING_GLSL
#define VREN_RADIX_MATERIALS_SHADING_GLSL

uint material_invocation() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
}

#endif
