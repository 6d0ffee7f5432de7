// The OR matcher's words (radix_match_or.glsl), apart from the matcher so that a shader can lay
// its shared memory out around them before it includes the matcher: per bin, one word per 32
// lanes of the workgroup. The includer has declared its workgroup size and includes
// radix_common.glsl.
#ifndef VREN_RADIX_MATCH_OR_SIZE
#define VREN_RADIX_MATCH_OR_SIZE

const uint MATCH_OR_SIZE = (gl_WorkGroupSize.x + 31u) / 32u * BINS;

#endif
