// `vren-radix tiles`: packs a screen of u32 sort keys tile by tile on the GPU and writes the
// packed pixels, each tile's range, the final counter, and pictures of the keys before and after.
#pragma once

namespace vren::radix::cli {

// argv holds the options after the command name. Returns 0 on success, 1 on a runtime failure
// (unreadable or invalid input, no device), 2 on a usage error; messages go to stderr.
int runTiles(int argc, char** argv);

}  // namespace vren::radix::cli
