#include "args.h"

#include <cstdio>

#include <algorithm>

namespace vren::radix::cli {

bool parseFlags(int argc, char** argv, const std::vector<std::string>& allowed, std::map<std::string, std::string>* out,
                std::string* error, const std::vector<std::string>& switches) {
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (std::find(switches.begin(), switches.end(), arg) != switches.end()) {
      (*out)[arg].assign(1, '1');  // not = "1": GCC 12 -O2 warns falsely (-Wrestrict) on that
      continue;
    }
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
  // 19 digits stay below 2^64, so std::stoull cannot throw.
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  *value = std::stoull(text);
  return *value <= max;
}

std::vector<std::string> splitOn(const std::string& text, char separator) {
  std::vector<std::string> parts;
  for (size_t begin = 0;;) {
    const size_t at = text.find(separator, begin);
    parts.push_back(text.substr(begin, at == std::string::npos ? std::string::npos : at - begin));
    if (at == std::string::npos) return parts;
    begin = at + 1;
  }
}

bool parseTuning(const std::string& text, TuningConfig* out, std::string* error) {
  const std::vector<std::string> parts = splitOn(text, 'x');
  uint64_t w = 0, k = 0, bits = 4;
  if ((parts.size() != 2 && parts.size() != 3) || !parseUint(parts[0], 1024, &w) || !parseUint(parts[1], 64, &k) ||
      !w || !k || (parts.size() == 3 && (!parseUint(parts[2], 8, &bits) || (bits != 4 && bits != 8)))) {
    *error = "--tuning takes THREADSxKEYS or THREADSxKEYSxDIGIT_BITS (4 or 8), e.g. 256x16 or 256x4x8, not '" +
             text + "'.";
    return false;
  }
  *out = {static_cast<uint32_t>(w), static_cast<uint32_t>(k), static_cast<uint32_t>(bits)};
  return true;
}

int usageError(const std::string& program, const std::string& message) {
  std::fprintf(stderr, "%s: %s\nRun `%s --help` for usage.\n", program.c_str(), message.c_str(), program.c_str());
  return kUsage;
}

int failure(const std::string& program, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program.c_str(), message.c_str());
  return kFailure;
}

}  // namespace vren::radix::cli
