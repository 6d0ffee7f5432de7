#version 460
// Benchmark helper: a device-local copy by a compute shader, 16 bytes per load and store, each
// workgroup striding over the buffer. What a sort pass's memory traffic can reach on devices
// whose vkCmdCopyBuffer is slower than their shaders (the H200 moves about 5x more this way).
//
// Shared memory: none.
#extension GL_EXT_buffer_reference : require

layout(local_size_x = 256) in;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer ReadVectors { uvec4 data[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer WriteVectors { uvec4 data[]; };

layout(push_constant, std430) uniform CopyConstants {
  ReadVectors source;
  WriteVectors destination;
  uint vectors;  // 16-byte elements to copy
} pc;

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.vectors; i += stride) pc.destination.data[i] = pc.source.data[i];
}
