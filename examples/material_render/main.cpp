// material_render: a compute ray caster whose shading runs one indirect dispatch per material.
//
//   1. trace.comp        camera rays through mirror bounces -> material ID + hit per pixel
//   2. cmdSortMaterials  -> counts, offsets, dispatch arguments, new_to_old
//   3. shade.comp        one pipeline per material, vkCmdDispatchIndirect on its arguments
// and, as the reference, the same shading by one "uber" dispatch that branches per pixel. The
// two images must be identical; the sorted one is written as a PNG.
//
//   vren_radix_material_render [--width W] [--height H] [--out FILE.png] [--device N] [--validate]
// Exit codes: 0 identical images, 1 a failure or a difference, 2 a usage error.
#include <volk.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "example_common.h"
#include "png.h"
#include "spirv/material_render_shade.h"
#include "spirv/material_render_trace.h"
#include "vren_radix/context.h"
#include "vren_radix/materials.h"

namespace {

using namespace vren::radix;

constexpr uint32_t kMaterialCount = 8;  // scene.glsl: six surfaces, then sky and void
constexpr uint32_t kVoidMaterial = 7;
constexpr uint32_t kShadingWorkgroup = 64;
constexpr uint32_t kUber = 0xFFFFFFFFu;
constexpr uint32_t kHitRecordBytes = 64;
constexpr const char* kMaterialNames[kMaterialCount] = {"matte", "checker", "marble", "glossy",
                                                        "gold",  "glow",    "sky",    "void"};

// render_shared.glsl's RenderConstants.
struct RenderConstants {
  VkDeviceAddress hits, ids, image, counts, offsets, new_to_old;
  uint32_t width, height;
};
static_assert(sizeof(RenderConstants) == 56, "RenderConstants must match render_shared.glsl");

struct Options {
  uint32_t width = 320;
  uint32_t height = 200;
  std::string out = "material_render.png";
  int device = -1;
  bool validate = false;
};

constexpr const char* kUsage =
    "usage: vren_radix_material_render [--width W] [--height H] [--out FILE.png] [--device N] [--validate]\n"
    "  renders the scene with one indirect dispatch per material and with one uber dispatch, checks\n"
    "  that the two images are identical, and writes the first (default 320x200, material_render.png)\n";

int usage(const std::string& message) { return examples::usageError("material_render", message, kUsage); }

bool parseUint(const char* text, uint32_t max, uint32_t* value) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (!*text || *end || text[0] == '-' || v > max) return false;
  *value = static_cast<uint32_t>(v);
  return true;
}

// Pipelines and a layout, destroyed with the object.
struct Pipelines {
  VkDevice device;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline trace = VK_NULL_HANDLE;
  VkPipeline uber = VK_NULL_HANDLE;
  VkPipeline shade[kMaterialCount] = {};

  explicit Pipelines(VkDevice d) : device(d) {}
  ~Pipelines() {
    vkDestroyPipeline(device, trace, nullptr);
    vkDestroyPipeline(device, uber, nullptr);
    for (VkPipeline p : shade) vkDestroyPipeline(device, p, nullptr);
    vkDestroyPipelineLayout(device, layout, nullptr);
  }

  bool create(std::string* error) {
    const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(RenderConstants)};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    if (vkCreatePipelineLayout(device, &layout_info, nullptr, &layout) != VK_SUCCESS) {
      *error = "Creating the pipeline layout failed.";
      return false;
    }
    bool ok = make(material_render_trace_spv, sizeof(material_render_trace_spv), 0, &trace) &&
              make(material_render_shade_spv, sizeof(material_render_shade_spv), kUber, &uber);
    for (uint32_t m = 0; ok && m < kMaterialCount; ++m)
      if (m != kVoidMaterial) ok = make(material_render_shade_spv, sizeof(material_render_shade_spv), m, &shade[m]);
    if (!ok) *error = "Creating the render pipelines failed.";
    return ok;
  }

  bool make(const uint32_t* code, size_t size, uint32_t material, VkPipeline* out) {
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = size;
    module_info.pCode = code;
    VkShaderModule module = VK_NULL_HANDLE;
    if (vkCreateShaderModule(device, &module_info, nullptr, &module) != VK_SUCCESS) return false;
    const uint32_t values[] = {kShadingWorkgroup, material};
    const VkSpecializationMapEntry entries[] = {{0, 0, 4}, {1, 4, 4}};
    const VkSpecializationInfo spec{2, entries, sizeof(values), values};
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT, module,
                  "main", &spec};
    info.layout = layout;
    const VkResult r = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, out);
    vkDestroyShaderModule(device, module, nullptr);
    return r == VK_SUCCESS;
  }
};

using examples::Buffers;

VkDeviceAddress addressOf(VkDevice device, VkBuffer buffer) {
  VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  info.buffer = buffer;
  return vkGetBufferDeviceAddress(device, &info);
}

