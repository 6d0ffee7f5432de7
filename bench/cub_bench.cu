// vren_radix_cub_bench: NVIDIA CUB's cub::DeviceRadixSort on the cases vren_radix_bench runs,
// with the same keys, for comparison: u32 keys (SortKeys) and u32 keys with u32 values
// (SortPairs), distributions uniform, and2, low8 and bits4 (bits4 sorts bits [0, 4)).
//
// Per case: the input is uploaded once; temp storage is allocated once for the whole run; a
// checked sort, 500 ms of warm-up sorts (bench/warmup.h), then --reps timed sorts, each after
// restoring the input with a device-to-device copy outside the timed region, with cudaEvents
// around the sort call alone. The median is reported. The first sort's result is checked
// against std::sort on the host (pairs: against std::stable_sort's order, the values being the
// input indices).
//
// Output: CSV (impl,case,dist,count,median_ms,gkeys_per_s) on stdout, then a readable table.
// Flags: --max-log2=N  largest power-of-two count (default 28, less if GPU memory is short)
//        --reps=N      timed sorts per case (default 20)
//        --device=N    CUDA device (default 0)
//        --csv=FILE    also write the CSV to FILE
//        --keys=FILE   instead of the generated cases, sort the raw little-endian u32 keys of FILE
//                      (e.g. a frame's depth keys from vren_radix_splats --dump-keys), as keys and
//                      as pairs with index values; the case's dist is "file"
//        --segmented   instead of the generated cases, CUB's segmented sorts (below); takes --reps,
//                      --device and --csv
//
// --segmented: every segment of a case has one length; pairs carry the global input index
// (0..n-1) as u32 values, as an argsort does. Input and output are separate buffers, so CUB leaves
// the input alone and the timed sorts need no restore.
//   argsort_rows          4096 rows x 4096 f32, cub::DeviceSegmentedSort::SortPairs
//   small_segments        2^20 segments x 16 u32, cub::DeviceSegmentedSort::SortKeys
//   large_segments        256 segments x 2^16 u32, cub::DeviceSegmentedSort::SortKeys
//   large_segments_radix  the same keys, cub::DeviceSegmentedRadixSort::SortKeys
//   topk_whole_fullsort   k = 2048 of 2^20 u32: cub::DeviceRadixSort::SortPairs of all of them, the
//                         reference for a top-k (this CCCL has no cub::DeviceTopK)
//   topk_rows_segsort     k = 40 per row of 512 rows x 32000 f32: cub::DeviceSegmentedSort::SortPairs
// f32 keys are uniform in [-1, 1). The first sort is checked on the host: each segment sorted, and
// for pairs stable order (equal keys keep their indices ascending) and a permutation of the
// segment's indices. Output: CSV (impl,case,segments,segment_length,k,count,median_ms,min_ms,
// gkeys_per_s; k empty where the case is no top-k), then a readable table.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_common.h"
#include "warmup.h"

