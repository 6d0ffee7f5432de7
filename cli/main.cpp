// vren-radix: the command-line face of vren_radix.
// Exit codes: 0 success, 1 runtime failure, 2 usage error. Messages go to stderr.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "files.h"
#include "vren_radix/context.h"

namespace {

using vren::radix::Context;
using vren::radix::ContextOptions;

constexpr int kOk = 0;
constexpr int kFailure = 1;
constexpr int kUsage = 2;

const char* kUsageText =
    "usage: vren-radix <command> [options]\n"
    "\n"
    "commands:\n"
    "  info                      list Vulkan devices and the limits that matter to the sort\n"
    "  sort --keys K --out-keys OK [--values V --out-values OV] [--device N]\n"
    "                            sort raw little-endian u32 files; values move with their keys (stable)\n"
    "  demo [--count N] [--device N] [--tuning WxK] [--profile]\n"
    "                            sort N random keys and pairs (default 4194304), verify against\n"
    "                            std::sort / std::stable_sort, and compare GPU and CPU times;\n"
    "                            --tuning runs W threads x K keys per workgroup, --profile adds\n"
    "                            the GPU time of each count, scan and scatter dispatch\n"
    "\n"
    "options:\n"
    "  --device N                use Vulkan device N from `vren-radix info` (default: first discrete,\n"
    "                            integrated, virtual GPU, then the CPU device)\n"
    "  --help                    show this text\n"
    "  --version                 print the version\n";

int usageError(const std::string& message) {
  std::fprintf(stderr, "vren-radix: %s\nRun `vren-radix --help` for usage.\n", message.c_str());
  return kUsage;
}

int failure(const std::string& message) {
  std::fprintf(stderr, "vren-radix: %s\n", message.c_str());
  return kFailure;
}

// Parses `--name value` pairs; every flag takes a value.
bool parseFlags(int argc, char** argv, const std::vector<std::string>& allowed, std::map<std::string, std::string>* out,
                std::string* error) {
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (std::find(allowed.begin(), allowed.end(), arg) == allowed.end()) {
      *error = "Unknown option '" + arg + "'.";
      return false;
    }
    if (i + 1 >= argc) {
      *error = "Option '" + arg + "' needs a value.";
      return false;
    }
    (*out)[arg] = argv[++i];
  }
  return true;
}

bool parseUint(const std::string& text, uint64_t max, uint64_t* value) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  *value = std::stoull(text);
  return *value <= max;
}

bool deviceOption(const std::map<std::string, std::string>& flags, ContextOptions* options, std::string* error) {
  auto it = flags.find("--device");
  if (it == flags.end()) return true;
  uint64_t index = 0;
  if (!parseUint(it->second, 1024, &index)) {
    *error = "--device takes a device number from `vren-radix info`, not '" + it->second + "'.";
    return false;
  }
  options->device_index = static_cast<int>(index);
  return true;
}

