// Raw little-endian u32 files and output directories for the CLI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vren::radix::cli {

// Reads a whole file of u32 words. False with a one-sentence reason on failure.
bool readWords(const std::string& path, std::vector<uint32_t>* words, std::string* error);

// Writes to a temporary file beside `path`, then renames it into place: a failure never leaves
// a partial file at `path`.
bool writeWordsAtomically(const std::string& path, const uint32_t* words, size_t count, std::string* error);

// Creates the directory and its parents unless they exist. False with a one-sentence reason on
// failure.
bool createDirectories(const std::string& dir, std::string* error);

}  // namespace vren::radix::cli