namespace {

using namespace vren::radix::bench;

constexpr int kDefaultMaxLog2 = 28;
constexpr int kDefaultReps = 20;

// Every CUDA call goes through this: on failure, one sentence and exit status 1.
void check(cudaError_t result, const char* what) {
  if (result == cudaSuccess) return;
  std::fprintf(stderr, "vren_radix_cub_bench: %s failed: %s (%s).%s\n", what, cudaGetErrorString(result),
               cudaGetErrorName(result),
               result == cudaErrorInsufficientDriver || result == cudaErrorNoDevice
                   ? " This binary needs an NVIDIA GPU and a driver that supports its CUDA version."
                   : "");
  std::exit(1);
}

struct Flags {
  int max_log2 = 0;  // 0: chosen from GPU memory
  int reps = kDefaultReps;
  int device = 0;
  std::string csv_path;
  std::string keys_path;
  bool segmented = false;
};

bool parseInt(const std::string& text, int lo, int hi, int* out) {
  if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::stoi(text);
  return *out >= lo && *out <= hi;
}

bool parseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const std::string key = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    bool ok = false;
    if (key == "--max-log2") ok = parseInt(value, kMinLog2, kMaxLog2, &flags->max_log2);
    else if (key == "--reps") ok = parseInt(value, 1, 100000, &flags->reps);
    else if (key == "--device") ok = parseInt(value, 0, 1024, &flags->device);
    else if (key == "--csv") ok = !(flags->csv_path = value).empty();
    else if (key == "--keys") ok = !(flags->keys_path = value).empty();
    else if (key == "--segmented") {
      flags->segmented = true;
      ok = eq == std::string::npos;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "vren_radix_cub_bench: bad option '%s'.\n"
                   "usage: vren_radix_cub_bench [--max-log2=10..31] [--reps=N] [--device=N] [--csv=FILE]\n"
                   "                            [--keys=FILE | --segmented]\n",
                   arg.c_str());
      return false;
    }
  }
  // The segmented cases have fixed sizes and their own keys.
  if (flags->segmented && (flags->max_log2 != 0 || !flags->keys_path.empty())) {
    std::fprintf(stderr, "vren_radix_cub_bench: --segmented takes neither --max-log2 nor --keys.\n");
    return false;
  }
  return true;
}

// Device buffers for the largest count, allocated once: the pristine input and both halves of
// each CUB double buffer.
struct DeviceBuffers {
  uint32_t* pristine_keys = nullptr;
  uint32_t* pristine_values = nullptr;
  uint32_t* keys[2] = {};
  uint32_t* values[2] = {};
  void* temp = nullptr;
  size_t temp_bytes = 0;
};

uint32_t* allocateWords(size_t count) {
  void* p = nullptr;
  check(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(uint32_t)), "cudaMalloc");
  return static_cast<uint32_t*>(p);
}

size_t tempBytes(bool pairs, uint32_t count, int end_bit, DeviceBuffers& b) {
  cub::DoubleBuffer<uint32_t> keys(b.keys[0], b.keys[1]);
  cub::DoubleBuffer<uint32_t> values(b.values[0], b.values[1]);
  size_t bytes = 0;
  if (pairs)
    check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, count, 0, end_bit), "SortPairs (size query)");
  else
    check(cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys, count, 0, end_bit), "SortKeys (size query)");
  return bytes;
}

struct Result {
  Case c;
  double median_ms = 0;
};

// Restores the input, sorts, and returns the sort's time in ms; `sorted_keys`/`sorted_values`
// receive the buffers that hold the result.
double sortOnce(const Case& c, DeviceBuffers& b, cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop,
                const uint32_t** sorted_keys, const uint32_t** sorted_values) {
  const size_t bytes = size_t{c.count} * sizeof(uint32_t);
  check(cudaMemcpyAsync(b.keys[0], b.pristine_keys, bytes, cudaMemcpyDeviceToDevice, stream), "restoring the keys");
  if (c.pairs)
    check(cudaMemcpyAsync(b.values[0], b.pristine_values, bytes, cudaMemcpyDeviceToDevice, stream),
          "restoring the values");
  cub::DoubleBuffer<uint32_t> keys(b.keys[0], b.keys[1]);
  cub::DoubleBuffer<uint32_t> values(b.values[0], b.values[1]);
  size_t temp_bytes = b.temp_bytes;
  const int end_bit = static_cast<int>(endBit(c.dist));
  check(cudaEventRecord(start, stream), "cudaEventRecord");
  if (c.pairs)
    check(cub::DeviceRadixSort::SortPairs(b.temp, temp_bytes, keys, values, c.count, 0, end_bit, stream), "SortPairs");
  else
    check(cub::DeviceRadixSort::SortKeys(b.temp, temp_bytes, keys, c.count, 0, end_bit, stream), "SortKeys");
  check(cudaGetLastError(), "launching the sort");
  check(cudaEventRecord(stop, stream), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "waiting for the sort");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  *sorted_keys = keys.Current();
  *sorted_values = values.Current();
  return ms;
}

