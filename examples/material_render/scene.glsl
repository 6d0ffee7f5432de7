// The material_render example's scene and materials, shared by the ray caster (trace.comp) and
// the shading passes (shade.comp): a ground plane, a few spheres, two facing mirrors, a sky.
//
// Materials 0..5 are surfaces, each with its own shading cost; MATERIAL_SKY is where rays
// escape and MATERIAL_VOID where they die after MAX_BOUNCES mirror bounces (never shaded).

const uint MATERIAL_MATTE = 0u;    // Lambert, shadowed: cheap
const uint MATERIAL_CHECKER = 1u;  // procedural checker floor, shadowed
const uint MATERIAL_MARBLE = 2u;   // 3D value-noise turbulence: expensive
const uint MATERIAL_GLOSSY = 3u;   // Blinn-Phong from three lights, shadowed
const uint MATERIAL_GOLD = 4u;     // Fresnel metal reflecting the sky
const uint MATERIAL_GLOW = 5u;     // emissive: trivial
const uint MATERIAL_SKY = 6u;
const uint MATERIAL_VOID = 7u;
const uint MATERIAL_COUNT = 8u;
const uint MIRROR = 100u;  // redirects rays; not a shading material
const uint MAX_BOUNCES = 1u;

struct Sphere {
  vec3 centre;
  float radius;
  uint material;
};

const uint SPHERE_COUNT = 7u;
const Sphere SPHERES[SPHERE_COUNT] = Sphere[](
    Sphere(vec3(-1.7, 0.7, 1.2), 0.7, MATERIAL_MATTE),
    Sphere(vec3(0.1, 0.9, 2.0), 0.9, MATERIAL_MARBLE),
    Sphere(vec3(1.8, 0.6, 1.0), 0.6, MATERIAL_GLOSSY),
    Sphere(vec3(0.9, 0.35, 0.0), 0.35, MATERIAL_GOLD),
    Sphere(vec3(-0.6, 0.3, -0.2), 0.3, MATERIAL_GLOW),
    Sphere(vec3(-0.95, 2.2, 3.6), 0.9, MIRROR),
    Sphere(vec3(0.95, 2.25, 3.6), 0.9, MIRROR));

const vec3 SUN = vec3(0.48, 0.76, -0.44);  // normalised below
const float NO_HIT = 1e30;

struct Hit {
  float t;
  vec3 normal;
  uint material;
};

// Nearest hit along origin + t * direction, t > 1e-3.
Hit intersect_scene(vec3 origin, vec3 direction) {
  Hit hit = Hit(NO_HIT, vec3(0.0), MATERIAL_SKY);
  if (direction.y < 0.0) {
    const float t = -origin.y / direction.y;
    if (t > 1e-3) hit = Hit(t, vec3(0.0, 1.0, 0.0), MATERIAL_CHECKER);
  }
  for (uint i = 0u; i < SPHERE_COUNT; ++i) {
    const vec3 oc = origin - SPHERES[i].centre;
    const float b = dot(oc, direction);
    const float c = dot(oc, oc) - SPHERES[i].radius * SPHERES[i].radius;
    const float disc = b * b - c;
    if (disc < 0.0) continue;
    float t = -b - sqrt(disc);
    if (t <= 1e-3) t = -b + sqrt(disc);
    if (t > 1e-3 && t < hit.t)
      hit = Hit(t, (origin + t * direction - SPHERES[i].centre) / SPHERES[i].radius, SPHERES[i].material);
  }
  return hit;
}

float shadow(vec3 position, vec3 normal, vec3 light) {
  return intersect_scene(position + normal * 2e-3, light).t < NO_HIT ? 0.25 : 1.0;
}

vec3 sky_colour(vec3 direction) {
  const float sun = pow(max(dot(direction, normalize(SUN)), 0.0), 200.0);
  const vec3 horizon = vec3(0.75, 0.85, 1.0);
  const vec3 zenith = vec3(0.25, 0.45, 0.9);
  return mix(horizon, zenith, clamp(direction.y, 0.0, 1.0)) + vec3(1.0, 0.9, 0.6) * sun;
}

