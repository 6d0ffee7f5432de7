// Sorts a few thousand keys through the installed (or add_subdirectory'd) vren_radix and checks
// the result. Exit code 0 when sorted.
#include <volk.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "vren_radix/context.h"
#include "vren_radix/vren_radix.h"

#ifdef VREN_RADIX_PACKAGE_VERSION
static_assert(std::string_view(VREN_RADIX_PACKAGE_VERSION) == VREN_RADIX_VERSION_STRING,
              "the vren_radix package version differs from vren_radix.h");
#endif

int main() {
  std::string error;
  auto ctx = vren::radix::Context::create({}, &error);
  if (!ctx) {
    std::fprintf(stderr, "consumer: %s\n", error.c_str());
    return 1;
  }
  // Global vk* entry points come from the system's volk.h, loaded by the library's volk.c.
  VkPhysicalDeviceProperties properties;
  vkGetPhysicalDeviceProperties(ctx->physicalDevice(), &properties);

  std::mt19937 rng(7);
  std::vector<uint32_t> keys(5000);
  for (uint32_t& k : keys) k = rng();
  if (!ctx->sort(keys, {}, {}, nullptr, &error)) {
    std::fprintf(stderr, "consumer: %s\n", error.c_str());
    return 1;
  }
  if (!std::is_sorted(keys.begin(), keys.end())) {
    std::fprintf(stderr, "consumer: the keys came back unsorted.\n");
    return 1;
  }
  const auto sorter = vren::radix::getSorterProperties(ctx->sorter());
  std::printf("vren_radix %s: sorted %zu keys on %s (tile %u)\n", VREN_RADIX_VERSION_STRING, keys.size(),
              properties.deviceName, sorter.tile_size);
  return 0;
}
