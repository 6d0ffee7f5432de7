#include "materials_command.h"

#include <volk.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "files.h"
#include "png.h"
#include "vren_radix/context.h"
#include "vren_radix/materials.h"

namespace vren::radix::cli {
namespace {

constexpr uint32_t kMaxMaterials = 65536;

int usageError(const std::string& message) { return cli::usageError("vren-radix materials", message); }
int failure(const std::string& message) { return cli::failure("vren-radix materials", message); }

bool parseUint(const std::string& text, uint64_t max, uint64_t* value) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  *value = std::stoull(text);
  return *value <= max;
}

struct Arguments {
  std::string ids_path;
  std::string out_dir;
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t materials = 0;
  uint32_t void_material = kNoVoidMaterial;
  uint32_t alignment = 1;
  int device = -1;
  bool quiet = false;
};

// Returns kOk, or the exit code after printing the usage error.
int parseArguments(int argc, char** argv, Arguments* a) {
  static const char* const kFlags[] = {"--ids",           "--width", "--height", "--materials", "--out",
                                       "--void-material", "--align", "--device"};
  std::map<std::string, std::string> flags;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quiet") {
      a->quiet = true;
      continue;
    }
    if (std::find(std::begin(kFlags), std::end(kFlags), arg) == std::end(kFlags))
      return usageError("Unknown option '" + arg + "'.");
    if (i + 1 >= argc) return usageError("Option '" + arg + "' needs a value.");
    flags[arg] = argv[++i];
  }
  for (const char* required : {"--ids", "--width", "--height", "--materials", "--out"})
    if (!flags.count(required)) return usageError("materials needs --ids, --width, --height, --materials and --out.");
  a->ids_path = flags["--ids"];
  a->out_dir = flags["--out"];

  uint64_t v = 0;
  if (!parseUint(flags["--width"], UINT32_MAX, &v) || v == 0)
    return usageError("--width takes a positive number of pixels, not '" + flags["--width"] + "'.");
  a->width = static_cast<uint32_t>(v);
  if (!parseUint(flags["--height"], UINT32_MAX, &v) || v == 0)
    return usageError("--height takes a positive number of pixels, not '" + flags["--height"] + "'.");
  a->height = static_cast<uint32_t>(v);
  if (uint64_t{a->width} * a->height > (uint64_t{1} << 31))
    return usageError("--width times --height exceeds 2^31 pixels.");
  if (!parseUint(flags["--materials"], kMaxMaterials, &v) || v == 0)
    return usageError("--materials takes a material count from 1 to 65536, not '" + flags["--materials"] + "'.");
  a->materials = static_cast<uint32_t>(v);
  if (flags.count("--void-material")) {
    if (!parseUint(flags["--void-material"], a->materials - 1, &v))
      return usageError("--void-material takes a material ID below --materials (" + std::to_string(a->materials) +
                        "), not '" + flags["--void-material"] + "'.");
    a->void_material = static_cast<uint32_t>(v);
  }
  if (flags.count("--align")) {
    if (!parseUint(flags["--align"], 1024, &v) || v == 0 || (v & (v - 1)) != 0)
      return usageError("--align takes a power of two from 1 to 1024, not '" + flags["--align"] + "'.");
    a->alignment = static_cast<uint32_t>(v);
  }
  if (flags.count("--device")) {
    if (!parseUint(flags["--device"], 1024, &v))
      return usageError("--device takes a device number from `vren-radix info`, not '" + flags["--device"] + "'.");
    a->device = static_cast<int>(v);
  }
  return kOk;
}

// Buffers freed with the context that made them, on every path out.
struct Buffers {
  Context& ctx;
  std::vector<GpuBuffer> all;
  explicit Buffers(Context& c) : ctx(c) {}
  ~Buffers() {
    for (GpuBuffer& b : all) ctx.destroyBuffer(&b);
  }
  bool add(VkDeviceSize size, VkBufferUsageFlags usage, bool host_visible, std::string* error) {
    GpuBuffer b;
    if (!ctx.createBuffer(size, usage, host_visible, &b, error)) return false;
    all.push_back(b);
    return true;
  }
};

struct SortOutput {
  std::vector<uint32_t> counts, offsets, dispatch, new_to_old;
  double gpu_ms = -1;
};

