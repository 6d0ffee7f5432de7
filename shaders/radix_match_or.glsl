// The OR matcher: the lanes of a subgroup whose keys share a bin (their peers), found in shared
// memory instead of by ballots over the digit's bits. Each lane sets its bit in its bin's word and
// reads the word back: two shared accesses and a subgroup barrier. Per bin, one word per 32 lanes
// of the workgroup; subgroups of fewer lanes share a word, each in its own bits (and then read and
// clear it atomically, as the other subgroups change the other bits). It runs where a subgroup
// fits a word (match_or_runs) and the includer has MATCH_OR_SIZE words to lend.
//
// Per round: match_or_peers (every lane of the subgroup), then, after a subgroup barrier that
// orders every peer's read before it, one peer clears their bits (match_or_clear) before the
// next round's match_or_peers, which a subgroup barrier orders.
//
// The includer defines MATCH_OR_WORDS, a shared uint array free while the rounds run, zeroed by
// match_or_zero() and behind a barrier before the first round; BINS is radix_common.glsl's.

#include "radix_match_or_size.glsl"

bool match_or_runs() { return gl_SubgroupSize <= 32u; }

// Every thread of the workgroup: the words the rounds use, zeroed; a barrier must follow.
void match_or_zero() {
  for (uint j = gl_LocalInvocationIndex; j < MATCH_OR_SIZE; j += gl_WorkGroupSize.x) MATCH_OR_WORDS[j] = 0u;
}

// This lane's bit in MATCH_OR_WORDS for `bin`: the word (x) and the shift of its subgroup's bits
// in it (y).
uvec2 match_or_place(uint bin) {
  const uint share = 32u / gl_SubgroupSize;  // subgroups per word
  return uvec2(gl_SubgroupID / share * BINS + bin, gl_SubgroupID % share * gl_SubgroupSize);
}

// The subgroup's lanes (bit i: lane i) whose key has `bin`; lanes without a key (valid false)
// set no bit and get 0.
uint match_or_peers(uint bin, bool valid, out uvec2 place) {
  place = match_or_place(bin);
  const bool own_word = gl_SubgroupSize == 32u;
  if (valid) atomicOr(MATCH_OR_WORDS[place.x], 1u << (place.y + gl_SubgroupInvocationID));
  subgroup_barrier_shared();  // every peer's bit set
  if (!valid) return 0u;
  const uint word = own_word ? MATCH_OR_WORDS[place.x] : atomicOr(MATCH_OR_WORDS[place.x], 0u);
  return own_word ? word : (word >> place.y) & ((1u << gl_SubgroupSize) - 1u);
}

// One peer clears the peers' bits for the next round.
void match_or_clear(uvec2 place, uint peers) {
  if (gl_SubgroupSize == 32u) MATCH_OR_WORDS[place.x] = 0u;
  else atomicAnd(MATCH_OR_WORDS[place.x], ~(peers << place.y));
}
