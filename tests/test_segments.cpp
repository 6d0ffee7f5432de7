// Segmented sorts and top-k against std::stable_sort per segment: every key type and option,
// both ways (one workgroup per segment, and the two sorts), on every sort path; shapes from empty
// segments to segments past 2^20 elements; a GPU-side segment count; offsets that lie. Outputs
// are poisoned, every buffer is guarded by canaries, inputs must come back untouched. Then
// Context's segmented sorts and top-k, checked (checked_sorts.h). Runs under the validation layer.
#include <doctest/doctest.h>
#include <volk.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "checked_sorts.h"
#include "gpu_test.h"
#include "radix_shared.h"
#include "reliability.h"

namespace vren::radix::test {

namespace {

struct SegmentCase {
  std::vector<uint32_t> words;    // key_type's words per key
  std::vector<uint32_t> offsets;  // segment_count + 1; empty: top-k over the whole buffer
  SortOptions options;            // key type, bit range, descending (segmented sorts), argsort
  bool values = false;            // values (random words) move with the keys
  bool hint = false;              // max_segment_length: the longest segment (one workgroup each)
  uint32_t promise = 0;           // or, if not 0, this max_segment_length (a promise that may not hold)
  uint32_t gpu_segments = ~0u;    // a GPU-side segment count, if not ~0u
  uint32_t k = 0;                 // top-k when > 0
  bool largest = false;
};

uint32_t wordsPerKey(const SortOptions& o) {
  return o.key_type == KeyType::kU64 ? 2 : 1;
}

// The key's sort field as an unsigned number: the order map of signed and float keys, then the
// bit range.
uint64_t field(const std::vector<uint32_t>& words, size_t i, const SortOptions& o) {
  uint64_t key;
  if (o.key_type == KeyType::kU64) {
    key = words[2 * i] | (uint64_t{words[2 * i + 1]} << 32);
  } else {
    uint32_t k = words[i];
    if (o.key_type == KeyType::kI32) k ^= 0x80000000u;
    if (o.key_type == KeyType::kF32) k ^= (k >> 31) ? 0xFFFFFFFFu : 0x80000000u;
    key = k;
  }
  const uint32_t bits = o.end_bit - o.begin_bit;
  return bits >= 64 ? key : (key >> o.begin_bit) & ((uint64_t{1} << bits) - 1);
}

// Host-visible buffer of `bytes` (at least 16) followed by canaries; contents `fill`.
struct Guarded {
  GpuBuffer b;
  VkDeviceSize bytes = 0;
  uint32_t* words() const { return static_cast<uint32_t*>(b.mapped); }
};
Guarded makeGuarded(Context& ctx, VkDeviceSize bytes, uint32_t fill, VkBufferUsageFlags usage) {
  Guarded g;
  g.bytes = std::max<VkDeviceSize>(16, (bytes + 15) / 16 * 16);
  std::string error;
  REQUIRE_MESSAGE(ctx.createBuffer(g.bytes + kCanaryWords * 4, usage, true, &g.b, &error), error);
  std::fill_n(g.words(), g.bytes / 4, fill);
  std::fill_n(g.words() + g.bytes / 4, kCanaryWords, kCanary);
  return g;
}

// Runs `c` with ctx's sorter and checks everything; `check_order` false only checks that nothing
// outside the buffers was written (offsets that lie).
void run(Context& ctx, const SegmentCase& c, bool check_order = true) {
  const Sorter* sorter = ctx.sorter();
  const SortOptions& o = c.options;
  const uint32_t w = wordsPerKey(o);
  const uint32_t n = static_cast<uint32_t>(c.words.size() / w);
  const bool whole = c.offsets.empty();
  const uint32_t segments = whole ? 1 : static_cast<uint32_t>(c.offsets.size() - 1);
  const bool with_values = c.values || o.argsort;
  const bool topk = c.k > 0;
  INFO("n " << n << ", segments " << segments << ", key type " << static_cast<int>(o.key_type) << ", bits ["
            << o.begin_bit << ", " << o.end_bit << ")" << (o.descending ? ", descending" : "")
            << (o.argsort  ? ", argsort"
                : c.values ? ", values"
                           : "")
            << (c.hint ? ", hinted" : "")
            << (topk ? ", top-" + std::to_string(c.k) + (c.largest ? " largest" : "") : std::string()));

  const MemoryRequirements req = topk ? getTopKMemoryRequirements(sorter, n, segments, c.k, with_values, o.key_type)
                                      : getSegmentedMemoryRequirements(sorter, n, segments, with_values, o.key_type);
  const VkBufferUsageFlags usage = req.usage;
  std::vector<uint32_t> value_input(n);
  for (auto& v : value_input) v = rng()();
  const VkDeviceSize key_bytes = VkDeviceSize{n} * w * 4;
  const uint64_t out_slots = topk ? uint64_t{segments} * c.k : n;
  Guarded keys = makeGuarded(ctx, key_bytes, 0, usage);
  std::memcpy(keys.words(), c.words.data(), key_bytes);
  Guarded values = makeGuarded(ctx, VkDeviceSize{n} * 4, 0, usage);
  std::memcpy(values.words(), value_input.data(), VkDeviceSize{n} * 4);
  Guarded out_keys = makeGuarded(ctx, out_slots * w * 4, kPoison, usage);
  Guarded out_values = makeGuarded(ctx, out_slots * 4, kPoison, usage);
  Guarded internal = makeGuarded(ctx, req.internal_size, kPoison, req.internal_usage);
  Guarded offsets = makeGuarded(ctx, c.offsets.size() * 4, 0, usage);
  if (!whole) std::memcpy(offsets.words(), c.offsets.data(), c.offsets.size() * 4);
  Guarded segment_count = makeGuarded(ctx, 4, c.gpu_segments, usage);

  SegmentedSortInfo info;
  info.sort = sortInfoFor(o, n);
  info.sort.keys = {keys.b.buffer, 0, key_bytes};
  if (with_values) info.sort.values = {values.b.buffer, 0, VkDeviceSize{n} * 4};
  info.sort.internal = {internal.b.buffer, 0, req.internal_size};
  if (!whole) {
    info.offsets = {offsets.b.buffer, 0, c.offsets.size() * 4};
    info.segment_count = segments;
  }
  if (c.gpu_segments != ~0u) info.segment_count_buffer = {segment_count.b.buffer, 0, 4};
  if (c.promise) info.max_segment_length = c.promise;
  if (c.hint) {
    uint32_t longest = 0;
    for (uint32_t s = 0; s < segments && !whole; ++s) longest = std::max(longest, c.offsets[s + 1] - c.offsets[s]);
    info.max_segment_length = std::max(1u, whole ? n : std::min(longest, n));  // lying offsets: n
  }
  TopKInfo topk_info;
  if (topk) {
    topk_info.input = info;
    topk_info.k = c.k;
    topk_info.largest = c.largest;
    topk_info.out_keys = {out_keys.b.buffer, 0, out_slots * w * 4};
    if (with_values) topk_info.out_values = {out_values.b.buffer, 0, out_slots * 4};
    const char* why = validateTopKInfo(sorter, topk_info);
    REQUIRE_MESSAGE(why == nullptr, why);
  } else {
    info.sort.keys_temp = {out_keys.b.buffer, 0, key_bytes};
    if (with_values) info.sort.values_temp = {out_values.b.buffer, 0, VkDeviceSize{n} * 4};
    const char* why = validateSegmentedSortInfo(sorter, info);
    REQUIRE_MESSAGE(why == nullptr, why);
  }
  SortResult result{};
  std::string error;
  REQUIRE_MESSAGE(ctx.submit(
                      [&](VkCommandBuffer cmd) {
                        if (topk)
                          cmdTopK(sorter, cmd, topk_info);
                        else
                          result = cmdSortSegmented(sorter, cmd, info);
                        toHost(cmd);
                      },
                      &error),
                  error);

  for (const Guarded* g : {&keys, &values, &out_keys, &out_values, &internal, &offsets, &segment_count})
    CHECK_MESSAGE(canariesIntact(g->b, g->bytes), "a canary was overwritten");
  CHECK_MESSAGE(std::memcmp(keys.words(), c.words.data(), key_bytes) == 0, "the input keys changed");
  CHECK_MESSAGE(std::memcmp(values.words(), value_input.data(), VkDeviceSize{n} * 4) == 0, "the input values changed");
  if (check_order) {
    const bool empty = n == 0 || segments == 0 || o.begin_bit == o.end_bit;
    if (!topk) CHECK(result.in_temp == !empty);
    // The segments in use, and their elements, stably sorted one by one.
    const uint32_t used = c.gpu_segments != ~0u ? std::min(c.gpu_segments, segments) : segments;
    const bool descending = topk ? c.largest : o.descending;
    std::string mismatch;
    std::vector<uint32_t> order;
    for (uint32_t s = 0; s < used && mismatch.empty(); ++s) {
      const uint32_t first = whole ? 0 : c.offsets[s], last = whole ? n : c.offsets[s + 1];
      order.resize(last - first);
      std::iota(order.begin(), order.end(), first);
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return descending ? field(c.words, a, o) > field(c.words, b, o) : field(c.words, a, o) < field(c.words, b, o);
      });
      const uint32_t results = topk ? std::min<uint32_t>(c.k, last - first) : last - first;
      const uint32_t slots = topk ? c.k : last - first;
      for (uint32_t r = 0; r < slots && mismatch.empty(); ++r) {
        const uint64_t at = topk ? uint64_t{s} * c.k + r : first + r;
        const bool written = r < results;
        for (uint32_t x = 0; x < w; ++x) {
          const uint32_t expected = written ? c.words[uint64_t{order[r]} * w + x] : kPoison;
          if (out_keys.words()[at * w + x] != expected) mismatch = "key";
        }
        if (with_values) {
          const uint32_t expected = written ? (o.argsort ? order[r] : value_input[order[r]]) : kPoison;
          if (out_values.words()[at] != expected) mismatch = "value";
        }
        if (!mismatch.empty()) mismatch += " mismatch in segment " + std::to_string(s) + " at " + std::to_string(r);
      }
    }
    // Past the segments in use nothing is written.
    const uint64_t written_slots =
        topk ? uint64_t{used} * c.k : (whole || used == 0 ? (used ? n : 0) : c.offsets[used]);
    for (uint64_t at = written_slots; at < out_slots && mismatch.empty(); ++at)
      if (out_keys.words()[at * w] != kPoison) mismatch = "a slot past the segments in use was written";
    CHECK_MESSAGE(mismatch.empty(), mismatch);
  }
  for (Guarded* g : {&keys, &values, &out_keys, &out_values, &internal, &offsets, &segment_count})
    ctx.destroyBuffer(&g->b);
}

