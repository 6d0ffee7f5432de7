// A standalone convenience layer over vren_radix.h: owns an instance, a device, buffers and a
// queue; uploads, sorts and reads back. Used by the CLI, the tests and the benchmarks. The core
// library does not depend on it.
//
//   std::string error;
//   auto ctx = vren::radix::Context::create({}, &error);
//   std::vector<uint32_t> keys = ...;
//   ctx->sort(keys, {}, {}, nullptr, &error);  // keys are now sorted
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vren_radix/vren_radix.h"

namespace vren::radix {

struct DeviceInfo {
  uint32_t index = 0;
  std::string name;
  std::string type;    // "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other"
  std::string driver;  // driver name and version string
  uint32_t api_version = 0;
  uint32_t subgroup_size = 0;
  uint32_t min_subgroup_size = 0;
  uint32_t max_subgroup_size = 0;
  bool subgroup_arithmetic = false;
  uint32_t max_shared_memory = 0;
  uint64_t max_storage_buffer_range = 0;
  uint64_t max_allocation_size = 0;
  uint32_t max_workgroup_count_x = 0;
  double timestamp_period_ns = 0;
};

struct ContextOptions {
  int device_index = -1;  // -1: the first discrete GPU, else integrated, virtual, then CPU (lavapipe)
  bool validation = false;               // VK_LAYER_KHRONOS_validation
  bool synchronization_validation = false;
  // Receives every validation warning and error (and general warnings from the loader).
  std::function<void(const std::string&)> on_message;
  const TuningConfig* tuning = nullptr;  // null: chosen for the device
  uint32_t required_subgroup_size = 0;   // 0: the sorter's choice
};

struct SortOptions {
  KeyType key_type = KeyType::kU32;  // kU64: the key span holds two words (low, high) per key
  uint32_t begin_bit = 0;
  uint32_t end_bit = 32;             // 64 for all bits of kU64 keys
  bool descending = false;
  bool argsort = false;              // values receive the permutation; their input is ignored
  // cmdSortIndirect: the count is written to a GPU buffer and read there (clamped to the number
  // of keys given, which sizes the memory). Elements past it come back unspecified.
  bool gpu_count = false;
  uint32_t gpu_count_value = 0;
  uint32_t expected_count = 0;  // SortInfo::expected_count, with gpu_count
};

// The SortInfo that `options` asks for over `count` keys: key type, bit range, order, argsort.
// Buffers and timestamps are left to the caller.
inline SortInfo sortInfoFor(const SortOptions& options, uint32_t count) {
  SortInfo info;
  info.count = count;
  info.key_type = options.key_type;
  info.begin_bit = options.begin_bit;
  info.end_bit = options.end_bit;
  info.descending = options.descending;
  info.argsort = options.argsort;
  info.expected_count = options.expected_count;
  return info;
}

// A buffer made by Context::createBuffer: device-local, or host-visible and mapped.
struct GpuBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;  // host-visible buffers only
};

struct SortStats {
  double gpu_ms = 0;             // timestamps around the sort alone; negative if unavailable
  uint32_t passes = 0;
  bool result_in_temp = false;   // which ping-pong buffer held the result on the GPU
};

class Context {
 public:
  // Lists the Vulkan devices, in the order --device / device_index counts them.
  static std::vector<DeviceInfo> listDevices(std::string* error);
  // Null on failure, with the reason in *error.
  static std::unique_ptr<Context> create(const ContextOptions& options, std::string* error);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& device() const;
  const Sorter* sorter() const;
  uint32_t maxCount() const;

  // Sorts keys in place on the GPU; values (empty, or as many as keys) move with their keys.
  bool sort(std::span<uint32_t> keys, std::span<uint32_t> values, const SortOptions& options, SortStats* stats,
            std::string* error);

