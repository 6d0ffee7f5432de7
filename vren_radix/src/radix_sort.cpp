#include "vren_radix/vren_radix.h"

#include <algorithm>
#include <cassert>
#include <new>

#include "radix_shared.h"
#include "spirv/radix_count.h"
#include "spirv/radix_scan.h"
#include "spirv/radix_scatter.h"
#include "tuning.h"

namespace vren::radix {
namespace {

using detail::PassConstants;

constexpr uint32_t kMaxScanWorkgroupSize = 1024;
constexpr VkDeviceSize kAlignment = 16;
constexpr VkBufferUsageFlags kUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;

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
  PFN_vkCmdPipelineBarrier cmdPipelineBarrier;
  PFN_vkCmdWriteTimestamp cmdWriteTimestamp;
  PFN_vkCmdBeginDebugUtilsLabelEXT cmdBeginDebugUtilsLabel;  // null unless VK_EXT_debug_utils is on
  PFN_vkCmdEndDebugUtilsLabelEXT cmdEndDebugUtilsLabel;
};

uint32_t divCeil(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

bool fail(std::string* why, const char* message, VkResult* result, VkResult code) {
  if (why) *why = message;
  *result = code;
  return false;
}

}  // namespace

struct Sorter {
  VkDevice device = VK_NULL_HANDLE;
  const VkAllocationCallbacks* allocator = nullptr;
  DeviceFunctions fn{};
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline count = VK_NULL_HANDLE;
  VkPipeline scan = VK_NULL_HANDLE;
  VkPipeline scatter_keys = VK_NULL_HANDLE;
  VkPipeline scatter_pairs = VK_NULL_HANDLE;
  SorterProperties properties{};
  uint32_t max_groups_x = 0;
  uint32_t max_groups_y = 0;
};

namespace {

template <typename T>
bool load(PFN_vkGetDeviceProcAddr gdpa, VkDevice device, const char* name, T& out) {
  out = reinterpret_cast<T>(gdpa(device, name));
  return out != nullptr;
}

bool loadFunctions(PFN_vkGetDeviceProcAddr gdpa, VkDevice device, DeviceFunctions& fn) {
  bool ok = load(gdpa, device, "vkCreateShaderModule", fn.createShaderModule) &&
            load(gdpa, device, "vkDestroyShaderModule", fn.destroyShaderModule) &&
            load(gdpa, device, "vkCreatePipelineLayout", fn.createPipelineLayout) &&
            load(gdpa, device, "vkDestroyPipelineLayout", fn.destroyPipelineLayout) &&
            load(gdpa, device, "vkCreateComputePipelines", fn.createComputePipelines) &&
            load(gdpa, device, "vkDestroyPipeline", fn.destroyPipeline) &&
            load(gdpa, device, "vkCmdBindPipeline", fn.cmdBindPipeline) &&
            load(gdpa, device, "vkCmdPushConstants", fn.cmdPushConstants) &&
            load(gdpa, device, "vkCmdDispatch", fn.cmdDispatch) &&
            load(gdpa, device, "vkCmdPipelineBarrier", fn.cmdPipelineBarrier) &&
            load(gdpa, device, "vkCmdWriteTimestamp", fn.cmdWriteTimestamp);
  if (!load(gdpa, device, "vkGetBufferDeviceAddress", fn.getBufferDeviceAddress))
    ok = ok && load(gdpa, device, "vkGetBufferDeviceAddressKHR", fn.getBufferDeviceAddress);
  load(gdpa, device, "vkCmdBeginDebugUtilsLabelEXT", fn.cmdBeginDebugUtilsLabel);
  load(gdpa, device, "vkCmdEndDebugUtilsLabelEXT", fn.cmdEndDebugUtilsLabel);
  return ok;
}

struct PipelineSpec {
  const uint32_t* code;
  size_t code_size;
  uint32_t workgroup_size;
  uint32_t keys_per_thread;
  uint32_t max_subgroups;
  uint32_t value_slots;
};

VkResult createPipeline(Sorter& s, const VkPipelineCache cache, const PipelineSpec& spec, uint32_t required_subgroup_size,
                        VkPipeline* out) {
  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = spec.code_size;
  module_info.pCode = spec.code;
  VkShaderModule module = VK_NULL_HANDLE;
  VkResult result = s.fn.createShaderModule(s.device, &module_info, s.allocator, &module);
  if (result != VK_SUCCESS) return result;

  const uint32_t values[] = {spec.workgroup_size, spec.keys_per_thread, spec.max_subgroups, spec.value_slots};
  const VkSpecializationMapEntry entries[] = {
      {VREN_RADIX_SPEC_WORKGROUP_SIZE, 0, 4},
      {VREN_RADIX_SPEC_KEYS_PER_THREAD, 4, 4},
      {VREN_RADIX_SPEC_MAX_SUBGROUPS, 8, 4},
      {VREN_RADIX_SPEC_VALUE_SLOTS, 12, 4},
  };
  VkSpecializationInfo specialization{4, entries, sizeof(values), values};

  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup_size{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  subgroup_size.requiredSubgroupSize = required_subgroup_size;

  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = &specialization;
  if (required_subgroup_size != 0) {
    info.stage.pNext = &subgroup_size;
    info.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  info.layout = s.layout;
  result = s.fn.createComputePipelines(s.device, cache, 1, &info, s.allocator, out);
  s.fn.destroyShaderModule(s.device, module, s.allocator);
  if (result != VK_SUCCESS) *out = VK_NULL_HANDLE;
  return result;
}

// Reads what the sorter needs to know about the device, and refuses devices it cannot run on.
bool inspectDevice(const SorterCreateInfo& info, detail::DeviceLimits& limits, uint32_t& vendor_id,
                   uint32_t& subgroup_size, uint32_t& required_subgroup_size, uint32_t max_groups[2],
                   uint64_t& max_buffer_bytes, std::string* why, VkResult* result) {
  auto getProperties2 = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(
      info.get_instance_proc_addr(info.instance, "vkGetPhysicalDeviceProperties2"));
  if (!getProperties2)
    return fail(why, "The Vulkan instance lacks vkGetPhysicalDeviceProperties2: create it with Vulkan 1.1 or newer.",
                result, VK_ERROR_INITIALIZATION_FAILED);

  VkPhysicalDeviceSubgroupSizeControlProperties size_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties vk11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES, &size_control};
  VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  getProperties2(info.physical_device, &properties);
  const VkPhysicalDeviceLimits& l = properties.properties.limits;
  if (properties.properties.apiVersion < VK_API_VERSION_1_2)
    return fail(why, "The device supports Vulkan 1.1 or older; vren_radix needs Vulkan 1.2 (buffer device addresses).",
                result, VK_ERROR_FEATURE_NOT_PRESENT);
  properties.pNext = &vk11;
  const bool has_size_control = properties.properties.apiVersion >= VK_API_VERSION_1_3;
  if (!has_size_control) vk11.pNext = nullptr;
  getProperties2(info.physical_device, &properties);

  if (!(vk11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT))
    return fail(why, "The device has no subgroup operations in compute shaders, which vren_radix needs.", result,
                VK_ERROR_FEATURE_NOT_PRESENT);
  const VkSubgroupFeatureFlags needed = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  if ((vk11.subgroupSupportedOperations & needed) != needed)
    return fail(why, "The device lacks subgroup arithmetic (subgroupAdd, subgroupExclusiveAdd), which vren_radix needs.",
                result, VK_ERROR_FEATURE_NOT_PRESENT);
  if (l.maxPushConstantsSize < sizeof(PassConstants))
    return fail(why, "The device allows fewer than 64 bytes of push constants.", result, VK_ERROR_FEATURE_NOT_PRESENT);

  vendor_id = properties.properties.vendorID;
  subgroup_size = vk11.subgroupSize;
  required_subgroup_size = 0;
  uint32_t min_subgroup = vk11.subgroupSize;
  if (info.subgroup_size_control_enabled && has_size_control &&
      (size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT)) {
    // The largest size: fewer subgroups make the per-bin walk over subgroups shorter.
    uint32_t chosen = info.required_subgroup_size ? info.required_subgroup_size : size_control.maxSubgroupSize;
    if (chosen < size_control.minSubgroupSize || chosen > size_control.maxSubgroupSize || (chosen & (chosen - 1)))
      return fail(why, "required_subgroup_size is not a power of two within the device's subgroup size range.", result,
                  VK_ERROR_FEATURE_NOT_PRESENT);
    required_subgroup_size = chosen;
    subgroup_size = chosen;
    min_subgroup = chosen;
  } else if (has_size_control) {
    min_subgroup = std::min(min_subgroup, size_control.minSubgroupSize);
  }

  limits.vendor_id = vendor_id;
  limits.max_workgroup_size = std::min(l.maxComputeWorkGroupSize[0], l.maxComputeWorkGroupInvocations);
  if (required_subgroup_size)
    limits.max_workgroup_size =
        std::min(limits.max_workgroup_size, required_subgroup_size * size_control.maxComputeWorkgroupSubgroups);
  limits.max_shared_memory = l.maxComputeSharedMemorySize;
  limits.min_subgroup_size = std::max(1u, min_subgroup);
  max_groups[0] = l.maxComputeWorkGroupCount[0];
  max_groups[1] = l.maxComputeWorkGroupCount[1];
  max_buffer_bytes = vk11.maxMemoryAllocationSize;
  return true;
}

}  // namespace

VkResult createSorter(const SorterCreateInfo& info, Sorter** out, std::string* why) {
  if (!out) return VK_ERROR_INITIALIZATION_FAILED;
  *out = nullptr;
  VkResult result = VK_SUCCESS;
  if (!info.device || !info.physical_device || !info.instance || !info.get_instance_proc_addr) {
    fail(why, "SorterCreateInfo needs instance, physical_device, device and get_instance_proc_addr.", &result,
         VK_ERROR_INITIALIZATION_FAILED);
    return result;
  }

  detail::DeviceLimits limits{};
  uint32_t vendor_id = 0, subgroup_size = 0, required_subgroup_size = 0, max_groups[2] = {};
  uint64_t max_buffer_bytes = 0;
  if (!inspectDevice(info, limits, vendor_id, subgroup_size, required_subgroup_size, max_groups, max_buffer_bytes, why,
                     &result))
    return result;

  PFN_vkGetDeviceProcAddr gdpa = info.get_device_proc_addr;
  if (!gdpa)
    gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(info.get_instance_proc_addr(info.instance, "vkGetDeviceProcAddr"));
  DeviceFunctions fn{};
  if (!gdpa || !loadFunctions(gdpa, info.device, fn)) {
    fail(why, "Could not load the device's Vulkan entry points (vkGetBufferDeviceAddress needs Vulkan 1.2).", &result,
         VK_ERROR_INITIALIZATION_FAILED);
    return result;
  }

  const TuningConfig tuning = detail::clampTuning(info.tuning ? *info.tuning : detail::defaultTuning(vendor_id), limits);
  const uint32_t max_subgroups = std::max(1u, tuning.workgroup_size / limits.min_subgroup_size);
  const uint32_t tile = tuning.workgroup_size * tuning.keys_per_thread;
  if (detail::scatterSharedBytes(tuning, max_subgroups, true) > limits.max_shared_memory) {
    fail(why, "The device has too little compute shared memory for the smallest radix tile.", &result,
         VK_ERROR_FEATURE_NOT_PRESENT);
    return result;
  }

  Sorter* s = new (std::nothrow) Sorter;
  if (!s) return VK_ERROR_OUT_OF_HOST_MEMORY;
  s->device = info.device;
  s->allocator = info.allocator;
  s->fn = fn;
  s->max_groups_x = max_groups[0];
  s->max_groups_y = max_groups[1];
  s->properties.tuning = tuning;
  s->properties.tile_size = tile;
  s->properties.subgroup_size = subgroup_size;
  // Limits: u32 indices in the shaders, the 2D dispatch grid, and the largest allocation.
  const uint64_t by_index = (uint64_t{1} << 32) - tile;
  const uint64_t by_grid = uint64_t{max_groups[0]} * max_groups[1] * tile;
  const uint64_t by_memory = max_buffer_bytes / 4;
  s->properties.max_count = static_cast<uint32_t>(std::min({by_index, by_grid, by_memory}));

  VkPushConstantRange push_range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PassConstants)};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.pushConstantRangeCount = 1;
  layout_info.pPushConstantRanges = &push_range;
  result = fn.createPipelineLayout(info.device, &layout_info, info.allocator, &s->layout);

