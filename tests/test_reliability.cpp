// Reliability under load and odd shapes: one sorter recorded from several threads, several
// contexts sorting at once, another vendor's tuning rows, 2D grids and multi-chunk scans on a
// device of small limits, and the look-back's published words. Runs under the validation layer.
#include <doctest/doctest.h>
#include <volk.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test.h"
#include "radix_shared.h"
#include "reliability.h"

namespace vren::radix::test {

namespace {

uint32_t computeQueueFamily(VkPhysicalDevice physical) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, families.data());
  for (uint32_t i = 0; i < n; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
  return UINT32_MAX;
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "reliability: one sorter recorded on three threads, submitted together") {
  Context& ctx = context();
  const Sorter* sorter = ctx.sorter();
  const VkDevice device = ctx.vkDevice();
  const uint32_t tile = getSorterProperties(sorter).tile_size;
  const uint32_t family = computeQueueFamily(ctx.physicalDevice());
  REQUIRE(family != UINT32_MAX);
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(device, family, 0, &queue);

  // Different sizes, key-only and pairs, an odd pass count (result in the temps), descending.
  Job jobs[3];
  jobs[0].input = makeKeys(5 * tile + 3, Distribution::kUniform, rng());
  jobs[1].input = makeKeys(3 * tile + 7, Distribution::kLowBits, rng());
  jobs[1].pairs = true;
  jobs[1].options.end_bit = 12;
  jobs[2].input = makeKeys(tile / 2 + 1, Distribution::kAndOfTwo, rng());
  jobs[2].pairs = true;
  jobs[2].options.descending = true;
  for (Job& job : jobs) prepare(ctx, sorter, job);

  // Command pools are externally synchronised: one per recording thread.
  VkCommandPool pools[3] = {};
  VkCommandBuffer cmds[3] = {};
  for (int i = 0; i < 3; ++i) {
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.queueFamilyIndex = family;
    REQUIRE(vkCreateCommandPool(device, &pool_info, nullptr, &pools[i]) == VK_SUCCESS);
    VkCommandBufferAllocateInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cmd_info.commandPool = pools[i];
    cmd_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cmd_info.commandBufferCount = 1;
    REQUIRE(vkAllocateCommandBuffers(device, &cmd_info, &cmds[i]) == VK_SUCCESS);
  }
  std::atomic<int> recorded{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      if (vkBeginCommandBuffer(cmds[i], &begin) != VK_SUCCESS) return;
      jobs[i].result = cmdSort(sorter, cmds[i], jobs[i].info);
      VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      vkCmdPipelineBarrier(cmds[i], VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                           nullptr, 0, nullptr);
      if (vkEndCommandBuffer(cmds[i]) == VK_SUCCESS) ++recorded;
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(recorded == 3);

  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  REQUIRE(vkCreateFence(device, &fence_info, nullptr, &fence) == VK_SUCCESS);
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 3;
  submit.pCommandBuffers = cmds;
  CHECK(vkQueueSubmit(queue, 1, &submit, fence) == VK_SUCCESS);
  CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX) == VK_SUCCESS);
  vkDestroyFence(device, fence, nullptr);
  for (VkCommandPool pool : pools) vkDestroyCommandPool(device, pool, nullptr);

