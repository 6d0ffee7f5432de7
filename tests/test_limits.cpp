// The device limits behind max_count (faked through the entry points the library is given),
// requirement arithmetic near the largest count, and digit widths rounded to those there are.
#include <doctest/doctest.h>
#include <volk.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_test.h"
#include "reliability.h"
#include "vren_radix/tiles.h"

namespace vren::radix::test {

namespace {

// Internal bytes per tile of the smaller tile, past the small sorts' look-back (whose published
// words make the internal block of small counts larger): at 2^30 keys the per-tile counts
// outweigh it whatever the tuning.
constexpr uint32_t kPastLookback = 1u << 30;
uint64_t internalPerTile(const Sorter* s, uint32_t tile) {
  return getMemoryRequirements(s, kPastLookback + tile, false).internal_size -
         getMemoryRequirements(s, kPastLookback, false).internal_size;
}

// What max_count must respect on a device with these limits: every buffer for max_count keys
// of any type fits one allocation, every tile gets a workgroup of the 2D grid, and u32 element
// indices do not wrap inside the last tile. It must also not give away more than half of what
// the tightest limit allows.
void checkMaxCount(const Sorter* s, uint64_t max_allocation, uint32_t groups_x, uint32_t groups_y) {
  const SorterProperties props = getSorterProperties(s);
  const uint64_t max = props.max_count;
  INFO("max_count " << max << ", allocation " << max_allocation << ", grid " << groups_x << " x " << groups_y);
  const uint64_t tile_small = std::min(tileOf(props.tuning), tileOf(props.tuning_u64));
  const uint64_t tile_large = std::max(tileOf(props.tuning), tileOf(props.tuning_u64));
  CHECK(props.tile_size == tileOf(props.tuning));
  CHECK(max >= 1);
  for (KeyType type : {KeyType::kU32, KeyType::kI32, KeyType::kF32, KeyType::kU64}) {
    const MemoryRequirements req = getMemoryRequirements(s, props.max_count, true, type);
    CHECK(req.keys_temp_size <= max_allocation);
    CHECK(req.values_temp_size <= max_allocation);
    CHECK(req.internal_size <= max_allocation);
  }
  CHECK(divCeil(max, tile_small) <= uint64_t{groups_x} * groups_y);
  CHECK(max + tile_large <= (uint64_t{1} << 32));
  const uint64_t groups = uint64_t{groups_x} * groups_y;  // below 2^64; times a tile it may not be
  const uint64_t by_grid = groups > (uint64_t{1} << 40) ? UINT64_MAX : groups * tile_small;
  // The internal buffer: its words are indexed in u32 by the shaders.
  const uint64_t internal_per_tile = internalPerTile(s, static_cast<uint32_t>(tile_small));
  REQUIRE(internal_per_tile > 0);
  CHECK(getMemoryRequirements(s, props.max_count, false).internal_size <= (uint64_t{1} << 34));
  const uint64_t by_internal = std::min(max_allocation, uint64_t{1} << 34) / internal_per_tile * tile_small;
  const uint64_t tightest = std::min({max_allocation / 8, by_grid, uint64_t{1} << 31, by_internal});
  CHECK(max >= tightest / 2);
}

// Exact sizes: count keys of the type's width in each ping-pong buffer, count u32 values, and
// an internal block that never shrinks as the count grows, affine in the tile count of the
// smaller tile past the look-back's reach.
void checkRequirements(const Sorter* s, uint32_t count) {
  INFO("count " << count);
  const SorterProperties props = getSorterProperties(s);
  const uint64_t tile = std::min(tileOf(props.tuning), tileOf(props.tuning_u64));
  const uint64_t per_tile = internalPerTile(s, static_cast<uint32_t>(tile));
  REQUIRE(per_tile > 0);
  const uint64_t past_lookback = getMemoryRequirements(s, kPastLookback, false).internal_size;
  const uint64_t n = std::max(count, 1u);
  for (KeyType type : {KeyType::kU32, KeyType::kF32, KeyType::kU64}) {
    const uint64_t key_bytes = type == KeyType::kU64 ? 8 : 4;
    const MemoryRequirements keys = getMemoryRequirements(s, count, false, type);
    const MemoryRequirements pairs = getMemoryRequirements(s, count, true, type);
    CHECK(keys.keys_temp_size == n * key_bytes);
    CHECK(keys.values_temp_size == 0);
    CHECK(pairs.keys_temp_size == n * key_bytes);
    CHECK(pairs.values_temp_size == n * 4);
    if (count >= kPastLookback)
      CHECK(keys.internal_size == past_lookback + per_tile * (divCeil(count, tile) - kPastLookback / tile));
    CHECK(keys.internal_size >= getMemoryRequirements(s, count / 2, false, type).internal_size);
    // Look-back sorts: two sets of 256 published words per tile.
    const TuningConfig& t = type == KeyType::kU64 ? props.tuning_u64 : props.tuning;
    const uint64_t lookback_tile = type == KeyType::kU64 ? props.lookback_tile_size_u64 : props.lookback_tile_size;
    if (lookback_tile > 0 && count <= t.lookback_max_count && divCeil(count, lookback_tile) <= 1024)
      CHECK(keys.internal_size >= 2048 * std::max<uint64_t>(1, divCeil(count, lookback_tile)));
    CHECK(pairs.internal_size == keys.internal_size);
    CHECK(keys.internal_size % 4 == 0);
    CHECK(keys.alignment > 0);
    CHECK((keys.alignment & (keys.alignment - 1)) == 0);
    CHECK((keys.usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT) != 0);
    CHECK((keys.usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) != 0);
  }
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest, "reliability: max_count follows the device's limits" * doctest::test_suite("host")) {
  Context& ctx = context();
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(ctx.physicalDevice(), &props);
  const uint32_t* grid = props.limits.maxComputeWorkGroupCount;
  // The device's limits and tuning (its look-back limited, see withDigits).
  const TuningConfig device_tuning = withDigits(getSorterProperties(ctx.sorter()).tuning.digit_bits);
  checkMaxCount(fakeSorter({}, &device_tuning).get(), ctx.device().max_allocation_size, grid[0], grid[1]);
  MESSAGE("max_count " << ctx.maxCount() << " (largest allocation " << ctx.device().max_allocation_size
                       << " bytes, grid " << grid[0] << " x " << grid[1] << ", tile "
                       << getSorterProperties(ctx.sorter()).tile_size << ")");

  // Devices faked through the entry points: plenty of everything, memory-bound (including
  // sizes that are not multiples of 8), grid-bound.
  const FakeLimits fakes[] = {
      {uint64_t{1} << 40, 0x7FFFFFFFu, 65535},
      {uint64_t{1} << 40, 0xFFFFFFFFu, 0xFFFFFFFFu},
      {uint64_t{1} << 30, 0x7FFFFFFFu, 65535},
      {(uint64_t{1} << 33) - 1, 0x7FFFFFFFu, 65535},
      {(uint64_t{1} << 34) + 3, 65535, 65535},
      {1000003, 65535, 65535},
      {uint64_t{1} << 40, 65535, 1},
      {uint64_t{1} << 40, 1, 1},
      {uint64_t{1} << 40, 1000, 3},
  };
  for (uint32_t digit_bits : {4u, 8u}) {
    const TuningConfig tuning = withDigits(digit_bits);
    for (const FakeLimits& f : fakes)
      checkMaxCount(fakeSorter(f, &tuning).get(), f.max_allocation, f.groups_x, f.groups_y);
  }
  // Tiny tiles and wide digits: the internal buffer, not the keys, bounds the count.
  const TuningConfig tiny{32, 1, 8};
  checkMaxCount(fakeSorter(fakes[0], &tiny).get(), fakes[0].max_allocation, fakes[0].groups_x, fakes[0].groups_y);
  // With plenty of everything, the limit is near 2^31 keys or above.
  CHECK(getSorterProperties(fakeSorter(fakes[0]).get()).max_count >= (1u << 30));
}

TEST_CASE_FIXTURE(GpuTest, "reliability: the look-back's tile bound, on lavapipe and elsewhere" *
                               doctest::test_suite("host")) {
  // Lavapipe's loop cap bounds look-back sorts to 1024 tiles; another driver goes on, unless the
  // poll budget is 0, where each tile would count every earlier one. 64-key tiles, no limit on
  // the count. The driver is faked through the entry points; the sorters answer queries only.
  TuningConfig tuning = getSorterProperties(context().sorter()).tuning;
  tuning.lookback_workgroup_size = 32;
  tuning.lookback_keys_per_thread = 2;
  tuning.lookback_max_count = 0xFFFFFFFFu;
  tuning.block_max_count = 0;
  struct Case {
    VkDriverId driver;
    uint32_t budget;
    bool bounded;
  };
  for (const Case& c : {Case{VK_DRIVER_ID_MESA_LLVMPIPE, 1000, true}, Case{VK_DRIVER_ID_NVIDIA_PROPRIETARY, 1000, false},
                        Case{VK_DRIVER_ID_NVIDIA_PROPRIETARY, 0, true}}) {
    INFO("driver " << c.driver << ", poll budget " << c.budget);
    tuning.lookback_poll_budget = c.budget;
    FakeLimits limits;
    limits.driver_id = c.driver;
    SorterPtr sorter = fakeSorter(limits, &tuning);
    const uint32_t tile = getSorterProperties(sorter.get()).lookback_tile_size;
    REQUIRE(tile == 64);
    for (uint32_t n : {1024 * tile, 1024 * tile + 1, 4096 * tile}) {
      SortInfo asked;
      asked.count = n;
      CHECK(getPassCount(sorter.get(), asked) == (n <= 1024 * tile || !c.bounded ? 4u : 8u));
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: look-back tiles fit a small shared memory, with values too" *
                               doctest::test_suite("subgroup")) {
  // radix_onesweep.comp's shared memory on a tile of G threads, one key each (staged whole):
  // packed rank counters (2 bytes per subgroup and bin), four arrays of 256 bins, two flags, the
  // workgroup scan and the skip flag, and a round of G slots of keys, with values a round of
  // keys and values. The small look-back tile serves keys alone and with values: both must fit.
  // The subgroups decide the counters: at 16 lanes, 13 KiB leaves 13 subgroups of counters (208
  // threads), too many for a round of u64 keys with values (13316 bytes): 192 threads.
  TuningConfig tuning = getSorterProperties(context().sorter()).tuning;
  tuning.lookback_max_count = 1u << 20;
  tuning.lookback_workgroup_size = 448;
  tuning.lookback_keys_per_thread = 1;
  tuning.large_tile_min_count = 0xFFFFFFFFu;
  tuning.block_max_count = 0;
  for (uint32_t shared : {13312u, 16384u, 24576u}) {
    FakeLimits limits;
    limits.max_shared_memory = shared;
    SorterPtr sorter = fakeSorter(limits, &tuning);
    const SorterProperties p = getSorterProperties(sorter.get());
    for (uint32_t key_words : {1u, 2u}) {
      INFO(shared << " bytes, " << key_words << "-word keys, " << p.subgroup_size << " lanes");
      const uint32_t threads = key_words == 1 ? p.lookback_tile_size : p.lookback_tile_size_u64;
      REQUIRE(threads >= p.subgroup_size);
      const uint32_t subgroups = threads / p.subgroup_size;
      const uint32_t fixed = 2 * subgroups * 256 + 16 * 256 + 8 + 4 * (subgroups + 1) + 4;
      CHECK(4 * threads * (key_words + 1) + fixed <= shared);
    }
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: digit widths other than 4 and 8 are rounded to one of them" *
                               doctest::test_suite("host")) {
  for (uint32_t asked : {0u, 1u, 3u, 4u, 5u, 7u, 8u, 9u, 16u, 32u, 0xFFFFFFFFu}) {
    INFO("digit_bits " << asked);
    const TuningConfig tuning = withDigits(asked);
    SorterPtr sorter = fakeSorter({}, &tuning);
    const SorterProperties props = getSorterProperties(sorter.get());
    CHECK(props.tuning.digit_bits == (asked > 4 ? 8u : 4u));
    CHECK(props.tuning_u64.digit_bits == props.tuning.digit_bits);
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: memory requirements near the largest count do not overflow" *
                               doctest::test_suite("host")) {
  for (uint32_t digit_bits : {4u, 8u}) {
    INFO(digit_bits << "-bit digits");
    const TuningConfig tuning = withDigits(digit_bits);
    SorterPtr sorter = fakeSorter({uint64_t{1} << 40, 0x7FFFFFFFu, 65535}, &tuning);
    const uint32_t max = getSorterProperties(sorter.get()).max_count;
    const uint32_t tile = getSorterProperties(sorter.get()).tile_size;
    REQUIRE(max >= (1u << 30));
    for (uint32_t n :
         {0u, 1u, tile - 1, tile, tile + 1, (1u << 30) - 1, 1u << 30, (1u << 30) + 1, max - tile - 1, max - 1, max})
      checkRequirements(sorter.get(), n);
    for (uint32_t n : {(1u << 31) - 1, 1u << 31, (1u << 31) + 1, 0xFFFFFFFFu - tile, 0xFFFFFFFFu})
      if (n <= max) checkRequirements(sorter.get(), n);
  }
  SorterPtr big = fakeSorter({uint64_t{1} << 40, 0x7FFFFFFFu, 65535});
  const uint32_t max = getSorterProperties(big.get()).max_count;
  const uint32_t tile = getSorterProperties(big.get()).tile_size;
  // 64-bit keys near the largest count need more than 2^33 bytes: 64-bit arithmetic.
  CHECK(getMemoryRequirements(big.get(), max, true, KeyType::kU64).keys_temp_size == uint64_t{max} * 8);

  // Validation's size checks are 64-bit too: at the largest count, one key short is refused and
  // an exact fit is accepted. The buffers are small; only their claimed sizes are checked, and
  // nothing is recorded.
  Context& ctx = context();
  Buffers buffers(ctx);
  for (KeyType type : {KeyType::kU32, KeyType::kU64}) {
    const uint64_t key_bytes = type == KeyType::kU64 ? 8 : 4;
    INFO((type == KeyType::kU64 ? "64-bit keys" : "32-bit keys"));
    const MemoryRequirements req = getMemoryRequirements(big.get(), max, true, type);
    SortInfo info;
    info.count = max;
    info.key_type = type;
    info.end_bit = type == KeyType::kU64 ? 64 : 32;
    info.keys = {buffers.make(64, req.usage), 0, uint64_t{max} * key_bytes};
    info.keys_temp = {buffers.make(64, req.usage), 0, req.keys_temp_size};
    info.values = {buffers.make(64, req.usage), 0, uint64_t{max} * 4};
    info.values_temp = {buffers.make(64, req.usage), 0, req.values_temp_size};
    info.internal = {buffers.make(64, req.internal_usage), 0, req.internal_size};
    CHECK(validateSortInfo(big.get(), info) == nullptr);
    SortInfo bad = info;
    bad.keys.size -= key_bytes;
    checkRefused(validateSortInfo(big.get(), bad), "keys buffer is smaller", "keys one key short at the largest count");
    bad = info;
    bad.values_temp.size -= 4;
    checkRefused(validateSortInfo(big.get(), bad), "values buffer is smaller", "values_temp one word short");
    bad = info;
    bad.internal.size -= 4;
    checkRefused(validateSortInfo(big.get(), bad), "internal buffer is smaller", "internal one word short");
    bad = info;
    bad.expected_count = max;  // at most count: accepted
    CHECK(validateSortInfo(big.get(), bad) == nullptr);
    bad.count = max - 1;
    checkRefused(validateSortInfo(big.get(), bad), "expected_count exceeds count", "expected_count above count");
    // Counts past the limit, up to 2^32 - 1, are refused before any size is computed.
    for (uint64_t n :
         {uint64_t{max} + 1, (uint64_t{1} << 31) + 1, uint64_t{0xFFFFFFFFu} - tile, uint64_t{0xFFFFFFFFu}}) {
      if (n <= max || n > 0xFFFFFFFFu) continue;
      bad = info;
      bad.count = static_cast<uint32_t>(n);
      checkRefused(validateSortInfo(big.get(), bad), "count", "a count past the largest");
    }
    // Two ranges in one (claimed) buffer of many GiB: adjacent is fine, one key of overlap is not.
    bad = info;
    bad.keys_temp = {info.keys.buffer, uint64_t{max} * key_bytes, uint64_t{max} * key_bytes};
    CHECK(validateSortInfo(big.get(), bad) == nullptr);
    bad.keys_temp.offset -= 16;
    checkRefused(validateSortInfo(big.get(), bad), "overlap", "temp overlapping keys at the largest count");
  }
}

TEST_CASE_FIXTURE(GpuTest, "reliability: tile requirements at the largest screen do not overflow" *
                               doctest::test_suite("host")) {
  Context& ctx = context();
  TilePacker* raw = nullptr;
  std::string why;
  TilePackerCreateInfo info = ctx.createInfo<TilePackerCreateInfo>();
  info.tile_size = 8;
  info.alignment = 256;
  REQUIRE_MESSAGE(createTilePacker(info, &raw, &why) == VK_SUCCESS, why);
  struct Destroy {
    void operator()(TilePacker* p) const { destroyTilePacker(p); }
  };
  std::unique_ptr<TilePacker, Destroy> packer(raw);
  const uint32_t w = kMaxTileScreenSize, h = kMaxTileScreenSize;
  const TileMemoryRequirements req = getTileMemoryRequirements(packer.get(), w, h);
  const uint64_t tiles = uint64_t{(w + 7) / 8} * ((h + 7) / 8);
  CHECK(req.tiles_x == (w + 7) / 8);
  CHECK(req.tiles_y == (h + 7) / 8);
  CHECK(req.tile_ranges_size == tiles * 8);
  // Every 8 x 8 tile (64 pixels, or fewer at the edges) rounds up to 256 slots.
  CHECK(req.pixels_size == tiles * 256 * 4);
  CHECK(req.pixels_size >= (uint64_t{1} << 36));
  CHECK(req.containers_size == req.pixels_size);

  // Validation of the keys' size is 64-bit as well (4 * 65535^2 is just under 2^34).
  const VkDeviceSize key_bytes = uint64_t{w} * h * 4;
  Buffers buffers(ctx);
  TilePackInfo pack;
  pack.width = w;
  pack.height = h;
  pack.keys = {buffers.make(64, req.usage), 0, key_bytes};
  pack.counter = {buffers.make(64, req.usage), 0, 4};
  pack.pixels = {buffers.make(64, req.usage), 0, req.pixels_size};
  pack.tile_ranges = {buffers.make(64, req.usage), 0, req.tile_ranges_size};
  const char* message = validateTilePackInfo(packer.get(), pack);
  // 8192 x 8192 tiles may exceed the device's grid; otherwise the info is valid.
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(ctx.physicalDevice(), &props);
  const bool grid_fits = req.tiles_x <= props.limits.maxComputeWorkGroupCount[0] &&
                         req.tiles_y <= props.limits.maxComputeWorkGroupCount[1];
  if (grid_fits) {
    CHECK(message == nullptr);
    pack.keys.size -= 4;
    checkRefused(validateTilePackInfo(packer.get(), pack), "keys buffer is smaller",
                 "keys one word short at the largest screen");
  } else {
    checkRefused(message, "tiles", "a grid larger than the device's");
  }
}

}  // namespace vren::radix::test
