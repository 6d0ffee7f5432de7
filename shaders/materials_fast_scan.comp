#version 460
// Material sort, fast path, step 2 of 3: per material, exclusive scan over chunks, the totals,
// the range offsets and the dispatch arguments, in one workgroup.
//
// In:  chunk_counts[c * M + m] from step 1 (M = material_count <= HISTOGRAM_SIZE <= W).
// Out: counts[m], offsets[m], dispatch[m] as materials_offsets.comp, and in place
//        chunk_counts[c * M + m] = offsets[m] + pixels of m in chunks before c,
//      the destination of chunk c's first pixel of m, which step 3 reads directly.
// Thread t works on material t % M for the chunks of group t / M: G = W / M groups (threads past
// G * M idle), each a contiguous run of ceil(chunk_count / G) chunks. Loads go BATCH at a time,
// so that their latencies overlap instead of adding up (one workgroup has the GPU to itself).
//
// Config: WORKGROUP_SIZE threads (the device's largest workgroup, up to 1024), HISTOGRAM_SIZE.
// Shared memory: 4 * (2 * WORKGROUP_SIZE + HISTOGRAM_SIZE) bytes.
#extension GL_GOOGLE_include_directive : require
#include "materials_common.glsl"

layout(local_size_x_id = VREN_MATERIALS_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_MATERIALS_SPEC_HISTOGRAM_SIZE) const uint HISTOGRAM_SIZE = 64;

const uint BATCH = 16;

// Per thread: its chunks' pixels of its material, then scanned. Two buffers, so that a step of
// the scan reads one and writes the other: one barrier per step instead of two.
shared uint s_sum[2][gl_WorkGroupSize.x];
shared uint s_offset[HISTOGRAM_SIZE];   // per material: offsets[m]

void main() {
  const uint materials = pc.material_count;
  const uint t = gl_LocalInvocationIndex;
  const uint material = t % materials;
  const uint groups = gl_WorkGroupSize.x / materials;
  const uint group = t / materials;
  const uint per_group = (pc.chunk_count + groups - 1u) / groups;
  const uint first = min(group * per_group, pc.chunk_count);
  const uint end = min(first + per_group, pc.chunk_count);  // idle threads: first == end

  // 1. Sum this thread's chunks. With at most BATCH of them (the common case: 1024 threads,
  //    8 materials and up to 2048 chunks), phase 4 reuses the values instead of loading again.
  uint sum = 0u;
  uint v[BATCH];
  for (uint c = first; c < end; c += BATCH) {
    [[unroll]] for (uint i = 0u; i < BATCH; ++i)
      v[i] = c + i < end ? pc.chunk_counts.data[(c + i) * materials + material] : 0u;
    [[unroll]] for (uint i = 0u; i < BATCH; ++i) sum += v[i];
  }
  s_sum[0][t] = sum;
  barrier();  // every sum in place before the scan reads its neighbours

  // 2. Inclusive scan over the groups of each material (Hillis-Steele, stride M in s_sum), from
  //    s_sum[src] to s_sum[src ^ 1] each step.
  uint src = 0u;
  for (uint d = 1u; d < groups; d *= 2u) {  // uniform
    const uint add = group < groups && group >= d ? s_sum[src][t - d * materials] : 0u;
    s_sum[src ^ 1u][t] = s_sum[src][t] + add;
    src ^= 1u;
    barrier();  // this step's writes visible to the next, and its reads done before the next overwrites them
  }

  // 3. Totals, offsets and dispatch arguments: the first subgroup, gl_SubgroupSize materials at a
  //    time; the totals are the last group's inclusive sums.
  if (gl_SubgroupID == 0u) {
    uint carry = 0u;
    for (uint base = 0u; base < materials; base += gl_SubgroupSize) {  // uniform
      const uint m = base + gl_SubgroupInvocationID;
      const uint count = m < materials ? s_sum[src][(groups - 1u) * materials + m] : 0u;
      const uint padded = (count + pc.alignment - 1u) & ~(pc.alignment - 1u);
      const uint offset = carry + subgroupExclusiveAdd(padded);
      if (m < materials) {
        s_offset[m] = offset;
        pc.counts.data[m] = count;
        pc.offsets.data[m] = offset;
        pc.dispatch.data[m] = dispatch_for(m, count);
      }
      carry += subgroupAdd(padded);
    }
  }
  barrier();  // offsets visible to every thread

  // 4. Each chunk's destination per material, in place.
  uint next = s_offset[material] + s_sum[src][t] - sum;
  for (uint c = first; c < end; c += BATCH) {
    if (per_group > BATCH) {  // uniform
      [[unroll]] for (uint i = 0u; i < BATCH; ++i)
        v[i] = c + i < end ? pc.chunk_counts.data[(c + i) * materials + material] : 0u;
    }
    [[unroll]] for (uint i = 0u; i < BATCH; ++i) {
      if (c + i < end) pc.chunk_counts.data[(c + i) * materials + material] = next;
      next += v[i];
    }
  }
}