// Offsets of segments whose lengths are drawn from [min_length, max_length], `empty_share` of
// them empty, totalling about `n`.
std::vector<uint32_t> randomOffsets(uint32_t n, uint32_t min_length, uint32_t max_length, double empty_share = 0.1) {
  std::vector<uint32_t> offsets{0};
  std::uniform_int_distribution<uint32_t> length(min_length, max_length);
  std::bernoulli_distribution empty(empty_share);
  while (offsets.back() < n) offsets.push_back(std::min(n, offsets.back() + (empty(rng()) ? 0 : length(rng()))));
  return offsets;
}

std::vector<uint32_t> keysFor(uint32_t n, const SortOptions& o, Distribution d) {
  return makeKeys(size_t{n} * wordsPerKey(o), d, rng());
}

SortOptions optionsFor(KeyType type) {
  SortOptions o;
  o.key_type = type;
  o.end_bit = type == KeyType::kU64 ? 64 : 32;
  return o;
}

// Runs `c` with values, then descending argsort, then a bit range, each value mode once; leaves
// c's options at their defaults.
void runEveryOption(Context& ctx, SegmentCase& c) {
  const KeyType type = c.options.key_type;
  c.values = true;
  run(ctx, c);
  c.options.descending = true;
  c.values = false;
  c.options.argsort = true;
  run(ctx, c);
  c.options.begin_bit = type == KeyType::kU64 ? 30 : 3;
  c.options.end_bit = type == KeyType::kU64 ? 45 : 20;
  c.options.argsort = false;
  run(ctx, c);
  c.options = optionsFor(type);
}

