// A minimal PNG writer (8-bit RGB, stored deflate blocks): pictures for people, no dependency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vren::radix::png {

// rgb holds width * height * 3 bytes, rows top to bottom. False with a reason on failure;
// the file is written to a temporary name and renamed into place.
bool writeRgb(const std::string& path, uint32_t width, uint32_t height, const std::vector<uint8_t>& rgb,
              std::string* error);

// A distinct, stable colour for an integer label (material, key, container); 0 stays black
// only when zero_is_black is set.
void labelColour(uint32_t label, bool zero_is_black, uint8_t out[3]);

}  // namespace vren::radix::png
