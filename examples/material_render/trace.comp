#version 460
// material_render, pass 1: cast one camera ray per pixel, follow it through mirror bounces, and
// record the material it ends on (the material-ID buffer) and the hit to shade.
//
// Shared memory: none.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require

layout(local_size_x = 8, local_size_y = 8) in;

#include "render_shared.glsl"
#include "scene.glsl"

void main() {
  const uvec2 xy = gl_GlobalInvocationID.xy;
  if (xy.x >= pc.width || xy.y >= pc.height) return;
  const uint pixel = xy.y * pc.width + xy.x;

  // 1. The camera ray: a pinhole at `eye` looking at `target`.
  const vec3 eye = vec3(0.0, 1.3, -3.8);
  const vec3 forward = normalize(vec3(0.0, 0.9, 1.5) - eye);
  const vec3 right = normalize(cross(vec3(0.0, 1.0, 0.0), forward));
  const vec3 up = cross(forward, right);
  const vec2 ndc = (vec2(xy) + 0.5) / vec2(pc.width, pc.height) * 2.0 - 1.0;
  const float aspect = float(pc.width) / float(pc.height);
  vec3 origin = eye;
  vec3 direction = normalize(forward * 1.6 + right * ndc.x * aspect - up * ndc.y);

  // 2. Bounce off mirrors; a ray still on a mirror after MAX_BOUNCES dies (the void material).
  vec3 throughput = vec3(1.0);
  uint material = MATERIAL_VOID;
  HitRecord record = HitRecord(vec4(0.0), vec4(0.0), vec4(direction, 0.0), vec4(0.0));
  for (uint bounce = 0u; bounce <= MAX_BOUNCES; ++bounce) {
    const Hit hit = intersect_scene(origin, direction);
    if (hit.material != MIRROR) {
      material = hit.material;
      record = HitRecord(vec4(origin + min(hit.t, 1e6) * direction, hit.t), vec4(hit.normal, 0.0),
                         vec4(direction, 0.0), vec4(throughput, 0.0));
      break;
    }
    origin += hit.t * direction;
    direction = reflect(direction, hit.normal);
    throughput *= vec3(0.85, 0.9, 0.95);
  }
  pc.ids.data[pixel] = material;
  pc.hits.data[pixel] = record;
}
