// Shared by the GPU test suites: one validated Context per process, and a fixture that fails a
// test case if any validation message arrived while it ran.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "vren_radix/context.h"

namespace vren::radix::test {

// Created on first use with VK_LAYER_KHRONOS_validation on. Aborts the run if it cannot be made.
Context& context();

// A context with a given tuning (e.g. tiny tiles, so that every size across two tiles is cheap)
// and the digit width of the run; the look-back on the same tile, as asked unless the run turns
// it off.
Context& contextWithTuning(uint32_t workgroup_size, uint32_t keys_per_thread,
                           uint32_t lookback_max_count = TuningConfig{}.lookback_max_count,
                           uint32_t lookback_poll_budget = TuningConfig{}.lookback_poll_budget);

// The digit width the run tests: VREN_RADIX_TEST_DIGIT_BITS, 4 if unset.
uint32_t testDigitBits();

// Whether the run tests the small sorts' look-back: VREN_RADIX_TEST_LOOKBACK=0 turns it off.
bool testLookback();

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
