#version 460
// Benchmark helper (vren_radix_occupancy): how many workgroups that take SHARED_WORDS words of
// shared memory run at once. Each workgroup touches its shared memory, counts itself in `running`
// (keeping the most seen in `most`), spins for a while and leaves; enough workgroups are dispatched
// to fill the device several times over, so `most` ends at the number the device holds at once.
//
// Shared memory: 4 SHARED_WORDS bytes.
#extension GL_EXT_buffer_reference : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint SHARED_WORDS = 1;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Counters {
  uint running;  // workgroups between their arrival and their departure
  uint most;     // the most ever running at once
  uint sink;     // written only if the spin's value is impossible, so that the spin stays
};

layout(push_constant, std430) uniform OccupancyConstants {
  Counters counters;
  uint spin;  // iterations of the wait (below 65,535: some drivers end longer loops)
} pc;

shared uint s_words[SHARED_WORDS];

void main() {
  for (uint i = gl_LocalInvocationIndex; i < SHARED_WORDS; i += gl_WorkGroupSize.x) s_words[i] = i;
  barrier();
  if (gl_LocalInvocationIndex == 0u) atomicMax(pc.counters.most, atomicAdd(pc.counters.running, 1u) + 1u);
  uint v = s_words[(gl_LocalInvocationIndex * 7u) % SHARED_WORDS];
  for (uint i = 0u; i < pc.spin; ++i) v = v * 1664525u + 1013904223u;
  if (v == 0x9E3779B9u) pc.counters.sink = v;
  barrier();
  if (gl_LocalInvocationIndex == 0u) atomicAdd(pc.counters.running, 0xFFFFFFFFu);
}
