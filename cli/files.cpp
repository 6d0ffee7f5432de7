#include "files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace vren::radix::cli {

bool readWords(const std::string& path, std::vector<uint32_t>* words, std::string* error) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    *error = "Cannot read '" + path + "': " + std::strerror(errno) + ".";
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "'" + path + "' is not a regular file.";
    return false;
  }
  if (st.st_size % 4 != 0) {
    *error = "'" + path + "' holds " + std::to_string(st.st_size) +
             " bytes, not a multiple of 4: it must hold little-endian u32 words.";
    return false;
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *error = "Cannot open '" + path + "': " + std::strerror(errno) + ".";
    return false;
  }
  words->resize(static_cast<size_t>(st.st_size) / 4);
  const size_t got = words->empty() ? 0 : std::fread(words->data(), 4, words->size(), f);
  const bool ok = got == words->size() && !std::ferror(f);
  std::fclose(f);
  if (!ok) *error = "Reading '" + path + "' failed.";
  return ok;
}

bool writeWordsAtomically(const std::string& path, const uint32_t* words, size_t count, std::string* error) {
  const std::string temp = path + ".tmp-" + std::to_string(getpid());
  FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) {
    *error = "Cannot write '" + path + "': " + std::strerror(errno) + ".";
    return false;
  }
  bool ok = count == 0 || std::fwrite(words, 4, count, f) == count;
  ok = (std::fflush(f) == 0) && ok;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    *error = "Writing '" + path + "' failed: " + std::strerror(errno) + ".";
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

bool createDirectories(const std::string& dir, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec && std::filesystem::is_directory(dir)) return true;
  *error = "Cannot create the output directory '" + dir + "'" + (ec ? ": " + ec.message() : "") + ".";
  return false;
}

}  // namespace vren::radix::cli
