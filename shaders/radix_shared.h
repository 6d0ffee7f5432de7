// Constants and push-constant layout shared by the C++ record path and the GLSL passes.
// Compiled by both: C++ sees plain integers, GLSL sees buffer references.
#ifndef VREN_RADIX_SHARED_H
#define VREN_RADIX_SHARED_H

// Digit width: 4 bits (16 bins) by default, 8 bits (256 bins) as a tuning option.
#define VREN_RADIX_DEFAULT_DIGIT_BITS 4
#define VREN_RADIX_MAX_DIGIT_BITS 8
#define VREN_RADIX_MAX_BINS 256
#define VREN_RADIX_MAX_PASSES 16  // 64-bit keys in 4-bit digits

// Specialization-constant IDs.
#define VREN_RADIX_SPEC_WORKGROUP_SIZE 0
#define VREN_RADIX_SPEC_KEYS_PER_THREAD 1
#define VREN_RADIX_SPEC_MAX_SUBGROUPS 2
#define VREN_RADIX_SPEC_VALUE_SLOTS 3
#define VREN_RADIX_SPEC_COUNT_TILES 4  // tiles counted by one count workgroup
#define VREN_RADIX_SPEC_KEY_MAP 5      // 32-bit keys: apply the push constants' order map
#define VREN_RADIX_SPEC_DIGIT_BITS 6   // 4 or 8
#define VREN_RADIX_SPEC_POLL_ATOMIC 8  // look-back: poll with atomic loads (else volatile loads); 7 unused
#define VREN_RADIX_SPEC_POLL_BUDGET 9  // look-back: TuningConfig::lookback_poll_budget
#define VREN_RADIX_SPEC_RANK_PACKED 10  // radix_tile_rank.glsl: two bins' counters per word
#define VREN_RADIX_SPEC_STAGE_PARTS 11  // radix_onesweep.comp: the tile staged in this many parts
#define VREN_RADIX_SPEC_LOOP_TILES 12  // radix_onesweep.comp: workgroups loop over the tiles
#define VREN_RADIX_SPEC_VALUES_APART 13  // radix_onesweep.comp: the whole tile's keys staged, then its values
#define VREN_RADIX_SPEC_COUNTERS_IN_STAGE 14  // radix_onesweep.comp: staged after the ranking, the stage holds its counters

// The internal buffer: a state block of VREN_RADIX_STATE_WORDS u32, then the per-tile digit
// counts, tile-major: counts[tile * bins + bin], then the same summed over each count
// workgroup's COUNT_TILES tiles, digit-major: group_sums[bin * num_groups + group].
#define VREN_RADIX_STATE_COUNT 0       // element count of this sort (GPU-side for cmdSortIndirect)
#define VREN_RADIX_STATE_TILES 1       // tiles for that count
#define VREN_RADIX_STATE_TILE_GRID 2   // VkDispatchIndirectCommand {x, y, 1} covering the tiles
#define VREN_RADIX_STATE_COUNT_GRID 5  // the same covering the count workgroups
#define VREN_RADIX_STATE_PARITY 8      // [pass]: which ping-pong buffer holds that pass's input
// Profiling builds (VREN_RADIX_SHADER_CLOCKS): [step] the cycles of each of radix_onesweep.comp's
// steps in units of 16, summed over the sort's tiles (thread 0's clock), then the tile count,
// then how many times a tile's look-back ran out of polls and counted a missing tile's keys itself.
#define VREN_RADIX_STATE_CLOCKS 32
#define VREN_RADIX_CLOCK_STEPS 10
#define VREN_RADIX_CLOCK_TILES VREN_RADIX_CLOCK_STEPS
#define VREN_RADIX_CLOCK_MISSING (VREN_RADIX_CLOCK_STEPS + 1)
#define VREN_RADIX_CLOCK_WORDS (VREN_RADIX_CLOCK_STEPS + 2)
// The steps, in the order a tile takes them (radix_onesweep.comp's main says where each ends).
#define VREN_RADIX_CLOCK_START 0     // the workgroup's start: the state words, the first loads
#define VREN_RADIX_CLOCK_CLEAR 1     // counters zeroed
#define VREN_RADIX_CLOCK_COUNT 2     // the loads awaited, keys counted per bin
#define VREN_RADIX_CLOCK_PUBLISH 3   // counts published, subgroups placed
#define VREN_RADIX_CLOCK_RANK 4      // keys ranked
#define VREN_RADIX_CLOCK_LOOKBACK 5  // the look-back, the bins' destinations
#define VREN_RADIX_CLOCK_STAGE 6     // parts staged
#define VREN_RADIX_CLOCK_LOAD 7      // the next tile's loads issued
#define VREN_RADIX_CLOCK_STORE 8     // stores
#define VREN_RADIX_CLOCK_NEXT 9      // between tiles
// Look-back passes whose looping workgroups take their tiles by ticket: [pass] the next tile.
#define VREN_RADIX_STATE_TICKETS 48
#define VREN_RADIX_STATE_TOTALS 64     // [bin]: digit totals of the pass being sorted
#define VREN_RADIX_STATE_WORDS (VREN_RADIX_STATE_TOTALS + VREN_RADIX_MAX_BINS)
// Sorts with the look-back (8-bit digits) use the words after the state block otherwise:
// every pass's digit totals, [pass * 256 + bin], then the words each tile publishes per bin, in
// two sets (pass parity), [tile][set][bin].
#define VREN_RADIX_LOOKBACK_PASSES 8  // 64-bit keys in 8-bit digits
#define VREN_RADIX_LOOKBACK_TOTALS VREN_RADIX_STATE_WORDS
#define VREN_RADIX_LOOKBACK_WORDS (VREN_RADIX_LOOKBACK_TOTALS + VREN_RADIX_LOOKBACK_PASSES * VREN_RADIX_MAX_BINS)

