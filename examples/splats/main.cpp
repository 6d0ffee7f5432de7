// splats: the per-frame depth sort of Gaussian splats, as splat viewers do it, with vren_radix.
//
// A procedural scene of N Gaussians and a camera orbiting it over F frames. Each frame is one
// command buffer:
//   0. reset the draw command  vkCmdUpdateBuffer: vertexCount 4, instanceCount 0            | barrier
//   1. cull.comp               per visible splat a depth key and its ID in the next slot
//                              (atomicAdd on instanceCount), its projection at its ID      | barrier
//   2. cmdSortIndirect         the keys with the IDs as values (or an argsort), the count
//                              read at offsetof(VkDrawIndirectCommand, instanceCount), the
//                              last frame's visible count as SortInfo::expected_count       | barrier
//   3. blend.comp              the sorted splats back to front into an RGBA8 image          | barrier
//   4. copies for the host: the draw command, the image, and what the checks need
// A viewer would draw the sorted splats (vkCmdDrawIndirect on the same draw command) where
// step 3 blends them.
//
// Keys: u32, the complement of the view depth's float bits, sorted ascending: far splats first.
// (KeyType::kF32 with descending = true on the depth itself gives the same order.)
// --argsort sorts the keys with argsort = true: the values come back as indices into the
// visible list, so the cull writes the visible IDs, in slot order, to a buffer of their own
// and the blend reads visible_ids[index].
//
// --verify runs under the validation layer and checks every frame against the CPU: the visible
// count, the cull's keys and IDs (the same splats and keys, bit for bit), the sort (a stable sort
// of the cull's slots by key) and, up to 256x256 pixels and 50000 splats, the image (a CPU
// rendering of the sorted splats, within 2/255 per channel).
// --bench times the cull, the sort and the blend with timestamps over F frames after a warm-up
// of about 0.5 s, and prints the medians as a table and a CSV line.
// --dump-keys writes one frame's keys (the last, with --bench the first), as the cull left them
// for the sort: raw little-endian u32, the visible count of them.
//
// Exit codes: 0 success, 1 a failure or a difference, 2 a usage error.
#include <unistd.h>
#include <volk.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "args.h"
#include "files.h"
#include "gpu_timing.h"
#include "example_common.h"
#include "png.h"
#include "reference.h"
#include "scene.h"
#include "spirv/splats_blend.h"
#include "spirv/splats_cull.h"
#include "splats_shared.h"
#include "vren_radix/context.h"
#include "warmup.h"

