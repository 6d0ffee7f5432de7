#version 460
// Radix pass, step 2 of 3: global exclusive scan of the digit-major tile counts.
//
// One workgroup per bin scans that bin's row of num_tiles counts in place and writes the bin's
// total after the rows (counts[BINS * num_tiles + bin]). The scatter pass adds the exclusive sum
// of the totals of the lower bins, which completes the scan over the whole digit-major array:
// offset(bin, tile) = sum of all counts before (bin, tile) in digit-major order.
//
// Each thread owns a contiguous segment of the row: it sums the segment, the workgroup scans
// the thread sums (subgroup scan, then a scan of subgroup sums), and the thread rewrites its
// segment as a running exclusive sum. Two barriers, whatever the row length.
//
// Shared memory: MAX_SUBGROUPS * 4 bytes.
#extension GL_GOOGLE_include_directive : require
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;

shared uint s_subgroup_prefix[MAX_SUBGROUPS];

void main() {
  const uint bin = gl_WorkGroupID.x;
  const uint row = bin * pc.num_tiles;
  const uint segment = (pc.num_tiles + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;
  const uint begin = min(ordered_thread() * segment, pc.num_tiles);
  const uint end = min(begin + segment, pc.num_tiles);

  // 1. Sum this thread's segment.
  uint sum = 0u;
  for (uint i = begin; i < end; ++i) sum += pc.counts.data[row + i];

  // 2. Exclusive scan of the thread sums across the workgroup.
  const uint in_subgroup = subgroupExclusiveAdd(sum);
  const uint subgroup_sum = subgroupAdd(sum);
  if (subgroupElect()) s_subgroup_prefix[gl_SubgroupID] = subgroup_sum;
  barrier();  // subgroup sums visible to thread 0
  if (gl_LocalInvocationIndex == 0u) {
    uint running = 0u;
    for (uint s = 0u; s < gl_NumSubgroups; ++s) {
      const uint next = running + s_subgroup_prefix[s];
      s_subgroup_prefix[s] = running;
      running = next;
    }
    pc.counts.data[BINS * pc.num_tiles + bin] = running;
  }
  barrier();  // subgroup prefixes visible to every thread

  // 3. Rewrite the segment as exclusive offsets.
  uint offset = s_subgroup_prefix[gl_SubgroupID] + in_subgroup;
  for (uint i = begin; i < end; ++i) {
    const uint count = pc.counts.data[row + i];
    pc.counts.data[row + i] = offset;
    offset += count;
  }
}
