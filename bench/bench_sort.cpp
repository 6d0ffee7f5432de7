// Benchmarks vren_radix against CPU baselines (std::sort, std::stable_sort and an 8-bit LSD radix
// sort) on u32 keys and on u32 key/value pairs.
//
// GPU times come from Vulkan timestamps around each sort (timeSorts, sort_timing.h); the input is
// restored on the device between sorts, outside the timed region. Every case is verified once
// before any of its times is reported.
//
// pct_of_ceiling compares a sort with the time the device's copy bandwidth (the faster of
// vkCmdCopyBuffer and a compute-shader copy) needs to move the bytes a count-then-scatter radix
// sort must move: per key and pass, keys move 12 bytes (count reads 4; scatter reads 4 and
// writes 4), pairs 20 (count 4, scatter 8 + 8), for the sorter's passes (half as many with 8-bit
// digits, so 4- and 8-bit figures have different ceilings). An engine that skips passes can
// exceed 100%.
//
// Flags, besides Google Benchmark's (--benchmark_filter, --benchmark_repetitions, ...):
//   --max-log2=N      largest power-of-two count: default $VREN_RADIX_BENCH_MAX_LOG2, else 22 on a
//                     CPU device and 28 on a GPU (less where device memory or the engine's
//                     max_count is short)
//   --cpu-max-log2=N  largest count for the CPU baselines: default $VREN_RADIX_BENCH_CPU_MAX_LOG2,
//                     else the smaller of 24 and the --max-log2 value
//   --device=N        the Vulkan device, numbered as by `vren-radix info`
//   --tuning=WxK[xD]  the sorter's tuning: W threads x K keys per thread, D-bit digits (4 or 8)
//   --lookback=M[xK[xW]] look-back sorts up to M keys (0: none), K keys per thread, W threads
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <volk.h>

#include "args.h"
#include "bench_common.h"
#include "bench_context.h"
#include "bench_pipeline.h"
#include "checked_sorts.h"
#include "cpu_radix.h"
#include "gpu_timing.h"
#include "sort_timing.h"
#include "spirv/bench_copy.h"
#include "vren_radix/context.h"
#include "warmup.h"

namespace {

using vren::radix::Context;
using namespace vren::radix::bench;

constexpr int kGpuDefaultMaxLog2 = 28;
constexpr int kCpuDeviceDefaultMaxLog2 = 22;
constexpr int kCpuBaselineDefaultMaxLog2 = 24;
constexpr double kKeysBytesPerPass = 12;
constexpr double kPairsBytesPerPass = 20;
constexpr uint64_t kCopyBytes = uint64_t{256} << 20;
constexpr uint64_t kCpuVariantWords = uint64_t{1} << 22;
constexpr uint64_t kMaxCpuVariants = 64;

std::string benchName(const char* impl, const Case& c) {
  return std::string(impl) + (c.pairs ? "/pairs/" : "/keys/") + name(c.dist) + "/" + std::to_string(c.count);
}

struct CaseState {
  bool verified = false;
  uint32_t passes = 0;  // radix passes the engine recorded
};

// The input of the case being run, its std::sort output and the values 0, 1, 2, ... (which show
// stability). Cases of the same distribution and count run one after another and share it.
struct Input {
  Dist dist = Dist::kUniform;
  uint32_t count = 0;
  std::vector<uint32_t> keys;
  std::vector<uint32_t> sorted_keys;
  std::vector<uint32_t> indices;
  std::vector<std::vector<uint32_t>> variants;  // variants 1, 2, ... for the CPU baselines
};

Input& input(Dist dist, uint32_t count) {
  static Input cached;
  if (cached.keys.empty() || cached.dist != dist || cached.count != count) {
    cached = Input{};  // frees the previous case's arrays first
    cached.dist = dist;
    cached.count = count;
    cached.keys = makeKeys(dist, count);
  }
  return cached;
}

const std::vector<uint32_t>& sortedKeys(Input& in) {
  if (in.sorted_keys.size() != in.keys.size()) in.sorted_keys = sortedCopy(in.keys);
  return in.sorted_keys;
}

const std::vector<uint32_t>& indices(Input& in) {
  if (in.indices.size() != in.keys.size()) {
    in.indices.resize(in.keys.size());
    std::iota(in.indices.begin(), in.indices.end(), 0u);
  }
  return in.indices;
}

// The input for one iteration of a CPU baseline. A CPU's branch predictor learns a small input
// that is sorted over and over (std::sort of 2^10 keys then runs about ten times faster), so
// iterations cycle through up to 64 draws of the same distribution, variant 0 included.
const std::vector<uint32_t>& cpuInput(Input& in, uint64_t iteration) {
  const uint64_t variants = std::clamp<uint64_t>(kCpuVariantWords / in.count, 1, kMaxCpuVariants);
  while (in.variants.size() + 1 < variants)
    in.variants.push_back(makeKeys(in.dist, in.count, static_cast<uint32_t>(in.variants.size() + 1)));
  const uint64_t v = iteration % variants;
  return v == 0 ? in.keys : in.variants[v - 1];
}

std::string verify(Input& in, bool pairs, std::span<const uint32_t> keys, std::span<const uint32_t> values) {
  return pairs ? checkStablePairs(in.keys, keys.data(), values.data(), keys.size())
               : compareKeys(sortedKeys(in), keys.data(), keys.size());
}

double millisecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void finish(benchmark::State& state, uint32_t count) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * count);
}

