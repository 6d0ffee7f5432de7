// Creation under failing host allocations and failing Vulkan object creation, at every failure
// point: an error, a null out-pointer, a sentence, nothing leaked. Runs under the validation
// layer.
#include <doctest/doctest.h>
#include <volk.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu_test.h"
#include "reliability.h"
#include "vren_radix/materials.h"
#include "vren_radix/tiles.h"

namespace vren::radix::test {

namespace {

// What both failure injectors below count: calls, the one failed on purpose (the fail_at-th,
// 0-based), and frees of blocks or handles they never handed out.
class FailureCounter {
 public:
  void arm(uint64_t fail_at) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_at_ = fail_at;
    calls_ = 0;
    failures_ = 0;
    foreign_frees_ = 0;
  }
  uint64_t calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  uint64_t failures() {
    std::lock_guard<std::mutex> lock(mutex_);
    return failures_;
  }
  uint64_t foreignFrees() {
    std::lock_guard<std::mutex> lock(mutex_);
    return foreign_frees_;
  }

 protected:
  // Called with mutex_ held: false if this call is the one to fail.
  bool admitLocked() {
    const bool fail = calls_++ == fail_at_;
    failures_ += fail;
    return !fail;
  }

  std::mutex mutex_;
  uint64_t foreign_frees_ = 0;

 private:
  uint64_t fail_at_ = UINT64_MAX;
  uint64_t calls_ = 0;
  uint64_t failures_ = 0;
};

// Host allocation callbacks that fail the fail_at-th allocation or reallocation (0-based) and
// keep count of the blocks still live.
class FailingAllocator : public FailureCounter {
 public:
  FailingAllocator() {
    callbacks_.pUserData = this;
    callbacks_.pfnAllocation = allocate;
    callbacks_.pfnReallocation = reallocate;
    callbacks_.pfnFree = release;
  }

  const VkAllocationCallbacks* callbacks() const { return &callbacks_; }

  size_t live() {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }

 private:
  void* take(size_t size, size_t alignment) {
    void* pointer = nullptr;
    if (posix_memalign(&pointer, std::max(alignment, sizeof(void*)), std::max<size_t>(size, 1)) != 0) return nullptr;
    live_[pointer] = size;
    return pointer;
  }

  static VKAPI_ATTR void* VKAPI_CALL allocate(void* user, size_t size, size_t alignment, VkSystemAllocationScope) {
    auto* self = static_cast<FailingAllocator*>(user);
    std::lock_guard<std::mutex> lock(self->mutex_);
    if (size == 0 || !self->admitLocked()) return nullptr;
    return self->take(size, alignment);
  }

  static VKAPI_ATTR void* VKAPI_CALL reallocate(void* user, void* original, size_t size, size_t alignment,
                                                VkSystemAllocationScope scope) {
    if (!original) return allocate(user, size, alignment, scope);
    if (size == 0) {
      release(user, original);
      return nullptr;
    }
    auto* self = static_cast<FailingAllocator*>(user);
    std::lock_guard<std::mutex> lock(self->mutex_);
    auto it = self->live_.find(original);
    if (it == self->live_.end()) {
      ++self->foreign_frees_;
      return nullptr;
    }
    if (!self->admitLocked()) return nullptr;  // the original stays valid, as the spec asks
    const size_t old_size = it->second;
    void* pointer = self->take(size, alignment);
    if (!pointer) return nullptr;
    std::memcpy(pointer, original, std::min(old_size, size));
    self->live_.erase(original);
    std::free(original);
    return pointer;
  }

  static VKAPI_ATTR void VKAPI_CALL release(void* user, void* pointer) {
    if (!pointer) return;
    auto* self = static_cast<FailingAllocator*>(user);
    std::lock_guard<std::mutex> lock(self->mutex_);
    if (self->live_.erase(pointer) == 0) {
      ++self->foreign_frees_;
      return;
    }
    std::free(pointer);
  }

  VkAllocationCallbacks callbacks_{};
  std::unordered_map<void*, size_t> live_;
};

// Vulkan object creation through wrapped device entry points: the fail_at-th vkCreate* call
// (0-based) returns VK_ERROR_OUT_OF_DEVICE_MEMORY without reaching the driver, and the shader
// modules, pipeline layouts and pipelines (uncompiled ones) still alive are counted. Drivers may ignore
// pAllocator for some objects (lavapipe does for pipelines and layouts), so this sees leaks that
// the allocation callbacks cannot.
class FailingObjects : public FailureCounter {
 public:
  static PFN_vkGetDeviceProcAddr getDeviceProcAddr() { return wrappedGetDeviceProcAddr; }

  size_t live() {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }

 private:
  static FailingObjects& self() {
    static FailingObjects instance;
    return instance;
  }
  template <typename Handle>
  static uint64_t key(Handle h) {
    return reinterpret_cast<uint64_t>(h);
  }
  bool admit() {
    std::lock_guard<std::mutex> lock(mutex_);
    return admitLocked();
  }
  void add(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(handle);
  }
  // False for a handle this tracker never saw created (it then stays away from the driver).
  bool remove(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_.erase(handle)) return true;
    ++foreign_frees_;
    return false;
  }

  static VKAPI_ATTR VkResult VKAPI_CALL createShaderModule(VkDevice device, const VkShaderModuleCreateInfo* info,
                                                           const VkAllocationCallbacks* allocator,
                                                           VkShaderModule* module) {
    if (!self().admit()) return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    const VkResult result = self().create_module_(device, info, allocator, module);
    if (result == VK_SUCCESS) self().add(key(*module));
    return result;
  }
  static VKAPI_ATTR void VKAPI_CALL destroyShaderModule(VkDevice device, VkShaderModule module,
                                                        const VkAllocationCallbacks* allocator) {
    if (module && self().remove(key(module))) self().destroy_module_(device, module, allocator);
  }
  static VKAPI_ATTR VkResult VKAPI_CALL createPipelineLayout(VkDevice device, const VkPipelineLayoutCreateInfo* info,
                                                             const VkAllocationCallbacks* allocator,
                                                             VkPipelineLayout* layout) {
    if (!self().admit()) return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    const VkResult result = self().create_layout_(device, info, allocator, layout);
    if (result == VK_SUCCESS) self().add(key(*layout));
    return result;
  }
  static VKAPI_ATTR void VKAPI_CALL destroyPipelineLayout(VkDevice device, VkPipelineLayout layout,
                                                          const VkAllocationCallbacks* allocator) {
    if (layout && self().remove(key(layout))) self().destroy_layout_(device, layout, allocator);
  }
  static VKAPI_ATTR VkResult VKAPI_CALL createComputePipelines(VkDevice device, VkPipelineCache cache, uint32_t count,
                                                               const VkComputePipelineCreateInfo* infos,
                                                               const VkAllocationCallbacks* allocator,
                                                               VkPipeline* pipelines) {
    if (!self().admit()) {
      std::fill(pipelines, pipelines + count, VK_NULL_HANDLE);  // as the spec asks of a driver
      return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    const VkResult result = self().create_pipelines_(device, cache, count, infos, allocator, pipelines);
    for (uint32_t i = 0; i < count; ++i)
      if (pipelines[i]) self().add(key(pipelines[i]));
    return result;
  }
  static VKAPI_ATTR void VKAPI_CALL destroyPipeline(VkDevice device, VkPipeline pipeline,
                                                    const VkAllocationCallbacks* allocator) {
    if (pipeline && self().remove(key(pipeline))) self().destroy_pipeline_(device, pipeline, allocator);
  }

  template <typename Fn>
  static PFN_vkVoidFunction wrap(PFN_vkVoidFunction real, Fn* slot, Fn wrapper) {
    *slot = reinterpret_cast<Fn>(real);
    return real ? reinterpret_cast<PFN_vkVoidFunction>(wrapper) : nullptr;
  }
  static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL wrappedGetDeviceProcAddr(VkDevice device, const char* name) {
    FailingObjects& t = self();
    const PFN_vkVoidFunction real = vkGetDeviceProcAddr(device, name);
    const std::string n = name;
    if (n == "vkCreateShaderModule") return wrap(real, &t.create_module_, createShaderModule);
    if (n == "vkDestroyShaderModule") return wrap(real, &t.destroy_module_, destroyShaderModule);
    if (n == "vkCreatePipelineLayout") return wrap(real, &t.create_layout_, createPipelineLayout);
    if (n == "vkDestroyPipelineLayout") return wrap(real, &t.destroy_layout_, destroyPipelineLayout);
    // Pipelines are counted, not compiled: what is checked is that each one made is destroyed.
    if (n == "vkCreateComputePipelines")
      return wrap(reinterpret_cast<PFN_vkVoidFunction>(uncompiledPipelines), &t.create_pipelines_,
                  createComputePipelines);
    if (n == "vkDestroyPipeline")
      return wrap(reinterpret_cast<PFN_vkVoidFunction>(destroyUncompiled), &t.destroy_pipeline_, destroyPipeline);
    return real;
  }

  PFN_vkCreateShaderModule create_module_ = nullptr;
  PFN_vkDestroyShaderModule destroy_module_ = nullptr;
  PFN_vkCreatePipelineLayout create_layout_ = nullptr;
  PFN_vkDestroyPipelineLayout destroy_layout_ = nullptr;
  PFN_vkCreateComputePipelines create_pipelines_ = nullptr;
  PFN_vkDestroyPipeline destroy_pipeline_ = nullptr;
  std::set<uint64_t> live_;

  friend FailingObjects& failingObjects();
};

FailingObjects& failingObjects() {
  return FailingObjects::self();
}

// Fails step k = 0, 1, 2, ... (an allocation, or an object creation) of `create` until a
// creation sees no failure. Every failed creation must return the injected error, leave the
// out-pointer null, say why, and release all it took; the successful one must release
// everything on destroy. Returns the number of steps the successful creation made.
template <typename Object, typename Injector, typename Create, typename Destroy>
uint64_t createUnderFailures(const char* what, Injector& injector, VkResult injected, Create create, Destroy destroy) {
  constexpr uint64_t kMaxSteps = 100000;
  for (uint64_t k = 0; k < kMaxSteps; ++k) {
    INFO(what << ": step " << k << " fails");
    injector.arm(k);
    Object* object = reinterpret_cast<Object*>(uintptr_t{16});  // must be overwritten
    std::string why;
    const VkResult result = create(&object, &why);
    const bool failed_one = injector.failures() > 0;
    if (result == VK_SUCCESS) {
      REQUIRE(object != nullptr);
      const uint64_t steps = injector.calls();
      destroy(object);
      CHECK(injector.live() == 0);
      CHECK(injector.foreignFrees() == 0);
      // A driver may survive a failed allocation (e.g. a cache); then keep going.
      if (!failed_one) {
        injector.arm(UINT64_MAX);
        return steps;
      }
      continue;
    }
    REQUIRE(failed_one);  // nothing else may make creation fail here
    CHECK(result == injected);
    CHECK(object == nullptr);
    CHECK(!why.empty());
    CHECK(injector.live() == 0);
    CHECK(injector.foreignFrees() == 0);
  }
  FAIL(what << ": creation still fails after " << kMaxSteps << " steps");
  return 0;
}

// Creates each kind of object with `configure` applied to its create info, failing step k of
// `injector` for every k, and returns the step counts of the sorter, the tile packer and the
// material sorter.
template <typename Injector, typename Configure>
std::vector<uint64_t> createEachUnderFailures(Context& ctx, Injector& injector, VkResult injected,
                                              Configure configure) {
  // One object kind: its create info with `configure` applied, created and destroyed.
  auto each = [&]<typename Object, typename Info>(const char* what, VkResult (*create)(const Info&, Object**, std::string*),
                                                  void (*destroy)(Object*)) {
    return createUnderFailures<Object>(
        what, injector, injected,
        [&](Object** out, std::string* why) {
          Info info = ctx.template createInfo<Info>();
          configure(info.binding.allocator, info.binding.get_device_proc_addr);
          return create(info, out, why);
        },
        destroy);
  };
  std::vector<uint64_t> steps;
  steps.push_back(each("createSorter", createSorter, destroySorter));
  steps.push_back(each("createTilePacker", createTilePacker, destroyTilePacker));
  steps.push_back(each("createMaterialSorter", createMaterialSorter, destroyMaterialSorter));
  return steps;
}

std::string describeSteps(const std::vector<uint64_t>& steps) {
  return "sorter " + std::to_string(steps[0]) + ", tile packer " + std::to_string(steps[1]) + ", material sorter " +
         std::to_string(steps[2]);
}

}  // namespace

