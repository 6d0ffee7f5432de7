// Command-line parsing shared by the CLI's commands.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vren_radix/vren_radix.h"

namespace vren::radix::cli {

// Exit codes: done, failed while running, and wrong usage.
constexpr int kOk = 0;
constexpr int kFailure = 1;
constexpr int kUsage = 2;

// "PROGRAM: message" and where the usage is, on stderr; returns kUsage. `program` is the command
// line's start, as in "vren-radix tiles".
int usageError(const std::string& program, const std::string& message);
// "PROGRAM: message" on stderr; returns kFailure.
int failure(const std::string& program, const std::string& message);

// Parses `--name value` pairs for the flags in `allowed`, and value-less switches from
// `switches`, which are stored with the value "1"; anything else is an error. A repeated flag
// keeps its last value. False with a one-sentence reason on failure.
bool parseFlags(int argc, char** argv, const std::vector<std::string>& allowed, std::map<std::string, std::string>* out,
                std::string* error, const std::vector<std::string>& switches = {});

// A decimal number of 1 to 19 digits, at most `max`. False otherwise (*value may then hold the
// parsed number).
bool parseUint(const std::string& text, uint64_t max, uint64_t* value);

// `text` cut at every `separator`: "256x4" -> {"256", "4"}, "" -> {""}.
std::vector<std::string> splitOn(const std::string& text, char separator);

// A sorter tuning as THREADSxKEYS or THREADSxKEYSxDIGIT_BITS (digit bits 4 or 8), e.g. 256x4x8.
// False with a one-sentence reason on failure.
bool parseTuning(const std::string& text, TuningConfig* out, std::string* error);

}  // namespace vren::radix::cli
