#version 460
// One radix pass of 8-bit digits in one dispatch (the Onesweep shape): each workgroup sorts a
// large tile by the pass's digit and writes it to its global place, its offsets found by a
// decoupled look-back over the earlier tiles (radix_lookback.glsl) rather than by count and scan
// passes. The digit totals of every pass come from one histogram before the first pass
// (radix_histogram.comp). Values move in the same pass as their keys.
//
// A workgroup sorts one tile, or with LOOP_TILES (TuningConfig::large_tile_loop) a grid of as
// many workgroups as run at once takes the tiles in turn (workgroup w: tiles w, w + grid, ...; in
// the VREN_RADIX_LOOP_TICKETS build, below, in the order the workgroups ask),
// loading each next tile's keys as soon as the current ones are staged, so that those loads
// are in flight during the current tile's stores (and no workgroup launch sits between tiles).
// Staged in parts or values apart, values load once the tile's counts are published, in flight
// during the ranking.
// Per tile (the steps in main):
// 1. Load: subgroup s owns the contiguous segment of SUBGROUP_SIZE * KEYS_PER_THREAD keys from
//    s * SUBGROUP_SIZE * KEYS_PER_THREAD; round i of lane l holds key i * SUBGROUP_SIZE + l of it
//    (coalesced loads, and rounds in input order).
// 2.-4. Rank the tile (radix_tile_rank.glsl): each subgroup counts its keys per bin on its own
//    counters; per bin, the tile's count is published at once (early, so that later tiles
//    rarely wait) and each subgroup's start inside the bin found; then round after round of
//    keys go straight into their slots in the tile, with no scan after them.
// 5. Per bin: the output start, from the digit totals' scan and the look-back.
// 6. Out in slot order, each key with its value, which was loaded with the key or after step 3
//    (its latency hidden behind the ranking) and staged beside it (in parts where the tile is too
//    large to stage whole), or with VALUES_APART staged and stored after all the keys.
// Tile size decides how much of each tile's fixed work (scans, barriers, the look-back) each
// key carries, and more subgroups per tile hide more of the ranking's latency: at 2^26 keys on
// an H200 (ballot ranking), 512 x 26 staged in halves (16 subgroups, 120 registers) 2.40 ms,
// 768 x 10 (24 subgroups, packed counters, staged whole) 2.78, 384 x 20 (12) 2.87, and 512 x 10
// (57 registers, a smaller tile) 3.27. Smaller workgroups whose registers would let two or three
// share an SM lose: 256 x 26 (122 registers) 3.40, 384 x 16 (79) 3.13, 256 x 16 (75) 4.06.
// Tiles staged after the ranking (in parts, or values apart) rank with the OR matcher
// (radix_tile_rank.glsl).
// Where a tile's time goes (thread 0's clock after each CLOCK_ step below, in a build with
// VREN_RADIX_SHADER_CLOCKS: `vren-radix demo --profile`; H200, 2^26, workgroups looping over the
// tiles, the values still loaded beside the keys), us per tile, keys alone at 512 x 26 / pairs at
// 512 x 24: clearing 0.40 / 0.49, waiting for the loads and counting 1.05 / 1.74, publishing the
// counts and placing the subgroups 1.29 / 1.21, ranking 3.77 / 4.02, the look-back 0.98 / 1.40,
// staging the parts 1.07 / 2.53, issuing the next tile's loads 0.73 / 2.06, storing 1.80 / 2.74,
// between tiles 0.08 / 0.09 and the workgroup's start 0.05 / 0.09 a tile, in all 11.2 / 16.4.
// Pairs at 512 x 20 with values apart and the counters in the stage (2026-12-02, 2^26, cycles a
// tile at about 1.98 GHz; keys alone at 512 x 26 beside them): clearing 833 / 784, loads and
// counting 1619 / 2074, publishing 2590 / 2549, ranking 6485 / 7467, the look-back 2135 / 1906,
// staging (keys, then values) 2472 / 2120, the next tile's loads 1246 / 1442, storing (keys,
// then values) 6380 / 3564, between tiles 439 / 152, the start 68 / 97: 24,240 (12.2 us) / 22,155.
// While they run, those pairs stores write 80 KiB a tile in 3.2 us, about 3.4 TB/s over 132 SMs:
// near what the memory takes, where the steps before them keep it mostly idle. Split further
// (2026-12-02, same build and shape), the publishing step's 2750 cycles are the units' counts and
// publishing 385, the workgroup scan of the tile's counts 1920 and placing the subgroups 446; the
// clearing's 906 are 742 issuing the stores and 164 in its barrier: shared-memory work right after
// the stores is slow while they drain. That scan now takes one barrier where it took three and
// the first subgroup's scan of the subgroups' sums (workgroup_exclusive_add_lean): pairs 0.0718 /
// 0.206 / 0.664 / 2.484 ms at 2^20 / 2^22 / 2^24 / 2^26 against 0.0759 / 0.209 / 0.692 / 2.575,
// keys within 0.5 % (2026-12-02). Cutting the look-back's three barriers to one as well (its
// flag cleared with the counters, the destinations placed before the barrier that tells whether
// a walk stopped) gained nothing more: 0.0717 / 0.206 / 0.667 / 2.498 in the same run. Nor did
// starting every other or every fourth workgroup 2-3.8 us late, so that some SMs store while
// others rank (2.571 ms at 2^26 pairs, where the one-barrier scan took 2.478 in the same run);
// ballots in place of the OR matcher lose: 1.018 / 3.80 at 2^24 / 2^26. More subgroups for the
// latency-bound steps lose: pairs (values apart, counters in the stage) 768 x 10 (80 registers)
// 0.768 / 2.913 ms at 2^24 / 2^26, 768 x 12 (80, 16 bytes spilled) 0.738 / 2.766 and 1024 x 10
// (64, spilled) 1.000 / 3.73 against 0.693 / 2.577 at 512 x 20 in the same run.
// Issuing the loads takes about 5 cycles a subgroup's load, and each part's staging issues a
// shared store per key and part with most lanes idle, so the store phase looks bound by the SM's
// memory instructions rather than by DRAM (1.5 TB/s over a pass). Reading the next tile's
// sectors into the cache during the ranking (a load per 32 bytes) lost wherever it was issued:
// keys 0.532-0.552 / 1.94-2.01 ms at 2^24 / 2^26 against 0.512 / 1.85, pairs 0.81-0.85 / 2.98-3.14
// against 0.776 / 2.83 (before the values moved). Ranking two rounds a step (each subgroup's
// atomics of both in flight at once, two sets of the OR matcher's words, a pair of subgroup
// barriers for both) lost too: 2.05 / 2.81 ms at 2^26 keys / pairs against 1.85 / 2.70; the same
// build ranking a round a step (this shader's ranking beside the unused two-round code) took
// 1.98 / 2.76. So did 32-bit keys staged beside their values (adjacent words, for 8-byte shared
// accesses): pairs 0.763 / 2.81 at 2^24 / 2^26 against 0.739 / 2.72 (2026-11-28). A workgroup per
// tile adds 4.8 us a tile of launch and first loads (pairs). Each SM runs one tile at a time, so
// its memory idles while it ranks (CUB runs two 384-thread workgroups per SM). NVIDIA's Vulkan
// driver gives an SM 48 KiB of shared memory in all, whatever the registers (a probe of
// workgroups that only hold shared memory: two share an SM at 24,576 bytes each, one runs at
// 24,832; three at 16,384, two at 16,640), so two of these workgroups share an SM only at 24 KiB
// or less. Over it, 264 looping workgroups that take their tiles by index collapse (36-60x as
// long as 132), and taking them by an atomic ticket, in the order they ask, they take exactly as
// long as 132 (384 x 12 keys, 73 registers, 34.9 KiB: 1.17 / 4.52 ms at 2^24 / 2^26 on both).
// Tickets lose on 132 workgroups: keys 0.545 / 1.97 and pairs 0.760 / 2.79 against 0.512 / 1.85
// and 0.739 / 2.72, read through subgroupBroadcastFirst 0.536 / 1.95 and 0.748 / 2.78; per step
// their clocks match these but for the ticket's fetch (+190 cycles a tile for keys, +470 for
// pairs). At 24 KiB or less (tiles staged in more parts) two workgroups do share an SM, and it
// nearly doubles their speed: 256 x 24 keys 3.57 -> 2.19 ms at 2^26 from 132 to 264 workgroups,
// 256 x 11 keys 6.42 -> 3.79, 256 x 24 pairs 4.15 -> 2.68. But the smaller tiles give that back:
// on 264 workgroups keys 384 x 16 (80 registers) 0.537 / 1.99 ms and 256 x 32 0.549 / 2.00 against
// 0.511 / 1.85 here; pairs 384 x 12 (80 registers) 0.698 / 2.64 against 0.731 / 2.71, 0.207 /
// 0.184 / 0.369 at 2^22 / 2560 x 1440 / 3840 x 2160 against 0.218 / 0.197 / 0.392, and 0.081
// against 0.078 at 2^20 (2026-11-28). Those pairs shapes sit at the register file's edge (80 x
// 384 x 2, and 256 x 24 at 128 x 256 x 2): one register more and, by index, they would collapse.
// By ticket (TuningConfig::large_tile_pairs_per_unit 2, 264 workgroups), 2^20 / 2^22 / 2560 x
// 1440 / 3840 x 2160 / 2^24 / 2^26 pairs at 384 x 12: 0.081 / 0.223-0.225 / 0.192 / 0.386 /
// 0.706-0.707 / 2.64 ms with the first ticket taken after the skip flag's barrier behind one more
// barrier (and the ticket behind a specialization constant); 0.083-0.084 / 0.228-0.231 / 0.196-
// 0.197 / 0.392-0.393 / 0.722-0.728 / 2.70-2.71 in the build of its own (before each workgroup
// stopped at its share of the tiles; that form is unmeasured); today's tiles 0.078 / 0.218-0.220
// / 0.198-0.201 / 0.392-0.393 / 0.732-0.733 / 2.71-2.72 in the same runs. 384 x 14 (80
// registers, 16 bytes spilled, 24,144 bytes) does not collapse by ticket: 0.835 / 2.96 at 2^24 /
// 2^26. 384 x 12 on 132 workgroups (one an SM) takes 0.992 / 3.83 (2026-11-28).
// A tile's time barely follows its size: about 12 us a tile at 512 x 26, 12.6 at 384 x 16 (staged
// whole, so ranked by ballots) and 8.9 at 256 x 11, one workgroup per SM.
// Staging the first part (values apart: every key) before the look-back instead, its barrier then
// ordering the staging too, gained nothing: in the profiling build at 2^24 / 2^26 pairs (512 x 20,
// values apart), 0.727 / 2.675 ms against 0.727 / 2.672, the look-back's step grown by what the
// stores' step lost (3426 against 2135 cycles a tile, stores 5202 against 6380), and 512 x 18
// took 127 registers against 122 (2026-12-02).
//
// Shared memory (bytes), G = WORKGROUP_SIZE, S = MAX_SUBGROUPS, W = key words:
//   s_stage           the stage, 4 (W + V) R G: the tile in bin order, a part's keys then its
//                     values (V = 1 with values, 0 with VALUES_APART: the tile's keys, later its
//                     values), in P = STAGE_PARTS parts of R = ceil(KEYS_PER_THREAD / P) rounds;
//                     with COUNTERS_IN_STAGE, after the OR matcher's words (4 ceil(G / 32) BINS,
//                     where the stage holds them), the rank counters and a missing tile's counts
//                     (the stage grown where they need more)
//   rank counters     4 S BINS   radix_tile_rank.glsl: per subgroup and bin the counts, then the
//                                next slot in the tile (half with RANK_PACKED; 4 in the stage)
//   s_bin_start       4 BINS     radix_tile_rank.glsl: where each bin starts in the tile
//   s_bin_destination 4 BINS     the global index of tile slot 0 if it held the bin
//   look-back         8 BINS + 8 (radix_lookback.glsl; s_lookback_count: the tile's counts,
//                                s_lookback_missing a missing tile's: 4 in the stage)
//   workgroup scan    4 (S + 1)
//   flags             4
// With COUNTERS_IN_STAGE the counters and that count keep a word each of their own: u32 pairs
// with values apart fit 48 KiB up to 512 x 22 with unpacked counters (512 x 17 packed beside the
// stage).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#ifdef VREN_RADIX_SHADER_CLOCKS
#extension GL_ARB_shader_clock : require
#endif
#include "radix_common.glsl"