namespace {

using namespace vren::radix;
using namespace vren::radix::splats;

constexpr uint32_t kMaxSplats = 1u << 28;
constexpr uint32_t kMaxImageSide = 16384;
// --verify compares images up to this size (the CPU renders them).
constexpr uint64_t kCompareMaxPixels = 256 * 256;
constexpr uint32_t kCompareMaxSplats = 50000;
constexpr uint32_t kImageTolerance = 2;  // per 8-bit channel: GPU and CPU round differently
constexpr uint32_t kTimestamps = 4;      // before the cull, after the cull, the sort and the blend
constexpr uint32_t kQuadVertices = 4;
static_assert(sizeof(DrawCommand) == sizeof(VkDrawIndirectCommand) &&
                  offsetof(DrawCommand, instance_count) == offsetof(VkDrawIndirectCommand, instanceCount),
              "DrawCommand must be laid out like VkDrawIndirectCommand");

struct Options {
  uint32_t splats = 20000;
  uint32_t frames = 3;
  uint32_t width = 256;
  uint32_t height = 256;
  uint64_t seed = 1;
  std::string out;
  std::string dump_keys;
  int device = -1;
  bool verify = false;
  bool argsort = false;
  bool bench = false;
  bool no_expected = false;  // --no-expected-count
};

constexpr const char* kUsage =
    "usage: vren_radix_splats --out DIR [--splats N] [--frames F] [--width W] [--height H] [--seed S]\n"
    "                         [--argsort] [--verify] [--dump-keys FILE] [--device N]\n"
    "       vren_radix_splats --bench [--splats N] [--frames F] [--width W] [--height H] [--argsort] [--out DIR] ...\n"
    "  Culls, depth-sorts (vren_radix, count read on the GPU) and blends N Gaussian splats for F frames of an\n"
    "  orbiting camera, and writes DIR/splats_NNN.png per frame (default: 20000 splats, 3 frames, 256x256).\n"
    "  --argsort    sort the keys alone (argsort) instead of keys with splat IDs as values\n"
    "  --verify     validation layer on; check every frame's cull, sort and image against the CPU\n"
    "               (with --bench, the first frame's)\n"
    "  --bench      time the cull, the sort and the blend per frame (median of F frames after a warm-up);\n"
    "               --out then writes the first frame only\n"
    "  --dump-keys  write one frame's unsorted keys to FILE (raw little-endian u32)\n"
    "  --no-expected-count  sort without the last frame's visible count as SortInfo::expected_count\n"
    "               (the sorter then takes its largest tiles)\n";

int usage(const std::string& message) { return examples::usageError("splats", message, kUsage); }

int failure(const std::string& message) {
  std::fprintf(stderr, "splats: %s\n", message.c_str());
  return 1;
}

// 0 with the options filled, else the exit code (usage errors print their sentence).
int parseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0) {
      std::fputs(kUsage, stdout);
      return -1;
    }
  }
  std::map<std::string, std::string> flags;
  std::string error;
  if (!cli::parseFlags(argc - 1, argv + 1,
                       {"--splats", "--frames", "--width", "--height", "--seed", "--out", "--dump-keys", "--device"},
                       &flags, &error, {"--verify", "--argsort", "--bench", "--no-expected-count"}))
    return usage(error);
  auto number = [&](const char* flag, uint64_t min, uint64_t max, uint64_t* value) {
    if (!flags.count(flag)) return true;
    return cli::parseUint(flags[flag], max, value) && *value >= min;
  };
  uint64_t splats = o->splats, frames = o->frames, width = o->width, height = o->height, device = 0;
  if (!number("--splats", 1, kMaxSplats, &splats))
    return usage("--splats takes a number of splats from 1 to " + std::to_string(kMaxSplats) + ".");
  if (!number("--frames", 1, 1000000, &frames)) return usage("--frames takes a number of frames from 1 to 1000000.");
  if (!number("--width", 1, kMaxImageSide, &width) || !number("--height", 1, kMaxImageSide, &height))
    return usage("--width and --height take a size from 1 to " + std::to_string(kMaxImageSide) + " pixels.");
  if (!number("--seed", 0, UINT64_MAX >> 1, &o->seed)) return usage("--seed takes a non-negative number.");
  if (!number("--device", 0, 1024, &device)) return usage("--device takes a device number (see `vren-radix info`).");
  o->splats = static_cast<uint32_t>(splats);
  o->frames = static_cast<uint32_t>(frames);
  o->width = static_cast<uint32_t>(width);
  o->height = static_cast<uint32_t>(height);
  o->device = flags.count("--device") ? static_cast<int>(device) : -1;
  o->out = flags.count("--out") ? flags["--out"] : "";
  o->dump_keys = flags.count("--dump-keys") ? flags["--dump-keys"] : "";
  o->verify = flags.count("--verify") > 0;
  o->argsort = flags.count("--argsort") > 0;
  o->bench = flags.count("--bench") > 0;
  o->no_expected = flags.count("--no-expected-count") > 0;
  if (flags.count("--out") && o->out.empty()) return usage("--out takes a directory.");
  if (flags.count("--dump-keys") && o->dump_keys.empty()) return usage("--dump-keys takes a file name.");
  if (o->out.empty() && !o->bench) return usage("--out DIR is required (the directory for the frames' PNGs).");
  return 0;
}