TEST_CASE_FIXTURE(GpuTest,
                  "reliability: creation under failing host allocations leaks nothing" * doctest::test_suite("host")) {
  FailingAllocator allocator;
  // lavapipe makes pipelines without the callbacks: there they are counted, not compiled.
  const bool cpu = onCpuDevice();
  const std::vector<uint64_t> steps =
      createEachUnderFailures(context(), allocator, VK_ERROR_OUT_OF_HOST_MEMORY,
                              [&](const VkAllocationCallbacks*& callbacks, PFN_vkGetDeviceProcAddr& gdpa) {
                                callbacks = allocator.callbacks();
                                if (cpu) gdpa = uncompiledGetDeviceProcAddr;
                              });
  CHECK(g_uncompiled_live == 0);
  MESSAGE("host allocations through the callbacks while creating: " << describeSteps(steps));
  // The callbacks must reach the driver, or this test proves nothing.
  for (uint64_t n : steps) CHECK(n > 0);
}

TEST_CASE_FIXTURE(GpuTest, "reliability: creation under failing Vulkan object creation leaks nothing" *
                               doctest::test_suite("host")) {
  FailingObjects& objects = failingObjects();
  const std::vector<uint64_t> steps = createEachUnderFailures(
      context(), objects, VK_ERROR_OUT_OF_DEVICE_MEMORY,
      [](const VkAllocationCallbacks*&, PFN_vkGetDeviceProcAddr& gdpa) { gdpa = FailingObjects::getDeviceProcAddr(); });
  MESSAGE("shader module, layout and pipeline creations: " << describeSteps(steps));
  for (uint64_t n : steps) CHECK(n >= 3);
}

}  // namespace vren::radix::test