// PassConstants.flags
#define VREN_RADIX_FLAG_INDEX_VALUES 8u   // this pass takes each key's input index as its value
#define VREN_RADIX_FLAG_NEVER_SKIP 16u    // scatter even if every key has the same digit
#define VREN_RADIX_FLAG_INDIRECT 32u      // setup reads the count from count_address
#define VREN_RADIX_FLAG_VALUES 64u        // values move with the keys
#define VREN_RADIX_FLAG_DESCENDING 128u   // histogram: every pass's bins reversed
#define VREN_RADIX_FLAG_LOOKBACK 256u     // setup: zero every pass's digit totals
#define VREN_RADIX_FLAG_SEGMENTED 512u    // one-dispatch sort: one workgroup per segment (radix_segments.glsl)
#define VREN_RADIX_FLAG_THREAD_SEGMENTS 1024u  // short-segment sort: one thread per segment
#define VREN_RADIX_THREAD_SEGMENT_MAX 16  // the longest segment a thread sorts alone
#define VREN_RADIX_FLAG_REDUCE 2048u      // segment classification: the second step

// Segmented sorts (radix_segments.glsl): words of the segment scratch block, which starts the
// internal buffer of cmdSortSegmented and cmdTopK.
#define VREN_RADIX_SEGMENTS_COUNT 0    // the element count: the last offset, clamped
// VkDispatchIndirectCommand grids written by radix_segment_classify.comp: the multi-pass path's
// striding passes, then each one-dispatch way's.
#define VREN_RADIX_SEGMENTS_GRID 4
#define VREN_RADIX_SEGMENTS_SWEEP_GRID 8
#define VREN_RADIX_SEGMENTS_THREAD_GRID 12
#define VREN_RADIX_SEGMENTS_SMALL_GRID 16
#define VREN_RADIX_SEGMENTS_BLOCK_GRID 20
// The ways some segment takes (VREN_RADIX_WAY_* bits).
#define VREN_RADIX_SEGMENTS_WAYS 24
#define VREN_RADIX_WAY_THREAD 1u  // a thread each
#define VREN_RADIX_WAY_SMALL 2u   // a subgroup each
#define VREN_RADIX_WAY_BLOCK 4u   // a workgroup each
#define VREN_RADIX_WAY_LONG 8u    // longer: the sweep or the two sorts
// Each classifying workgroup's longest segment and ways taken (2 words each), at most MAX_PARTS.
#define VREN_RADIX_SEGMENTS_PARTS 32
#define VREN_RADIX_SEGMENTS_MAX_PARTS 1024
#define VREN_RADIX_SEGMENTS_WORDS (VREN_RADIX_SEGMENTS_PARTS + 2 * VREN_RADIX_SEGMENTS_MAX_PARTS)  // 16-byte multiple
// After the block, the multi-pass path's halves (n = the sort's count, at least 1): two of the
// keys (n * key_words words each, from VREN_RADIX_SEGMENTS_WORDS), then two of the values or
// indices (n words each), each rounded up to 16 bytes.
#define VREN_RADIX_SWEEP_SPAN(words) (((words) + 3u) / 4u * 4u)
#define VREN_RADIX_SWEEP_VALUES(n, key_words) (VREN_RADIX_SEGMENTS_WORDS + 2u * VREN_RADIX_SWEEP_SPAN((n) * (key_words)))