  const uint32_t scan_size = std::min(kMaxScanWorkgroupSize, detail::floorPow2(limits.max_workgroup_size));
  const uint32_t scan_subgroups = std::max(1u, scan_size / limits.min_subgroup_size);
  const PipelineSpec specs[] = {
      {vren_radix_count_spv, sizeof(vren_radix_count_spv), tuning.workgroup_size, tuning.keys_per_thread, max_subgroups, 1},
      {vren_radix_scan_spv, sizeof(vren_radix_scan_spv), scan_size, 1, scan_subgroups, 1},
      {vren_radix_scatter_spv, sizeof(vren_radix_scatter_spv), tuning.workgroup_size, tuning.keys_per_thread,
       max_subgroups, 1},
      {vren_radix_scatter_spv, sizeof(vren_radix_scatter_spv), tuning.workgroup_size, tuning.keys_per_thread,
       max_subgroups, tile},
  };
  VkPipeline* targets[] = {&s->count, &s->scan, &s->scatter_keys, &s->scatter_pairs};
  for (size_t i = 0; i < 4 && result == VK_SUCCESS; ++i)
    result = createPipeline(*s, info.pipeline_cache, specs[i], required_subgroup_size, targets[i]);

  if (result != VK_SUCCESS) {
    if (why) *why = "Creating the sort pipelines failed (" + std::to_string(static_cast<int>(result)) + ").";
    destroySorter(s);
    return result;
  }
  *out = s;
  return VK_SUCCESS;
}