// Checks before any GPU work that the outputs can be written: --out is (or becomes) a writable
// directory, and --dump-keys names a file in a writable directory.
bool checkOutputs(const Options& o, std::string* error) {
  namespace fs = std::filesystem;
  if (!o.out.empty()) {
    std::error_code ec;
    fs::create_directories(o.out, ec);
    if (ec || !fs::is_directory(o.out)) {
      *error = "Cannot create the output directory '" + o.out + "'" + (ec ? ": " + ec.message() : "") + ".";
      return false;
    }
    if (access(o.out.c_str(), W_OK) != 0) {
      *error = "The output directory '" + o.out + "' is not writable.";
      return false;
    }
  }
  if (!o.dump_keys.empty()) {
    const fs::path parent = fs::path(o.dump_keys).parent_path();
    const std::string dir = parent.empty() ? "." : parent.string();
    if (fs::is_directory(o.dump_keys) || !fs::is_directory(dir) || access(dir.c_str(), W_OK) != 0) {
      *error = "Cannot write --dump-keys '" + o.dump_keys + "': its directory must exist and be writable.";
      return false;
    }
  }
  return true;
}

VkDeviceAddress addressOf(VkDevice device, VkBuffer buffer) {
  VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  info.buffer = buffer;
  return vkGetBufferDeviceAddress(device, &info);
}

VkDeviceAddress addressOf(VkDevice device, const GpuBuffer* buffer) {
  return addressOf(device, buffer->buffer);
}

uint32_t divCeil(uint32_t a, uint32_t b) {
  return a / b + (a % b != 0);
}

using examples::Buffers;

// What a frame copies to the host besides the draw command.
struct Copies {
  bool slots = false;   // the cull's keys and IDs, before the sort
  bool sorted = false;  // the sort's keys and values
  bool image = false;
};

// The example's GPU side: pipelines, buffers, and the recording of a frame.
class SplatRenderer {
 public:
  SplatRenderer(Context& ctx, const Options& o) : ctx_(ctx), o_(o), buffers_(ctx) {}
  ~SplatRenderer() {
    const VkDevice device = ctx_.vkDevice();
    vkDestroyPipeline(device, cull_, nullptr);
    vkDestroyPipeline(device, blend_, nullptr);
    vkDestroyPipelineLayout(device, layout_, nullptr);
  }
  SplatRenderer(const SplatRenderer&) = delete;
  SplatRenderer& operator=(const SplatRenderer&) = delete;

  bool create(const std::vector<Splat>& splats, bool readback_slots, std::string* error);
  void recordFrame(VkCommandBuffer cmd, const Camera& camera, const Copies& copies, VkQueryPool timestamps) const;

  // Host copies of the last frame's results (see Copies).
  const DrawCommand& draw() const { return *static_cast<const DrawCommand*>(host_draw_->mapped); }
  // The next frames' sorts expect about this many visible splats (SortInfo::expected_count): a
  // viewer knows the last frame's count, and the sorter chooses its tiles for it.
  void expectVisible(uint32_t n) {
    if (!o_.no_expected) sort_.expected_count = std::min(n, sort_.count);
  }
  const uint32_t* slotKeys() const { return static_cast<const uint32_t*>(host_slot_keys_->mapped); }
  const uint32_t* slotIds() const { return static_cast<const uint32_t*>(host_slot_ids_->mapped); }
  const uint32_t* sortedKeys() const { return static_cast<const uint32_t*>(host_sorted_keys_->mapped); }
  const uint32_t* sortedValues() const { return static_cast<const uint32_t*>(host_sorted_values_->mapped); }
  const uint32_t* image() const { return static_cast<const uint32_t*>(host_image_->mapped); }

 private:
  bool createPipelines(std::string* error);
  bool makePipeline(const uint32_t* code, size_t bytes, VkPipeline* out);

