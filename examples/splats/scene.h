// The splats example's procedural scene and its orbiting camera.
#pragma once

#include <cstdint>
#include <vector>

#include "splats_shared.h"

namespace vren::radix::splats {

// Clear colour behind the splats (linear RGB).
constexpr float kBackground[3] = {0.015f, 0.018f, 0.035f};

// `count` splats, the same for the same count and seed: half in five ellipsoidal clusters around
// the origin, a sixth on a thin, faint sphere through them, the rest on a large sphere around the
// camera's orbit, so that some splats lie behind the camera or outside the frustum. Splats
// shrink as the count grows (by its cube root), so the picture keeps its density.
std::vector<Splat> makeScene(uint32_t count, uint64_t seed);

struct Camera {
  float view[3][4];  // world to view: rows right, down, forward; [3] the translation
  float focal[2];    // pixels
  float centre[2];   // pixels
  float clip[2];     // SPLATS_FRUSTUM_MARGIN * tan(half field of view), x and y
  float near_plane;
};

// Frame `frame` of `frames` of an orbit around the origin, looking at it, for a width x height
// image.
Camera orbitCamera(uint32_t frame, uint32_t frames, uint32_t width, uint32_t height);

}  // namespace vren::radix::splats
