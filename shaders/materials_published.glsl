// The fast path's scan runs beside its scatter, with no barrier between the two dispatches: the
// scan publishes each chunk's prefix and each material's total as PUBLISHED | value, in words of
// chunk_counts that the count step cleared, and the scatter polls them. After the chunks' counts
// (material_count * chunk_count words):
//   [material][chunk]  pixels of the material in earlier chunks
//   [material]         the material's total
// Values stay below 2^31 (max_pixel_count), clear of the flag. Polls and stores as the sort's
// look-back makes them (published_words.glsl).

// Drivers that compile volatile loads as plain ones, which a loop may hoist (lavapipe), poll with
// atomic loads; NVIDIA's pays for those.
layout(constant_id = VREN_RADIX_MATERIALS_SPEC_POLL_ATOMIC) const bool POLL_ATOMIC = true;

#include "published_words.glsl"

const uint PUBLISHED = 1u << 31u;

uint published_prefix_at(uint material, uint chunk) {
  return (pc.material_count + material) * pc.chunk_count + chunk;
}

uint published_total_at(uint material) {
  return 2u * pc.material_count * pc.chunk_count + material;
}

uint poll(uint at) { return poll_word(PublishedAtomics(pc.chunk_counts), at); }

void publish(uint at, uint value) { publish_word(PublishedAtomics(pc.chunk_counts), at, PUBLISHED | value); }