// Each segment's elements in stable order (largest first if `largest`), at most k of each (0:
// all): their key words to *keys, their input indices to *indices. Offsets empty: one segment.
void expectSegments(const std::vector<uint32_t>& words, const std::vector<uint32_t>& offsets, const SortOptions& o,
                    bool largest, uint32_t k, std::vector<uint32_t>* keys, std::vector<uint32_t>* indices) {
  const uint32_t w = wordsPerKey(o);
  const uint32_t n = static_cast<uint32_t>(words.size() / w);
  const std::vector<uint32_t> bounds = offsets.empty() ? std::vector<uint32_t>{0, n} : offsets;
  for (size_t s = 0; s + 1 < bounds.size(); ++s) {
    std::vector<uint32_t> order(bounds[s + 1] - bounds[s]);
    std::iota(order.begin(), order.end(), bounds[s]);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return largest ? field(words, b, o) < field(words, a, o) : field(words, a, o) < field(words, b, o);
    });
    if (k) order.resize(std::min<size_t>(k, order.size()));
    for (uint32_t i : order) keys->insert(keys->end(), words.begin() + size_t{i} * w, words.begin() + size_t{i + 1} * w);
    indices->insert(indices->end(), order.begin(), order.end());
  }
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "segmented sorts: every key type, order, bit range and value mode, both ways" *
                               doctest::test_suite("subgroup")) {
  for (const SortPath& path : kSortPaths) {
    INFO("path: " << std::string(path.name));
    Context& ctx = pathContext(path, 32, 2);
    const uint32_t n = 5 * 64 + 13;
    for (KeyType type : {KeyType::kU32, KeyType::kI32, KeyType::kF32, KeyType::kU64}) {
      // Segments of up to 16 keys (a thread each when promised) and up to 40 (a subgroup or a
      // workgroup each).
      for (uint32_t longest : {16u, 40u}) {
        SegmentCase c;
        c.options = optionsFor(type);
        c.words = keysFor(n, c.options, Distribution::kLowBits);  // many equal keys: stability shows
        c.offsets = randomOffsets(n, 1, longest);
        for (bool hint : {false, true}) {
          c.hint = hint;
          runEveryOption(ctx, c);
        }
      }
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "segmented sorts: segments past a block, a workgroup each for every pass" *
                               doctest::test_suite("subgroup")) {
  // The one-dispatch sort off, so that segments past a subgroup's take the sweep while the longest
  // holds at most 2 * count / 256 elements; small tiles, so that each segment spans many.
  for (uint32_t tile_threads : {32u, 0u}) {
    const SortPath& path = kSortPaths[1];
    REQUIRE(path.lookback);
    REQUIRE(!path.block);
    Context& ctx = pathContext(path, tile_threads, 2);
    INFO("tile threads: " << tile_threads);
    const uint32_t n = 128 * 300 + 77;
    // Many equal keys, so that stability shows; and spread-out u32 keys, every digit in play.
    for (const auto& [type, distribution] :
         {std::pair{KeyType::kU32, Distribution::kLowBits}, std::pair{KeyType::kI32, Distribution::kLowBits},
          std::pair{KeyType::kF32, Distribution::kLowBits}, std::pair{KeyType::kU64, Distribution::kLowBits},
          std::pair{KeyType::kU32, Distribution::kUniform}}) {
      SegmentCase c;
      c.options = optionsFor(type);
      c.words = keysFor(n, c.options, distribution);
      c.offsets = randomOffsets(n, 200, 300, 0.02);
      for (bool hint : {true, false}) {
        c.hint = hint;
        runEveryOption(ctx, c);
        c.k = type == KeyType::kU64 ? 7 : 1100;  // top-k by the sort: past the select's k, or u64
        c.largest = true;
        c.values = true;
        run(ctx, c);
        c.k = 0;
        c.largest = false;
      }
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "segmented sorts: empty, single, huge among tiny, and many small segments") {
  Context& ctx = context();
  const uint32_t block = getSorterProperties(ctx.sorter()).block_size;
  SegmentCase c;
  c.options = optionsFor(KeyType::kU32);
  c.values = true;
  auto both = [&] {
    for (bool hint : {false, true}) {
      c.hint = hint;
      uint32_t longest = 0;
      for (size_t s = 0; s + 1 < c.offsets.size(); ++s) longest = std::max(longest, c.offsets[s + 1] - c.offsets[s]);
      if (hint && longest > block) continue;  // the promise would not hold
      run(ctx, c);
    }
  };
  // No elements; segments that are all empty; one segment.
  c.words = {};
  c.offsets = {0};
  both();
  c.offsets = {0, 0, 0};
  both();
  for (uint32_t n : {1u, 2u, 17u, block - 1, block, block + 1, 3 * block + 5}) {
    c.words = makeKeys(n, Distribution::kUniform, rng());
    c.offsets = {0, n};
    both();
    c.offsets = {0, 0, n, n, n};  // empty ones around it
    both();
  }
  // One huge segment among tiny ones.
  c.words = makeKeys(20000, Distribution::kAndOfTwo, rng());
  c.offsets = randomOffsets(9000, 1, 5);
  c.offsets.push_back(19000);
  for (uint32_t at = 19000; at < 20000; at += 3) c.offsets.push_back(std::min(20000u, at + 3));
  both();
  // Many small segments: 1-16 elements each.
  const uint32_t n = onCpuDevice() ? 200000 : 16u << 20;
  c.words = makeKeys(n, Distribution::kUniform, rng());
  c.offsets = randomOffsets(n, 1, 16, 0.0);
  both();
}

TEST_CASE_FIXTURE(GpuTest, "segmented sorts: segments longer than 2^20") {
  Context& ctx = context();
  SegmentCase c;
  c.options = optionsFor(KeyType::kU32);
  const uint32_t n = (1u << 20) + 3000;
  c.words = makeKeys(n, Distribution::kUniform, rng());
  c.offsets = {0, 1000, 1001, n};
  run(ctx, c);
  c.options.argsort = true;
  c.options.descending = true;
  run(ctx, c);
  // Top-k of segments averaging over 2^18 keys: the sorts, not a workgroup per segment.
  c.options.descending = false;
  c.k = 7;
  c.largest = true;
  run(ctx, c);
}

TEST_CASE_FIXTURE(GpuTest, "segmented sorts: a GPU-side segment count" * doctest::test_suite("subgroup")) {
  for (const SortPath& path : kSortPaths) {
    INFO("path: " << std::string(path.name));
    Context& ctx = pathContext(path, 32, 2);
    SegmentCase c;
    c.options = optionsFor(KeyType::kU32);
    c.values = true;
    c.words = makeKeys(700, Distribution::kUniform, rng());
    c.offsets = randomOffsets(700, 1, 60);
    const uint32_t segments = static_cast<uint32_t>(c.offsets.size() - 1);
    for (uint32_t gpu : {0u, 1u, segments / 2, segments, segments + 7}) {
      c.gpu_segments = gpu;
      for (bool hint : {false, true}) {
        c.hint = hint;
        c.k = 0;
        run(ctx, c);
        c.k = 5;  // top-k of the segments in use
        run(ctx, c);
      }
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "segmented sorts: offsets that lie stay inside the buffers") {
  Context& ctx = context();
  SegmentCase c;
  c.options = optionsFor(KeyType::kU32);
  c.values = true;
  c.words = makeKeys(500, Distribution::kUniform, rng());
  for (const std::vector<uint32_t>& offsets :
       std::vector<std::vector<uint32_t>>{{0, 400, 100, 500},          // decreasing
                                          {7, 50, 500},                // not starting at 0
                                          {0, 300, 0xFFFFFFF0u, 600},  // past the end
                                          {0xFFFFFFFFu, 0, 0xFFFFFFFFu}}) {
    c.offsets = offsets;
    c.promise = 0;
    for (bool hint : {false, true}) {
      c.hint = hint;
      run(ctx, c, false);
      c.k = 3;
      run(ctx, c, false);
      c.k = 0;
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "segmented sorts: a segment longer than promised stays inside the buffers") {
  Context& ctx = context();
  SegmentCase c;
  c.options = optionsFor(KeyType::kU32);
  c.values = true;
  const uint32_t block = getSorterProperties(ctx.sorter()).block_size;
  c.words = makeKeys(3 * block, Distribution::kUniform, rng());
  c.offsets = {0, 5, 3 * block};  // the second segment holds far more than the promised 16
  c.promise = 16;
  run(ctx, c, false);
  c.k = 4;
  run(ctx, c, false);
}

TEST_CASE_FIXTURE(GpuTest, "top-k: smallest and largest per segment, values and argsort, k past a segment" *
                               doctest::test_suite("subgroup")) {
  for (const SortPath& path : kSortPaths) {
    INFO("path: " << std::string(path.name));
    Context& ctx = pathContext(path, 32, 2);
    for (KeyType type : {KeyType::kU32, KeyType::kF32, KeyType::kU64}) {
      SegmentCase c;
      c.options = optionsFor(type);
      c.words = keysFor(600, c.options, Distribution::kLowBits);
      c.offsets = randomOffsets(600, 1, 70);
      for (uint32_t k : {1u, 5u, 64u, 100u}) {
        c.k = k;
        for (bool hint : {false, true}) {
          c.hint = hint;
          c.largest = !c.largest;
          c.values = k % 2 == 1;
          c.options.argsort = !c.values;
          run(ctx, c);
        }
      }
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "top-k per segment past the per-segment select's k") {
  Context& ctx = context();
  SegmentCase c;
  c.options = optionsFor(KeyType::kU32);
  c.words = makeKeys(5000, Distribution::kLowBits, rng());
  c.offsets = {0, 10, 1500, 1500, 5000};
  c.values = true;
  for (uint32_t k : {1024u, 1025u, 3000u}) {
    c.k = k;
    c.largest = k % 2 == 1;
    run(ctx, c);
  }
}

TEST_CASE_FIXTURE(GpuTest, "top-k over the whole buffer") {
  Context& ctx = context();
  const uint32_t block = getSorterProperties(ctx.sorter()).block_size;
  for (uint32_t n : {1u, 100u, block, block + 1, 50000u}) {
    SegmentCase c;
    c.options = optionsFor(KeyType::kU32);
    c.words = makeKeys(n, Distribution::kAndOfTwo, rng());
    for (uint32_t k : {1u, 7u, 2048u, n, n + 5}) {
      c.k = k;
      c.largest = k % 2 == 0;
      c.options.argsort = true;
      run(ctx, c);
    }
  }
  // Past the select's 512 workgroups of a round of 4096 keys each, they gather in two rounds;
  // keys spread over the range in descending order put the smallest in the last one's second.
  SegmentCase c;
  c.options = optionsFor(KeyType::kU32);
  const uint32_t n = 512 * (4096 + 1024);
  c.words.resize(n);
  for (uint32_t i = 0; i < n; ++i) c.words[i] = static_cast<uint32_t>((uint64_t{n - 1 - i} << 32) / n);
  c.k = 2048;
  c.options.argsort = true;
  run(ctx, c);
}

TEST_CASE_FIXTURE(GpuTest, "top-k over the whole buffer by radix select: key types, ties, bit ranges, largest" *
                               doctest::test_suite("subgroup")) {
  Context& ctx = context();
  const uint32_t block = getSorterProperties(ctx.sorter()).block_size;
  for (KeyType type : {KeyType::kU32, KeyType::kI32, KeyType::kF32}) {
    for (Distribution d : {Distribution::kUniform, Distribution::kAllEqual, Distribution::kLowBits,
                           Distribution::kAndOfTwo, Distribution::kDescending}) {
      // One workgroup's run of keys, and several (ties split across them).
      for (uint32_t n : {block + 1, 3 * block + 17, 70001u}) {
        if (n == 70001u && type != KeyType::kU32 && d != Distribution::kAllEqual) continue;
        SegmentCase c;
        c.options = optionsFor(type);
        c.words = keysFor(n, c.options, d);
        for (uint32_t k : {1u, 2u, 100u, block / 2 + 3, std::min(n - 1, 4096u)}) {
          c.k = k;
          c.largest = !c.largest;
          c.values = k % 2 == 0;
          c.options.argsort = !c.values;
          run(ctx, c);
        }
        c.options.begin_bit = 5;  // a range of two levels, the top one partial
        c.options.end_bit = 17;
        c.k = 300;
        run(ctx, c);
        c.largest = !c.largest;
        run(ctx, c);
      }
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "top-k of many keys on a real GPU") {
  // lavapipe is too slow for these: level 1 gathering in several rounds, and with the device's
  // tuning the settle phase's workgroups, one per compute unit (up to 2^21 keys on NVIDIA), and
  // above them the last level and the collect.
  if (onCpuDevice()) return;
  Context& ctx = context();
  for (Distribution d : {Distribution::kUniform, Distribution::kLowBits, Distribution::kAllEqual}) {
    SegmentCase c;
    c.options = optionsFor(KeyType::kU32);
    c.words = makeKeys(d == Distribution::kLowBits ? (1u << 21) - 3 : (1u << 22) + 5, d, rng());
    for (uint32_t k : {1u, 4096u}) {
      c.k = k;
      c.largest = !c.largest;
      c.options.argsort = true;
      run(ctx, c);
    }
  }
}

// Keys that leave more candidates than fit after level 1 take the last level and the collect,
// or where the tuning asks the settle phase, whose workgroups wait for each other's counts; with
// no polls at all, each counts every key itself.
TEST_CASE_FIXTURE(GpuTest, "top-k over the whole buffer: the last level and collect, or the settle phase" *
                               doctest::test_suite("subgroup")) {
  const TuningConfig device = getSorterProperties(context().sorter()).tuning;
  TuningConfig unsettled = device, settled = device, unpolled = device;
  unsettled.select_settle_max_count = 0;
  settled.select_settle_max_count = unpolled.select_settle_max_count = 0xFFFFFFFFu;
  unpolled.lookback_poll_budget = 0;
  for (const TuningConfig* t : {&unsettled, &settled, &unpolled}) {
    Context& ctx = contextWithTuning(*t);
    CAPTURE(t->select_settle_max_count);
    CAPTURE(t->lookback_poll_budget);
    for (Distribution d : {Distribution::kAllEqual, Distribution::kLowBits}) {
      SegmentCase c;
      c.options = optionsFor(KeyType::kU32);
      c.words = keysFor(40000, c.options, d);
      for (uint32_t k : {1u, 333u, 4096u}) {
        c.k = k;
        c.largest = !c.largest;
        c.values = k == 333u;
        c.options.argsort = !c.values;
        run(ctx, c);
      }
    }
  }
}

TEST_CASE("segmented sorts and top-k refuse what they cannot run, with a sentence" * doctest::test_suite("host")) {
  checkRefused(validateSegmentOffsets(std::vector<uint32_t>{}, 0), "at least one", "no offsets");
  checkRefused(validateSegmentOffsets(std::vector<uint32_t>{1, 5}, 5), "first", "first offset not 0");
  checkRefused(validateSegmentOffsets(std::vector<uint32_t>{0, 4, 3, 5}, 5), "decrease", "decreasing offsets");
  checkRefused(validateSegmentOffsets(std::vector<uint32_t>{0, 4}, 5), "last", "last offset not the count");
  CHECK(validateSegmentOffsets(std::vector<uint32_t>{0, 0, 5, 5}, 5) == nullptr);

  Context& ctx = context();
  const Sorter* sorter = ctx.sorter();
  Buffers buffers(ctx);
  const uint32_t n = 1000;
  const MemoryRequirements req = getSegmentedMemoryRequirements(sorter, n, 10, true);
  CHECK(req.internal_size > getMemoryRequirements(sorter, n, true).internal_size);
  SegmentedSortInfo info;
  info.sort.count = n;
  info.sort.keys = {buffers.make(4 * n, req.usage), 0, 4 * n};
  info.sort.keys_temp = {buffers.make(4 * n, req.usage), 0, 4 * n};
  info.sort.values = {buffers.make(4 * n, req.usage), 0, 4 * n};
  info.sort.values_temp = {buffers.make(4 * n, req.usage), 0, 4 * n};
  info.sort.internal = {buffers.make(req.internal_size, req.internal_usage), 0, req.internal_size};
  info.offsets = {buffers.make(44, req.usage), 0, 44};
  info.segment_count = 10;
  CHECK(validateSegmentedSortInfo(sorter, info) == nullptr);

  SegmentedSortInfo bad = info;
  bad.offsets = {};
  checkRefused(validateSegmentedSortInfo(sorter, bad), "offsets", "no offsets buffer");
  bad = info;
  bad.segment_count = 11;
  checkRefused(validateSegmentedSortInfo(sorter, bad), "offsets", "offsets buffer too small");
  bad = info;
  bad.offsets.offset = 2;
  bad.offsets.size = 40;
  checkRefused(validateSegmentedSortInfo(sorter, bad), "multiple of 4", "misaligned offsets");
  bad = info;
  bad.sort.internal.size = getMemoryRequirements(sorter, n, true).internal_size;
  checkRefused(validateSegmentedSortInfo(sorter, bad), "internal", "internal buffer sized for cmdSort");
  bad = info;
  bad.sort.values_temp = {};
  checkRefused(validateSegmentedSortInfo(sorter, bad), "values_temp", "no values_temp");
  bad = info;
  bad.sort.keys_temp = bad.offsets;
  bad.sort.keys_temp.size = 4 * n;
  checkRefused(validateSegmentedSortInfo(sorter, bad), "overlap", "result over the offsets");
  bad = info;
  bad.sort.argsort = true;
  bad.sort.end_bit = 0;
  checkRefused(validateSegmentedSortInfo(sorter, bad), "bit range", "argsort of an empty bit range");
  bad = info;
  bad.segment_count_buffer = {info.offsets.buffer, 2, 4};
  checkRefused(validateSegmentedSortInfo(sorter, bad), "multiple of 4", "misaligned segment count");

  TopKInfo topk;
  topk.input = info;
  topk.input.sort.keys_temp = {};
  topk.input.sort.values_temp = {};
  topk.k = 16;
  topk.out_keys = {buffers.make(4 * 160, req.usage), 0, 4 * 160};
  topk.out_values = {buffers.make(4 * 160, req.usage), 0, 4 * 160};
  CHECK(validateTopKInfo(sorter, topk) == nullptr);
  TopKInfo bad_topk = topk;
  bad_topk.k = 0;
  checkRefused(validateTopKInfo(sorter, bad_topk), "k must", "k = 0");
  bad_topk = topk;
  bad_topk.input.sort.descending = true;
  checkRefused(validateTopKInfo(sorter, bad_topk), "largest", "descending instead of largest");
  bad_topk = topk;
  bad_topk.k = 17;
  checkRefused(validateTopKInfo(sorter, bad_topk), "out_keys", "outputs too small for k");
  bad_topk = topk;
  bad_topk.out_values = {};
  checkRefused(validateTopKInfo(sorter, bad_topk), "out_values", "no out_values");
  bad_topk = topk;
  bad_topk.input.offsets = {};
  bad_topk.input.segment_count_buffer = {info.offsets.buffer, 0, 4};
  checkRefused(validateTopKInfo(sorter, bad_topk), "offsets", "a GPU segment count without offsets");
  bad_topk = topk;
  bad_topk.k = 1u << 28;
  checkRefused(validateTopKInfo(sorter, bad_topk), "2^30", "segment_count * k too large");

  // A whole buffer too large for one workgroup takes the radix select, whose words reach past the
  // multi-pass layout: an output there overlaps them.
  const uint32_t whole = getSorterProperties(sorter).block_size + 1000;
  const MemoryRequirements select_req = getTopKMemoryRequirements(sorter, whole, 1, 10, false);
  TopKInfo select;
  select.input.sort.count = whole;
  select.input.sort.keys = {buffers.make(4 * whole, req.usage), 0, 4 * whole};
  const VkBuffer shared = buffers.make(select_req.internal_size + 4096, select_req.internal_usage);
  select.input.sort.internal = {shared, 0, select_req.internal_size};
  select.k = 10;
  select.out_keys = {buffers.make(40, req.usage), 0, 40};
  CHECK(validateTopKInfo(sorter, select) == nullptr);
  select.out_keys = {shared, 4 * VREN_RADIX_TOPK_WORDS - 64, 40};  // past the multi-pass layout
  checkRefused(validateTopKInfo(sorter, select), "overlap", "an output inside the select's words");
}

// What the CLI's `sort --segments` and `topk` run: Context::sortSegmented and Context::topK agree
// with their checked versions, which see every write outside the buffers and into a short
// segment's unused result slots, and with the stable order per segment.
TEST_CASE_FIXTURE(GpuTest, "Context's segmented sorts and top-k agree with their checked versions") {
  Context& ctx = context();
  const uint32_t n = 3000;
  // A segment longer than a one-workgroup sort holds, and empty ones; then many short ones.
  const std::vector<uint32_t> long_segments = {0, 0, 10, 2500, 2500, 2990, n};
  const std::vector<uint32_t> short_segments = randomOffsets(n, 1, 12, 0.2);
  std::vector<uint32_t> indices(n);
  std::iota(indices.begin(), indices.end(), 0u);
  for (KeyType type : {KeyType::kU32, KeyType::kU64}) {
    SortOptions o = optionsFor(type);
    const std::vector<uint32_t> words = keysFor(n, o, Distribution::kLowBits);
    for (const std::vector<uint32_t>* offsets : {&long_segments, &short_segments}) {
      for (bool argsort : {false, true}) {
        INFO("key type " << static_cast<int>(type) << ", " << offsets->size() - 1 << " segments"
                         << (argsort ? ", argsort" : ", values"));
        o.argsort = argsort;
        std::vector<uint32_t> keys = words, values = argsort ? std::vector<uint32_t>(n, kPoison) : indices;
        std::vector<uint32_t> plain_keys = keys, plain_values = values;
        CheckedStats checked;
        SortStats plain;
        std::string error;
        REQUIRE_MESSAGE(checkedSortSegmented(ctx, keys, values, *offsets, o, &checked, &error), error);
        CHECK(checked.canaries_intact);
        REQUIRE_MESSAGE(ctx.sortSegmented(plain_keys, plain_values, *offsets, o, &plain, &error), error);
        CHECK(plain_keys == keys);
        CHECK(plain_values == values);
        CHECK(plain.passes == checked.passes);
        CHECK(plain.result_in_temp == checked.result_in_temp);
        std::vector<uint32_t> expected_keys, expected_indices;
        expectSegments(words, *offsets, o, false, 0, &expected_keys, &expected_indices);
        CHECK(keys == expected_keys);
        CHECK(values == expected_indices);

        // k below, around and past the segments' lengths; the whole input as one segment.
        for (uint32_t k : {1u, 5u, 3000u}) {
          for (bool whole : {false, true}) {
            const bool largest = k != 5;
            INFO("top-" << k << (largest ? " largest" : "") << (whole ? " of the whole input" : ""));
            const std::vector<uint32_t> segments = whole ? std::vector<uint32_t>{} : *offsets;
            std::vector<uint32_t> top_keys, top_values, plain_top_keys, plain_top_values;
            REQUIRE_MESSAGE(checkedTopK(ctx, words, indices, segments, k, largest, o, &top_keys, &top_values, &error),
                            error);
            REQUIRE_MESSAGE(
                ctx.topK(words, indices, segments, k, largest, o, &plain_top_keys, &plain_top_values, &error), error);
            CHECK(plain_top_keys == top_keys);
            CHECK(plain_top_values == top_values);
            expected_keys.clear();
            expected_indices.clear();
            expectSegments(words, segments, o, largest, k, &expected_keys, &expected_indices);
            CHECK(top_keys == expected_keys);
            CHECK(top_values == expected_indices);
          }
        }
        // k = 0: both refuse, with the same sentence.
        std::vector<uint32_t> none_keys, none_values;
        std::string checked_error, plain_error;
        CHECK_FALSE(checkedTopK(ctx, words, indices, *offsets, 0, false, o, &none_keys, &none_values, &checked_error));
        CHECK_FALSE(ctx.topK(words, indices, *offsets, 0, false, o, &none_keys, &none_values, &plain_error));
        CHECK(checked_error == plain_error);
        CHECK_FALSE(plain_error.empty());
      }
    }
  }
}

}  // namespace vren::radix::test