std::string verify(const Case& c, const uint32_t* d_keys, const uint32_t* d_values, const std::vector<uint32_t>& input,
                   const std::vector<uint32_t>& sorted) {
  std::vector<uint32_t> keys(c.count), values(c.pairs ? c.count : 0);
  check(cudaMemcpy(keys.data(), d_keys, size_t{c.count} * 4, cudaMemcpyDeviceToHost), "reading back the keys");
  if (c.pairs) {
    check(cudaMemcpy(values.data(), d_values, size_t{c.count} * 4, cudaMemcpyDeviceToHost), "reading back the values");
    return checkStablePairs(input, keys.data(), values.data(), c.count);
  }
  return compareKeys(sorted, keys.data(), c.count);
}

// The line that says what ran, on stderr so that stdout stays CSV and table.
void printHeader(const cudaDeviceProp& prop, int reps) {
  int driver = 0, runtime = 0;
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  std::fprintf(stderr, "vren_radix_cub_bench: %s, CUDA driver %d.%d, runtime %d.%d, CCCL %d.%d.%d, %d sorts per case\n",
               prop.name, driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, CCCL_MAJOR_VERSION,
               CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, reps);
}

// Prints the CSV, and with --csv writes it to that file too.
bool emitCsv(const std::string& csv, const std::string& path) {
  std::fputs(csv.c_str(), stdout);
  if (path.empty()) return true;
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f || std::fputs(csv.c_str(), f) < 0 || std::fclose(f) != 0) {
    std::fprintf(stderr, "vren_radix_cub_bench: could not write %s.\n", path.c_str());
    return false;
  }
  return true;
}

// A cudaMalloc'd array, freed when it goes out of scope: a --segmented case allocates what its
// shape and key type need, and frees it before the next case.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t count) { check(cudaMalloc(&p_, std::max<size_t>(count, 1) * sizeof(T)), "cudaMalloc"); }
  ~DeviceArray() { check(cudaFree(p_), "cudaFree"); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
};

struct SegmentedCase {
  const char* name;
  bool pairs;  // the global input indices travel as u32 values
  int segments;
  int segment_length;
  int k;  // the top-k that the sort is the reference for; 0 when the case is no top-k
};

struct SegmentedResult {
  SegmentedCase c;
  double median_ms = 0;
  double min_ms = 0;
};

// What every --segmented case shares: the timing settings and the results so far.
struct SegmentedRun {
  int reps = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  std::vector<SegmentedResult> results;
};

// What a case's sort call sees. Separate outputs leave the input as it was, so no sort needs a
// restore before it.
template <typename Key>
struct SegmentedBuffers {
  int count;
  int segments;
  const Key* keys_in;
  Key* keys_out;
  const uint32_t* values_in;  // null without values
  uint32_t* values_out;       // null without values
  const int* offsets;         // segments + 1 entries: segment i is [offsets[i], offsets[i + 1])
};

// Fixed-seed keys. f32: multiples of 2^-23 in [-1, 1), uniform: negatives included, no -0.0 or NaN
// (where orders could differ from the host's operator<), and so few distinct values (2^24) that
// rows of thousands of keys hold equal keys, which the stability check needs.
template <typename Key>
std::vector<Key> makeSegmentedKeys(uint64_t seed, size_t count) {
  SplitMix64 rng{seed};
  std::vector<Key> keys(count);
  for (Key& key : keys) {
    if constexpr (std::is_same_v<Key, float>)
      key = static_cast<float>(static_cast<int32_t>(rng.next() >> 8) - (1 << 23)) * 0x1p-23f;
    else
      key = rng.next();
  }
  return keys;
}

