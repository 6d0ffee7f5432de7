// Batches: independent sorts recorded behind shared barriers give what each sort gives alone,
// with no more barriers than the largest; batches that cannot run are refused. Runs under the
// validation layer.
#include <doctest/doctest.h>
#include <volk.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "gpu_test.h"
#include "reliability.h"

namespace vren::radix::test {

namespace {

// Barriers a sorter made with countingGetDeviceProcAddr records.
uint32_t g_barriers = 0;
VKAPI_ATTR void VKAPI_CALL countingCmdPipelineBarrier(VkCommandBuffer cmd, VkPipelineStageFlags src,
                                                      VkPipelineStageFlags dst, VkDependencyFlags flags,
                                                      uint32_t memory_count, const VkMemoryBarrier* memory,
                                                      uint32_t buffer_count, const VkBufferMemoryBarrier* buffers,
                                                      uint32_t image_count, const VkImageMemoryBarrier* images) {
  ++g_barriers;
  vkCmdPipelineBarrier(cmd, src, dst, flags, memory_count, memory, buffer_count, buffers, image_count, images);
}
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL countingGetDeviceProcAddr(VkDevice device, const char* name) {
  if (std::strcmp(name, "vkCmdPipelineBarrier") == 0)
    return reinterpret_cast<PFN_vkVoidFunction>(countingCmdPipelineBarrier);
  return vkGetDeviceProcAddr(device, name);
}

// The job's input back in its buffers, scratch poisoned again.
void restore(Job& job) {
  const size_t n = job.input.size();
  std::memcpy(job.keys.mapped, job.input.data(), n * 4);
  std::fill_n(static_cast<uint32_t*>(job.keys_temp.mapped), n, kPoison);
  if (job.pairs) {
    std::iota(static_cast<uint32_t*>(job.values.mapped), static_cast<uint32_t*>(job.values.mapped) + n, 0u);
    std::fill_n(static_cast<uint32_t*>(job.values_temp.mapped), n, kPoison);
  }
}

std::string checkJob(const Job& job) {
  const GpuBuffer& keys = job.result.in_temp ? job.keys_temp : job.keys;
  const GpuBuffer& values = job.result.in_temp ? job.values_temp : job.values;
  return compare(job.input, static_cast<const uint32_t*>(keys.mapped),
                 job.pairs ? static_cast<const uint32_t*>(values.mapped) : nullptr, job.options);
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "batches: independent sorts behind shared barriers, each as cmdSort sorts it" *
                               doctest::test_suite("subgroup")) {
  // Every path in one batch: one dispatch, the look-back (keys, pairs, argsort, a bit range of
  // two 8-bit passes) and the 4-bit passes past its limit, one with a GPU-side count, besides an
  // empty sort. Each sort runs alone first (its barriers counted), then all of them from the
  // same inputs in one cmdSortBatch: the same results, and no more barriers than the largest.
  TuningConfig tuning = getSorterProperties(context().sorter()).tuning;
  tuning.lookback_max_count = 6000;
  SorterCreateInfo info = context().createInfo<SorterCreateInfo>();
  info.binding.get_device_proc_addr = countingGetDeviceProcAddr;
  info.tuning = &tuning;
  Sorter* raw = nullptr;
  std::string error;
  REQUIRE_MESSAGE(createSorter(info, &raw, &error) == VK_SUCCESS, error);
  SorterPtr sorter(raw);
  Context& ctx = context();
  std::vector<Job> jobs(6);
  auto setUp = [&](Job& job, uint32_t n, Distribution d, bool pairs) {
    job.input = makeKeys(n, d, rng());
    job.pairs = pairs;
  };
  setUp(jobs[0], 700, Distribution::kUniform, false);  // one dispatch
  setUp(jobs[1], 5000, Distribution::kLowBits, true);  // look-back, descending
  jobs[1].options.descending = true;
  setUp(jobs[2], 9000, Distribution::kUniform, false);  // 4-bit passes
  setUp(jobs[3], 3000, Distribution::kUniform, true);   // look-back, bits [4, 20)
  jobs[3].options.begin_bit = 4;
  jobs[3].options.end_bit = 20;
  setUp(jobs[4], 4000, Distribution::kLowBits, true);   // look-back argsort
  setUp(jobs[5], 7000, Distribution::kAndOfTwo, true);  // 4-bit passes, the count on the GPU
  GpuBuffer count_buffer;
  REQUIRE_MESSAGE(
      ctx.createBuffer(16, getMemoryRequirements(sorter.get(), 1, false).usage, true, &count_buffer, &error), error);
  const uint32_t gpu_count = 6500;
  *static_cast<uint32_t*>(count_buffer.mapped) = gpu_count;
  for (Job& job : jobs) prepare(ctx, sorter.get(), job);
  jobs[4].info.argsort = true;
  std::vector<BatchSort> batch;
  for (Job& job : jobs) batch.push_back({job.info, {}});
  batch[5].count_buffer = {count_buffer.buffer, 0, 4};
  BatchSort empty = batch[0];
  empty.info.count = 0;
  // Job i's buffers checked for `result`; the GPU-side count sorts its first gpu_count keys.
  auto check = [&](size_t i, const SortResult& result) {
    Job reference = jobs[i];
    if (i == 5) reference.input.resize(gpu_count);
    reference.result = result;
    const std::string mismatch = checkJob(reference);
    CHECK_MESSAGE(mismatch.empty(), mismatch);
  };

  uint32_t most_alone = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    INFO("sort " << i << " alone");
    g_barriers = 0;
    REQUIRE_MESSAGE(ctx.submit(
                        [&](VkCommandBuffer cmd) {
                          jobs[i].result =
                              batch[i].count_buffer.buffer
                                  ? cmdSortIndirect(sorter.get(), cmd, batch[i].info, batch[i].count_buffer)
                                  : cmdSort(sorter.get(), cmd, batch[i].info);
                          toHost(cmd);
                        },
                        &error),
                    error);
    most_alone = std::max(most_alone, g_barriers);
    check(i, jobs[i].result);
    restore(jobs[i]);
  }
  REQUIRE(most_alone >= 2 * 8);  // the 4-bit passes: two barriers a pass at least