void benchVren(benchmark::State& state, Context& ctx, double copy_gbps, const Case& c, CaseState& cs) {
  Input& in = input(c.dist, c.count);
  const vren::radix::SortOptions options{.begin_bit = 0, .end_bit = endBit(c.dist)};
  const std::vector<uint32_t> no_values;
  const std::vector<uint32_t>& values_in = c.pairs ? indices(in) : no_values;
  std::string error;
  if (!cs.verified) {
    std::vector<uint32_t> keys = in.keys, values = values_in;
    vren::radix::test::CheckedStats stats;
    if (!vren::radix::test::checkedSort(ctx, keys, values, options, &stats, &error))
      return state.SkipWithError(error.c_str());
    if (!stats.canaries_intact) return state.SkipWithError("A word past the end of a device buffer was overwritten.");
    if (const std::string why = verify(in, c.pairs, keys, values); !why.empty()) return state.SkipWithError(why.c_str());
    cs.passes = stats.passes;
  }

  // One batch per run (timeSorts warms the GPU up first); its first sort is dropped as well.
  std::vector<uint32_t> keys = in.keys, values = values_in;
  std::vector<double> ms;
  if (!timeSorts(ctx, keys, values, options, static_cast<int>(state.max_iterations) + 1, &ms, &error))
    return state.SkipWithError(error.c_str());
  ms.erase(ms.begin());
  if (!cs.verified) {
    if (const std::string why = verify(in, c.pairs, keys, values); !why.empty()) return state.SkipWithError(why.c_str());
    cs.verified = true;
  }

  double total_ms = 0;
  size_t i = 0;
  for (auto _ : state) {
    state.SetIterationTime(ms[i] * 1e-3);
    total_ms += ms[i];
    i = (i + 1) % ms.size();
  }
  finish(state, c.count);
  const double passes = cs.passes;  // the sorter's: 4- or 8-bit digits
  const double bytes = passes * c.count * (c.pairs ? kPairsBytesPerPass : kKeysBytesPerPass);
  const double mean_s = total_ms * 1e-3 / static_cast<double>(state.iterations());
  if (copy_gbps > 0 && mean_s > 0) state.counters["pct_of_ceiling"] = bytes / (copy_gbps * 1e9) / mean_s * 100;
  state.counters["passes"] = cs.passes;
}

// The cost of each sort option against the plain sort of the same uniform keys. The result is
// checked once against a CPU stable sort in the option's order.
struct OptionCase {
  const char* name;
  vren::radix::SortOptions options;
  bool pairs;
  bool expected = false;  // a GPU-side count that SortOptions::expected_count announces
};

const OptionCase kOptionCases[] = {
    {"plain", {}, false},
    {"pairs", {}, true},
    {"descending", {.descending = true}, false},
    {"i32", {.key_type = vren::radix::KeyType::kI32}, false},
    {"f32", {.key_type = vren::radix::KeyType::kF32}, false},
    {"argsort", {.argsort = true}, true},
    {"gpu_count", {.gpu_count = true}, false},
    {"gpu_count_expected", {.gpu_count = true}, false, true},
    {"gpu_count_expected_pairs", {.gpu_count = true}, true, true},
    {"u64", {.key_type = vren::radix::KeyType::kU64, .end_bit = 64}, false},
    {"u64_pairs", {.key_type = vren::radix::KeyType::kU64, .end_bit = 64}, true},
};

// The option's order as an unsigned integer per key (64 bits wide for u64 keys).
uint64_t orderKey(const std::vector<uint32_t>& words, size_t i, const vren::radix::SortOptions& o) {
  using vren::radix::KeyType;
  uint64_t k = o.key_type == KeyType::kU64 ? words[2 * i] | (uint64_t{words[2 * i + 1]} << 32) : words[i];
  if (o.key_type == KeyType::kI32) k ^= 0x80000000u;
  if (o.key_type == KeyType::kF32) k ^= (k >> 31) ? 0xFFFFFFFFu : 0x80000000u;
  return o.descending ? ~k : k;
}

void benchOption(benchmark::State& state, Context& ctx, const OptionCase& oc, uint32_t count, CaseState& cs) {
  vren::radix::SortOptions options = oc.options;
  options.gpu_count_value = count;
  if (oc.expected) options.expected_count = count;
  const size_t words_per_key = options.key_type == vren::radix::KeyType::kU64 ? 2 : 1;
  const std::vector<uint32_t> input = makeKeys(Dist::kUniform, count * words_per_key, 7);
  std::vector<uint32_t> values_in;
  if (oc.pairs) {
    values_in.resize(count);
    std::iota(values_in.begin(), values_in.end(), 0u);
  }
  std::string error;
  std::vector<uint32_t> keys = input, values = values_in;
  std::vector<double> ms;
  if (!timeSorts(ctx, keys, values, options, static_cast<int>(state.max_iterations) + 1, &ms, &error))
    return state.SkipWithError(error.c_str());
  ms.erase(ms.begin());
  if (!cs.verified) {
    std::vector<uint32_t> order(count);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return orderKey(input, a, options) < orderKey(input, b, options); });
    for (uint32_t i = 0; i < count; ++i) {
      for (size_t w = 0; w < words_per_key; ++w)
        if (keys[i * words_per_key + w] != input[order[i] * words_per_key + w])
          return state.SkipWithError("The sorted keys differ from std::stable_sort's.");
      if (oc.pairs && values[i] != order[i]) return state.SkipWithError("The values are not the stable permutation.");
    }
    cs.verified = true;
  }
  size_t i = 0;
  for (auto _ : state) {
    state.SetIterationTime(ms[i] * 1e-3);
    i = (i + 1) % ms.size();
  }
  finish(state, count);
}