layout(local_size_x_id = VREN_RADIX_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = VREN_RADIX_SPEC_KEYS_PER_THREAD) const uint KEYS_PER_THREAD = 16;
layout(constant_id = VREN_RADIX_SPEC_MAX_SUBGROUPS) const uint MAX_SUBGROUPS = 64;
// > 1: values move with the keys.
layout(constant_id = VREN_RADIX_SPEC_VALUE_SLOTS) const uint VALUE_SLOTS = 1;
// Drivers that compile volatile loads as plain ones, which a loop may hoist (lavapipe), poll
// with atomic loads; NVIDIA's honours volatile loads, which are faster there.
layout(constant_id = VREN_RADIX_SPEC_POLL_ATOMIC) const bool POLL_ATOMIC = true;
// Polls per thread and tile of words not yet published, in all; 0: no word is read at all, every earlier
// tile is counted from its keys.
layout(constant_id = VREN_RADIX_SPEC_POLL_BUDGET) const uint POLL_BUDGET = 4096;
// 1: each key (and value) is staged as soon as it is ranked, unless VALUES_APART. More: every key
// stays in registers until the stores, which stage the tile in this many parts of
// ceil(KEYS_PER_THREAD / STAGE_PARTS) rounds each: tiles larger than the shared memory holds whole.
layout(constant_id = VREN_RADIX_SPEC_STAGE_PARTS) const uint STAGE_PARTS = 1;
// true: the workgroups loop over the tiles (TuningConfig::large_tile_loop), each loading its next
// tile's keys once the current ones are staged; false: one tile each, and none of that code.
layout(constant_id = VREN_RADIX_SPEC_LOOP_TILES) const bool LOOP_TILES = false;
// With values, where the tile's keys fit the stage whole but not with their values
// (TuningConfig::lookback_values_apart; STAGE_PARTS is then 1): after the ranking the whole
// tile's keys are staged and stored, then its values, each to the destination its key's store
// found. Each key and value is staged once, where parts stage a key per part and round.
layout(constant_id = VREN_RADIX_SPEC_VALUES_APART) const bool VALUES_APART_ASKED = false;
// Staged after the ranking (TuningConfig::lookback_counters_in_stage): the stage holds the rank
// counters (below, where s_stage is declared).
layout(constant_id = VREN_RADIX_SPEC_COUNTERS_IN_STAGE) const bool COUNTERS_IN_STAGE_ASKED = false;

