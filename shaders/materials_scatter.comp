#version 460
// Material sort, step 5 of 5: stable rank of each pixel within its material, and the map
//   new_to_old[offsets[m] + rank] = pixel.
//
// Same chunks as step 1. A pixel's rank within material m is
//     chunk_counts[m][chunk]                          pixels of m in earlier chunks (step 2)
//   + pixels of m in earlier rounds of this chunk     (s_next, a running shared histogram)
//   + pixels of m in earlier subgroups of this round  (search of the subgroups' peer-group lists)
//   + pixels of m in earlier lanes of this subgroup   (find_peers: ballot bit count)
// so pixels keep their scan order inside a material. Per round, each subgroup publishes its peer
// groups (material, size) in ascending material order; each group's first lane sums the sizes of
// the same material in earlier subgroups (a binary search in each sorted list) and publishes the
// group's destination base.
//
// Config: WORKGROUP_SIZE threads, MAX_SUBGROUPS >= gl_NumSubgroups, HISTOGRAM_SIZE >= materials.
// Shared memory (bytes), W = WORKGROUP_SIZE, S = MAX_SUBGROUPS, H = HISTOGRAM_SIZE:
//   s_next            4 H   per material: destination of the next pixel of this chunk
//   s_group_material  4 W   per subgroup, per peer group: the material      (slot sg * size + g)
//   s_group_size      4 W   per subgroup, per peer group: lanes in the group
//   s_group_base      4 W   per subgroup, per peer group: destination of its first lane
//   s_group_count     4 S   peer groups per subgroup
#extension GL_GOOGLE_include_directive : require
#include "materials_common.glsl"

layout(local_size_x_id = VREN_RADIX_MATERIALS_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_MATERIALS_SPEC_HISTOGRAM_SIZE) const uint HISTOGRAM_SIZE = 256;

shared uint s_next[HISTOGRAM_SIZE];
shared uint s_group_material[gl_WorkGroupSize.x];
shared uint s_group_size[gl_WorkGroupSize.x];
shared uint s_group_base[gl_WorkGroupSize.x];
shared uint s_group_count[MAX_SUBGROUPS];

void main() {
  const uint chunk = workgroup_index();
  if (chunk >= pc.chunk_count) return;  // uniform per workgroup: the 2D grid's overhang
  const uint threads = gl_WorkGroupSize.x;
  const uint chunk_begin = chunk * pc.rounds * threads;
  const uint rounds = min(pc.rounds, (pc.pixel_count - chunk_begin + threads - 1u) / threads);

  // 1. Where each material's first pixel of this chunk goes.
  for (uint m = gl_LocalInvocationIndex; m < pc.material_count; m += threads)
    s_next[m] = pc.offsets.data[m] + pc.chunk_counts.data[m * pc.chunk_count + chunk];
  barrier();  // bases visible before the first round reads them

  const uint list = gl_SubgroupID * gl_SubgroupSize;  // this subgroup's peer-group list
  for (uint round = 0u; round < rounds; ++round) {  // uniform per workgroup
    // 2. Group the subgroup's lanes by material and publish the groups.
    const uint pixel = chunk_begin + round * threads + ordered_thread();
    const uint material = pixel < pc.pixel_count ? load_material(pixel) : NO_MATERIAL;
    uint group, rank, size;
    const uint groups = find_peers(material, group, rank, size);
    const bool leader = material != NO_MATERIAL && rank == 0u;
    if (leader) {
      s_group_material[list + group] = material;
      s_group_size[list + group] = size;
    }
    if (subgroupElect()) s_group_count[gl_SubgroupID] = groups;
    barrier();  // every subgroup's list complete before leaders walk the earlier ones

    // 3. Leaders: the group's base = s_next + same-material lanes of earlier subgroups.
    if (leader) {
      uint base = s_next[material];
      for (uint s = 0u; s < gl_SubgroupID; ++s) {
        const uint end = s * gl_SubgroupSize + s_group_count[s];
        uint low = s * gl_SubgroupSize, high = end;  // first entry >= material in [low, high)
        while (low < high) {
          const uint middle = (low + high) / 2u;
          if (s_group_material[middle] < material) low = middle + 1u;
          else high = middle;
        }
        if (low < end && s_group_material[low] == material) base += s_group_size[low];
      }
      s_group_base[list + group] = base;
    }
    barrier();  // bases visible to every lane; every leader has read s_next

    // 4. Write the map and advance the running histogram. The next round reads s_next and
    //    rewrites the lists only after its first barrier, which follows these accesses.
    if (material != NO_MATERIAL) {
      pc.new_to_old.data[s_group_base[list + group] + rank] = pixel;
      if (leader) atomicAdd(s_next[material], size);
    }
  }
}
