#include "reference.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace vren::radix::splats {
namespace {

// cull.comp's view_row(): the same operations in the same order. The build turns off FMA
// contraction (-ffp-contract=off) so that each one is rounded on its own, as on the GPU.
float viewRow(const float row[4], const float p[3]) {
  return ((row[0] * p[0] + row[1] * p[1]) + row[2] * p[2]) + row[3];
}

struct Mat3 {
  float m[3][3];  // [row][column]
};

Mat3 multiply(const Mat3& a, const Mat3& b) {
  Mat3 r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
  return r;
}

Mat3 transpose(const Mat3& a) {
  Mat3 r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[j][i];
  return r;
}

uint32_t toUnorm8(float v) {
  return static_cast<uint32_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f));
}

}  // namespace

std::vector<uint32_t> cullKeys(const std::vector<Splat>& splats, const Camera& camera) {
  std::vector<uint32_t> keys(splats.size());
  for (size_t i = 0; i < splats.size(); ++i) {
    const float* p = splats[i].position;
    const float x = viewRow(camera.view[0], p), y = viewRow(camera.view[1], p), z = viewRow(camera.view[2], p);
    const float limit_x = camera.clip[0] * z, limit_y = camera.clip[1] * z;
    const bool culled = !(z > camera.near_plane) || std::fabs(x) > limit_x || std::fabs(y) > limit_y;
    keys[i] = culled ? kCulled : ~std::bit_cast<uint32_t>(z);
  }
  return keys;
}