std::string versionText(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

int runInfo(int argc) {
  if (argc > 0) return usageError("info takes no options.");
  std::string error;
  const auto devices = Context::listDevices(&error);
  if (!error.empty()) return failure(error);
  if (devices.empty()) return failure("No Vulkan devices found: install a driver (e.g. mesa-vulkan-drivers).");
  for (const auto& d : devices) {
    std::printf("device %u: %s\n", d.index, d.name.c_str());
    std::printf("  type                    %s\n", d.type.c_str());
    std::printf("  driver                  %s\n", d.driver.c_str());
    std::printf("  Vulkan                  %s\n", versionText(d.api_version).c_str());
    std::printf("  subgroup size           %u (range %u..%u), arithmetic in compute: %s\n", d.subgroup_size,
                d.min_subgroup_size, d.max_subgroup_size, d.subgroup_arithmetic ? "yes" : "no");
    std::printf("  shared memory           %u bytes\n", d.max_shared_memory);
    std::printf("  storage buffer range    %llu bytes\n", static_cast<unsigned long long>(d.max_storage_buffer_range));
    std::printf("  max allocation          %llu bytes\n", static_cast<unsigned long long>(d.max_allocation_size));
    std::printf("  workgroup count x       %u\n", d.max_workgroup_count_x);
    std::printf("  timestamp period        %g ns\n", d.timestamp_period_ns);
  }
  return kOk;
}

int runSort(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  std::string error;
  if (!parseFlags(argc, argv, {"--keys", "--out-keys", "--values", "--out-values", "--device"}, &flags, &error))
    return usageError(error);
  if (!flags.count("--keys") || !flags.count("--out-keys")) return usageError("sort needs --keys and --out-keys.");
  if (flags.count("--values") != flags.count("--out-values"))
    return usageError("--values and --out-values go together.");
  ContextOptions options;
  if (!deviceOption(flags, &options, &error)) return usageError(error);

  std::vector<uint32_t> keys, values;
  if (!vren::radix::cli::readWords(flags["--keys"], &keys, &error)) return failure(error);
  const bool with_values = flags.count("--values") > 0;
  if (with_values) {
    if (!vren::radix::cli::readWords(flags["--values"], &values, &error)) return failure(error);
    if (values.size() != keys.size())
      return failure("The values file holds " + std::to_string(values.size()) + " words but the keys file holds " +
                     std::to_string(keys.size()) + "; they must match.");
  }
  if (keys.size() > UINT32_MAX) return failure("The keys file holds more than 2^32 - 1 keys.");

  auto ctx = Context::create(options, &error);
  if (!ctx) return failure(error);
  if (!ctx->sort(keys, values, {}, nullptr, &error)) return failure(error);

  if (!vren::radix::cli::writeWordsAtomically(flags["--out-keys"], keys.data(), keys.size(), &error))
    return failure(error);
  if (with_values && !vren::radix::cli::writeWordsAtomically(flags["--out-values"], values.data(), values.size(), &error)) {
    std::remove(flags["--out-keys"].c_str());
    return failure(error);
  }
  return kOk;
}

// Sorted, and the same multiset as the input (by a 64-bit sum and a mixed-hash xor).
bool isSortedPermutation(const std::vector<uint32_t>& input, const std::vector<uint32_t>& keys) {
  auto fingerprint = [](const std::vector<uint32_t>& v) {
    uint64_t sum = 0, mix = 0;
    for (uint32_t k : v) {
      sum += k;
      mix ^= (uint64_t{k} * 0x9E3779B97F4A7C15ull) ^ (uint64_t{k} << 29);
    }
    return std::pair(sum, mix);
  };
  return keys.size() == input.size() && std::is_sorted(keys.begin(), keys.end()) && fingerprint(keys) == fingerprint(input);
}

// values (original indices) form a permutation, keys follow them, and equal keys keep input order.
bool isStablePermutation(const std::vector<uint32_t>& input, const std::vector<uint32_t>& keys,
                         const std::vector<uint32_t>& values) {
  std::vector<bool> seen(input.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint32_t v = values[i];
    if (v >= input.size() || seen[v] || keys[i] != input[v]) return false;
    seen[v] = true;
    if (i > 0 && (keys[i - 1] > keys[i] || (keys[i - 1] == keys[i] && values[i - 1] > v))) return false;
  }
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int runDemo(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  std::string error;
  if (!parseFlags(argc, argv, {"--count", "--device", "--tuning", "--profile", "--gpu-only"}, &flags, &error))
    return usageError(error);
  ContextOptions options;
  if (!deviceOption(flags, &options, &error)) return usageError(error);
  vren::radix::TuningConfig tuning;
  if (flags.count("--tuning")) {
    const std::string& t = flags["--tuning"];
    const size_t x = t.find('x');
    uint64_t w = 0, k = 0;
    if (x == std::string::npos || !parseUint(t.substr(0, x), 1024, &w) || !parseUint(t.substr(x + 1), 64, &k) || !w || !k)
      return usageError("--tuning takes THREADSxKEYS, e.g. 256x16, not '" + t + "'.");
    tuning = {static_cast<uint32_t>(w), static_cast<uint32_t>(k)};
    options.tuning = &tuning;
  }
  const bool profile = flags.count("--profile") && flags["--profile"] != "0";
  const bool gpu_only = flags.count("--gpu-only") && flags["--gpu-only"] != "0";
  uint64_t count = 1u << 22;
  if (flags.count("--count") && !parseUint(flags["--count"], UINT32_MAX, &count))
    return usageError("--count takes a number of keys up to 4294967295, not '" + flags["--count"] + "'.");

  auto ctx = Context::create(options, &error);
  if (!ctx) return failure(error);
  const auto& d = ctx->device();
  const auto props = vren::radix::getSorterProperties(ctx->sorter());
  std::printf("device      %s (%s, %s), subgroup size %u, tuning %ux%u\n", d.name.c_str(), d.type.c_str(),
              d.driver.c_str(), d.subgroup_size, props.tuning.workgroup_size, props.tuning.keys_per_thread);
  if (count > ctx->maxCount()) return failure("--count exceeds this device's limit of " + std::to_string(ctx->maxCount()) + " keys.");

  std::mt19937 rng(20261121);
  std::vector<uint32_t> input(count);
  for (auto& k : input) k = rng();
  constexpr int kRepetitions = 5;
  bool all_ok = true;

  for (const bool pairs : {false, true}) {
    std::vector<uint32_t> keys = input, values;
    if (pairs) {
      values.resize(count);
      for (uint32_t i = 0; i < count; ++i) values[i] = i;
    }
    std::vector<double> gpu_ms;
    std::vector<std::vector<double>> steps;
    if (!ctx->profileSorts(keys, values, {}, kRepetitions, &steps, &error)) return failure(error);
    for (const auto& row : steps) gpu_ms.push_back(row.front());

    // CPU reference, timed; --gpu-only checks the result in linear time instead (sweeps).
    bool ok;
    double cpu_ms = -1;
    if (gpu_only) {
      ok = pairs ? isStablePermutation(input, keys, values) : isSortedPermutation(input, keys);
    } else {
      std::vector<uint32_t> ref_keys = input;
      std::vector<uint32_t> order;
      const auto t0 = std::chrono::steady_clock::now();
      if (pairs) {
        order.resize(count);
        for (uint32_t i = 0; i < count; ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return input[a] < input[b]; });
      } else {
        std::sort(ref_keys.begin(), ref_keys.end());
      }
      cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (pairs) {
        ok = values == order;
        for (uint32_t i = 0; ok && i < count; ++i) ok = keys[i] == input[order[i]];
      } else {
        ok = keys == ref_keys;
      }
    }
    all_ok = all_ok && ok;
    const double gpu = median(gpu_ms);
    std::printf("%-5s       %llu uniform u32 %s: %s; GPU %.3f ms (median of %d, %.1f Mkeys/s)",
                pairs ? "pairs" : "keys", static_cast<unsigned long long>(count), pairs ? "keys + u32 values" : "keys",
                ok ? "verified" : "MISMATCH", gpu, kRepetitions, count / gpu / 1e3);
    if (cpu_ms >= 0)
      std::printf(", CPU %s %.1f ms, GPU/CPU speed-up %.1fx", pairs ? "std::stable_sort" : "std::sort", cpu_ms,
                  cpu_ms / gpu);
    std::printf("\n");
    if (profile) {
      // Median per dispatch over the repetitions, summed per kind, and pass 0 in detail.
      double per_kind[3] = {};
      const size_t n_steps = steps.front().size() - 1;
      for (size_t i = 0; i < n_steps; ++i) {
        std::vector<double> column;
        for (const auto& row : steps) column.push_back(row[1 + i]);
        per_kind[i % 3] += median(column);
      }
      std::printf("            profile: count %.3f ms, scan %.3f ms, scatter %.3f ms over %zu passes\n",
                  per_kind[0], per_kind[1], per_kind[2], n_steps / 3);
    }
  }
  if (!all_ok) return failure("The GPU result did not match the CPU reference.");
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usageError("missing command.");
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsageText, stdout);
    return kOk;
  }
  if (command == "--version") {
    std::printf("vren-radix %s\n", VREN_RADIX_VERSION_STRING);
    return kOk;
  }
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--help") {
      std::fputs(kUsageText, stdout);
      return kOk;
    }
  }
  if (command == "info") return runInfo(argc - 2);
  if (command == "sort") return runSort(argc - 2, argv + 2);
  if (command == "demo") return runDemo(argc - 2, argv + 2);
  return usageError("unknown command '" + command + "'.");
}