#include "workgroup_scan.glsl"

// VREN_RADIX_LOOP_TICKETS (its own SPIR-V, for tilings where several workgroups are meant to
// share an SM: TuningConfig::large_tile_per_unit): looping workgroups take their tiles by an
// atomic ticket (this pass's state word) in the order they ask, instead of by index, so that
// where fewer run at once than the grid holds, no tile waits for a workgroup that has not
// started. Each ticket is fetched a step before it is needed: the first while the skip flag is
// found, each next one while the current tile is counted. (Without the define this shader
// compiles to what it was before tickets: in the same shader behind a specialization constant
// they cost 512 x 16 pairs 6 registers and 4.5 % at 2^24 on an H200.)
#ifdef VREN_RADIX_LOOP_TICKETS
const bool LOOP_TICKETS = LOOP_TILES;
shared uint s_ticket;  // the workgroup's next tile
#endif

const bool WITH_VALUES = VALUE_SLOTS > 1u;
const bool VALUES_APART = WITH_VALUES && VALUES_APART_ASKED && STAGE_PARTS == 1u;
// Staged in parts or values apart, the tile stays in registers until it is ranked, and the
// ranking's OR matcher may use the stage.
const bool STAGE_AFTER_RANK = STAGE_PARTS > 1u || VALUES_APART;
const uint TILE_SIZE = gl_WorkGroupSize.x * KEYS_PER_THREAD;
const uint PART_ROUNDS = (KEYS_PER_THREAD + STAGE_PARTS - 1u) / STAGE_PARTS;  // store rounds per staged part
const uint PART_SIZE = gl_WorkGroupSize.x * PART_ROUNDS;                       // tile slots per staged part
// Each thread owns this many consecutive bins in the per-bin steps (workgroups may be smaller
// than the bin count).
const uint BINS_PER_THREAD = (BINS + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;
#ifdef VREN_RADIX_KEY64
const uint KEY_WORDS = 2u;
#else
const uint KEY_WORDS = 1u;
#endif

// A part's keys, then its values (VALUES_APART: the tile's keys, later its values).
const uint STAGE_WORDS = PART_SIZE * (KEY_WORDS + (WITH_VALUES && !VALUES_APART ? 1u : 0u));
// Staged after the ranking (STAGE_AFTER_RANK), the stage is free from a tile's clearing to its
// staging: the ranking's OR matcher uses it where its words fit (MATCH_OR_SIZE), and with
// COUNTERS_IN_STAGE the rank counters (radix_tile_rank.glsl) and the look-back's count of a
// missing tile (radix_lookback.glsl) follow those words inside it, the stage grown where they
// need more. Else the counters and that count keep arrays of their own (radix_tile_rank.glsl says
// what one array cost).
const bool COUNTERS_IN_STAGE = COUNTERS_IN_STAGE_ASKED && STAGE_AFTER_RANK;
#include "radix_tile_rank_sizes.glsl"
const uint RANK_COUNTER_BASE = MATCH_OR_SIZE <= STAGE_WORDS ? MATCH_OR_SIZE : 0u;
const uint LOOKBACK_MISSING_BASE = RANK_COUNTER_BASE + RANK_COUNTER_SIZE;
const uint STAGE_NEEDED_WORDS = COUNTERS_IN_STAGE ? LOOKBACK_MISSING_BASE + BINS : 0u;
const uint STAGE_REGION_WORDS = STAGE_WORDS > STAGE_NEEDED_WORDS ? STAGE_WORDS : STAGE_NEEDED_WORDS;
shared uint s_stage[STAGE_REGION_WORDS];
#define RANK_MATCH_WORDS s_stage
const uint RANK_MATCH_CAPACITY = STAGE_AFTER_RANK ? STAGE_WORDS : 0u;
#define RANK_COUNTER_WORDS s_stage
const bool RANK_COUNTERS_LENT = COUNTERS_IN_STAGE;
#define LOOKBACK_MISSING_WORDS s_stage
const bool LOOKBACK_MISSING_LENT = COUNTERS_IN_STAGE;

#include "radix_lookback.glsl"
#include "radix_tile_rank.glsl"

const uint UNITS_PER_THREAD = (RANK_UNITS + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;

shared uint s_bin_destination[BINS];
shared bool s_skipped;  // every key has the same digit

// Profiling builds (VREN_RADIX_SHADER_CLOCKS): thread 0's cycles per step (radix_shared.h's
// VREN_RADIX_CLOCK_ numbers), summed over the workgroup's tiles, then added to the state block.
const uint CLOCK_START = VREN_RADIX_CLOCK_START, CLOCK_CLEAR = VREN_RADIX_CLOCK_CLEAR,
           CLOCK_COUNT = VREN_RADIX_CLOCK_COUNT, CLOCK_PUBLISH = VREN_RADIX_CLOCK_PUBLISH,
           CLOCK_RANK = VREN_RADIX_CLOCK_RANK, CLOCK_LOOKBACK = VREN_RADIX_CLOCK_LOOKBACK,
           CLOCK_STAGE = VREN_RADIX_CLOCK_STAGE, CLOCK_LOAD = VREN_RADIX_CLOCK_LOAD,
           CLOCK_STORE = VREN_RADIX_CLOCK_STORE, CLOCK_NEXT = VREN_RADIX_CLOCK_NEXT;
#ifdef VREN_RADIX_SHADER_CLOCKS
shared uint s_clocks[VREN_RADIX_CLOCK_STEPS + 1u];  // [step] cycles, then the tiles
uint clock_last;
void clock_step(uint step) {
  const uint now = clock2x32ARB().x;
  if (gl_LocalInvocationIndex == 0u) s_clocks[step] += now - clock_last;
  clock_last = now;
}
void clock_flush() {
  if (gl_LocalInvocationIndex == 0u)
    for (uint k = 0u; k <= VREN_RADIX_CLOCK_STEPS; ++k) {
      const uint sum = k < VREN_RADIX_CLOCK_STEPS ? s_clocks[k] >> 4u : s_clocks[k];  // cycles in units of 16
      atomicAdd(pc.internal.data[VREN_RADIX_STATE_CLOCKS + k], sum);
    }
}
#else
void clock_step(uint step) {}
void clock_flush() {}
#endif

// A slot's key and, with values, its value (after the part's keys).
void stage(uint slot, Key key, uint value) {
#ifdef VREN_RADIX_KEY64
  s_stage[2u * slot] = key.x;
  s_stage[2u * slot + 1u] = key.y;
#else
  s_stage[slot] = key;
#endif
  if (WITH_VALUES && !VALUES_APART) s_stage[PART_SIZE * KEY_WORDS + slot] = value;
}
Key staged_key(uint slot) {
#ifdef VREN_RADIX_KEY64
  return uvec2(s_stage[2u * slot], s_stage[2u * slot + 1u]);
#else
  return s_stage[slot];
#endif
}
uint staged_value(uint slot) { return s_stage[PART_SIZE * KEY_WORDS + slot]; }

// The tile slot of this thread's key of round i as loaded: subgroup s holds the contiguous
// segment of SUBGROUP_SIZE * KEYS_PER_THREAD keys from s * SUBGROUP_SIZE * KEYS_PER_THREAD.
uint loaded_slot(uint i) {
  return gl_SubgroupID * gl_SubgroupSize * KEYS_PER_THREAD + i * gl_SubgroupSize + gl_SubgroupInvocationID;
}

// Where each of this thread's bins starts among the pass's keys (every thread calls it).
void scan_digit_totals(uint digit_total[BINS_PER_THREAD], out uint digit_base[BINS_PER_THREAD]) {
  uint sum = 0u, unused_total;
  [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) sum += digit_total[j];
  digit_base[0] = workgroup_exclusive_add(sum, unused_total);
  [[unroll]] for (uint j = 1u; j < BINS_PER_THREAD; ++j) digit_base[j] = digit_base[j - 1u] + digit_total[j - 1u];
}

// The tile's words of the next pass start unpublished, whether this pass moves its keys or not.
void clear_next_words(uint set, uint tile) {
  for (uint b = gl_LocalInvocationIndex; b < BINS; b += gl_WorkGroupSize.x) pc.internal.data[lookback_at(set ^ 1u, tile, b)] = 0u;
}

// Slots in the tile (below 2^15: kMaxTileSize) of this thread's keys as ranked, and key i's of
// them (junk where key i is past the tile's last). With values, two a word: the values' registers
// leave too few for a word each (512 x 24 pairs: 128 registers, no spill). Keys alone keep a word
// each: packed, 512 x 26 keys took 0.540 / 1.96 ms at 2^24 / 2^26 against 0.511 / 1.85 (H200).
const uint SLOTS_PER_WORD = WITH_VALUES ? 2u : 1u;
const uint RANK_WORDS = (KEYS_PER_THREAD + SLOTS_PER_WORD - 1u) / SLOTS_PER_WORD;
// With VALUES_APART, the bins of a thread's stored slots, kept from the keys' stores for the
// values' (a word each took KEYS_PER_THREAD registers there, where these take a quarter).
const uint STORED_BIN_WORDS = (KEYS_PER_THREAD + 3u) / 4u;
uint stored_bin_shift(uint r) { return 8u * (r % 4u); }  // round r's bin in word r / 4
uint ranked_slot(uint ranks[RANK_WORDS], uint i) {
  return SLOTS_PER_WORD == 1u ? ranks[i] : (ranks[i / 2u] >> (16u * (i & 1u))) & 0xFFFFu;
}

// This thread's keys of `tile` as loaded (loaded_slot), NO_KEY past the last key.
void load_keys(ReadUints keys_in, uint tile, uint count, out Key keys[KEYS_PER_THREAD]) {
  const uint tile_begin = tile * TILE_SIZE;
  const uint tile_keys = min(TILE_SIZE, count - tile_begin);
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint slot = loaded_slot(i);
    keys[i] = slot < tile_keys ? load_key(keys_in, tile_begin + slot) : NO_KEY;
  }
}

// With values, this thread's values of `tile` as loaded (with index_values their indices), junk
// past the last key. Staged in parts, a tile loads them once its counts are published, so they
// arrive during the ranking (VALUES_AFTER_PUBLISH); past the last key the load repeats the last
// element's rather than choosing 0, a choice that would wait for the load right there (the
// ranking then started 1-2 us later: 0.977 / 3.65 ms at 2^24 / 2^26 pairs on an H200 against
// 0.738 / 2.71). Staged as ranked, the first round needs them: they load with the keys.
const bool VALUES_AFTER_PUBLISH = STAGE_AFTER_RANK;
void load_values(ReadUints values_in, bool index_values, uint tile, uint count, out uint values[KEYS_PER_THREAD]) {
  const uint tile_begin = tile * TILE_SIZE;
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
    const uint element = tile_begin + loaded_slot(i);
    values[i] = 0u;
    if (WITH_VALUES) values[i] = index_values ? element : values_in.data[min(element, count - 1u)];
  }
}

