// What every module (sorter, tile packer, material sorter) needs from the caller's device: its
// entry points, loaded through the caller's get*ProcAddr, and the properties that size and gate
// the passes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <vulkan/vulkan.h>

#include "vren_radix/vren_radix.h"

namespace vren::radix::detail {

// Small helpers every module shares.
inline uint32_t divCeil(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }
inline bool isPow2(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }
// The largest power of two <= v; 0 for 0.
inline uint32_t floorPow2(uint32_t v) {
  uint32_t p = 1;
  while (p <= v / 2) p *= 2;
  return v == 0 ? 0 : p;
}
// A refusal: `message` into *why (if given), `code` returned.
inline VkResult fail(std::string* why, std::string_view message, VkResult code) {
  if (why) *why = message;
  return code;
}

// Whether a module polls the words other workgroups publish with atomic loads: NVIDIA's driver
// honours volatile loads inside loops, which are cheaper there; others may hoist them (lavapipe).
inline bool pollsWithAtomics(VkDriverId driver) { return driver != VK_DRIVER_ID_NVIDIA_PROPRIETARY; }

// Buffer ranges, as every module checks and addresses them.
// Whether a range of known size is smaller than `bytes` (VK_WHOLE_SIZE: unknown, not smaller).
bool tooSmall(const BufferRange& r, VkDeviceSize bytes);
// Whether two ranges of the given sizes share a byte; null buffers and empty ranges share none.
bool overlaps(const BufferRange& a, VkDeviceSize a_bytes, const BufferRange& b, VkDeviceSize b_bytes);

// Every device-level entry point the library uses.
struct DeviceFunctions {
  PFN_vkCreateShaderModule createShaderModule;
  PFN_vkDestroyShaderModule destroyShaderModule;
  PFN_vkCreatePipelineLayout createPipelineLayout;
  PFN_vkDestroyPipelineLayout destroyPipelineLayout;
  PFN_vkCreateComputePipelines createComputePipelines;
  PFN_vkDestroyPipeline destroyPipeline;
  PFN_vkGetBufferDeviceAddress getBufferDeviceAddress;
  PFN_vkCmdBindPipeline cmdBindPipeline;
  PFN_vkCmdPushConstants cmdPushConstants;
  PFN_vkCmdDispatch cmdDispatch;
  PFN_vkCmdDispatchIndirect cmdDispatchIndirect;
  PFN_vkCmdPipelineBarrier cmdPipelineBarrier;
  PFN_vkCmdWriteTimestamp cmdWriteTimestamp;
  PFN_vkCmdBeginDebugUtilsLabelEXT cmdBeginDebugUtilsLabel;  // null unless VK_EXT_debug_utils is on
  PFN_vkCmdEndDebugUtilsLabelEXT cmdEndDebugUtilsLabel;
};

// The device address of a range's first byte; 0 for a null buffer.
VkDeviceAddress addressOf(const DeviceFunctions& fn, VkDevice device, const BufferRange& r);

// Loads the device's entry points through gdpa, or, if that is null, through the
// vkGetDeviceProcAddr that gipa returns. False if any required one is missing.
bool loadDeviceFunctions(PFN_vkGetInstanceProcAddr gipa, VkInstance instance, PFN_vkGetDeviceProcAddr gdpa,
                         VkDevice device, DeviceFunctions* fn);

// What a module asks of the device.
struct DeviceRequest {
  const char* module;                           // "vren_radix", "the tile packer", ...
  VkSubgroupFeatureFlags subgroup_operations;   // in compute shaders
  const char* operations;                       // those operations in words, for the refusal
  uint32_t push_constant_bytes;
};

struct DeviceFacts {
  uint32_t vendor_id = 0;
  VkDriverId driver_id = {};
  VkSubgroupFeatureFlags subgroup_operations = 0;  // all the device has, not only those requested
  uint32_t subgroup_size = 0;           // what the passes run at
  uint32_t required_subgroup_size = 0;  // 0: not pinned
  uint32_t min_subgroup_size = 0;       // smallest size the passes may run at
  uint32_t max_subgroup_size = 0;
  uint32_t max_workgroup_size = 0;      // every limit, the pinned size's maxComputeWorkgroupSubgroups too
  uint32_t max_shared_memory = 0;
  uint32_t max_groups[2] = {};
  uint64_t max_allocation = 0;
  // SMs (VK_NV_shader_sm_builtins) or compute units (VK_AMD_shader_core_properties); 0 where the
  // driver does not tell.
  uint32_t compute_units = 0;
};

// Reads the device's properties, refuses a device the module cannot run on with a sentence
// naming what is missing, and pins the subgroup size (the device's largest unless asked
// otherwise) when the caller enabled subgroup size control.
VkResult inspectDevice(const DeviceBinding& binding, const DeviceRequest& request, DeviceFacts* facts,
                       std::string* why);

// Every module's first step: the binding's required handles present (else a refusal naming
// `create_info`, the caller's struct), the device inspected for the request, the entry points
// loaded.
VkResult bindDevice(const DeviceBinding& binding, const char* create_info, const DeviceRequest& request,
                    DeviceFacts* facts, DeviceFunctions* fn, std::string* why);

// What every module (Sorter, MaterialSorter, TilePacker) holds of its device, and its teardown.
// A module derives from it, binds it with initModule after bindDevice, makes each pipeline with
// makePipeline, ends its create function with finishModule and is destroyed by deleteModule: no
// module destroys a pipeline itself.
struct ModuleCore {
  VkDevice device = VK_NULL_HANDLE;
  const VkAllocationCallbacks* allocator = nullptr;
  DeviceFunctions fn{};
  // One push-constant range for compute, no descriptor sets (the passes take buffer addresses).
  VkPipelineLayout layout = VK_NULL_HANDLE;
  std::vector<VkPipeline> pipelines;  // every pipeline makePipeline made
};

// The module's device and entry points (bindDevice's), and its layout with the request's push
// constants.
VkResult initModule(ModuleCore& m, const DeviceBinding& binding, const DeviceFunctions& fn,
                    const DeviceRequest& request);
// A compute pipeline of the module's layout from `code` (code_size bytes of SPIR-V), its
// specialization constant i set to values[i] (at most kMaxSpecConstants), needing full
// subgroups of required_subgroup_size unless that is 0. *out is set only on success;
// destroyModule destroys the pipeline.
constexpr size_t kMaxSpecConstants = 16;
VkResult makePipeline(ModuleCore& m, VkPipelineCache cache, const uint32_t* code, size_t code_size,
                      std::span<const uint32_t> values, uint32_t required_subgroup_size, VkPipeline* out);
// Destroys every pipeline the module made, and its layout.
void destroyModule(ModuleCore& m);

// Every module's destroy function.
template <typename Module>
void deleteModule(Module* m) {
  if (!m) return;
  destroyModule(*m);
  delete m;
}

// The end of every module's create function: on success, *out takes the module; otherwise the
// module is destroyed and *why names what failed to be created ("the tile packing pipeline").
template <typename Module>
VkResult finishModule(Module* m, VkResult result, std::string_view what, Module** out, std::string* why) {
  if (result == VK_SUCCESS) {
    *out = m;
    return VK_SUCCESS;
  }
  if (why)
    *why = "Creating " + std::string(what) + " failed (VkResult " + std::to_string(static_cast<int>(result)) + ").";
  deleteModule(m);
  return result;
}

}  // namespace vren::radix::detail
