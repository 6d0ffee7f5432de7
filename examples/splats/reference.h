// CPU references for the splats example's passes, and the checks of one frame's GPU results.
// The cull and the keys are computed with the same float operations as cull.comp, bit for bit;
// the projection and the blend with the same formulas (equal to within rounding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scene.h"
#include "splats_shared.h"

namespace vren::radix::splats {

// cullKeys()'s mark for a culled splat. No visible splat's key is 0: its depth is positive, so
// the key, the complement of the depth's bits, has its top bit set.
constexpr uint32_t kCulled = 0;

// The depth key of every splat, kCulled for the culled ones: cull.comp's steps 1 and 2.
std::vector<uint32_t> cullKeys(const std::vector<Splat>& splats, const Camera& camera);

// cull.comp's step 3 for one visible splat.
ProjectedSplat projectSplat(const Splat& splat, const Camera& camera);

// blend.comp over the splats `ids` (back to front): RGBA8 per pixel, rows top to bottom.
std::vector<uint32_t> renderImage(const std::vector<Splat>& splats, const Camera& camera,
                                  const std::vector<uint32_t>& ids, uint32_t width, uint32_t height);

// The cull's output, `count` slots of keys and splat IDs in the GPU's slot order, against the
// reference keys: the same splats, each once, with the same keys. Empty if they agree, else one
// sentence saying what differs.
std::string checkCull(const std::vector<uint32_t>& reference_keys, uint32_t gpu_count, const uint32_t* slot_keys,
                      const uint32_t* slot_ids);

// The sort's output against a stable sort of the slots by key: sorted keys, and sorted values
// (splat IDs, or with argsort slot indices). Empty if they agree, else one sentence.
std::string checkSort(uint32_t count, const uint32_t* slot_keys, const uint32_t* slot_ids, const uint32_t* sorted_keys,
                      const uint32_t* sorted_values, bool argsort);

// The largest difference of any channel of any pixel, and where it is.
struct ImageDifference {
  uint32_t max = 0;
  uint32_t x = 0;
  uint32_t y = 0;
};
ImageDifference compareImages(const uint32_t* a, const std::vector<uint32_t>& b, uint32_t width);

}  // namespace vren::radix::splats
