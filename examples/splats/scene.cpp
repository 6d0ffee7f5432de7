#include "scene.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "bench_common.h"

namespace vren::radix::splats {
namespace {

struct Random {
  bench::SplitMix64 bits;

  double uniform() { return bits.next() * 0x1p-32; }  // [0, 1)
  double range(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  double normal() {                                  // Box-Muller
    const double u = (bits.next() + 1.0) * 0x1p-32;  // (0, 1]: the logarithm stays finite
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * uniform());
  }
};

struct Vec3 {
  double x, y, z;
};

Vec3 unitVector(Random& random) {
  for (;;) {
    const Vec3 v{random.normal(), random.normal(), random.normal()};
    const double length = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
    if (length > 1e-6) return {v.x / length, v.y / length, v.z / length};
  }
}

Vec3 hsv(double hue, double saturation, double value) {
  const double h = (hue - std::floor(hue)) * 6.0;
  auto channel = [&](double offset) {
    const double k = std::fmod(offset + h, 6.0);
    return value - value * saturation * std::clamp(std::min(k, 4.0 - k), 0.0, 1.0);
  };
  return {channel(5.0), channel(3.0), channel(1.0)};
}

// A splat at `p` with axes of about `size`, a random orientation, and `colour` varied a little.
Splat makeSplat(Random& random, Vec3 p, double size, Vec3 colour, double opacity) {
  Splat s{};
  s.position[0] = static_cast<float>(p.x);
  s.position[1] = static_cast<float>(p.y);
  s.position[2] = static_cast<float>(p.z);
  s.opacity = static_cast<float>(opacity);
  for (int axis = 0; axis < 3; ++axis) s.scale[axis] = static_cast<float>(size * std::exp(random.range(-0.7, 0.7)));
  double q[4], length = 0;
  do {
    length = 0;
    for (double& c : q) {
      c = random.normal();
      length += c * c;
    }
  } while (length < 1e-12);
  for (int i = 0; i < 4; ++i) s.rotation[i] = static_cast<float>(q[i] / std::sqrt(length));
  const double shade = random.range(0.8, 1.15);
  s.colour[0] = static_cast<float>(std::min(1.0, colour.x * shade));
  s.colour[1] = static_cast<float>(std::min(1.0, colour.y * shade));
  s.colour[2] = static_cast<float>(std::min(1.0, colour.z * shade));
  return s;
}

}  // namespace

std::vector<Splat> makeScene(uint32_t count, uint64_t seed) {
  Random random{{seed * 0x9E3779B97F4A7C15ull + 0x5EED}};
  const double size = 0.05 * std::cbrt(20000.0 / count);

  struct Cluster {
    Vec3 centre, spread;
    double hue;
  };
  Cluster clusters[5];
  for (int c = 0; c < 5; ++c) {
    clusters[c].centre = {random.range(-1.6, 1.6), random.range(-0.9, 0.9), random.range(-1.6, 1.6)};
    clusters[c].spread = {random.range(0.2, 0.55), random.range(0.2, 0.55), random.range(0.2, 0.55)};
    clusters[c].hue = c / 5.0 + random.range(0.0, 0.1);
  }

  std::vector<Splat> splats;
  splats.reserve(count);
  const uint32_t in_clusters = count / 2;
  const uint32_t on_inner_sphere = count / 6;
  for (uint32_t i = 0; i < count; ++i) {
    if (i < in_clusters) {
      const Cluster& c = clusters[i % 5];
      const Vec3 p{c.centre.x + c.spread.x * random.normal(), c.centre.y + c.spread.y * random.normal(),
                   c.centre.z + c.spread.z * random.normal()};
      splats.push_back(
          makeSplat(random, p, size, hsv(c.hue + random.range(-0.04, 0.04), 0.75, 1.0), random.range(0.35, 0.9)));
    } else if (i < in_clusters + on_inner_sphere) {
      // Latitude bands, warm and cool: the sphere's near and far halves overlap the clusters.
      const Vec3 d = unitVector(random);
      const double r = 1.5 + 0.02 * random.normal();
      const bool warm = static_cast<int>(std::floor((d.y + 1.0) * 4.0)) % 2 == 0;
      splats.push_back(makeSplat(random, {r * d.x, r * d.y, r * d.z}, size, hsv(warm ? 0.08 : 0.55, 0.6, 0.95),
                                 random.range(0.1, 0.35)));
    } else {
      // A dim dome around the camera's orbit: part of it is always behind the camera.
      const Vec3 d = unitVector(random);
      const double r = 9.0 + 0.3 * random.normal();
      splats.push_back(makeSplat(random, {r * d.x, r * d.y, r * d.z}, 3.0 * size,
                                 hsv(0.62 + 0.1 * d.y, 0.5, random.range(0.15, 0.35)), random.range(0.2, 0.6)));
    }
  }
  return splats;
}

Camera orbitCamera(uint32_t frame, uint32_t frames, uint32_t width, uint32_t height) {
  constexpr double kRadius = 6.5, kHeight = 1.5, kFovY = 50.0 * std::numbers::pi / 180.0, kNear = 0.2;
  const double angle = 2.0 * std::numbers::pi * frame / frames + 0.4;
  const Vec3 eye{kRadius * std::cos(angle), kHeight, kRadius * std::sin(angle)};
  auto normalise = [](Vec3 v) {
    const double length = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
    return Vec3{v.x / length, v.y / length, v.z / length};
  };
  auto cross = [](Vec3 a, Vec3 b) { return Vec3{a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; };
  const Vec3 forward = normalise({-eye.x, -eye.y, -eye.z});
  const Vec3 right = normalise(cross(forward, {0.0, 1.0, 0.0}));
  const Vec3 down = cross(forward, right);

  Camera c{};
  const Vec3 rows[3] = {right, down, forward};
  for (int r = 0; r < 3; ++r) {
    c.view[r][0] = static_cast<float>(rows[r].x);
    c.view[r][1] = static_cast<float>(rows[r].y);
    c.view[r][2] = static_cast<float>(rows[r].z);
    c.view[r][3] = static_cast<float>(-(rows[r].x * eye.x + rows[r].y * eye.y + rows[r].z * eye.z));
  }
  const double tan_y = std::tan(kFovY / 2.0);
  const double focal = height / (2.0 * tan_y);  // square pixels
  c.focal[0] = c.focal[1] = static_cast<float>(focal);
  c.centre[0] = static_cast<float>(width / 2.0);
  c.centre[1] = static_cast<float>(height / 2.0);
  c.clip[0] = static_cast<float>(SPLATS_FRUSTUM_MARGIN * (width / 2.0) / focal);
  c.clip[1] = static_cast<float>(SPLATS_FRUSTUM_MARGIN * tan_y);
  c.near_plane = static_cast<float>(kNear);
  return c;
}

}  // namespace vren::radix::splats