void destroySorter(Sorter* s) {
  if (!s) return;
  for (VkPipeline p : {s->count, s->scan, s->scatter_keys, s->scatter_pairs})
    if (p) s->fn.destroyPipeline(s->device, p, s->allocator);
  if (s->layout) s->fn.destroyPipelineLayout(s->device, s->layout, s->allocator);
  delete s;
}

SorterProperties getSorterProperties(const Sorter* s) { return s->properties; }

namespace {

uint32_t tileCount(const Sorter* s, uint32_t count) { return divCeil(count, s->properties.tile_size); }

VkDeviceSize internalSize(const Sorter* s, uint32_t count) {
  return (VkDeviceSize{VREN_RADIX_BINS} * std::max(1u, tileCount(s, count)) + VREN_RADIX_BINS) * 4;
}

uint32_t passCount(uint32_t begin_bit, uint32_t end_bit) {
  return end_bit > begin_bit ? divCeil(end_bit - begin_bit, VREN_RADIX_DIGIT_BITS) : 0;
}

VkDeviceAddress addressOf(const Sorter* s, const BufferRange& r) {
  if (!r.buffer) return 0;
  VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  info.buffer = r.buffer;
  return s->fn.getBufferDeviceAddress(s->device, &info) + r.offset;
}

bool tooSmall(const BufferRange& r, VkDeviceSize bytes) { return r.size != VK_WHOLE_SIZE && r.size < bytes; }

bool overlaps(const BufferRange& a, const BufferRange& b, VkDeviceSize bytes) {
  if (a.buffer != b.buffer || bytes == 0) return false;
  return a.offset < b.offset + bytes && b.offset < a.offset + bytes;
}

}  // namespace

