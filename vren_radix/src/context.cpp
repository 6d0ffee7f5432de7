#include "vren_radix/context.h"

#include <volk.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace vren::radix {
namespace {

std::string resultText(VkResult r) {
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "out of host memory";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "out of device memory";
    case VK_ERROR_DEVICE_LOST: return "the device was lost";
    case VK_ERROR_INITIALIZATION_FAILED: return "initialization failed";
    case VK_ERROR_LAYER_NOT_PRESENT: return "a requested layer is not installed";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "a requested extension is missing";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "a required feature is missing";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "no compatible Vulkan driver";
    default: return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

bool check(VkResult r, const char* what, std::string* error) {
  if (r == VK_SUCCESS) return true;
  if (error) *error = std::string(what) + " failed: " + resultText(r) + ".";
  return false;
}

std::once_flag g_volk_once;
// volkLoadInstance writes process-wide function pointers: one context is made at a time.
std::mutex g_create_mutex;
VkResult g_volk_result = VK_ERROR_INITIALIZATION_FAILED;

bool initLoader(std::string* error) {
  std::call_once(g_volk_once, [] { g_volk_result = volkInitialize(); });
  if (g_volk_result == VK_SUCCESS) return true;
  if (error)
    *error = "No Vulkan loader found (libvulkan.so.1): install libvulkan1 and a driver, e.g. mesa-vulkan-drivers.";
  return false;
}

const char* typeName(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

int typeRank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

bool hasLayer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  return std::any_of(layers.begin(), layers.end(), [&](const auto& l) { return std::strcmp(l.layerName, name) == 0; });
}

bool listsExtension(const std::vector<VkExtensionProperties>& ext, const char* name) {
  return std::any_of(ext.begin(), ext.end(), [&](const auto& e) { return std::strcmp(e.extensionName, name) == 0; });
}

bool hasInstanceExtension(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> ext(n);
  vkEnumerateInstanceExtensionProperties(nullptr, &n, ext.data());
  return listsExtension(ext, name);
}

[[maybe_unused]] bool hasDeviceExtension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> ext(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, ext.data());
  return listsExtension(ext, name);
}

DeviceInfo describe(VkPhysicalDevice pd, uint32_t index) {
  VkPhysicalDeviceSubgroupSizeControlProperties size_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties vk11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 p{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  vkGetPhysicalDeviceProperties2(pd, &p);
  const uint32_t api = p.properties.apiVersion;
  if (api >= VK_API_VERSION_1_2) {
    p.pNext = &vk11;
    vk11.pNext = &driver;
    if (api >= VK_API_VERSION_1_3) driver.pNext = &size_control;
    vkGetPhysicalDeviceProperties2(pd, &p);
  }
  DeviceInfo d;
  d.index = index;
  d.name = p.properties.deviceName;
  d.type = typeName(p.properties.deviceType);
  d.driver = api >= VK_API_VERSION_1_2 ? std::string(driver.driverName) + " " + driver.driverInfo
                                       : std::to_string(p.properties.driverVersion);
  d.api_version = api;
  d.subgroup_size = vk11.subgroupSize;
  d.min_subgroup_size = api >= VK_API_VERSION_1_3 ? size_control.minSubgroupSize : vk11.subgroupSize;
  d.max_subgroup_size = api >= VK_API_VERSION_1_3 ? size_control.maxSubgroupSize : vk11.subgroupSize;
  d.subgroup_arithmetic = (vk11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                          (vk11.subgroupSupportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  d.max_shared_memory = p.properties.limits.maxComputeSharedMemorySize;
  d.max_storage_buffer_range = p.properties.limits.maxStorageBufferRange;
  d.max_allocation_size = vk11.maxMemoryAllocationSize;
  d.max_workgroup_count_x = p.properties.limits.maxComputeWorkGroupCount[0];
  d.timestamp_period_ns = p.properties.limits.timestampPeriod;
  return d;
}

VKAPI_ATTR VkBool32 VKAPI_CALL onDebugMessage(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* sink = static_cast<std::function<void(const std::string&)>*>(user);
  if (*sink) (*sink)(data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
};

}  // namespace

struct Context::Impl {
  ContextOptions options;
  std::function<void(const std::string&)> sink;  // lives as long as the messenger
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VolkDeviceTable vk{};
  uint32_t queue_family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  uint32_t query_capacity = 0;
  bool timestamps = false;
  bool size_control = false;
  DeviceInfo info;
  VkPhysicalDeviceMemoryProperties memory{};
  Sorter* sorter = nullptr;
  // Device buffers, grown on demand: keys, keys_temp, values, values_temp, internal and a
  // host-visible staging buffer; the segment offsets and top-k's results (segmented sorts and
  // top-k only).
  Buffer keys, keys_temp, values, values_temp, internal, staging, gpu_count;
  Buffer offsets, out_keys, out_values;
  uint32_t capacity = 0;            // elements
  uint32_t capacity_key_words = 0;  // 32-bit words of keys
  bool capacity_values = false;

  ~Impl() {
    if (device) {
      vk.vkDeviceWaitIdle(device);
      freeBuffers();
      destroySorter(sorter);
      if (queries) vk.vkDestroyQueryPool(device, queries, nullptr);
      if (fence) vk.vkDestroyFence(device, fence, nullptr);
      if (pool) vk.vkDestroyCommandPool(device, pool, nullptr);
      vk.vkDestroyDevice(device, nullptr);
    }
    if (messenger) vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
    if (instance) vkDestroyInstance(instance, nullptr);
  }

  void freeBuffer(Buffer& b) {
    if (b.mapped) vk.vkUnmapMemory(device, b.memory);
    if (b.buffer) vk.vkDestroyBuffer(device, b.buffer, nullptr);
    if (b.memory) vk.vkFreeMemory(device, b.memory, nullptr);
    b = {};
  }

  void freeBuffers() {
    for (Buffer* b : {&keys, &keys_temp, &values, &values_temp, &internal, &staging, &gpu_count, &offsets, &out_keys,
                      &out_values})
      freeBuffer(*b);
    capacity = 0;
    capacity_key_words = 0;
    capacity_values = false;
  }

  bool createInstance(std::string* error) {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vren_radix";
    app.apiVersion = volkGetInstanceVersion() >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
    std::vector<const char*> layers, extensions;
    const bool debug_utils = hasInstanceExtension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (debug_utils) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (options.validation) {
      if (!hasLayer("VK_LAYER_KHRONOS_validation")) {
        if (error) *error = "Validation was asked for but VK_LAYER_KHRONOS_validation is not installed (Debian: vulkan-validationlayers).";
        return false;
      }
      layers.push_back("VK_LAYER_KHRONOS_validation");
    }
    VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync;

    VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger_info.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    messenger_info.pfnUserCallback = onDebugMessage;
    messenger_info.pUserData = &sink;

    VkInstanceCreateInfo instance_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    instance_info.pApplicationInfo = &app;
    instance_info.enabledLayerCount = static_cast<uint32_t>(layers.size());
    instance_info.ppEnabledLayerNames = layers.data();
    instance_info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    instance_info.ppEnabledExtensionNames = extensions.data();
    // Chain: instance <- messenger (reports creation-time messages) <- validation features.
    const void** tail = &instance_info.pNext;
    if (debug_utils && sink) {
      *tail = &messenger_info;
      tail = const_cast<const void**>(&messenger_info.pNext);
    }
    if (options.validation && options.synchronization_validation) *tail = &features;
    if (!check(vkCreateInstance(&instance_info, nullptr, &instance), "Creating the Vulkan instance", error)) return false;
    volkLoadInstance(instance);  // device-level globals go through the loader: usable by callers
    if (debug_utils && sink) {
      messenger_info.pNext = nullptr;  // the persistent messenger takes no validation features
      if (!check(vkCreateDebugUtilsMessengerEXT(instance, &messenger_info, nullptr, &messenger),
                 "Creating the debug messenger", error))
        return false;
    }
    return true;
  }

  bool pickDevice(std::string* error) {
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> devices(n);
    vkEnumeratePhysicalDevices(instance, &n, devices.data());
    if (n == 0) {
      if (error) *error = "No Vulkan device found: install a driver (e.g. mesa-vulkan-drivers for lavapipe).";
      return false;
    }
    if (options.device_index >= 0) {
      if (static_cast<uint32_t>(options.device_index) >= n) {
        if (error)
          *error = "Device " + std::to_string(options.device_index) + " does not exist; there are " + std::to_string(n) +
                   " (see `vren-radix info`).";
        return false;
      }
      physical = devices[options.device_index];
      info = describe(physical, options.device_index);
      return true;
    }
    int best_rank = 99;
    for (uint32_t i = 0; i < n; ++i) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(devices[i], &p);
      if (p.apiVersion < VK_API_VERSION_1_2) continue;
      if (typeRank(p.deviceType) < best_rank) {
        best_rank = typeRank(p.deviceType);
        physical = devices[i];
        info = describe(physical, i);
      }
    }
    if (!physical) {
      if (error) *error = "No Vulkan 1.2 device found; vren_radix needs Vulkan 1.2.";
      return false;
    }
    return true;
  }

  bool createDevice(std::string* error) {
    if (info.api_version < VK_API_VERSION_1_2) {
      if (error) *error = "Device '" + info.name + "' supports only Vulkan 1.1; vren_radix needs Vulkan 1.2.";
      return false;
    }
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, nullptr);
    std::vector<VkQueueFamilyProperties> families(n);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, families.data());
    bool found = false;
    for (uint32_t i = 0; i < n && !found; ++i) {
      if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        queue_family = i;
        timestamps = families[i].timestampValidBits > 0;
        found = true;
      }
    }
    if (!found) {
      if (error) *error = "Device '" + info.name + "' has no compute queue.";
      return false;
    }

    VkPhysicalDeviceVulkan13Features supported13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features supported12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &supported12};
    const bool vk13 = info.api_version >= VK_API_VERSION_1_3 && volkGetInstanceVersion() >= VK_API_VERSION_1_3;
    if (vk13) supported12.pNext = &supported13;
    vkGetPhysicalDeviceFeatures2(physical, &supported);
    if (!supported12.bufferDeviceAddress) {
      if (error) *error = "Device '" + info.name + "' lacks the bufferDeviceAddress feature that vren_radix needs.";
      return false;
    }
    VkPhysicalDeviceVulkan13Features enable13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features enable12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    enable12.bufferDeviceAddress = VK_TRUE;
    size_control = vk13 && supported13.subgroupSizeControl && supported13.computeFullSubgroups;
    if (size_control) {
      enable13.subgroupSizeControl = VK_TRUE;
      enable13.computeFullSubgroups = VK_TRUE;
      enable12.pNext = &enable13;
    }
    VkPhysicalDeviceFeatures2 enable{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &enable12};
#ifdef VREN_RADIX_SHADER_CLOCKS
    // A profiling build's onesweep pass reads the subgroup's clock.
    const char* const clock_extension = VK_KHR_SHADER_CLOCK_EXTENSION_NAME;
    VkPhysicalDeviceShaderClockFeaturesKHR clock{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
    if (hasDeviceExtension(physical, clock_extension)) {
      VkPhysicalDeviceFeatures2 clock_query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &clock};
      vkGetPhysicalDeviceFeatures2(physical, &clock_query);
    }
    if (!clock.shaderSubgroupClock) {
      if (error)
        *error = "Device '" + info.name + "' lacks VK_KHR_shader_clock's shaderSubgroupClock, which this build "
                 "(VREN_RADIX_SHADER_CLOCKS) needs; build without it.";
      return false;
    }
    clock.pNext = enable12.pNext;
    enable12.pNext = &clock;
#endif

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = queue_family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &enable};
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
#ifdef VREN_RADIX_SHADER_CLOCKS
    device_info.enabledExtensionCount = 1;
    device_info.ppEnabledExtensionNames = &clock_extension;