  // Sorts each segment of keys in place on the GPU (cmdSortSegmented): segment s is elements
  // [offsets[s], offsets[s + 1]), and offsets must satisfy validateSegmentOffsets for the number
  // of keys (a refusal gives its sentence). Keys, values and options as for sort(); with argsort,
  // values receive each key's index in the whole input, not in its segment. gpu_count is refused:
  // the last offset is the count.
  bool sortSegmented(std::span<uint32_t> keys, std::span<uint32_t> values, std::span<const uint32_t> offsets,
                     const SortOptions& options, SortStats* stats, std::string* error);

  // The k smallest keys of each segment (largest: the k largest, largest first), as the stable
  // sort orders them (cmdTopK). Offsets as for sortSegmented; empty: the whole input is one
  // segment. out_keys receives each segment's min(k, length) keys, the segments one after
  // another (two words per kU64 key); out_values, if given, the values moved with them (or with
  // argsort each key's input index; values may then be empty). options.descending must be
  // false.
  bool topK(std::span<const uint32_t> keys, std::span<const uint32_t> values, std::span<const uint32_t> offsets,
            uint32_t k, bool largest, const SortOptions& options, std::vector<uint32_t>* out_keys,
            std::vector<uint32_t>* out_values, std::string* error);

  // The checks sort() and sortSegmented() (argsort_needs_values true) and topK() (false) make of
  // their spans before touching the GPU: whole 64-bit keys, one value per key if any, a values
  // span for argsort's permutation, the device's limit. *count receives the number of keys; false
  // with a sentence otherwise. For code that records its own sorts on this context.
  bool checkInput(size_t key_words, size_t value_count, const SortOptions& options, bool argsort_needs_values,
                  uint32_t* count, std::string* error) const;

  // Low-level access for code that records its own work next to the sorter's (renderer
  // clients, tests, examples). Global vk* functions from <volk.h> are loaded for this device.
  VkInstance instance() const;
  VkPhysicalDevice physicalDevice() const;
  VkDevice vkDevice() const;
  bool subgroupSizeControlEnabled() const;  // subgroupSizeControl + computeFullSubgroups are on
  PFN_vkGetInstanceProcAddr instanceProcAddr() const;
  PFN_vkGetDeviceProcAddr deviceProcAddr() const;

  // This context's device (instance, devices, entry points, subgroup size control) as a module
  // binds to it.
  DeviceBinding binding() const {
    DeviceBinding b;
    b.instance = instance();
    b.physical_device = physicalDevice();
    b.device = vkDevice();
    b.get_instance_proc_addr = instanceProcAddr();
    b.get_device_proc_addr = deviceProcAddr();
    b.subgroup_size_control_enabled = subgroupSizeControlEnabled();
    return b;
  }
  // A SorterCreateInfo, TilePackerCreateInfo or MaterialSorterCreateInfo bound to this device.
  template <typename CreateInfo>
  CreateInfo createInfo() const {
    CreateInfo info{};
    info.binding = binding();
    return info;
  }
  // usage gets SHADER_DEVICE_ADDRESS and TRANSFER_SRC/DST added; memory can hold device addresses.
  bool createBuffer(VkDeviceSize size, VkBufferUsageFlags usage, bool host_visible, GpuBuffer* out,
                    std::string* error);
  void destroyBuffer(GpuBuffer* buffer);
  // Records into cmd a global memory barrier: `src` accesses at `src_stage` before `dst`
  // accesses at `dst_stage`.
  void cmdBarrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src,
                  VkPipelineStageFlags dst_stage, VkAccessFlags dst) const;
  // Records into cmd a copy of `bytes` bytes from src at src_offset to dst at dst_offset
  // (nothing for 0 bytes).
  void cmdCopy(VkCommandBuffer cmd, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset,
               VkDeviceSize bytes) const;
  // Records `record` into a fresh command buffer, submits it and waits. If gpu_ms is given,
  // timestamps around the recorded work measure it; it is negative if the queue has none.
  bool submit(const std::function<void(VkCommandBuffer)>& record, std::string* error, double* gpu_ms = nullptr);

 private:
  struct Impl;
  explicit Context(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vren::radix
