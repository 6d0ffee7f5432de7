# vren_radix_embed_shaders(<target> <name>...)
# For each shaders/<name>.comp: glslangValidator -> spirv-val -> a header <name>.h in the build
# tree holding `vren_radix_<name without "radix_">_spv`, on <target>'s include path as
# "spirv/<name>.h".
# vren_radix_embed_shader_variant(<target> <variant> <source name> <define>...)
# The same for shaders/<source name>.comp compiled with -D<define>..., embedded as <variant>.
find_program(GLSLANG_VALIDATOR glslangValidator REQUIRED)
find_program(SPIRV_VAL spirv-val REQUIRED)

function(vren_radix_embed_shader_variant target name source)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/generated/spirv")
  file(MAKE_DIRECTORY "${out_dir}")
  set(shader_dir "${PROJECT_SOURCE_DIR}/shaders")
  set(src "${shader_dir}/${source}.comp")
  set(spv "${out_dir}/${name}.spv")
  set(hdr "${out_dir}/${name}.h")
  string(REPLACE "radix_" "" short "${name}")
  set(defines)
  foreach(define IN LISTS ARGN)
    list(APPEND defines "-D${define}")
  endforeach()
  add_custom_command(
    OUTPUT "${hdr}"
    COMMAND "${GLSLANG_VALIDATOR}" --quiet --target-env vulkan1.2 -I${shader_dir} ${defines}
            --depfile "${spv}.d" -o "${spv}" "${src}"
    COMMAND "${SPIRV_VAL}" --target-env vulkan1.2 "${spv}"
    COMMAND "${CMAKE_COMMAND}" -DINPUT=${spv} -DOUTPUT=${hdr} -DSYMBOL=vren_radix_${short}_spv
            -P "${PROJECT_SOURCE_DIR}/cmake/EmbedSpirv.cmake"
    DEPENDS "${src}" "${PROJECT_SOURCE_DIR}/cmake/EmbedSpirv.cmake"
    DEPFILE "${spv}.d"
    COMMENT "Compiling shader ${name} from ${source}.comp"
    VERBATIM)
  target_sources(${target} PRIVATE "${hdr}")
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_BINARY_DIR}/generated")
endfunction()

function(vren_radix_embed_shaders target)
  foreach(name IN LISTS ARGN)
    vren_radix_embed_shader_variant(${target} ${name} ${name})
  endforeach()
endfunction()
