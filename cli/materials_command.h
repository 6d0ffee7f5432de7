// `vren-radix materials`: sorts a material-ID map on the GPU and writes the counts, offsets,
// indirect dispatch arguments and new-to-old map, plus pictures of the map before and after.
#pragma once

namespace vren::radix::cli {

// argv holds the options after the command name. Returns 0 on success, 1 on a runtime failure
// (unreadable or invalid input, no device), 2 on a usage error; messages go to stderr.
int runMaterials(int argc, char** argv);

}  // namespace vren::radix::cli
