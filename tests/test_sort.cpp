// The engine against std::stable_sort: sizes, distributions, pairs (stability), bit ranges,
// descending order, with poisoned scratch and canaries (checked_sorts.h). Runs under the validation
// layer.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include <doctest/doctest.h>
#include <volk.h>

#include "checked_sorts.h"
#include "gpu_test.h"
#include "reliability.h"
#include "sort_timing.h"
#ifdef VREN_RADIX_SHADER_CLOCKS
#include "radix_shared.h"
#endif

namespace vren::radix::test {
namespace {

// The key's sort field as an unsigned integer: the order-preserving map of its type, then bits
// [begin_bit, end_bit).
uint64_t field(const std::vector<uint32_t>& words, size_t i, const SortOptions& o) {
  uint64_t key = 0;
  switch (o.key_type) {
    case KeyType::kU32: key = words[i]; break;
    case KeyType::kI32: key = words[i] ^ 0x80000000u; break;
    case KeyType::kF32: key = words[i] ^ ((words[i] >> 31) ? 0xFFFFFFFFu : 0x80000000u); break;
    case KeyType::kU64: key = words[2 * i] | (uint64_t{words[2 * i + 1]} << 32); break;
  }
  const uint32_t bits = o.end_bit - o.begin_bit;
  if (bits == 0) return 0;
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return (key >> o.begin_bit) & mask;
}

// Sorts on the GPU and compares with the CPU: keys exactly, values as the stable permutation.
// `input` holds the keys' 32-bit words (two per key for kU64).
void checkSort(Context& ctx, const std::vector<uint32_t>& input, bool pairs, const SortOptions& o,
               const std::string& label) {
  const size_t words_per_key = o.key_type == KeyType::kU64 ? 2 : 1;
  const size_t n = input.size() / words_per_key;
  const size_t sorted = o.gpu_count ? std::min<size_t>(o.gpu_count_value, n) : n;
  // One string: doctest's INFO prints a const char* operand as a pointer.
  const std::string what = label + ", count " + std::to_string(n) +
                           (o.gpu_count ? " (GPU-side count " + std::to_string(sorted) + ")" : "") +
                           (pairs ? ", pairs" : ", keys") + (o.argsort ? " (argsort)" : "") + ", key type " +
                           std::to_string(static_cast<int>(o.key_type)) + ", bits [" + std::to_string(o.begin_bit) +
                           ", " + std::to_string(o.end_bit) + ")" + (o.descending ? ", descending" : "");
  INFO(what);
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.begin() + sorted, [&](uint32_t a, uint32_t b) {
    return o.descending ? field(input, a, o) > field(input, b, o) : field(input, a, o) < field(input, b, o);
  });

  std::vector<uint32_t> keys = input;
  std::vector<uint32_t> values;
  if (pairs) {
    values.resize(n);
    // Argsort must not read its values: give it poison.
    for (size_t i = 0; i < n; ++i) values[i] = o.argsort ? 0xDCDCDCDCu : static_cast<uint32_t>(i);
  }
  CheckedStats stats;
  std::string error;
  REQUIRE_MESSAGE(checkedSort(ctx, keys, values, o, &stats, &error), error);

  // With a GPU-side count only the first `sorted` elements are defined.
  size_t bad = n;
  for (size_t i = 0; i < sorted && bad == n; ++i) {
    for (size_t w = 0; w < words_per_key; ++w)
      if (keys[i * words_per_key + w] != input[order[i] * words_per_key + w]) bad = i;
    if (pairs && values[i] != order[i]) bad = i;
  }
  CHECK_MESSAGE(bad == n, "first mismatch at element " << bad << " of " << n);
  CHECK(stats.canaries_intact);
  // The pass count the recorded sort reports is the one getPassCount() promises, and its parity
  // names the buffer that holds the result. It is ceil(bits / digit width), on the tuning's digits
  // or, for one-dispatch and look-back sorts, on 8-bit ones; with both off, always the tuning's.
  SortInfo asked = sortInfoFor(o, static_cast<uint32_t>(n));  // what getPassCount() reads of a sort
  if (pairs) asked.values.buffer = reinterpret_cast<VkBuffer>(uintptr_t{1});  // only whether there are values
  const uint32_t passes = getPassCount(ctx.sorter(), asked);
  CHECK(stats.passes == passes);
  CHECK(stats.result_in_temp == (passes % 2 == 1));
  const TuningConfig& tuning = getSorterProperties(ctx.sorter()).tuning;
  const uint32_t bits = o.end_bit - o.begin_bit;
  auto passesOf = [&](uint32_t digit) { return n == 0 ? 0 : (bits + digit - 1) / digit; };
  if (tuning.lookback_max_count == 0 && tuning.block_max_count == 0) CHECK(passes == passesOf(tuning.digit_bits));
  else CHECK((passes == passesOf(tuning.digit_bits) || passes == passesOf(8)));
}

void checkSort(Context& ctx, const std::vector<uint32_t>& input, bool pairs, const SortOptions& o, const char* label) {
  checkSort(ctx, input, pairs, o, std::string(label));
}

uint32_t tileSize(Context& ctx) { return getSorterProperties(ctx.sorter()).tile_size; }

// The device's tuning with these look-back settings, on `digit_bits` digits past it.
Context& lookbackContext(uint32_t digit_bits, uint32_t workgroup_size, uint32_t keys_per_thread, uint32_t limit,
                         uint32_t poll_budget) {
  TuningConfig t = getSorterProperties(context().sorter()).tuning;
  t.workgroup_size = workgroup_size;
  t.keys_per_thread = keys_per_thread;
  t.lookback_keys_per_thread = keys_per_thread;
  t.lookback_workgroup_size = workgroup_size;
  t.digit_bits = digit_bits;
  t.lookback_max_count = limit;
  t.lookback_poll_budget = poll_budget;
  t.block_max_count = 0;
  return contextWithTuning(t);
}

// Uniform keys whose bits outside `varying_mask` are those of 0x12345678: every pass whose
// digit lies outside the mask can be skipped.
std::vector<uint32_t> keysVaryingIn(uint32_t n, uint32_t varying_mask) {
  std::vector<uint32_t> keys = makeKeys(n, Distribution::kUniform, rng());
  for (auto& k : keys) k = (k & varying_mask) | (0x12345678u & ~varying_mask);
  return keys;
}

}  // namespace

// Every GPU case runs on each of kSortPaths. Cases in the test suite "subgroup" run at every
// subgroup size the suite is run at; the others at one (their code paths do not depend on the
// width, or a subgroup case reaches the same code).

TEST_CASE_FIXTURE(GpuTest, "keys and pairs at edge sizes around the tile" * doctest::test_suite("subgroup")) {
  forEachPath([&](Context& ctx) {
    const uint32_t t = tileSize(ctx);
    for (uint32_t n : {0u, 1u, 2u, 3u, t - 1, t, t + 1, 2 * t - 1, 2 * t + 1, 5 * t + 17}) {
      for (bool pairs : {false, true}) checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), pairs, {}, "uniform");
    }
  });
}