void benchStdSort(benchmark::State& state, const Case& c) {
  Input& in = input(c.dist, c.count);
  std::vector<uint32_t> keys(c.count);
  uint64_t iteration = 0;
  for (auto _ : state) {
    const std::vector<uint32_t>& source = cpuInput(in, iteration++);
    std::copy(source.begin(), source.end(), keys.begin());
    const auto t0 = std::chrono::steady_clock::now();
    std::sort(keys.begin(), keys.end());
    benchmark::DoNotOptimize(keys.data());
    state.SetIterationTime(millisecondsSince(t0) * 1e-3);
  }
  finish(state, c.count);
}

// Pairs sorted as one array of structs, zipped outside the timed region: the fastest way to
// hand key/value pairs to std::stable_sort.
void benchStdStableSort(benchmark::State& state, const Case& c) {
  struct Pair {
    uint32_t key, value;
  };
  Input& in = input(c.dist, c.count);
  std::vector<Pair> pairs(c.count);
  uint64_t iteration = 0;
  for (auto _ : state) {
    const std::vector<uint32_t>& source = cpuInput(in, iteration++);
    for (uint32_t i = 0; i < c.count; ++i) pairs[i] = {source[i], i};
    const auto t0 = std::chrono::steady_clock::now();
    std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.key < b.key; });
    benchmark::DoNotOptimize(pairs.data());
    state.SetIterationTime(millisecondsSince(t0) * 1e-3);
  }
  finish(state, c.count);
}

void benchCpuRadix(benchmark::State& state, const Case& c, CaseState& cs) {
  Input& in = input(c.dist, c.count);
  std::vector<uint32_t> keys(c.count), keys_temp(c.count), values, values_temp;
  if (c.pairs) {
    values.resize(c.count);
    values_temp.resize(c.count);
  }
  auto sortOnce = [&](uint64_t iteration) {
    const std::vector<uint32_t>& source = cpuInput(in, iteration);
    std::copy(source.begin(), source.end(), keys.begin());
    if (c.pairs) std::iota(values.begin(), values.end(), 0u);
    const auto t0 = std::chrono::steady_clock::now();
    const int passes = c.pairs ? cpuRadixSortPairs(keys, values, keys_temp, values_temp) : cpuRadixSort(keys, keys_temp);
    benchmark::DoNotOptimize(keys.data());
    return std::make_pair(millisecondsSince(t0), passes);
  };
  if (!cs.verified) {
    cs.passes = static_cast<uint32_t>(sortOnce(0).second);
    if (const std::string why = verify(in, c.pairs, keys, values); !why.empty()) return state.SkipWithError(why.c_str());
    cs.verified = true;
  }
  uint64_t iteration = 0;
  for (auto _ : state) state.SetIterationTime(sortOnce(iteration++).first * 1e-3);
  finish(state, c.count);
  state.counters["passes"] = cs.passes;
}

// The CPU radix sort against std::sort and std::stable_sort on awkward sizes and key sets.
bool checkCpuRadix(std::string* error) {
  SplitMix64 rng{20261122};
  const uint32_t sizes[] = {0, 1, 2, 3, 255, 256, 257, 1000, 4103, 65536, 100003};
  for (const uint32_t n : sizes) {
    for (int kind = 0; kind < 7; ++kind) {
      std::vector<uint32_t> keys(n);
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t r = rng.next();
        const uint32_t pick[] = {r, r & rng.next(), r & 0xFF, r & 0xF, 7, n - i, r << 24};
        keys[i] = pick[kind];
      }
      std::vector<uint32_t> sorted = keys, temp(n), values(n), values_temp(n), sorted_keys = keys;
      cpuRadixSort(sorted, temp);
      std::sort(sorted_keys.begin(), sorted_keys.end());
      std::string why = compareKeys(sorted_keys, sorted.data(), n);
      if (why.empty()) {
        std::vector<uint32_t> pair_keys = keys;
        std::iota(values.begin(), values.end(), 0u);
        cpuRadixSortPairs(pair_keys, values, temp, values_temp);
        why = checkStablePairs(keys, pair_keys.data(), values.data(), n);
      }
      if (!why.empty()) {
        *error = "The CPU radix sort failed on " + std::to_string(n) + " keys of kind " + std::to_string(kind) + ": " + why;
        return false;
      }
    }
  }
  return true;
}