  Context& ctx_;
  const Options& o_;
  Buffers buffers_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline cull_ = VK_NULL_HANDLE;
  VkPipeline blend_ = VK_NULL_HANDLE;
  SortInfo sort_{};
  const GpuBuffer *splats_ = nullptr, *projected_ = nullptr, *keys_ = nullptr, *values_ = nullptr;
  const GpuBuffer *visible_ids_ = nullptr, *draw_ = nullptr, *image_ = nullptr;
  const GpuBuffer *host_draw_ = nullptr, *host_slot_keys_ = nullptr, *host_slot_ids_ = nullptr;
  const GpuBuffer *host_sorted_keys_ = nullptr, *host_sorted_values_ = nullptr, *host_image_ = nullptr;
  uint32_t cull_groups_x_ = 0, cull_groups_y_ = 0;
};

bool SplatRenderer::makePipeline(const uint32_t* code, size_t bytes, VkPipeline* out) {
  const VkDevice device = ctx_.vkDevice();
  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = bytes;
  module_info.pCode = code;
  VkShaderModule module = VK_NULL_HANDLE;
  if (vkCreateShaderModule(device, &module_info, nullptr, &module) != VK_SUCCESS) return false;
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                nullptr,
                0,
                VK_SHADER_STAGE_COMPUTE_BIT,
                module,
                "main",
                nullptr};
  info.layout = layout_;
  const VkResult r = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, out);
  vkDestroyShaderModule(device, module, nullptr);
  return r == VK_SUCCESS;
}

bool SplatRenderer::createPipelines(std::string* error) {
  const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                  static_cast<uint32_t>(std::max(sizeof(CullConstants), sizeof(BlendConstants)))};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.pushConstantRangeCount = 1;
  layout_info.pPushConstantRanges = &range;
  if (vkCreatePipelineLayout(ctx_.vkDevice(), &layout_info, nullptr, &layout_) != VK_SUCCESS) {
    *error = "Creating the pipeline layout failed.";
    return false;
  }
  if (!makePipeline(splats_cull_spv, sizeof(splats_cull_spv), &cull_) ||
      !makePipeline(splats_blend_spv, sizeof(splats_blend_spv), &blend_)) {
    *error = "Creating the cull and blend pipelines failed.";
    return false;
  }
  return true;
}

bool SplatRenderer::create(const std::vector<Splat>& splats, bool readback_slots, std::string* error) {
  if (!createPipelines(error)) return false;
  const uint32_t n = o_.splats;
  const MemoryRequirements req = getMemoryRequirements(ctx_.sorter(), n, /*with_values=*/true);
  const VkDeviceSize words = VkDeviceSize{n} * 4;
  const VkDeviceSize image_bytes = VkDeviceSize{o_.width} * o_.height * 4;
  Buffers& b = buffers_;
  splats_ = b.add(VkDeviceSize{n} * sizeof(Splat), req.usage, false, error);
  projected_ = splats_ ? b.add(VkDeviceSize{n} * sizeof(ProjectedSplat), req.usage, false, error) : nullptr;
  keys_ = projected_ ? b.add(words, req.usage, false, error) : nullptr;
  const GpuBuffer* keys_temp = keys_ ? b.add(req.keys_temp_size, req.usage, false, error) : nullptr;
  values_ = keys_temp ? b.add(words, req.usage, false, error) : nullptr;
  const GpuBuffer* values_temp = values_ ? b.add(req.values_temp_size, req.usage, false, error) : nullptr;
  const GpuBuffer* internal = values_temp ? b.add(req.internal_size, req.internal_usage, false, error) : nullptr;
  // The draw command is an indirect draw's argument in a viewer, and the sort's count.
  draw_ =
      internal ? b.add(sizeof(DrawCommand), req.usage | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, false, error) : nullptr;
  image_ = draw_ ? b.add(image_bytes, req.usage, false, error) : nullptr;
  host_draw_ = image_ ? b.add(sizeof(DrawCommand), 0, true, error) : nullptr;
  host_image_ = host_draw_ ? b.add(image_bytes, 0, true, error) : nullptr;
  bool ok = host_image_ != nullptr;
  if (ok && o_.argsort) ok = (visible_ids_ = b.add(words, req.usage, false, error)) != nullptr;
  if (ok && readback_slots)
    ok = (host_slot_keys_ = b.add(words, 0, true, error)) && (host_slot_ids_ = b.add(words, 0, true, error));
  if (ok && o_.verify)
    ok = (host_sorted_keys_ = b.add(words, 0, true, error)) && (host_sorted_values_ = b.add(words, 0, true, error));
  if (!ok) return false;

  sort_.count = n;  // the most the GPU-side count can be
  sort_.key_type = KeyType::kU32;
  sort_.keys = {keys_->buffer, 0, words};
  sort_.keys_temp = {keys_temp->buffer, 0, req.keys_temp_size};
  sort_.values = {values_->buffer, 0, words};
  sort_.values_temp = {values_temp->buffer, 0, req.values_temp_size};
  sort_.internal = {internal->buffer, 0, req.internal_size};
  sort_.argsort = o_.argsort;
  if (const char* invalid = validateSortInfo(ctx_.sorter(), sort_)) {
    *error = invalid;
    return false;
  }

  const uint32_t groups = divCeil(n, SPLATS_CULL_WORKGROUP);
  cull_groups_x_ = std::min(groups, ctx_.device().max_workgroup_count_x);
  cull_groups_y_ = divCeil(groups, cull_groups_x_);

  // Upload the scene through a host-visible staging buffer.
  Buffers staging(ctx_);
  const GpuBuffer* upload = staging.add(splats_->size, 0, true, error);
  if (!upload) return false;
  std::memcpy(upload->mapped, splats.data(), splats_->size);
  return ctx_.submit(
      [&](VkCommandBuffer cmd) {
        const VkBufferCopy region{0, 0, splats_->size};
        vkCmdCopyBuffer(cmd, upload->buffer, splats_->buffer, 1, &region);
        // Every frame's cull reads the splats.
        ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
      },
      error);
}

