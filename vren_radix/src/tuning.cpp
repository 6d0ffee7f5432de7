#include "tuning.h"

#include <algorithm>
#include <tuple>

#include "materials_shared.h"
#include "radix_shared.h"
#include "tiles_shared.h"

namespace vren::radix::detail {
namespace {

constexpr uint32_t kVendorNvidia = 0x10DE;
// Far beyond what shared memory allows today; radix_scatter.comp keeps ranks in 16 bits, and
// radix_onesweep.comp slots below 2^15.
constexpr uint32_t kMaxTileSize = 32768;

// Conservative: clampTuning shrinks it to the shared memory there is (lavapipe: 256x4).
constexpr TuningConfig kDefault = {256, 8};

// NVIDIA (H200, driver 580.159.04, uniform u32, medians, ms; 2026-11-26 where no date is given).
constexpr TuningConfig nvidiaTuning() {
  // The 4-bit passes, where the look-back is off: 256x4 at 2^26 keys / pairs 2.94 / 4.08
  // (earlier: 512x4, 128x8, 128x4, 256x8 and 512x2 slower for keys).
  TuningConfig t{256, 4};
  // The look-back at every count: 2^26 keys / pairs 2.84 / 3.70 against 2.94 / 4.08 for the
  // 4-bit passes; 2^22 0.220 / 0.293 against 0.259 / 0.338.
  t.lookback_max_count = 0xFFFFFFFFu;
  // Large tiles, staged in parts (keys in halves, pairs in thirds), which rank with the OR matcher
  // (radix_tile_rank.glsl). 2^22 / 2^23 (8294400) / 2^24 / 2^26, ms, one session (2026-11-27).
  // Keys alone: 512x26, 16 subgroups on a 13312-key tile (127 registers, one workgroup per SM):
  // 0.189 / 0.310 / 0.585 / 2.14 (ballots: 0.209 / 0.344 / 0.654 / 2.39); 512x24 0.184 / 0.327 /
  // 0.598 / 2.20, 512x28 0.200 / 0.328 / 0.589 / 2.19, 512x30 0.206 / 0.336 / 0.604 / 2.18, 512x32
  // (spills) 0.169 / 0.311 / 0.590 / 2.16, 768x16 0.182 / 0.319 / 0.587 / 2.16, 640x20 0.188 /
  // 0.309 / 0.588 / 2.18. With ballots (earlier that day): 512x22 0.193 / 0.360 / 0.678 / 2.51,
  // 768x10 (staged whole, 80 registers) 0.213 / 0.381 / 0.730 / 2.78, 448x24 2.71, 384x32 2.62,
  // 384x24 2.89, 256x48 3.02 at 2^26; tiles of 256 threads, two or three workgroups per SM, lose
  // (radix_onesweep.comp).
  t.large_tile_workgroup_size = 512;
  t.large_tile_keys_per_thread = 26;
  // With values: 512x24 (127 registers), its values then loaded after the keys' stores. Same session:
  // 0.248 / 0.447 / 0.818 / 3.02; 512x22 0.240 / 0.438 / 0.835 / 3.08, 512x26 (spills 16 bytes)
  // 0.256 / 0.422 / 0.804 / 2.98, 512x20 0.270 / 0.459 / 0.851 / 3.17, 640x20 0.274 / 0.450 / 0.855
  // / 3.17, 768x16 0.275 / 0.485 / 0.886 / 3.24, and 768x10 (staged whole, ballots, 80 registers)
  // 0.274 / 0.478 / 0.907 / 3.44. 512x24 is within 6 % of the best at each count; tiles per SM
  // decide the rest (2^22 pairs make 341 tiles of 12288 on 132 SMs): the smaller shapes below.
  // With the rank counters inside the stage (below) 512 x 20 beats them all.
  // 512 x 22 once the values' stores keep their slots' bins four a word (radix_onesweep.comp):
  // 128 registers and no spill, where it spilled 16 bytes before. 2^22 / 2^24 / 2^26 pairs
  // 0.1977 / 0.6449 / 2.372 ms against 0.2072 / 0.6498 / 2.414 at 512 x 20 (2026-12-03, two
  // rounds alternating); 512 x 22 with the spill 0.2037 / 0.6673 / 2.471. u64 pairs, staged in
  // parts, lose at 512 x 22 (four parts): the chooser takes 512 x 20 from 2^24 (LargeTileCost).
  t.large_tile_pairs_workgroup_size = 512;
  t.large_tile_pairs_keys_per_thread = 22;
  // Keys alone on one workgroup per SM looping over the tiles (radix_onesweep.comp's LOOP_TILES),
  // 2^24 / 2^26 keys, two runs alternating with a workgroup per tile (2026-11-27): 502.6 / 1815 us
  // against 578.0 / 2113. The same loop with the digit totals' scan inline instead of in a
  // function measured 562.8 / 2048 (the driver's registers not read).
  // With values too, each value loaded once the tile's counts are published and staged beside its
  // key (radix_onesweep.comp), 2^20 / 2^22 / 2^24 / 2^26 pairs, us, two runs (2026-11-28): 80 /
  // 221 / 738 / 2710. Earlier that day, with the values loaded beside the keys: 84 / 235 / 774 /
  // 2820 looping against 82 / 230 / 788 / 2910 for a workgroup per tile with the values loaded
  // after the keys' stores, and 79 / 233 / 963 / 3620 for that shader on a workgroup per tile (128
  // registers at 512x24, where the loop spills nothing); loading the values after the ranking
  // instead, 80 / 234 / 799 / 2950 a workgroup per tile and 82 / 232 / 984 / 3710 looping (48 bytes
  // spilled). Other looping shapes at 2^24 / 2^26 (values beside the keys): 512x22 782 / 2850,
  // 512x20 775 / 2840, 448x28 815 / 2970, 384x32 (168 registers) 847 / 3070.
  t.large_tile_loop = t.large_tile_pairs_loop = 1;
  // Smaller shapes where they fill the waves better (LargeTileCost, tuning.h, has the
  // measurements): keys 512 x 20 to 26, pairs 512 x 16 to 22, from 2^20 keys, where 512 x 20 sorts
  // keys in 0.070 ms against 0.089 on the small tiles (256 x 8), and 512 x 16 pairs in 0.082
  // against 0.102 (2026-11-27); below 2^20 unmeasured.
  t.large_tile_min_count = 1u << 20;
  t.large_tile_min_keys_per_thread = 20;
  t.large_tile_pairs_min_keys_per_thread = 16;
  // With values, the 512 x 16 tile's keys staged whole and stored, then its values (the only u32
  // pairs shape here that takes it; u64 pairs, 512 x 8, take it too: 2^20 / 2^24 0.204 / 2.26 ms
  // against 0.207 / 2.34-2.35 in parts, two runs each, 2026-11-28), 2^20 / 2^22 / 2^24 / 2^26 pairs,
  // us, two runs alternating (2026-11-28): 78 / 218 / 733 / 2750 against 80 / 222 / 739 / 2720 for
  // this tuning staging in parts (512 x 16 at 2^20, 512 x 22 / 24 / 24 above); 512 x 17 apart 80 /
  // 229 / 766 / 2890. With its first cost of its own (7.8 us a tile, 0.44 ns a key), the shape
  // chooser then took 512 x 16 from 2^20 to 2^24 pairs (not at 2560x1440) and 512 x 24 at 2^25
  // and 2^26; today's choices are below.
  t.lookback_values_apart = 1;
  // With the rank counters inside the stage, 512 x 18 to 22 pairs stage their keys whole too,
  // and every shape of them unpacks its counters (keys alone stage the same way either way, so
  // keep their counters apart). 2^20 / 2560x1440 / 2^22 / 3840x2160 / 2^24 / 2^26 pairs, ms, two
  // runs alternating (2026-12-02): 512 x 16 0.0761 / 0.199 / 0.210 / 0.375 / 0.701 / 2.62,
  // 512 x 18 0.0780 / 0.203 / 0.223 / 0.381 / 0.720 / 2.70, 512 x 20 (128 registers) 0.0793 /
  // 0.187 / 0.224 / 0.374 / 0.694 / 2.58, 512 x 22 0.0835 / 0.202 / 0.215 / 0.385 / 0.716 / 2.65,
  // against 0.0782 / 0.197 / 0.218 / 0.392 / 0.731 / 2.71 for the counters beside (512 x 16 apart
  // and packed, 512 x 20 to 24 in parts). 18 and 22 lost at every count then (512 x 22 spilled
  // 16 bytes), so pairs took 512 x 16 to 20. The sort of record, in a later run: 2^24 / 2^26
  // pairs 0.690 / 2.564 ms against 0.732 / 2.711 with the counters beside (2026-12-02). Without
  // the spill (large_tile_pairs_keys_per_thread, above), the shape chooser takes 512 x 16 at
  // 2^20 and 1920x1080, 512 x 20 at 2560x1440 and 512 x 22 from 2^22.
  t.lookback_counters_in_stage = 1;
  // large_tile_pairs_per_unit stays 1: two 384 x 12 pairs workgroups an SM, each within 24 KiB
  // and taking its tiles by ticket, 0.083 / 0.229 / 0.725 / 2.70 ms at 2^20 / 2^22 / 2^24 / 2^26
  // against 0.078 / 0.219 / 0.733 / 2.72 here (two runs each, 2026-11-28; radix_onesweep.comp has
  // the rest). Keys lost by index already (0.537 / 1.99 at 2^24 / 2^26 for 384 x 16). With the
  // keys staged whole, then the values, and the counters in the stage, two a unit still lose,
  // 2^22 / 2^24 / 2^26 pairs (2026-12-03, two rounds alternating): 256 x 20 (128 registers, 23.6
  // KB) 0.2145 / 0.667 / 2.466 ms, 256 x 18 (127) 0.220 / 0.690 / 2.559, 256 x 16 (128) 0.220 /
  // 0.728 / 2.696, 384 x 12 (80) 0.219 / 0.686 / 2.509, against 0.2071 / 0.654 / 2.433 here.
  // Top-k's settle phase (one workgroup per SM): k = 2048 of keys below 2^8, the case that takes
  // it, us (2026-11-27, one session, two runs): 2^20 42.7 / 42.2 against 42.0 for the two
  // dispatches; 2^24 252.6 / 252.4 against 181.5, where 132 workgroups leave the SMs idle (two
  // per SM: 41.0 / 183.6; four did not finish: the grid no longer ran at once and its waits ran
  // out). The common case, whose candidates level 1 gathers, then runs one empty dispatch
  // instead of two; an empty indirect dispatch and its barrier cost 1.2-1.5 us there.
  t.select_settle_max_count = 1u << 21;
  return t;
}
constexpr TuningConfig kNvidia = nvidiaTuning();

}  // namespace

TuningConfig defaultTuning(uint32_t vendor_id) {
  return vendor_id == kVendorNvidia ? kNvidia : kDefault;
}

uint32_t binCount(const TuningConfig& tuning) { return 1u << tuning.digit_bits; }

uint32_t scatterSharedBytes(const TuningConfig& tuning, uint32_t max_subgroups, bool with_values, uint32_t key_words) {
  const uint32_t tile = tuning.workgroup_size * tuning.keys_per_thread;
  const uint32_t bins = binCount(tuning);
  // The tile's keys and values, and the one-element array of the layout not in use.
  const uint32_t tile_bytes = 4 * tile * (key_words + (with_values ? 1 : 0)) + 8;
  if (bins > 16)  // radix_scatter_wide.comp: running counts per subgroup, bin starts, a workgroup scan
    return tile_bytes + 4 * bins * max_subgroups + 8 * bins + 4 * (max_subgroups + 1);
  // radix_scatter.comp: counts per subgroup and round, then per subgroup; four per-bin arrays
  const uint32_t rank_bytes = 4 * bins * max_subgroups * (tuning.keys_per_thread + 1);
  return tile_bytes + rank_bytes + 4 * 4 * bins;
}

uint32_t countSharedBytes(const TuningConfig& tuning, uint32_t max_subgroups) {
  const uint32_t bins = binCount(tuning);
  const uint32_t counter_sets = bins <= 16 ? max_subgroups : 1;  // radix_count.comp
  return kCountTiles * (counter_sets + 1) * 4 * bins;
}

TuningConfig clampTuning(TuningConfig tuning, const DeviceFacts& limits, uint32_t key_words) {
  const uint32_t min_subgroup = std::max(1u, limits.min_subgroup_size);
  tuning.workgroup_size = floorPow2(std::min(std::max(tuning.workgroup_size, 32u), limits.max_workgroup_size));
  tuning.workgroup_size = std::max(tuning.workgroup_size, std::min(min_subgroup, 32u));
  tuning.digit_bits = tuning.digit_bits > VREN_RADIX_DEFAULT_DIGIT_BITS ? VREN_RADIX_MAX_DIGIT_BITS
                                                                        : VREN_RADIX_DEFAULT_DIGIT_BITS;
  tuning.keys_per_thread = floorPow2(std::clamp(tuning.keys_per_thread, 1u, 64u));
  while (tuning.workgroup_size * tuning.keys_per_thread > kMaxTileSize && tuning.keys_per_thread > 1)
    tuning.keys_per_thread /= 2;
  // Small subgroups make many per-subgroup counters: fewer threads where the count pass needs it.
  while (countSharedBytes(tuning, std::max(1u, tuning.workgroup_size / min_subgroup)) > limits.max_shared_memory &&
         tuning.workgroup_size > 32)
    tuning.workgroup_size /= 2;
  // Wide digits' running counts grow with the subgroups: fewer threads before fewer keys each.
  while (scatterSharedBytes(tuning, std::max(1u, tuning.workgroup_size / min_subgroup), true, key_words) >
         limits.max_shared_memory) {
    if (binCount(tuning) > 16 && tuning.workgroup_size > 32)
      tuning.workgroup_size /= 2;
    else if (tuning.keys_per_thread > 1)
      tuning.keys_per_thread /= 2;
    else
      break;
  }
  return tuning;
}

uint32_t lookbackMaxTiles(const DeviceFacts& limits) {
  return limits.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE ? 1024u : 1u << 22;
}

uint32_t loopMaxTiles(const DeviceFacts& limits) {
  return limits.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE ? 4u : 0xFFFFFFFFu;
}

uint32_t onesweepSharedBytes(uint32_t workgroup_size, uint32_t keys_per_thread, uint32_t max_subgroups,
                             uint32_t slot_words, bool packed, uint32_t stage_parts, bool counters_in_stage) {
  const uint32_t bins = 1u << VREN_RADIX_MAX_DIGIT_BITS;  // radix_onesweep.comp's map, in words
  const uint32_t counters = (packed ? 1 : 2) * max_subgroups * bins / 2;
  const uint32_t stage = workgroup_size * divCeil(keys_per_thread, stage_parts) * slot_words;
  // The counters and a missing tile's counts beside the stage, or inside it after the OR
  // matcher's words where the stage holds those (their own arrays then of a word each).
  uint32_t region = stage + counters + bins;
  if (counters_in_stage) {
    const uint32_t match = divCeil(workgroup_size, 32) * bins;
    region = std::max(stage, (match <= stage ? match : 0) + counters + bins) + 2;
  }
  return 4 * (region + 3 * bins) + 8 + 4 * (max_subgroups + 1) + 4;
}

namespace {
uint32_t onesweepSubgroups(uint32_t workgroup_size, const DeviceFacts& limits) {
  return std::max(1u, workgroup_size / std::max(1u, limits.min_subgroup_size));
}
}  // namespace

uint32_t onesweepSharedBudget(const TuningConfig& shape, const DeviceFacts& limits) {
  const uint32_t n = std::max(1u, shape.large_tile_per_unit);
  if (n == 1) return limits.max_shared_memory;
  // Less the ticket build's word, as a driver may align it (16 bytes on NVIDIA).
  const uint32_t part = limits.max_shared_memory / n / 4 * 4;
  return part > 16 ? part - 16 : 0;
}

namespace {
// Whether a tile of this shape keeps its rank counters inside its stage: where the tuning asks
// for it and the tile is staged after its ranking, in parts or (`apart`) with values apart.
bool countersInStage(const TuningConfig& shape, uint32_t parts, bool apart) {
  return shape.lookback_counters_in_stage != 0 && (parts > 1 || apart);
}

// The parts a tile of slot_words words a slot is staged in; `apart`: staged whole, it is staged
// after the ranking (the keys of values apart), else as ranked.
uint32_t stageParts(const TuningConfig& shape, const DeviceFacts& limits, uint32_t slot_words, bool apart) {
  const uint32_t subgroups = onesweepSubgroups(shape.workgroup_size, limits);
  auto fits = [&](uint32_t parts) {
    return onesweepSharedBytes(shape.workgroup_size, shape.keys_per_thread, subgroups, slot_words, true, parts,
                               countersInStage(shape, parts, apart)) <= onesweepSharedBudget(shape, limits);
  };
  uint32_t parts = 1;
  while (parts < shape.keys_per_thread && !fits(parts)) ++parts;
  return parts;
}
}  // namespace

bool onesweepValuesApart(const TuningConfig& shape, const DeviceFacts& limits, uint32_t key_words, bool with_values) {
  return with_values && shape.lookback_values_apart != 0 && stageParts(shape, limits, key_words, true) == 1 &&
         stageParts(shape, limits, key_words + 1, false) > 1;
}

uint32_t onesweepStageParts(const TuningConfig& shape, const DeviceFacts& limits, uint32_t key_words, bool with_values) {
  if (onesweepValuesApart(shape, limits, key_words, with_values)) return 1;
  return stageParts(shape, limits, key_words + (with_values ? 1 : 0), false);
}

bool onesweepRankPacked(const TuningConfig& shape, const DeviceFacts& limits, uint32_t key_words, bool with_values) {
  const uint32_t subgroups = onesweepSubgroups(shape.workgroup_size, limits);
  const bool apart = onesweepValuesApart(shape, limits, key_words, with_values);
  const bool value_words = with_values && !apart;
  const uint32_t parts = onesweepStageParts(shape, limits, key_words, with_values);
  return onesweepSharedBytes(shape.workgroup_size, shape.keys_per_thread, subgroups, key_words + (value_words ? 1 : 0),
                             false, parts, countersInStage(shape, parts, apart)) > onesweepSharedBudget(shape, limits);
}

TuningConfig lookbackTuning(const TuningConfig& tuning, const DeviceFacts& limits, uint32_t key_words,
                            LookbackTile tile, uint32_t choice) {
  TuningConfig wide = tuning;
  wide.digit_bits = VREN_RADIX_MAX_DIGIT_BITS;
  const uint32_t asked_threads[] = {tuning.lookback_workgroup_size, tuning.large_tile_workgroup_size,
                                    tuning.large_tile_pairs_workgroup_size};
  const uint32_t asked_keys[] = {tuning.lookback_keys_per_thread, tuning.large_tile_keys_per_thread,
                                 tuning.large_tile_pairs_keys_per_thread};
  // Whole subgroups at every size the device may run them at.
  const uint32_t step = std::max(1u, limits.max_subgroup_size);
  uint32_t threads =
      std::clamp(asked_threads[static_cast<uint32_t>(tile)], step, std::max(step, limits.max_workgroup_size));
  threads -= threads % step;
  uint32_t keys = std::clamp(asked_keys[static_cast<uint32_t>(tile)], 1u, 64u);
  if (choice > 0) {  // a smaller shape of a large tile, where the tuning asks for one
    const uint32_t least =
        tile == LookbackTile::kLargeKeys ? tuning.large_tile_min_keys_per_thread : tuning.large_tile_pairs_min_keys_per_thread;
    if (tile == LookbackTile::kSmall || choice >= kLargeTileChoices || least == 0 || keys < least ||
        keys - least < 2 * choice) {
      wide.lookback_max_count = 0;
      return wide;
    }
    keys -= 2 * choice;
  }
  // n workgroups of a large shape to a unit (large_tile_per_unit): the shape's shared memory
  // within 1/n of the device's (onesweepSharedBudget).
  const uint32_t per_unit[] = {1, tuning.large_tile_per_unit, tuning.large_tile_pairs_per_unit};
  wide.large_tile_per_unit = wide.large_tile_pairs_per_unit =
      std::clamp(per_unit[static_cast<uint32_t>(tile)], 1u, 64u);
  const uint32_t budget = onesweepSharedBudget(wide, limits);
  // Per-subgroup counters grow with the subgroups: fewer threads while they take half the
  // shared memory even packed, then fewer keys per thread.
  while (threads > step && 2 * onesweepSubgroups(threads, limits) * 256 > budget / 2) threads -= step;
  // Where values move too (small tiles serve both), a round of keys and values must fit one part.
  auto pairs_fit = [&] {
    return onesweepSharedBytes(threads, 1, onesweepSubgroups(threads, limits), key_words + 1, true, 1) <= budget;
  };
  const bool with_pairs = tile != LookbackTile::kLargeKeys;
  while (with_pairs && threads > step && !pairs_fit()) threads -= step;
  // Slots in a tile stay below 2^15 (radix_onesweep.comp keeps two in a word).
  keys = std::max(1u, std::min(keys, kMaxTileSize / threads));
  auto fits = [&](uint32_t k, uint32_t parts) {
    return onesweepSharedBytes(threads, k, onesweepSubgroups(threads, limits), key_words, true, parts,
                               countersInStage(wide, parts, false)) <= budget;
  };
  // The keys asked for, staged in halves (onesweepStageParts) where they fit no other way; else
  // fewer keys, staged whole.
  if (keys % 2 != 0 || !fits(keys, 2))
    while (keys > 1 && !fits(keys, 1)) --keys;
  wide.workgroup_size = threads;
  wide.keys_per_thread = keys;
  // llvmpipe ends a shader invocation's loops after 65535 iterations in all, and counts the
  // polls of a SIMD vector's lanes together: at 1024 polls, the rounds of counting missing tiles
  // (at most lookbackMaxTiles()) and the other loops stay below that.
  if (limits.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE) wide.lookback_poll_budget = std::min(wide.lookback_poll_budget, 1024u);
  if (!fits(keys, onesweepStageParts(wide, limits, key_words, false)) || (with_pairs && !pairs_fit()) ||
      (limits.subgroup_operations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) == 0)
    wide.lookback_max_count = 0;
  // The counters inside the stage only where that changes how the tile stages (in fewer parts,
  // its values apart, or its counters unpacked): else they keep their own array, which measured
  // faster (radix_tile_rank.glsl).
  if (wide.lookback_counters_in_stage != 0) {
    TuningConfig beside = wide;
    beside.lookback_counters_in_stage = 0;
    auto staging = [&](const TuningConfig& s, bool with_values) {
      return std::tuple(onesweepStageParts(s, limits, key_words, with_values),
                        onesweepValuesApart(s, limits, key_words, with_values),
                        onesweepRankPacked(s, limits, key_words, with_values));
    };
    bool changes = with_pairs && staging(wide, true) != staging(beside, true);
    if (tile != LookbackTile::kLargePairs) changes = changes || staging(wide, false) != staging(beside, false);
    if (!changes) wide.lookback_counters_in_stage = 0;
  }
  return wide;
}

LargeTileCost largeTileCost(const TuningConfig& shape, const DeviceFacts& limits, uint32_t key_words,
                            LookbackTile tile) {
  if (tile != LookbackTile::kLargePairs) return kLargeTileCostKeys;
  if (onesweepValuesApart(shape, limits, key_words, true)) return kLargeTileCostPairsApart;
  LargeTileCost cost = kLargeTileCostPairs;
  cost.fixed_ns += kLargeTileCostPerPartNs * onesweepStageParts(shape, limits, key_words, true);
  return cost;
}

uint32_t chooseLargeTile(uint32_t count, uint32_t most_count, const uint32_t* tile_sizes, const uint32_t* max_tiles,
                         uint32_t candidates, uint32_t slots, const LargeTileCost* costs) {
  uint32_t chosen = 0;
  double least = 0;
  bool found = false;
  for (uint32_t i = 0; i < candidates && slots > 0; ++i) {
    if (tile_sizes[i] == 0) continue;
    if (std::max(1u, divCeil(most_count, tile_sizes[i])) > max_tiles[i]) continue;
    const uint64_t tiles = std::max(1u, divCeil(count, tile_sizes[i]));
    const double waves = static_cast<double>((tiles + slots - 1) / slots);
    const double time = waves * (costs[i].fixed_ns + costs[i].per_key_ns * tile_sizes[i]);
    if (!found || time < least) chosen = i, least = time, found = true;  // ties: the larger tile
  }
  return chosen;
}

uint32_t blockSharedBytes(const TuningConfig& tuning, uint32_t max_subgroups, uint32_t key_words) {
  const uint32_t tile = tuning.workgroup_size * tuning.keys_per_thread;
  const uint32_t bins = 1u << VREN_RADIX_MAX_DIGIT_BITS;
  return 4 * tile * (key_words + 1) + 2 * bins * max_subgroups + 4 * bins + 4 * (max_subgroups + 1);
}

std::array<TuningConfig, kBlockShapes> blockShapes(const DeviceFacts& limits, uint32_t key_words) {
  // H200, uniform u32, 2^10 keys, ms: 512 x 2 0.012, 1024 x 1 0.013, 256 x 16 (the 4096-key shape,
  // 4 rounds a pass) 0.018; 2^12 keys: 256 x 16 0.030 (H200, 2026-11-26).
  const uint32_t min_subgroup = std::max(1u, limits.min_subgroup_size);
  const uint32_t max_threads = std::min(512u, floorPow2(limits.max_workgroup_size));
  std::array<TuningConfig, kBlockShapes> shapes;
  shapes.fill(TuningConfig{0, 0, VREN_RADIX_MAX_DIGIT_BITS});  // none (TuningConfig{} is a real shape)
  for (uint32_t i = 0, size = kMaxBlockSize >> (kBlockShapes - 1); i < kBlockShapes; ++i, size *= 2) {
    for (uint32_t threads = std::min(max_threads, size); threads > 0 && threads * 16 >= size; threads /= 2) {
      const TuningConfig shape{threads, size / threads, VREN_RADIX_MAX_DIGIT_BITS};
      if (threads >= std::min(32u, min_subgroup) &&
          blockSharedBytes(shape, std::max(1u, threads / min_subgroup), key_words) <= limits.max_shared_memory) {
        shapes[i] = shape;
        break;
      }
    }
  }
  return shapes;
}

TuningConfig pairsScatterShape(const TuningConfig& tuning, const DeviceFacts& limits, uint32_t key_words) {
  // H200, 2^26 uniform u32 pairs: 512x2 for every pass 5.69 ms against 256x4 6.28 ms; the keys
  // sort is faster at 256x4 (3.90 against 4.65 ms), so only the pairs scatter takes the wider
  // shape (H200, 2026-11-22).
  // Measured for 32-bit keys and 4-bit digits only; an odd key count would change the tile.
  if (limits.vendor_id != kVendorNvidia || key_words != 1 || tuning.keys_per_thread % 2 != 0 || binCount(tuning) > 16)
    return tuning;
  TuningConfig wide = tuning;
  wide.workgroup_size *= 2;
  wide.keys_per_thread /= 2;
  const uint32_t max_subgroups = std::max(1u, wide.workgroup_size / std::max(1u, limits.min_subgroup_size));
  if (wide.workgroup_size > limits.max_workgroup_size ||
      scatterSharedBytes(wide, max_subgroups, true, key_words) > limits.max_shared_memory)
    return tuning;
  return wide;
}

std::array<uint32_t, kMaterialSpecConstantCount> materialSpecializationValues(const MaterialTuning& tuning,
                                                                               uint32_t workgroup_size,
                                                                               uint32_t max_subgroups,
                                                                               uint32_t histogram_size, uint32_t bits,
                                                                               bool poll_atomic) {
  static_assert(VREN_RADIX_MATERIALS_SPEC_POLL_BUDGET + 1 == kMaterialSpecConstantCount);
  std::array<uint32_t, kMaterialSpecConstantCount> v{};
  v[VREN_RADIX_MATERIALS_SPEC_WORKGROUP_SIZE] = workgroup_size;
  v[VREN_RADIX_MATERIALS_SPEC_MAX_SUBGROUPS] = max_subgroups;
  v[VREN_RADIX_MATERIALS_SPEC_HISTOGRAM_SIZE] = histogram_size;
  v[VREN_RADIX_MATERIALS_SPEC_ROUNDS] = tuning.min_rounds;
  v[VREN_RADIX_MATERIALS_SPEC_BITS] = std::max(bits, 1u);
  v[VREN_RADIX_MATERIALS_SPEC_POLL_ATOMIC] = poll_atomic ? VK_TRUE : VK_FALSE;
  v[VREN_RADIX_MATERIALS_SPEC_POLL_BUDGET] = tuning.poll_budget;
  return v;
}

uint32_t tilePackWorkgroupSize(uint32_t asked, uint32_t tile_size, const DeviceFacts& facts) {
  const uint32_t tile_quads = tile_size * tile_size / kTilePixelsPerQuad;
  uint32_t size = floorPow2(std::min({asked ? asked : kTilePackWorkgroupSize, facts.max_workgroup_size, tile_quads}));
  size = std::max(size, floorPow2(std::max(1u, facts.max_subgroup_size)));
  return std::max(size, facts.required_subgroup_size);
}

std::array<uint32_t, 5> tilePackSpecializationValues(uint32_t workgroup_size, uint32_t tile_size,
                                                     uint32_t container_count, uint32_t alignment) {
  static_assert(VREN_RADIX_TILES_SPEC_ALIGNMENT + 1 == 5);
  std::array<uint32_t, 5> v{};
  v[VREN_RADIX_TILES_SPEC_WORKGROUP_SIZE] = workgroup_size;
  v[VREN_RADIX_TILES_SPEC_TILE_SIZE] = tile_size;
  v[VREN_RADIX_TILES_SPEC_QUADS_PER_THREAD] = divCeil(tile_size * tile_size / kTilePixelsPerQuad, workgroup_size);
  v[VREN_RADIX_TILES_SPEC_CONTAINERS] = container_count;
  v[VREN_RADIX_TILES_SPEC_ALIGNMENT] = alignment;
  return v;
}

}  // namespace vren::radix::detail
