#version 460
// Material sort, fast path, step 2 of 3: per material, exclusive scan over chunks, its total and
// its dispatch arguments, one workgroup per material. It runs beside step 3, which polls for what
// it publishes (materials_published.glsl).
//
// In:  chunk_counts[m * C + c] from step 1 (material-major, C = chunk_count).
// Out: counts[m] and dispatch[m] as materials_offsets.comp, and published: the total of m, and
//      per chunk c the pixels of m in chunks before c.
// offsets[m] are left to step 3, which has every total anyway: it adds offsets[m] to chunk c's
// prefix of m for the destination of the chunk's first pixel of m. (With no chunks, step 3 has
// no workgroups, and this step writes the offsets: all 0.)
// Why a workgroup per material: one workgroup walking every row made the scan a latency chain
// that grew with M (19.6 us for 64 materials and 1800 chunks on an H200, against 7.0 us for 8);
// a row per workgroup is one batch of loads, one workgroup scan and one batch of stores for any
// M, and no workgroup waits for another.
//
// Thread o (in ordered-thread order) takes a contiguous run of ceil(C / W) chunks of the row,
// loaded BATCH at a time so that their latencies overlap.
//
// Config: WORKGROUP_SIZE threads (the device's largest workgroup, up to 1024), MAX_SUBGROUPS >=
// gl_NumSubgroups.
// Shared memory: 4 * (MAX_SUBGROUPS + 1) bytes (workgroup_scan.glsl).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "materials_common.glsl"
#include "materials_published.glsl"

layout(local_size_x_id = VREN_RADIX_MATERIALS_SPEC_WORKGROUP_SIZE) in;
#include "workgroup_scan.glsl"

const uint BATCH = 16;

void main() {
  const uint material = workgroup_index();
  const uint chunks = pc.chunk_count;
  const uint row = material * chunks;
  const uint per_thread = (chunks + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;
  const uint first = min(ordered_thread() * per_thread, chunks);
  const uint end = min(first + per_thread, chunks);  // idle threads: first == end

  // 1. Sum this thread's chunks. With at most BATCH of them (up to BATCH * W chunks: 16384 for
  //    1024 threads), phase 3 reuses the values instead of loading again.
  uint sum = 0u;
  uint v[BATCH];
  for (uint c = first; c < end; c += BATCH) {
    [[unroll]] for (uint i = 0u; i < BATCH; ++i) v[i] = c + i < end ? pc.chunk_counts.data[row + c + i] : 0u;
    [[unroll]] for (uint i = 0u; i < BATCH; ++i) sum += v[i];
  }

  // 2. The pixels of this material in earlier threads' chunks, and the material's total,
  //    published at once: every scatter workgroup needs it.
  uint total;
  uint next = workgroup_exclusive_add(sum, total);
  if (gl_LocalInvocationIndex == 0u) publish(published_total_at(material), total);

  // 3. Each chunk's exclusive prefix.
  for (uint c = first; c < end; c += BATCH) {
    if (per_thread > BATCH) {  // uniform
      [[unroll]] for (uint i = 0u; i < BATCH; ++i) v[i] = c + i < end ? pc.chunk_counts.data[row + c + i] : 0u;
    }
    [[unroll]] for (uint i = 0u; i < BATCH; ++i) {
      if (c + i < end) publish(published_prefix_at(material, c + i), next);
      next += v[i];
    }
  }

  // 4. The material's total and its shading dispatch.
  if (gl_LocalInvocationIndex == 0u) {
    pc.counts.data[material] = total;
    pc.dispatch.data[material] = dispatch_for(material, total);
    if (chunks == 0u) pc.offsets.data[material] = 0u;
  }
}
