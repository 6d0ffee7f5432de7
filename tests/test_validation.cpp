// Preconditions refused with one sentence each: validateSortInfo, validateTilePackInfo and
// Context::sort. Runs under the validation layer.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <volk.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "checked_sorts.h"
#include "gpu_test.h"
#include "radix_shared.h"
#include "reliability.h"
#include "sort_timing.h"
#include "vren_radix/materials.h"
#include "vren_radix/tiles.h"

namespace vren::radix::test {

TEST_CASE_FIXTURE(GpuTest, "reliability: validateSortInfo refuses each bad input with a sentence" *
                               doctest::test_suite("host")) {
  Context& ctx = context();
  const Sorter* sorter = ctx.sorter();
  const SorterProperties props = getSorterProperties(sorter);
  const uint32_t n = 1000;
  const MemoryRequirements req = getMemoryRequirements(sorter, n, true);
  REQUIRE(req.alignment >= 8);
  const VkDeviceSize bytes = VkDeviceSize{n} * 4;
  const VkDeviceSize align = req.alignment;
  Buffers buffers(ctx);
  // One buffer holds keys and values back to back (allowed: they do not overlap).
  const VkBuffer data = buffers.make(2 * bytes + 4 * align, req.usage);
  const VkBuffer temps = buffers.make(2 * bytes + 4 * align, req.usage);
  const VkBuffer internal = buffers.make(req.internal_size + 4 * align, req.internal_usage);

  SortInfo good;
  good.count = n;
  good.keys = {data, 0, bytes};
  good.values = {data, bytes, bytes};  // 4000: a multiple of 16
  good.keys_temp = {temps, 0, bytes};
  good.values_temp = {temps, bytes, bytes};
  good.internal = {internal, 0, req.internal_size};
  REQUIRE(bytes % align == 0);
  CHECK(validateSortInfo(sorter, good) == nullptr);
  SortInfo whole = good;
  for (BufferRange* r : {&whole.keys, &whole.keys_temp, &whole.internal}) r->size = VK_WHOLE_SIZE;
  whole.values = {};
  whole.values_temp = {};
  CHECK(validateSortInfo(sorter, whole) == nullptr);

  struct Case {
    const char* what;
    const char* words;
    void (*spoil)(SortInfo&, VkDeviceSize bytes, VkDeviceSize alignment, uint32_t max_count);
  };
  const Case cases[] = {
      {"end_bit past 32", "bit range", [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.end_bit = 33; }},
      {"begin_bit after end_bit", "bit range",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.begin_bit = 9;
         i.end_bit = 8;
       }},
      {"both bits past 32", "bit range",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.begin_bit = 40;
         i.end_bit = 40;
       }},
      {"64-bit keys past bit 64", "bit range",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.key_type = KeyType::kU64;
         i.end_bit = 65;
       }},
      {"argsort without values", "argsort",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.argsort = true;
         i.values = {};
         i.values_temp = {};
       }},
      {"64-bit keys in 32-bit-key buffers", "keys buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.key_type = KeyType::kU64;
         i.end_bit = 64;
       }},
      {"count above max_count", "count",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t max) { i.count = max + 1; }},
      {"no keys", "required", [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys = {}; }},
      {"no keys_temp", "required", [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys_temp = {}; }},
      {"no internal", "required", [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.internal = {}; }},
      {"values without values_temp", "values_temp",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.values_temp = {}; }},
      {"keys too small", "keys buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys.size -= 4; }},
      {"keys_temp too small", "keys buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys_temp.size -= 4; }},
      {"values too small", "values buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.values.size -= 4; }},
      {"values_temp too small", "values buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.values_temp.size = 0; }},
      {"internal too small", "internal buffer is smaller",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.internal.size -= 4; }},
      {"keys offset misaligned", "multiples",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize a, uint32_t) { i.keys.offset += a / 2; }},
      {"keys_temp offset misaligned", "multiples",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys_temp.offset += 4; }},
      {"values offset misaligned", "multiples",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.values.offset += 4; }},
      {"values_temp offset misaligned", "multiples",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.values_temp.offset += 8; }},
      {"internal offset misaligned", "multiples",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.internal.offset += 4; }},
      {"keys_temp overlaps keys", "overlap",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize a, uint32_t) {
         i.keys_temp = {i.keys.buffer, a, i.keys.size};
       }},
      {"values overlap keys", "overlap",
       [](SortInfo& i, VkDeviceSize b, VkDeviceSize a, uint32_t) { i.values.offset = b - a; }},
      {"values_temp overlaps values", "overlap",
       [](SortInfo& i, VkDeviceSize b, VkDeviceSize, uint32_t) {
         i.values_temp = {i.values.buffer, b, b};
       }},
      {"values_temp overlaps keys_temp", "overlap",
       [](SortInfo& i, VkDeviceSize b, VkDeviceSize a, uint32_t) { i.values_temp.offset = b - 2 * a; }},
      {"keys are their own temp", "overlap",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) { i.keys_temp = i.keys; }},
      {"internal overlaps keys", "overlap",
       [](SortInfo& i, VkDeviceSize, VkDeviceSize, uint32_t) {
         i.internal.buffer = i.keys.buffer;
         i.internal.offset = 0;
       }},
      {"internal overlaps values_temp", "overlap",
       [](SortInfo& i, VkDeviceSize b, VkDeviceSize, uint32_t) {
         i.internal.buffer = i.values_temp.buffer;
         i.internal.offset = b + b / 2 / 16 * 16;
       }},
  };
  for (const Case& c : cases) {
    SortInfo bad = good;
    c.spoil(bad, bytes, align, props.max_count);
    if (bad.count == 0) continue;  // max_count == UINT32_MAX: no count is too large
    checkRefused(validateSortInfo(sorter, bad), c.words, c.what);
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: validateTilePackInfo refuses each bad input with a sentence" *
                               doctest::test_suite("host")) {
  Context& ctx = context();
  TilePacker* raw = nullptr;
  std::string why;
  REQUIRE_MESSAGE(createTilePacker(ctx.createInfo<TilePackerCreateInfo>(), &raw, &why) == VK_SUCCESS, why);
  struct Destroy {
    void operator()(TilePacker* p) const { destroyTilePacker(p); }
  };
  std::unique_ptr<TilePacker, Destroy> packer(raw);
  const uint32_t w = 100, h = 70;
  const TileMemoryRequirements req = getTileMemoryRequirements(packer.get(), w, h);
  const VkDeviceSize key_bytes = VkDeviceSize{w} * h * 4;
  Buffers buffers(ctx);
  const VkBuffer keys = buffers.make(key_bytes + 64, req.usage);
  const VkBuffer out = buffers.make(req.pixels_size + req.containers_size + req.tile_ranges_size + 64, req.usage);
  const VkBuffer counter = buffers.make(16, req.usage);

  TilePackInfo good;
  good.width = w;
  good.height = h;
  good.keys = {keys, 0, key_bytes};
  good.counter = {counter, 0, 4};
  good.pixels = {out, 0, req.pixels_size};
  good.containers = {out, req.pixels_size, req.containers_size};
  good.tile_ranges = {out, req.pixels_size + req.containers_size, req.tile_ranges_size};
  CHECK(validateTilePackInfo(packer.get(), good) == nullptr);

  struct Case {
    const char* what;
    const char* words;
    void (*spoil)(TilePackInfo&);
  };
  const Case cases[] = {
      {"width past 65535", "65535", [](TilePackInfo& i) { i.width = kMaxTileScreenSize + 1; }},
      {"height past 65535", "65535", [](TilePackInfo& i) { i.height = kMaxTileScreenSize + 1; }},
      {"probes past 15", "probes", [](TilePackInfo& i) { i.probes = kMaxTileProbes + 1; }},
      {"no keys", "required", [](TilePackInfo& i) { i.keys = {}; }},
      {"no counter", "required", [](TilePackInfo& i) { i.counter = {}; }},
      {"no pixels", "required", [](TilePackInfo& i) { i.pixels = {}; }},
      {"no tile_ranges", "required", [](TilePackInfo& i) { i.tile_ranges = {}; }},
      {"keys offset misaligned", "multiples", [](TilePackInfo& i) { i.keys.offset = 2; }},
      {"counter offset misaligned", "multiples", [](TilePackInfo& i) { i.counter.offset = 1; }},
      {"pixels offset misaligned", "multiples", [](TilePackInfo& i) { i.pixels.offset = 2; }},
      {"containers offset misaligned", "multiples", [](TilePackInfo& i) { i.containers.offset += 2; }},
      {"tile_ranges offset misaligned", "multiples", [](TilePackInfo& i) { i.tile_ranges.offset += 3; }},
      {"keys too small", "keys buffer is smaller", [](TilePackInfo& i) { i.keys.size -= 4; }},
      {"counter too small", "counter buffer is smaller", [](TilePackInfo& i) { i.counter.size = 0; }},
      {"pixels too small", "pixels buffer is smaller", [](TilePackInfo& i) { i.pixels.size -= 4; }},
      {"containers too small", "containers buffer is smaller", [](TilePackInfo& i) { i.containers.size -= 4; }},
      {"tile_ranges too small", "tile_ranges buffer is smaller", [](TilePackInfo& i) { i.tile_ranges.size -= 8; }},
      {"containers overlap pixels", "overlap", [](TilePackInfo& i) { i.containers.offset -= 4; }},
      {"tile_ranges overlap containers", "overlap", [](TilePackInfo& i) { i.tile_ranges.offset -= 8; }},
      {"counter inside the keys", "overlap",
       [](TilePackInfo& i) {
         i.counter = {i.keys.buffer, 400, 4};
       }},
      {"pixels over the keys", "overlap", [](TilePackInfo& i) { i.pixels.buffer = i.keys.buffer; }},
  };
  for (const Case& c : cases) {
    TilePackInfo bad = good;
    c.spoil(bad);
    checkRefused(validateTilePackInfo(packer.get(), bad), c.words, c.what);
  }
}

