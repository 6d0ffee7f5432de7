#include "gpu_test.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

namespace vren::radix::test {
namespace {

std::mutex g_mutex;
std::vector<std::string> g_messages;

void collect(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_messages.push_back(message);
}

std::unique_ptr<Context> makeContext(const TuningConfig* tuning) {
  ContextOptions options;
  options.validation = true;
#ifdef VREN_RADIX_TEST_NO_SYNC_VALIDATION
  options.synchronization_validation = false;
#else
  options.synchronization_validation = true;  // missing barriers are reported as hazards
#endif
  options.on_message = collect;
  options.tuning = tuning;
  std::string error;
  auto ctx = Context::create(options, &error);
  if (!ctx) {
    std::fprintf(stderr, "Cannot create a validated Vulkan context: %s\n", error.c_str());
    std::exit(1);
  }
  return ctx;
}

}  // namespace

Context& context() {
  static std::unique_ptr<Context> ctx = [] {
    auto c = makeContext(nullptr);
    const auto& d = c->device();
    const auto props = getSorterProperties(c->sorter());
    std::printf("device: %s (%s), subgroup size %u, tile %u keys, %u-bit digits, look-back tile %u keys\n",
                d.name.c_str(), d.driver.c_str(), d.subgroup_size, props.tile_size, props.tuning.digit_bits,
                props.lookback_tile_size);
    // The suite runs once per subgroup size; make sure each run really got the one it asked for.
    if (const char* expected = std::getenv("VREN_RADIX_TEST_EXPECT_SUBGROUP_SIZE")) {
      if (std::strtoul(expected, nullptr, 10) != d.subgroup_size) {
        std::fprintf(stderr, "Expected subgroup size %s but the device runs %u.\n", expected, d.subgroup_size);
        std::exit(1);
      }
    }
    return c;
  }();
  return *ctx;
}

Context& contextWithTuning(const TuningConfig& t) {
  // Every field, so that a field added to TuningConfig cannot be left out of the key.
  static_assert(std::has_unique_object_representations_v<TuningConfig> && sizeof(TuningConfig) % 4 == 0,
                "TuningConfig is compared word by word: u32 fields only");
  auto key = [](const TuningConfig& c) {
    std::vector<uint32_t> words(sizeof(c) / 4);
    std::memcpy(words.data(), &c, sizeof(c));
    return words;
  };
  // The default context first: statics die in reverse order. Its own tuning needs no other.
  Context& device_default = context();
  if (key(t) == key(getSorterProperties(device_default.sorter()).tuning)) return device_default;
  static std::map<std::vector<uint32_t>, std::unique_ptr<Context>> contexts;
  auto& slot = contexts[key(t)];
  if (!slot) slot = makeContext(&t);
  return *slot;
}

Context& pathContext(const SortPath& path, uint32_t workgroup_size, uint32_t keys_per_thread) {
  TuningConfig tuning = getSorterProperties(context().sorter()).tuning;
  if (workgroup_size) {
    tuning.workgroup_size = workgroup_size;
    tuning.keys_per_thread = keys_per_thread;
    tuning.lookback_keys_per_thread = keys_per_thread;
    tuning.lookback_workgroup_size = workgroup_size;
  }
  tuning.digit_bits = path.digit_bits;
  if (!path.lookback) tuning.lookback_max_count = 0;
  if (!path.block) tuning.block_max_count = 0;
  Context& ctx = contextWithTuning(tuning);
  REQUIRE(getSorterProperties(ctx.sorter()).tuning.digit_bits == path.digit_bits);
  return ctx;
}

bool onCpuDevice() {
  return context().device().type == "CPU";
}

std::vector<std::string> takeValidationMessages() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return std::exchange(g_messages, {});
}

GpuTest::GpuTest() { takeValidationMessages(); }

GpuTest::~GpuTest() {
  for (const auto& m : takeValidationMessages()) FAIL_CHECK("validation: " << m);
}

const char* name(Distribution d) {
  switch (d) {
    case Distribution::kUniform: return "uniform";
    case Distribution::kAndOfTwo: return "and-of-two";
    case Distribution::kAllEqual: return "all-equal";
    case Distribution::kAscending: return "ascending";
    case Distribution::kDescending: return "descending";
    case Distribution::kAllOnes: return "all-0xFFFFFFFF";
    case Distribution::kLowBits: return "low-bits";
  }
  return "?";
}

std::vector<uint32_t> makeKeys(size_t count, Distribution d, std::mt19937& gen) {
  std::vector<uint32_t> keys(count);
  const uint32_t constant = gen();
  for (size_t i = 0; i < count; ++i) {
    switch (d) {
      case Distribution::kUniform: keys[i] = gen(); break;
      case Distribution::kAndOfTwo: keys[i] = gen() & gen(); break;
      case Distribution::kAllEqual: keys[i] = constant; break;
      case Distribution::kAscending: keys[i] = static_cast<uint32_t>(i * 7 + (constant & 0xFFFF)); break;
      case Distribution::kDescending: keys[i] = static_cast<uint32_t>(0xFFFFFFF0u - i * 3); break;
      case Distribution::kAllOnes: keys[i] = 0xFFFFFFFFu; break;
      case Distribution::kLowBits: keys[i] = gen() & 0x7u; break;
    }
  }
  return keys;
}

std::mt19937& rng() {
  static std::mt19937 gen = [] {
    uint32_t seed = static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    if (const char* s = std::getenv("VREN_RADIX_TEST_SEED")) seed = static_cast<uint32_t>(std::strtoul(s, nullptr, 10));
    std::printf("random seed: %u (set VREN_RADIX_TEST_SEED to repeat)\n", seed);
    return std::mt19937(seed);
  }();
  return gen;
}

}  // namespace vren::radix::test