MemoryRequirements getMemoryRequirements(const Sorter* s, uint32_t max_count, bool with_values) {
  MemoryRequirements r{};
  r.keys_temp_size = VkDeviceSize{std::max(1u, max_count)} * 4;
  r.values_temp_size = with_values ? r.keys_temp_size : 0;
  r.internal_size = internalSize(s, max_count);
  r.alignment = kAlignment;
  r.usage = kUsage;
  return r;
}

const char* validateSortInfo(const Sorter* s, const SortInfo& info) {
  if (info.begin_bit > info.end_bit || info.end_bit > 32)
    return "The bit range must satisfy begin_bit <= end_bit <= 32.";
  if (info.count == 0 || info.begin_bit == info.end_bit) return nullptr;
  if (info.count > s->properties.max_count) return "The count exceeds the largest count this device can sort.";
  const VkDeviceSize bytes = VkDeviceSize{info.count} * 4;
  const bool with_values = info.values.buffer != VK_NULL_HANDLE;
  if (!info.keys.buffer || !info.keys_temp.buffer || !info.internal.buffer)
    return "keys, keys_temp and internal buffers are required.";
  if (with_values && !info.values_temp.buffer) return "values_temp is required when values are given.";
  for (const BufferRange* r : {&info.keys, &info.keys_temp, &info.values, &info.values_temp, &info.internal})
    if (r->offset % kAlignment) return "Buffer offsets must be multiples of MemoryRequirements::alignment (16 bytes).";
  if (tooSmall(info.keys, bytes) || tooSmall(info.keys_temp, bytes)) return "A keys buffer is smaller than count * 4 bytes.";
  if (with_values && (tooSmall(info.values, bytes) || tooSmall(info.values_temp, bytes)))
    return "A values buffer is smaller than count * 4 bytes.";
  if (tooSmall(info.internal, internalSize(s, info.count)))
    return "The internal buffer is smaller than getMemoryRequirements() asks for this count.";
  for (const BufferRange* r : {&info.keys, &info.keys_temp, &info.values, &info.values_temp, &info.internal})
    if (r->buffer && addressOf(s, *r) % kAlignment)
      return "A buffer's device address is not 16-byte aligned; bind its memory at a 16-byte aligned offset.";
  const BufferRange* data[] = {&info.keys, &info.keys_temp, &info.values, &info.values_temp};
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j)
      if (data[i]->buffer && overlaps(*data[i], *data[j], bytes)) return "The keys, values and temp buffers overlap.";
  for (const BufferRange* r : data)
    if (r->buffer && overlaps(*r, info.internal, std::max(bytes, internalSize(s, info.count))))
      return "The internal buffer overlaps a keys or values buffer.";
  return nullptr;
}