#endif
    if (!check(vkCreateDevice(physical, &device_info, nullptr, &device), "Creating the Vulkan device", error))
      return false;
    volkLoadDeviceTable(&vk, device);
    vk.vkGetDeviceQueue(device, queue_family, 0, &queue);
    vkGetPhysicalDeviceMemoryProperties(physical, &memory);

    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = queue_family;
    if (!check(vk.vkCreateCommandPool(device, &pool_info, nullptr, &pool), "Creating a command pool", error))
      return false;
    VkCommandBufferAllocateInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cmd_info.commandPool = pool;
    cmd_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cmd_info.commandBufferCount = 1;
    if (!check(vk.vkAllocateCommandBuffers(device, &cmd_info, &cmd), "Allocating a command buffer", error))
      return false;
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (!check(vk.vkCreateFence(device, &fence_info, nullptr, &fence), "Creating a fence", error)) return false;

    SorterCreateInfo sci;
    sci.binding.instance = instance;
    sci.binding.physical_device = physical;
    sci.binding.device = device;
    sci.binding.get_instance_proc_addr = vkGetInstanceProcAddr;
    sci.binding.get_device_proc_addr = vkGetDeviceProcAddr;
    sci.binding.subgroup_size_control_enabled = size_control;
    sci.binding.required_subgroup_size = options.required_subgroup_size;
    sci.tuning = options.tuning;
    std::string why;
    VkResult r = createSorter(sci, &sorter, &why);
    if (r != VK_SUCCESS) {
      if (error) *error = "Device '" + info.name + "': " + why;
      return false;
    }
    info.subgroup_size = getSorterProperties(sorter).subgroup_size;
    return true;
  }

  bool ensureQueries(uint32_t count, std::string* error) {
    if (!timestamps || count <= query_capacity) return true;
    if (queries) vk.vkDestroyQueryPool(device, queries, nullptr);
    queries = VK_NULL_HANDLE;
    query_capacity = 0;
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = count;
    if (!check(vk.vkCreateQueryPool(device, &qi, nullptr, &queries), "Creating a timestamp query pool", error))
      return false;
    query_capacity = count;
    return true;
  }

  bool allocate(Buffer& b, VkDeviceSize size, VkBufferUsageFlags usage, bool host, std::string* error) {
    b.size = size;
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = size;
    bi.usage = usage;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (!check(vk.vkCreateBuffer(device, &bi, nullptr, &b.buffer), "Creating a buffer", error)) return false;
    VkMemoryRequirements req;
    vk.vkGetBufferMemoryRequirements(device, b.buffer, &req);
    const VkMemoryPropertyFlags want = host ? (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
                                            : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < memory.memoryTypeCount && type == UINT32_MAX; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & want) == want) type = i;
    if (type == UINT32_MAX) {
      if (error) *error = "No suitable memory type for a buffer.";
      return false;
    }
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.pNext = (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) ? &flags : nullptr;
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    if (!check(vk.vkAllocateMemory(device, &ai, nullptr, &b.memory), "Allocating buffer memory", error))
      return false;
    if (!check(vk.vkBindBufferMemory(device, b.buffer, b.memory, 0), "Binding buffer memory", error)) return false;
    if (host && !check(vk.vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "Mapping memory", error))
      return false;
    return true;
  }

  // internal_bytes: the least internal buffer this call needs, if more than a sort of `count`
  // keys of key_type (segmented sorts and top-k need more).
  bool ensureCapacity(uint32_t count, uint32_t words_per_key, bool with_values, KeyType key_type,
                      VkDeviceSize internal_bytes, std::string* error) {
    const uint64_t key_words = uint64_t{count} * words_per_key;
    internal_bytes = std::max(internal_bytes, getMemoryRequirements(sorter, count, with_values, key_type).internal_size);
    if (keys.buffer && count <= capacity && key_words <= capacity_key_words && (!with_values || capacity_values) &&
        internal_bytes <= internal.size)
      return true;
    vk.vkDeviceWaitIdle(device);
    const uint32_t want = std::max(count, capacity);
    const uint32_t want_key_words = static_cast<uint32_t>(std::max<uint64_t>(key_words, capacity_key_words));
    const bool want_values = with_values || capacity_values;
    const VkDeviceSize want_internal = std::max(internal_bytes, internal.size);
    freeBuffers();
    const MemoryRequirements req = getMemoryRequirements(sorter, want, want_values, key_type);
    const VkBufferUsageFlags extra = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    const VkDeviceSize key_bytes = VkDeviceSize{std::max(1u, want_key_words)} * 4;
    const VkDeviceSize value_bytes = VkDeviceSize{std::max(1u, want)} * 4;
    bool ok = allocate(keys, key_bytes, req.usage | extra, false, error) &&
              allocate(keys_temp, key_bytes, req.usage | extra, false, error) &&
              allocate(internal, std::max(req.internal_size, want_internal), req.internal_usage | extra, false,
                       error) &&
              allocate(gpu_count, 16, req.usage | extra, false, error) &&
              allocate(staging, key_bytes + value_bytes, extra, true, error);
    if (ok && want_values)
      ok = allocate(values, value_bytes, req.usage | extra, false, error) &&
           allocate(values_temp, value_bytes, req.usage | extra, false, error);
    if (!ok) {
      freeBuffers();
      if (error)
        *error += " Sorting " + std::to_string(count) + " elements needs about " +
                  std::to_string((2 * key_bytes + (want_values ? 2 * value_bytes : 0)) >> 20) +
                  " MiB of device memory; try fewer.";
      return false;
    }
    capacity = want;
    capacity_key_words = want_key_words;
    capacity_values = want_values;
    return true;
  }

  // Grows one buffer of its own (staging, offsets, top-k's results) to at least `bytes`.
  bool ensureBuffer(Buffer& b, VkDeviceSize bytes, bool host, std::string* error) {
    if (b.buffer && bytes <= b.size) return true;
    freeBuffer(b);
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                     (host ? 0 : getMemoryRequirements(sorter, 1, false).usage);
    if (allocate(b, std::max<VkDeviceSize>(bytes, 4), usage, host, error)) return true;
    freeBuffer(b);
    return false;
  }

  void copy(VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset, VkDeviceSize bytes) {
    copyInto(cmd, src, src_offset, dst, dst_offset, bytes);
  }
  void copyInto(VkCommandBuffer into, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset,
                VkDeviceSize bytes) const {
    if (bytes == 0) return;
    const VkBufferCopy region{src_offset, dst_offset, bytes};
    vk.vkCmdCopyBuffer(into, src, dst, 1, &region);
  }

  void barrier(VkPipelineStageFlags src_stage, VkAccessFlags src, VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
    barrierInto(cmd, src_stage, src, dst_stage, dst);
  }
  void barrierInto(VkCommandBuffer into, VkPipelineStageFlags src_stage, VkAccessFlags src,
                   VkPipelineStageFlags dst_stage, VkAccessFlags dst) const {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = src;
    b.dstAccessMask = dst;
    vk.vkCmdPipelineBarrier(into, src_stage, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
  }

  bool begin(std::string* error) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    return check(vk.vkResetCommandBuffer(cmd, 0), "Resetting the command buffer", error) &&
           check(vk.vkBeginCommandBuffer(cmd, &bi), "Beginning the command buffer", error);
  }

  bool submitAndWait(std::string* error) {
    if (!check(vk.vkEndCommandBuffer(cmd), "Recording the command buffer", error)) return false;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    if (!check(vk.vkResetFences(device, 1, &fence), "Resetting a fence", error)) return false;
    if (!check(vk.vkQueueSubmit(queue, 1, &si, fence), "Submitting the sort", error)) return false;
    return check(vk.vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX), "Waiting for the sort", error);
  }

  // *gpu_ms from timestamps 0 and 1 of the last submission; -1 without timestamps.
  bool readTimestamps(double* gpu_ms, std::string* error) {
    if (gpu_ms) *gpu_ms = -1;
    if (!timestamps) return true;
    uint64_t ticks[2] = {};
    if (!check(vk.vkGetQueryPoolResults(device, queries, 0, 2, sizeof(ticks), ticks, 8,
                                        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
               "Reading timestamps", error))
      return false;
    if (gpu_ms) *gpu_ms = ticksToMs(ticks[0], ticks[1]);
    return true;
  }

  // Host data for the start of a device buffer: staged, or with `update` (a few bytes) recorded
  // by vkCmdUpdateBuffer.
  struct Upload {
    VkBuffer buffer;
    VkDeviceSize bytes;
    const void* data;  // may be null when bytes is 0
    bool update = false;
  };

  // One submission: the uploads, a barrier, `record`, a barrier, then the first key_bytes and
  // value_bytes of the two buffers `record` returns (keys, values) back into staging, the values
  // after the keys. With timestamps, queries 0 and 1 are reset before `record`, which writes
  // them (itself or through the sorter), and read into *gpu_ms.
  bool roundTrip(std::initializer_list<Upload> uploads, VkDeviceSize key_bytes, VkDeviceSize value_bytes,
                 const std::function<std::pair<VkBuffer, VkBuffer>()>& record, double* gpu_ms, std::string* error) {
    VkDeviceSize staged_bytes = 0;
    for (const Upload& u : uploads) staged_bytes += u.update ? 0 : u.bytes;
    if (!ensureBuffer(staging, std::max(staged_bytes, key_bytes + value_bytes), true, error)) return false;
    if (timestamps && !ensureQueries(2, error)) return false;
    if (!begin(error)) return false;
    if (timestamps) vk.vkCmdResetQueryPool(cmd, queries, 0, 2);
    VkDeviceSize at = 0;
    for (const Upload& u : uploads) {
      if (u.bytes == 0) continue;  // an empty span's data() may be null
      if (u.update) {
        vk.vkCmdUpdateBuffer(cmd, u.buffer, 0, u.bytes, u.data);
        continue;
      }
      std::memcpy(static_cast<char*>(staging.mapped) + at, u.data, u.bytes);
      copy(staging.buffer, at, u.buffer, 0, u.bytes);
      at += u.bytes;
    }
    barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT);
    const auto [result_keys, result_values] = record();
    barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    copy(result_keys, 0, staging.buffer, 0, key_bytes);
    copy(result_values, 0, staging.buffer, key_bytes, value_bytes);
    barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    return submitAndWait(error) && readTimestamps(gpu_ms, error);
  }

  // What one sort uses of the buffers.
  struct Shape {
    uint32_t count;
    VkDeviceSize key_bytes;
    VkDeviceSize value_bytes;          // 0 without values
    VkDeviceSize offset_bytes = 0;     // segment offsets: 0 without
    VkDeviceSize out_key_bytes = 0;    // top-k's results: 0 for sorts
    VkDeviceSize out_value_bytes = 0;
  };

  SortInfo sortInfo(const Shape& shape, const SortOptions& o) const {
    SortInfo si = sortInfoFor(o, shape.count);
    si.keys = {keys.buffer, 0, shape.key_bytes};
    si.keys_temp = {keys_temp.buffer, 0, shape.key_bytes};
    if (shape.value_bytes) {
      si.values = {values.buffer, 0, shape.value_bytes};
      si.values_temp = {values_temp.buffer, 0, shape.value_bytes};
    }
    si.internal = {internal.buffer, 0, internal.size};
    return si;
  }

  // The checks every sort makes of its input before touching the GPU: whole keys, one value per
  // key if any, a span for argsort's permutation (argsort_span), the device's limit. *count
  // receives the number of keys.
  bool checkInput(size_t key_words, size_t value_count, const SortOptions& o, bool argsort_span, uint32_t* count,
                  std::string* error) const;

  // What a segmented sort or top-k leaves in staging: the results.
  struct SegmentedResult {
    const uint32_t* keys = nullptr;    // the sorted keys, or top-k's segments * k slots
    const uint32_t* values = nullptr;  // the same for values, with values or argsort
    uint32_t count = 0;                // elements
    uint32_t segments = 0;             // 1 for top-k of the whole input
    uint32_t k = 0;                    // top-k: the slots per segment the GPU was given
    SortResult sort{};                 // segmented sorts: where the result was on the GPU
    double gpu_ms = -1;
  };

  // A segmented sort, or with top_k top-k (offsets empty: of the whole input), in one
  // submission: uploads keys, values (unless argsort) and offsets, records, and reads the results
  // back into staging. with_values: a values buffer is used (value_span may then be empty, for
  // argsort).
  bool runSegmented(std::span<const uint32_t> key_words, std::span<const uint32_t> value_span, bool with_values,
                    std::span<const uint32_t> offset_span, const SortOptions& o, bool top_k, uint32_t k, bool largest,
                    SegmentedResult* result, std::string* error);

  // Uploads, sorts once and reads the result back.
  bool sortOnce(std::span<uint32_t> key_words, std::span<uint32_t> value_span, const SortOptions& o, SortStats* stats,
                std::string* error);

  double ticksToMs(uint64_t begin, uint64_t end) const {
    return static_cast<double>(end - begin) * info.timestamp_period_ns * 1e-6;
  }
};