TEST_CASE_FIXTURE(GpuTest, "every size across two small tiles" * doctest::test_suite("subgroup")) {
  // 32 threads x 2 keys: a 64-key tile, so every tail shape is reached quickly.
  for (const SortPath& path : kSortPaths) {
    INFO("path: " << std::string(path.name));
    Context& small = pathContext(path, 32, 2);
    const uint32_t t = tileSize(small);
    REQUIRE(t <= 256);
    for (uint32_t n = 0; n <= 2 * t + 1; ++n) {
      checkSort(small, makeKeys(n, Distribution::kUniform, rng()), n % 2 == 1, {}, "uniform");
      checkSort(small, makeKeys(n, Distribution::kLowBits, rng()), true, {}, "low-bits");
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "16 keys per thread: the count's ballots instead of packed counters" *
                               doctest::test_suite("subgroup")) {
  // Packed 4-bit counters hold at most 15 keys per thread and tile, so this tuning counts with
  // ballots and shared atomics.
  for (const SortPath& path : kSortPaths) {
    INFO("path: " << std::string(path.name));
    Context& wide = pathContext(path, 64, 16);
    const uint32_t t = tileSize(wide);
    for (uint32_t n : {t - 1, 4 * t + 3, 9 * t + 17}) {
      for (Distribution d : {Distribution::kUniform, Distribution::kLowBits})
        checkSort(wide, makeKeys(n, d, rng()), n % 2 == 1, {}, name(d));
    }
  }
}

namespace {

// Look-back tiles too large to stage whole on 32 KiB beside packed rank counters, at the
// device's subgroup size: 128 x 46, 256 x 22 and 256 x 34 at 4, 8 and 16 lanes.
TuningConfig tilesInHalves() {
  const uint32_t lanes = context().device().subgroup_size;
  TuningConfig c = getSorterProperties(context().sorter()).tuning;
  c.digit_bits = 8;
  c.lookback_max_count = 1u << 20;
  c.lookback_workgroup_size = lanes <= 4 ? 128 : 256;
  c.lookback_keys_per_thread = lanes <= 4 ? 46 : lanes <= 8 ? 22 : 34;
  c.large_tile_min_count = 0xFFFFFFFFu;
  c.block_max_count = 0;
  c.lookback_values_apart = 0;  // pairs too in parts (the device's tuning may stage values apart)
  return c;
}

// With values, on tiles of t keys (t64 of 64-bit keys): descending order, argsort, 64-bit keys.
void checkTileOptions(Context& ctx, uint32_t t, uint32_t t64) {
  SortOptions o;
  o.descending = true;
  checkSort(ctx, makeKeys(2 * t + 5, Distribution::kUniform, rng()), true, o, "descending");
  o.descending = false;
  o.argsort = true;
  checkSort(ctx, makeKeys(2 * t + 5, Distribution::kAndOfTwo, rng()), true, o, "argsort");
  SortOptions wide;
  wide.key_type = KeyType::kU64;
  wide.end_bit = 64;
  checkSort(ctx, makeKeys(2 * (2 * t64 + 3), Distribution::kUniform, rng()), true, wide, "u64");
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "look-back tiles too large to stage whole: the stores staged in halves" *
                               doctest::test_suite("subgroup")) {
  // Look-back tiles of an even count of keys per thread that the shared memory cannot stage whole
  // beside even packed rank counters keep their keys in registers until the stores, which stage
  // them in two halves (radix_onesweep.comp's STAGE_PARTS), keys with values in more parts. On
  // 32 KiB (lavapipe) at 4, 8 and 16 lanes: 128 x 46, 256 x 22 and 256 x 34 for 32-bit keys.
  // These tiles rank with the OR matcher (radix_tile_rank.glsl), whose words the subgroups share
  // below 32 lanes. Lavapipe runs a workgroup's subgroups one after another between barriers, so
  // no two of them ever hold bits of one word at once here: the sharing (its masks, atomic read
  // and atomic clear) is checked by review only, and the 32-lane path (a word per subgroup) by the
  // large counts on a real GPU.
  const uint32_t lanes = context().device().subgroup_size;
  const TuningConfig c = tilesInHalves();
  const uint32_t threads = c.lookback_workgroup_size, keys = c.lookback_keys_per_thread;
  Context& big = contextWithTuning(c);
  const SorterProperties p = getSorterProperties(big.sorter());
  const uint32_t t = p.lookback_tile_size;
  REQUIRE(t == threads * keys);  // not shrunk
  // Staged whole, the keys and the packed counters alone would not fit.
  const uint64_t whole = uint64_t{4} * t + 2ull * (threads / lanes) * 256;
  if (big.device().max_shared_memory == 32768) REQUIRE(whole > big.device().max_shared_memory);
  for (uint32_t n : {t - 1, t + 1, 3 * t + 17}) {
    for (Distribution d : {Distribution::kUniform, Distribution::kLowBits, Distribution::kAllEqual})
      for (bool pairs : {false, true}) checkSort(big, makeKeys(n, d, rng()), pairs, {}, name(d));
  }
  checkTileOptions(big, t, p.lookback_tile_size_u64);

  // 64-bit keys in halves (the tiles above shrink for them): 128 x 22, 256 x 10 and 256 x 18.
  TuningConfig c64 = c;
  c64.lookback_keys_per_thread = lanes <= 4 ? 22 : lanes <= 8 ? 10 : 18;
  Context& big64 = contextWithTuning(c64);
  const uint32_t h64 = getSorterProperties(big64.sorter()).lookback_tile_size_u64;
  REQUIRE(h64 == threads * c64.lookback_keys_per_thread);  // not shrunk
  const uint64_t whole64 = uint64_t{8} * h64 + 2ull * (threads / lanes) * 256;
  if (big64.device().max_shared_memory == 32768) REQUIRE(whole64 > big64.device().max_shared_memory);
  SortOptions wide;
  wide.key_type = KeyType::kU64;
  wide.end_bit = 64;
  for (uint32_t n : {h64 - 1, 2 * h64 + 3}) {
    for (bool pairs : {false, true}) checkSort(big64, makeKeys(2 * n, Distribution::kUniform, rng()), pairs, wide, "u64");
  }
  wide.descending = true;
  checkSort(big64, makeKeys(2 * (h64 + 9), Distribution::kLowBits, rng()), true, wide, "u64 descending");
}

TEST_CASE_FIXTURE(GpuTest, "look-back tiles with values apart: the keys staged whole, then the values" *
                               doctest::test_suite("subgroup")) {
  // TuningConfig::lookback_values_apart: tiles whose keys fit the shared memory whole, but not
  // with their values, stage and store the keys, then the values at the destinations the keys'
  // stores found. Each at the most keys a thread that fit whole: with the rank counters beside
  // the stage (packed), on 32 KiB (lavapipe) at 4, 8 and 16 lanes 128 x 23, 256 x 11 and 256 x
  // 19 (counters of 32, 32 and 16 subgroups), at 32 lanes on 48 KiB 256 x 39; with the counters
  // inside the stage (TuningConfig::lookback_counters_in_stage) 128 x 56, 256 x 28 and 256 x 28
  // (unpacked at 16 lanes), and 256 x 44 (unpacked), even counts, which keys alone stage in halves
  // (odd ones they stage whole as ranked, beside the counters). 64-bit keys take the tile that
  // fits them, values apart too. Then, the counters beside the stage, the same tiles as the large
  // ones on two workgroups that loop over them (the two-a-unit case loops with them inside).
  const uint32_t lanes = context().device().subgroup_size;
  for (uint32_t in_stage : {0u, 1u}) {
    INFO("counters in the stage: " << in_stage);
    TuningConfig c = tilesInHalves();
    const uint32_t most = in_stage ? (lanes <= 4 ? 56 : lanes <= 16 ? 28 : 44)
                                   : (lanes <= 4 ? 23 : lanes <= 8 ? 11 : lanes <= 16 ? 19 : 39);
    c.lookback_values_apart = 1;
    c.lookback_counters_in_stage = in_stage;
    const uint32_t threads = c.lookback_workgroup_size;
    // The most keys that fit, and the next even count (the odd ones stage whole as ranked), which
    // no longer stages its keys whole, on sorters that only answer queries (their pipelines never
    // compile); with values apart where the shapes were sized for the shared memory, as with more
    // keys and values may fit whole.
    const bool sized = context().device().max_shared_memory == (lanes <= 16 ? 32768u : 49152u);
    if (sized) {
      TuningConfig edge = c, over = c;
      edge.lookback_keys_per_thread = most;
      over.lookback_keys_per_thread = most + 2 - most % 2;
      const SorterProperties e = getSorterProperties(fakeSorter({}, &edge).get());
      CHECK(e.lookback_tile_size == threads * most);
      CHECK(e.tuning.lookback_values_apart == 1);
      const SorterProperties q = getSorterProperties(fakeSorter({}, &over).get());
      CHECK_FALSE((q.lookback_tile_size == threads * over.lookback_keys_per_thread && q.tuning.lookback_values_apart == 1));
    } else {
      MESSAGE("values apart not checked: shapes sized for 32 KiB (48 KiB at 32 lanes) of shared memory");
    }
    // The sorts on that most (where the validation layer would see its shared memory exceed the
    // device's), but at 4 lanes with the counters in the stage on 128 x 28: 128 x 56's pipelines
    // take lavapipe about a minute to compile.
    c.lookback_keys_per_thread = in_stage && lanes <= 4 ? 28 : most;
    Context& apart = contextWithTuning(c);
    const SorterProperties p = getSorterProperties(apart.sorter());
    const uint32_t t = p.lookback_tile_size;
    REQUIRE(t == threads * c.lookback_keys_per_thread);  // not shrunk
    if (sized) REQUIRE(p.tuning.lookback_values_apart == 1);
    // Counters inside the stage only where they change how a tile stages: here they let its keys
    // stage whole.
    if (sized) CHECK(p.tuning.lookback_counters_in_stage == in_stage);
    TuningConfig whole = c;
    whole.lookback_values_apart = 0;
    REQUIRE(getSorterProperties(fakeSorter({}, &whole).get()).tuning.lookback_values_apart == 0);
    // Tiles of a key a thread stage whole as ranked: the counters stay beside the stage.
    TuningConfig ranked = c;
    ranked.lookback_keys_per_thread = 1;
    CHECK(getSorterProperties(fakeSorter({}, &ranked).get()).tuning.lookback_counters_in_stage == 0);
    // The counters' place changes no step but the shared memory's map: fewer sorts the second
    // time, and the looping tiles with the counters in the stage are the two-a-unit case's.
    for (uint32_t n : {t - 1, t + 1, 3 * t + 17}) {
      if (in_stage && n == t + 1) continue;
      for (Distribution d : {Distribution::kUniform, Distribution::kLowBits, Distribution::kAndOfTwo})
        if (!in_stage || d != Distribution::kAndOfTwo) checkSort(apart, makeKeys(n, d, rng()), true, {}, name(d));
    }
    checkSort(apart, makeKeys(2 * t + 5, Distribution::kUniform, rng()), false, {}, "keys alone");
    checkTileOptions(apart, t, p.lookback_tile_size_u64);
    SortOptions o;
    o.gpu_count = true;
    o.gpu_count_value = t + 7;
    checkSort(apart, makeKeys(2 * t, Distribution::kUniform, rng()), true, o, "GPU-side count");
    if (in_stage) continue;

    // Looping: the next tile's keys load once the keys are staged, during both stores.
    TuningConfig loop = c;
    loop.large_tile_min_count = 0;
    loop.large_tile_workgroup_size = loop.large_tile_pairs_workgroup_size = threads;
    loop.large_tile_keys_per_thread = loop.large_tile_pairs_keys_per_thread = c.lookback_keys_per_thread;
    loop.large_tile_min_keys_per_thread = loop.large_tile_pairs_min_keys_per_thread = 0;
    loop.large_tile_slots = 2;
    loop.large_tile_loop = loop.large_tile_pairs_loop = 1;
    Context& looping = contextWithTuning(loop);
    REQUIRE(getSorterProperties(looping.sorter()).large_tile_size == t);
    checkSort(looping, makeKeys(5 * t + 17, Distribution::kUniform, rng()), true, {}, "looping");
    o = {};
    o.argsort = true;
    checkSort(looping, makeKeys(4 * t + 3, Distribution::kLowBits, rng()), true, o, "looping argsort");
  }
}

TEST_CASE_FIXTURE(GpuTest, "every distribution, keys and pairs") {
  forEachPath([&](Context& ctx) {
    const uint32_t t = tileSize(ctx);
    for (Distribution d : kAllDistributions) {
      for (uint32_t n : {t / 2 + 3, 7 * t + 5}) {
        for (bool pairs : {false, true}) checkSort(ctx, makeKeys(n, d, rng()), pairs, {}, name(d));
      }
    }
  });
}

TEST_CASE_FIXTURE(GpuTest, "random sizes") {
  std::uniform_int_distribution<uint32_t> size(1, 50000);
  for (const SortPath& path : kSortPaths) {
    INFO("path: " << std::string(path.name));
    for (int i = 0; i < 4; ++i) {
      const Distribution d = kAllDistributions[rng()() % std::size(kAllDistributions)];
      checkSort(pathContext(path), makeKeys(size(rng()), d, rng()), i % 2 == 0, {}, name(d));
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "large counts on a real GPU") {
  // lavapipe is too slow for these; the cases with small tiles reach the same code there.
  if (onCpuDevice()) return;
  for (const uint32_t n : {(1u << 20) + 12345, (1u << 26) + 3}) {
    checkSort(context(), makeKeys(n, Distribution::kUniform, rng()), false, {}, "uniform");
    checkSort(context(), makeKeys(n, Distribution::kAndOfTwo, rng()), true, {}, "and-of-two");
    checkSort(context(), makeKeys(n, Distribution::kLowBits, rng()), true, {}, "low-bits");
    for (const SortPath& path : kSortPaths) {
      INFO("path: " << std::string(path.name));
      checkSort(pathContext(path), makeKeys(n, Distribution::kUniform, rng()), true, {}, "uniform");
    }
  }
  // 64-bit keys past large_tile_min_count: the large tiles' shapes for them, keys and pairs.
  SortOptions o;
  o.key_type = KeyType::kU64;
  o.end_bit = 64;
  const uint32_t n = (1u << 22) + 7;
  checkSort(context(), makeKeys(2 * n, Distribution::kUniform, rng()), false, o, "uniform u64");
  checkSort(context(), makeKeys(2 * n, Distribution::kUniform, rng()), true, o, "uniform u64");
}

TEST_CASE_FIXTURE(GpuTest, "bit ranges: odd and even pass counts") {
  const std::pair<uint32_t, uint32_t> ranges[] = {{0, 4}, {0, 8}, {4, 12}, {0, 3}, {5, 18}, {28, 32}, {0, 31}, {7, 7}};
  forEachPath([&](Context& ctx) {
    const uint32_t n = 3 * tileSize(ctx) + 11;
    for (auto [begin, end] : ranges) {
      SortOptions o;
      o.begin_bit = begin;
      o.end_bit = end;
      checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform");
    }
  });
}

TEST_CASE_FIXTURE(GpuTest, "Context::sort gives what the checked sort gives, every option") {
  // Context::sort (the CLI's sort) has no poison or canaries of its own: each of its options, at
  // the edges of a tile, must give the checked sort's keys, values, pass count and buffer. The
  // checked sort itself meets std::stable_sort for each of these options in the other cases.
  forEachPath([&](Context& ctx) {
    const uint32_t t = tileSize(ctx);
    for (uint32_t n : {0u, 1u, t - 1, t, t + 1, 3 * t + 5}) {
      for (int option = 0; option < 6; ++option) {
        if (n == 0 && option == 1) continue;  // argsort of nothing: refused alike (no values buffer)
        SortOptions o;
        bool pairs = true;
        if (option == 0) pairs = false;
        if (option == 1) o.argsort = true;
        if (option == 2) {
          o.key_type = KeyType::kU64;
          o.end_bit = 64;
        }
        if (option == 3) {
          o.key_type = KeyType::kF32;
          o.descending = true;
        }
        if (option == 4) {
          o.gpu_count = true;
          o.gpu_count_value = n / 2;
        }
        if (option == 5) o.end_bit = 4;
        INFO("count " << n << ", option " << option);
        const size_t words = o.key_type == KeyType::kU64 ? 2 * size_t{n} : n;
        const std::vector<uint32_t> input = makeKeys(words, Distribution::kLowBits, rng());
        std::vector<uint32_t> keys = input, values;
        if (pairs) {
          values.resize(n);
          std::iota(values.begin(), values.end(), 0u);
        }
        std::vector<uint32_t> plain_keys = keys, plain_values = values;
        CheckedStats checked;
        SortStats plain;
        std::string error;
        REQUIRE_MESSAGE(checkedSort(ctx, keys, values, o, &checked, &error), error);
        CHECK(checked.canaries_intact);
        REQUIRE_MESSAGE(ctx.sort(plain_keys, plain_values, o, &plain, &error), error);
        // With a GPU-side count only the first gpu_count_value elements are defined.
        const size_t defined = o.gpu_count ? std::min<size_t>(o.gpu_count_value, n) : n;
        const size_t defined_words = o.key_type == KeyType::kU64 ? 2 * defined : defined;
        CHECK(std::equal(keys.begin(), keys.begin() + defined_words, plain_keys.begin()));
        if (pairs) CHECK(std::equal(values.begin(), values.begin() + defined, plain_values.begin()));
        CHECK(plain.passes == checked.passes);
        CHECK(plain.result_in_temp == checked.result_in_temp);
        CHECK(plain.gpu_ms >= 0);  // lavapipe and the GPUs tested have timestamps on the compute queue
      }
    }
  });
}

// The options that change the order or the output, on every path, over all bits and over a bit
// range: descending over bits [2, 9); argsort over one pass, [0, 4), whose digit may be constant,
// where the indices must still be made.
TEST_CASE_FIXTURE(GpuTest, "descending order and argsort stay stable") {
  SortOptions descending, argsort;
  descending.descending = true;
  argsort.argsort = true;
  forEachPath([&](Context& ctx) {
    for (Distribution d : {Distribution::kUniform, Distribution::kLowBits, Distribution::kAllEqual}) {
      for (SortOptions o : {descending, argsort}) {
        INFO("option: " << (o.argsort ? "argsort" : "descending"));
        const uint32_t n = 4 * tileSize(ctx) + (o.argsort ? 1 : 3);
        checkSort(ctx, makeKeys(n, d, rng()), true, o, name(d));
        o.begin_bit = o.argsort ? 0 : 2;
        o.end_bit = o.argsort ? 4 : 9;
        checkSort(ctx, makeKeys(n, d, rng()), true, o, name(d));
      }
    }
  });
}

TEST_CASE_FIXTURE(GpuTest, "repeated sorts reuse the same buffers") {
  for (int i = 0; i < 3; ++i)
    checkSort(context(), makeKeys(10000 - 997 * i, Distribution::kUniform, rng()), i == 1, {}, "uniform");
}

TEST_CASE("the validation messenger reports errors" * doctest::test_suite("host")) {
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

TEST_CASE_FIXTURE(GpuTest, "skipped passes: keys that vary in a few digits only") {
  // Nibbles 2 and 5 vary, everything else is constant: most passes are skipped (six of eight
  // with 4-bit digits), and the data ends in the other ping-pong buffer than the pass count
  // predicts unless the final copy moves it.
  forEachPath([&](Context& ctx) {
    const uint32_t n = 5 * tileSize(ctx) + 7;
    for (uint32_t varying_mask : {0x00F00F00u, 0x0000F000u, 0xF0000000u, 0x0000000Fu, 0u}) {
      const std::vector<uint32_t> keys = keysVaryingIn(n, varying_mask);
      checkSort(ctx, keys, true, {}, "mask " + std::to_string(varying_mask));
      SortOptions o;
      o.begin_bit = 4;
      o.end_bit = 24;  // an odd pass count at either digit width: five or three
      checkSort(ctx, keys, false, o, "mask " + std::to_string(varying_mask));
    }
  });
}

TEST_CASE_FIXTURE(GpuTest, "signed keys") {
  forEachPath([&](Context& ctx) {
    const uint32_t n = 3 * tileSize(ctx) + 5;
    SortOptions o;
    o.key_type = KeyType::kI32;
    std::vector<uint32_t> keys = makeKeys(n, Distribution::kUniform, rng());
    const uint32_t specials[] = {0x80000000u, 0x7FFFFFFFu, 0u, 0xFFFFFFFFu, 1u};
    for (size_t i = 0; i < std::size(specials); ++i) keys[i * 97] = specials[i];
    checkSort(ctx, keys, true, o, "uniform i32");
    o.descending = true;
    checkSort(ctx, keys, true, o, "uniform i32");
    o.descending = false;
    o.begin_bit = 16;
    checkSort(ctx, keys, true, o, "uniform i32, high half");
  });
}

TEST_CASE_FIXTURE(GpuTest, "float keys in IEEE total order") {
  forEachPath([&](Context& ctx) {
    const uint32_t n = 3 * tileSize(ctx) + 9;
    SortOptions o;
    o.key_type = KeyType::kF32;
    std::uniform_real_distribution<float> real(-1000.0f, 1000.0f);
    std::vector<uint32_t> keys(n);
    for (auto& k : keys) {
      const float f = real(rng());
      std::memcpy(&k, &f, 4);
    }
    // -0, +0, +-inf, quiet and signalling NaNs of both signs, denormals, extremes.
    const uint32_t specials[] = {0x80000000u, 0x00000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
                                 0x7F800001u, 0xFF800001u, 0x00000001u, 0x80000001u, 0x7F7FFFFFu, 0xFF7FFFFFu};
    for (size_t i = 0; i < std::size(specials); ++i) {
      keys[i * 31] = specials[i];
      keys[n - 1 - i * 7] = specials[i];
    }
    checkSort(ctx, keys, true, o, "floats with specials");
    o.descending = true;
    checkSort(ctx, keys, true, o, "floats with specials");
    // The documented order, spelled out on a small input.
    o.descending = false;
    std::vector<uint32_t> small = {0x7FC00000u, 0x3F800000u, 0x00000000u, 0xFF800000u, 0x80000000u, 0xFFC00000u,
                                   0x7F800000u, 0xBF800000u};
    std::vector<uint32_t> none;
    std::string error;
    CheckedStats stats;
    REQUIRE_MESSAGE(checkedSort(ctx, small, none, o, &stats, &error), error);
    CHECK(stats.canaries_intact);
    const std::vector<uint32_t> expected = {0xFFC00000u, 0xFF800000u, 0xBF800000u, 0x80000000u,
                                            0x00000000u, 0x3F800000u, 0x7F800000u, 0x7FC00000u};
    CHECK(small == expected);
  });
}

TEST_CASE_FIXTURE(GpuTest, "64-bit keys") {
  forEachPath([&](Context& ctx) {
    const TuningConfig& u64 = getSorterProperties(ctx.sorter()).tuning_u64;
    const uint32_t t = u64.workgroup_size * u64.keys_per_thread;
    for (uint32_t n : {1u, t - 1, 2 * t + 3}) {
      std::vector<uint32_t> words = makeKeys(2 * n, Distribution::kUniform, rng());
      SortOptions o;
      o.key_type = KeyType::kU64;
      o.end_bit = 64;
      checkSort(ctx, words, true, o, "uniform u64");
      checkSort(ctx, words, false, o, "uniform u64");
      o.begin_bit = 30;  // digits straddle the two words
      o.end_bit = 41;
      checkSort(ctx, words, true, o, "uniform u64, bits 30..41");
      // High words all equal: the passes over the low word matter, those over the high word are
      // skipped.
      for (uint32_t i = 0; i < n; ++i) words[2 * i + 1] = 7;
      o.begin_bit = 0;
      o.end_bit = 64;
      o.descending = true;
      checkSort(ctx, words, true, o, "u64 with a constant high word");
    }
  });
}

TEST_CASE_FIXTURE(GpuTest, "small workgroups: every key type, order and bit range" * doctest::test_suite("subgroup")) {
  // 32 threads x 2 keys: with 8-bit digits each thread owns several of the 256 bins.
  for (const SortPath& path : kSortPaths) {
    INFO("path: " << std::string(path.name));
    Context& small = pathContext(path, 32, 2);
    const uint32_t n = 3 * tileSize(small) + 5;
    for (KeyType type : {KeyType::kU32, KeyType::kI32, KeyType::kF32, KeyType::kU64}) {
      // Low bits: many equal keys, so the pairs show whether equal keys kept their order.
      for (Distribution d : {Distribution::kUniform, Distribution::kLowBits}) {
        const bool wide = type == KeyType::kU64;
        const std::vector<uint32_t> words = makeKeys(wide ? 2 * n : n, d, rng());
        SortOptions o;
        o.key_type = type;
        o.end_bit = wide ? 64 : 32;
        checkSort(small, words, true, o, name(d));
        o.descending = true;
        checkSort(small, words, true, o, name(d));
        o.begin_bit = wide ? 30 : 3;  // partial digits; for u64, digits across the two words
        o.end_bit = wide ? 45 : 20;
        checkSort(small, words, d == Distribution::kLowBits, o, name(d));  // uniform: the keys-only scatter
      }
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "timed and profiled sorts: one time per sort, sorted output") {
  // The benchmarks' and demo's path: untimed warm-up sorts, then the timed ones, in one submission.
  forEachPath([&](Context& ctx) {
    const uint32_t n = 3 * tileSize(ctx) + 7;
    const std::vector<uint32_t> input = makeKeys(n, Distribution::kUniform, rng());
    std::vector<uint32_t> keys = input, values(n);
    std::iota(values.begin(), values.end(), 0u);
    std::vector<double> ms;
    std::string error;
    REQUIRE_MESSAGE(bench::timeSorts(ctx, keys, values, {}, 3, &ms, &error), error);
    CHECK(ms.size() == 3);
    CHECK(std::all_of(ms.begin(), ms.end(), [](double t) { return t > 0; }));
    bool stable = true;
    for (uint32_t i = 0; i < n; ++i) {
      stable = stable && keys[i] == input[values[i]];
      if (i > 0) stable = stable && (keys[i - 1] < keys[i] || (keys[i - 1] == keys[i] && values[i - 1] < values[i]));
    }
    CHECK_MESSAGE(stable, "timeSorts did not return the stable sort of its input");

    SortInfo asked;
    asked.count = n;
    std::vector<std::vector<double>> steps;
    keys = input;
    std::vector<uint32_t> none;
    REQUIRE_MESSAGE(bench::profileSorts(ctx, keys, none, {}, 2, &steps, &error), error);
    REQUIRE(steps.size() == 2);
    CHECK(steps[0].size() == 1 + 3 * getPassCount(ctx.sorter(), asked));  // the whole sort, then each dispatch
    std::vector<uint32_t> expected = input;
    std::sort(expected.begin(), expected.end());
    CHECK_MESSAGE(keys == expected, "profileSorts did not return its input sorted");
#ifdef VREN_RADIX_SHADER_CLOCKS
    // A profiling build: every onesweep tile of every pass counted once, none on other paths.
    std::vector<uint32_t> clocks;
    keys = input;
    REQUIRE_MESSAGE(bench::profileSorts(ctx, keys, none, {}, 1, &steps, &error, &clocks), error);
    REQUIRE(clocks.size() == VREN_RADIX_CLOCK_WORDS);
    const SorterProperties props = getSorterProperties(ctx.sorter());
    const bool onesweep = props.tuning.lookback_max_count >= n && n > props.block_size;
    const uint32_t tile = props.lookback_tile_size;
    const uint32_t passes = onesweep ? getPassCount(ctx.sorter(), asked) : 0;
    const uint32_t per_pass = onesweep ? (n + tile - 1) / tile : 0;
    CHECK(clocks[VREN_RADIX_CLOCK_TILES] == passes * per_pass);
    CHECK((clocks[VREN_RADIX_CLOCK_STORE] > 0) == onesweep);  // the stores take time
    // Each tile counts at most every tile before it.
    CHECK(clocks[VREN_RADIX_CLOCK_MISSING] <= passes * per_pass * (per_pass - 1) / 2);
#endif
  });
#ifdef VREN_RADIX_SHADER_CLOCKS
  {  // With no polls, tile t of each pass counts each of the t tiles before it itself.
    Context& ctx = lookbackContext(8, 256, 8, 0xFFFFFFFFu, 0);
    const SorterProperties props = getSorterProperties(ctx.sorter());
    const uint32_t tile = props.lookback_tile_size;
    const uint32_t n = 4 * tile + 5, tiles = 5;
    SortInfo asked;
    asked.count = n;
    const uint32_t passes = getPassCount(ctx.sorter(), asked);
    const std::vector<uint32_t> input = makeKeys(n, Distribution::kUniform, rng());
    std::vector<uint32_t> keys = input, none, clocks, expected = input;
    std::sort(expected.begin(), expected.end());
    std::vector<std::vector<double>> steps;
    std::string error;
    REQUIRE(tile > 0);
    REQUIRE_MESSAGE(bench::profileSorts(ctx, keys, none, {}, 1, &steps, &error, &clocks), error);
    CHECK_MESSAGE(keys == expected, "the unpolled sort did not return its input sorted");
    REQUIRE(clocks.size() == VREN_RADIX_CLOCK_WORDS);
    CHECK(clocks[VREN_RADIX_CLOCK_TILES] == passes * tiles);
    CHECK(clocks[VREN_RADIX_CLOCK_MISSING] == passes * tiles * (tiles - 1) / 2);
  }
#endif

  std::vector<uint32_t> empty, none;
  std::vector<double> ms;
  std::string error;
  REQUIRE_MESSAGE(bench::timeSorts(context(), empty, none, {}, 2, &ms, &error), error);
  CHECK(ms.size() == 2);
}

TEST_CASE_FIXTURE(GpuTest, "GPU-side count: zero, partial and max" * doctest::test_suite("subgroup")) {
  forEachPath([&](Context& ctx) {
    const uint32_t t = tileSize(ctx);
    const uint32_t n = 3 * t + 13;
    for (uint32_t gpu_count : {0u, 1u, t, n - 1, n, n + 1000}) {
      SortOptions o;
      o.gpu_count = true;
      o.gpu_count_value = gpu_count;
      checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform");
      o.end_bit = 12;
      checkSort(ctx, makeKeys(n, Distribution::kLowBits, rng()), false, o, "low-bits");
    }
  });
}

TEST_CASE_FIXTURE(GpuTest, "the look-back up to its limit, waiting or not, and the separate passes past it" *
                               doctest::test_suite("subgroup")) {
  // Small sorts take the look-back. Here its limit falls between two sizes: 5 tiles take it,
  // keys or pairs, 5 tiles and a key do not; then it reads no published count (poll
  // budget 0: each tile counts every earlier tile from its keys); then it is off. Past the limit
  // the passes run on 4-bit and on 8-bit digits. Skipped passes, argsort's first pass and
  // GPU-side counts are decided in different shaders on the two paths. Tiles of 32 threads x 2
  // keys, so that a few hundred keys cross several tiles.
  Context& small = pathContext(kSortPaths[1], 32, 2);
  const TuningConfig device = getSorterProperties(small.sorter()).tuning;
  const uint32_t tile = getSorterProperties(small.sorter()).lookback_tile_size;
  REQUIRE(tile > 0);
  struct Setting {
    uint32_t digit_bits, limit, budget;
  };
  for (const Setting& setting : {Setting{4, 5 * tile, device.lookback_poll_budget}, Setting{8, 5 * tile, 0u},
                                 Setting{4, 0u, device.lookback_poll_budget}}) {
    Context& ctx = lookbackContext(setting.digit_bits, 32, 2, setting.limit, setting.budget);
    INFO("look-back limit " << setting.limit << ", poll budget " << setting.budget << ", " << setting.digit_bits
                            << "-bit passes past it");
    for (uint32_t n : {1u, tile + 1, 5 * tile / 2, 5 * tile / 2 + 1, 5 * tile, 5 * tile + 1, 9 * tile + 17}) {
      // The documented limit: up to it, 8-bit digits in one dispatch per pass.
      for (bool pairs : {false, true}) {
        SortInfo asked;
        asked.count = n;
        if (pairs) asked.values.buffer = reinterpret_cast<VkBuffer>(uintptr_t{1});
        const bool lookback = n <= setting.limit;
        CHECK(getPassCount(ctx.sorter(), asked) == 32 / (lookback ? 8 : setting.digit_bits));
      }
      for (Distribution d : {Distribution::kUniform, Distribution::kLowBits, Distribution::kAllEqual})
        checkSort(ctx, makeKeys(n, d, rng()), n % 2 == 1, {}, name(d));
      for (uint32_t varying_mask : {0x00F00F00u, 0xF0000000u}) {
        const std::vector<uint32_t> keys = keysVaryingIn(n, varying_mask);
        SortOptions o;
        o.begin_bit = 4;
        o.end_bit = 24;  // an odd pass count in 4-bit digits
        checkSort(ctx, keys, true, o, "mask " + std::to_string(varying_mask));
        o.begin_bit = 0;
        o.end_bit = 12;  // two 8-bit passes, the last of 4 bits
        checkSort(ctx, keys, false, o, "mask " + std::to_string(varying_mask));
        o.argsort = true;
        o.end_bit = 8;  // a constant digit in the first pass, which must still make the indices
        checkSort(ctx, keys, true, o, "mask " + std::to_string(varying_mask));
      }
      SortOptions o;
      o.key_type = KeyType::kF32;
      o.descending = true;
      checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform f32");
      o.key_type = KeyType::kI32;
      checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), false, o, "uniform i32");
      o.key_type = KeyType::kU64;
      o.end_bit = 64;
      checkSort(ctx, makeKeys(2 * n, Distribution::kLowBits, rng()), true, o, "low-bits u64");
    }
    for (uint32_t gpu_count : {0u, 1u, 5 * tile / 2, 5 * tile}) {
      SortOptions o;
      o.gpu_count = true;
      o.gpu_count_value = gpu_count;
      checkSort(ctx, makeKeys(5 * tile / 2, Distribution::kUniform, rng()), true, o, "uniform");
      checkSort(ctx, makeKeys(5 * tile, Distribution::kLowBits, rng()), false, o, "low-bits");
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "the look-back stops at 1024 tiles" * doctest::test_suite("subgroup")) {
  // 64-key tiles and the device's limit (2^20 keys by default): on lavapipe the tile count, not
  // the limit, ends the look-back, at 65536 keys; elsewhere it goes on. Both sides, keys and
  // pairs, 4-bit passes past it.
  Context& ctx = pathContext(kSortPaths[1], 32, 2);
  const uint32_t tile = getSorterProperties(ctx.sorter()).lookback_tile_size;
  REQUIRE(getSorterProperties(ctx.sorter()).tuning.lookback_max_count >= 1024 * tile);
  REQUIRE(tile <= 64);
  for (uint32_t n : {1024 * tile, 1024 * tile + 1}) {
    SortInfo asked;
    asked.count = n;
    CHECK(getPassCount(ctx.sorter(), asked) == (n <= 1024 * tile || !onCpuDevice() ? 4u : 8u));
    checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), false, {}, "uniform");
    checkSort(ctx, makeKeys(n, Distribution::kAndOfTwo, rng()), true, {}, "and-of-two");
  }
}

namespace {

// The look-back on tiles of 32 threads x 2 keys, and from `threshold` keys on large ones: keys
// alone on 64 threads x 3 or 1 keys, with values on 32 x 5, 3 or 1, `slots` tiles at once.
TuningConfig smallAndLargeTiles(uint32_t threshold, uint32_t slots) {
  TuningConfig t = getSorterProperties(context().sorter()).tuning;
  t.lookback_workgroup_size = 32;
  t.lookback_keys_per_thread = 2;
  t.large_tile_workgroup_size = 64;
  t.large_tile_keys_per_thread = 3;
  t.large_tile_pairs_workgroup_size = 32;
  t.large_tile_pairs_keys_per_thread = 5;
  t.large_tile_min_keys_per_thread = 1;
  t.large_tile_pairs_min_keys_per_thread = 1;
  t.large_tile_slots = slots;
  t.large_tile_min_count = threshold;
  t.lookback_max_count = 0xFFFFFFFFu;
  t.block_max_count = 0;
  return t;
}

// Sorts of n keys through the look-back's tiles: keys and pairs of two distributions, f32
// descending, argsort, u64 keys, GPU-side counts with and without the count expected, one 4-bit
// digit.
void checkLookbackOptions(Context& ctx, uint32_t n) {
  INFO("count " << n);
  SortInfo asked;
  asked.count = n;
  CHECK(getPassCount(ctx.sorter(), asked) == 4);
  for (Distribution d : {Distribution::kUniform, Distribution::kLowBits}) {
    checkSort(ctx, makeKeys(n, d, rng()), false, {}, name(d));
    checkSort(ctx, makeKeys(n, d, rng()), true, {}, name(d));
  }
  SortOptions o;
  o.key_type = KeyType::kF32;
  o.descending = true;
  checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform f32 descending");
  o = {};
  o.argsort = true;
  checkSort(ctx, makeKeys(n, Distribution::kLowBits, rng()), true, o, "low-bits argsort");
  o = {};
  o.key_type = KeyType::kU64;
  o.end_bit = 64;
  checkSort(ctx, makeKeys(2 * n, Distribution::kUniform, rng()), true, o, "uniform u64");
  o = {};
  o.gpu_count = true;
  o.gpu_count_value = n / 3;
  checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform, a third on the GPU");
  // The shapes chosen for the third that is expected, within those whose tiles for n keys fit;
  // then for one key expected, whose tiles n's may exceed by more than run at once (the passes
  // then take the grids the setup writes, unless the workgroups loop over the tiles).
  o.expected_count = n / 3;
  checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform, a third on the GPU, expected");
  o.expected_count = 1;
  checkSort(ctx, makeKeys(n, Distribution::kLowBits, rng()), true, o, "low bits, a third on the GPU, one expected");
  o.expected_count = n / 3;
  o.key_type = KeyType::kF32;
  o.gpu_count_value = n;
  checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), false, o, "f32 keys, all on the GPU, a third expected");
  o = {};
  o.end_bit = 4;  // one 4-bit digit: from the threshold on, a 4-bit pass instead
  checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform, bits [0, 4)");
  // A constant second byte: the pass it skips must still clear the counts the third pass's tiles
  // publish (the first pass's words, by pass parity).
  std::vector<uint32_t> middle = makeKeys(n, Distribution::kUniform, rng());
  for (uint32_t& k : middle) k = (k & 0xFFFF00FFu) | 0x00002A00u;
  checkSort(ctx, middle, true, {}, "uniform, a constant second byte");
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "look-back sorts take large tiles from large_tile_min_count" * doctest::test_suite("subgroup")) {
  // Tiles of 32 threads x 2 keys below the threshold; from it, keys alone on 64 threads x 3 or 1
  // keys (odd tiles) and with values on 32 x 5, 3 or 1, whichever fills waves of 16 tiles best:
  // at 500 keys 64 x 1 and 32 x 1 (8 and 16 tiles, one wave), at 1000 keys 64 x 1 (16 tiles
  // against 6 of 64 x 3, one wave either way) and 32 x 3 (11 tiles against 32), at 2000 keys 64
  // x 3 (11 tiles against 32) and 32 x 5 (13 against 21). Both sides of the threshold and past
  // it, keys and pairs, every key type and option, and a GPU-side count below the count that
  // bounds it, which takes the largest shapes, or with expected_count those chosen for that. With
  // a third of the keys expected, at 499, 500 and 2000 keys n's tiles exceed the third's by at
  // most 16, so the passes dispatch n's tiles directly and those past the GPU-side count return;
  // at 1000 the 32-key tiles exceed it by 21, and the passes take the grids the setup writes, as
  // they do from 1000 keys on with one key expected.
  const uint32_t threshold = 500;
  const TuningConfig t = smallAndLargeTiles(threshold, 16);
  Context& ctx = contextWithTuning(t);
  const SorterProperties props = getSorterProperties(ctx.sorter());
  REQUIRE(props.lookback_tile_size == 64);
  REQUIRE(props.large_tile_size == 192);
  REQUIRE(props.large_tile_pairs_size == 160);
  REQUIRE(props.tuning.large_tile_min_count == threshold);
  REQUIRE(props.tuning.large_tile_min_keys_per_thread == 1);
  REQUIRE(props.tuning.large_tile_pairs_min_keys_per_thread == 1);
  REQUIRE(props.tuning.large_tile_slots == 16);
  for (uint32_t n : {threshold - 1, threshold, 1000u, 2000u}) checkLookbackOptions(ctx, n);
}

namespace {
// Sorts on looping workgroups whose varying digits follow constant ones: a skipped pass still
// clears the next pass's published words of every tile its workgroup would take, and the pass
// after it sorts by the histogram's totals of its digit. Then bit ranges whose last digit is
// narrower than 8 bits, descending, and 64-bit keys with a digit across the two words.
void checkDigitsAfterSkips(Context& ctx, uint32_t n) {
  INFO("count " << n);
  for (uint32_t varying_mask : {0x0000FF00u, 0x00F00000u, 0xFF00F000u}) {
    const std::string what = "mask " + std::to_string(varying_mask);
    for (bool pairs : {false, true}) checkSort(ctx, keysVaryingIn(n, varying_mask), pairs, {}, what);
    SortOptions o;
    o.argsort = true;  // its first pass never skips
    checkSort(ctx, keysVaryingIn(n, varying_mask), true, o, what + ", argsort");
  }
  SortOptions o;
  o.begin_bit = 4;
  o.end_bit = 22;  // digits of 8, 8 and 2 bits
  o.descending = true;
  checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "bits 4-22, descending");
  o.key_type = KeyType::kU64;
  o.begin_bit = 4;
  o.end_bit = 60;  // digits of bits 28-35 (across the two words) and 52-59
  checkSort(ctx, makeKeys(2 * n, Distribution::kUniform, rng()), true, o, "u64 bits 4-60, descending");
}
}  // namespace

TEST_CASE_FIXTURE(GpuTest, "large tiles on workgroups that loop over them" * doctest::test_suite("subgroup")) {
  // TuningConfig::large_tile_loop and large_tile_pairs_loop: 3 workgroups take the large tiles
  // in turn, each loading its next tile's keys while it stores the current one's; up to 27 tiles
  // of keys, 32 of pairs (on lavapipe at most 4 a workgroup: 7 and 8 workgroups), every option of
  // the test above. Tiles past a GPU-side count end the loops.
  TuningConfig t = smallAndLargeTiles(500, 3);
  t.large_tile_loop = t.large_tile_pairs_loop = 1;
  Context& ctx = contextWithTuning(t);
  REQUIRE(getSorterProperties(ctx.sorter()).tuning.large_tile_loop == 1);
  REQUIRE(getSorterProperties(ctx.sorter()).tuning.large_tile_pairs_loop == 1);
  for (uint32_t n : {577u, 5000u}) checkLookbackOptions(ctx, n);
  checkDigitsAfterSkips(ctx, 5000);
  // More workgroups asked for than there are tiles: a tile each.
  TuningConfig wide = t;
  wide.large_tile_slots = 100000;
  checkSort(contextWithTuning(wide), makeKeys(5000, Distribution::kUniform, rng()), true, {}, "uniform, 100000 slots");

  // Tiles staged in parts (the test above): the next tile's keys, and values, load once the last
  // part is staged. Large tiles from 0 keys: 6 tiles on 2 workgroups.
  TuningConfig h = tilesInHalves();
  h.large_tile_min_count = 0;
  h.large_tile_workgroup_size = h.large_tile_pairs_workgroup_size = h.lookback_workgroup_size;
  h.large_tile_keys_per_thread = h.large_tile_pairs_keys_per_thread = h.lookback_keys_per_thread;
  h.large_tile_min_keys_per_thread = h.large_tile_pairs_min_keys_per_thread = 0;
  h.large_tile_slots = 2;
  h.large_tile_loop = h.large_tile_pairs_loop = 1;
  Context& halves = contextWithTuning(h);
  const uint32_t tile = getSorterProperties(halves.sorter()).large_tile_size;
  REQUIRE(tile == h.lookback_workgroup_size * h.lookback_keys_per_thread);
  const uint32_t n = 5 * tile + 17;
  checkSort(halves, makeKeys(n, Distribution::kUniform, rng()), false, {}, "uniform");
  checkSort(halves, makeKeys(n, Distribution::kUniform, rng()), true, {}, "uniform");
  checkSort(halves, makeKeys(n, Distribution::kLowBits, rng()), true, {}, "low bits");
  checkSort(halves, makeKeys(n, Distribution::kAllEqual, rng()), false, {}, "all equal");
  checkDigitsAfterSkips(halves, n);
  SortOptions o;
  o.argsort = true;
  o.descending = true;
  checkSort(halves, makeKeys(4 * tile + 3, Distribution::kAndOfTwo, rng()), true, o, "descending argsort");
  o = {};
  o.gpu_count = true;
  o.gpu_count_value = 2 * tile + 1;
  checkSort(halves, makeKeys(5 * tile, Distribution::kUniform, rng()), true, o, "GPU-side count");
}

TEST_CASE_FIXTURE(GpuTest,
                  "large tiles two a unit: half the shared memory, tiles by ticket" * doctest::test_suite("subgroup")) {
  // TuningConfig::large_tile_per_unit and large_tile_pairs_per_unit: each large tile within half
  // the shared memory (in more parts, with packed counters or fewer threads, where half does not
  // hold it as it is), twice the tiles at once, and looping workgroups that take their tiles by
  // ticket. Tiles of 64 x 12 fit whole at one a unit.
  TuningConfig t = smallAndLargeTiles(500, 2);
  t.large_tile_keys_per_thread = t.large_tile_pairs_keys_per_thread = 12;
  t.large_tile_min_keys_per_thread = t.large_tile_pairs_min_keys_per_thread = 0;
  t.large_tile_pairs_workgroup_size = 64;
  t.lookback_values_apart = 0;
  const uint32_t whole = getSorterProperties(contextWithTuning(t).sorter()).large_tile_pairs_size;
  REQUIRE(whole == 64 * 12);
  t.large_tile_per_unit = t.large_tile_pairs_per_unit = 2;
  for (uint32_t loop : {1u, 0u}) {
    INFO("looping " << loop);
    t.large_tile_loop = t.large_tile_pairs_loop = loop;
    Context& ctx = contextWithTuning(t);
    const SorterProperties props = getSorterProperties(ctx.sorter());
    REQUIRE(props.tuning.large_tile_per_unit == 2);
    REQUIRE(props.tuning.large_tile_pairs_per_unit == 2);
    // About the same tile in half the memory (at 4 lanes 16 subgroups' counters take fewer threads).
    CHECK(props.large_tile_pairs_size <= whole);
    CHECK(props.large_tile_pairs_size >= whole * 3 / 4);
    CHECK(props.tuning.large_tile_loop == loop);
    for (uint32_t n : {577u, 9000u}) checkLookbackOptions(ctx, n);
    // Passes skipped (low bits: most of them; all equal: every one), whose tickets go unused.
    checkSort(ctx, makeKeys(9000, Distribution::kLowBits, rng()), true, {}, "low bits");
    checkSort(ctx, makeKeys(9000, Distribution::kAllEqual, rng()), true, {}, "all equal");
    // 1024 tiles less one (lavapipe's most for the look-back): a workgroup that takes its tiles
    // by ticket stops at its share of them (4 at most on lavapipe), or one that ran alone would
    // take them all and run past lavapipe's loop cap (run on one lavapipe thread to see it).
    checkSort(ctx, makeKeys(1023 * props.large_tile_pairs_size - 5, Distribution::kUniform, rng()), true, {},
              "uniform, 1023 tiles, the last one short");
  }
  // Half the memory with the rank counters inside the stage (TuningConfig::lookback_counters_in_stage),
  // on looping workgroups: pairs tiles of 128 x 32 (128 x 20 at 4 lanes, whose pipelines compile
  // faster; fewer threads at 4 and 8 lanes), too large for half staged whole as ranked at every
  // width, stage in fewer parts or with unpacked counters with them there (with 2 subgroups, 64
  // threads at 32 lanes gain nothing from it).
  {
    const uint32_t keys = context().device().subgroup_size <= 4 ? 20 : 32;
    TuningConfig lent = t;
    lent.large_tile_pairs_workgroup_size = 128;
    lent.large_tile_pairs_keys_per_thread = keys;
    lent.large_tile_loop = lent.large_tile_pairs_loop = 1;
    lent.lookback_counters_in_stage = 1;
    Context& ctx = contextWithTuning(lent);
    const SorterProperties p = getSorterProperties(ctx.sorter());
    CHECK(p.tuning.large_tile_pairs_keys_per_thread == keys);
    CHECK(p.tuning.lookback_counters_in_stage == 1);
    checkLookbackOptions(ctx, 9000);
  }
  // Sixteen a unit leave too little shared memory for any large tile (1/16 of 32 or 48 KiB holds
  // not even the counts and offsets of 256 bins): the sorts take the passes from
  // large_tile_min_count.
  t.large_tile_per_unit = t.large_tile_pairs_per_unit = 16;
  Context& none = contextWithTuning(t);
  CHECK(getSorterProperties(none.sorter()).large_tile_size == 0);
  CHECK(getSorterProperties(none.sorter()).large_tile_pairs_size == 0);
  SortInfo asked;
  asked.count = 9000;
  CHECK(getPassCount(none.sorter(), asked) == 8);
  checkSort(none, makeKeys(9000, Distribution::kUniform, rng()), true, {}, "uniform, sixteen a unit");
}

TEST_CASE_FIXTURE(GpuTest, "the choice of large tiles skips shapes with more tiles than the look-back takes") {
  // With 4096 tiles at once every shape is one wave, so the smallest would win; on lavapipe a
  // look-back sort takes at most 1024 tiles: at 100000 keys 64 x 1 (1563 tiles) and 32 x 3 (1042)
  // are skipped for 64 x 3 (521) and 32 x 5 (625).
  Context& ctx = contextWithTuning(smallAndLargeTiles(500, 4096));
  const uint32_t n = 100000;
  SortInfo asked;
  asked.count = n;
  CHECK(getPassCount(ctx.sorter(), asked) == 4);  // the look-back, on a shape that fits
  checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), false, {}, "uniform");
  checkSort(ctx, makeKeys(n, Distribution::kLowBits, rng()), true, {}, "low bits");
  // A GPU-side count expected small still takes only shapes whose tiles for the bound fit.
  SortOptions o;
  o.gpu_count = true;
  o.gpu_count_value = n;
  o.expected_count = 1000;
  checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform, GPU-side count, 1000 expected");
}

TEST_CASE_FIXTURE(GpuTest, "large_tile_min_count 0 with the look-back off: the passes alone") {
  // No look-back tile is made, large or small: memory queries and sorts of every size go to the
  // count, scan and scatter passes.
  TuningConfig t = getSorterProperties(context().sorter()).tuning;
  t.lookback_max_count = 0;
  t.large_tile_min_count = 0;
  t.block_max_count = 0;
  Context& ctx = contextWithTuning(t);
  const SorterProperties props = getSorterProperties(ctx.sorter());
  REQUIRE(props.large_tile_size == 0);
  REQUIRE(props.large_tile_pairs_size == 0);
  for (uint32_t n : {1u, 1000u, 3 * props.tile_size + 5}) {
    INFO("count " << n);
    checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), false, {}, "uniform");
    checkSort(ctx, makeKeys(n, Distribution::kLowBits, rng()), true, {}, "low bits");
  }
}

