// vren_radix_occupancy: how many workgroups run on the device at once, by the shared memory each
// takes (shaders/bench_occupancy.comp). Whether a second large-tile workgroup fits beside the
// first on an SM decides the large tiles' shape and grid (radix_onesweep.comp), and neither the
// Vulkan limits nor the driver's pipeline statistics tell it: on an H200, NVIDIA's driver gives
// an SM 48 KiB of shared memory in all, where CUDA gives up to 228 KiB.
//
// Usage: vren_radix_occupancy [--device=N] [--threads=W] [--shared=BYTES]... [--spin=N]
//   --device=N       the Vulkan device, numbered as by `vren-radix info`
//   --threads=W      threads per workgroup (default 256)
//   --shared=BYTES   shared memory per workgroup, a multiple of 4; repeatable. Default: 4 bytes,
//                    then a quarter, a third and half of the device's most per workgroup, each
//                    also 256 bytes over, and the most.
//   --spin=N         iterations each workgroup waits (default 60000; fewer on a CPU device)
//
// One line per size: the most workgroups seen running at once, and per SM (or compute unit)
// where the driver tells their number. The workgroups hold no registers to speak of: a shader's
// own registers may allow fewer (vren_radix_pipeline_stats gives them).
#include <volk.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "bench_pipeline.h"
#include "spirv/bench_occupancy.h"
#include "vren_radix/context.h"

