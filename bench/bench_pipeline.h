// A compute pipeline of one of the bench programs' own shaders: push constants, no descriptor
// sets (the shaders reach their buffers by device address), specialized when it is made. The
// layout and module stay for remaking it with other constants; all of it dies with the object.
#pragma once

#include <volk.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace vren::radix::bench {

class BenchPipeline {
 public:
  explicit BenchPipeline(VkDevice device) : device_(device) {}
  ~BenchPipeline() {
    if (pipeline_) vkDestroyPipeline(device_, pipeline_, nullptr);
    if (module_) vkDestroyShaderModule(device_, module_, nullptr);
    if (layout_) vkDestroyPipelineLayout(device_, layout_, nullptr);
  }
  BenchPipeline(const BenchPipeline&) = delete;
  BenchPipeline& operator=(const BenchPipeline&) = delete;

  // The layout (push_bytes of push constants) and the module of `code_bytes` of SPIR-V.
  bool init(const uint32_t* code, size_t code_bytes, uint32_t push_bytes, const char* what, std::string* error) {
    const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = code_bytes;
    module_info.pCode = code;
    if (vkCreatePipelineLayout(device_, &layout_info, nullptr, &layout_) != VK_SUCCESS ||
        vkCreateShaderModule(device_, &module_info, nullptr, &module_) != VK_SUCCESS) {
      *error = std::string("creating the ") + what + " pipeline's layout or shader module failed";
      return false;
    }
    return true;
  }

  // The pipeline, made anew with these specialization constants (null: the shader's defaults).
  bool make(const VkSpecializationInfo* specialization, const char* what, std::string* error) {
    if (pipeline_) vkDestroyPipeline(device_, pipeline_, nullptr);
    pipeline_ = VK_NULL_HANDLE;
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT, module_,
                  "main", specialization};
    info.layout = layout_;
    if (vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline_) != VK_SUCCESS) {
      pipeline_ = VK_NULL_HANDLE;
      *error = std::string("creating the ") + what + " pipeline failed";
      return false;
    }
    return true;
  }

  // Binds the pipeline and pushes `bytes` of constants.
  void bind(VkCommandBuffer cmd, const void* constants, uint32_t bytes) const {
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
    vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, bytes, constants);
  }

 private:
  VkDevice device_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace vren::radix::bench