bool sortOnGpu(Context& ctx, const Arguments& a, const std::vector<uint32_t>& ids, SortOutput* out, std::string* error) {
  MaterialSorterCreateInfo create_info = ctx.createInfo<MaterialSorterCreateInfo>();
  MaterialSorter* raw = nullptr;
  std::string why;
  if (createMaterialSorter(create_info, &raw, &why) != VK_SUCCESS) {
    *error = "Device '" + ctx.device().name + "': " + why;
    return false;
  }
  std::unique_ptr<MaterialSorter, void (*)(MaterialSorter*)> sorter(raw, destroyMaterialSorter);
  const uint32_t max_materials = getMaterialSorterProperties(sorter.get()).max_material_count;
  if (a.materials > max_materials) {
    *error = "--materials " + std::to_string(a.materials) + " exceeds this device's limit of " +
             std::to_string(max_materials) + " materials.";
    return false;
  }

  MaterialSortInfo info;
  info.pixel_count = static_cast<uint32_t>(ids.size());
  info.material_count = a.materials;
  info.options.range_alignment = a.alignment;
  info.options.void_material = a.void_material;
  const MaterialSortRequirements req =
      getMaterialSortRequirements(sorter.get(), info.pixel_count, info.material_count, info.options);
  const VkDeviceSize ids_bytes = VkDeviceSize{info.pixel_count} * 4;
  // Outputs are read back into one staging buffer, in this order.
  const VkDeviceSize out_sizes[] = {req.counts_size, req.offsets_size, req.dispatch_size, req.new_to_old_size};
  VkDeviceSize out_at[4], staging_bytes = 0;
  for (int i = 0; i < 4; ++i) {
    out_at[i] = staging_bytes;
    staging_bytes += (out_sizes[i] + 15) / 16 * 16;
  }
  staging_bytes = std::max(staging_bytes, ids_bytes);

  Buffers buffers(ctx);
  if (!buffers.add(ids_bytes, req.usage, false, error) || !buffers.add(req.chunk_counts_size, req.usage, false, error) ||
      !buffers.add(req.counts_size, req.usage, false, error) || !buffers.add(req.offsets_size, req.usage, false, error) ||
      !buffers.add(req.dispatch_size, req.dispatch_usage, false, error) ||
      !buffers.add(req.new_to_old_size, req.usage, false, error) ||
      !buffers.add(staging_bytes, 0, true, error))
    return false;
  const GpuBuffer& staging = buffers.all[6];
  info.material_ids = {buffers.all[0].buffer, 0, ids_bytes};
  info.chunk_counts = {buffers.all[1].buffer, 0, req.chunk_counts_size};
  info.counts = {buffers.all[2].buffer, 0, req.counts_size};
  info.offsets = {buffers.all[3].buffer, 0, req.offsets_size};
  info.dispatch = {buffers.all[4].buffer, 0, req.dispatch_size};
  info.new_to_old = {buffers.all[5].buffer, 0, req.new_to_old_size};
  if (const char* invalid = validateMaterialSortInfo(sorter.get(), info)) {
    *error = invalid;
    return false;
  }

  std::memcpy(staging.mapped, ids.data(), ids_bytes);
  const bool ok = ctx.submit(
      [&](VkCommandBuffer cmd) {
        ctx.cmdCopy(cmd, staging.buffer, 0, info.material_ids.buffer, 0, ids_bytes);
        ctx.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
        cmdSortMaterials(sorter.get(), cmd, info);
        ctx.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const BufferRange* outputs[] = {&info.counts, &info.offsets, &info.dispatch, &info.new_to_old};
        for (int i = 0; i < 4; ++i) ctx.cmdCopy(cmd, outputs[i]->buffer, 0, staging.buffer, out_at[i], out_sizes[i]);
        ctx.cmdBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
      },
      error, &out->gpu_ms);
  if (!ok) return false;

  const auto* words = static_cast<const uint32_t*>(staging.mapped);
  auto take = [&](int i, size_t count) {
    const uint32_t* first = words + out_at[i] / 4;
    return std::vector<uint32_t>(first, first + count);
  };
  out->counts = take(0, a.materials);
  out->offsets = take(1, a.materials);
  out->dispatch = take(2, size_t{a.materials} * 3);
  out->new_to_old = take(3, materialSlotCount(out->counts, a.alignment));
  return true;
}

