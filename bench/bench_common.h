// What vren_radix_bench and vren_radix_cub_bench share, so that both sort the same keys in the
// same cases: key distributions, the case list, a parallel std::sort for reference results and
// the checks against std::sort / std::stable_sort. C++17: nvcc compiles it too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace vren::radix::bench {

constexpr int kMinLog2 = 10;
constexpr int kMaxLog2 = 31;
constexpr uint32_t kScreenCounts[] = {1920 * 1080, 2560 * 1440, 3840 * 2160};
constexpr int kSmallKeyLog2s[] = {16, 20, 24, 26};  // sizes for the low8 and bits4 cases

enum class Dist {
  kUniform,   // every bit random
  kAndOfTwo,  // AND of two random words: each bit set with probability 1/4
  kLow8,      // keys below 2^8 sorted over all 32 bits: the top three bytes never change
  kBits4,     // keys below 16 sorted over bits [0, 4), like material IDs
};

inline const char* name(Dist dist) {
  switch (dist) {
    case Dist::kUniform: return "uniform";
    case Dist::kAndOfTwo: return "and2";
    case Dist::kLow8: return "low8";
    case Dist::kBits4: return "bits4";
  }
  return "?";
}

inline uint32_t endBit(Dist dist) { return dist == Dist::kBits4 ? 4 : 32; }

struct Case {
  bool pairs = false;
  Dist dist = Dist::kUniform;
  uint32_t count = 0;
};

// uniform and and2 at every second power of two from 2^10; uniform at three screen sizes; low8
// and bits4 at a few sizes. Keys then pairs for each distribution and count.
inline std::vector<Case> makeCases(int max_log2) {
  std::vector<Case> cases;
  const uint64_t max_count = uint64_t{1} << max_log2;
  auto add = [&](Dist dist, uint64_t count) {
    if (count > max_count) return;
    cases.push_back({false, dist, static_cast<uint32_t>(count)});
    cases.push_back({true, dist, static_cast<uint32_t>(count)});
  };
  for (const Dist dist : {Dist::kUniform, Dist::kAndOfTwo})
    for (int log2 = kMinLog2; log2 <= max_log2; log2 += 2) add(dist, uint64_t{1} << log2);
  for (const uint32_t count : kScreenCounts) add(Dist::kUniform, count);
  for (const Dist dist : {Dist::kLow8, Dist::kBits4})
    for (const int log2 : kSmallKeyLog2s) add(dist, uint64_t{1} << log2);
  return cases;
}

struct SplitMix64 {
  uint64_t state;
  uint32_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<uint32_t>((z ^ (z >> 31)) >> 32);
  }
};

// The same keys for a distribution, count and variant in every program and run. Variant 0 is
// the input every implementation sorts; others are fresh draws of the same distribution.
inline std::vector<uint32_t> makeKeys(Dist dist, uint32_t count, uint32_t variant = 0) {
  SplitMix64 rng{(static_cast<uint64_t>(dist) + 1) * 0x1000193ull + count + (uint64_t{variant} << 32)};
  std::vector<uint32_t> keys(count);
  switch (dist) {
    case Dist::kUniform: std::generate(keys.begin(), keys.end(), [&] { return rng.next(); }); break;
    case Dist::kAndOfTwo: std::generate(keys.begin(), keys.end(), [&] { return rng.next() & rng.next(); }); break;
    case Dist::kLow8: std::generate(keys.begin(), keys.end(), [&] { return rng.next() & 0xFFu; }); break;
    case Dist::kBits4: std::generate(keys.begin(), keys.end(), [&] { return rng.next() & 0xFu; }); break;
  }
  return keys;
}

template <typename F>
void inParallel(size_t n, const F& f) {
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i) threads.emplace_back([&f, i] { f(i); });
  if (n > 0) f(0);
  for (auto& t : threads) t.join();
}

// std::sort on slices in parallel, then pairwise std::inplace_merge: the result of one std::sort
// without its minute-long wait at 2^28 keys.
inline std::vector<uint32_t> sortedCopy(const std::vector<uint32_t>& keys) {
  std::vector<uint32_t> out = keys;
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
  const size_t slices = out.size() < (size_t{1} << 20) ? 1 : threads;
  auto at = [&](size_t slice) {
    return out.begin() + static_cast<std::ptrdiff_t>(out.size() * std::min(slice, slices) / slices);
  };
  inParallel(slices, [&](size_t s) { std::sort(at(s), at(s + 1)); });
  for (size_t width = 1; width < slices; width *= 2) {
    inParallel((slices + 2 * width - 1) / (2 * width), [&](size_t m) {
      const size_t s = 2 * m * width;
      std::inplace_merge(at(s), at(s + width), at(s + 2 * width));
    });
  }
  return out;
}

// Empty if keys[0, n) equals `expected` (std::sort's result), else where they first differ.
inline std::string compareKeys(const std::vector<uint32_t>& expected, const uint32_t* keys, size_t n) {
  if (n != expected.size())
    return "Sorted " + std::to_string(n) + " keys, expected " + std::to_string(expected.size()) + ".";
  const auto diff = std::mismatch(expected.begin(), expected.end(), keys);
  if (diff.first == expected.end()) return {};
  return "Key " + std::to_string(diff.first - expected.begin()) + " is " + std::to_string(*diff.second) +
         " where std::sort has " + std::to_string(*diff.first) + ".";
}

// Empty if (keys, values)[0, n) is exactly std::stable_sort's result for the pairs (input[i], i)
// ordered by key: the values are a permutation of 0..n-1, each key is the input key at its
// value's index, keys ascend, and equal keys keep their indices ascending.
inline std::string checkStablePairs(const std::vector<uint32_t>& input, const uint32_t* keys, const uint32_t* values,
                                    size_t n) {
  if (n != input.size()) return "The output has the wrong length.";
  std::vector<bool> seen(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t v = values[i];
    if (v >= n || seen[v])
      return "Value " + std::to_string(i) + " (" + std::to_string(v) + ") is out of range or repeated.";
    seen[v] = true;
    if (keys[i] != input[v]) return "Key " + std::to_string(i) + " did not travel with its value.";
    if (i > 0 && (keys[i - 1] > keys[i] || (keys[i - 1] == keys[i] && values[i - 1] > v)))
      return "Pairs " + std::to_string(i - 1) + " and " + std::to_string(i) + " are out of order or unstable.";
  }
  return {};
}

}  // namespace vren::radix::bench