void SplatRenderer::recordFrame(VkCommandBuffer cmd, const Camera& camera, const Copies& copies,
                                VkQueryPool timestamps) const {
  const VkDevice device = ctx_.vkDevice();
  auto stamp = [&](uint32_t query) {
    if (timestamps) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps, query);
  };
  if (timestamps) vkCmdResetQueryPool(cmd, timestamps, 0, kTimestamps);

  // 0. Reset the draw command.
  const DrawCommand reset{kQuadVertices, 0, 0, 0};
  vkCmdUpdateBuffer(cmd, draw_->buffer, 0, sizeof(reset), &reset);
  // The cull's atomicAdd counts from the zeroed instanceCount.
  ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  stamp(0);

  // 1. Cull, key, project.
  CullConstants cull{};
  std::memcpy(cull.view, camera.view, sizeof(cull.view));
  cull.splats = addressOf(device, splats_);
  cull.projected = addressOf(device, projected_);
  cull.keys = addressOf(device, keys_);
  cull.slot_ids = addressOf(device, o_.argsort ? visible_ids_ : values_);
  cull.draw = addressOf(device, draw_);
  std::memcpy(cull.focal, camera.focal, sizeof(cull.focal));
  std::memcpy(cull.centre, camera.centre, sizeof(cull.centre));
  std::memcpy(cull.clip, camera.clip, sizeof(cull.clip));
  cull.near_plane = camera.near_plane;
  cull.count = o_.splats;
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, cull_);
  vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(cull), &cull);
  vkCmdDispatch(cmd, cull_groups_x_, cull_groups_y_, 1);
  // The sort reads the count, keys and IDs the cull wrote (cmdSortIndirect's contract:
  // COMPUTE_SHADER / SHADER_READ), and the blend the projections. A viewer that draws with the
  // draw command adds DRAW_INDIRECT / INDIRECT_COMMAND_READ here.
  ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | (copies.slots ? VK_PIPELINE_STAGE_TRANSFER_BIT : 0),
                  VK_ACCESS_SHADER_READ_BIT | (copies.slots ? VK_ACCESS_TRANSFER_READ_BIT : 0));
  if (copies.slots) {
    const VkBufferCopy region{0, 0, VkDeviceSize{o_.splats} * 4};
    vkCmdCopyBuffer(cmd, keys_->buffer, host_slot_keys_->buffer, 1, &region);
    vkCmdCopyBuffer(cmd, (o_.argsort ? visible_ids_ : values_)->buffer, host_slot_ids_->buffer, 1, &region);
    // The sort overwrites the keys and values only after the copies have read them (a write
    // after a read: the execution dependency is enough).
    ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0);
  }
  stamp(1);

  // 2. Sort, the count read on the GPU.
  const SortResult sorted =
      cmdSortIndirect(ctx_.sorter(), cmd, sort_, {draw_->buffer, offsetof(VkDrawIndirectCommand, instanceCount), 4});
  // The blend reads the sorted values (cmdSort's contract: written at COMPUTE_SHADER /
  // SHADER_WRITE), the checks copy them and the keys.
  ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | (copies.sorted ? VK_PIPELINE_STAGE_TRANSFER_BIT : 0),
                  VK_ACCESS_SHADER_READ_BIT | (copies.sorted ? VK_ACCESS_TRANSFER_READ_BIT : 0));
  stamp(2);

  // 3. Blend.
  BlendConstants blend{};
  std::memcpy(blend.background, kBackground, sizeof(kBackground));
  blend.projected = addressOf(device, projected_);
  blend.order = addressOf(device, sorted.values.buffer) + sorted.values.offset;  // values or values_temp
  blend.visible_ids = o_.argsort ? addressOf(device, visible_ids_) : 0;
  blend.draw = addressOf(device, draw_);
  blend.image = addressOf(device, image_);
  blend.width = o_.width;
  blend.height = o_.height;
  blend.max_count = o_.splats;
  blend.flags = o_.argsort ? SPLATS_FLAG_ARGSORT : 0;
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, blend_);
  vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(blend), &blend);
  vkCmdDispatch(cmd, divCeil(o_.width, SPLATS_TILE), divCeil(o_.height, SPLATS_TILE), 1);
  stamp(3);

  // 4. Copies for the host. They read the image the blend wrote.
  ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                  VK_ACCESS_TRANSFER_READ_BIT);
  const VkBufferCopy draw_region{0, 0, sizeof(DrawCommand)};
  vkCmdCopyBuffer(cmd, draw_->buffer, host_draw_->buffer, 1, &draw_region);
  if (copies.image) {
    const VkBufferCopy region{0, 0, image_->size};
    vkCmdCopyBuffer(cmd, image_->buffer, host_image_->buffer, 1, &region);
  }
  if (copies.sorted) {
    const VkBufferCopy keys{sorted.keys.offset, 0, VkDeviceSize{o_.splats} * 4};
    vkCmdCopyBuffer(cmd, sorted.keys.buffer, host_sorted_keys_->buffer, 1, &keys);
    const VkBufferCopy values{sorted.values.offset, 0, VkDeviceSize{o_.splats} * 4};
    vkCmdCopyBuffer(cmd, sorted.values.buffer, host_sorted_values_->buffer, 1, &values);
  }
  // The host reads the copies once the frame's fence has signalled.
  ctx_.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                  VK_ACCESS_HOST_READ_BIT);
}