std::vector<DeviceInfo> Context::listDevices(std::string* error) {
  std::lock_guard<std::mutex> lock(g_create_mutex);
  std::vector<DeviceInfo> out;
  if (!initLoader(error)) return out;
  Impl impl;
  if (!impl.createInstance(error)) return out;
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(impl.instance, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(impl.instance, &n, devices.data());
  for (uint32_t i = 0; i < n; ++i) out.push_back(describe(devices[i], i));
  return out;
}

std::unique_ptr<Context> Context::create(const ContextOptions& options, std::string* error) {
  std::lock_guard<std::mutex> lock(g_create_mutex);
  if (!initLoader(error)) return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->sink = options.on_message;
  if (!impl->createInstance(error) || !impl->pickDevice(error) || !impl->createDevice(error)) return nullptr;
  return std::unique_ptr<Context>(new Context(std::move(impl)));
}

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::~Context() = default;

const DeviceInfo& Context::device() const { return impl_->info; }
const Sorter* Context::sorter() const { return impl_->sorter; }
uint32_t Context::maxCount() const { return getSorterProperties(impl_->sorter).max_count; }

bool Context::checkInput(size_t key_words, size_t value_count, const SortOptions& options, bool argsort_needs_values,
                         uint32_t* count, std::string* error) const {
  return impl_->checkInput(key_words, value_count, options, argsort_needs_values, count, error);
}

bool Context::Impl::checkInput(size_t key_words, size_t value_count, const SortOptions& o, bool argsort_span,
                               uint32_t* count, std::string* error) const {
  const uint32_t words_per_key = o.key_type == KeyType::kU64 ? 2 : 1;
  if (key_words % words_per_key) {
    if (error) *error = "64-bit keys need an even number of 32-bit words.";
    return false;
  }
  const uint64_t n = key_words / words_per_key;
  if (value_count && value_count != n) {
    if (error)
      *error = "There are " + std::to_string(value_count) + " values for " + std::to_string(n) +
               " keys; give one value per key.";
    return false;
  }
  if (o.argsort && argsort_span && !value_count) {
    if (error) *error = "argsort needs a values span to receive the permutation.";
    return false;
  }
  const uint32_t max_count = getSorterProperties(sorter).max_count;
  if (n > max_count) {
    if (error)
      *error = std::to_string(n) + " keys exceed this device's limit of " + std::to_string(max_count) +
               " keys per sort.";
    return false;
  }
  *count = static_cast<uint32_t>(n);
  return true;
}

bool Context::Impl::sortOnce(std::span<uint32_t> key_words, std::span<uint32_t> value_span, const SortOptions& o,
                             SortStats* stats, std::string* error) {
  const uint32_t words_per_key = o.key_type == KeyType::kU64 ? 2 : 1;
  uint32_t n = 0;
  if (!checkInput(key_words.size(), value_span.size(), o, true, &n, error)) return false;
  const bool with_values = !value_span.empty();
  const Shape shape{n, VkDeviceSize{n} * 4 * words_per_key, with_values ? VkDeviceSize{n} * 4 : 0};
  if (!ensureCapacity(shape.count, words_per_key, with_values, o.key_type, 0, error)) return false;
  SortInfo si = sortInfo(shape, o);
  if (const char* why = validateSortInfo(sorter, si)) {
    if (error) *error = why;
    return false;
  }
  SortResult result{};
  double gpu_ms = -1;
  const bool done = roundTrip(
      {{keys.buffer, shape.key_bytes, key_words.data()},
       {values.buffer, shape.value_bytes, value_span.data()},
       {gpu_count.buffer, o.gpu_count ? 4u : 0u, &o.gpu_count_value, true}},
      shape.key_bytes, shape.value_bytes,
      [&] {
        if (timestamps) si.timestamp_pool = queries;  // made by roundTrip
        result = o.gpu_count ? cmdSortIndirect(sorter, cmd, si, {gpu_count.buffer, 0, 4}) : cmdSort(sorter, cmd, si);
        return std::pair{result.keys.buffer, result.values.buffer};
      },
      &gpu_ms, error);
  if (!done) return false;
  if (shape.key_bytes) std::memcpy(key_words.data(), staging.mapped, shape.key_bytes);
  if (shape.value_bytes)
    std::memcpy(value_span.data(), static_cast<char*>(staging.mapped) + shape.key_bytes, shape.value_bytes);
  if (stats) {
    stats->passes = result.passes;
    stats->result_in_temp = result.in_temp;
    stats->gpu_ms = gpu_ms;
  }
  return true;
}

bool Context::sort(std::span<uint32_t> keys, std::span<uint32_t> values, const SortOptions& options, SortStats* stats,
                   std::string* error) {
  return impl_->sortOnce(keys, values, options, stats, error);
}

bool Context::Impl::runSegmented(std::span<const uint32_t> key_words, std::span<const uint32_t> value_span,
                                 bool with_values, std::span<const uint32_t> offset_span, const SortOptions& o,
                                 bool top_k, uint32_t k, bool largest, SegmentedResult* result, std::string* error) {
  uint32_t n = 0;
  if (!checkInput(key_words.size(), value_span.size(), o, !top_k, &n, error)) return false;
  if (o.gpu_count) {
    if (error) *error = "Segmented sorts and top-k take their element count from the last offset; leave gpu_count off.";
    return false;
  }
  // cmdSortSegmented records nothing for an empty bit range, so argsort would leave no indices.
  if (o.argsort && o.begin_bit == o.end_bit) {
    if (error) *error = "argsort needs a non-empty bit range (begin_bit < end_bit).";
    return false;
  }
  const bool whole = top_k && offset_span.empty();
  if (!whole) {
    if (const char* why = validateSegmentOffsets(offset_span, n)) {
      if (error) *error = why;
      return false;
    }
  }
  // Past 2^32 - 1 segments the count saturates and validation refuses it.
  const uint32_t segments =
      whole ? 1 : static_cast<uint32_t>(std::min<size_t>(offset_span.size() - 1, UINT32_MAX));
  uint32_t longest = whole ? n : 0;
  for (size_t s = 1; !whole && s < offset_span.size(); ++s)
    longest = std::max(longest, offset_span[s] - offset_span[s - 1]);
  // No segment fills more than `longest` slots: a larger k only costs memory.
  const uint32_t slots_per_segment = top_k && k ? std::max(1u, std::min(k, longest)) : k;
  const uint64_t slots = uint64_t{segments} * slots_per_segment;
  if (slots >= (1u << 30)) {
    if (error)
      *error = "Top-k of " + std::to_string(segments) + " segments keeps up to " + std::to_string(slots_per_segment) +
               " results each, 2^30 or more in all; ask for a smaller k or fewer segments.";
    return false;
  }

  const uint32_t words_per_key = o.key_type == KeyType::kU64 ? 2 : 1;
  Shape shape{n, VkDeviceSize{n} * 4 * words_per_key, with_values ? VkDeviceSize{n} * 4 : 0};
  shape.offset_bytes = whole ? 0 : (VkDeviceSize{segments} + 1) * 4;
  shape.out_key_bytes = top_k ? slots * 4 * words_per_key : 0;
  shape.out_value_bytes = top_k && with_values ? slots * 4 : 0;
  const VkDeviceSize internal_bytes =
      top_k ? getTopKMemoryRequirements(sorter, n, segments, slots_per_segment, with_values, o.key_type).internal_size
            : getSegmentedMemoryRequirements(sorter, n, segments, with_values, o.key_type).internal_size;
  if (!ensureCapacity(n, words_per_key, with_values, o.key_type, internal_bytes, error) ||
      (shape.offset_bytes && !ensureBuffer(offsets, shape.offset_bytes, false, error)) ||
      (shape.out_key_bytes && !ensureBuffer(out_keys, shape.out_key_bytes, false, error)) ||
      (shape.out_value_bytes && !ensureBuffer(out_values, shape.out_value_bytes, false, error)))
    return false;

  SegmentedSortInfo segmented;
  segmented.sort = sortInfo(shape, o);
  if (!whole) {
    segmented.offsets = {offsets.buffer, 0, shape.offset_bytes};
    segmented.segment_count = segments;
    segmented.max_segment_length = longest;
  }
  TopKInfo top_k_info;
  if (top_k) {
    top_k_info.input = segmented;
    top_k_info.input.sort.keys_temp = {};
    top_k_info.input.sort.values_temp = {};
    top_k_info.k = slots_per_segment;
    top_k_info.largest = largest;
    top_k_info.out_keys = {out_keys.buffer, 0, shape.out_key_bytes};
    if (with_values) top_k_info.out_values = {out_values.buffer, 0, shape.out_value_bytes};
  }
  if (const char* why = top_k ? validateTopKInfo(sorter, top_k_info) : validateSegmentedSortInfo(sorter, segmented)) {
    if (error) *error = why;
    return false;
  }
  SortResult sorted{};
  const VkDeviceSize result_key_bytes = top_k ? shape.out_key_bytes : shape.key_bytes;
  const VkDeviceSize result_value_bytes = top_k ? shape.out_value_bytes : shape.value_bytes;
  const bool done = roundTrip(
      {{keys.buffer, shape.key_bytes, key_words.data()},
       {values.buffer, o.argsort ? 0 : shape.value_bytes, value_span.data()},
       {offsets.buffer, shape.offset_bytes, offset_span.data()}},
      result_key_bytes, result_value_bytes,
      [&] {
        if (timestamps) vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 0);
        if (top_k)
          cmdTopK(sorter, cmd, top_k_info);
        else
          sorted = cmdSortSegmented(sorter, cmd, segmented);
        if (timestamps) vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
        return top_k ? std::pair{out_keys.buffer, out_values.buffer} : std::pair{sorted.keys.buffer, sorted.values.buffer};
      },
      &result->gpu_ms, error);
  if (!done) return false;
  const char* const staged = static_cast<const char*>(staging.mapped);
  result->keys = reinterpret_cast<const uint32_t*>(staged);
  result->values = reinterpret_cast<const uint32_t*>(staged + result_key_bytes);
  result->count = n;
  result->segments = segments;
  result->k = slots_per_segment;
  result->sort = sorted;
  return true;
}

