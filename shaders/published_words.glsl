// Words that workgroups of one dispatch publish for each other and poll (the sort's look-back,
// radix_lookback.glsl; the material sorter's fast path, materials_published.glsl). Each word
// carries its own flag, so no ordering between words is needed: relaxed device-scope atomics, or
// coherent volatile accesses where the driver keeps them inside loops and they cost less
// (NVIDIA's; lavapipe hoists volatile loads out of a polling loop).
//
// The including shader declares POLL_ATOMIC, a specialization constant: true for atomics.
#extension GL_KHR_memory_scope_semantics : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer PublishedAtomics { uint data[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent volatile buffer PublishedVolatiles {
  uint data[];
};

uint poll_word(PublishedAtomics words, uint at) {
  if (POLL_ATOMIC) return atomicLoad(words.data[at], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  return PublishedVolatiles(words).data[at];
}

void publish_word(PublishedAtomics words, uint at, uint value) {
  if (POLL_ATOMIC) atomicStore(words.data[at], value, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
  else PublishedVolatiles(words).data[at] = value;
}