// One frame's checks against the CPU (see the top of the file). Empty if all agree, else one
// sentence; *summary says what was compared.
std::string verifyFrame(const Options& o, const SplatRenderer& r, const std::vector<Splat>& splats,
                        const Camera& camera, std::string* summary) {
  const uint32_t count = r.draw().instance_count;
  if (r.draw().vertex_count != kQuadVertices) return "the draw command's vertexCount changed.";
  std::string why = checkCull(cullKeys(splats, camera), count, r.slotKeys(), r.slotIds());
  if (!why.empty()) return "cull: " + why;
  why = checkSort(count, r.slotKeys(), r.slotIds(), r.sortedKeys(), r.sortedValues(), o.argsort);
  if (!why.empty()) return "sort: " + why;
  *summary = "visible set, keys and sorted order match the CPU reference";
  if (uint64_t{o.width} * o.height > kCompareMaxPixels || o.splats > kCompareMaxSplats) {
    *summary += "; image not compared (over 256x256 pixels or 50000 splats)";
    return {};
  }
  std::vector<uint32_t> ids(count);
  for (uint32_t i = 0; i < count; ++i) ids[i] = o.argsort ? r.slotIds()[r.sortedValues()[i]] : r.sortedValues()[i];
  const ImageDifference d = compareImages(r.image(), renderImage(splats, camera, ids, o.width, o.height), o.width);
  if (d.max > kImageTolerance)
    return "image: pixel (" + std::to_string(d.x) + ", " + std::to_string(d.y) +
           ") differs from the CPU rendering by " + std::to_string(d.max) + "/255, more than " +
           std::to_string(kImageTolerance) + "/255.";
  *summary += "; image within " + std::to_string(d.max) + "/255 of the CPU rendering";
  return {};
}