TEST_CASE_FIXTURE(GpuTest,
                  "reliability: Context::sort refuses mismatched or oversized input" * doctest::test_suite("host")) {
  Context& ctx = context();
  std::vector<uint32_t> keys(100, 7), more(101, 1), fewer(99, 1);
  std::string error;
  CHECK_FALSE(ctx.sort(keys, more, {}, nullptr, &error));
  CHECK(error.find("values") != std::string::npos);
  CHECK(error.back() == '.');
  error.clear();
  CHECK_FALSE(ctx.sort(keys, fewer, {}, nullptr, &error));
  CHECK(!error.empty());
  error.clear();
  CHECK_FALSE(ctx.sort({}, more, {}, nullptr, &error));
  CHECK(!error.empty());
  error.clear();
  SortOptions bits;
  bits.begin_bit = 4;
  bits.end_bit = 40;
  CHECK_FALSE(ctx.sort(keys, {}, bits, nullptr, &error));
  CHECK(error.find("bit") != std::string::npos);
  // The checked sort and the timed sorts check their spans as Context::sort does
  // (Context::checkInput): the same sentence, nothing recorded.
  std::string sort_error, checked_error, timed_error;
  CheckedStats checked;
  std::vector<double> ms;
  CHECK_FALSE(ctx.sort(keys, more, {}, nullptr, &sort_error));
  CHECK_FALSE(checkedSort(ctx, keys, more, {}, &checked, &checked_error));
  CHECK_FALSE(bench::timeSorts(ctx, keys, more, {}, 1, &ms, &timed_error));
  CHECK(checked_error == sort_error);
  CHECK(timed_error == sort_error);

  // One key more than the device allows, in reserved but inaccessible address space: the
  // count must be refused before any key is touched.
  const uint64_t too_many = uint64_t{ctx.maxCount()} + 1;
  if (too_many <= UINT32_MAX) {
    const size_t bytes = static_cast<size_t>(too_many * 4);
    void* reserved = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(reserved != MAP_FAILED);
    error.clear();
    CHECK_FALSE(ctx.sort(std::span<uint32_t>(static_cast<uint32_t*>(reserved), static_cast<size_t>(too_many)), {}, {},
                         nullptr, &error));
    CHECK(error.find("limit") != std::string::npos);
    munmap(reserved, bytes);
  }
  // The context still sorts afterwards.
  std::vector<uint32_t> small = {3, 1, 2};
  REQUIRE_MESSAGE(ctx.sort(small, {}, {}, nullptr, &error), error);
  CHECK(small == std::vector<uint32_t>{1, 2, 3});
}

}  // namespace vren::radix::test