bool Context::sortSegmented(std::span<uint32_t> keys, std::span<uint32_t> values, std::span<const uint32_t> offsets,
                            const SortOptions& options, SortStats* stats, std::string* error) {
  Impl::SegmentedResult r;
  if (!impl_->runSegmented(keys, values, !values.empty(), offsets, options, false, 0, false, &r, error)) return false;
  if (!keys.empty()) std::memcpy(keys.data(), r.keys, keys.size_bytes());
  if (!values.empty()) std::memcpy(values.data(), r.values, values.size_bytes());
  if (stats) {
    stats->passes = r.sort.passes;
    stats->result_in_temp = r.sort.in_temp;
    stats->gpu_ms = r.gpu_ms;
  }
  return true;
}

bool Context::topK(std::span<const uint32_t> keys, std::span<const uint32_t> values, std::span<const uint32_t> offsets,
                   uint32_t k, bool largest, const SortOptions& options, std::vector<uint32_t>* out_keys,
                   std::vector<uint32_t>* out_values, std::string* error) {
  if (options.descending) {
    if (error) *error = "topK takes its order from `largest`; leave SortOptions::descending false.";
    return false;
  }
  SortOptions o = options;
  o.argsort = o.argsort && out_values;
  const bool with_values = out_values && (o.argsort || !values.empty());
  // argsort reads no values, and values nobody receives need not move.
  const std::span<const uint32_t> value_span = with_values && !o.argsort ? values : std::span<const uint32_t>{};
  Impl::SegmentedResult r;
  out_keys->clear();
  if (out_values) out_values->clear();
  if (!impl_->runSegmented(keys, value_span, with_values, offsets, o, true, k, largest, &r, error)) return false;

  // Segment s's results are at s * r.k.
  const uint32_t words_per_key = o.key_type == KeyType::kU64 ? 2 : 1;
  for (uint32_t s = 0; s < r.segments; ++s) {
    const uint32_t length = offsets.empty() ? r.count : offsets[s + 1] - offsets[s];
    const uint32_t kept = std::min(r.k, length);
    const uint32_t* segment_keys = r.keys + size_t{s} * r.k * words_per_key;
    out_keys->insert(out_keys->end(), segment_keys, segment_keys + size_t{kept} * words_per_key);
    if (!with_values) continue;
    const uint32_t* segment_values = r.values + size_t{s} * r.k;
    out_values->insert(out_values->end(), segment_values, segment_values + kept);
  }
  return true;
}

}  // namespace vren::radix