ProjectedSplat projectSplat(const Splat& s, const Camera& camera) {
  const float* q = s.rotation;
  const float length = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const float x = q[0] / length, y = q[1] / length, z = q[2] / length, w = q[3] / length;
  const Mat3 rotation = {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                          {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                          {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
  const Mat3 scale = {{{s.scale[0], 0, 0}, {0, s.scale[1], 0}, {0, 0, s.scale[2]}}};
  Mat3 view_rotation{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) view_rotation.m[r][c] = camera.view[r][c];
  const Mat3 axes = multiply(multiply(view_rotation, rotation), scale);
  const Mat3 covariance = multiply(axes, transpose(axes));

  const float v[3] = {viewRow(camera.view[0], s.position), viewRow(camera.view[1], s.position),
                      viewRow(camera.view[2], s.position)};
  const float inv_z = 1.0f / v[2];
  const float jacobian[2][3] = {{camera.focal[0] * inv_z, 0, -camera.focal[0] * v[0] * inv_z * inv_z},
                                {0, camera.focal[1] * inv_z, -camera.focal[1] * v[1] * inv_z * inv_z}};
  float screen[2][2] = {};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k)
        for (int l = 0; l < 3; ++l) screen[i][j] += jacobian[i][k] * covariance.m[k][l] * jacobian[j][l];
  const float a = screen[0][0] + static_cast<float>(SPLATS_COVARIANCE_BLUR);
  const float b = screen[0][1];
  const float c = screen[1][1] + static_cast<float>(SPLATS_COVARIANCE_BLUR);
  const float det = a * c - b * b;
  const float mid = 0.5f * (a + c);
  const float lambda = mid + std::sqrt(std::max(0.1f, mid * mid - det));
  const float reach = 2.0f * std::log(std::max(s.opacity / static_cast<float>(SPLATS_MIN_ALPHA), 1.0f));

  ProjectedSplat p{};
  p.mean[0] = camera.focal[0] * v[0] * inv_z + camera.centre[0];
  p.mean[1] = camera.focal[1] * v[1] * inv_z + camera.centre[1];
  p.radius = std::sqrt(reach * lambda) + 1.0f;
  p.opacity = s.opacity;
  p.conic[0] = c / det;
  p.conic[1] = -b / det;
  p.conic[2] = a / det;
  for (int i = 0; i < 3; ++i) p.colour[i] = s.colour[i];
  return p;
}

std::vector<uint32_t> renderImage(const std::vector<Splat>& splats, const Camera& camera,
                                  const std::vector<uint32_t>& ids, uint32_t width, uint32_t height) {
  std::vector<float> colour(size_t{width} * height * 3, 0.0f), alpha(size_t{width} * height, 0.0f);
  const float min_alpha = static_cast<float>(SPLATS_MIN_ALPHA), max_alpha = static_cast<float>(SPLATS_MAX_ALPHA);
  for (const uint32_t id : ids) {
    const ProjectedSplat p = projectSplat(splats[id], camera);
    // Pixels whose centre (x + 0.5) lies within radius of the mean: blend.comp's tile test.
    auto first = [&](float mean) {
      return static_cast<int64_t>(std::max(0.0, std::ceil(double{mean} - p.radius - 0.5)));
    };
    auto last = [&](float mean, uint32_t size) {
      return static_cast<int64_t>(std::min(size - 1.0, std::floor(double{mean} + p.radius - 0.5)));
    };
    for (int64_t y = first(p.mean[1]); y <= last(p.mean[1], height); ++y) {
      for (int64_t x = first(p.mean[0]); x <= last(p.mean[0], width); ++x) {
        const float dx = (static_cast<float>(x) + 0.5f) - p.mean[0], dy = (static_cast<float>(y) + 0.5f) - p.mean[1];
        const float power = -0.5f * (p.conic[0] * dx * dx + p.conic[2] * dy * dy) - p.conic[1] * dx * dy;
        const float a = std::min(max_alpha, p.opacity * std::exp(power));
        if (a < min_alpha) continue;
        const size_t at = size_t(y) * width + size_t(x);
        for (int c = 0; c < 3; ++c) colour[at * 3 + c] = a * p.colour[c] + (1.0f - a) * colour[at * 3 + c];
        alpha[at] = a + (1.0f - a) * alpha[at];
      }
    }
  }
  std::vector<uint32_t> image(size_t{width} * height);
  for (size_t at = 0; at < image.size(); ++at) {
    uint32_t rgba = toUnorm8(alpha[at]) << 24;
    for (int c = 0; c < 3; ++c) rgba |= toUnorm8(colour[at * 3 + c] + (1.0f - alpha[at]) * kBackground[c]) << (8 * c);
    image[at] = rgba;
  }
  return image;
}

std::string checkCull(const std::vector<uint32_t>& reference_keys, uint32_t gpu_count, const uint32_t* slot_keys,
                      const uint32_t* slot_ids) {
  const size_t expected = reference_keys.size() - std::count(reference_keys.begin(), reference_keys.end(), kCulled);
  if (gpu_count != expected)
    return "the GPU found " + std::to_string(gpu_count) + " visible splats, the CPU reference " +
           std::to_string(expected) + ".";
  std::vector<bool> seen(reference_keys.size());
  char line[200];
  for (uint32_t slot = 0; slot < gpu_count; ++slot) {
    const uint32_t id = slot_ids[slot];
    if (id >= reference_keys.size())
      std::snprintf(line, sizeof(line), "visible slot %u holds splat ID %u, past the last splat.", slot, id);
    else if (seen[id])
      std::snprintf(line, sizeof(line), "splat %u is in the visible list twice (again at slot %u).", id, slot);
    else if (reference_keys[id] == kCulled)
      std::snprintf(line, sizeof(line), "splat %u is visible on the GPU but culled by the CPU reference.", id);
    else if (slot_keys[slot] != reference_keys[id])
      std::snprintf(line, sizeof(line), "splat %u has the key 0x%08X on the GPU and 0x%08X in the CPU reference.", id,
                    slot_keys[slot], reference_keys[id]);
    else {
      seen[id] = true;
      continue;
    }
    return line;
  }
  return {};
}

std::string checkSort(uint32_t count, const uint32_t* slot_keys, const uint32_t* slot_ids, const uint32_t* sorted_keys,
                      const uint32_t* sorted_values, bool argsort) {
  std::vector<uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return slot_keys[a] < slot_keys[b]; });
  char line[200];
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t slot = order[i];
    const uint32_t value = argsort ? slot : slot_ids[slot];
    if (sorted_keys[i] != slot_keys[slot])
      std::snprintf(line, sizeof(line), "sorted key %u is 0x%08X, but a stable sort of the visible slots gives 0x%08X.",
                    i, sorted_keys[i], slot_keys[slot]);
    else if (sorted_values[i] != value)
      std::snprintf(line, sizeof(line), "sorted value %u is %u, but a stable sort of the visible slots gives %s %u.", i,
                    sorted_values[i], argsort ? "slot" : "splat", value);
    else
      continue;
    return line;
  }
  return {};
}

ImageDifference compareImages(const uint32_t* a, const std::vector<uint32_t>& b, uint32_t width) {
  ImageDifference d;
  for (size_t at = 0; at < b.size(); ++at) {
    for (int shift = 0; shift < 32; shift += 8) {
      const int pa = (a[at] >> shift) & 0xFF, pb = (b[at] >> shift) & 0xFF;
      const uint32_t diff = static_cast<uint32_t>(std::abs(pa - pb));
      if (diff > d.max) d = {diff, static_cast<uint32_t>(at % width), static_cast<uint32_t>(at / width)};
    }
  }
  return d;
}

}  // namespace vren::radix::splats