// GPU sorts per run: enough keys that the batch dwarfs its fixed costs, few enough that a CPU
// device stays quick.
int64_t sortsPerRun(uint32_t count, bool cpu_device) {
  const uint64_t target_keys = cpu_device ? uint64_t{1} << 21 : uint64_t{1} << 28;
  return static_cast<int64_t>(std::clamp<uint64_t>(target_keys / count, 4, 64));
}

struct Flags {
  int max_log2 = 0;  // 0: chosen from the device
  int cpu_max_log2 = 0;
  int device = -1;
  bool tuned = false;
  vren::radix::TuningConfig tuning{};
  bool lookback_set = false;  // --lookback
  uint32_t lookback_max_count = 0, lookback_keys_per_thread = 0, lookback_workgroup_size = 0;
  bool large_tile_set = false;  // --large-tile
  uint32_t large_tile_min_count = 0, large_tile_keys_per_thread = 0, large_tile_workgroup_size = 0;
  bool large_pairs_set = false;  // --large-pairs-tile
  uint32_t large_pairs_keys_per_thread = 0, large_pairs_workgroup_size = 0;
  int large_tile_loop = -1, large_pairs_loop = -1;  // --large-tile-loop, --large-pairs-loop; -1: the tuning's
  uint32_t large_tile_slots = 0;                     // --large-tile-slots; 0: the tuning's
  int values_apart = -1;                             // --values-apart; -1: the tuning's
  int counters_in_stage = -1;                        // --counters-in-stage; -1: the tuning's
  uint32_t large_tile_per_unit = 0, large_pairs_per_unit = 0;  // --large-tile-per-unit, --large-pairs-per-unit
};

// COUNT[xKEYS_PER_THREAD[xTHREADS]] of --lookback and --large-tile, or with `count` null
// KEYS_PER_THREAD[xTHREADS] of --large-pairs-tile; false if the value is not that.
bool parseTileFlag(const std::string& value, uint32_t* count, uint32_t* keys_per_thread, uint32_t* threads) {
  const std::vector<std::string> texts = vren::radix::cli::splitOn(value, 'x');
  uint32_t* fields[] = {count, keys_per_thread, threads};
  const uint64_t limits[] = {0xFFFFFFFFu, 64, 1024};  // keys per thread and threads start at 1
  const size_t first = count ? 0 : 1;
  if (texts.size() > 3 - first) return false;
  uint64_t parts[3] = {};
  for (size_t i = 0; i < texts.size(); ++i) {
    const size_t field = first + i;
    if (!vren::radix::cli::parseUint(texts[i], limits[field], &parts[field]) || (field > 0 && parts[field] == 0))
      return false;
  }
  for (size_t i = 0; i < texts.size(); ++i) *fields[first + i] = static_cast<uint32_t>(parts[first + i]);
  return true;
}