  for (Job& job : jobs) {
    INFO("count " << job.input.size() << (job.pairs ? ", pairs" : ", keys"));
    const bool in_temp = job.result.in_temp;
    CHECK(in_temp == (job.result.passes % 2 == 1));
    const GpuBuffer& keys = in_temp ? job.keys_temp : job.keys;
    const GpuBuffer& values = in_temp ? job.values_temp : job.values;
    CHECK(job.result.keys.buffer == keys.buffer);
    const std::string mismatch =
        compare(job.input, static_cast<const uint32_t*>(keys.mapped),
                job.pairs ? static_cast<const uint32_t*>(values.mapped) : nullptr, job.options);
    CHECK_MESSAGE(mismatch.empty(), mismatch);
    const VkDeviceSize bytes = VkDeviceSize{job.input.size()} * 4;
    CHECK(canariesIntact(job.keys, bytes));
    CHECK(canariesIntact(job.keys_temp, bytes));
    CHECK(canariesIntact(job.internal, job.info.internal.size));
    if (job.pairs) {
      CHECK(canariesIntact(job.values, bytes));
      CHECK(canariesIntact(job.values_temp, bytes));
    }
    for (GpuBuffer* b : {&job.keys, &job.keys_temp, &job.values, &job.values_temp, &job.internal})
      if (b->buffer) ctx.destroyBuffer(b);
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: the tuning rows of another vendor sort correctly here") {
  // NVIDIA's row on this device; and, with NVIDIA's vendor ID, the 4-bit passes alone (the row
  // leaves them to bit ranges of one digit), whose key/value scatter is wider: here 256 x 2 for
  // the count pass's 128 x 4, the same tile, or the sort goes wrong. The sorts must stay exact.
  SorterPtr row = fakeSorter({0, 0, 0, 0x10DE}, nullptr, Pipelines::kCompiled);
  TuningConfig passes{128, 4};
  passes.lookback_max_count = 0;
  passes.block_max_count = 0;
  SorterPtr four_bit = fakeSorter({0, 0, 0, 0x10DE}, &passes, Pipelines::kCompiled);
  for (const Sorter* sorter : {row.get(), four_bit.get()}) {
    const SorterProperties props = getSorterProperties(sorter);
    INFO("tuning " << props.tuning.workgroup_size << "x" << props.tuning.keys_per_thread << ", look-back up to "
                   << props.tuning.lookback_max_count << " keys");
    for (const bool pairs : {true, false})
      checkSortWith(context(), sorter, makeKeys(3 * props.tile_size + 5, Distribution::kAndOfTwo, rng()), pairs);
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: 2D grids and a scan of several chunks, on a device of small limits" *
                               doctest::test_suite("subgroup")) {
  // A device that allows 300 workgroups in x and 64 invocations per workgroup, so that a few
  // thousand 64-key tiles need 2D grids (every dispatch linearises its group ID) and the scan of
  // the per-group digit counts runs several chunks of 64 threads x 4 sums. Then the look-back,
  // whose up to 1024 tiles also need a 2D grid here.
  const FakeLimits small_device{0, 300, 0, 0, 64};
  for (uint32_t digit_bits : {4u, 8u}) {
    TuningConfig tuning{32, 2, digit_bits};
    tuning.lookback_max_count = 0;
    SorterPtr sorter = fakeSorter(small_device, &tuning, Pipelines::kCompiled);
    const uint32_t tile = getSorterProperties(sorter.get()).tile_size;
    INFO(digit_bits << "-bit passes, tile " << tile);
    const uint32_t n = (4 * 1024 + 5) * tile - 7;
    checkSortWith(context(), sorter.get(), makeKeys(n, Distribution::kUniform, rng()), false);
    checkSortWith(context(), sorter.get(), makeKeys(n, Distribution::kAndOfTwo, rng()), true);
  }
  TuningConfig tuning{32, 2, 4};
  tuning.lookback_keys_per_thread = 2;
  tuning.lookback_workgroup_size = 32;
  tuning.large_tile_slots = 64;  // tiles at once, for a GPU-side count's grids
  SorterPtr sorter = fakeSorter(small_device, &tuning, Pipelines::kCompiled);
  const uint32_t tile = getSorterProperties(sorter.get()).lookback_tile_size;
  INFO("look-back, tile " << tile);
  const uint32_t n = 1000 * tile - 7;
  SortInfo asked;
  asked.count = n;
  REQUIRE(getPassCount(sorter.get(), asked) == 4);  // the look-back's 8-bit digits
  checkSortWith(context(), sorter.get(), makeKeys(n, Distribution::kUniform, rng()), false);
  checkSortWith(context(), sorter.get(), makeKeys(n, Distribution::kLowBits, rng()), true);
  // A GPU-side count 40 tiles short of n: expecting 10 tiles fewer than n (within the 64 at once),
  // the passes dispatch n's tiles on a direct 2D grid and those past the count return; expecting
  // 100 fewer, they take the grids the setup writes.
  SortOptions o;
  o.gpu_count = true;
  o.gpu_count_value = n - 40 * tile - 3;
  for (const uint32_t fewer : {10u, 100u}) {
    o.expected_count = n - fewer * tile;
    INFO("expected " << fewer << " tiles fewer");
    checkSortWith(context(), sorter.get(), makeKeys(n, Distribution::kUniform, rng()), false, o);
    checkSortWith(context(), sorter.get(), makeKeys(n, Distribution::kAndOfTwo, rng()), true, o);
  }
  // Large tiles on 400 workgroups that loop over them (TuningConfig::large_tile_loop), more than
  // a row of 300 holds: the loop's grid is 2D as well, and each workgroup's stride spans it.
  tuning.large_tile_min_count = 0;
  tuning.large_tile_workgroup_size = tuning.large_tile_pairs_workgroup_size = 32;
  tuning.large_tile_keys_per_thread = tuning.large_tile_pairs_keys_per_thread = 4;
  tuning.large_tile_slots = 400;
  tuning.large_tile_loop = tuning.large_tile_pairs_loop = 1;
  SorterPtr looping = fakeSorter(small_device, &tuning, Pipelines::kCompiled);
  REQUIRE(getSorterProperties(looping.get()).tuning.large_tile_loop == 1);
  const uint32_t large = getSorterProperties(looping.get()).large_tile_size;
  INFO("looping large tiles, tile " << large);
  const uint32_t m = 1000 * large - 5;  // 1000 tiles, at most 4 a workgroup on lavapipe
  checkSortWith(context(), looping.get(), makeKeys(m, Distribution::kUniform, rng()), false);
  checkSortWith(context(), looping.get(), makeKeys(m, Distribution::kAndOfTwo, rng()), true);
}

TEST_CASE_FIXTURE(GpuTest, "reliability: every look-back tile publishes its prefix with the prefix flag" *
                               doctest::test_suite("subgroup")) {
  // A word published without its flag would only make later tiles slow (they count the tile
  // from its keys instead), so the sort's result cannot show it: the words are an internal
  // layout, checked here. After the sort, the last pass's set holds, for every tile and bin,
  // FLAG_PREFIX | the count of that bin's keys in this tile and every earlier one, in the order
  // the last pass read them (the input stably sorted by the lower digits).
  TuningConfig tuning{32, 2, 4};
  tuning.lookback_keys_per_thread = 2;
  tuning.lookback_workgroup_size = 32;
  tuning.block_max_count = 0;
  SorterPtr sorter = fakeSorter({}, &tuning, Pipelines::kCompiled);
  const uint32_t tile = getSorterProperties(sorter.get()).lookback_tile_size;
  const uint32_t tiles = 20, n = tiles * tile - 5;
  Job job;
  job.input = makeKeys(n, Distribution::kUniform, rng());
  runJob(context(), sorter.get(), job);
  REQUIRE(job.result.passes == 4);  // 8-bit digits: the look-back
  std::vector<uint32_t> order = job.input;
  std::stable_sort(order.begin(), order.end(), [](uint32_t a, uint32_t b) { return (a & 0xFFFFFF) < (b & 0xFFFFFF); });
  constexpr uint32_t kFlagPrefix = 1u << 31, kLastSet = 3 & 1;
  const auto* words = static_cast<const uint32_t*>(job.internal.mapped);
  std::vector<uint32_t> prefix(256, 0);
  size_t bad = 0, checked = 0;
  for (uint32_t t = 0; t < tiles; ++t) {
    for (uint32_t i = t * tile; i < std::min(n, (t + 1) * tile); ++i) ++prefix[order[i] >> 24];
    for (uint32_t bin = 0; bin < 256; ++bin, ++checked)
      if (words[VREN_RADIX_LOOKBACK_WORDS + (2 * t + kLastSet) * 256 + bin] != (kFlagPrefix | prefix[bin])) ++bad;
  }
  CHECK_MESSAGE(bad == 0, bad << " of " << checked << " published words are not the flagged inclusive prefix");
  for (GpuBuffer* b : {&job.keys, &job.keys_temp, &job.internal})
    if (b->buffer) context().destroyBuffer(b);
}

TEST_CASE_FIXTURE(GpuTest, "reliability: looping workgroups two a unit take every tile by ticket" *
                               doctest::test_suite("subgroup")) {
  // Which way looping workgroups take their tiles does not show in the result: the passes'
  // ticket words do. After a sort of 50 large tiles, each pass's word holds the tickets fetched:
  // every tile's (at least 50, at most one more a workgroup) with two workgroups a unit, and
  // none (the setup's zero) with one, whose workgroups take their tiles by index.
  TuningConfig tuning{32, 2, 4};
  tuning.lookback_keys_per_thread = 2;
  tuning.lookback_workgroup_size = 32;
  tuning.block_max_count = 0;
  tuning.large_tile_min_count = 0;
  tuning.large_tile_workgroup_size = 32;
  tuning.large_tile_keys_per_thread = 4;
  tuning.large_tile_slots = 4;
  tuning.large_tile_loop = 1;
  for (uint32_t per_unit : {2u, 1u}) {
    INFO(per_unit << " a unit");
    tuning.large_tile_per_unit = per_unit;
    SorterPtr sorter = fakeSorter({}, &tuning, Pipelines::kCompiled);
    const uint32_t tile = getSorterProperties(sorter.get()).large_tile_size;
    REQUIRE(tile > 0);
    const uint32_t tiles = 50, n = tiles * tile - 5;
    Job job;
    job.input = makeKeys(n, Distribution::kUniform, rng());
    runJob(context(), sorter.get(), job);
    REQUIRE(job.result.passes == 4);  // 8-bit digits, none skipped
    const auto* keys = static_cast<const uint32_t*>((job.result.in_temp ? job.keys_temp : job.keys).mapped);
    CHECK(compare(job.input, keys, nullptr, {}).empty());
    const auto* words = static_cast<const uint32_t*>(job.internal.mapped);
    for (uint32_t pass = 0; pass < 4; ++pass) {
      const uint32_t tickets = words[VREN_RADIX_STATE_TICKETS + pass];
      INFO("pass " << pass << ": " << tickets << " tickets");
      if (per_unit == 1) CHECK(tickets == 0);
      else CHECK((tickets >= tiles && tickets <= 2 * tiles));
    }
    for (GpuBuffer* b : {&job.keys, &job.keys_temp, &job.internal})
      if (b->buffer) context().destroyBuffer(b);
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: several contexts sort on several threads at once") {
  // Contexts are made and destroyed one at a time (creation loads volk's global entry points);
  // in between, each thread sorts with its own context.
  constexpr int kThreads = 3;
  std::mutex message_mutex;
  std::vector<std::string> messages;
  ContextOptions options;
  options.validation = true;
  options.on_message = [&](const std::string& m) {
    std::lock_guard<std::mutex> lock(message_mutex);
    messages.push_back(m);
  };
  std::vector<std::unique_ptr<Context>> contexts;
  for (int i = 0; i < kThreads; ++i) {
    std::string error;
    contexts.push_back(Context::create(options, &error));
    REQUIRE_MESSAGE(contexts.back() != nullptr, error);
  }
  const uint32_t tile = getSorterProperties(contexts[0]->sorter()).tile_size;
  // Inputs made up front: the shared generator is not thread-safe.
  std::vector<std::vector<uint32_t>> inputs[kThreads];
  for (int t = 0; t < kThreads; ++t)
    for (int round = 0; round < 4; ++round)
      inputs[t].push_back(
          makeKeys((t + 1) * tile * (round + 1) + 17 * round + t, kAllDistributions[(t + round) % 7], rng()));

  std::string failures[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t round = 0; round < inputs[t].size() && failures[t].empty(); ++round) {
        const std::vector<uint32_t>& input = inputs[t][round];
        const bool pairs = (t + round) % 2 == 0;
        SortOptions o;
        o.descending = round == 3;
        std::vector<uint32_t> keys = input, values;
        if (pairs) {
          values.resize(input.size());
          std::iota(values.begin(), values.end(), 0u);
        }
        CheckedStats stats;
        std::string error;
        if (!checkedSort(*contexts[t], keys, values, o, &stats, &error)) {
          failures[t] = "sort failed: " + error;
        } else if (!stats.canaries_intact) {
          failures[t] = "canaries overwritten";
        } else {
          failures[t] = compare(input, keys.data(), pairs ? values.data() : nullptr, o);
        }
        if (!failures[t].empty())
          failures[t] = "thread " + std::to_string(t) + ", round " + std::to_string(round) + ": " + failures[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  contexts.clear();
  for (const std::string& f : failures) CHECK_MESSAGE(f.empty(), f);
  for (const std::string& m : messages) FAIL_CHECK("validation: " << m);
}

}  // namespace vren::radix::test