namespace {


// Orders one pass's shader writes before the next pass's shader reads and writes.
void computeToComputeBarrier(const Sorter* s, VkCommandBuffer cmd) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  s->fn.cmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                           &barrier, 0, nullptr, 0, nullptr);
}

void beginLabel(const Sorter* s, VkCommandBuffer cmd, const char* name) {
  if (!s->fn.cmdBeginDebugUtilsLabel) return;
  VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
  label.pLabelName = name;
  s->fn.cmdBeginDebugUtilsLabel(cmd, &label);
}

void endLabel(const Sorter* s, VkCommandBuffer cmd) {
  if (s->fn.cmdEndDebugUtilsLabel) s->fn.cmdEndDebugUtilsLabel(cmd);
}

void dispatchTiles(const Sorter* s, VkCommandBuffer cmd, uint32_t tiles) {
  const uint32_t x = std::min(tiles, s->max_groups_x);
  s->fn.cmdDispatch(cmd, x, divCeil(tiles, x), 1);
}

}  // namespace

SortResult cmdSort(const Sorter* s, VkCommandBuffer cmd, const SortInfo& info) {
  assert(validateSortInfo(s, info) == nullptr);
  const bool with_values = info.values.buffer != VK_NULL_HANDLE;
  const uint32_t passes = info.count == 0 ? 0 : passCount(info.begin_bit, info.end_bit);
  SortResult result{passes, passes % 2 == 1, passes % 2 ? info.keys_temp : info.keys,
                    with_values ? (passes % 2 ? info.values_temp : info.values) : BufferRange{}};
  if (info.timestamp_pool)
    // Written once all earlier commands are done, so the interval holds the sort alone.
    s->fn.cmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, info.timestamp_pool, info.first_query);

  // Each pass p sorts by digit p, from one ping-pong buffer into the other:
  //   1. count   keys per digit per tile          -> internal.counts   | barrier
  //   2. scan    digit-major counts, exclusive    -> internal.counts   | barrier
  //   3. scatter rank within tile, write globally -> the other buffer  | barrier (not after the last)
  const VkDeviceAddress keys[2] = {addressOf(s, info.keys), addressOf(s, info.keys_temp)};
  const VkDeviceAddress values[2] = {addressOf(s, info.values), addressOf(s, info.values_temp)};
  PassConstants pc{};
  pc.counts = addressOf(s, info.internal);
  pc.count = info.count;
  pc.num_tiles = tileCount(s, info.count);
  pc.flags = info.descending ? VREN_RADIX_FLAG_DESCENDING : 0;
  uint32_t query = info.first_query + 1;
  auto stepDone = [&] {
    if (info.timestamp_pool && info.timestamp_every_dispatch)
      s->fn.cmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, info.timestamp_pool, query++);
  };
  if (passes) beginLabel(s, cmd, "vren_radix sort");
  for (uint32_t p = 0; p < passes; ++p) {
    pc.shift = info.begin_bit + p * VREN_RADIX_DIGIT_BITS;
    pc.digit_mask = (1u << std::min<uint32_t>(VREN_RADIX_DIGIT_BITS, info.end_bit - pc.shift)) - 1;
    pc.keys_in = keys[p % 2];
    pc.keys_out = keys[1 - p % 2];
    pc.values_in = with_values ? values[p % 2] : 0;
    pc.values_out = with_values ? values[1 - p % 2] : 0;
    s->fn.cmdPushConstants(cmd, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);

    s->fn.cmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->count);
    dispatchTiles(s, cmd, pc.num_tiles);
    stepDone();
    computeToComputeBarrier(s, cmd);

    s->fn.cmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->scan);
    s->fn.cmdDispatch(cmd, VREN_RADIX_BINS, 1, 1);
    stepDone();
    computeToComputeBarrier(s, cmd);

    s->fn.cmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, with_values ? s->scatter_pairs : s->scatter_keys);
    dispatchTiles(s, cmd, pc.num_tiles);
    stepDone();
    if (p + 1 < passes) computeToComputeBarrier(s, cmd);
  }
  if (passes) endLabel(s, cmd);

  if (info.timestamp_pool && !info.timestamp_every_dispatch)
    s->fn.cmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, info.timestamp_pool, info.first_query + 1);
  return result;
}

}  // namespace vren::radix