bool parseLog2(const std::string& text, int* out) {
  if (text.empty() || text.size() > 2 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::stoi(text);
  return *out >= kMinLog2 && *out <= kMaxLog2;
}

// Takes our flags out of argv, leaving Google Benchmark's.
bool parseFlags(int* argc, char** argv, Flags* flags, std::string* error) {
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const std::string key = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (key == "--max-log2" || key == "--cpu-max-log2") {
      if (!parseLog2(value, key == "--max-log2" ? &flags->max_log2 : &flags->cpu_max_log2)) {
        *error = key + " takes the log2 of a count, from " + std::to_string(kMinLog2) + " to " +
                 std::to_string(kMaxLog2) + ", as in " + key + "=20.";
        return false;
      }
    } else if (key == "--device") {
      if (value.empty() || value.size() > 4 || value.find_first_not_of("0123456789") != std::string::npos) {
        *error = "--device takes a device number from `vren-radix info`, as in --device=0.";
        return false;
      }
      flags->device = std::stoi(value);
    } else if (key == "--tuning") {
      if (!vren::radix::cli::parseTuning(value, &flags->tuning, error)) return false;
      flags->tuned = true;
    } else if (key == "--lookback") {
      if (!parseTileFlag(value, &flags->lookback_max_count, &flags->lookback_keys_per_thread,
                         &flags->lookback_workgroup_size)) {
        *error = "--lookback takes MAX_COUNT[xKEYS_PER_THREAD[xTHREADS]], as in --lookback=4294967295x16x256.";
        return false;
      }
      flags->lookback_set = flags->tuned = true;
    } else if (key == "--large-tile") {
      if (!parseTileFlag(value, &flags->large_tile_min_count, &flags->large_tile_keys_per_thread,
                         &flags->large_tile_workgroup_size)) {
        *error = "--large-tile takes MIN_COUNT[xKEYS_PER_THREAD[xTHREADS]], as in --large-tile=2097152x10x768.";
        return false;
      }
      flags->large_tile_set = true;
    } else if (key == "--large-pairs-tile") {
      if (!parseTileFlag(value, nullptr, &flags->large_pairs_keys_per_thread, &flags->large_pairs_workgroup_size)) {
        *error = "--large-pairs-tile takes KEYS_PER_THREAD[xTHREADS], as in --large-pairs-tile=10x768.";
        return false;
      }
      flags->large_pairs_set = true;
    } else if (key == "--large-tile-loop" || key == "--large-pairs-loop") {
      if (value != "0" && value != "1") {
        *error = key + " takes 0 (a workgroup per large tile) or 1 (workgroups that loop over them).";
        return false;
      }
      (key == "--large-tile-loop" ? flags->large_tile_loop : flags->large_pairs_loop) = value == "1";
    } else if (key == "--large-tile-slots") {
      uint64_t slots = 0;
      if (!vren::radix::cli::parseUint(value, 1u << 16, &slots) || slots == 0) {
        *error = "--large-tile-slots takes how many large tiles run at once, as in --large-tile-slots=264.";
        return false;
      }
      flags->large_tile_slots = static_cast<uint32_t>(slots);
    } else if (key == "--large-tile-per-unit" || key == "--large-pairs-per-unit") {
      uint64_t n = 0;
      if (!vren::radix::cli::parseUint(value, 64, &n) || n == 0) {
        *error = key + " takes how many workgroups of those large tiles share an SM, 1 to 64, as in " + key + "=2.";
        return false;
      }
      (key == "--large-tile-per-unit" ? flags->large_tile_per_unit : flags->large_pairs_per_unit) =
          static_cast<uint32_t>(n);
    } else if (key == "--values-apart") {
      if (value != "0" && value != "1") {
        *error = "--values-apart takes 0 or 1: look-back tiles stage their keys whole, then their values.";
        return false;
      }
      flags->values_apart = value == "1" ? 1 : 0;
    } else if (key == "--counters-in-stage") {
      if (value != "0" && value != "1") {
        *error = "--counters-in-stage takes 0 or 1: look-back tiles staged after their ranking keep its counters "
                 "in their stage.";
        return false;
      }
      flags->counters_in_stage = value == "1" ? 1 : 0;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  argv[kept] = nullptr;
  return true;
}

bool log2FromEnv(const char* variable, int* out, std::string* error) {
  const char* text = std::getenv(variable);
  if (!text || !*text || *out != 0) return true;
  if (parseLog2(text, out)) return true;
  *error = std::string(variable) + " must be the log2 of a count, from " + std::to_string(kMinLog2) + " to " +
           std::to_string(kMaxLog2) + ", not '" + text + "'.";
  return false;
}

uint64_t largestDeviceLocalHeap(VkPhysicalDevice physical_device) {
  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(physical_device, &memory);
  uint64_t largest = 0;
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i)
    if (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) largest = std::max(largest, memory.memoryHeaps[i].size);
  return largest;
}

// The largest power-of-two count whose pairs fit: keys, values, their temps and pristine copies
// (24 bytes per element) in half of the largest device-local heap, within the engine's max_count.
int defaultMaxLog2(const Context& ctx, uint64_t heap_bytes) {
  if (ctx.device().type == "CPU") return kCpuDeviceDefaultMaxLog2;
  int log2 = kGpuDefaultMaxLog2;
  while (log2 > kMinLog2 && ((uint64_t{24} << log2) > heap_bytes / 2 || (uint64_t{1} << log2) > ctx.maxCount())) --log2;
  return log2;
}

// Times a device-local vkCmdCopyBuffer of `bytes` bytes, one submission per copy. Not a bandwidth
// ceiling everywhere: on an H200 it reaches about a fifth of what compute shaders move (846
// against 4023 GB/s, bench/results/h200-2026-11-27.cpu.json's context).
bool timeCopy(Context& ctx, uint64_t bytes, int repetitions, std::vector<double>* gpu_ms, std::string* error) {
  vren::radix::GpuBuffer src{}, dst{};
  bool ok = ctx.createBuffer(bytes, 0, false, &src, error) && ctx.createBuffer(bytes, 0, false, &dst, error) &&
            ctx.submit([&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, src.buffer, 0, VK_WHOLE_SIZE, 0x12345678u); },
                       error);
  gpu_ms->clear();
  for (int r = 0; ok && r < std::max(1, repetitions); ++r) {
    double ms = 0;
    ok = ctx.submit([&](VkCommandBuffer cmd) { ctx.cmdCopy(cmd, src.buffer, 0, dst.buffer, 0, bytes); }, error, &ms);
    gpu_ms->push_back(ms);
  }
  if (src.buffer) ctx.destroyBuffer(&src);
  if (dst.buffer) ctx.destroyBuffer(&dst);
  return ok;
}

// Read plus written bytes per second of a device-local copy, in GB/s; 0 if it cannot be timed.
double measureCopyBandwidth(Context& ctx, uint64_t heap_bytes, uint64_t* bytes) {
  *bytes = std::min<uint64_t>(kCopyBytes, std::max<uint64_t>(heap_bytes / 16, 1 << 20));
  std::vector<double> ms;
  std::string error;
  if (!vren::radix::bench::warmUp([&] { return timeCopy(ctx, *bytes, 8, &ms, &error); }) ||
      !timeCopy(ctx, *bytes, 8, &ms, &error) || ms.size() < 2) {
    std::fprintf(stderr, "vren_radix_bench: could not time a copy (%s); pct_of_ceiling is left out.\n", error.c_str());
    return 0;
  }
  ms.erase(ms.begin());  // the first copy also faults pages in on some drivers
  const double t = median(ms);
  return t > 0 ? 2.0 * static_cast<double>(*bytes) / (t * 1e-3) / 1e9 : 0;
}

