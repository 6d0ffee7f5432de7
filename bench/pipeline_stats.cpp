// vren_radix_pipeline_stats: the driver's statistics for each compute pipeline the library builds
// (VK_KHR_pipeline_executable_properties), one line per pipeline: `name  stat=value ...`.
// Register, shared-memory and spill counts decide how many workgroups fit on an SM at once, which
// timings alone cannot show; this tool puts them beside the benchmarks when choosing a tuning.
//
// Usage: vren_radix_pipeline_stats [--device=N] [--tuning=WxK[xD]]...
//   --device=N        the Nth device in vkEnumeratePhysicalDevices order, as `vren-radix info`
//                     counts them; default: the first discrete GPU, else device 0.
//   --tuning=WxK[xD]  the sorter's radix pipelines (detail::keyPipelineRows) for a tuning of W
//                     threads x K keys per thread x D digit bits (4 or 8, default 4), with the
//                     look-back on tiles of the same shape; repeatable. Default: the device's own
//                     tuning (its large tiles included), then 256x4x4 256x8x8 256x4x8, each with
//                     the default look-back tiles.
//   --large-tile=KxW, --large-pairs-tile=KxW, --large-pairs-loop=0|1  the device's tuning with
//                     the large tiles of keys alone, or of keys and values, at K keys x W threads,
//                     the latter on a workgroup each (0) or on workgroups that loop over them (1).
//   --values-apart=0|1  the device's tuning with lookback_values_apart so.
//   --counters-in-stage=0|1  the device's tuning with lookback_counters_in_stage so.
//   --large-pairs-per-unit=N  the device's tuning with large_tile_pairs_per_unit N.
//
// Names give each pipeline's shape: radix passes and the scan W x K x D, the material fast path
// workgroup x rounds x materials, the tile packer its workgroup.
//
// The pipelines are made as the library makes them for u32 keys (without the order map, except
// the one-dispatch sort, which always has it): the same SPIR-V, specialization constants and,
// where subgroup size control exists, the same pinned subgroup size (detail::inspectDevice,
// planKeyPipelines, keyPipelineRows, specializationValues, and the material and tile rows of
// tuning.h).
#include <volk.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "device.h"
#include "materials_shared.h"
#include "radix_shared.h"
#include "sorter.h"
#include "spirv/materials_fast_count.h"
#include "spirv/materials_fast_scatter.h"
#include "spirv/radix_scan.h"
#include "spirv/tiles_pack.h"
#include "tiles_shared.h"
#include "tuning.h"
#include "vren_radix/materials.h"
#include "vren_radix/tiles.h"

namespace {

using namespace vren::radix;

// Private constants of the library's modules, repeated here: keep them in step.
constexpr uint32_t kMaxScanWorkgroupSize = 1024;      // radix_sort.cpp
constexpr uint32_t kPushConstantBytes =
    std::max({sizeof(detail::PassConstants), sizeof(detail::MaterialConstants), sizeof(detail::TilePackConstants)});

void check(VkResult result, const std::string& what) {
  if (result != VK_SUCCESS) throw std::runtime_error(what + " failed (VkResult " + std::to_string(result) + ").");
}

std::string formatValue(const VkPipelineExecutableStatisticKHR& stat) {
  const VkPipelineExecutableStatisticValueKHR& v = stat.value;
  if (stat.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR) return v.b32 ? "true" : "false";
  if (stat.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR) return std::to_string(v.i64);
  if (stat.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR) return std::to_string(v.u64);
  return std::to_string(v.f64);
}

// "pass@AxBxC": the pipeline's name and shape.
std::string pipelineName(const char* pass, std::initializer_list<uint32_t> shape) {
  std::string name = pass;
  char separator = '@';
  for (uint32_t n : shape) {
    name += separator;
    name += std::to_string(n);
    separator = 'x';
  }
  return name;
}

struct Spirv {
  const uint32_t* code;
  size_t bytes;
};

template <size_t N>
Spirv spirv(const uint32_t (&code)[N]) {
  return {code, sizeof(code)};
}

// One pipeline to report: constants[i] is specialization constant i.
struct PipelineRequest {
  std::string name;
  Spirv shader;
  std::vector<uint32_t> constants;
};

struct Tool {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  detail::DeviceFacts facts;

