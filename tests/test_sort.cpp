// The engine against std::stable_sort: sizes, distributions, pairs (stability), bit ranges,
// descending order, scratch poisoning and canaries. Runs under the validation layer.
#include <algorithm>
#include <cstdlib>
#include <numeric>

#include <doctest/doctest.h>
#include <volk.h>

#include "gpu_test.h"

namespace vren::radix::test {
namespace {

uint32_t field(uint32_t key, const SortOptions& o) {
  const uint32_t bits = o.end_bit - o.begin_bit;
  const uint32_t mask = bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  return bits == 0 ? 0 : (key >> o.begin_bit) & mask;
}

// Sorts on the GPU and compares with the CPU: keys exactly, values as the stable permutation.
void checkSort(Context& ctx, const std::vector<uint32_t>& input, bool pairs, const SortOptions& o,
               const std::string& label) {
  INFO(label << ", count " << input.size() << (pairs ? ", pairs" : ", keys") << ", bits [" << o.begin_bit << ", "
             << o.end_bit << ")" << (o.descending ? ", descending" : ""));
  std::vector<uint32_t> order(input.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return o.descending ? field(input[a], o) > field(input[b], o) : field(input[a], o) < field(input[b], o);
  });

  std::vector<uint32_t> keys = input;
  std::vector<uint32_t> values;
  if (pairs) {
    values.resize(input.size());
    std::iota(values.begin(), values.end(), 0u);
  }
  SortStats stats;
  std::string error;
  REQUIRE_MESSAGE(ctx.sort(keys, values, o, &stats, &error), error);

  size_t bad = input.size();
  for (size_t i = 0; i < input.size() && bad == input.size(); ++i)
    if (keys[i] != input[order[i]] || (pairs && values[i] != order[i])) bad = i;
  CHECK_MESSAGE(bad == input.size(), "first mismatch at " << bad << ": got key " << keys[bad] << " expected "
                                                          << input[order[bad]]);
  CHECK(stats.canaries_intact);
  const uint32_t passes = input.empty() ? 0 : (o.end_bit - o.begin_bit + 3) / 4;
  CHECK(stats.passes == passes);
  CHECK(stats.result_in_temp == (passes % 2 == 1));
}

uint32_t tileSize() { return getSorterProperties(context().sorter()).tile_size; }

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "keys and pairs at edge sizes around the tile") {
  const uint32_t t = tileSize();
  for (uint32_t n : {0u, 1u, 2u, 3u, t - 1, t, t + 1, 2 * t - 1, 2 * t + 1, 5 * t + 17}) {
    for (bool pairs : {false, true}) checkSort(context(), makeKeys(n, Distribution::kUniform, rng()), pairs, {}, "uniform");
  }
}

TEST_CASE_FIXTURE(GpuTest, "every size across two small tiles") {
  // 32 threads x 2 keys: a 64-key tile, so every tail shape is reached quickly.
  Context& small = contextWithTuning(32, 2);
  const uint32_t t = getSorterProperties(small.sorter()).tile_size;
  REQUIRE(t <= 256);
  for (uint32_t n = 0; n <= 2 * t + 1; ++n) {
    checkSort(small, makeKeys(n, Distribution::kUniform, rng()), n % 2 == 1, {}, "uniform");
    checkSort(small, makeKeys(n, Distribution::kLowBits, rng()), true, {}, "low-bits");
  }
}

TEST_CASE_FIXTURE(GpuTest, "every distribution, keys and pairs") {
  const uint32_t t = tileSize();
  for (Distribution d : kAllDistributions) {
    for (uint32_t n : {t / 2 + 3, 7 * t + 5}) {
      for (bool pairs : {false, true}) checkSort(context(), makeKeys(n, d, rng()), pairs, {}, name(d));
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "random sizes") {
  std::uniform_int_distribution<uint32_t> size(1, 50000);
  for (int i = 0; i < 6; ++i) {
    const Distribution d = kAllDistributions[i % std::size(kAllDistributions)];
    checkSort(context(), makeKeys(size(rng()), d, rng()), i % 2 == 0, {}, name(d));
  }
}

TEST_CASE_FIXTURE(GpuTest, "more than 2^20 keys") {
  const uint32_t n = (1u << 20) + 12345;
  checkSort(context(), makeKeys(n, Distribution::kUniform, rng()), false, {}, "uniform");
  checkSort(context(), makeKeys(n, Distribution::kAndOfTwo, rng()), true, {}, "and-of-two");
}

TEST_CASE_FIXTURE(GpuTest, "large counts on a real GPU") {
  // Opt-in: lavapipe is too slow for these. VREN_RADIX_TEST_LARGE_LOG2=26 sorts 2^26 + 3 keys.
  const char* env = std::getenv("VREN_RADIX_TEST_LARGE_LOG2");
  if (!env) return;
  const uint32_t log2 = static_cast<uint32_t>(std::strtoul(env, nullptr, 10));
  REQUIRE(log2 >= 20);
  REQUIRE(log2 <= 31);
  const uint32_t n = (1u << log2) + 3;
  checkSort(context(), makeKeys(n, Distribution::kUniform, rng()), false, {}, "uniform");
  checkSort(context(), makeKeys(n, Distribution::kAndOfTwo, rng()), true, {}, "and-of-two");
  checkSort(context(), makeKeys(n, Distribution::kLowBits, rng()), true, {}, "low-bits");
}

TEST_CASE_FIXTURE(GpuTest, "bit ranges: odd and even pass counts") {
  const uint32_t n = 3 * tileSize() + 11;
  const std::pair<uint32_t, uint32_t> ranges[] = {{0, 4}, {0, 8}, {4, 12}, {0, 3}, {5, 18}, {28, 32}, {0, 31}, {7, 7}};
  for (auto [begin, end] : ranges) {
    SortOptions o;
    o.begin_bit = begin;
    o.end_bit = end;
    checkSort(context(), makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform");
  }
}

TEST_CASE_FIXTURE(GpuTest, "descending order stays stable") {
  const uint32_t n = 4 * tileSize() + 3;
  for (Distribution d : {Distribution::kUniform, Distribution::kLowBits, Distribution::kAllEqual}) {
    SortOptions o;
    o.descending = true;
    checkSort(context(), makeKeys(n, d, rng()), true, o, name(d));
    o.begin_bit = 2;
    o.end_bit = 9;
    checkSort(context(), makeKeys(n, d, rng()), true, o, name(d));
  }
}

TEST_CASE_FIXTURE(GpuTest, "repeated sorts reuse the same buffers") {
  for (int i = 0; i < 3; ++i)
    checkSort(context(), makeKeys(10000 - 997 * i, Distribution::kUniform, rng()), i == 1, {}, "uniform");
}

TEST_CASE("the validation messenger reports errors") {
  // Proves the fixture can fail: a buffer of size 0 is invalid usage.
  takeValidationMessages();
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = 0;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer raw = VK_NULL_HANDLE;
  if (vkCreateBuffer(context().vkDevice(), &info, nullptr, &raw) == VK_SUCCESS && raw)
    vkDestroyBuffer(context().vkDevice(), raw, nullptr);
  CHECK(!takeValidationMessages().empty());
}

}  // namespace vren::radix::test
