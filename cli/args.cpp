#include "args.h"

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

}  // namespace vren::radix::cli
