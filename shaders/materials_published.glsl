// The fast path's scan runs beside its scatter, with no barrier between the two dispatches: the
// scan publishes each chunk's prefix and each material's total as PUBLISHED | value, in words of
// chunk_counts that the count step cleared, and the scatter polls them. After the chunks' counts
// (material_count * chunk_count words):
//   [material][chunk]  pixels of the material in earlier chunks
//   [material]         the material's total
// A word carries its own flag, so no ordering between words is needed: relaxed atomics, or
// volatile accesses where the driver keeps them in loops. Values stay below 2^31
// (max_pixel_count), clear of the flag.
#extension GL_KHR_memory_scope_semantics : require

// Drivers that compile volatile loads as plain ones, which a loop may hoist (lavapipe), poll with
// atomic loads; NVIDIA's pays for those (see radix_scatter_wide.comp).
layout(constant_id = VREN_RADIX_MATERIALS_SPEC_POLL_ATOMIC) const bool POLL_ATOMIC = true;

layout(buffer_reference, std430, buffer_reference_align = 4) coherent volatile buffer MaterialPublishedUints {
  uint data[];
};

const uint PUBLISHED = 1u << 31u;

uint published_prefix_at(uint material, uint chunk) {
  return (pc.material_count + material) * pc.chunk_count + chunk;
}

uint published_total_at(uint material) {
  return 2u * pc.material_count * pc.chunk_count + material;
}

uint poll(uint at) {
  if (POLL_ATOMIC) return atomicLoad(pc.chunk_counts.data[at], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  return MaterialPublishedUints(pc.chunk_counts).data[at];
}

void publish(uint at, uint value) {
  if (POLL_ATOMIC) {
    atomicStore(pc.chunk_counts.data[at], PUBLISHED | value, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                gl_SemanticsRelaxed);
  } else {
    MaterialPublishedUints(pc.chunk_counts).data[at] = PUBLISHED | value;
  }
}