// Top-k of a whole buffer by radix select (radix_topk.comp): pc.pass names the phase, the
// internal words hold, in order: each level's digit histogram, the state entering each level
// (prefix, keys below it), the candidate count, the grouping word, two indirect grids (the
// settle's or collect's, then the rank's), the settle phase's count of workgroups done, the
// candidates' keys and input indices, and each workgroup's histogram of the last level. When
// level 1 gathers, the histograms of levels 1 and 2 (neither counted then) hold each level-0
// bin's next candidate slot and first slot.
#define VREN_RADIX_TOPK_MAX_K 4096
// Candidates at most: every key in the first level's bins up to the k-th key's, when they fit
// (level 1 then gathers them and the later levels are skipped), else exactly k.
#define VREN_RADIX_TOPK_MAX_CANDIDATES 16384
#define VREN_RADIX_TOPK_MAX_GROUPS 512
#define VREN_RADIX_TOPK_DIGIT_BITS 11
#define VREN_RADIX_TOPK_BINS 2048       // 2^VREN_RADIX_TOPK_DIGIT_BITS
#define VREN_RADIX_TOPK_LEVELS 3        // 11-bit digits of a 32-bit key
#define VREN_RADIX_TOPK_PHASE_ZERO 0     // 1 workgroup: zero the histograms and the candidate count
#define VREN_RADIX_TOPK_PHASE_LEVEL 1    // + level: count the next digit of the keys still in play
#define VREN_RADIX_TOPK_PHASE_COLLECT 4  // the k-th key found: gather the k candidates
#define VREN_RADIX_TOPK_PHASE_RANK 5     // rank the candidates among themselves, write them out
#define VREN_RADIX_TOPK_PHASE_SEGMENTS 6  // per segment: one workgroup does every phase (k <= SEGMENT_MAX_K)
// Three levels, where the tuning asks (TuningConfig::select_settle_max_count): the last level and
// the collect in one dispatch, its workgroups (at most pc.wait_groups, all running at once where
// the device has room) waiting a bounded time for each other's counts; a workgroup whose wait
// runs out counts every key itself.
#define VREN_RADIX_TOPK_PHASE_SETTLE 7
#define VREN_RADIX_TOPK_SEGMENT_MAX_K 1024
// Threads sharing each candidate's comparisons in the rank phase, which reads the candidates
// from shared memory. H200, k = 2048 of 2^20, candidates read from global memory: one thread per
// candidate 0.208 ms in all, 16 threads 0.084 ms.
#define VREN_RADIX_TOPK_RANK_SPLIT 16
// Keys per thread loaded together: a round of the level phases, and of the collect phase (one
// scan and one atomic a round, consecutive keys). H200, k = 2048 of 2^20 / 2^24, one session,
// before the rank compared grouped candidates: 16 keys a round 0.034 / 0.166 ms, 8 keys 0.036 /
// 0.173, 8 in the collect and one key at a time in the levels 0.037 / 0.248.
#define VREN_RADIX_TOPK_ROUND_KEYS 16
#define VREN_RADIX_TOPK_HISTOGRAMS 0
#define VREN_RADIX_TOPK_STATE (VREN_RADIX_TOPK_HISTOGRAMS + VREN_RADIX_TOPK_LEVELS * VREN_RADIX_TOPK_BINS)
#define VREN_RADIX_TOPK_CANDIDATES (VREN_RADIX_TOPK_STATE + 2 * VREN_RADIX_TOPK_LEVELS)
// 0: the candidates in any order; else 1 + the last level-0 bin gathered, the candidates grouped
// by level-0 bin in bin order, each bin's first slot in VREN_RADIX_TOPK_BIN_STARTS.
#define VREN_RADIX_TOPK_GROUPED (VREN_RADIX_TOPK_CANDIDATES + 1)
#define VREN_RADIX_TOPK_SKIPPABLE_GRID (VREN_RADIX_TOPK_CANDIDATES + 2)  // VkDispatchIndirectCommand
#define VREN_RADIX_TOPK_RANK_GRID (VREN_RADIX_TOPK_SKIPPABLE_GRID + 3)
#define VREN_RADIX_TOPK_SETTLED (VREN_RADIX_TOPK_RANK_GRID + 3)  // the settle phase's workgroups that counted
#define VREN_RADIX_TOPK_CANDIDATE_KEYS (VREN_RADIX_TOPK_CANDIDATES + 10)  // 16-byte aligned
#define VREN_RADIX_TOPK_CANDIDATE_INDICES (VREN_RADIX_TOPK_CANDIDATE_KEYS + VREN_RADIX_TOPK_MAX_CANDIDATES)
#define VREN_RADIX_TOPK_GROUP_HISTOGRAMS (VREN_RADIX_TOPK_CANDIDATE_INDICES + VREN_RADIX_TOPK_MAX_CANDIDATES)
#define VREN_RADIX_TOPK_BIN_CURSORS (VREN_RADIX_TOPK_HISTOGRAMS + VREN_RADIX_TOPK_BINS)
#define VREN_RADIX_TOPK_BIN_STARTS (VREN_RADIX_TOPK_HISTOGRAMS + 2 * VREN_RADIX_TOPK_BINS)
#define VREN_RADIX_TOPK_WORDS (VREN_RADIX_TOPK_GROUP_HISTOGRAMS + VREN_RADIX_TOPK_MAX_GROUPS * VREN_RADIX_TOPK_BINS)

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace vren::radix::detail {
struct PassConstants {
  uint64_t keys[2];       // the caller's keys, then keys_temp
  uint64_t values[2];     // likewise for values (0 without values)
  uint64_t internal;
  uint64_t count_address;  // cmdSortIndirect: the u32 count
  uint32_t count;          // the count, or for cmdSortIndirect the largest allowed
  uint32_t pass;           // setup and histogram: the pass count
  uint32_t shift;          // histogram: begin_bit
  uint32_t digit_mask;
  uint32_t flags;
  uint32_t max_groups_x;
  uint32_t result_parity;  // copy pass: the buffer the result must end in
  // Order-preserving map of signed and float keys to unsigned, and descending order, as XORs:
  // key ^= (negative ? negative_flip : 0) | key_flip; bin = digit ^ bin_flip.
  uint32_t key_flip;
  uint32_t negative_flip;
  uint32_t bin_flip;
  uint32_t end_bit;        // histogram: the sort's end_bit
  // Segmented sorts and top-k (radix_segments.glsl): the offsets (0: one segment of count
  // elements), how many segments (with VREN_RADIX_FLAG_INDIRECT: at most; the GPU-side number
  // is at count_address), and k (0: a whole segment's results, at its own offsets).
  uint32_t segment_count;
  uint64_t segments;
  uint32_t k;
  // Segmented sorts without a promised length: the one-dispatch ways take the segments of
  // [min_length, max_length] elements only (max_length 0: every segment).
  uint32_t min_length;
  uint32_t max_length;
  uint32_t wait_groups;  // top-k: the most workgroups of the settle phase (VREN_RADIX_TOPK_PHASE_SETTLE)
};
static_assert(VREN_RADIX_STATE_PARITY + VREN_RADIX_MAX_PASSES + 1 <= VREN_RADIX_STATE_CLOCKS,
              "the parity of every pass and of the result fit before the clocks");
static_assert(VREN_RADIX_STATE_CLOCKS + VREN_RADIX_CLOCK_WORDS <= VREN_RADIX_STATE_TICKETS,
              "the clocks fit before the tickets");
static_assert(VREN_RADIX_STATE_TICKETS + VREN_RADIX_LOOKBACK_PASSES <= VREN_RADIX_STATE_TOTALS,
              "the tickets fit before the totals");
static_assert(sizeof(PassConstants) == 120, "PassConstants must match the GLSL push-constant block");
static_assert(offsetof(PassConstants, segments) == 96, "PassConstants must match the GLSL push-constant block");
static_assert(offsetof(PassConstants, count) == 48, "PassConstants must match the GLSL push-constant block");
}  // namespace vren::radix::detail
#else
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Uints { uint data[]; };
// A pass reads one ping-pong buffer and writes the other: views that say so let the compiler
// use read-only loads.
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer ReadUints { uint data[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer WriteUints { uint data[]; };
// 16 bytes at a time; keys and values buffers are 16-byte aligned.
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer ReadUvec4s { uvec4 data[]; };

layout(push_constant, std430) uniform PassConstants {
  Uints keys[2];
  Uints values[2];
  Uints internal;
  Uints count_address;
  uint count;
  uint pass;
  uint shift;
  uint digit_mask;
  uint flags;
  uint max_groups_x;
  uint result_parity;
  uint key_flip;
  uint negative_flip;
  uint bin_flip;
  uint end_bit;
  uint segment_count;
  ReadUints segments;
  uint k;
  uint min_length;
  uint max_length;
  uint wait_groups;
} pc;
#endif

#endif
