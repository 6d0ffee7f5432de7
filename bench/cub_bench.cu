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
#include <cub/device/device_radix_sort.cuh>
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
    if (!ok) {
      std::fprintf(stderr,
                   "vren_radix_cub_bench: bad option '%s'.\n"
                   "usage: vren_radix_cub_bench [--max-log2=10..31] [--reps=N] [--device=N] [--csv=FILE]\n"
                   "                            [--keys=FILE]\n",
                   arg.c_str());
      return false;
    }
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
  int driver = 0, runtime = 0;
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
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

  std::fprintf(stderr, "vren_radix_cub_bench: %s, CUDA driver %d.%d, runtime %d.%d, CCCL %d.%d.%d, %d sorts per case\n",
               prop.name, driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, CCCL_MAJOR_VERSION,
               CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, flags.reps);

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
  std::fputs(csv.c_str(), stdout);
  if (!flags.csv_path.empty()) {
    FILE* f = std::fopen(flags.csv_path.c_str(), "w");
    if (!f || std::fputs(csv.c_str(), f) < 0 || std::fclose(f) != 0) {
      std::fprintf(stderr, "vren_radix_cub_bench: could not write %s.\n", flags.csv_path.c_str());
      return 1;
    }
  }

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