float hash3(uvec3 p) {
  uint h = p.x * 0x8da6b343u ^ p.y * 0xd8163841u ^ p.z * 0xcb1ab31fu;
  h ^= h >> 13u;
  h *= 0x85ebca6bu;
  h ^= h >> 16u;
  return float(h & 0xFFFFu) / 65535.0;
}

float value_noise(vec3 p) {
  const vec3 cell = floor(p);
  const vec3 f = p - cell;
  const vec3 w = f * f * (3.0 - 2.0 * f);
  const uvec3 c = uvec3(ivec3(cell) + 1024);
  float n = 0.0;
  for (uint corner = 0u; corner < 8u; ++corner) {
    const uvec3 o = uvec3(corner & 1u, (corner >> 1u) & 1u, corner >> 2u);
    const vec3 k = mix(1.0 - w, w, vec3(o));
    n += hash3(c + o) * k.x * k.y * k.z;
  }
  return n;
}

vec3 shade_surface(uint material, vec3 position, vec3 normal, vec3 direction) {
  const vec3 sun = normalize(SUN);
  const float lit = max(dot(normal, sun), 0.0);
  switch (material) {
    case MATERIAL_MATTE:
      return vec3(0.8, 0.15, 0.1) * (0.15 + lit * shadow(position, normal, sun));
    case MATERIAL_CHECKER: {
      const bool odd = ((int(floor(position.x)) + int(floor(position.z))) & 1) != 0;
      const vec3 albedo = odd ? vec3(0.85) : vec3(0.2, 0.22, 0.25);
      const float fade = exp(-0.02 * dot(position.xz, position.xz));
      return mix(sky_colour(vec3(0.0, 0.2, 1.0)) * 0.5, albedo * (0.2 + lit * shadow(position, normal, sun)), fade);
    }
    case MATERIAL_MARBLE: {
      float turbulence = 0.0;
      float scale = 1.0;
      for (uint octave = 0u; octave < 10u; ++octave) {
        turbulence += abs(value_noise(position * 3.0 * scale) - 0.5) / scale;
        scale *= 2.0;
      }
      const float vein = 0.5 + 0.5 * sin(position.x * 6.0 + turbulence * 9.0);
      const vec3 albedo = mix(vec3(0.35, 0.3, 0.28), vec3(0.95, 0.93, 0.9), vein);
      return albedo * (0.2 + lit * shadow(position, normal, sun));
    }
    case MATERIAL_GLOSSY: {
      const vec3 lights[3] = vec3[](sun, normalize(vec3(-0.7, 0.5, -0.3)), normalize(vec3(0.2, 0.9, 0.6)));
      vec3 colour = vec3(0.05, 0.1, 0.3);
      for (uint i = 0u; i < 3u; ++i) {
        const float visible = shadow(position, normal, lights[i]);
        const vec3 h = normalize(lights[i] - direction);
        colour += visible * (vec3(0.1, 0.25, 0.8) * max(dot(normal, lights[i]), 0.0) +
                             vec3(0.6) * pow(max(dot(normal, h), 0.0), 64.0)) / 2.0;
      }
      return colour;
    }
    case MATERIAL_GOLD: {
      const vec3 f0 = vec3(1.0, 0.78, 0.34);
      const float cos_theta = clamp(-dot(direction, normal), 0.0, 1.0);
      const vec3 fresnel = f0 + (1.0 - f0) * pow(1.0 - cos_theta, 5.0);
      return fresnel * sky_colour(reflect(direction, normal)) * (0.3 + 0.7 * shadow(position, normal, sun));
    }
    case MATERIAL_GLOW:
      return vec3(2.0, 1.2, 0.4);
    case MATERIAL_SKY:
      return sky_colour(direction);
  }
  return vec3(1.0, 0.0, 1.0);
}

uint to_rgba8(vec3 colour) {
  return packUnorm4x8(vec4(sqrt(clamp(colour, 0.0, 1.0)), 1.0));
}