// The same for a compute shader copying 16 bytes per load and store (shaders/bench_copy.comp);
// 0 if it cannot be timed.
double measureShaderCopyBandwidth(Context& ctx, uint64_t bytes) {
  const VkDevice device = ctx.vkDevice();
  vren::radix::GpuBuffer src{}, dst{};
  vren::radix::bench::BenchPipeline copy(device);
  std::vector<double> ms;
  std::string error;
  struct CopyConstants {  // shaders/bench_copy.comp's push-constant block
    VkDeviceAddress source, destination;
    uint32_t vectors;
  } constants{};
  static_assert(offsetof(CopyConstants, vectors) == 16, "CopyConstants must match the shader's block");
  constants.vectors = static_cast<uint32_t>(std::min<uint64_t>(bytes / 16, UINT32_MAX));
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  bool ok = ctx.createBuffer(bytes, usage, false, &src, &error) && ctx.createBuffer(bytes, usage, false, &dst, &error);
  if (ok) {
    VkBufferDeviceAddressInfo address{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    address.buffer = src.buffer;
    constants.source = vkGetBufferDeviceAddress(device, &address);
    address.buffer = dst.buffer;
    constants.destination = vkGetBufferDeviceAddress(device, &address);
    ok = copy.init(vren_radix_bench_copy_spv, sizeof(vren_radix_bench_copy_spv), sizeof(constants), "copy", &error) &&
         copy.make(nullptr, "copy", &error);
  }
  ok = ok && ctx.submit([&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, src.buffer, 0, VK_WHOLE_SIZE, 0x12345678u); },
                        &error);
  // Enough workgroups to fill any GPU; each strides over the buffer.
  const uint32_t groups = std::max(1u, std::min(constants.vectors / 256, 8192u));
  auto copies = [&](int n, double* t) {
    return ctx.submit(
        [&](VkCommandBuffer cmd) {
          copy.bind(cmd, &constants, sizeof(constants));
          for (int i = 0; i < n; ++i) {
            if (i > 0)  // the copies write the same buffer
              ctx.cmdBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
            vkCmdDispatch(cmd, groups, 1, 1);
          }
        },
        &error, t);
  };
  double unused = 0;
  ok = ok && vren::radix::bench::warmUp([&] { return copies(20, &unused); });
  for (int r = 0; ok && r < 8; ++r) {
    double t = 0;
    ok = copies(1, &t);
    ms.push_back(t);
  }
  if (src.buffer) ctx.destroyBuffer(&src);
  if (dst.buffer) ctx.destroyBuffer(&dst);
  if (!ok || ms.size() < 2) {
    std::fprintf(stderr, "vren_radix_bench: could not time a shader copy (%s).\n", error.c_str());
    return 0;
  }
  ms.erase(ms.begin());
  const double t = median(ms);
  return t > 0 ? 2.0 * static_cast<double>(constants.vectors) * 16 / (t * 1e-3) / 1e9 : 0;
}

std::string formatDouble(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, v);
  return text;
}

}  // namespace

constexpr const char* kFlagsHelp =
    "vren_radix_bench flags, besides Google Benchmark's:\n"
    "  --max-log2=N      largest power-of-two count (default: $VREN_RADIX_BENCH_MAX_LOG2, else 22 on a CPU\n"
    "                    device and up to 28 on a GPU)\n"
    "  --cpu-max-log2=N  largest count for the CPU baselines (default: $VREN_RADIX_BENCH_CPU_MAX_LOG2, else\n"
    "                    the smaller of 24 and the largest count)\n"
    "  --device=N        the Vulkan device, numbered as by `vren-radix info`\n"
    "  --tuning=WxK[xD]  the sorter's tuning: W threads x K keys per thread, D-bit digits (4 or 8)\n"
    "  --lookback=M[xK[xW]] look-back sorts up to M keys (0: none), K keys per thread, W threads\n"
    "  --large-tile=M[xK[xW]] look-back sorts from M keys on large tiles, for keys alone of W threads x K\n"
    "                    keys (on top of the device's tuning, or of --tuning); a K given is the only shape\n"
    "  --large-pairs-tile=K[xW] the large tiles' shape for keys with values (or argsort), the only one\n"
    "  --large-tile-loop=0|1, --large-pairs-loop=0|1 large tiles of keys alone, or with values, on a\n"
    "                    workgroup each (0) or on workgroups that loop over them (1)\n"
    "  --large-tile-slots=N SMs that run large tiles (default: the device's), each one at a time or\n"
    "                    as many as --large-tile-per-unit says: the looping grid, the choice between\n"
    "                    large-tile shapes and the GPU-side count's excess-tile rule\n"
    "  --values-apart=0|1 with values, tiles whose keys fit shared memory whole stage them, then\n"
    "                    the values (1), or stage keys and values in parts (0)\n"
    "  --counters-in-stage=0|1 look-back tiles staged after their ranking (in parts or values\n"
    "                    apart) keep the ranking's counters inside their stage (1), or beside it (0)\n"
    "  --large-tile-per-unit=N, --large-pairs-per-unit=N N workgroups of large tiles of keys alone, or\n"
    "                    with values, share an SM: each within 1/N of its shared memory\n\n";