void main() {
  const uint thread = gl_LocalInvocationIndex;
  const uint first_bin = ordered_thread() * BINS_PER_THREAD;  // this thread's bins in the per-bin steps
  // Every state word the pass needs, loaded at once: each dependent load is a trip to memory
  // before the keys' loads can start.
  const uint tiles = tile_count(), count = element_count(), source = parity(pc.pass);
  uint digit_total[BINS_PER_THREAD];
  [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j)
    digit_total[j] = first_bin + j < BINS ? state(pass_totals_at(pc.pass, first_bin + j)) : 0u;
  // The workgroups take the tiles in turn: this one tile_index(), then every `stride` tiles on
  // (a grid of a workgroup per tile: one tile each).
  const uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  uint tile = tile_index();
  if (tile >= tiles) return;  // uniform per workgroup: the grid's overhang
  const uint set = pc.pass & 1u;  // this pass's published words

  if (thread == 0u) s_skipped = false;
#ifdef VREN_RADIX_LOOP_TICKETS
  const uint ticket_word = VREN_RADIX_STATE_TICKETS + pc.pass;
  uint ticket = 0u;
  if (LOOP_TICKETS && thread == 0u) ticket = atomicAdd(pc.internal.data[ticket_word], 1u);
#endif
#ifdef VREN_RADIX_SHADER_CLOCKS
  if (thread == 0u) for (uint k = 0u; k <= VREN_RADIX_CLOCK_STEPS; ++k) s_clocks[k] = 0u;
  clock_last = clock2x32ARB().x;
#endif
  barrier();  // the flag cleared
  if ((pc.flags & VREN_RADIX_FLAG_NEVER_SKIP) == 0u) {
    [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j)
      if (first_bin + j < BINS && digit_total[j] == count) s_skipped = true;
  }
#ifdef VREN_RADIX_LOOP_TICKETS
  if (LOOP_TICKETS && thread == 0u) s_ticket = ticket;
#endif
  barrier();  // the skip flag final
  if (tile == 0u && thread == 0u) set_next_parity(s_skipped ? source : source ^ 1u);
  if (s_skipped) {  // uniform: the keys stay where they are for the next pass
    for (uint t = tile; t < tiles; t += stride) clear_next_words(set, t);
    return;
  }
#ifdef VREN_RADIX_LOOP_TICKETS
  if (LOOP_TICKETS) {
    tile = s_ticket;
    if (tile >= tiles) return;  // uniform
  }
  // A workgroup takes at most its share of the tiles, as by index: the grid holds enough
  // workgroups for every tile, and a driver that bounds a shader's loops (lavapipe) gets a grid
  // whose share stays within them (radix_sort.cpp's loop_max_tiles). At its share a workgroup
  // fetches no further ticket, so that every ticket fetched is a tile sorted.
  const uint share = (tiles + stride - 1u) / stride;
  uint taken = 1u;
#endif

  ReadUints keys_in = ReadUints(pc.keys[source]);
  ReadUints values_in = ReadUints(pc.values[source]);
  WriteUints keys_out = WriteUints(pc.keys[source ^ 1u]);
  WriteUints values_out = WriteUints(pc.values[source ^ 1u]);
  const bool index_values = (pc.flags & VREN_RADIX_FLAG_INDEX_VALUES) != 0u;
  // Where each of this thread's bins starts among the pass's keys: the digit totals' scan, once
  // for every tile where the workgroup loops over them, else after the ranking (registers that
  // the ranking of pairs needs, at 127 of them: 3.30 ms against 2.93 at 2^26 on an H200).
  uint digit_base[BINS_PER_THREAD];
  if (LOOP_TILES) scan_digit_totals(digit_total, digit_base);

  // 1. Load the keys (and staged as ranked, the values). Later tiles' keys are loaded during the
  //    previous tile's work: after its ranking where it is staged as ranked, with VALUES_APART once
  //    its keys are staged, else during its last part's stores (step 6).
  Key keys[KEYS_PER_THREAD];
  uint values[KEYS_PER_THREAD];
  load_keys(keys_in, tile, count, keys);
  if (!VALUES_AFTER_PUBLISH) load_values(values_in, index_values, tile, count, values);
  clock_step(CLOCK_START);
  for (;;) {  // uniform: per tile
#ifdef VREN_RADIX_SHADER_CLOCKS
    if (thread == 0u) ++s_clocks[VREN_RADIX_CLOCK_STEPS];
#endif
    const uint tile_begin = tile * TILE_SIZE;
    const uint tile_keys = min(TILE_SIZE, count - tile_begin);
#ifndef VREN_RADIX_LOOP_TICKETS
    const uint next = tile + stride;
#endif

    clear_next_words(set, tile);
    rank_clear();  // counters start at zero
    barrier();  // counters zeroed (and every thread has read this tile's ticket)
    clock_step(CLOCK_CLEAR);
#ifdef VREN_RADIX_LOOP_TICKETS
    if (LOOP_TICKETS && thread == 0u)
      ticket = taken < share ? atomicAdd(pc.internal.data[ticket_word], 1u) : tiles;  // tiles: none
#endif

    // 2. Count each subgroup's keys per bin (its own counters: no contention between subgroups).
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
      if (loaded_slot(i) < tile_keys) rank_count(bin_of(keys[i]));
    }
#ifdef VREN_RADIX_LOOP_TICKETS
    if (LOOP_TICKETS && thread == 0u) s_ticket = ticket;
#endif
    barrier();  // the subgroups' counts complete
    clock_step(CLOCK_COUNT);
#ifdef VREN_RADIX_LOOP_TICKETS
    const uint next = LOOP_TICKETS ? s_ticket : tile + stride;
#endif

    // 3. Per bin: the tile's count, published at once so that later tiles rarely wait for it;
    //    each subgroup's start inside the bin; the bin's start in the tile (a scan over the
    //    bins), added to the subgroups' starts. A thread takes whole units of counters.
    const uint first_unit = ordered_thread() * UNITS_PER_THREAD;
    uint thread_tile_sum = 0u;
    uint unit_counts[UNITS_PER_THREAD];
    [[unroll]] for (uint j = 0u; j < UNITS_PER_THREAD; ++j) {
      const uint unit = first_unit + j;
      unit_counts[j] = 0u;
      if (unit < RANK_UNITS) {
        unit_counts[j] = rank_unit_counts(unit);
        [[unroll]] for (uint h = 0u; h < RANK_UNIT_BINS; ++h) {
          const uint bin = unit * RANK_UNIT_BINS + h, count = rank_unit_part(unit_counts[j], h);
          s_lookback_count[bin] = count;
          lookback_publish(lookback_at(set, tile, bin), (tile == 0u ? LOOKBACK_PREFIX : LOOKBACK_AGGREGATE) | count);
          thread_tile_sum += count;
        }
      }
    }
    uint tile_start = workgroup_exclusive_add_lean(thread_tile_sum);
    [[unroll]] for (uint j = 0u; j < UNITS_PER_THREAD; ++j) {
      const uint unit = first_unit + j;
      if (unit < RANK_UNITS) tile_start = rank_place_unit(unit, unit_counts[j], tile_start);
    }
    barrier();  // every subgroup's starts final
    clock_step(CLOCK_PUBLISH);
    // Staged after the ranking, the values now, in flight during the ranking (the store phase's
    // loads are then the keys' alone, and the counts are out first): 2^20 / 2^22 / 2^24 / 2^26
    // pairs in 0.080 / 0.221 / 0.738 / 2.71 ms against 0.084 / 0.234 / 0.776 / 2.83 loaded with the
    // keys (H200, 2026-11-28).
    if (VALUES_AFTER_PUBLISH) load_values(values_in, index_values, tile, count, values);

    // 4. Rank, straight into the key's slot in the tile (radix_tile_rank.glsl). Rounds follow
    //    input order, so the slots are stable. A key's registers are free after its round.
    uint ranks[RANK_WORDS];  // the slots, for staging after the ranking (ranked_slot)
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
      const bool valid = loaded_slot(i) < tile_keys;
      uint bin = bin_of(keys[i]);
      // A dependency on the previous round keeps the compiler from hoisting every round's ballots
      // (and their registers) to the front: 145 -> 118 registers at 384 x 20 on an H200. The OR
      // matcher's barriers order the rounds already (and without the dependency 512 x 26 sorts
      // 2^26 keys in 2.14 ms against 2.17).
      // (Bit 31 of a word of slots is 0: slots stay below 2^15.)
      if (i > 0u) bin ^= rank_matching_or() ? 0u : ranks[(i - 1u) / SLOTS_PER_WORD] >> 31u;
      const uint rank = rank_key(bin, valid);
      if (i % SLOTS_PER_WORD == 0u) ranks[i / SLOTS_PER_WORD] = rank;
      else ranks[i / 2u] |= rank << 16u;
      if (!STAGE_AFTER_RANK && valid) stage(rank, keys[i], values[i]);
      // The next round's leader may be another lane: its atomic must follow this one, which the
      // memory model promises only through a barrier (on an H200 it cost nothing measurable:
      // 3.10 against 3.11 ms at 2^26 in an earlier version of this shader).
      subgroup_barrier_shared();
    }
    clock_step(CLOCK_RANK);
    // Staged as ranked, the keys' and values' registers are free: the next tile's load now.
    if (LOOP_TILES && !STAGE_AFTER_RANK && next < tiles) {
      load_keys(keys_in, next, count, keys);
      load_values(values_in, index_values, next, count, values);
      clock_step(CLOCK_LOAD);
    }

    // 5. Per bin: where the bin starts in the output, from the digit totals' scan and the
    //    look-back's count of the bin in earlier tiles, which the ranking gave time to arrive.
    if (!LOOP_TILES) scan_digit_totals(digit_total, digit_base);
    uint earlier[BINS_PER_THREAD];
    lookback_offsets(set, tile, keys_in, earlier);
    [[unroll]] for (uint j = 0u; j < BINS_PER_THREAD; ++j) {
      const uint bin = first_bin + j;
      if (bin < BINS) s_bin_destination[bin] = digit_base[j] + earlier[j] - s_bin_start[bin];
    }
    barrier();  // the tile in bin order, destinations visible to every thread
    clock_step(CLOCK_LOOKBACK);

    // 6. Out in slot order: consecutive threads store consecutive keys of a bin, each with its
    //    value. With STAGE_PARTS > 1 the tile passes through shared memory in parts (slots
    //    [0, PART_SIZE), then the next PART_SIZE, ...), each staged here from the registers.
    //    VALUES_APART: the whole tile's keys, then its values.
    if (VALUES_APART) {
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
        if (loaded_slot(i) < tile_keys) stage(ranked_slot(ranks, i), keys[i], 0u);
      }
      barrier();  // the keys staged
      clock_step(CLOCK_STAGE);
      // Every key staged: the next tile's keys load during the stores of this one's keys and values.
      if (LOOP_TILES && next < tiles) {
        load_keys(keys_in, next, count, keys);
        clock_step(CLOCK_LOAD);
      }
      // Round r's slot's bin, for its value's destination: four a word (bins stay below 2^8).
      uint slot_bins[STORED_BIN_WORDS];
      [[unroll]] for (uint w = 0u; w < STORED_BIN_WORDS; ++w) slot_bins[w] = 0u;
      [[unroll]] for (uint r = 0u; r < KEYS_PER_THREAD; ++r) {
        const uint slot = r * gl_WorkGroupSize.x + thread;
        if (slot < tile_keys) {
          const Key key = staged_key(slot);
          const uint bin = bin_of(key);
          slot_bins[r / 4u] |= bin << stored_bin_shift(r);
          store_key(keys_out, s_bin_destination[bin] + slot, key);
        }
      }
      barrier();  // the keys read out
      clock_step(CLOCK_STORE);
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
        if (loaded_slot(i) < tile_keys) s_stage[ranked_slot(ranks, i)] = values[i];
      }
      barrier();  // the values staged
      clock_step(CLOCK_STAGE);
      [[unroll]] for (uint r = 0u; r < KEYS_PER_THREAD; ++r) {
        const uint slot = r * gl_WorkGroupSize.x + thread;
        const uint bin = (slot_bins[r / 4u] >> stored_bin_shift(r)) & 0xFFu;
        if (slot < tile_keys) values_out.data[s_bin_destination[bin] + slot] = s_stage[slot];
      }
    }
    const uint STORE_PARTS = VALUES_APART ? 0u : STAGE_PARTS;
    [[unroll]] for (uint part = 0u; part < STORE_PARTS; ++part) {
      const uint part_begin = part * PART_SIZE;
      if (STAGE_PARTS > 1u) {
        if (part > 0u) {
          barrier();  // the previous part read out
          clock_step(CLOCK_STORE);
        }
        [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; ++i) {
          const bool valid = loaded_slot(i) < tile_keys;
          const uint at = ranked_slot(ranks, i) - part_begin;
          if (valid && at < PART_SIZE) stage(at, keys[i], values[i]);
        }
        barrier();  // the part staged
        clock_step(CLOCK_STAGE);
        // Every key staged: the next tile's keys load during this part's stores.
        if (LOOP_TILES && part + 1u == STAGE_PARTS && next < tiles) {
          load_keys(keys_in, next, count, keys);
          clock_step(CLOCK_LOAD);
        }
      }
      [[unroll]] for (uint r = 0u; r < PART_ROUNDS; ++r) {
        const uint slot = part_begin + r * gl_WorkGroupSize.x + thread;
        if (slot < tile_keys) {
          const Key key = staged_key(slot - part_begin);
          const uint destination = s_bin_destination[bin_of(key)] + slot;
          store_key(keys_out, destination, key);
          if (WITH_VALUES) values_out.data[destination] = staged_value(slot - part_begin);
        }
      }
    }
    clock_step(CLOCK_STORE);
    if (!LOOP_TILES || next >= tiles) {  // uniform
      clock_flush();
      return;
    }
    tile = next;
#ifdef VREN_RADIX_LOOP_TICKETS
    ++taken;
#endif
    barrier();  // this tile's shared memory read out before the next one's clears it
    clock_step(CLOCK_NEXT);
  }
}