bool writeFrame(const Options& o, const SplatRenderer& r, uint32_t frame, std::string* error) {
  std::vector<uint8_t> rgb(size_t{o.width} * o.height * 3);
  for (size_t p = 0; p < size_t{o.width} * o.height; ++p)
    for (int c = 0; c < 3; ++c) rgb[p * 3 + c] = static_cast<uint8_t>(r.image()[p] >> (8 * c));
  char name[32];
  std::snprintf(name, sizeof(name), "splats_%03u.png", frame);
  const std::string path = (std::filesystem::path(o.out) / name).string();
  if (!png::writeRgb(path, o.width, o.height, rgb, error)) return false;
  std::printf("wrote %s\n", path.c_str());
  return true;
}

int run(const Options& o) {
  std::string error;
  if (!checkOutputs(o, &error)) return failure(error);
  uint32_t messages = 0;
  // Synchronization validation sees the transfers; the shaders' accesses through buffer device
  // addresses are beyond it.
  auto ctx = examples::createContext(o.device, o.verify, &messages, &error);
  if (!ctx) return failure(error);
  if (o.splats > ctx->maxCount())
    return failure("--splats " + std::to_string(o.splats) + " is more than this device can sort (" +
                   std::to_string(ctx->maxCount()) + ").");

  const std::vector<Splat> splats = makeScene(o.splats, o.seed);
  SplatRenderer renderer(*ctx, o);
  if (!renderer.create(splats, o.verify || !o.dump_keys.empty(), &error)) return failure(error);
  const DeviceInfo& d = ctx->device();
  std::printf("%u splats, %ux%u, %s, on %s (subgroup size %u)\n", o.splats, o.width, o.height,
              o.argsort ? "argsort" : "key/value sort", d.name.c_str(), d.subgroup_size);

  // Frames with copies for the checks, the PNG and the dump: all of them, or with --bench the
  // first.
  const uint32_t checked_frames = o.bench ? 1 : o.frames;
  for (uint32_t f = 0; f < checked_frames; ++f) {
    const Camera camera = orbitCamera(f, o.frames, o.width, o.height);
    const bool last = f + 1 == checked_frames;
    const Copies copies{o.verify || (last && !o.dump_keys.empty()), o.verify, true};
    if (!ctx->submit([&](VkCommandBuffer cmd) { renderer.recordFrame(cmd, camera, copies, VK_NULL_HANDLE); }, &error))
      return failure(error);
    if (messages)
      return failure("Frame " + std::to_string(f) + " raised " + std::to_string(messages) + " validation messages.");
    const uint32_t visible = renderer.draw().instance_count;
    renderer.expectVisible(visible);
    std::string summary;
    if (o.verify) {
      const std::string why = verifyFrame(o, renderer, splats, camera, &summary);
      if (!why.empty()) return failure("Frame " + std::to_string(f) + ", " + why);
    }
    std::printf("frame %u: %u of %u splats visible%s%s\n", f, visible, o.splats, summary.empty() ? "" : "; ",
                summary.c_str());
    if (!o.out.empty() && !writeFrame(o, renderer, f, &error)) return failure(error);
    if (last && !o.dump_keys.empty()) {
      if (!cli::writeWordsAtomically(o.dump_keys, renderer.slotKeys(), visible, &error)) return failure(error);
      std::printf("wrote the %u unsorted keys of frame %u to %s\n", visible, f, o.dump_keys.c_str());
    }
  }
  if (!o.bench) return 0;

  // Timed frames: the warm-up cycles through the same cameras.
  if (d.timestamp_period_ns <= 0) return failure("Device '" + d.name + "' has no timestamp queries.");
  bench::Timestamps timestamps(ctx->vkDevice(), d.timestamp_period_ns);
  if (!timestamps.reserve(kTimestamps, &error)) return failure(error);
  uint32_t next = 0;
  const bool warm = bench::warmUp([&] {
    const Camera camera = orbitCamera(next++ % o.frames, o.frames, o.width, o.height);
    const bool ok =
        ctx->submit([&](VkCommandBuffer cmd) { renderer.recordFrame(cmd, camera, {}, VK_NULL_HANDLE); }, &error);
    renderer.expectVisible(renderer.draw().instance_count);
    return ok;
  });
  if (!warm) return failure(error);
  std::vector<double> cull_us, sort_us, blend_us, frame_us, visible;
  std::vector<uint64_t> ticks;
  for (uint32_t f = 0; f < o.frames; ++f) {
    const Camera camera = orbitCamera(f, o.frames, o.width, o.height);
    if (!ctx->submit([&](VkCommandBuffer cmd) { renderer.recordFrame(cmd, camera, {}, timestamps.pool()); }, &error) ||
        !timestamps.read(kTimestamps, &ticks, &error))
      return failure(error);
    cull_us.push_back(timestamps.microseconds(ticks[1] - ticks[0]));
    sort_us.push_back(timestamps.microseconds(ticks[2] - ticks[1]));
    blend_us.push_back(timestamps.microseconds(ticks[3] - ticks[2]));
    frame_us.push_back(timestamps.microseconds(ticks[3] - ticks[0]));
    visible.push_back(renderer.draw().instance_count);
    renderer.expectVisible(renderer.draw().instance_count);
  }
  if (messages) return failure("The timed frames raised " + std::to_string(messages) + " validation messages.");
  const char* sort_name = o.argsort ? (o.no_expected ? "argsort-largest" : "argsort")
                                    : (o.no_expected ? "pairs-largest" : "pairs");
  std::printf("median of %u frames after a 0.5 s warm-up, %.0f splats visible (median)\n", o.frames,
              bench::median(visible));
  std::printf("  %-14s %10s\n", "pass", "ms");
  std::printf("  %-14s %10.4f\n", "cull", bench::median(cull_us) * 1e-3);
  std::printf("  %-14s %10.4f\n", o.argsort ? "sort (argsort)" : "sort (pairs)", bench::median(sort_us) * 1e-3);
  std::printf("  %-14s %10.4f\n", "blend", bench::median(blend_us) * 1e-3);
  std::printf("  %-14s %10.4f\n", "frame", bench::median(frame_us) * 1e-3);
  std::printf("csv: device,splats,width,height,sort,frames,visible,cull_ms,sort_ms,blend_ms,frame_ms\n");
  std::printf("csv: \"%s\",%u,%u,%u,%s,%u,%.0f,%.6f,%.6f,%.6f,%.6f\n", d.name.c_str(), o.splats, o.width, o.height,
              sort_name, o.frames, bench::median(visible), bench::median(cull_us) * 1e-3, bench::median(sort_us) * 1e-3,
              bench::median(blend_us) * 1e-3, bench::median(frame_us) * 1e-3);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const int parsed = parseOptions(argc, argv, &o);
  if (parsed != 0) return parsed < 0 ? 0 : parsed;
  return run(o);
}
