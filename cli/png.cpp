#include "png.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace vren::radix::png {
namespace {

uint32_t crc32(const uint8_t* data, size_t n, uint32_t crc = 0) {
  static uint32_t table[256];
  static bool ready = false;
  if (!ready) {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = true;
  }
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

void putBig32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
}

void chunk(std::vector<uint8_t>& out, const char type[4], const std::vector<uint8_t>& data) {
  putBig32(out, static_cast<uint32_t>(data.size()));
  const size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  putBig32(out, crc32(out.data() + start, out.size() - start));
}

}  // namespace

bool writeRgb(const std::string& path, uint32_t width, uint32_t height, const std::vector<uint8_t>& rgb,
              std::string* error) {
  if (rgb.size() != size_t{width} * height * 3 || width == 0 || height == 0) {
    *error = "Cannot write '" + path + "': the picture is empty or its size does not match.";
    return false;
  }
  // zlib stream of stored (uncompressed) deflate blocks over the filtered rows.
  std::vector<uint8_t> raw;
  raw.reserve((size_t{width} * 3 + 1) * height);
  for (uint32_t y = 0; y < height; ++y) {
    raw.push_back(0);  // filter: none
    raw.insert(raw.end(), rgb.begin() + size_t{y} * width * 3, rgb.begin() + size_t{y + 1} * width * 3);
  }
  std::vector<uint8_t> z = {0x78, 0x01};
  uint32_t a = 1, b = 0;
  for (uint8_t byte : raw) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  for (size_t at = 0; at < raw.size() || at == 0; at += 65535) {
    const size_t len = std::min<size_t>(65535, raw.size() - at);
    z.push_back(at + len >= raw.size() ? 1 : 0);
    z.push_back(len & 0xFF);
    z.push_back(len >> 8);
    z.push_back(~len & 0xFF);
    z.push_back((~len >> 8) & 0xFF);
    z.insert(z.end(), raw.begin() + at, raw.begin() + at + len);
    if (at + len >= raw.size()) break;
  }
  putBig32(z, (b << 16) | a);

  std::vector<uint8_t> file = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<uint8_t> header;
  putBig32(header, width);
  putBig32(header, height);
  header.insert(header.end(), {8, 2, 0, 0, 0});  // 8-bit RGB, deflate, no filter set, no interlace
  chunk(file, "IHDR", header);
  chunk(file, "IDAT", z);
  chunk(file, "IEND", {});

  const std::string temp = path + ".tmp-" + std::to_string(getpid());
  FILE* f = std::fopen(temp.c_str(), "wb");
  bool ok = f && std::fwrite(file.data(), 1, file.size(), f) == file.size();
  if (f) ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    *error = "Cannot write '" + path + "': " + std::strerror(errno) + ".";
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

void labelColour(uint32_t label, bool zero_is_black, uint8_t out[3]) {
  if (zero_is_black && label == 0) {
    out[0] = out[1] = out[2] = 0;
    return;
  }
  uint32_t h = label * 0x9E3779B1u;
  h ^= h >> 15;
  h *= 0x85EBCA77u;
  h ^= h >> 13;
  out[0] = static_cast<uint8_t>(64 + (h & 0xBF));
  out[1] = static_cast<uint8_t>(64 + ((h >> 8) & 0xBF));
  out[2] = static_cast<uint8_t>(64 + ((h >> 16) & 0xBF));
}

}  // namespace vren::radix::png