int run(const Options& o) {
  std::string error;
  uint32_t messages = 0;
  auto ctx = examples::createContext(o.device, o.validate, &messages, &error);
  if (!ctx) {
    std::fprintf(stderr, "material_render: %s\n", error.c_str());
    return 1;
  }
  const VkDevice device = ctx->vkDevice();
  auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "material_render: %s\n", message.c_str());
    return 1;
  };

  MaterialSorterCreateInfo sorter_info;
  sorter_info.binding.instance = ctx->instance();
  sorter_info.binding.physical_device = ctx->physicalDevice();
  sorter_info.binding.device = device;
  sorter_info.binding.get_instance_proc_addr = vkGetInstanceProcAddr;
  sorter_info.binding.get_device_proc_addr = vkGetDeviceProcAddr;
  sorter_info.binding.subgroup_size_control_enabled = ctx->subgroupSizeControlEnabled();
  MaterialSorter* raw_sorter = nullptr;
  if (createMaterialSorter(sorter_info, &raw_sorter, &error) != VK_SUCCESS) return fail(error);
  std::unique_ptr<MaterialSorter, void (*)(MaterialSorter*)> sorter(raw_sorter, destroyMaterialSorter);
  Pipelines pipelines(device);
  if (!pipelines.create(&error)) return fail(error);

  const uint32_t pixels = o.width * o.height;
  MaterialSortInfo sort;
  sort.pixel_count = pixels;
  sort.material_count = kMaterialCount;
  sort.options.range_alignment = 32;  // a 32-wide subgroup never straddles two materials
  sort.options.void_material = kVoidMaterial;
  sort.options.shading_workgroup_size = kShadingWorkgroup;
  const MaterialSortRequirements req = getMaterialSortRequirements(sorter.get(), pixels, kMaterialCount, sort.options);
  const VkDeviceSize image_bytes = VkDeviceSize{pixels} * 4;
  Buffers buffers(*ctx);
  const GpuBuffer* hits = buffers.add(VkDeviceSize{pixels} * kHitRecordBytes, req.usage, false, &error);
  const GpuBuffer* ids = hits ? buffers.add(image_bytes, req.usage, false, &error) : nullptr;
  const GpuBuffer* chunk_counts = ids ? buffers.add(req.chunk_counts_size, req.usage, false, &error) : nullptr;
  const GpuBuffer* counts = chunk_counts ? buffers.add(req.counts_size, req.usage, false, &error) : nullptr;
  const GpuBuffer* offsets = counts ? buffers.add(req.offsets_size, req.usage, false, &error) : nullptr;
  const GpuBuffer* dispatch = offsets ? buffers.add(req.dispatch_size, req.dispatch_usage, false, &error) : nullptr;
  const GpuBuffer* new_to_old = dispatch ? buffers.add(req.new_to_old_size, req.usage, false, &error) : nullptr;
  const GpuBuffer* sorted_image = new_to_old ? buffers.add(image_bytes, req.usage, false, &error) : nullptr;
  const GpuBuffer* uber_image = sorted_image ? buffers.add(image_bytes, req.usage, false, &error) : nullptr;
  const GpuBuffer* readback =
      uber_image ? buffers.add(2 * image_bytes + kMaterialCount * 4, 0, true, &error) : nullptr;
  if (!readback) return fail(error);
  sort.material_ids = {ids->buffer, 0, ids->size};
  sort.chunk_counts = {chunk_counts->buffer, 0, chunk_counts->size};
  sort.counts = {counts->buffer, 0, counts->size};
  sort.offsets = {offsets->buffer, 0, offsets->size};
  sort.dispatch = {dispatch->buffer, 0, dispatch->size};
  sort.new_to_old = {new_to_old->buffer, 0, new_to_old->size};
  if (const char* invalid = validateMaterialSortInfo(sorter.get(), sort)) return fail(invalid);

  // Timestamps: 0 trace | 1 sort | 2 sorted shading | 3 uber shading | 4
  VkQueryPool queries = VK_NULL_HANDLE;
  VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  query_info.queryCount = 5;
  if (vkCreateQueryPool(device, &query_info, nullptr, &queries) != VK_SUCCESS) return fail("Creating a query pool failed.");
  auto stamp = [&](VkCommandBuffer cmd, uint32_t i) {
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, i);
  };

  RenderConstants pc{};
  pc.hits = addressOf(device, hits->buffer);
  pc.ids = addressOf(device, ids->buffer);
  pc.counts = addressOf(device, counts->buffer);
  pc.offsets = addressOf(device, offsets->buffer);
  pc.new_to_old = addressOf(device, new_to_old->buffer);
  pc.width = o.width;
  pc.height = o.height;
  const uint32_t max_x = getMaterialSorterProperties(sorter.get()).max_workgroup_count_x;
  const uint32_t uber_groups = (pixels + kShadingWorkgroup - 1) / kShadingWorkgroup;
  const uint32_t uber_y = (uber_groups + max_x - 1) / max_x;

  const bool submitted = ctx->submit(
      [&](VkCommandBuffer cmd) {
        vkCmdResetQueryPool(cmd, queries, 0, 5);
        vkCmdFillBuffer(cmd, sorted_image->buffer, 0, image_bytes, 0xFF000000u);  // opaque black: the void
        vkCmdFillBuffer(cmd, uber_image->buffer, 0, image_bytes, 0xFF000000u);
        ctx->cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
        stamp(cmd, 0);

        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines.trace);
        vkCmdPushConstants(cmd, pipelines.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
        vkCmdDispatch(cmd, (o.width + 7) / 8, (o.height + 7) / 8, 1);
        ctx->cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
        stamp(cmd, 1);

        cmdSortMaterials(sorter.get(), cmd, sort);
        ctx->cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                        VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                        VK_ACCESS_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_SHADER_READ_BIT);
        stamp(cmd, 2);

        pc.image = addressOf(device, sorted_image->buffer);
        vkCmdPushConstants(cmd, pipelines.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
        for (uint32_t m = 0; m < kMaterialCount; ++m) {
          if (m == kVoidMaterial) continue;
          vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines.shade[m]);
          vkCmdDispatchIndirect(cmd, dispatch->buffer, m * sizeof(VkDispatchIndirectCommand));
        }
        // Not needed for correctness (the uber pass writes another image); it keeps the two
        // timings apart.
        ctx->cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
        stamp(cmd, 3);

        pc.image = addressOf(device, uber_image->buffer);
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines.uber);
        vkCmdPushConstants(cmd, pipelines.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
        vkCmdDispatch(cmd, (uber_groups + uber_y - 1) / uber_y, uber_y, 1);
        ctx->cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                        VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        stamp(cmd, 4);

        const VkBufferCopy images[] = {{0, 0, image_bytes}};
        vkCmdCopyBuffer(cmd, sorted_image->buffer, readback->buffer, 1, images);
        const VkBufferCopy second{0, image_bytes, image_bytes};
        vkCmdCopyBuffer(cmd, uber_image->buffer, readback->buffer, 1, &second);
        const VkBufferCopy count_copy{0, 2 * image_bytes, kMaterialCount * 4};
        vkCmdCopyBuffer(cmd, counts->buffer, readback->buffer, 1, &count_copy);
        ctx->cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_ACCESS_HOST_READ_BIT);
      },
      &error);
  uint64_t ticks[5] = {};
  const bool timed = submitted && vkGetQueryPoolResults(device, queries, 0, 5, sizeof(ticks), ticks, 8,
                                                        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS;
  vkDestroyQueryPool(device, queries, nullptr);
  if (!submitted) return fail(error);

  const auto* words = static_cast<const uint32_t*>(readback->mapped);
  const uint32_t* sorted = words;
  const uint32_t* uber = words + pixels;
  const uint32_t* material_counts = words + 2 * size_t{pixels};
  uint32_t different = 0, first_different = pixels;
  for (uint32_t p = 0; p < pixels; ++p) {
    if (sorted[p] != uber[p]) {
      if (different++ == 0) first_different = p;
    }
  }

  std::vector<uint8_t> rgb(size_t{pixels} * 3);
  for (uint32_t p = 0; p < pixels; ++p)
    for (int c = 0; c < 3; ++c) rgb[size_t{p} * 3 + c] = static_cast<uint8_t>(sorted[p] >> (8 * c));
  if (!png::writeRgb(o.out, o.width, o.height, rgb, &error)) return fail(error);

  const DeviceInfo& d = ctx->device();
  std::printf("%ux%u on %s (subgroup size %u)\n", o.width, o.height, d.name.c_str(), d.subgroup_size);
  std::printf("pixels per material:");
  for (uint32_t m = 0; m < kMaterialCount; ++m) std::printf(" %s %u%s", kMaterialNames[m], material_counts[m],
                                                             m + 1 < kMaterialCount ? "," : "\n");
  if (timed) {
    const double ns = d.timestamp_period_ns * 1e-6;
    std::printf("GPU ms: trace %.3f, material sort %.3f, sorted shading %.3f (sort + shading %.3f), uber shading %.3f\n",
                (ticks[1] - ticks[0]) * ns, (ticks[2] - ticks[1]) * ns, (ticks[3] - ticks[2]) * ns,
                (ticks[3] - ticks[1]) * ns, (ticks[4] - ticks[3]) * ns);
  }
  std::printf("wrote %s\n", o.out.c_str());
  if (different) {
    std::fprintf(stderr, "material_render: the sorted and uber images differ in %u pixels (first: x %u, y %u).\n",
                 different, first_different % o.width, first_different / o.width);
    return 1;
  }
  if (messages) {
    std::fprintf(stderr, "material_render: %u validation messages.\n", messages);
    return 1;
  }
  std::printf("sorted and uber images are identical\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--validate") {
      o.validate = true;
      continue;
    }
    if (arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) return usage("option '" + arg + "' needs a value.");
    const char* value = argv[++i];
    uint32_t v = 0;
    if (arg == "--width" || arg == "--height") {
      if (!parseUint(value, 16384, &v) || v == 0) return usage(arg + " takes a size from 1 to 16384.");
      (arg == "--width" ? o.width : o.height) = v;
    } else if (arg == "--device") {
      if (!parseUint(value, 1024, &v)) return usage("--device takes a device number.");
      o.device = static_cast<int>(v);
    } else if (arg == "--out") {
      o.out = value;
    } else {
      return usage("unknown option '" + arg + "'.");
    }
  }
  return run(o);
}
