#include "tuning.h"

#include <algorithm>

#include "radix_shared.h"

namespace vren::radix::detail {
namespace {

constexpr uint32_t kVendorNvidia = 0x10DE;
constexpr uint32_t kMaxTileSize = 32768;  // keeps the packed 16-bit bin counters from overflowing

constexpr TuningConfig kDefault = {256, 8};  // fits 32 KiB of shared memory with values
constexpr TuningConfig kNvidia = {256, 16};  // 48 KiB of shared memory: larger tiles, fewer counts to scan

}  // namespace

uint32_t floorPow2(uint32_t v) {
  uint32_t p = 1;
  while (p <= v / 2) p *= 2;
  return v == 0 ? 0 : p;
}

TuningConfig defaultTuning(uint32_t vendor_id) {
  return vendor_id == kVendorNvidia ? kNvidia : kDefault;
}

uint32_t scatterSharedBytes(const TuningConfig& tuning, uint32_t max_subgroups, bool with_values) {
  const uint32_t tile = tuning.workgroup_size * tuning.keys_per_thread;
  const uint32_t padded = tile + tile / 32;  // one padding word every 32 (radix_scatter.comp)
  const uint32_t tile_bytes = 4 * padded * (with_values ? 2 : 1) + (with_values ? 0 : 4);
  return tile_bytes + 32 * max_subgroups + 4 * VREN_RADIX_BINS * max_subgroups + 3 * 4 * VREN_RADIX_BINS;
}

TuningConfig clampTuning(TuningConfig tuning, const DeviceLimits& limits) {
  const uint32_t min_subgroup = std::max(1u, limits.min_subgroup_size);
  tuning.workgroup_size = floorPow2(std::min(std::max(tuning.workgroup_size, 32u), limits.max_workgroup_size));
  tuning.workgroup_size = std::max(tuning.workgroup_size, std::min(min_subgroup, 32u));
  tuning.keys_per_thread = floorPow2(std::clamp(tuning.keys_per_thread, 1u, 64u));
  while (tuning.workgroup_size * tuning.keys_per_thread > kMaxTileSize && tuning.keys_per_thread > 1)
    tuning.keys_per_thread /= 2;
  const uint32_t max_subgroups = std::max(1u, tuning.workgroup_size / min_subgroup);
  while (scatterSharedBytes(tuning, max_subgroups, true) > limits.max_shared_memory && tuning.keys_per_thread > 1)
    tuning.keys_per_thread /= 2;
  return tuning;
}

}  // namespace vren::radix::detail
