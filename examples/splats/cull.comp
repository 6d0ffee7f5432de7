#version 460
// Splats, pass 1: cull the splats, append a depth key and an ID per visible splat, and project
// each visible splat to a screen-space Gaussian for the blend.
//
// One thread per splat.
// 1. Cull: the centre in view space (x right, y down, z forward) must lie past the near plane
//    and inside the frustum widened by SPLATS_FRUSTUM_MARGIN: |x| <= clip.x * z, |y| <= clip.y * z.
// 2. Append: the next slot comes from an atomicAdd on the draw command's instanceCount, which ends
//    as the visible count that the sort reads (cmdSortIndirect) and a viewer draws. Slots are
//    taken in no particular order. keys[slot] = ~floatBitsToUint(z): z > 0, so its bits grow
//    with z and their complement shrinks: an ascending u32 sort puts far splats first (back to
//    front). slot_ids[slot] = the splat's ID: the sort's values, or, for an argsort, the list
//    that the sorted indices point into.
// 3. Project (Kerbl et al., "3D Gaussian Splatting for Real-Time Radiance Field Rendering",
//    2023, after Zwicker et al.'s EWA splatting): world covariance R S S^T R^T, to view space by
//    the view rotation W, to the screen by the Jacobian J of the perspective divide at the
//    centre; plus SPLATS_COVARIANCE_BLUR on the diagonal. Its inverse (the conic) gives a pixel's
//    alpha; the radius bounds where alpha reaches SPLATS_MIN_ALPHA, from the larger eigenvalue.
//    The cull's margin already keeps x / z and y / z within 1.3 tan(fov / 2), where 3DGS clamps
//    them for J. Written to projected[ID]: the blend looks splats up by ID.
//
// The cull test and the key use multiplications, additions and comparisons only, marked precise
// (never fused into FMAs). Vulkan rounds each of them correctly, so the CPU reference computes
// the same visible set and the same keys, bit for bit. The projection need not match exactly.
//
// Config: SPLATS_CULL_WORKGROUP threads. A 2D grid: splat = workgroup (y * width + x) * size +
// thread. Shared memory: none.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require

#define SPLATS_CULL_PASS
#include "splats_shared.h"

layout(local_size_x = SPLATS_CULL_WORKGROUP) in;

// One row of the view transform, each operation rounded on its own, in the order the CPU
// reference uses.
float view_row(vec4 row, vec3 p) {
  precise float v = ((row.x * p.x + row.y * p.y) + row.z * p.z) + row.w;
  return v;
}

// The rotation matrix of a unit quaternion (x, y, z, w).
mat3 rotation_matrix(vec4 q) {
  const float x = q.x, y = q.y, z = q.z, w = q.w;
  return mat3(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y),   // column 0
              2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x),   // column 1
              2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y));  // column 2
}

ProjectedSplat project(Splat s, vec3 v) {
  // The splat's axes, scaled, in view space: the columns of W R S.
  const mat3 view_rotation = transpose(mat3(pc.view[0].xyz, pc.view[1].xyz, pc.view[2].xyz));
  const mat3 axes = view_rotation * rotation_matrix(normalize(s.rotation)) * mat3(s.scale.x, 0.0, 0.0,  //
                                                                                  0.0, s.scale.y, 0.0,  //
                                                                                  0.0, 0.0, s.scale.z);
  const mat3 covariance = axes * transpose(axes);
  const float inv_z = 1.0 / v.z;
  // J: 2 rows, 3 columns (mat3x2 is column-major: three columns of two).
  const mat3x2 jacobian = mat3x2(pc.focal.x * inv_z, 0.0,  //
                                 0.0, pc.focal.y * inv_z,  //
                                 -pc.focal.x * v.x * inv_z * inv_z, -pc.focal.y * v.y * inv_z * inv_z);
  const mat2 screen = jacobian * covariance * transpose(jacobian);
  const float a = screen[0][0] + SPLATS_COVARIANCE_BLUR;
  const float b = screen[0][1];
  const float c = screen[1][1] + SPLATS_COVARIANCE_BLUR;
  const float det = a * c - b * b;
  const float mid = 0.5 * (a + c);
  const float lambda = mid + sqrt(max(0.1, mid * mid - det));
  const float opacity = s.position_opacity.w;
  // alpha >= MIN_ALPHA <=> d^2 <= 2 ln(opacity / MIN_ALPHA); the +1 pixel absorbs rounding.
  const float reach = 2.0 * log(max(opacity / SPLATS_MIN_ALPHA, 1.0));
  ProjectedSplat p;
  p.mean_radius_opacity = vec4(pc.focal * v.xy * inv_z + pc.centre, sqrt(reach * lambda) + 1.0, opacity);
  p.conic = vec4(c / det, -b / det, a / det, 0.0);
  p.colour = s.colour;
  return p;
}

void main() {
  const uint id = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * SPLATS_CULL_WORKGROUP +
                  gl_LocalInvocationID.x;
  if (id >= pc.count) return;
  const Splat s = pc.splats.data[id];

  // 1. Cull.
  const vec3 p = s.position_opacity.xyz;
  const float x = view_row(pc.view[0], p);
  const float y = view_row(pc.view[1], p);
  const float z = view_row(pc.view[2], p);
  precise const float limit_x = pc.clip.x * z;
  precise const float limit_y = pc.clip.y * z;
  if (!(z > pc.near_plane) || abs(x) > limit_x || abs(y) > limit_y) return;

  // 2. Append.
  const uint slot = atomicAdd(pc.draw.instance_count, 1u);
  pc.keys.data[slot] = ~floatBitsToUint(z);
  pc.slot_ids.data[slot] = id;

  // 3. Project.
  pc.projected.data[id] = project(s, vec3(x, y, z));
}