namespace {

using vren::radix::Context;
using vren::radix::GpuBuffer;

struct OccupancyConstants {  // shaders/bench_occupancy.comp's push-constant block
  VkDeviceAddress counters;
  uint32_t spin;
};

// The probe's pipeline and counters; measure() remakes the pipeline for each shape.
class Probe {
 public:
  explicit Probe(Context& ctx) : ctx_(ctx), pipeline_(ctx.vkDevice()) {}
  ~Probe() {
    if (counters_.buffer) ctx_.destroyBuffer(&counters_);
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  bool init(std::string* error) {
    return ctx_.createBuffer(16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, &counters_, error) &&
           pipeline_.init(vren_radix_bench_occupancy_spv, sizeof(vren_radix_bench_occupancy_spv),
                          sizeof(OccupancyConstants), "probe", error);
  }

  // The most workgroups of `threads` threads and `shared` bytes seen running at once among
  // `groups`; false after saying why.
  bool measure(uint32_t threads, uint32_t shared, uint32_t groups, uint32_t spin, uint32_t* most, std::string* error) {
    const uint32_t values[2] = {threads, shared / 4};
    const VkSpecializationMapEntry entries[2] = {{0, 0, 4}, {1, 4, 4}};
    const VkSpecializationInfo specialization{2, entries, sizeof(values), values};
    if (!pipeline_.make(&specialization, "probe", error)) return false;
    std::memset(counters_.mapped, 0, 16);
    VkBufferDeviceAddressInfo address{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    address.buffer = counters_.buffer;
    const OccupancyConstants constants{vkGetBufferDeviceAddress(ctx_.vkDevice(), &address), spin};
    const bool ran = ctx_.submit(
        [&](VkCommandBuffer cmd) {
          pipeline_.bind(cmd, &constants, sizeof(constants));
          vkCmdDispatch(cmd, groups, 1, 1);
        },
        error);
    if (!ran) return false;
    const uint32_t* words = static_cast<const uint32_t*>(counters_.mapped);
    if (words[0] != 0) {
      *error = "The probe's workgroups did not all leave (" + std::to_string(words[0]) + " still counted).";
      return false;
    }
    *most = words[1];
    return true;
  }

 private:
  Context& ctx_;
  GpuBuffer counters_{};
  vren::radix::bench::BenchPipeline pipeline_;
};

bool parseFlag(const char* arg, const char* name, uint64_t max, uint64_t* value) {
  const size_t n = std::strlen(name);
  return std::strncmp(arg, name, n) == 0 && vren::radix::cli::parseUint(arg + n, max, value);
}

}  // namespace

int main(int argc, char** argv) {
  vren::radix::ContextOptions options;
  uint64_t threads = 256, spin = 0, value = 0;
  std::vector<uint32_t> sizes;
  for (int i = 1; i < argc; ++i) {
    if (parseFlag(argv[i], "--device=", 1u << 16, &value)) {
      options.device_index = static_cast<int>(value);
    } else if (parseFlag(argv[i], "--threads=", 1u << 16, &threads) && threads > 0) {
    } else if (parseFlag(argv[i], "--shared=", 1u << 24, &value) && value > 0 && value % 4 == 0) {
      sizes.push_back(static_cast<uint32_t>(value));
    } else if (parseFlag(argv[i], "--spin=", 65000, &spin) && spin > 0) {
    } else {
      std::fprintf(stderr,
                   "vren_radix_occupancy: cannot read '%s'.\nUsage: vren_radix_occupancy [--device=N] [--threads=W] "
                   "[--shared=BYTES]... [--spin=N] (BYTES a multiple of 4, N at most 65000)\n",
                   argv[i]);
      return 2;
    }
  }
  std::string error;
  std::unique_ptr<Context> ctx = Context::create(options, &error);
  if (!ctx) {
    std::fprintf(stderr, "vren_radix_occupancy: %s\n", error.c_str());
    return 1;
  }
  const vren::radix::DeviceInfo& d = ctx->device();
  VkPhysicalDeviceProperties properties;
  vkGetPhysicalDeviceProperties(ctx->binding().physical_device, &properties);
  const uint32_t most_threads =
      std::min(properties.limits.maxComputeWorkGroupSize[0], properties.limits.maxComputeWorkGroupInvocations);
  if (threads > most_threads) {
    std::fprintf(stderr, "vren_radix_occupancy: --threads=%u is over the device's most, %u.\n",
                 static_cast<uint32_t>(threads), most_threads);
    return 2;
  }
  const uint32_t most_shared = d.max_shared_memory / 4 * 4;
  if (sizes.empty()) {
    sizes = {4};
    for (uint32_t part : {4u, 3u, 2u}) {
      const uint32_t bytes = most_shared / part / 4 * 4;
      sizes.push_back(bytes);
      if (bytes + 256 <= most_shared) sizes.push_back(bytes + 256);
    }
    sizes.push_back(most_shared);
  }
  for (uint32_t bytes : sizes) {
    if (bytes > most_shared) {
      std::fprintf(stderr, "vren_radix_occupancy: --shared=%u is over the device's most per workgroup, %u bytes.\n",
                   bytes, most_shared);
      return 2;
    }
  }
  // SMs or compute units, where the driver tells their number (the sorter's large tiles run one
  // per unit by default).
  const uint32_t units = vren::radix::getSorterProperties(ctx->sorter()).tuning.large_tile_slots;
  const bool cpu = d.type == "CPU";
  if (spin == 0) spin = cpu ? 200 : 60000;
  // Enough workgroups for 16 at once on each unit (where their number is not told, 4096), and no
  // more than a CPU device runs soon.
  const uint32_t groups = cpu ? 16u : units ? units * 16u : 4096u;
  std::printf("device: %s (%s), %u bytes of shared memory a workgroup at most, %s\n", d.name.c_str(), d.driver.c_str(),
              most_shared, units ? (std::to_string(units) + " SMs or compute units").c_str() : "units not told");
  Probe probe(*ctx);
  if (!probe.init(&error)) {
    std::fprintf(stderr, "vren_radix_occupancy: %s\n", error.c_str());
    return 1;
  }
  for (uint32_t bytes : sizes) {
    uint32_t most = 0;
    if (!probe.measure(static_cast<uint32_t>(threads), bytes, groups, static_cast<uint32_t>(spin), &most, &error)) {
      std::fprintf(stderr, "vren_radix_occupancy: %s\n", error.c_str());
      return 1;
    }
    std::printf("%u threads, %6u bytes of shared memory: %5u workgroups at once of %u", static_cast<uint32_t>(threads),
                bytes, most, groups);
    if (units) std::printf(" (%.2f per unit)", static_cast<double>(most) / units);
    std::printf(most == groups ? ": all at once, so more may fit\n" : "\n");
  }
  return 0;
}