  batch.push_back(empty);
  REQUIRE(validateSortBatch(sorter.get(), batch) == nullptr);
  std::vector<SortResult> results(batch.size());
  g_barriers = 0;
  REQUIRE_MESSAGE(ctx.submit(
                      [&](VkCommandBuffer cmd) {
                        cmdSortBatch(sorter.get(), cmd, batch, results.data());
                        toHost(cmd);
                      },
                      &error),
                  error);
  CHECK(g_barriers == most_alone);
  CHECK(results.back().passes == 0);
  for (size_t i = 0; i < jobs.size(); ++i) {
    INFO("sort " << i << " in the batch");
    CHECK(results[i].passes == jobs[i].result.passes);
    CHECK(results[i].in_temp == jobs[i].result.in_temp);
    check(i, results[i]);
    const VkDeviceSize bytes = VkDeviceSize{jobs[i].input.size()} * 4;
    CHECK(canariesIntact(jobs[i].keys, bytes));
    CHECK(canariesIntact(jobs[i].keys_temp, bytes));
    CHECK(canariesIntact(jobs[i].internal, jobs[i].info.internal.size));
  }

  // Refused: two sorts sharing a buffer (named by index), and timestamps.
  uint32_t bad = 0;
  std::vector<BatchSort> shared = {batch[1], batch[3]};
  shared[1].info.internal = shared[0].info.internal;
  const char* why = validateSortBatch(sorter.get(), shared, &bad);
  REQUIRE(why != nullptr);
  CHECK(std::string(why).find("overlap") != std::string::npos);
  CHECK(bad == 1);
  shared = {batch[0], batch[2]};
  shared[1].info.keys_temp = shared[0].info.keys;
  CHECK(validateSortBatch(sorter.get(), shared, &bad) != nullptr);
  shared = {batch[0]};
  VkQueryPool pool = reinterpret_cast<VkQueryPool>(uintptr_t{1});
  shared[0].info.timestamp_pool = pool;
  why = validateSortBatch(sorter.get(), shared, &bad);
  REQUIRE(why != nullptr);
  CHECK(std::string(why).find("timestamps") != std::string::npos);
  CHECK(bad == 0);
  for (Job& job : jobs)
    for (GpuBuffer* b : {&job.keys, &job.keys_temp, &job.values, &job.values_temp, &job.internal})
      if (b->buffer) ctx.destroyBuffer(b);
  ctx.destroyBuffer(&count_buffer);
}

}  // namespace vren::radix::test
