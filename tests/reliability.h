// Helpers shared by the reliability tests (test_failures.cpp, test_validation.cpp,
// test_limits.cpp, test_batch.cpp, test_reliability.cpp; test_sort.cpp's shape queries):
// never-compiled pipelines, device limits faked through the entry points the library is given,
// and sort jobs in host-visible buffers with poisoned scratch and canaries (the patterns of
// checked_sorts.h).
#pragma once

#include <doctest/doctest.h>
#include <volk.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checked_sorts.h"
#include "gpu_test.h"

namespace vren::radix::test {

// Pipelines that are never compiled, for sorters that only answer queries or are only created
// and destroyed: lavapipe compiles each pipeline at creation, which would make these checks take
// seconds each. Handles count up from 1, and g_uncompiled_live counts those not yet destroyed.
extern std::atomic<int64_t> g_uncompiled_live;
VKAPI_ATTR VkResult VKAPI_CALL uncompiledPipelines(VkDevice, VkPipelineCache, uint32_t count,
                                                   const VkComputePipelineCreateInfo*, const VkAllocationCallbacks*,
                                                   VkPipeline* pipelines);
VKAPI_ATTR void VKAPI_CALL destroyUncompiled(VkDevice, VkPipeline pipeline, const VkAllocationCallbacks*);
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL uncompiledGetDeviceProcAddr(VkDevice device, const char* name);

// Real buffers for precondition checks (validation reads their device addresses).
struct Buffers {
  explicit Buffers(Context& c) : ctx(c) {}
  ~Buffers() {
    for (GpuBuffer& b : list) ctx.destroyBuffer(&b);
  }
  VkBuffer make(VkDeviceSize size, VkBufferUsageFlags usage, bool host_visible = false) {
    GpuBuffer b;
    std::string error;
    REQUIRE_MESSAGE(ctx.createBuffer(size, usage, host_visible, &b, &error), error);
    list.push_back(b);
    return b.buffer;
  }
  Context& ctx;
  std::vector<GpuBuffer> list;
};

// Device limits reported to the library through a wrapped vkGetInstanceProcAddr: the library
// reads the device only through the entry points it is given.
struct FakeLimits {
  uint64_t max_allocation = 0;  // 0: the device's own
  uint32_t groups_x = 0;
  uint32_t groups_y = 0;
  uint32_t vendor_id = 0;        // 0: the device's own
  uint32_t max_invocations = 0;  // workgroup size; 0: the device's own
  VkDriverId driver_id = {};     // 0: the device's own
  uint32_t max_shared_memory = 0;  // compute shared memory in bytes; 0: the device's own
};

// Destroys the sorter and checks that no never-compiled pipeline outlives it.
struct SorterDeleter {
  void operator()(Sorter* s) const;
};
using SorterPtr = std::unique_ptr<Sorter, SorterDeleter>;

enum class Pipelines { kUncompiled, kCompiled };

// A sorter on the test context's device with `limits` faked. tuning null: the device's choice.
// Uncompiled sorters answer queries and validation only: they must not record.
SorterPtr fakeSorter(const FakeLimits& limits, const TuningConfig* tuning = nullptr,
                     Pipelines pipelines = Pipelines::kUncompiled);

// The device's tuning on these digits, its look-back limited to small sorts (as on devices
// without a measured tuning), so that the internal block past it grows with the passes' tiles.
TuningConfig withDigits(uint32_t digit_bits);

// A refusal must be one sentence that names the problem.
void checkRefused(const char* message, const char* expected_words, const char* what);

inline uint64_t divCeil(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}
inline uint32_t tileOf(const TuningConfig& t) {
  return t.workgroup_size * t.keys_per_thread;
}

struct Job {
  std::vector<uint32_t> input;
  bool pairs = false;
  SortOptions options;
  // Host-visible buffers; the words past `count` hold canaries. With options.gpu_count, `count`
  // holds options.gpu_count_value and the sort is cmdSortIndirect's, options.expected_count its
  // SortInfo::expected_count.
  GpuBuffer keys, keys_temp, values, values_temp, internal, count;
  SortInfo info;
  SortResult result{};
};

// Creates `job`'s buffers (keys and values from its input, poisoned scratch, canaries past
// every buffer) and its SortInfo.
void prepare(Context& ctx, const Sorter* sorter, Job& job);

// First mismatch against the stable CPU order, or an empty string.
std::string compare(const std::vector<uint32_t>& input, const uint32_t* keys, const uint32_t* values,
                    const SortOptions& o);

// Records a barrier from compute-shader writes to host reads.
void toHost(VkCommandBuffer cmd);

// Prepares `job`'s buffers, records the sort with `sorter` (made on ctx's device) and a barrier
// to the host, submits and waits.
void runJob(Context& ctx, const Sorter* sorter, Job& job);

// Sorts `input` with `sorter` (made on ctx's device), in host-visible buffers with poisoned
// scratch and canaries, and checks the result against the stable CPU order.
void checkSortWith(Context& ctx, const Sorter* sorter, const std::vector<uint32_t>& input, bool pairs,
                   const SortOptions& options = {});

}  // namespace vren::radix::test
