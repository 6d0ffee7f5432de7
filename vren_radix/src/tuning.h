// Tuning rows, kept apart from the algorithm: pick a row from device properties, then clamp it
// to what the device allows.
#pragma once

#include <array>
#include <cstdint>

#include <vulkan/vulkan.h>

#include "device.h"
#include "vren_radix/materials.h"
#include "vren_radix/vren_radix.h"

namespace vren::radix::detail {

// Tiles per count workgroup: the count pass does little per key, so a workgroup per tile spends
// too much on its fixed work (zeroing, summing, writing counts).
constexpr uint32_t kCountTiles = 4;

TuningConfig defaultTuning(uint32_t vendor_id);

// Shared memory of the scatter pass (radix_scatter.comp's map), the largest of the passes, for
// keys of key_words 32-bit words.
uint32_t scatterSharedBytes(const TuningConfig& tuning, uint32_t max_subgroups, bool with_values, uint32_t key_words);

// Shared memory of the count pass (radix_count.comp's map).
uint32_t countSharedBytes(const TuningConfig& tuning, uint32_t max_subgroups);

// Bins per digit: 16 or 256.
uint32_t binCount(const TuningConfig& tuning);

// Rounds to powers of two (digit bits above 4 to 8, the rest to 4) and shrinks until the device
// can run it with values and keys of key_words words; tile <= 32768 keys.
TuningConfig clampTuning(TuningConfig tuning, const DeviceFacts& limits, uint32_t key_words);

// Look-back sorts (TuningConfig::lookback_max_count) are at most this many tiles. On lavapipe
// it bounds the rounds a tile may spend counting earlier tiles itself (radix_lookback.glsl),
// whose loops share llvmpipe's 65535 iterations; elsewhere the published words' u32 indices.
uint32_t lookbackMaxTiles(const DeviceFacts& limits);
// Tiles one workgroup takes at most where the workgroups loop over them
// (TuningConfig::large_tile_loop): on lavapipe 4, whose tiles' polls and counting rounds then
// share one invocation's 65535 loop iterations; elsewhere no limit.
uint32_t loopMaxTiles(const DeviceFacts& limits);
// With a poll budget of 0 (each tile counts every earlier tile), at most this many tiles.
constexpr uint32_t kLookbackUnpolledMaxTiles = 1024;
// Look-back prefixes hold 30 bits (radix_lookback.glsl's published words).
constexpr uint32_t kLookbackMaxCount = (1u << 30) - 1;

// Shared memory of the one-dispatch pass (radix_onesweep.comp's map), its rank counters packed
// two bins a word or not (radix_tile_rank.glsl), the tile staged in stage_parts parts of
// slot_words words a slot (key words, and one for a value), the counters beside the stage or
// inside it (TuningConfig::lookback_counters_in_stage, for a tile staged after its ranking).
uint32_t onesweepSharedBytes(uint32_t workgroup_size, uint32_t keys_per_thread, uint32_t max_subgroups,
                             uint32_t slot_words, bool packed, uint32_t stage_parts = 1, bool counters_in_stage = false);
// The shared memory a look-back tile of this shape (lookbackTuning's) may hold: the device's, or
// 1/n of it less 16 bytes (the ticket word) where n of its workgroups are meant to share a unit
// (its large_tile_per_unit, which lookbackTuning sets from the tuning's per kind of tile; 1 for
// small tiles).
uint32_t onesweepSharedBudget(const TuningConfig& shape, const DeviceFacts& limits);
// In how many parts a look-back tile of this shape is staged for its stores: the fewest that fit
// with packed counters (more than one, or one with values apart, keeps every key in registers
// until the stores), each slot with its key and, with values, its value (a 512 x 24 tile of u32
// pairs in 3 parts of 8 rounds on 48 KiB, keys alone in 2). lookbackTuning keeps the keys asked
// for where halves hold them alone, else it takes fewer keys, staged whole.
uint32_t onesweepStageParts(const TuningConfig& shape, const DeviceFacts& limits, uint32_t key_words, bool with_values);
// With values, where the tuning asks for it (lookback_values_apart) and the tile's keys fit the
// stage whole but not with their values: the keys staged whole and stored, then the values.
bool onesweepValuesApart(const TuningConfig& shape, const DeviceFacts& limits, uint32_t key_words, bool with_values);
// Whether a look-back tile of this shape packs its rank counters: only where unpacked ones do not
// fit (packing costs 6 % at 384 x 20 on an H200, see radix_tile_rank.glsl).
bool onesweepRankPacked(const TuningConfig& shape, const DeviceFacts& limits, uint32_t key_words, bool with_values);

// The look-back's tiles: small ones for keys alone and with values, large ones from
// large_tile_min_count keys, for keys alone and with values, each in up to kLargeTileChoices
// shapes (TuningConfig::large_tile_min_keys_per_thread): the one asked, then 2, 4, ... keys per
// thread fewer.
enum class LookbackTile : uint32_t { kSmall, kLargeKeys, kLargePairs };
constexpr uint32_t kLargeTileChoices = 5;
// Where KeyPipelines::Lookback::tiles holds a tile: the small one first, then the large ones for
// keys alone, then those with values, each from the largest.
constexpr uint32_t kLookbackTiles = 1 + 2 * kLargeTileChoices;
constexpr uint32_t lookbackTileIndex(LookbackTile tile, uint32_t choice) {
  return tile == LookbackTile::kSmall ? 0 : tile == LookbackTile::kLargeKeys ? 1 + choice : 1 + kLargeTileChoices + choice;
}
constexpr LookbackTile lookbackTileKind(uint32_t index) {
  return index == 0 ? LookbackTile::kSmall : index <= kLargeTileChoices ? LookbackTile::kLargeKeys : LookbackTile::kLargePairs;
}
constexpr uint32_t lookbackTileChoice(uint32_t index) { return index == 0 ? 0 : (index - 1) % kLargeTileChoices; }
// The largest shapes, the ones asked for.
constexpr uint32_t kLargeKeysTile = lookbackTileIndex(LookbackTile::kLargeKeys, 0);
constexpr uint32_t kLargePairsTile = lookbackTileIndex(LookbackTile::kLargePairs, 0);
// A look-back tile's tuning: 8-bit digits, lookback_workgroup_size threads (whole subgroups) x
// lookback_keys_per_thread keys, or the large_tile_* or large_tile_pairs_* shape (its `choice`:
// 2 * choice keys per thread fewer), shrunk to the device's shared memory; lookback_max_count 0
// if nothing fits, the device has no subgroup shuffle, or the tuning asks for no such choice.
TuningConfig lookbackTuning(const TuningConfig& tuning, const DeviceFacts& limits, uint32_t key_words,
                            LookbackTile tile, uint32_t choice = 0);

// What a large look-back tile costs, for the choice between its shapes: a tile's fixed work and
// its work per key. The choice takes the shape with the least cost per SM: the tiles' waves
// (tiles / slots, rounded up) times a tile's cost. H200 (132 SMs, one 512-thread tile each at
// a time), uniform u32, medians, ms (2026-11-27), 512 x K keys per thread, K = 16/20/22/24/26:
// keys 2^20 0.071/0.070/0.072/0.075/0.077, 1920x1080 0.116/0.113/0.117/0.120/0.123, 2560x1440
// 0.192/0.162/0.165/0.171/0.172, 2^22 0.203/0.191/0.172/0.179/0.183, 3840x2160
// 0.381/0.332/0.319/0.322/0.306, 2^24 0.722/0.620/0.598/0.591/0.577; pairs (K = 16/20/22/24) 2^20
// 0.082/0.085/0.089/0.093, 1920x1080 0.137/0.143/0.150/0.156, 2560x1440 0.249/0.216/0.225/0.234,
// 2^22 0.261/0.263/0.234/0.243, 3840x2160 0.486/0.451/0.433/0.443, 2^24 0.922/0.836/0.821/0.809.
// Fitted per pass from these, and choosing the best measured shape at each of them: keys 6.2 us
// a tile and 0.45 ns a key, pairs 7.8 us and 0.73 ns. Those pairs tiles were staged in three
// parts (two at 512 x 16), so their 7.8 us are 4.5 and 1.1 for each part (largeTileCost): the
// same choices at every count above. The part's 1.1 us is fitted to u64 pairs, 2^24 of them at
// 512 x 22 in four parts (12 waves) 1.827 ms against 1.794 at 512 x 20 in three (13 waves), two
// rounds alternating (2026-12-03); without it the chooser took 512 x 22 from 2^22 up, with it
// 512 x 20 from 2^24: 1.786 ms against 1.821 there in a later run (512 x 18 at 2^23 and
// 3840x2160, unmeasured).
struct LargeTileCost {
  double fixed_ns;
  double per_key_ns;
};
constexpr LargeTileCost kLargeTileCostKeys = {6200, 0.45};
constexpr LargeTileCost kLargeTileCostPairs = {4500, 0.73};
constexpr double kLargeTileCostPerPartNs = 1100;  // pairs staged in parts (onesweepStageParts)
// Pairs tiles whose values stage apart (onesweepValuesApart): u32 pairs on the H200, workgroups
// looping, a wave's time at 2^26 (the sort less its setup and histogram, 0.137 ms, over 4 passes
// and the waves) 9.85 us at 512 x 16 (63 waves; 2026-12-02), 11.40 at 512 x 20 (50) and 12.15 at
// 512 x 22 (46; 2026-12-03): 3.9 us a tile and 0.73 ns a key, within 0.5 % of all three and 2 %
// of 2^24's. It takes what 7.8 us and 0.45 ns took before (512 x 16 at 2^20 and 1920x1080, 512 x
// 20 at 2560x1440, 512 x 22 from 2^22), where the earlier fit put 512 x 22 at 4 % over 512 x 20.
constexpr LargeTileCost kLargeTileCostPairsApart = {3900, 0.73};
// What a large tile of this shape costs (its kind: LookbackTile::kLargeKeys or kLargePairs).
LargeTileCost largeTileCost(const TuningConfig& shape, const DeviceFacts& limits, uint32_t key_words,
                            LookbackTile tile);
// Which of the candidates' tiles (tile_sizes, 0: none; the first the largest; each weighed at
// costs[i]) a sort of `count` keys takes, with `slots` tiles running at once (0: unknown, the
// first), among those whose tiles for `most_count` keys (a GPU-side count's bound; at least
// count) are at most max_tiles[i].
uint32_t chooseLargeTile(uint32_t count, uint32_t most_count, const uint32_t* tile_sizes, const uint32_t* max_tiles,
                         uint32_t candidates, uint32_t slots, const LargeTileCost* costs);

// Shared memory of the one-dispatch sort (radix_sort_block.comp's map) for keys and values of a
// workgroup of `tuning`'s shape.
uint32_t blockSharedBytes(const TuningConfig& tuning, uint32_t max_subgroups, uint32_t key_words);

// The one-dispatch sort's workgroups, smallest first: for 1024, 2048 and 4096 keys
// (kMaxBlockSize), the widest workgroup of at most 512 threads and 16 keys each whose keys,
// values and per-subgroup counters fit shared memory; 8-bit digits. Sizes that no workgroup fits
// have workgroup_size 0. A sort takes the smallest that holds it: wider workgroups rank its keys
// in fewer serial rounds.
constexpr uint32_t kMaxBlockSize = 4096;
constexpr uint32_t kBlockShapes = 3;
std::array<TuningConfig, kBlockShapes> blockShapes(const DeviceFacts& limits, uint32_t key_words);

// Segmented sorts and top-k (segments.cpp). H200, driver 580.159.04, medians, one session each,
// 2026-11-26.
// Keys per lane of the short-segment sort (radix_segment_small.comp): a subgroup takes segments
// of up to min_subgroup_size x this many keys, each key compared with every key of its segment.
// 1M segments of 16 keys: a subgroup each 1.43 ms, a workgroup each 30.0 ms (segments of up to 16
// keys now take a thread each: 0.195 ms); other values unmeasured.
constexpr uint32_t kSmallSegmentKeys = 8;
// Keys per thread of the whole-buffer top-k's level and collect workgroups. k = 2048 of 2^20:
// 16 keys 0.084 ms, 64 keys (a quarter of the workgroups, for fewer histogram atomics) 0.109 ms.
constexpr uint32_t kSelectKeysPerThread = 16;
// The same for level 0 alone, when a later level follows: each workgroup adds its whole 2048-bin
// histogram with atomics. H200, k = 2048 of 2^20 (2026-11-27, one session, two runs): 16 keys
// (256 workgroups) 29.5 / 31.0 us in all, 32 keys 28.4 / 28.6, 64 keys 29.4 / 30.5 (more
// rounds of loads each).
constexpr uint32_t kSelectLevel0KeysPerThread = 32;
// Per-segment top-k selects in one workgroup per segment while segments average at most this
// many elements, else sorts. 512 rows of 32000 f32, k = 40: select 0.288 ms, sorts 1.75 ms; the
// bound itself is unmeasured.
constexpr uint32_t kSegmentSelectMaxAverage = 1u << 18;

// Segments past a block take one workgroup each for every pass (radix_segment_sweep.comp) while
// the longest holds at most kSweepMaxLength elements and at most 2 * count / kSweepWorkgroups
// (each workgroup sorts alone, so the longest segment
// bounds the time; the two sorts cost about two full sorts); otherwise the two sorts.
// 256 segments of 2^16 keys: bench/RESULTS.md gives today's times; the bounds themselves are unmeasured.
constexpr uint32_t kSweepMaxLength = 1u << 18;
constexpr uint32_t kSweepWorkgroups = 256;

// The workgroup shape of the key/value scatter: the same tile as `tuning` (the count pass and
// the internal buffer depend on it), possibly split over more threads.
TuningConfig pairsScatterShape(const TuningConfig& tuning, const DeviceFacts& limits, uint32_t key_words);

// The material sorter (materials.cpp): one row for every device. NVIDIA's measured best equals
// it: H200, 2560x1440 random IDs, bench_materials --tuning=WxR, median of 5 x 200, total us for
// 8 / 64 materials with the current fast path: 256x8 36.0 / 49.7, 256x4 34.8 / 48.1, 512x8
// 36.5 / 47.4 (within the run-to-run spread of ~2 us; a later run gave 256x4 38.3 / 53.1), and
// with the first fast path 256x16 83.9 / 123.1, 1024x4 75.4 / 111.7, 128x16 77.0 / 119.3
// against 256x8 70.0 / 110.3 (2026-11-22).
constexpr MaterialTuning kMaterialTuning = {256, 8, 4096};
// The material fast path's ID widths: one count and one scatter pipeline per width, so that
// their loops over bits unroll: up to 8 materials, the benchmarked case, pays 3 ballots per
// round instead of 6.
constexpr uint32_t kMaterialFastBits[] = {3, 6};
// A material pass's specialization constants (shaders/materials_shared.h), constant i at [i].
constexpr uint32_t kMaterialSpecConstantCount = 7;
std::array<uint32_t, kMaterialSpecConstantCount> materialSpecializationValues(const MaterialTuning& tuning,
                                                                               uint32_t workgroup_size,
                                                                               uint32_t max_subgroups,
                                                                               uint32_t histogram_size, uint32_t bits,
                                                                               bool poll_atomic);

// The tile packer (tiles.cpp): one thread per quad of 4 pixels (one 16-byte load), so a 64 x 64
// tile gets 1024 threads and each thread's chain of dependent work is a single quad. H200,
// bench_tiles 2560 x 1440, both options: 34.9 us at 1024 threads vs 39.4 at 512 and 46.7 at 256
// (2026-11-22).
constexpr uint32_t kTilePackWorkgroupSize = 1024;
constexpr uint32_t kTilePixelsPerQuad = 4;
// The packer's workgroup for `asked` threads (0: kTilePackWorkgroupSize): a power of two within the
// device's limit and the tile's quads, and at least one subgroup of the largest size the device
// may run (the shader hands lane r round r's key, so a subgroup's active lanes must be 0..n-1,
// which only whole subgroups promise). It may exceed the device's limit: the packer refuses that.
uint32_t tilePackWorkgroupSize(uint32_t asked, uint32_t tile_size, const DeviceFacts& facts);
// The packer's specialization constants (shaders/tiles_shared.h), constant i at [i].
std::array<uint32_t, 5> tilePackSpecializationValues(uint32_t workgroup_size, uint32_t tile_size,
                                                     uint32_t container_count, uint32_t alignment);

}  // namespace vren::radix::detail
