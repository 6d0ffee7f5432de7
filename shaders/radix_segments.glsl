// Segments of a segmented sort or top-k: pc.segments holds pc.segment_count + 1 u32 offsets,
// segment s being elements [offsets[s], offsets[s + 1]). With VREN_RADIX_FLAG_INDIRECT the
// number of segments is the GPU-side u32 at pc.count_address, clamped to pc.segment_count.
// pc.segment_count 0 stands for no offsets: one segment of pc.count elements.
//
// Offsets are read clamped to pc.count, the most elements the buffers hold, so that whatever
// they hold (decreasing, past the end) no access leaves the buffers: a segment is then empty or
// cut short, never outside [0, pc.count).

uint segments_in_use() {
  if (pc.segment_count == 0u) return 1u;
  if ((pc.flags & VREN_RADIX_FLAG_INDIRECT) != 0u) return min(pc.count_address.data[0], pc.segment_count);
  return pc.segment_count;
}

uint offset_at(uint s) {
  if (pc.segment_count == 0u) return s == 0u ? 0u : pc.count;
  return min(pc.segments.data[s], pc.count);
}

// The element count: the offset after the last segment in use.
uint segmented_count() { return offset_at(segments_in_use()); }

// Segment s's elements: [x, y), y >= x.
uvec2 segment_range(uint s) {
  const uint first = offset_at(s);
  return uvec2(first, max(offset_at(s + 1u), first));
}

// The segment element i belongs to: the last of the first `segments` segments starting at or
// before i (empty segments start where the next one does, so the last is the non-empty one);
// 0 if none. A binary search: at most 32 steps, whatever the offsets hold.
uint segment_of(uint i, uint segments) {
  uint low = 0u, high = segments;  // the answer is in [low, high)
  while (high - low > 1u) {
    const uint middle = low + (high - low) / 2u;
    if (offset_at(middle) <= i) low = middle;
    else high = middle;
  }
  return low;
}

// Whether the one-dispatch ways take a segment of this many elements (pc.min_length,
// pc.max_length).
bool length_taken(uint length) { return length >= pc.min_length && (pc.max_length == 0u || length <= pc.max_length); }
