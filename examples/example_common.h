// Shared by the examples: a context whose validation messages are counted and printed, GPU
// buffers made through it and freed with the object on every path out of a function, and the
// usage error.
#pragma once

#include <cstdio>
#include <deque>
#include <memory>
#include <string>

#include <volk.h>

#include "vren_radix/context.h"

namespace vren::radix::examples {

// A usage error: "PROGRAM: message" and the usage text on stderr; returns 2, its exit code.
inline int usageError(const char* program, const std::string& message, const char* usage) {
  std::fprintf(stderr, "%s: %s\n%s", program, message.c_str(), usage);
  return 2;
}

// The device `device_index` (-1: the first GPU, else lavapipe); with `validate`, the validation
// layer and synchronization validation on, each message printed and counted in *messages (which
// must outlive the context). Null on failure, with the reason in *error.
inline std::unique_ptr<Context> createContext(int device_index, bool validate, uint32_t* messages,
                                              std::string* error) {
  ContextOptions options;
  options.device_index = device_index;
  options.validation = validate;
  options.synchronization_validation = validate;
  if (validate)
    options.on_message = [messages](const std::string& m) {
      ++*messages;
      std::fprintf(stderr, "validation: %s\n", m.c_str());
    };
  return Context::create(options, error);
}

struct Buffers {
  Context& ctx;
  std::deque<GpuBuffer> all;  // add() hands out pointers: no reallocation
  explicit Buffers(Context& c) : ctx(c) {}
  ~Buffers() {
    for (GpuBuffer& b : all) ctx.destroyBuffer(&b);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  // Null on failure, with the reason in *error.
  const GpuBuffer* add(VkDeviceSize size, VkBufferUsageFlags usage, bool host_visible, std::string* error) {
    GpuBuffer b;
    if (!ctx.createBuffer(size, usage, host_visible, &b, error)) return nullptr;
    all.push_back(b);
    return &all.back();
  }
};

}  // namespace vren::radix::examples
