// Workgroup-wide exclusive sum of one uint per thread, in ordered-thread order
// (gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID).
//
// The including shader declares MAX_SUBGROUPS (an upper bound on gl_NumSubgroups) and enables
// GL_KHR_shader_subgroup_arithmetic. Every thread of the workgroup must call it (it holds
// barriers); it may be called repeatedly.
//
// Shared memory: (MAX_SUBGROUPS + 1) * 4 bytes.

shared uint s_scan_subgroup[MAX_SUBGROUPS];
shared uint s_scan_total;

// Step 1 of both sums below: the exclusive sum inside the subgroup, returned, and each
// subgroup's sum in s_scan_subgroup, visible to every thread after the barrier.
uint subgroup_sums_published(uint value) {
  const uint in_subgroup = subgroupExclusiveAdd(value);
  const uint subgroup_sum = subgroupAdd(value);
  if (subgroupElect()) s_scan_subgroup[gl_SubgroupID] = subgroup_sum;
  barrier();  // subgroup sums visible
  return in_subgroup;
}

uint workgroup_exclusive_add(uint value, out uint total) {
  // 1. Scan inside each subgroup; publish subgroup sums.
  const uint in_subgroup = subgroup_sums_published(value);

  // 2. The first subgroup scans the subgroup sums, gl_SubgroupSize at a time.
  if (gl_SubgroupID == 0u) {
    uint carry = 0u;
    for (uint base = 0u; base < gl_NumSubgroups; base += gl_SubgroupSize) {
      const uint i = base + gl_SubgroupInvocationID;
      const uint sum = i < gl_NumSubgroups ? s_scan_subgroup[i] : 0u;
      const uint prefix = subgroupExclusiveAdd(sum);
      if (i < gl_NumSubgroups) s_scan_subgroup[i] = carry + prefix;
      carry += subgroupAdd(sum);
    }
    if (subgroupElect()) s_scan_total = carry;
  }
  barrier();  // subgroup prefixes and the total visible to every thread

  total = s_scan_total;
  const uint result = s_scan_subgroup[gl_SubgroupID] + in_subgroup;
  barrier();  // everyone has read the prefixes before a next call overwrites them
  return result;
}

// The same sum with one barrier and no total, for callers whose own barriers order this call's
// reads before any next call's writes (it has no barrier at the end): each subgroup adds the sums
// of the subgroups before it itself, where workgroup_exclusive_add has the first subgroup scan
// them between two more barriers. As radix_onesweep.comp's scan of a tile's counts on an H200,
// pairs of 2^20 / 2^24 / 2^26 keys sort in 0.0718 / 0.664 / 2.484 ms against 0.0759 / 0.692 /
// 2.575 with workgroup_exclusive_add (2026-12-02). The last subgroup loops as often as the first
// one does there, ceil(gl_NumSubgroups / gl_SubgroupSize) times (lavapipe bounds a shader's
// loops), but every subgroup loops: the work is quadratic in the subgroups, cheap while they are
// few, as on a GPU.
uint workgroup_exclusive_add_lean(uint value) {
  const uint in_subgroup = subgroup_sums_published(value);
  uint before = 0u;
  for (uint base = 0u; base < gl_SubgroupID; base += gl_SubgroupSize) {  // uniform per subgroup
    const uint i = base + gl_SubgroupInvocationID;
    before += subgroupAdd(i < gl_SubgroupID ? s_scan_subgroup[i] : 0u);
  }
  return before + in_subgroup;
}
