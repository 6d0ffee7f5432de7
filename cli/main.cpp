// vren-radix: the command-line face of vren_radix.
// Exit codes: 0 success, 1 runtime failure, 2 usage error. Messages go to stderr.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "args.h"
#include "files.h"
#include "gpu_timing.h"
#include "json.h"
#include "tiles_command.h"
#include "materials_command.h"
#include "radix_shared.h"
#include "sort_timing.h"
#include "vren_radix/context.h"

namespace {

using vren::radix::Context;
using vren::radix::ContextOptions;
using vren::radix::KeyType;
using vren::radix::SortOptions;
using vren::radix::bench::median;
using vren::radix::cli::jsonBool;
using vren::radix::cli::kFailure;
using vren::radix::cli::kOk;
using vren::radix::cli::kUsage;
using vren::radix::cli::jsonNumber;
using vren::radix::cli::jsonString;
using vren::radix::cli::parseFlags;
using vren::radix::cli::parseUint;


const char* kUsageText =
    "usage: vren-radix <command> [options]\n"
    "       vren-radix --help | --version\n"
    "\n"
    "commands:\n"
    "  info        list Vulkan devices and the limits that matter to the sort\n"
    "  sort        sort a file of u32, i32, f32 or u64 keys, optionally with u32 values or by segment\n"
    "  topk        the k smallest or largest keys of a file, or of each of its segments\n"
    "  demo        sort random keys and pairs, verify them on the CPU and compare the times\n"
    "  materials   sort a map of material IDs by material, for indirect shading\n"
    "  tiles       pack a screen of sort keys tile by tile\n"
    "\n"
    "Run `vren-radix <command> --help` for a command's options. Exit codes: 0 success,\n"
    "1 runtime failure, 2 usage error; messages go to stderr.\n";

const char* kDeviceHelp =
    "  --device N      use Vulkan device N from `vren-radix info` (default: the first discrete,\n"
    "                  integrated, virtual GPU, then the CPU device)\n";

const char* kInfoHelp =
    "usage: vren-radix info [--json | --quiet]\n"
    "\n"
    "List the Vulkan devices, numbered as --device counts them, with the limits that matter to\n"
    "the sort.\n"
    "  --json          print one JSON object: {\"version\": ..., \"devices\": [...]}\n"
    "  --quiet         print nothing; the exit code says whether there is a device\n";

const char* kSortHelp =
    "usage: vren-radix sort --keys K --out-keys OK [--values V --out-values OV | --argsort --out-values OV]\n"
    "                       [--segments S] [--key-type u32|i32|f32|u64] [--bits LO:HI] [--descending]\n"
    "                       [--device N]\n"
    "\n"
    "Sort a raw little-endian key file on the GPU. Stable: equal keys keep their input order.\n"
    "  --segments S    sort each segment on its own: S holds N + 1 little-endian u32 offsets for N\n"
    "                  segments, the first 0, never decreasing, the last the number of keys; segment i\n"
    "                  is keys offsets[i] .. offsets[i + 1] - 1 (--argsort counts from the file's start)\n"
    "  --key-type T    u32 (default), i32, f32 (IEEE total order: -NaN < -inf < -0 < +0 < +inf < +NaN)\n"
    "                  or u64 (8-byte keys: the file size must be a multiple of 8)\n"
    "  --values V      u32 values, one per key, moved with their keys into --out-values\n"
    "  --argsort       write each sorted key's input index to --out-values instead (no --values)\n"
    "  --bits LO:HI    sort by key bits LO..HI-1 only (default 0:32, or 0:64 for u64)\n"
    "  --descending    largest key first, still stable\n"
    "  --quiet         accepted by every command; sort prints nothing on success anyway\n";

const char* kTopKHelp =
    "usage: vren-radix topk --keys K --k N --out-keys OK [--values V --out-values OV | --argsort --out-values OV]\n"
    "                       [--largest] [--segments S] [--key-type u32|i32|f32|u64] [--device N]\n"
    "\n"
    "Write the N smallest keys of a raw little-endian key file, in order (the first N of the stable\n"
    "sort), or with --segments those of each segment: min(N, length) each, one segment after another.\n"
    "  --k N           results per segment, at least 1\n"
    "  --largest       the N largest keys instead, largest first (equal keys in input order)\n"
    "  --segments S    segment offsets, as `vren-radix sort --segments` takes them\n"
    "  --key-type T    u32 (default), i32, f32 (IEEE total order) or u64 (8-byte keys)\n"
    "  --values V      u32 values, one per key, written with their keys to --out-values\n"
    "  --argsort       write each result's index in the keys file to --out-values instead (no --values)\n"
    "  --quiet         accepted by every command; topk prints nothing on success anyway\n";

const char* kDemoHelp =
    "usage: vren-radix demo [--count N] [--tuning WxK[xD]] [--profile] [--gpu-only] [--device N]\n"
    "                       [--json | --quiet]\n"
    "\n"
    "Sort N random u32 keys (default 4194304), then keys with u32 values, 5 times each on the GPU;\n"
    "verify against std::sort / std::stable_sort and compare the GPU and CPU times.\n"
    "  --count N       number of keys\n"
    "  --tuning WxK[xD] W threads x K keys per thread in a workgroup, D-bit digits (4 or 8),\n"
    "                  e.g. 256x16 or 256x4x8\n"
    "  --profile       add the GPU time of each count, scan and scatter dispatch\n"
    "  --gpu-only      verify in linear time and skip the CPU sorts (for device sweeps)\n"
    "  --json          print one JSON object instead of text\n"
    "  --quiet         print nothing; the exit code says whether the results verified\n";

const char* kMaterialsHelp =
    "usage: vren-radix materials --ids IDS --width W --height H --materials M --out DIR\n"
    "                            [--void-material K] [--align A] [--device N] [--quiet]\n"
    "\n"
    "Sort a map of W*H little-endian u32 material IDs (each < M) by material. Writes\n"
    "DIR/counts.u32, offsets.u32, dispatch.u32 (M x {x, y, z} for 64-wide shading workgroups;\n"
    "{0, 1, 1} for the void material), new_to_old.u32 (0xFFFFFFFF in padding slots), ids.png and\n"
    "sorted.png.\n"
    "  --void-material K  never shade material K: its pixels are mapped, its dispatch is {0, 1, 1}\n"
    "  --align A       start each material's range at a multiple of A (a power of two up to 1024)\n"
    "  --quiet         do not print the summary\n";

const char* kTilesHelp =
    "usage: vren-radix tiles --keys KEYS --width W --height H --out DIR [--no-conflict-resolution]\n"
    "                        [--no-container-sort] [--device N] [--quiet]\n"
    "\n"
    "Pack a screen of W*H little-endian u32 sort keys (0: no work) per 64x64 tile, grouped by key.\n"
    "Writes DIR/sorted_pixels.u32 ((y << 16) | x per slot, 0xFFFFFFFF padding), tile_ranges.u32\n"
    "(start, count per tile, row-major), counter.u32, keys.png and packed.png.\n"
    "  --no-conflict-resolution, --no-container-sort  turn off those steps (for comparison)\n"
    "  --quiet         do not print the summary\n";

// The command being run ("sort"), named in messages; empty before one is known.
std::string g_command;

std::string programName() { return g_command.empty() ? "vren-radix" : "vren-radix " + g_command; }

int usageError(const std::string& message) { return vren::radix::cli::usageError(programName(), message); }
int failure(const std::string& message) { return vren::radix::cli::failure(programName(), message); }

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

int runInfo(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  std::string error;
  if (!parseFlags(argc, argv, {}, &flags, &error, {"--json", "--quiet"})) return usageError(error);
  const bool json = flags.count("--json") > 0;
  if (json && flags.count("--quiet")) return usageError("--json and --quiet exclude each other.");
  const bool quiet = flags.count("--quiet") > 0;
  const auto devices = Context::listDevices(&error);
  if (!error.empty()) return failure(error);
  if (devices.empty()) return failure("No Vulkan devices found: install a driver (e.g. mesa-vulkan-drivers).");
  if (quiet) return kOk;
  if (json) {
    std::string out = "{\"version\": " + jsonString(VREN_RADIX_VERSION_STRING) + ", \"devices\": [";
    for (size_t i = 0; i < devices.size(); ++i) {
      const auto& d = devices[i];
      out += std::string(i ? ", " : "") + "{\"index\": " + std::to_string(d.index) + ", \"name\": " + jsonString(d.name) +
             ", \"type\": " + jsonString(d.type) + ", \"driver\": " + jsonString(d.driver) +
             ", \"vulkan\": " + jsonString(versionText(d.api_version)) +
             ", \"subgroup_size\": " + std::to_string(d.subgroup_size) +
             ", \"min_subgroup_size\": " + std::to_string(d.min_subgroup_size) +
             ", \"max_subgroup_size\": " + std::to_string(d.max_subgroup_size) +
             ", \"subgroup_arithmetic\": " + jsonBool(d.subgroup_arithmetic) +
             ", \"max_shared_memory\": " + std::to_string(d.max_shared_memory) +
             ", \"max_storage_buffer_range\": " + std::to_string(d.max_storage_buffer_range) +
             ", \"max_allocation_size\": " + std::to_string(d.max_allocation_size) +
             ", \"max_workgroup_count_x\": " + std::to_string(d.max_workgroup_count_x) +
             ", \"timestamp_period_ns\": " + jsonNumber(d.timestamp_period_ns) + "}";
    }
    std::printf("%s]}\n", out.c_str());
    return kOk;
  }
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

bool keyTypeOption(const std::map<std::string, std::string>& flags, KeyType* type, std::string* error) {
  auto it = flags.find("--key-type");
  if (it == flags.end()) return true;
  static const std::pair<const char*, KeyType> kNames[] = {
      {"u32", KeyType::kU32}, {"i32", KeyType::kI32}, {"f32", KeyType::kF32}, {"u64", KeyType::kU64}};
  for (const auto& [name, value] : kNames) {
    if (it->second == name) {
      *type = value;
      return true;
    }
  }
  *error = "--key-type takes u32, i32, f32 or u64, not '" + it->second + "'.";
  return false;
}

// --bits LO:HI, with LO <= HI <= key_bits; all bits without the flag.
bool bitsOption(const std::map<std::string, std::string>& flags, uint32_t key_bits, SortOptions* options,
                std::string* error) {
  options->begin_bit = 0;
  options->end_bit = key_bits;
  auto it = flags.find("--bits");
  if (it == flags.end()) return true;
  const std::string& text = it->second;
  const size_t colon = text.find(':');
  uint64_t lo = 0, hi = 0;
  if (colon == std::string::npos || !parseUint(text.substr(0, colon), key_bits, &lo) ||
      !parseUint(text.substr(colon + 1), key_bits, &hi) || lo > hi) {
    *error = "--bits takes LO:HI with 0 <= LO <= HI <= " + std::to_string(key_bits) + " for these keys, not '" +
             text + "'.";
    return false;
  }
  options->begin_bit = static_cast<uint32_t>(lo);
  options->end_bit = static_cast<uint32_t>(hi);
  return true;
}

// --values V --out-values OV, or --argsort --out-values OV, as sort and topk take them.
bool valuesOptions(const std::map<std::string, std::string>& flags, bool* argsort, std::string* error) {
  *argsort = flags.count("--argsort") > 0;
  if (*argsort) {
    if (flags.count("--values")) {
      *error = "--argsort writes the permutation to --out-values and reads no --values; drop --values.";
      return false;
    }
    if (!flags.count("--out-values")) {
      *error = "--argsort needs --out-values for the permutation.";
      return false;
    }
  } else if (flags.count("--values") != flags.count("--out-values")) {
    *error = "--values and --out-values go together.";
    return false;
  }
  return true;
}

// Reads --keys (whole u64 keys for kU64) and --values (one per key); with argsort, values get
// one zero per key to receive the permutation. *count receives the number of keys.
bool readInput(const std::map<std::string, std::string>& flags, KeyType key_type, bool argsort,
               std::vector<uint32_t>* keys, std::vector<uint32_t>* values, size_t* count, std::string* error) {
  const std::string& keys_path = flags.at("--keys");
  if (!vren::radix::cli::readWords(keys_path, keys, error)) return false;
  const bool u64 = key_type == KeyType::kU64;
  if (u64 && keys->size() % 2 != 0) {
    *error = "'" + keys_path + "' holds " + std::to_string(keys->size() * 4) +
             " bytes, not a multiple of 8: with --key-type u64 it must hold little-endian u64 keys.";
    return false;
  }
  *count = u64 ? keys->size() / 2 : keys->size();
  if (argsort) {
    values->resize(*count);
  } else if (flags.count("--values")) {
    if (!vren::radix::cli::readWords(flags.at("--values"), values, error)) return false;
    if (values->size() != *count) {
      *error = "The values file holds " + std::to_string(values->size()) + " words but the keys file holds " +
               std::to_string(*count) + " keys; they must match.";
      return false;
    }
  }
  if (*count > UINT32_MAX) {
    *error = "The keys file holds more than 2^32 - 1 keys.";
    return false;
  }
  return true;
}

// Reads --segments, if given, and checks its offsets against `count` keys.
bool readSegments(const std::map<std::string, std::string>& flags, size_t count, std::vector<uint32_t>* offsets,
                  std::string* error) {
  auto it = flags.find("--segments");
  if (it == flags.end()) return true;
  if (!vren::radix::cli::readWords(it->second, offsets, error)) return false;
  if (const char* why = vren::radix::validateSegmentOffsets(*offsets, static_cast<uint32_t>(count))) {
    std::string reason = why;
    reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
    *error = "'" + it->second + "' does not hold segment offsets for " + std::to_string(count) + " keys: " + reason;
    return false;
  }
  return true;
}

// Writes --out-keys, then --out-values if with_values; a failure leaves neither behind.
int writeOutputs(const std::map<std::string, std::string>& flags, const std::vector<uint32_t>& keys,
                 const std::vector<uint32_t>& values, bool with_values) {
  std::string error;
  const std::string& keys_path = flags.at("--out-keys");
  if (!vren::radix::cli::writeWordsAtomically(keys_path, keys.data(), keys.size(), &error)) return failure(error);
  if (with_values &&
      !vren::radix::cli::writeWordsAtomically(flags.at("--out-values"), values.data(), values.size(), &error)) {
    std::remove(keys_path.c_str());
    return failure(error);
  }
  return kOk;
}

int runSort(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  std::string error;
  if (!parseFlags(argc, argv,
                  {"--keys", "--out-keys", "--values", "--out-values", "--device", "--key-type", "--bits", "--segments"},
                  &flags, &error, {"--descending", "--argsort", "--quiet"}))
    return usageError(error);
  if (!flags.count("--keys") || !flags.count("--out-keys")) return usageError("sort needs --keys and --out-keys.");
  SortOptions sort_options;
  sort_options.descending = flags.count("--descending") > 0;
  if (!valuesOptions(flags, &sort_options.argsort, &error)) return usageError(error);
  if (!keyTypeOption(flags, &sort_options.key_type, &error)) return usageError(error);
  const bool u64 = sort_options.key_type == KeyType::kU64;
  if (!bitsOption(flags, u64 ? 64 : 32, &sort_options, &error)) return usageError(error);
  if (sort_options.argsort && sort_options.begin_bit == sort_options.end_bit)
    return usageError("--argsort needs a non-empty --bits range (LO < HI).");
  ContextOptions options;
  if (!deviceOption(flags, &options, &error)) return usageError(error);

  std::vector<uint32_t> keys, values, offsets;
  size_t count = 0;
  if (!readInput(flags, sort_options.key_type, sort_options.argsort, &keys, &values, &count, &error) ||
      !readSegments(flags, count, &offsets, &error))
    return failure(error);

  auto ctx = Context::create(options, &error);
  if (!ctx) return failure(error);
  const bool segmented = flags.count("--segments") > 0;
  if (count > 0 && !(segmented ? ctx->sortSegmented(keys, values, offsets, sort_options, nullptr, &error)
                               : ctx->sort(keys, values, sort_options, nullptr, &error)))
    return failure(error);
  return writeOutputs(flags, keys, values, flags.count("--out-values") > 0);
}

int runTopK(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  std::string error;
  if (!parseFlags(argc, argv,
                  {"--keys", "--k", "--out-keys", "--values", "--out-values", "--device", "--key-type", "--segments"},
                  &flags, &error, {"--largest", "--argsort", "--quiet"}))
    return usageError(error);
  if (!flags.count("--keys") || !flags.count("--k") || !flags.count("--out-keys"))
    return usageError("topk needs --keys, --k and --out-keys.");
  uint64_t k = 0;
  if (!parseUint(flags["--k"], UINT32_MAX, &k) || k == 0)
    return usageError("--k takes a number of results per segment from 1 to 4294967295, not '" + flags["--k"] + "'.");
  SortOptions sort_options;
  if (!valuesOptions(flags, &sort_options.argsort, &error)) return usageError(error);
  if (!keyTypeOption(flags, &sort_options.key_type, &error)) return usageError(error);
  sort_options.end_bit = sort_options.key_type == KeyType::kU64 ? 64 : 32;
  ContextOptions options;
  if (!deviceOption(flags, &options, &error)) return usageError(error);

  std::vector<uint32_t> keys, values, offsets;
  size_t count = 0;
  // argsort's values are written by the GPU, not read: topK needs no span for them.
  if (!readInput(flags, sort_options.key_type, false, &keys, &values, &count, &error) ||
      !readSegments(flags, count, &offsets, &error))
    return failure(error);

  auto ctx = Context::create(options, &error);
  if (!ctx) return failure(error);
  const bool with_values = flags.count("--out-values") > 0;
  std::vector<uint32_t> out_keys, out_values;
  if (count > 0 && !ctx->topK(keys, values, offsets, static_cast<uint32_t>(k), flags.count("--largest") > 0,
                              sort_options, &out_keys, with_values ? &out_values : nullptr, &error))
    return failure(error);
  return writeOutputs(flags, out_keys, out_values, with_values);
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

int runDemo(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  std::string error;
  if (!parseFlags(argc, argv, {"--count", "--device", "--tuning"}, &flags, &error,
                  {"--profile", "--gpu-only", "--json", "--quiet"}))
    return usageError(error);
  const bool json = flags.count("--json") > 0;
  const bool quiet = flags.count("--quiet") > 0;
  if (json && quiet) return usageError("--json and --quiet exclude each other.");
  const bool text = !json && !quiet;
  ContextOptions options;
  if (!deviceOption(flags, &options, &error)) return usageError(error);
  vren::radix::TuningConfig tuning;
  if (flags.count("--tuning")) {
    if (!vren::radix::cli::parseTuning(flags["--tuning"], &tuning, &error)) return usageError(error);
    options.tuning = &tuning;
  }
  const bool profile = flags.count("--profile") > 0;
  const bool gpu_only = flags.count("--gpu-only") > 0;
  uint64_t count = 1u << 22;
  if (flags.count("--count") && !parseUint(flags["--count"], UINT32_MAX, &count))
    return usageError("--count takes a number of keys up to 4294967295, not '" + flags["--count"] + "'.");
  // Big runs take seconds per step on a CPU device: say what is running, on a terminal only.
  const bool progress = text && count >= (1u << 24) && isatty(STDERR_FILENO);
  auto step = [&](const char* what) {
    if (progress) std::fprintf(stderr, "\r\033[K%s", what);
  };

  auto ctx = Context::create(options, &error);
  if (!ctx) return failure(error);
  const auto& d = ctx->device();
  const auto props = vren::radix::getSorterProperties(ctx->sorter());
  if (text)
    std::printf("device      %s (%s, %s), subgroup size %u, tuning %ux%u, %u-bit digits\n", d.name.c_str(),
                d.type.c_str(), d.driver.c_str(), d.subgroup_size, props.tuning.workgroup_size,
                props.tuning.keys_per_thread, props.tuning.digit_bits);
  if (count > ctx->maxCount()) return failure("--count exceeds this device's limit of " + std::to_string(ctx->maxCount()) + " keys.");

  std::mt19937 rng(20261121);
  std::vector<uint32_t> input(count);
  for (auto& k : input) k = rng();
  constexpr int kRepetitions = 5;
  bool all_ok = true;
  std::string json_runs;

  for (const bool pairs : {false, true}) {
    std::vector<uint32_t> keys = input, values;
    if (pairs) {
      values.resize(count);
      for (uint32_t i = 0; i < count; ++i) values[i] = i;
    }
    std::vector<double> gpu_ms;
    std::vector<std::vector<double>> steps;
    std::vector<uint32_t> clocks;  // a profiling build's (VREN_RADIX_SHADER_CLOCKS)
    step(pairs ? "demo: sorting pairs on the GPU" : "demo: sorting keys on the GPU");
    if (profile) {
      if (!vren::radix::bench::profileSorts(*ctx, keys, values, {}, kRepetitions, &steps, &error, &clocks))
        return failure(error);
      for (const auto& row : steps) gpu_ms.push_back(row.front());
    } else if (!vren::radix::bench::timeSorts(*ctx, keys, values, {}, kRepetitions, &gpu_ms, &error)) {
      return failure(error);
    }

    // CPU reference, timed; --gpu-only checks the result in linear time instead (sweeps).
    step(gpu_only ? "demo: verifying" : "demo: sorting on the CPU");
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
    step("");
    all_ok = all_ok && ok;
    const double gpu = median(gpu_ms);
    const char* cpu_name = pairs ? "std::stable_sort" : "std::sort";
    // Median per dispatch over the repetitions, summed per kind: count, scan, scatter.
    double per_kind[3] = {};
    size_t passes = 0;
    if (profile) {
      const size_t n_steps = steps.front().size() - 1;
      for (size_t i = 0; i < n_steps; ++i) {
        std::vector<double> column;
        for (const auto& row : steps) column.push_back(row[1 + i]);
        per_kind[i % 3] += median(column);
      }
      passes = n_steps / 3;
    }
    if (json) {
      json_runs += std::string(pairs ? ", " : "") + "{\"kind\": " + jsonString(pairs ? "pairs" : "keys") +
                   ", \"verified\": " + jsonBool(ok) + ", \"gpu_ms\": " + jsonNumber(gpu) +
                   ", \"mkeys_per_s\": " + jsonNumber(count / gpu / 1e3) + ", \"cpu_reference\": " +
                   (cpu_ms >= 0 ? jsonString(cpu_name) : "null") + ", \"cpu_ms\": " +
                   (cpu_ms >= 0 ? jsonNumber(cpu_ms) : "null");
      if (profile)
        json_runs += ", \"profile\": {\"passes\": " + std::to_string(passes) + ", \"count_ms\": " +
                     jsonNumber(per_kind[0]) + ", \"scan_ms\": " + jsonNumber(per_kind[1]) +
                     ", \"scatter_ms\": " + jsonNumber(per_kind[2]) + "}";
      json_runs += "}";
    }
    if (!text) continue;
    std::printf("%-5s       %llu uniform u32 %s: %s; GPU %.3f ms (median of %d, %.1f Mkeys/s)",
                pairs ? "pairs" : "keys", static_cast<unsigned long long>(count), pairs ? "keys + u32 values" : "keys",
                ok ? "verified" : "MISMATCH", gpu, kRepetitions, count / gpu / 1e3);
    if (cpu_ms >= 0) std::printf(", CPU %s %.1f ms, GPU/CPU speed-up %.1fx", cpu_name, cpu_ms, cpu_ms / gpu);
    std::printf("\n");
    if (profile)
      std::printf("            profile: count %.3f ms, scan %.3f ms, scatter %.3f ms over %zu passes\n",
                  per_kind[0], per_kind[1], per_kind[2], passes);
    // Cycles per tile of each onesweep step (units of 16), and the tiles counted by a later one.
    if (clocks.size() == VREN_RADIX_CLOCK_WORDS && clocks[VREN_RADIX_CLOCK_TILES] > 0) {
      static const char* const kClockSteps[] = {"start", "clear", "loads+count", "publish", "rank", "look-back",
                                                "stage", "next loads", "store", "next tile"};
      static_assert(std::size(kClockSteps) == VREN_RADIX_CLOCK_STEPS, "a name for each of radix_onesweep.comp's steps");
      const uint32_t tiles = clocks[VREN_RADIX_CLOCK_TILES];
      std::printf("            shader clocks, cycles per tile over %u tiles:", tiles);
      for (size_t i = 0; i < VREN_RADIX_CLOCK_STEPS; ++i)
        std::printf(" %s %.0f", kClockSteps[i], 16.0 * clocks[i] / tiles);
      std::printf("\n            look-back: polls ran out and a tile counted a missing tile's keys itself %u times "
                  "over the %u tiles\n",
                  clocks[VREN_RADIX_CLOCK_MISSING], tiles);
    }
  }
  if (json) {
    std::printf("{\"version\": %s, \"device\": {\"name\": %s, \"type\": %s, \"driver\": %s, \"subgroup_size\": %u}, "
                "\"tuning\": {\"workgroup_size\": %u, \"keys_per_thread\": %u, \"digit_bits\": %u, "
                "\"lookback_max_count\": %u, \"lookback_keys_per_thread\": %u}, \"count\": %llu, "
                "\"repetitions\": %d, \"verified\": %s, \"runs\": [%s]}\n",
                jsonString(VREN_RADIX_VERSION_STRING).c_str(), jsonString(d.name).c_str(), jsonString(d.type).c_str(),
                jsonString(d.driver).c_str(), d.subgroup_size, props.tuning.workgroup_size,
                props.tuning.keys_per_thread, props.tuning.digit_bits, props.tuning.lookback_max_count,
                props.tuning.lookback_keys_per_thread,
                static_cast<unsigned long long>(count),
                kRepetitions,
                jsonBool(all_ok).c_str(), json_runs.c_str());
  }
  if (!all_ok) return failure("The GPU result did not match the CPU reference.");
  return kOk;
}

struct Command {
  const char* name;
  const char* help;
  bool takes_device;
  int (*run)(int argc, char** argv);
};

const Command kCommands[] = {
    {"info", kInfoHelp, false, runInfo},
    {"sort", kSortHelp, true, runSort},
    {"topk", kTopKHelp, true, runTopK},
    {"demo", kDemoHelp, true, runDemo},
    {"materials", kMaterialsHelp, true, vren::radix::cli::runMaterials},
    {"tiles", kTilesHelp, true, vren::radix::cli::runTiles},
};

const Command* findCommand(const std::string& name) {
  for (const Command& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

int printHelp(const Command& c) {
  std::fputs(c.help, stdout);
  if (c.takes_device) std::fputs(kDeviceHelp, stdout);
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usageError("missing command.");
  const std::string first = argv[1];
  if (first == "--help" || first == "-h" || (first == "help" && argc == 2)) {
    std::fputs(kUsageText, stdout);
    return kOk;
  }
  if (first == "--version") {
    std::printf("vren-radix %s\n", VREN_RADIX_VERSION_STRING);
    return kOk;
  }
  if (first == "help") {
    const Command* c = findCommand(argv[2]);
    return c ? printHelp(*c) : usageError("no help for '" + std::string(argv[2]) + "': there is no such command.");
  }
  const Command* command = findCommand(first);
  if (!command) return usageError("unknown command '" + first + "'.");
  g_command = command->name;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return printHelp(*command);
  }
  return command->run(argc - 2, argv + 2);
}
