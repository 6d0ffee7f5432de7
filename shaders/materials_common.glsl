// Helpers shared by the material-sort passes.
//
// Chunks: workgroup c owns pixels [c * rounds * W, (c + 1) * rounds * W), W = workgroup size,
// taken in `rounds` rounds of W consecutive pixels. Inside a round, the thread at ordered_thread()
// t takes pixel round_begin + t, so rounds, then subgroups, then lanes follow the scan order.
//
// Peer groups: find_peers() splits a subgroup's lanes into groups of equal material, one loop
// iteration per distinct material, in ascending material order: subgroupMin picks the next
// material, subgroupBallot marks its lanes, and bit counts of the ballot give each lane's rank
// and the group's size. Every lane runs every iteration, so the subgroup operations stay in
// uniform control flow whatever the subgroup size (uvec4 ballots cover up to 128 lanes).

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require

#include "materials_shared.h"

const uint NO_MATERIAL = 0xFFFFFFFFu;

layout(constant_id = VREN_RADIX_MATERIALS_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;

// Dispatches larger than maxComputeWorkGroupCount[0] come as a 2D grid.
uint workgroup_index() {
  return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

// The thread's place in scan order: subgroup-major, so subgroup scans rank threads in order
// without assuming how the driver maps gl_LocalInvocationIndex to subgroups.
uint ordered_thread() {
  return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
}

// The pixel's material; IDs out of range count as the last material, so that a bad input can
// never index past the histograms.
uint load_material(uint pixel) {
  return min(pc.material_ids.data[pixel], pc.material_count - 1u);
}

// material: NO_MATERIAL for lanes without a pixel. Returns the number of groups in the subgroup;
// for lanes with a pixel, `group` is their group's index (groups are numbered in ascending
// material order), `rank` the number of lanes of the group below this one, `size` the group's size.
uint find_peers(uint material, out uint group, out uint rank, out uint size) {
  group = 0u;
  rank = 0u;
  size = 0u;
  bool pending = material != NO_MATERIAL;
  uint groups = 0u;
  for (;;) {
    const uint leader_material = subgroupMin(pending ? material : NO_MATERIAL);
    if (leader_material == NO_MATERIAL) break;  // subgroup-uniform
    const bool peer = pending && material == leader_material;
    const uvec4 peers = subgroupBallot(peer);
    if (peer) {
      group = groups;
      rank = subgroupBallotExclusiveBitCount(peers);
      size = subgroupBallotBitCount(peers);
      pending = false;
    }
    ++groups;
  }
  return groups;
}

// The shading dispatch for `count` pixels of `material`: {ceil(count / L), 1, 1}, or, past
// maxComputeWorkGroupCount[0] groups, a 2D grid {x, y, 1} with y = ceil(groups / max_x),
// x = ceil(groups / y), so that x * y >= groups; {0, 1, 1} for the void material.
MaterialDispatch dispatch_for(uint material, uint count) {
  if (material == pc.void_material) return MaterialDispatch(0u, 1u, 1u);
  const uint groups = count / pc.shading_workgroup_size + (count % pc.shading_workgroup_size != 0u ? 1u : 0u);
  if (groups <= pc.max_groups_x) return MaterialDispatch(groups, 1u, 1u);
  const uint y = (groups + pc.max_groups_x - 1u) / pc.max_groups_x;
  return MaterialDispatch((groups + y - 1u) / y, y, 1u);
}