TEST_CASE_FIXTURE(GpuTest, "look-back tiles too large for unpacked rank counters pack them" * doctest::test_suite("subgroup")) {
  // A large tile of 128 threads x 49 keys asked for (odd: never staged in halves): on 32 KiB of
  // shared memory (lavapipe), at
  // 4, 8 or 16 lanes a subgroup, the tile that fits is the one whose rank counters hold two bins
  // a word (radix_tile_rank.glsl); keys per thread shrink until the packed layout fits, so the
  // unpacked one does not. On a 48 KiB GPU the tile fits unpacked. Both sides of the threshold,
  // keys, pairs, u64 keys and descending f32 argsort, over a few tiles.
  TuningConfig t = getSorterProperties(context().sorter()).tuning;
  t.lookback_max_count = 0xFFFFFFFFu;
  t.block_max_count = 0;
  t.large_tile_min_count = 4000;
  t.large_tile_workgroup_size = t.large_tile_pairs_workgroup_size = 128;
  t.large_tile_keys_per_thread = t.large_tile_pairs_keys_per_thread = 49;
  t.large_tile_min_keys_per_thread = t.large_tile_pairs_min_keys_per_thread = 0;  // that shape alone
  Context& ctx = contextWithTuning(t);
  const SorterProperties props = getSorterProperties(ctx.sorter());
  if (props.subgroup_size < 32) REQUIRE(props.large_tile_size < 128 * 49);  // shrunk: packed
  REQUIRE(props.large_tile_pairs_size == props.large_tile_size);
  for (uint32_t n : {3999u, 3u * props.large_tile_size + 7}) {
    INFO("count " << n);
    checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), false, {}, "uniform");
    checkSort(ctx, makeKeys(n, Distribution::kLowBits, rng()), true, {}, "low bits");
    SortOptions o;
    o.key_type = KeyType::kU64;
    o.end_bit = 64;
    checkSort(ctx, makeKeys(2 * n, Distribution::kUniform, rng()), true, o, "uniform u64");
    o = {};
    o.key_type = KeyType::kF32;
    o.descending = true;
    o.argsort = true;
    checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform f32 descending argsort");
  }
}

