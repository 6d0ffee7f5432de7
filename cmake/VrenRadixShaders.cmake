# vren_radix_embed_shaders(<target> <name>...)
# For each shaders/<name>.comp: glslangValidator -> spirv-val -> a header <name>.h in the build
# tree holding `vren_<name>_spv`, on <target>'s include path as "spirv/<name>.h".
find_program(GLSLANG_VALIDATOR glslangValidator REQUIRED)
find_program(SPIRV_VAL spirv-val REQUIRED)

function(vren_radix_embed_shaders target)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/generated/spirv")
  file(MAKE_DIRECTORY "${out_dir}")
  set(shader_dir "${PROJECT_SOURCE_DIR}/shaders")
  set(headers)
  foreach(name IN LISTS ARGN)
    set(src "${shader_dir}/${name}.comp")
    set(spv "${out_dir}/${name}.spv")
    set(hdr "${out_dir}/${name}.h")
    string(REPLACE "radix_" "" short "${name}")
    add_custom_command(
      OUTPUT "${hdr}"
      COMMAND "${GLSLANG_VALIDATOR}" --quiet --target-env vulkan1.2 -I${shader_dir}
              --depfile "${spv}.d" -o "${spv}" "${src}"
      COMMAND "${SPIRV_VAL}" --target-env vulkan1.2 "${spv}"
      COMMAND "${CMAKE_COMMAND}" -DINPUT=${spv} -DOUTPUT=${hdr} -DSYMBOL=vren_radix_${short}_spv
              -P "${PROJECT_SOURCE_DIR}/cmake/EmbedSpirv.cmake"
      DEPENDS "${src}" "${PROJECT_SOURCE_DIR}/cmake/EmbedSpirv.cmake"
      DEPFILE "${spv}.d"
      COMMENT "Compiling shader ${name}.comp"
      VERBATIM)
    list(APPEND headers "${hdr}")
  endforeach()
  target_sources(${target} PRIVATE ${headers})
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_BINARY_DIR}/generated")
endfunction()