// Empty if each segment of the output is its input segment sorted, else where it first is not.
// With values (the global input indices): each segment's values are a permutation of its own
// indices, each key is the input key at its value's index, keys ascend, and equal keys keep their
// indices ascending. That is stable order, which DeviceSegmentedSort::SortPairs does not promise;
// but in this CCCL StableSortPairs calls the same code, so a failure there means CUB changed.
// Without values: each segment equals std::sort of its input segment.
template <typename Key>
std::string checkSegments(const std::vector<Key>& input, size_t segment_length, const std::vector<Key>& keys,
                          const std::vector<uint32_t>& values) {
  auto where = [&](size_t i) {
    return "Segment " + std::to_string(i / segment_length) + ", element " + std::to_string(i) + ": ";
  };
  std::vector<Key> expected;
  std::vector<bool> seen(values.size());
  for (size_t begin = 0; begin < input.size(); begin += segment_length) {
    const size_t end = begin + segment_length;
    if (values.empty()) {
      expected.assign(input.begin() + begin, input.begin() + end);
      std::sort(expected.begin(), expected.end());
      const auto diff = std::mismatch(expected.begin(), expected.end(), keys.begin() + begin);
      if (diff.first != expected.end())
        return where(begin + (diff.first - expected.begin())) + "the key differs from std::sort's.";
      continue;
    }
    for (size_t i = begin; i < end; ++i) {
      const uint32_t v = values[i];
      if (v < begin || v >= end || seen[v]) return where(i) + "the value is outside the segment or repeated.";
      seen[v] = true;
      if (keys[i] != input[v]) return where(i) + "the key did not travel with its value.";
      if (i > begin && (keys[i - 1] > keys[i] || (keys[i - 1] == keys[i] && values[i - 1] > v)))
        return where(i) + "out of order or unstable after the element before.";
    }
  }
  return {};
}

// One --segmented case: generates its keys (seeded by its shape, so that cases of one shape sort
// the same keys), uploads them, with the input indices as values for pairs, sorts once and checks
// the result, warms up, then times --reps sorts. `sort(temp, temp_bytes, buffers, stream)` is one
// CUB call; with a null `temp` it only sets `temp_bytes`. False, having said why, if the check fails.
template <typename Key, typename Sort>
bool runSegmentedCase(SegmentedRun* run, const SegmentedCase& c, const Sort& sort) {
  const size_t count = static_cast<size_t>(c.segments) * static_cast<size_t>(c.segment_length);
  const std::vector<Key> input = makeSegmentedKeys<Key>(
      uint64_t{static_cast<uint32_t>(c.segments)} << 32 | static_cast<uint32_t>(c.segment_length), count);
  std::vector<uint32_t> indices(c.pairs ? count : 0);
  std::iota(indices.begin(), indices.end(), 0u);
  std::vector<int> offsets(static_cast<size_t>(c.segments) + 1);
  for (size_t i = 0; i < offsets.size(); ++i) offsets[i] = static_cast<int>(i * static_cast<size_t>(c.segment_length));

  DeviceArray<Key> keys_in(count), keys_out(count);
  DeviceArray<uint32_t> values_in(indices.size()), values_out(indices.size());
  DeviceArray<int> d_offsets(offsets.size());
  check(cudaMemcpy(keys_in.get(), input.data(), count * sizeof(Key), cudaMemcpyHostToDevice), "uploading the keys");
  check(cudaMemcpy(values_in.get(), indices.data(), indices.size() * sizeof(uint32_t), cudaMemcpyHostToDevice),
        "uploading the values");
  check(cudaMemcpy(d_offsets.get(), offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice),
        "uploading the offsets");
  // A copy from pageable memory may return before its DMA lands; the sort's stream does not wait
  // for the legacy stream.
  check(cudaDeviceSynchronize(), "finishing the upload");

  const SegmentedBuffers<Key> b{static_cast<int>(count),
                                c.segments,
                                keys_in.get(),
                                keys_out.get(),
                                c.pairs ? values_in.get() : nullptr,
                                c.pairs ? values_out.get() : nullptr,
                                d_offsets.get()};
  size_t temp_bytes = 0;
  check(sort(nullptr, temp_bytes, b, run->stream), "the temp storage size query");
  DeviceArray<char> temp(temp_bytes);
  auto timed = [&] {
    size_t bytes = temp_bytes;
    check(cudaEventRecord(run->start, run->stream), "cudaEventRecord");
    check(sort(temp.get(), bytes, b, run->stream), c.name);
    check(cudaGetLastError(), "launching the sort");
    check(cudaEventRecord(run->stop, run->stream), "cudaEventRecord");
    check(cudaEventSynchronize(run->stop), "waiting for the sort");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, run->start, run->stop), "cudaEventElapsedTime");
    return double{ms};
  };

  timed();
  std::vector<Key> keys(count);
  std::vector<uint32_t> values(indices.size());
  check(cudaMemcpy(keys.data(), keys_out.get(), count * sizeof(Key), cudaMemcpyDeviceToHost), "reading back the keys");
  check(cudaMemcpy(values.data(), values_out.get(), values.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost),
        "reading back the values");
  const std::string why = checkSegments(input, static_cast<size_t>(c.segment_length), keys, values);
  if (!why.empty()) {
    std::fprintf(stderr, "vren_radix_cub_bench: CUB %s: %s\n", c.name, why.c_str());
    return false;
  }
  vren::radix::bench::warmUp([&] {
    timed();
    return true;
  });
  std::vector<double> ms;
  for (int r = 0; r < run->reps; ++r) ms.push_back(timed());
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  run->results.push_back({c, n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2, ms.front()});
  return true;
}

