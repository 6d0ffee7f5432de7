// Helpers shared by the reliability tests (reliability.h).
#include "reliability.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <numeric>

namespace vren::radix::test {

std::atomic<int64_t> g_uncompiled_live{0};

namespace {
std::atomic<uint64_t> g_uncompiled_next{1};
}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL uncompiledPipelines(VkDevice, VkPipelineCache, uint32_t count,
                                                   const VkComputePipelineCreateInfo*, const VkAllocationCallbacks*,
                                                   VkPipeline* pipelines) {
  for (uint32_t i = 0; i < count; ++i) pipelines[i] = reinterpret_cast<VkPipeline>(g_uncompiled_next++);
  g_uncompiled_live += count;
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL destroyUncompiled(VkDevice, VkPipeline pipeline, const VkAllocationCallbacks*) {
  if (pipeline) --g_uncompiled_live;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL uncompiledGetDeviceProcAddr(VkDevice device, const char* name) {
  if (std::strcmp(name, "vkCreateComputePipelines") == 0)
    return reinterpret_cast<PFN_vkVoidFunction>(uncompiledPipelines);
  if (std::strcmp(name, "vkDestroyPipeline") == 0) return reinterpret_cast<PFN_vkVoidFunction>(destroyUncompiled);
  return vkGetDeviceProcAddr(device, name);
}

namespace {

FakeLimits g_fake;
PFN_vkGetPhysicalDeviceProperties2 g_real_properties2 = nullptr;

VKAPI_ATTR void VKAPI_CALL fakeProperties2(VkPhysicalDevice device, VkPhysicalDeviceProperties2* properties) {
  g_real_properties2(device, properties);
  VkPhysicalDeviceLimits& limits = properties->properties.limits;
  if (g_fake.groups_x) limits.maxComputeWorkGroupCount[0] = g_fake.groups_x;
  if (g_fake.groups_y) limits.maxComputeWorkGroupCount[1] = g_fake.groups_y;
  if (g_fake.vendor_id) properties->properties.vendorID = g_fake.vendor_id;
  if (g_fake.max_shared_memory) limits.maxComputeSharedMemorySize = g_fake.max_shared_memory;
  if (g_fake.max_invocations) {
    limits.maxComputeWorkGroupInvocations = g_fake.max_invocations;
    limits.maxComputeWorkGroupSize[0] = std::min(limits.maxComputeWorkGroupSize[0], g_fake.max_invocations);
  }
  for (auto* s = static_cast<VkBaseOutStructure*>(properties->pNext); s; s = s->pNext) {
    if (g_fake.max_allocation && s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES)
      reinterpret_cast<VkPhysicalDeviceVulkan11Properties*>(s)->maxMemoryAllocationSize = g_fake.max_allocation;
    if (g_fake.max_allocation && s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES)
      reinterpret_cast<VkPhysicalDeviceMaintenance3Properties*>(s)->maxMemoryAllocationSize = g_fake.max_allocation;
    if (g_fake.driver_id && s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES)
      reinterpret_cast<VkPhysicalDeviceDriverProperties*>(s)->driverID = g_fake.driver_id;
    if (g_fake.driver_id && s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES)
      reinterpret_cast<VkPhysicalDeviceVulkan12Properties*>(s)->driverID = g_fake.driver_id;
  }
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL fakeGetInstanceProcAddr(VkInstance instance, const char* name) {
  if (std::strcmp(name, "vkGetPhysicalDeviceProperties2") == 0 ||
      std::strcmp(name, "vkGetPhysicalDeviceProperties2KHR") == 0) {
    g_real_properties2 = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(vkGetInstanceProcAddr(instance, name));
    return g_real_properties2 ? reinterpret_cast<PFN_vkVoidFunction>(fakeProperties2) : nullptr;
  }
  return vkGetInstanceProcAddr(instance, name);
}

}  // namespace

void checkRefused(const char* message, const char* expected_words, const char* what) {
  INFO(what);
  REQUIRE(message != nullptr);
  const std::string m = message;
  INFO("message: " << m);
  CHECK(m.size() > 10);
  CHECK(m.back() == '.');
  CHECK(m.find(expected_words) != std::string::npos);
}

void SorterDeleter::operator()(Sorter* s) const {
  destroySorter(s);
  CHECK(g_uncompiled_live == 0);
}

SorterPtr fakeSorter(const FakeLimits& limits, const TuningConfig* tuning, Pipelines pipelines) {
  g_fake = limits;
  SorterCreateInfo info = context().createInfo<SorterCreateInfo>();
  info.binding.get_instance_proc_addr = fakeGetInstanceProcAddr;
  if (pipelines == Pipelines::kUncompiled) info.binding.get_device_proc_addr = uncompiledGetDeviceProcAddr;
  info.tuning = tuning;
  Sorter* s = nullptr;
  std::string why;
  const VkResult result = createSorter(info, &s, &why);
  g_fake = {};
  REQUIRE_MESSAGE(result == VK_SUCCESS, why);
  return SorterPtr(s);
}

TuningConfig withDigits(uint32_t digit_bits) {
  TuningConfig tuning = getSorterProperties(context().sorter()).tuning;
  tuning.digit_bits = digit_bits;
  tuning.lookback_max_count = std::min(tuning.lookback_max_count, 1u << 20);
  return tuning;
}

void prepare(Context& ctx, const Sorter* sorter, Job& job) {
  const uint32_t n = static_cast<uint32_t>(job.input.size());
  const MemoryRequirements req = getMemoryRequirements(sorter, n, job.pairs);
  const VkDeviceSize bytes = VkDeviceSize{n} * 4;
  std::string error;
  auto make = [&](GpuBuffer* b, VkDeviceSize size, uint32_t fill, VkBufferUsageFlags usage = 0) {
    REQUIRE_MESSAGE(ctx.createBuffer(size + kCanaryWords * 4, usage ? usage : req.usage, true, b, &error), error);
    auto* words = static_cast<uint32_t*>(b->mapped);
    std::fill(words, words + size / 4, fill);
    std::fill(words + size / 4, words + size / 4 + kCanaryWords, kCanary);
  };
  make(&job.keys, bytes, 0);
  std::memcpy(job.keys.mapped, job.input.data(), bytes);
  make(&job.keys_temp, bytes, kPoison);
  make(&job.internal, req.internal_size, kPoison, req.internal_usage);
  if (job.pairs) {
    make(&job.values, bytes, 0);
    auto* values = static_cast<uint32_t*>(job.values.mapped);
    std::iota(values, values + n, 0u);
    make(&job.values_temp, bytes, kPoison);
  }
  job.info.count = n;
  job.info.keys = {job.keys.buffer, 0, bytes};
  job.info.keys_temp = {job.keys_temp.buffer, 0, bytes};
  if (job.pairs) {
    job.info.values = {job.values.buffer, 0, bytes};
    job.info.values_temp = {job.values_temp.buffer, 0, bytes};
  }
  job.info.internal = {job.internal.buffer, 0, req.internal_size};
  job.info.begin_bit = job.options.begin_bit;
  job.info.end_bit = job.options.end_bit;
  job.info.descending = job.options.descending;
  if (job.options.gpu_count) {
    make(&job.count, 4, job.options.gpu_count_value);
    job.info.expected_count = job.options.expected_count;
  }
  REQUIRE(validateSortInfo(sorter, job.info) == nullptr);
}

namespace {

uint32_t field(uint32_t key, const SortOptions& o) {
  const uint32_t bits = o.end_bit - o.begin_bit;
  return bits >= 32 ? key : (key >> o.begin_bit) & ((1u << bits) - 1);
}

// The stable order of `input` under `o`.
std::vector<uint32_t> stableOrder(const std::vector<uint32_t>& input, const SortOptions& o) {
  std::vector<uint32_t> order(input.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return o.descending ? field(input[a], o) > field(input[b], o) : field(input[a], o) < field(input[b], o);
  });
  return order;
}

}  // namespace

std::string compare(const std::vector<uint32_t>& input, const uint32_t* keys, const uint32_t* values,
                    const SortOptions& o) {
  const std::vector<uint32_t> order = stableOrder(input, o);
  for (size_t i = 0; i < input.size(); ++i) {
    if (keys[i] != input[order[i]] || (values && values[i] != order[i]))
      return "mismatch at " + std::to_string(i) + " of " + std::to_string(input.size());
  }
  return {};
}

void toHost(VkCommandBuffer cmd) {
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                       nullptr, 0, nullptr);
}

void runJob(Context& ctx, const Sorter* sorter, Job& job) {
  prepare(ctx, sorter, job);
  std::string error;
  REQUIRE_MESSAGE(ctx.submit(
                      [&](VkCommandBuffer cmd) {
                        job.result = job.options.gpu_count
                                         ? cmdSortIndirect(sorter, cmd, job.info, {job.count.buffer, 0, 4})
                                         : cmdSort(sorter, cmd, job.info);
                        toHost(cmd);
                      },
                      &error),
                  error);
}

void checkSortWith(Context& ctx, const Sorter* sorter, const std::vector<uint32_t>& input, bool pairs,
                   const SortOptions& options) {
  INFO("count " << input.size() << std::string(pairs ? ", pairs" : ", keys"));
  Job job;
  job.input = input;
  job.pairs = pairs;
  job.options = options;
  runJob(ctx, sorter, job);
  const GpuBuffer& keys = job.result.in_temp ? job.keys_temp : job.keys;
  const GpuBuffer& values = job.result.in_temp ? job.values_temp : job.values;
  // A GPU-side count sorts its first keys (clamped to the count), the rest left as they were.
  const size_t sorted = options.gpu_count ? std::min<size_t>(options.gpu_count_value, input.size()) : input.size();
  const std::vector<uint32_t> sorted_input(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(sorted));
  const std::string mismatch = compare(sorted_input, static_cast<const uint32_t*>(keys.mapped),
                                       pairs ? static_cast<const uint32_t*>(values.mapped) : nullptr, job.options);
  CHECK_MESSAGE(mismatch.empty(), mismatch);
  const VkDeviceSize bytes = VkDeviceSize{job.input.size()} * 4;
  CHECK(canariesIntact(job.keys, bytes));
  CHECK(canariesIntact(job.keys_temp, bytes));
  CHECK(canariesIntact(job.internal, job.info.internal.size));
  if (pairs) {
    CHECK(canariesIntact(job.values, bytes));
    CHECK(canariesIntact(job.values_temp, bytes));
  }
  if (options.gpu_count) CHECK(canariesIntact(job.count, 4));
  for (GpuBuffer* b : {&job.keys, &job.keys_temp, &job.values, &job.values_temp, &job.internal, &job.count})
    if (b->buffer) ctx.destroyBuffer(b);
}

}  // namespace vren::radix::test
