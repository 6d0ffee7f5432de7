#include "device.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <vector>

namespace vren::radix::detail {
namespace {

template <typename T>
bool load(PFN_vkGetDeviceProcAddr gdpa, VkDevice device, const char* name, T& out) {
  out = reinterpret_cast<T>(gdpa(device, name));
  return out != nullptr;
}

}  // namespace

bool loadDeviceFunctions(PFN_vkGetInstanceProcAddr gipa, VkInstance instance, PFN_vkGetDeviceProcAddr gdpa,
                         VkDevice device, DeviceFunctions* fn) {
  if (!gdpa && gipa) gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(instance, "vkGetDeviceProcAddr"));
  if (!gdpa) return false;
  bool ok = load(gdpa, device, "vkCreateShaderModule", fn->createShaderModule) &&
            load(gdpa, device, "vkDestroyShaderModule", fn->destroyShaderModule) &&
            load(gdpa, device, "vkCreatePipelineLayout", fn->createPipelineLayout) &&
            load(gdpa, device, "vkDestroyPipelineLayout", fn->destroyPipelineLayout) &&
            load(gdpa, device, "vkCreateComputePipelines", fn->createComputePipelines) &&
            load(gdpa, device, "vkDestroyPipeline", fn->destroyPipeline) &&
            load(gdpa, device, "vkCmdBindPipeline", fn->cmdBindPipeline) &&
            load(gdpa, device, "vkCmdPushConstants", fn->cmdPushConstants) &&
            load(gdpa, device, "vkCmdDispatch", fn->cmdDispatch) &&
            load(gdpa, device, "vkCmdDispatchIndirect", fn->cmdDispatchIndirect) &&
            load(gdpa, device, "vkCmdPipelineBarrier", fn->cmdPipelineBarrier) &&
            load(gdpa, device, "vkCmdWriteTimestamp", fn->cmdWriteTimestamp);
  if (!load(gdpa, device, "vkGetBufferDeviceAddress", fn->getBufferDeviceAddress))
    ok = ok && load(gdpa, device, "vkGetBufferDeviceAddressKHR", fn->getBufferDeviceAddress);
  load(gdpa, device, "vkCmdBeginDebugUtilsLabelEXT", fn->cmdBeginDebugUtilsLabel);
  load(gdpa, device, "vkCmdEndDebugUtilsLabelEXT", fn->cmdEndDebugUtilsLabel);
  return ok;
}