  ~Tool() {
    if (layout) vkDestroyPipelineLayout(device, layout, nullptr);
    if (device) vkDestroyDevice(device, nullptr);
    if (instance) vkDestroyInstance(instance, nullptr);
  }

  void createInstance() {
    check(volkInitialize(), "Loading the Vulkan loader (volkInitialize)");
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vren_radix_pipeline_stats";
    app.apiVersion = std::min(volkGetInstanceVersion(), static_cast<uint32_t>(VK_API_VERSION_1_3));
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    check(vkCreateInstance(&info, nullptr, &instance), "Creating the Vulkan instance");
    volkLoadInstanceOnly(instance);
  }

  void pickDevice(int index) {
    uint32_t n = 0;
    check(vkEnumeratePhysicalDevices(instance, &n, nullptr), "Listing the Vulkan devices");
    std::vector<VkPhysicalDevice> devices(n);
    check(vkEnumeratePhysicalDevices(instance, &n, devices.data()), "Listing the Vulkan devices");
    if (index >= static_cast<int>(n) || n == 0)
      throw std::runtime_error("Device " + std::to_string(std::max(index, 0)) + " does not exist; there are " +
                               std::to_string(n) + " (see `vren-radix info`).");
    physical = devices[std::max(index, 0)];
    for (uint32_t i = 0; i < n && index < 0; ++i) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(devices[i], &p);
      if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
        physical = devices[i];
        break;
      }
    }
  }

  // Returns false if the driver cannot report statistics.
  bool createDevice() {
    VkPhysicalDeviceProperties properties;
    vkGetPhysicalDeviceProperties(physical, &properties);
    const std::string name = properties.deviceName;
    if (properties.apiVersion < VK_API_VERSION_1_2)
      throw std::runtime_error("Device '" + name + "' supports only Vulkan 1.1; vren_radix needs Vulkan 1.2.");
    uint32_t n = 0;
    check(vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, nullptr), "Listing the device extensions");
    std::vector<VkExtensionProperties> extensions(n);
    check(vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, extensions.data()), "Listing extensions");
    bool has_extension = false;
    for (const VkExtensionProperties& e : extensions)
      has_extension |= std::strcmp(e.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0;

    // The extension's feature struct may be chained only where the extension exists.
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    VkPhysicalDeviceVulkan13Features features13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                                has_extension ? &executable : nullptr};
    const bool vk13 = properties.apiVersion >= VK_API_VERSION_1_3 && volkGetInstanceVersion() >= VK_API_VERSION_1_3;
    VkPhysicalDeviceVulkan12Features features12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                                vk13 ? &features13 : features13.pNext};
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &features12};
    vkGetPhysicalDeviceFeatures2(physical, &features);
    if (!executable.pipelineExecutableInfo) {
      std::printf("Device '%s' lacks VK_KHR_pipeline_executable_properties: its driver cannot report statistics.\n",
                  name.c_str());
      return false;
    }
    if (!features12.bufferDeviceAddress)
      throw std::runtime_error("Device '" + name + "' lacks the bufferDeviceAddress feature that vren_radix needs.");

    // Enable what vren::radix::Context enables, and the statistics: other features (robustness)
    // could change the code the driver generates.
    const bool size_control = vk13 && features13.subgroupSizeControl && features13.computeFullSubgroups;
    features.features = {};
    features12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, features12.pNext};
    features12.bufferDeviceAddress = VK_TRUE;
    features13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &executable};
    features13.subgroupSizeControl = features13.computeFullSubgroups = size_control;
    // No work is submitted, but a device needs a queue.
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    const char* extension_name = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = &extension_name;
    check(vkCreateDevice(physical, &info, nullptr, &device), "Creating the Vulkan device");
    volkLoadDevice(device);

    const detail::DeviceRequest request{"vren_radix",
                                        VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
                                            VK_SUBGROUP_FEATURE_BALLOT_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT,
                                        "subgroup arithmetic, ballot and shuffle",
                                        kPushConstantBytes};
    DeviceBinding binding;
    binding.instance = instance;
    binding.physical_device = physical;
    binding.device = device;
    binding.get_instance_proc_addr = vkGetInstanceProcAddr;
    binding.subgroup_size_control_enabled = size_control;
    std::string why;
    if (detail::inspectDevice(binding, request, &facts, &why) != VK_SUCCESS)
      throw std::runtime_error(why);

    VkPushConstantRange push_range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push_range;
    check(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout), "Creating the pipeline layout");
    std::printf("%s, subgroup size %u%s\n", name.c_str(), facts.subgroup_size,
                facts.required_subgroup_size ? " (pinned)" : "");
    return true;
  }

  VkPipeline createPipeline(const PipelineRequest& request) const {
    std::vector<VkSpecializationMapEntry> entries;
    for (uint32_t id = 0; id < request.constants.size(); ++id) entries.push_back({id, 4 * id, 4});
    const VkSpecializationInfo specialization{static_cast<uint32_t>(entries.size()), entries.data(),
                                              4 * request.constants.size(), request.constants.data()};
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = request.shader.bytes;
    module_info.pCode = request.shader.code;
    VkShaderModule module = VK_NULL_HANDLE;
    check(vkCreateShaderModule(device, &module_info, nullptr, &module),
          "Creating the shader module of " + request.name);

    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup_size{
        VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
    subgroup_size.requiredSubgroupSize = facts.required_subgroup_size;
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.stage.pSpecializationInfo = &specialization;
    if (facts.required_subgroup_size) {
      info.stage.pNext = &subgroup_size;
      info.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    }
    info.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    const VkResult result = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
    vkDestroyShaderModule(device, module, nullptr);
    check(result, "Creating the pipeline " + request.name);
    return pipeline;
  }

  // Appends ` stat=value` for every statistic of every executable of the pipeline to *line.
  VkResult describeStatistics(VkPipeline pipeline, std::string* line) const {
    VkPipelineInfoKHR pipeline_info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    pipeline_info.pipeline = pipeline;
    uint32_t executables = 0;
    VkResult result = vkGetPipelineExecutablePropertiesKHR(device, &pipeline_info, &executables, nullptr);
    for (uint32_t e = 0; e < executables && result == VK_SUCCESS; ++e) {
      VkPipelineExecutableInfoKHR executable{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
      executable.pipeline = pipeline;
      executable.executableIndex = e;
      uint32_t n = 0;
      result = vkGetPipelineExecutableStatisticsKHR(device, &executable, &n, nullptr);
      std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
      if (result == VK_SUCCESS) result = vkGetPipelineExecutableStatisticsKHR(device, &executable, &n, stats.data());
      for (uint32_t i = 0; i < n && result == VK_SUCCESS; ++i) {
        // Names like "Register Count": underscores keep each statistic one word.
        std::string stat = stats[i].name;
        std::replace(stat.begin(), stat.end(), ' ', '_');
        if (executables > 1) stat = std::to_string(e) + "." + stat;
        *line += "  ";
        *line += stat;
        *line += '=';
        *line += formatValue(stats[i]);
      }
    }
    return result;
  }

  void report(const PipelineRequest& request) const {
    const VkPipeline pipeline = createPipeline(request);
    std::string line;
    const VkResult result = describeStatistics(pipeline, &line);
    vkDestroyPipeline(device, pipeline, nullptr);
    check(result, "Reading the statistics of " + request.name);
    std::printf("%-34s%s\n", request.name.c_str(),
                line.empty() ? "  (the driver reports no statistics)" : line.c_str());
  }

  // The scan pass at tuning t, as radix_sort.cpp specializes it.
  PipelineRequest radixPipeline(const char* pass, Spirv shader, const TuningConfig& t, uint32_t value_slots) const {
    const detail::PipelineSpec spec{shader.code, shader.bytes, t.workgroup_size, t.keys_per_thread,
                                    std::max(1u, t.workgroup_size / facts.min_subgroup_size), value_slots,
                                    t.digit_bits};
    return request(pass, spec);
  }
  PipelineRequest request(const char* pass, const detail::PipelineSpec& spec) const {
    const auto values = detail::specializationValues(spec);
    return {pipelineName(pass, {spec.workgroup_size, spec.keys_per_thread, spec.digit_bits}),
            {spec.code, spec.code_size}, std::vector<uint32_t>(values.begin(), values.end())};
  }

  void reportRadix(const std::vector<TuningConfig>& tunings) const {
    std::set<uint32_t> digit_widths;
    for (const TuningConfig& asked : tunings) {
      // The sorter's own table of pipelines for this tuning (u32 keys), less the order-mapped
      // variants and the setup passes.
      detail::KeyPipelines plan = detail::planKeyPipelines(asked, facts, 1);
      for (const detail::KeyPipelineRow& row : detail::keyPipelineRows(plan, facts, 1)) {
        if (row.name.ends_with("_mapped") || row.name.find("setup") != std::string::npos) continue;
        report(request(("radix_" + row.name).c_str(), row.spec));
      }
      digit_widths.insert(plan.tuning.digit_bits);
    }
    // The scan's bins follow the digit width.
    const uint32_t scan_size = std::min(kMaxScanWorkgroupSize, detail::floorPow2(facts.max_workgroup_size));
    for (uint32_t bits : digit_widths)
      report(radixPipeline("radix_scan", spirv(vren_radix_scan_spv), {scan_size, 1, bits}, 1));
  }

  void reportMaterials() const {
    const uint32_t workgroup =
        std::max(detail::floorPow2(std::min(detail::kMaterialTuning.workgroup_size, facts.max_workgroup_size)),
                 detail::floorPow2(facts.max_subgroup_size));
    for (uint32_t bits : detail::kMaterialFastBits) {
      const uint32_t materials = std::min(1u << bits, workgroup);  // one material per thread, at most
      const auto values = detail::materialSpecializationValues(
          detail::kMaterialTuning, workgroup, std::max(1u, workgroup / facts.min_subgroup_size), materials, bits,
          detail::pollsWithAtomics(facts.driver_id));
      const std::vector<uint32_t> c(values.begin(), values.end());
      // Named workgroup x rounds x materials.
      const std::initializer_list<uint32_t> shape = {workgroup, detail::kMaterialTuning.min_rounds, materials};
      report({pipelineName("materials_fast_count", shape), spirv(vren_radix_materials_fast_count_spv), c});
      report({pipelineName("materials_fast_scatter", shape), spirv(vren_radix_materials_fast_scatter_spv), c});
    }
  }

  // The packer's options (conflict resolution, container order) are push-constant flags: one
  // pipeline serves them all.
  void reportTiles() const {
    const TilePackerCreateInfo defaults{};
    const uint32_t workgroup = detail::tilePackWorkgroupSize(0, defaults.tile_size, facts);
    const auto values =
        detail::tilePackSpecializationValues(workgroup, defaults.tile_size, defaults.container_count, defaults.alignment);
    const std::vector<uint32_t> c(values.begin(), values.end());
    report({pipelineName("tiles_pack", {workgroup}), spirv(vren_radix_tiles_pack_spv), c});
  }
};

bool parseTuning(const char* text, TuningConfig* out) {
  unsigned w = 0, k = 0, d = 4;
  char extra = 0;
  const int n = std::sscanf(text, "%ux%ux%u%c", &w, &k, &d, &extra);
  if (n < 2 || n > 3 || w == 0 || k == 0 || (d != 4 && d != 8)) return false;
  *out = {w, k, d};
  out->lookback_workgroup_size = w;  // the look-back pass: the same shape, unclamped
  out->lookback_keys_per_thread = k;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int device_index = -1;
  std::vector<TuningConfig> tunings;
  unsigned pairs_keys = 0, pairs_threads = 0, pairs_loop = 2, values_apart = 2, in_stage = 2;  // 2: the tuning's
  unsigned large_keys = 0, large_threads = 0, pairs_per_unit = 0;
  char extra = 0;
  for (int i = 1; i < argc; ++i) {
    TuningConfig t;
    if (std::strncmp(argv[i], "--device=", 9) == 0) {
      device_index = std::atoi(argv[i] + 9);
    } else if (std::strncmp(argv[i], "--tuning=", 9) == 0 && parseTuning(argv[i] + 9, &t)) {
      tunings.push_back(t);
    } else if (std::sscanf(argv[i], "--large-tile=%ux%u%c", &large_keys, &large_threads, &extra) == 2 &&
               large_keys > 0 && large_keys <= 64 && large_threads > 0 && large_threads <= 1024) {
    } else if (std::sscanf(argv[i], "--large-pairs-tile=%ux%u%c", &pairs_keys, &pairs_threads, &extra) == 2 &&
               pairs_keys > 0 && pairs_keys <= 64 && pairs_threads > 0 && pairs_threads <= 1024) {
    } else if (std::sscanf(argv[i], "--large-pairs-loop=%u%c", &pairs_loop, &extra) == 1 && pairs_loop < 2) {
    } else if (std::sscanf(argv[i], "--values-apart=%u%c", &values_apart, &extra) == 1 && values_apart < 2) {
    } else if (std::sscanf(argv[i], "--counters-in-stage=%u%c", &in_stage, &extra) == 1 && in_stage < 2) {
    } else if (std::sscanf(argv[i], "--large-pairs-per-unit=%u%c", &pairs_per_unit, &extra) == 1 &&
               pairs_per_unit > 0 && pairs_per_unit <= 64) {
    } else {
      std::fprintf(
          stderr,
          "Cannot read the argument '%s'.\nUsage: vren_radix_pipeline_stats [--device=N] [--tuning=WxK[xD]]... "
          "[--large-tile=KxW] [--large-pairs-tile=KxW] [--large-pairs-loop=0|1] [--values-apart=0|1] "
          "[--counters-in-stage=0|1] [--large-pairs-per-unit=N]\n",
          argv[i]);
      return 2;
    }
  }
  const bool device_tuning = tunings.empty();
  if (device_tuning) tunings = {{256, 4, 4}, {256, 8, 8}, {256, 4, 8}};

  try {
    Tool tool;
    tool.createInstance();
    tool.pickDevice(device_index);
    if (!tool.createDevice()) return 1;
    if (device_tuning) {
      TuningConfig t = detail::defaultTuning(tool.facts.vendor_id);
      if (pairs_keys) t.large_tile_pairs_keys_per_thread = pairs_keys, t.large_tile_pairs_workgroup_size = pairs_threads;
      if (large_keys) t.large_tile_keys_per_thread = large_keys, t.large_tile_workgroup_size = large_threads;
      if (pairs_loop < 2) t.large_tile_pairs_loop = pairs_loop;
      if (values_apart < 2) t.lookback_values_apart = values_apart;
      if (in_stage < 2) t.lookback_counters_in_stage = in_stage;
      if (pairs_per_unit) t.large_tile_pairs_per_unit = pairs_per_unit;
      tunings.insert(tunings.begin(), t);
    }
    tool.reportRadix(tunings);
    tool.reportMaterials();
    tool.reportTiles();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
