// Shared by the GPU test suites: one validated Context per process, and a fixture that fails a
// test case if any validation message arrived while it ran.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "vren_radix/context.h"

namespace vren::radix::test {

// Created on first use with VK_LAYER_KHRONOS_validation and (but in the sanitizer build)
// synchronization validation on, with the device's own tuning. Aborts the run if it cannot be made.
Context& context();

// A context whose sorter runs `tuning` (cached: one per distinct tuning in a process).
Context& contextWithTuning(const TuningConfig& tuning);

// The sort's paths. Every sort case runs on each: the device's tuning, whose sorts of one
// workgroup's keys run in one dispatch and whose other small sorts take the look-back, both on
// 8-bit digits; the look-back from the first key (no one-dispatch sorts); and the count, scan and
// scatter passes alone with 4-bit and with 8-bit digits.
struct SortPath {
  const char* name;
  uint32_t digit_bits;
  bool lookback;
  bool block;
};
inline constexpr SortPath kSortPaths[] = {{"one dispatch, then the look-back", 4, true, true},
                                          {"look-back", 4, true, false},
                                          {"4-bit passes", 4, false, false},
                                          {"8-bit passes", 8, false, false}};

// The path's context: the device's tuning, or `workgroup_size` x `keys_per_thread` tiles (with the
// look-back on tiles of the same shape) where those are non-zero; the path's digit width; the
// look-back and one-dispatch sorts off unless the path takes them.
Context& pathContext(const SortPath& path, uint32_t workgroup_size = 0, uint32_t keys_per_thread = 0);

// Runs `body(ctx)` once per sort path with the path's context (pathContext), the path named in
// the messages of its failures.
template <typename Body>
void forEachPath(Body&& body) {
  for (const SortPath& path : kSortPaths) {
    INFO("path: " << std::string(path.name));
    body(pathContext(path));
  }
}

// Whether the device is a CPU implementation (lavapipe): large sizes run only elsewhere.
bool onCpuDevice();

// Validation messages received since the last call.
std::vector<std::string> takeValidationMessages();

struct GpuTest {
  GpuTest();
  ~GpuTest();
};

enum class Distribution { kUniform, kAndOfTwo, kAllEqual, kAscending, kDescending, kAllOnes, kLowBits };
const char* name(Distribution d);
inline constexpr Distribution kAllDistributions[] = {
    Distribution::kUniform,    Distribution::kAndOfTwo, Distribution::kAllEqual, Distribution::kAscending,
    Distribution::kDescending, Distribution::kAllOnes,  Distribution::kLowBits};

std::vector<uint32_t> makeKeys(size_t count, Distribution d, std::mt19937& rng);

// A generator seeded from VREN_RADIX_TEST_SEED, else from the clock; the seed is logged.
std::mt19937& rng();

}  // namespace vren::radix::test