namespace vren::radix {

VkInstance Context::instance() const { return impl_->instance; }
VkPhysicalDevice Context::physicalDevice() const { return impl_->physical; }
VkDevice Context::vkDevice() const { return impl_->device; }
void Context::cmdBarrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src,
                         VkPipelineStageFlags dst_stage, VkAccessFlags dst) const {
  impl_->barrierInto(cmd, src_stage, src, dst_stage, dst);
}
void Context::cmdCopy(VkCommandBuffer cmd, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                      VkDeviceSize dst_offset, VkDeviceSize bytes) const {
  impl_->copyInto(cmd, src, src_offset, dst, dst_offset, bytes);
}
bool Context::subgroupSizeControlEnabled() const { return impl_->size_control; }
PFN_vkGetInstanceProcAddr Context::instanceProcAddr() const { return vkGetInstanceProcAddr; }
PFN_vkGetDeviceProcAddr Context::deviceProcAddr() const { return vkGetDeviceProcAddr; }

bool Context::createBuffer(VkDeviceSize size, VkBufferUsageFlags usage, bool host_visible, GpuBuffer* out,
                           std::string* error) {
  Buffer b;
  const VkBufferUsageFlags all = usage | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (!impl_->allocate(b, std::max<VkDeviceSize>(size, 4), all, host_visible, error)) {
    impl_->freeBuffer(b);
    return false;
  }
  *out = {b.buffer, b.memory, size, b.mapped};
  return true;
}

void Context::destroyBuffer(GpuBuffer* buffer) {
  Buffer b{buffer->buffer, buffer->memory, buffer->size, buffer->mapped};
  impl_->freeBuffer(b);
  *buffer = {};
}

bool Context::submit(const std::function<void(VkCommandBuffer)>& record, std::string* error, double* gpu_ms) {
  Impl& m = *impl_;
  const bool timed = gpu_ms && m.timestamps;
  if (gpu_ms) *gpu_ms = -1;
  if (timed && !m.ensureQueries(2, error)) return false;
  if (!m.begin(error)) return false;
  if (timed) {
    m.vk.vkCmdResetQueryPool(m.cmd, m.queries, 0, 2);
    m.vk.vkCmdWriteTimestamp(m.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, m.queries, 0);
  }
  record(m.cmd);
  if (timed) m.vk.vkCmdWriteTimestamp(m.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, m.queries, 1);
  return m.submitAndWait(error) && (!timed || m.readTimestamps(gpu_ms, error));
}

}  // namespace vren::radix
