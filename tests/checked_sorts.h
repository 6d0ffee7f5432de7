// Sorts like Context's, with every buffer checked: the scratch, the temporaries, the internal
// words and top-k's result slots start as poison, and canary words follow every buffer's used
// bytes. A GPU write past a buffer shows as a broken canary; a missing write, as poison in the
// output. Built on Context's public API only: the tests and the benchmarks' verification use it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vren_radix/context.h"

namespace vren::radix::test {

inline constexpr uint32_t kPoison = 0xDCDCDCDCu;
inline constexpr uint32_t kCanary = 0xC0FFEE11u;
inline constexpr uint32_t kCanaryWords = 64;

// Whether the kCanaryWords words after `used` bytes of a host-visible buffer are all kCanary.
bool canariesIntact(const GpuBuffer& b, VkDeviceSize used);

struct CheckedStats {
  uint32_t passes = 0;
  bool result_in_temp = false;   // which ping-pong buffer held the result on the GPU
  bool canaries_intact = false;  // the words past every buffer's used bytes still hold kCanary
};

// Context::sort on ctx's sorter, in buffers of its own: poisoned keys_temp, values_temp and
// internal words, canaries past keys, values, both temporaries, the internal words and a GPU-side
// count. Fails with a sentence where validateSortInfo refuses the sort.
bool checkedSort(Context& ctx, std::span<uint32_t> keys, std::span<uint32_t> values, const SortOptions& options,
                 CheckedStats* stats, std::string* error);

// Context::sortSegmented, checked as checkedSort, the offsets guarded too.
bool checkedSortSegmented(Context& ctx, std::span<uint32_t> keys, std::span<uint32_t> values,
                          std::span<const uint32_t> offsets, const SortOptions& options, CheckedStats* stats,
                          std::string* error);

// Context::topK, checked as checkedSort, its result slots poisoned and guarded. Fails with a
// sentence where a canary broke or a slot past a short segment's results no longer holds poison.
bool checkedTopK(Context& ctx, std::span<const uint32_t> keys, std::span<const uint32_t> values,
                 std::span<const uint32_t> offsets, uint32_t k, bool largest, const SortOptions& options,
                 std::vector<uint32_t>* out_keys, std::vector<uint32_t>* out_values, std::string* error);

}  // namespace vren::radix::test
