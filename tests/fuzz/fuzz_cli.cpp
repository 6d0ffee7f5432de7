// libFuzzer target for the CLI's input handling: raw u32 files (readWords, writeWordsAtomically)
// and option parsing (parseFlags, parseUint). The first byte picks the part; the rest is the
// file's content, NUL-separated arguments, or an 8-byte maximum and a number's text. Each part
// is checked against a simple model, so wrong answers abort as well as crashes.
//
//   vren_radix_fuzz_cli -max_total_time=60 -dict=tests/fuzz/cli.dict corpus_dir tests/fuzz/corpus
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "args.h"
#include "files.h"

namespace {

using vren::radix::cli::parseFlags;
using vren::radix::cli::parseUint;
using vren::radix::cli::readWords;
using vren::radix::cli::writeWordsAtomically;

std::string g_dir;  // a private temporary directory, removed at exit

void require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz_cli: %s\n", what);
  std::abort();
}

bool isSentence(const std::string& s) {
  return s.size() > 4 && s.back() == '.';
}

bool exists(const std::string& path) {
  return access(path.c_str(), F_OK) == 0;
}

std::vector<uint8_t> readBytes(const std::string& path) {
  std::vector<uint8_t> bytes;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return bytes;
  uint8_t buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), f)) bytes.insert(bytes.end(), buffer, buffer + n);
  std::fclose(f);
  return bytes;
}

// A file of any content reads as its words, or fails with a sentence if its size is not a
// multiple of 4; what was read writes back byte for byte, with no temporary file left over.
void fuzzFiles(const uint8_t* data, size_t size) {
  const std::string in = g_dir + "/in.bin", out = g_dir + "/out.bin";
  FILE* f = std::fopen(in.c_str(), "wb");
  require(f != nullptr, "cannot write the input file");
  require(size == 0 || std::fwrite(data, 1, size, f) == size, "cannot write the input file");
  std::fclose(f);

  std::vector<uint32_t> words = {0xDEADBEEFu};
  std::string error;
  const bool ok = readWords(in, &words, &error);
  if (size % 4 != 0) {
    require(!ok, "a file whose size is not a multiple of 4 was read");
    require(isSentence(error), "the refusal is not a sentence");
    return;
  }
  require(ok, "a file of whole words was refused");
  require(words.size() == size / 4, "wrong word count");
  require(size == 0 || std::memcmp(words.data(), data, size) == 0, "the words differ from the file");

  std::remove(out.c_str());
  require(writeWordsAtomically(out, words.data(), words.size(), &error), "writing the words back failed");
  const std::vector<uint8_t> back = readBytes(out);
  require(back.size() == size && (size == 0 || std::memcmp(back.data(), data, size) == 0),
          "the written file differs from the input");
  require(!exists(out + ".tmp-" + std::to_string(getpid())), "a temporary file was left behind");

  // A destination that cannot be written fails with a sentence and leaves nothing.
  const std::string bad = g_dir + "/missing/out.bin";
  require(!writeWordsAtomically(bad, words.data(), words.size(), &error), "writing into a missing directory worked");
  require(isSentence(error), "the write failure is not a sentence");
  require(!exists(bad) && !exists(bad + ".tmp-" + std::to_string(getpid())), "a failed write left a file");
}

// NUL-separated arguments: on success they are switches and flag/value pairs of allowed flags,
// and the map holds each flag's last value ("1" for switches); on failure the reason is a
// sentence.
void fuzzFlags(const uint8_t* data, size_t size) {
  static const std::vector<std::string> kAllowed = {"--keys", "--out-keys", "--values", "--out-values", "--device"};
  static const std::vector<std::string> kSwitches = {"--profile", "--gpu-only"};
  std::vector<std::string> args;
  std::string current;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty() && args.size() < 64) args.push_back(current);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::map<std::string, std::string> flags;
  std::string error;
  const int argc = static_cast<int>(args.size());
  const bool ok = parseFlags(argc, argv.data(), kAllowed, &flags, &error, kSwitches);
  std::map<std::string, std::string> model;
  bool model_ok = true;
  for (int i = 0; i < argc && model_ok; ++i) {
    if (std::find(kSwitches.begin(), kSwitches.end(), args[i]) != kSwitches.end()) {
      model[args[i]] = "1";
    } else if (std::find(kAllowed.begin(), kAllowed.end(), args[i]) != kAllowed.end() && i + 1 < argc) {
      model[args[i]] = args[i + 1];
      ++i;
    } else {
      model_ok = false;
    }
  }
  require(ok == model_ok, "parseFlags accepted or refused the wrong arguments");
  require(ok ? flags == model : isSentence(error),
          ok ? "the flags differ from the arguments" : "the parse error is not a sentence");
}

// An 8-byte maximum, then the text: accepted exactly when it is 1 to 19 decimal digits whose
// value is at most the maximum, and then the value is right.
void fuzzUint(const uint8_t* data, size_t size) {
  uint64_t max = UINT64_MAX;
  if (size >= 8) {
    std::memcpy(&max, data, 8);
    data += 8;
    size -= 8;
  }
  const std::string text(reinterpret_cast<const char*>(data), size);
  bool digits = !text.empty() && text.size() <= 19;
  uint64_t expected = 0;
  for (char c : text) {
    digits = digits && c >= '0' && c <= '9';
    if (digits) expected = expected * 10 + static_cast<uint64_t>(c - '0');
  }
  uint64_t value = 0;
  const bool ok = parseUint(text, max, &value);
  require(ok == (digits && expected <= max), "parseUint accepted or refused the wrong text");
  if (ok) require(value == expected, "parseUint returned the wrong value");
}

void removeDir() {
  std::remove((g_dir + "/in.bin").c_str());
  std::remove((g_dir + "/out.bin").c_str());
  rmdir(g_dir.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::string pattern = (std::filesystem::temp_directory_path() / "vren_radix_fuzz_XXXXXX").string();
  require(mkdtemp(pattern.data()) != nullptr, "cannot create a temporary directory");
  g_dir = pattern;
  std::atexit(removeDir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 3) {
    case 0:
      fuzzFiles(data + 1, size - 1);
      break;
    case 1:
      fuzzFlags(data + 1, size - 1);
      break;
    default:
      fuzzUint(data + 1, size - 1);
      break;
  }
  return 0;
}
