// The device context of every Google Benchmark program here, and the context lines every one of
// them reports: the library version, the device and its driver.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>

#include "vren_radix/context.h"

namespace vren::radix::bench {

inline void addDeviceContext(const Context& ctx) {
  const DeviceInfo& d = ctx.device();
  benchmark::AddCustomContext("vren_radix_version", VREN_RADIX_VERSION_STRING);
  benchmark::AddCustomContext("device", d.name + " (" + d.type + ")");
  benchmark::AddCustomContext("driver", d.driver);
}

// The context, its lines added; null after printing why, after the program's name.
inline std::unique_ptr<Context> createBenchContext(const char* program, const ContextOptions& options) {
  std::string error;
  std::unique_ptr<Context> ctx = Context::create(options, &error);
  if (!ctx) {
    std::fprintf(stderr, "%s: %s\n", program, error.c_str());
    return nullptr;
  }
  addDeviceContext(*ctx);
  return ctx;
}

}  // namespace vren::radix::bench
