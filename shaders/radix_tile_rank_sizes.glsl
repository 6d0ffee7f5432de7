// The tile ranking's counters (radix_tile_rank.glsl): their packing and their size, apart from
// the ranking so that a shader can lay its shared memory out around them before it includes the
// ranking (radix_onesweep.comp lends them the stage); with them the OR matcher's words. The
// includer declares MAX_SUBGROUPS and its workgroup size, and includes radix_common.glsl.
#ifndef VREN_RADIX_TILE_RANK_SIZES
#define VREN_RADIX_TILE_RANK_SIZES

#include "radix_match_or_size.glsl"

layout(constant_id = VREN_RADIX_SPEC_RANK_PACKED) const bool RANK_PACKED = false;

const uint RANK_UNIT_BINS = RANK_PACKED ? 2u : 1u;  // bins per counter word
const uint RANK_UNITS = BINS / RANK_UNIT_BINS;       // counter words per subgroup
const uint RANK_COUNTER_SIZE = MAX_SUBGROUPS * RANK_UNITS;

#endif
