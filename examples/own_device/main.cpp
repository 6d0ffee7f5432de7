// vren_radix in an application that owns its Vulkan objects: the application loads Vulkan with
// volk, creates its instance, device and buffers, and hands the sorter its entry points; the
// sorter only records into the application's command buffer.
#include <volk.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "vren_radix/vren_radix.h"

namespace {

#define CHECK_VK(call)                                                        \
  do {                                                                        \
    const VkResult r_ = (call);                                               \
    if (r_ != VK_SUCCESS) {                                                   \
      std::fprintf(stderr, "%s failed: VkResult %d\n", #call, static_cast<int>(r_)); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
};

// Host-visible memory keeps the example short; a renderer would use device-local buffers.
VkResult createBuffer(VkPhysicalDevice gpu, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage,
                      Buffer* out) {
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = usage;
  VkResult r = vkCreateBuffer(device, &bi, nullptr, &out->buffer);
  if (r != VK_SUCCESS) return r;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, out->buffer, &req);
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(gpu, &props);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = 0;
  while (type < props.memoryTypeCount &&
         !((req.memoryTypeBits & (1u << type)) && (props.memoryTypes[type].propertyFlags & want) == want))
    ++type;
  if (type == props.memoryTypeCount) return VK_ERROR_FEATURE_NOT_PRESENT;
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  if ((r = vkAllocateMemory(device, &ai, nullptr, &out->memory)) != VK_SUCCESS) return r;
  if ((r = vkBindBufferMemory(device, out->buffer, out->memory, 0)) != VK_SUCCESS) return r;
  return vkMapMemory(device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped);
}

void destroyBuffer(VkDevice device, Buffer& b) {
  if (b.buffer) vkDestroyBuffer(device, b.buffer, nullptr);
  if (b.memory) vkFreeMemory(device, b.memory, nullptr);
}

}  // namespace

int main() {
  // 1. The application's own instance and device, with the one feature the sorter needs.
  CHECK_VK(volkInitialize());
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  CHECK_VK(vkCreateInstance(&ici, nullptr, &instance));
  volkLoadInstance(instance);
  uint32_t count = 1;
  VkPhysicalDevice gpu = VK_NULL_HANDLE;
  const VkResult enumerated = vkEnumeratePhysicalDevices(instance, &count, &gpu);
  if ((enumerated != VK_SUCCESS && enumerated != VK_INCOMPLETE) || count == 0) {
    std::fprintf(stderr, "no Vulkan device\n");
    return 1;
  }
  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(gpu, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(gpu, &family_count, families.data());
  uint32_t family = 0;
  while (family < family_count && !(families[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkPhysicalDeviceVulkan12Features vk12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  vk12.bufferDeviceAddress = VK_TRUE;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &vk12};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  VkDevice device = VK_NULL_HANDLE;
  CHECK_VK(vkCreateDevice(gpu, &dci, nullptr, &device));
  volkLoadDevice(device);
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(device, family, 0, &queue);

  // 2. The sorter gets the application's entry points (here volk's), nothing global.
  vren::radix::SorterCreateInfo sci;
  sci.binding.instance = instance;
  sci.binding.physical_device = gpu;
  sci.binding.device = device;
  sci.binding.get_instance_proc_addr = vkGetInstanceProcAddr;
  sci.binding.get_device_proc_addr = vkGetDeviceProcAddr;
  vren::radix::Sorter* sorter = nullptr;
  std::string why;
  CHECK_VK(vren::radix::createSorter(sci, &sorter, &why));

  // 3. Buffers for up to n pairs.
  const uint32_t n = 100000;
  const auto req = vren::radix::getMemoryRequirements(sorter, n, /*with_values=*/true);
  Buffer keys, keys_temp, values, values_temp, internal;
  CHECK_VK(createBuffer(gpu, device, VkDeviceSize{n} * 4, req.usage, &keys));
  CHECK_VK(createBuffer(gpu, device, req.keys_temp_size, req.usage, &keys_temp));
  CHECK_VK(createBuffer(gpu, device, VkDeviceSize{n} * 4, req.usage, &values));
  CHECK_VK(createBuffer(gpu, device, req.values_temp_size, req.usage, &values_temp));
  CHECK_VK(createBuffer(gpu, device, req.internal_size, req.internal_usage, &internal));
  std::vector<uint32_t> input(n);
  std::mt19937 rng(42);
  for (auto& k : input) k = rng() % 1000;  // many equal keys: stability matters
  std::memcpy(keys.mapped, input.data(), VkDeviceSize{n} * 4);

  // 4. Record into the application's command buffer: the sort, then a barrier to the host.
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.queueFamilyIndex = family;
  VkCommandPool pool = VK_NULL_HANDLE;
  CHECK_VK(vkCreateCommandPool(device, &pci, nullptr, &pool));
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  CHECK_VK(vkAllocateCommandBuffers(device, &cai, &cmd));
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  CHECK_VK(vkBeginCommandBuffer(cmd, &begin));
  vren::radix::SortInfo info;
  info.count = n;
  info.keys = {keys.buffer, 0, VkDeviceSize{n} * 4};
  info.keys_temp = {keys_temp.buffer, 0, req.keys_temp_size};
  info.internal = {internal.buffer, 0, req.internal_size};
  info.values = {values.buffer, 0, VkDeviceSize{n} * 4};
  info.values_temp = {values_temp.buffer, 0, req.values_temp_size};
  info.end_bit = 10;    // keys < 1000 need 10 bits: 3 passes, so the result is in the temps
  info.argsort = true;  // values become the input index of each sorted key
  if (const char* problem = vren::radix::validateSortInfo(sorter, info)) {
    std::fprintf(stderr, "%s\n", problem);
    return 1;
  }
  const vren::radix::SortResult result = vren::radix::cmdSort(sorter, cmd, info);
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                       nullptr, 0, nullptr);
  CHECK_VK(vkEndCommandBuffer(cmd));
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  CHECK_VK(vkQueueSubmit(queue, 1, &submit, VK_NULL_HANDLE));
  CHECK_VK(vkQueueWaitIdle(queue));

  // 5. Check: the permutation sorts the input stably.
  const auto* sorted = static_cast<const uint32_t*>(result.in_temp ? keys_temp.mapped : keys.mapped);
  const auto* order = static_cast<const uint32_t*>(result.in_temp ? values_temp.mapped : values.mapped);
  bool ok = true;
  for (uint32_t i = 0; i < n && ok; ++i) {
    ok = order[i] < n && sorted[i] == input[order[i]];
    if (i > 0) ok = ok && (sorted[i - 1] < sorted[i] || (sorted[i - 1] == sorted[i] && order[i - 1] < order[i]));
  }
  std::printf("%s: %u keys sorted stably in %u passes; the result is in the %s buffers\n", ok ? "ok" : "MISMATCH", n,
              result.passes, result.in_temp ? "temp" : "caller's");

  vkDestroyCommandPool(device, pool, nullptr);
  for (Buffer* b : {&keys, &keys_temp, &values, &values_temp, &internal}) destroyBuffer(device, *b);
  vren::radix::destroySorter(sorter);
  vkDestroyDevice(device, nullptr);
  vkDestroyInstance(instance, nullptr);
  return ok ? 0 : 1;
}
