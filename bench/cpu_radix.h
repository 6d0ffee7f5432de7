// A CPU baseline for the benchmarks: a stable LSD radix sort of u32 keys (optionally moving u32
// values with them), 8-bit digits, at most 4 passes.
//
// One read of the keys builds the histograms of all four digits. A digit that is the same for
// every key leaves the order unchanged, so its pass is skipped: keys below 2^8 take one pass,
// keys below 2^16 two. Each pass is an exclusive scan of its histogram and one scatter into the
// other buffer; after an odd number of passes the result is copied back.
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>

namespace vren::radix::bench {

namespace detail {

template <bool kWithValues>
int cpuRadixSort(uint32_t* keys, uint32_t* values, uint32_t* keys_temp, uint32_t* values_temp, size_t count) {
  if (count < 2) return 0;
  std::array<std::array<size_t, 256>, 4> offsets{};
  for (size_t i = 0; i < count; ++i) {
    const uint32_t k = keys[i];
    ++offsets[0][k & 0xFF];
    ++offsets[1][(k >> 8) & 0xFF];
    ++offsets[2][(k >> 16) & 0xFF];
    ++offsets[3][k >> 24];
  }

  uint32_t* src_keys = keys;
  uint32_t* dst_keys = keys_temp;
  uint32_t* src_values = values;
  uint32_t* dst_values = values_temp;
  int passes = 0;
  for (uint32_t digit = 0; digit < 4; ++digit) {
    const uint32_t shift = 8 * digit;
    auto& offset = offsets[digit];
    // Every pass permutes the same multiset of keys, so any key tells whether the digit is constant.
    if (offset[(keys[0] >> shift) & 0xFF] == count) continue;
    size_t sum = 0;
    for (size_t& c : offset) sum += std::exchange(c, sum);
    for (size_t i = 0; i < count; ++i) {
      const uint32_t k = src_keys[i];
      const size_t at = offset[(k >> shift) & 0xFF]++;
      dst_keys[at] = k;
      if constexpr (kWithValues) dst_values[at] = src_values[i];
    }
    std::swap(src_keys, dst_keys);
    if constexpr (kWithValues) std::swap(src_values, dst_values);
    ++passes;
  }
  if (src_keys != keys) {
    std::memcpy(keys, src_keys, count * sizeof(uint32_t));
    if constexpr (kWithValues) std::memcpy(values, src_values, count * sizeof(uint32_t));
  }
  return passes;
}

}  // namespace detail

// Sorts `keys` ascending. Returns the number of scatter passes made (0 to 4).
// temp must hold at least keys.size() words; its contents are overwritten.
inline int cpuRadixSort(std::span<uint32_t> keys, std::span<uint32_t> temp) {
  assert(temp.size() >= keys.size());
  return detail::cpuRadixSort<false>(keys.data(), nullptr, temp.data(), nullptr, keys.size());
}

// Sorts `keys` ascending and moves `values` with them; equal keys keep their input order.
// Returns the number of scatter passes made (0 to 4).
// values must have keys.size() words; keys_temp and values_temp must hold at least as many.
inline int cpuRadixSortPairs(std::span<uint32_t> keys, std::span<uint32_t> values, std::span<uint32_t> keys_temp,
                             std::span<uint32_t> values_temp) {
  assert(values.size() == keys.size() && keys_temp.size() >= keys.size() && values_temp.size() >= keys.size());
  return detail::cpuRadixSort<true>(keys.data(), values.data(), keys_temp.data(), values_temp.data(), keys.size());
}

}  // namespace vren::radix::bench