namespace {

// DeviceFacts::compute_units: from the properties of VK_NV_shader_sm_builtins or
// VK_AMD_shader_core_properties, where the device has either; else 0.
uint32_t computeUnits(PFN_vkGetInstanceProcAddr gipa, VkInstance instance, VkPhysicalDevice physical_device,
                      PFN_vkGetPhysicalDeviceProperties2 getProperties2) {
  auto enumerate = reinterpret_cast<PFN_vkEnumerateDeviceExtensionProperties>(
      gipa(instance, "vkEnumerateDeviceExtensionProperties"));
  uint32_t n = 0;
  if (!enumerate || enumerate(physical_device, nullptr, &n, nullptr) != VK_SUCCESS) return 0;
  std::vector<VkExtensionProperties> extensions(n);
  if (enumerate(physical_device, nullptr, &n, extensions.data()) < VK_SUCCESS) return 0;
  auto has = [&](const char* name) {
    for (uint32_t i = 0; i < n; ++i)
      if (std::strcmp(extensions[i].extensionName, name) == 0) return true;
    return false;
  };
  VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  if (has(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    properties.pNext = &sm;
    getProperties2(physical_device, &properties);
    return sm.shaderSMCount;
  }
  if (has(VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderCorePropertiesAMD core{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
    properties.pNext = &core;
    getProperties2(physical_device, &properties);
    return core.shaderEngineCount * core.shaderArraysPerEngineCount * core.computeUnitsPerShaderArray;
  }
  return 0;
}

}  // namespace

VkResult inspectDevice(const DeviceBinding& binding, const DeviceRequest& request, DeviceFacts* facts,
                       std::string* why) {
  const PFN_vkGetInstanceProcAddr gipa = binding.get_instance_proc_addr;
  const VkInstance instance = binding.instance;
  const VkPhysicalDevice physical_device = binding.physical_device;
  const std::string module = request.module;
  auto getProperties2 =
      reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(gipa(instance, "vkGetPhysicalDeviceProperties2"));
  if (!getProperties2)
    return fail(why, "The Vulkan instance lacks vkGetPhysicalDeviceProperties2: create it with Vulkan 1.1 or newer.",
                VK_ERROR_INITIALIZATION_FAILED);

  VkPhysicalDeviceSubgroupSizeControlProperties size_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties vk11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  getProperties2(physical_device, &properties);
  if (properties.properties.apiVersion < VK_API_VERSION_1_2)
    return fail(why, "The device supports Vulkan 1.1 or older; " + module + " needs Vulkan 1.2 (buffer device addresses).",
                VK_ERROR_FEATURE_NOT_PRESENT);
  const bool has_size_control = properties.properties.apiVersion >= VK_API_VERSION_1_3;
  properties.pNext = &vk11;
  vk11.pNext = &driver;
  if (has_size_control) driver.pNext = &size_control;
  getProperties2(physical_device, &properties);
  const VkPhysicalDeviceLimits& l = properties.properties.limits;

  if (!(vk11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT))
    return fail(why, "The device has no subgroup operations in compute shaders, which " + module + " needs.",
                VK_ERROR_FEATURE_NOT_PRESENT);
  if ((vk11.subgroupSupportedOperations & request.subgroup_operations) != request.subgroup_operations)
    return fail(why, "The device lacks " + std::string(request.operations) + " in compute shaders, which " + module +
                         " needs.",
                VK_ERROR_FEATURE_NOT_PRESENT);
  if (l.maxPushConstantsSize < request.push_constant_bytes)
    return fail(why, "The device allows fewer than " + std::to_string(request.push_constant_bytes) +
                         " bytes of push constants, which " + module + " needs.",
                VK_ERROR_FEATURE_NOT_PRESENT);

  DeviceFacts& d = *facts;
  d.vendor_id = properties.properties.vendorID;
  d.driver_id = driver.driverID;
  d.subgroup_size = d.min_subgroup_size = d.max_subgroup_size = vk11.subgroupSize;
  d.subgroup_operations = vk11.subgroupSupportedOperations;
  if (has_size_control) {
    d.min_subgroup_size = std::min(d.min_subgroup_size, size_control.minSubgroupSize);
    d.max_subgroup_size = std::max(d.max_subgroup_size, size_control.maxSubgroupSize);
  }
  d.required_subgroup_size = 0;
  d.max_workgroup_size = std::min(l.maxComputeWorkGroupSize[0], l.maxComputeWorkGroupInvocations);
  if (binding.subgroup_size_control_enabled && has_size_control &&
      (size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT)) {
    // The largest size: fewer subgroups make the per-subgroup walks of the passes shorter.
    const uint32_t chosen = binding.required_subgroup_size ? binding.required_subgroup_size : size_control.maxSubgroupSize;
    if (chosen < size_control.minSubgroupSize || chosen > size_control.maxSubgroupSize || (chosen & (chosen - 1)))
      return fail(why, "required_subgroup_size is not a power of two within the device's subgroup size range.",
                  VK_ERROR_FEATURE_NOT_PRESENT);
    d.required_subgroup_size = chosen;
    d.subgroup_size = d.min_subgroup_size = d.max_subgroup_size = chosen;
    d.max_workgroup_size = std::min(d.max_workgroup_size, chosen * size_control.maxComputeWorkgroupSubgroups);
  }
  d.min_subgroup_size = std::max(1u, d.min_subgroup_size);
  d.max_shared_memory = l.maxComputeSharedMemorySize;
  d.max_groups[0] = l.maxComputeWorkGroupCount[0];
  d.max_groups[1] = l.maxComputeWorkGroupCount[1];
  d.max_allocation = vk11.maxMemoryAllocationSize;
  d.compute_units = computeUnits(gipa, instance, physical_device, getProperties2);
  return VK_SUCCESS;
}

VkResult bindDevice(const DeviceBinding& binding, const char* create_info, const DeviceRequest& request,
                    DeviceFacts* facts, DeviceFunctions* fn, std::string* why) {
  if (!binding.device || !binding.physical_device || !binding.instance || !binding.get_instance_proc_addr)
    return fail(why,
                std::string(create_info) +
                    "::binding needs instance, physical_device, device and get_instance_proc_addr.",
                VK_ERROR_INITIALIZATION_FAILED);
  if (VkResult r = inspectDevice(binding, request, facts, why); r != VK_SUCCESS) return r;
  *fn = {};
  if (!loadDeviceFunctions(binding.get_instance_proc_addr, binding.instance, binding.get_device_proc_addr,
                           binding.device, fn))
    return fail(why, "Could not load the device's Vulkan entry points (vkGetBufferDeviceAddress needs Vulkan 1.2).",
                VK_ERROR_INITIALIZATION_FAILED);
  return VK_SUCCESS;
}

VkResult initModule(ModuleCore& m, const DeviceBinding& binding, const DeviceFunctions& fn,
                    const DeviceRequest& request) {
  m.device = binding.device;
  m.allocator = binding.allocator;
  m.fn = fn;
  const VkPushConstantRange push_range{VK_SHADER_STAGE_COMPUTE_BIT, 0, request.push_constant_bytes};
  VkPipelineLayoutCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  info.pushConstantRangeCount = 1;
  info.pPushConstantRanges = &push_range;
  // Output handles are undefined on failure: keep only a created one.
  VkPipelineLayout layout = VK_NULL_HANDLE;
  const VkResult result = fn.createPipelineLayout(m.device, &info, m.allocator, &layout);
  if (result == VK_SUCCESS) m.layout = layout;
  return result;
}

VkResult makePipeline(ModuleCore& m, VkPipelineCache cache, const uint32_t* code, size_t code_size,
                      std::span<const uint32_t> values, uint32_t required_subgroup_size, VkPipeline* out) {
  std::array<VkSpecializationMapEntry, kMaxSpecConstants> entries;
  if (values.size() > entries.size()) return VK_ERROR_INITIALIZATION_FAILED;
  for (uint32_t i = 0; i < values.size(); ++i) entries[i] = {i, 4 * i, 4};
  const VkSpecializationInfo specialization{static_cast<uint32_t>(values.size()), entries.data(), values.size_bytes(),
                                            values.data()};
  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = code_size;
  module_info.pCode = code;
  VkShaderModule module = VK_NULL_HANDLE;
  VkResult result = m.fn.createShaderModule(m.device, &module_info, m.allocator, &module);
  if (result != VK_SUCCESS) return result;

  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup_size{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  subgroup_size.requiredSubgroupSize = required_subgroup_size;
  VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipeline_info.stage.module = module;
  pipeline_info.stage.pName = "main";
  pipeline_info.stage.pSpecializationInfo = &specialization;
  if (required_subgroup_size != 0) {
    pipeline_info.stage.pNext = &subgroup_size;
    pipeline_info.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  pipeline_info.layout = m.layout;
  VkPipeline created = VK_NULL_HANDLE;
  result = m.fn.createComputePipelines(m.device, cache, 1, &pipeline_info, m.allocator, &created);
  m.fn.destroyShaderModule(m.device, module, m.allocator);
  if (result != VK_SUCCESS) return result;  // output handles are undefined on failure
  try {
    m.pipelines.push_back(created);
  } catch (const std::bad_alloc&) {
    m.fn.destroyPipeline(m.device, created, m.allocator);
    return VK_ERROR_OUT_OF_HOST_MEMORY;
  }
  *out = created;
  return VK_SUCCESS;
}

void destroyModule(ModuleCore& m) {
  for (VkPipeline p : m.pipelines) m.fn.destroyPipeline(m.device, p, m.allocator);
  m.pipelines.clear();
  if (m.layout) m.fn.destroyPipelineLayout(m.device, m.layout, m.allocator);
  m.layout = VK_NULL_HANDLE;
}

bool tooSmall(const BufferRange& r, VkDeviceSize bytes) { return r.size != VK_WHOLE_SIZE && r.size < bytes; }

bool overlaps(const BufferRange& a, VkDeviceSize a_bytes, const BufferRange& b, VkDeviceSize b_bytes) {
  if (!a.buffer || a.buffer != b.buffer || a_bytes == 0 || b_bytes == 0) return false;
  return a.offset < b.offset + b_bytes && b.offset < a.offset + a_bytes;
}

VkDeviceAddress addressOf(const DeviceFunctions& fn, VkDevice device, const BufferRange& r) {
  if (!r.buffer) return 0;
  VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  info.buffer = r.buffer;
  return fn.getBufferDeviceAddress(device, &info) + r.offset;
}

}  // namespace vren::radix::detail