TEST_CASE_FIXTURE(GpuTest, "one-dispatch sorts up to one workgroup's keys, every option, and past them" *
                               doctest::test_suite("subgroup")) {
  // The device's tuning: sorts of up to block_size keys (u64: block_size_u64) run in one
  // workgroup, the smallest of the shapes for 1024, 2048 and 4096 keys that holds them. Sizes
  // around a subgroup, each shape's size, the block and one key past it (the next path), keys and
  // pairs; then every option just below the block size.
  Context& ctx = context();
  const SorterProperties props = getSorterProperties(ctx.sorter());
  const uint32_t b = props.block_size, s = props.subgroup_size;
  REQUIRE(b >= 1024);
  REQUIRE(props.block_size_u64 >= 1024);
  for (uint32_t n : {1u, 2u, s - 1, s, s + 1, 1023u, 1024u, 1025u, 2047u, 2048u, 2049u, b - 1, b, b + 1}) {
    if (n > b + 1) continue;
    SortInfo asked;
    asked.count = n;
    CHECK(getPassCount(ctx.sorter(), asked) == 4);  // 8-bit digits on either side
    for (Distribution d : {Distribution::kUniform, Distribution::kLowBits, Distribution::kAllEqual})
      checkSort(ctx, makeKeys(n, d, rng()), n % 2 == 0, {}, name(d));
  }
  const uint32_t n = b - 3;
  for (const auto& range : {std::pair{0u, 4u}, std::pair{3u, 20u}, std::pair{8u, 32u}}) {
    SortOptions o;  // one, three and three passes: the result in the temp buffers
    o.begin_bit = range.first;
    o.end_bit = range.second;
    checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform");
    o.descending = true;
    checkSort(ctx, makeKeys(n, Distribution::kLowBits, rng()), true, o, "low-bits");
  }
  for (Distribution d : {Distribution::kUniform, Distribution::kAllEqual}) {
    SortOptions o;
    o.argsort = true;
    checkSort(ctx, makeKeys(n, d, rng()), true, o, name(d));
    o.descending = true;
    checkSort(ctx, makeKeys(n, d, rng()), true, o, name(d));
  }
  for (KeyType type : {KeyType::kI32, KeyType::kF32}) {
    SortOptions o;
    o.key_type = type;
    std::vector<uint32_t> keys = makeKeys(n, Distribution::kUniform, rng());
    const uint32_t specials[] = {0x80000000u, 0x7FFFFFFFu, 0u, 0xFFFFFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u};
    for (size_t i = 0; i < std::size(specials); ++i) keys[i * 13] = specials[i];
    checkSort(ctx, keys, true, o, "uniform with specials");
    o.descending = true;
    checkSort(ctx, keys, false, o, "uniform with specials");
  }
  const uint32_t n64 = props.block_size_u64 - 1;
  for (const auto& range : {std::pair{0u, 64u}, std::pair{30u, 41u}}) {
    SortOptions o;
    o.key_type = KeyType::kU64;
    o.begin_bit = range.first;
    o.end_bit = range.second;
    checkSort(ctx, makeKeys(2 * n64, Distribution::kUniform, rng()), true, o, "uniform u64");
    o.descending = true;
    checkSort(ctx, makeKeys(2 * n64, Distribution::kLowBits, rng()), false, o, "low-bits u64");
  }
  for (uint32_t gpu_count : {0u, 1u, s + 1, n, n + 1000}) {
    SortOptions o;
    o.gpu_count = true;
    o.gpu_count_value = gpu_count;
    checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, o, "uniform");
  }
}

TEST_CASE_FIXTURE(GpuTest, "one-dispatch sorts stop at block_max_count") {
  TuningConfig tuning = getSorterProperties(context().sorter()).tuning;
  tuning.block_max_count = 100;
  tuning.lookback_max_count = 0;  // past the limit: 4-bit passes, so the pass count tells the path
  Context& ctx = contextWithTuning(tuning);
  REQUIRE(getSorterProperties(ctx.sorter()).block_size == 100);
  for (uint32_t n : {99u, 100u, 101u}) {
    SortInfo asked;
    asked.count = n;
    CHECK(getPassCount(ctx.sorter(), asked) == (n <= 100 ? 4u : 32u / tuning.digit_bits));
    checkSort(ctx, makeKeys(n, Distribution::kUniform, rng()), true, {}, "uniform");
  }
}

}  // namespace vren::radix::test