// --segmented: runs the cases, then prints the CSV and the table. The process's exit status.
int runSegmented(const Flags& flags, const cudaDeviceProp& prop) {
  SegmentedRun run;
  run.reps = flags.reps;
  check(cudaStreamCreateWithFlags(&run.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreate(&run.start), "cudaEventCreate");
  check(cudaEventCreate(&run.stop), "cudaEventCreate");
  printHeader(prop, flags.reps);

  const auto segmented_sort_pairs = [](void* temp, size_t& bytes, const auto& b, cudaStream_t s) {
    return cub::DeviceSegmentedSort::SortPairs(temp, bytes, b.keys_in, b.keys_out, b.values_in, b.values_out, b.count,
                                               b.segments, b.offsets, b.offsets + 1, s);
  };
  const auto segmented_sort_keys = [](void* temp, size_t& bytes, const auto& b, cudaStream_t s) {
    return cub::DeviceSegmentedSort::SortKeys(temp, bytes, b.keys_in, b.keys_out, b.count, b.segments, b.offsets,
                                              b.offsets + 1, s);
  };
  const auto segmented_radix_sort_keys = [](void* temp, size_t& bytes, const auto& b, cudaStream_t s) {
    return cub::DeviceSegmentedRadixSort::SortKeys(temp, bytes, b.keys_in, b.keys_out, b.count, b.segments, b.offsets,
                                                   b.offsets + 1, 0, 32, s);
  };
  // One segment: the whole input, no offsets.
  const auto radix_sort_pairs = [](void* temp, size_t& bytes, const auto& b, cudaStream_t s) {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, b.keys_in, b.keys_out, b.values_in, b.values_out, b.count, 0,
                                           32, s);
  };
  const bool ok =
      runSegmentedCase<float>(&run, {"argsort_rows", true, 4096, 4096, 0}, segmented_sort_pairs) &&
      runSegmentedCase<uint32_t>(&run, {"small_segments", false, 1 << 20, 16, 0}, segmented_sort_keys) &&
      runSegmentedCase<uint32_t>(&run, {"large_segments", false, 256, 1 << 16, 0}, segmented_sort_keys) &&
      runSegmentedCase<uint32_t>(&run, {"large_segments_radix", false, 256, 1 << 16, 0}, segmented_radix_sort_keys) &&
      runSegmentedCase<uint32_t>(&run, {"topk_whole_fullsort", true, 1, 1 << 20, 2048}, radix_sort_pairs) &&
      runSegmentedCase<float>(&run, {"topk_rows_segsort", true, 512, 32000, 40}, segmented_sort_pairs);
  check(cudaEventDestroy(run.start), "cudaEventDestroy");
  check(cudaEventDestroy(run.stop), "cudaEventDestroy");
  check(cudaStreamDestroy(run.stream), "cudaStreamDestroy");
  if (!ok) return 1;

  auto count = [](const SegmentedCase& c) { return static_cast<double>(c.segments) * c.segment_length; };
  std::string csv = "impl,case,segments,segment_length,k,count,median_ms,min_ms,gkeys_per_s\n";
  for (const SegmentedResult& r : run.results) {
    char line[200];
    std::snprintf(line, sizeof(line), "cub,%s,%d,%d,%s,%.0f,%.6f,%.6f,%.4f\n", r.c.name, r.c.segments,
                  r.c.segment_length, r.c.k ? std::to_string(r.c.k).c_str() : "", count(r.c), r.median_ms, r.min_ms,
                  count(r.c) / (r.median_ms * 1e6));
    csv += line;
  }
  if (!emitCsv(csv, flags.csv_path)) return 1;

  std::printf("\nCUB %d.%d.%d segmented sorts on %s, median and min of %d sorts\n", CCCL_MAJOR_VERSION,
              CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, prop.name, flags.reps);
  std::printf("%-21s %9s %9s %5s %12s %12s %10s\n", "case", "segments", "length", "k", "median ms", "min ms",
              "Gkeys/s");
  for (const SegmentedResult& r : run.results)
    std::printf("%-21s %9d %9d %5s %12.4f %12.4f %10.3f\n", r.c.name, r.c.segments, r.c.segment_length,
                r.c.k ? std::to_string(r.c.k).c_str() : "-", r.median_ms, r.min_ms, count(r.c) / (r.median_ms * 1e6));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!parseFlags(argc, argv, &flags)) return 2;

  int device_count = 0;
  check(cudaGetDeviceCount(&device_count), "cudaGetDeviceCount");
  if (flags.device >= device_count) {
    std::fprintf(stderr, "vren_radix_cub_bench: --device=%d, but there are %d CUDA devices.\n", flags.device,
                 device_count);
    return 2;
  }
  check(cudaSetDevice(flags.device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, flags.device), "cudaGetDeviceProperties");
  if (flags.segmented) return runSegmented(flags, prop);
  size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");

  // Six words per element (pristine, and both halves of the double buffer, for keys and values)
  // in at most 3/4 of the free memory, leaving room for temp storage.
  if (flags.max_log2 == 0) {
    flags.max_log2 = kDefaultMaxLog2;
    while (flags.max_log2 > kMinLog2 && (uint64_t{24} << flags.max_log2) > free_bytes / 4 * 3) --flags.max_log2;
  }
  std::vector<Case> cases;
  std::vector<uint32_t> file_keys;
  if (flags.keys_path.empty()) {
    cases = makeCases(flags.max_log2);
  } else {
    std::ifstream in(flags.keys_path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "vren_radix_cub_bench: cannot read %s.\n", flags.keys_path.c_str());
      return 1;
    }
    if (bytes.empty() || bytes.size() % 4 != 0 || bytes.size() / 4 > (size_t{1} << kMaxLog2)) {
      std::fprintf(stderr, "vren_radix_cub_bench: %s must hold 1 to 2^%d little-endian u32 keys.\n",
                   flags.keys_path.c_str(), kMaxLog2);
      return 1;
    }
    file_keys.resize(bytes.size() / 4);
    std::memcpy(file_keys.data(), bytes.data(), bytes.size());
    for (bool pairs : {false, true}) cases.push_back({pairs, Dist::kUniform, static_cast<uint32_t>(file_keys.size())});
  }
  auto distName = [&](const Case& c) { return file_keys.empty() ? name(c.dist) : "file"; };
  uint32_t max_count = 0;
  for (const Case& c : cases) max_count = std::max(max_count, c.count);

  DeviceBuffers b;
  b.pristine_keys = allocateWords(max_count);
  b.pristine_values = allocateWords(max_count);
  for (int i = 0; i < 2; ++i) {
    b.keys[i] = allocateWords(max_count);
    b.values[i] = allocateWords(max_count);
  }
  for (const Case& c : cases)
    b.temp_bytes = std::max(b.temp_bytes, tempBytes(c.pairs, c.count, static_cast<int>(endBit(c.dist)), b));
  check(cudaMalloc(&b.temp, std::max<size_t>(b.temp_bytes, 1)), "cudaMalloc (temp storage)");

  cudaStream_t stream;
  cudaEvent_t start, stop;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");

  printHeader(prop, flags.reps);

  std::vector<Result> results;
  std::vector<uint32_t> input, sorted, indices;
  bool have_input = false;
  Dist input_dist = Dist::kUniform;
  for (const Case& c : cases) {
    const size_t bytes = size_t{c.count} * sizeof(uint32_t);
    if (!have_input || input_dist != c.dist || input.size() != c.count) {
      have_input = true;
      input_dist = c.dist;
      input = file_keys.empty() ? makeKeys(c.dist, c.count) : file_keys;
      sorted.clear();
      indices.resize(c.count);
      std::iota(indices.begin(), indices.end(), 0u);
      check(cudaMemcpy(b.pristine_keys, input.data(), bytes, cudaMemcpyHostToDevice), "uploading the keys");
      check(cudaMemcpy(b.pristine_values, indices.data(), bytes, cudaMemcpyHostToDevice), "uploading the values");
      // A copy from pageable memory may return before its DMA lands; the sort's stream does not
      // wait for the legacy stream.
      check(cudaDeviceSynchronize(), "finishing the upload");
    }
    if (!c.pairs && sorted.empty()) sorted = sortedCopy(input);

    const uint32_t* sorted_keys = nullptr;
    const uint32_t* sorted_values = nullptr;
    sortOnce(c, b, stream, start, stop, &sorted_keys, &sorted_values);
    const std::string why = verify(c, sorted_keys, sorted_values, input, sorted);
    if (!why.empty()) {
      std::fprintf(stderr, "vren_radix_cub_bench: CUB %s %s %u: %s\n", c.pairs ? "pairs" : "keys", distName(c),
                   c.count, why.c_str());
      return 1;
    }
    vren::radix::bench::warmUp([&] {
      sortOnce(c, b, stream, start, stop, &sorted_keys, &sorted_values);
      return true;
    });
    std::vector<double> ms;
    for (int r = 0; r < flags.reps; ++r) ms.push_back(sortOnce(c, b, stream, start, stop, &sorted_keys, &sorted_values));
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    results.push_back({c, n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2});
  }

  std::string csv = "impl,case,dist,count,median_ms,gkeys_per_s\n";
  for (const Result& r : results) {
    char line[160];
    std::snprintf(line, sizeof(line), "cub,%s,%s,%u,%.6f,%.4f\n", r.c.pairs ? "pairs" : "keys", distName(r.c),
                  r.c.count, r.median_ms, r.c.count / (r.median_ms * 1e6));
    csv += line;
  }
  if (!emitCsv(csv, flags.csv_path)) return 1;

  std::printf("\nCUB %d.%d.%d cub::DeviceRadixSort on %s, median of %d sorts\n", CCCL_MAJOR_VERSION,
              CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, prop.name, flags.reps);
  std::printf("%-6s %-8s %11s %12s %10s\n", "case", "dist", "count", "median ms", "Gkeys/s");
  for (const Result& r : results)
    std::printf("%-6s %-8s %11u %12.4f %10.3f\n", r.c.pairs ? "pairs" : "keys", distName(r.c), r.c.count, r.median_ms,
                r.c.count / (r.median_ms * 1e6));

  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  for (void* p : {static_cast<void*>(b.pristine_keys), static_cast<void*>(b.pristine_values),
                  static_cast<void*>(b.keys[0]), static_cast<void*>(b.keys[1]), static_cast<void*>(b.values[0]),
                  static_cast<void*>(b.values[1]), b.temp})
    check(cudaFree(p), "cudaFree");
  return 0;
}