// Writes every output, or none: files already written are removed when a later one fails.
bool writeOutputs(const Arguments& a, const std::vector<uint32_t>& ids, const SortOutput& out, std::string* error) {
  namespace fs = std::filesystem;
  const fs::path dir(a.out_dir);
  std::vector<std::string> written;
  auto undo = [&] {
    for (const auto& path : written) std::remove(path.c_str());
    return false;
  };
  const std::pair<const char*, const std::vector<uint32_t>*> files[] = {
      {"counts.u32", &out.counts}, {"offsets.u32", &out.offsets}, {"dispatch.u32", &out.dispatch},
      {"new_to_old.u32", &out.new_to_old}};
  for (const auto& [name, words] : files) {
    const std::string path = (dir / name).string();
    if (!writeWordsAtomically(path, words->data(), words->size(), error)) return undo();
    written.push_back(path);
  }

  std::vector<uint8_t> rgb(size_t{a.width} * a.height * 3);
  for (size_t p = 0; p < ids.size(); ++p) png::labelColour(ids[p], false, &rgb[p * 3]);
  std::string path = (dir / "ids.png").string();
  if (!png::writeRgb(path, a.width, a.height, rgb, error)) return undo();
  written.push_back(path);

  // Slot i at row i / width, column i % width; padding and the unused tail stay black.
  const uint32_t rows = static_cast<uint32_t>(std::max<uint64_t>(1, (out.new_to_old.size() + a.width - 1) / a.width));
  rgb.assign(size_t{a.width} * rows * 3, 0);
  for (size_t i = 0; i < out.new_to_old.size(); ++i)
    if (out.new_to_old[i] != kPaddingSlot && out.new_to_old[i] < ids.size())
      png::labelColour(ids[out.new_to_old[i]], false, &rgb[i * 3]);
  path = (dir / "sorted.png").string();
  if (!png::writeRgb(path, a.width, rows, rgb, error)) return undo();
  return true;
}

}  // namespace

int runMaterials(int argc, char** argv) {
  Arguments a;
  if (int code = parseArguments(argc, argv, &a); code != kOk) return code;

  std::string error;
  std::vector<uint32_t> ids;
  if (!readWords(a.ids_path, &ids, &error)) return failure(error);
  const uint64_t pixels = uint64_t{a.width} * a.height;
  if (ids.size() != pixels)
    return failure("'" + a.ids_path + "' holds " + std::to_string(ids.size()) + " IDs (" + std::to_string(ids.size() * 4) +
                   " bytes), but --width " + std::to_string(a.width) + " x --height " + std::to_string(a.height) +
                   " needs " + std::to_string(pixels) + " (" + std::to_string(pixels * 4) + " bytes).");
  for (size_t p = 0; p < ids.size(); ++p) {
    if (ids[p] >= a.materials)
      return failure("Pixel " + std::to_string(p) + " (x " + std::to_string(p % a.width) + ", y " +
                     std::to_string(p / a.width) + ") has material ID " + std::to_string(ids[p]) +
                     ", but --materials is " + std::to_string(a.materials) + ": every ID must be below it.");
  }
  if (!createDirectories(a.out_dir, &error)) return failure(error);

  ContextOptions options;
  options.device_index = a.device;
  auto ctx = Context::create(options, &error);
  if (!ctx) return failure(error);
  SortOutput out;
  if (!sortOnGpu(*ctx, a, ids, &out, &error)) return failure(error);
  if (!writeOutputs(a, ids, out, &error)) return failure(error);

  if (a.quiet) return kOk;
  uint32_t used = 0;
  for (uint32_t c : out.counts) used += c > 0;
  std::printf("sorted %llu pixels of %u materials (%u in use) into %zu slots on %s; GPU %.3f ms with transfers\n",
              static_cast<unsigned long long>(pixels), a.materials, used, out.new_to_old.size(), ctx->device().name.c_str(),
              out.gpu_ms);
  std::printf("wrote %s/{counts,offsets,dispatch,new_to_old}.u32, ids.png, sorted.png\n", a.out_dir.c_str());
  return kOk;
}

}  // namespace vren::radix::cli