int main(int argc, char** argv) {
  Flags flags;
  std::string error;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help") std::fputs(kFlagsHelp, stdout);
  if (!parseFlags(&argc, argv, &flags, &error)) {
    std::fprintf(stderr, "vren_radix_bench: %s\n", error.c_str());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  if (!log2FromEnv("VREN_RADIX_BENCH_MAX_LOG2", &flags.max_log2, &error) ||
      !log2FromEnv("VREN_RADIX_BENCH_CPU_MAX_LOG2", &flags.cpu_max_log2, &error)) {
    std::fprintf(stderr, "vren_radix_bench: %s\n", error.c_str());
    return 2;
  }
  if (!checkCpuRadix(&error)) {
    std::fprintf(stderr, "vren_radix_bench: %s\n", error.c_str());
    return 1;
  }

  vren::radix::ContextOptions options;
  options.device_index = flags.device;
  if (flags.lookback_keys_per_thread) flags.tuning.lookback_keys_per_thread = flags.lookback_keys_per_thread;
  if (flags.lookback_workgroup_size) flags.tuning.lookback_workgroup_size = flags.lookback_workgroup_size;
  if (flags.lookback_set) flags.tuning.lookback_max_count = flags.lookback_max_count;
  if (flags.tuned) options.tuning = &flags.tuning;
  std::unique_ptr<Context> ctx = Context::create(options, &error);
  const bool large_flags = flags.large_tile_set || flags.large_pairs_set || flags.large_tile_loop >= 0 ||
                           flags.large_pairs_loop >= 0 || flags.large_tile_slots > 0 || flags.values_apart >= 0 ||
                           flags.counters_in_stage >= 0 || flags.large_tile_per_unit > 0 ||
                           flags.large_pairs_per_unit > 0;
  if (ctx && large_flags) {  // large tiles on top of the tuning in use
    flags.tuning = vren::radix::getSorterProperties(ctx->sorter()).tuning;
    if (flags.large_tile_loop >= 0) flags.tuning.large_tile_loop = static_cast<uint32_t>(flags.large_tile_loop);
    if (flags.large_pairs_loop >= 0) flags.tuning.large_tile_pairs_loop = static_cast<uint32_t>(flags.large_pairs_loop);
    if (flags.large_tile_set) flags.tuning.large_tile_min_count = flags.large_tile_min_count;
    if (flags.large_tile_slots) flags.tuning.large_tile_slots = flags.large_tile_slots;
    if (flags.values_apart >= 0) flags.tuning.lookback_values_apart = static_cast<uint32_t>(flags.values_apart);
    if (flags.counters_in_stage >= 0)
      flags.tuning.lookback_counters_in_stage = static_cast<uint32_t>(flags.counters_in_stage);
    if (flags.large_tile_per_unit) flags.tuning.large_tile_per_unit = flags.large_tile_per_unit;
    if (flags.large_pairs_per_unit) flags.tuning.large_tile_pairs_per_unit = flags.large_pairs_per_unit;
    // A keys per thread given pins that one shape.
    if (flags.large_tile_keys_per_thread) {
      flags.tuning.large_tile_keys_per_thread = flags.large_tile_keys_per_thread;
      flags.tuning.large_tile_min_keys_per_thread = 0;
    }
    if (flags.large_tile_workgroup_size) flags.tuning.large_tile_workgroup_size = flags.large_tile_workgroup_size;
    if (flags.large_pairs_keys_per_thread) {
      flags.tuning.large_tile_pairs_keys_per_thread = flags.large_pairs_keys_per_thread;
      flags.tuning.large_tile_pairs_min_keys_per_thread = 0;
    }
    if (flags.large_pairs_workgroup_size) flags.tuning.large_tile_pairs_workgroup_size = flags.large_pairs_workgroup_size;
    options.tuning = &flags.tuning;
    ctx.reset();
    ctx = Context::create(options, &error);
  }
  double copy_gbps = 0;
  bool cpu_device = true;
  if (ctx) {
    const auto& d = ctx->device();
    const auto props = vren::radix::getSorterProperties(ctx->sorter());
    const uint64_t heap = largestDeviceLocalHeap(ctx->physicalDevice());
    cpu_device = d.type == "CPU";
    if (flags.max_log2 == 0) flags.max_log2 = defaultMaxLog2(*ctx, heap);
    uint64_t copy_bytes = 0;
    const double transfer_gbps = measureCopyBandwidth(*ctx, heap, &copy_bytes);
    const double shader_gbps = measureShaderCopyBandwidth(*ctx, copy_bytes);
    copy_gbps = std::max(transfer_gbps, shader_gbps);
    vren::radix::bench::addDeviceContext(*ctx);
    benchmark::AddCustomContext("subgroup_size", std::to_string(props.subgroup_size));
    const vren::radix::TuningConfig& t = props.tuning;
    // "W x K (tile N, down to M keys" of a large tile.
    auto large = [](uint32_t threads, uint32_t keys, uint32_t tile, uint32_t least) {
      return std::to_string(threads) + "x" + std::to_string(keys) + " (tile " + std::to_string(tile) + ", down to " +
             std::to_string(least) + " keys";
    };
    benchmark::AddCustomContext(
        "tuning",
        "workgroup_size " + std::to_string(t.workgroup_size) + ", keys_per_thread " +
            std::to_string(t.keys_per_thread) + ", tile " + std::to_string(props.tile_size) + ", " +
            std::to_string(t.digit_bits) + "-bit digits; look-back up to " + std::to_string(t.lookback_max_count) +
            " keys, " + std::to_string(t.lookback_workgroup_size) + "x" + std::to_string(t.lookback_keys_per_thread) +
            " (tile " + std::to_string(props.lookback_tile_size) + "), from " + std::to_string(t.large_tile_min_count) +
            " keys " +
            large(t.large_tile_workgroup_size, t.large_tile_keys_per_thread, props.large_tile_size,
                  t.large_tile_min_keys_per_thread) +
            "), pairs " +
            large(t.large_tile_pairs_workgroup_size, t.large_tile_pairs_keys_per_thread, props.large_tile_pairs_size,
                  t.large_tile_pairs_min_keys_per_thread) +
            "; " + std::to_string(t.large_tile_slots) + " units of large tiles" +
            (t.large_tile_loop ? ", keys looping" : "") + (t.large_tile_pairs_loop ? ", pairs looping" : "") +
            (t.lookback_values_apart ? ", values apart" : "") +
            (t.lookback_counters_in_stage ? ", counters in the stage" : "") +
            (t.large_tile_per_unit > 1 ? ", keys " + std::to_string(t.large_tile_per_unit) + " an SM" : "") +
            (t.large_tile_pairs_per_unit > 1 ? ", pairs " + std::to_string(t.large_tile_pairs_per_unit) + " an SM"
                                             : "") +
            "); one dispatch up to " + std::to_string(props.block_size) + " keys");
    benchmark::AddCustomContext("device_local_heap_mib", std::to_string(heap >> 20));
    benchmark::AddCustomContext("copy_bandwidth_gbps", formatDouble(copy_gbps, 1));
    benchmark::AddCustomContext("copy_bandwidth_transfer_gbps", formatDouble(transfer_gbps, 1));
    benchmark::AddCustomContext("copy_bandwidth_shader_gbps", formatDouble(shader_gbps, 1));
    benchmark::AddCustomContext("copy_bandwidth_note", "read + written bytes per second of a " +
                                                           std::to_string(copy_bytes >> 20) +
                                                           " MiB device-local copy, the faster of vkCmdCopyBuffer"
                                                           " and a compute shader, median of 7");
  } else {
    std::fprintf(stderr, "vren_radix_bench: %s Running the CPU baselines only.\n", error.c_str());
    if (flags.max_log2 == 0) flags.max_log2 = kCpuDeviceDefaultMaxLog2;
    benchmark::AddCustomContext("device", "none: " + error);
  }
  if (flags.cpu_max_log2 == 0) flags.cpu_max_log2 = std::min(flags.max_log2, kCpuBaselineDefaultMaxLog2);
  benchmark::AddCustomContext("max_log2", std::to_string(flags.max_log2));
  benchmark::AddCustomContext("cpu_max_log2", std::to_string(flags.cpu_max_log2));

  bool over_limit = false;
  for (const Case& c : makeCases(flags.max_log2)) {
    over_limit = over_limit || (ctx && c.count > ctx->maxCount());
    if (ctx && c.count <= ctx->maxCount()) {
      auto cs = std::make_shared<CaseState>();
      Context* context = ctx.get();
      benchmark::RegisterBenchmark(benchName("vren_radix", c).c_str(),
                                   [=](benchmark::State& state) { benchVren(state, *context, copy_gbps, c, *cs); })
          ->UseManualTime()
          ->Iterations(sortsPerRun(c.count, cpu_device))
          ->Unit(benchmark::kMillisecond);
    }
    if (c.count > (uint64_t{1} << flags.cpu_max_log2)) continue;
    if (c.pairs)
      benchmark::RegisterBenchmark(benchName("std_stable_sort", c).c_str(),
                                   [=](benchmark::State& state) { benchStdStableSort(state, c); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    else
      benchmark::RegisterBenchmark(benchName("std_sort", c).c_str(), [=](benchmark::State& state) { benchStdSort(state, c); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    auto cs = std::make_shared<CaseState>();
    benchmark::RegisterBenchmark(benchName("cpu_radix", c).c_str(),
                                 [=](benchmark::State& state) { benchCpuRadix(state, c, *cs); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }

  if (ctx) {
    for (int log2 : {20, 24}) {
      const uint32_t count = 1u << log2;
      if (log2 > flags.max_log2 || count > ctx->maxCount()) continue;
      for (const OptionCase& oc : kOptionCases) {
        auto cs = std::make_shared<CaseState>();
        Context* context = ctx.get();
        const std::string name = std::string("vren_radix_option/") + oc.name + "/" + std::to_string(count);
        benchmark::RegisterBenchmark(name.c_str(),
                                     [=](benchmark::State& state) { benchOption(state, *context, oc, count, *cs); })
            ->UseManualTime()
            ->Iterations(sortsPerRun(count, cpu_device))
            ->Unit(benchmark::kMillisecond);
      }
    }
  }

  if (over_limit)
    std::fprintf(stderr, "vren_radix_bench: counts above this device's limit of %u keys run on the CPU only.\n",
                 ctx->maxCount());

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
