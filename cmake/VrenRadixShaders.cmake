# vren_radix_embed_shaders(<target> <name>...)
# For each shaders/<name>.comp: glslangValidator -> spirv-val -> a header <name>.h in the build
# tree holding `vren_radix_<name without "radix_">_spv`, on <target>'s include path as
# "spirv/<name>.h".
# vren_radix_embed_shader_variant(<target> <variant> <source name> <define>...)
# The same for shaders/<source name>.comp compiled with -D<define>..., embedded as <variant>.
# vren_radix_embed_local_shaders(<target> <prefix> <name>...)
# The same for <name>.comp beside the calling CMakeLists.txt (an example's own passes, which may
# include shaders/ too), embedded as `<prefix>_<name>_spv` in "spirv/<prefix>_<name>.h".
find_program(GLSLANG_VALIDATOR glslangValidator REQUIRED)
find_program(SPIRV_VAL spirv-val REQUIRED)

# The commands that compile src to spv and validate it, in <out_var>; ARGN: -D and -I flags.
function(vren_radix_spirv_commands out_var src spv)
  set(${out_var}
      COMMAND "${GLSLANG_VALIDATOR}" --quiet --target-env vulkan1.2 -I${PROJECT_SOURCE_DIR}/shaders ${ARGN}
              --depfile "${spv}.d" -o "${spv}" "${src}"
      COMMAND "${SPIRV_VAL}" --target-env vulkan1.2 "${spv}"
      PARENT_SCOPE)
endfunction()

# One shader: src -> spirv/<name>.spv -> spirv/<name>.h holding <symbol>; ARGN: -D and -I flags.
function(vren_radix_spirv_header target src name symbol)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/generated/spirv")
  file(MAKE_DIRECTORY "${out_dir}")
  set(spv "${out_dir}/${name}.spv")
  set(hdr "${out_dir}/${name}.h")
  set(clock_flags)  # a profiling build's shaders read the clock
  if(VREN_RADIX_SHADER_CLOCKS)
    set(clock_flags -DVREN_RADIX_SHADER_CLOCKS)
  endif()
  vren_radix_spirv_commands(compile "${src}" "${spv}" ${ARGN} ${clock_flags})
  add_custom_command(
    OUTPUT "${hdr}"
    ${compile}
    COMMAND "${CMAKE_COMMAND}" -DINPUT=${spv} -DOUTPUT=${hdr} -DSYMBOL=${symbol}
            -P "${PROJECT_SOURCE_DIR}/cmake/EmbedSpirv.cmake"
    DEPENDS "${src}" "${PROJECT_SOURCE_DIR}/cmake/EmbedSpirv.cmake"
    DEPFILE "${spv}.d"
    COMMENT "Compiling shader ${name}"
    VERBATIM)
  target_sources(${target} PRIVATE "${hdr}")
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_BINARY_DIR}/generated")
endfunction()

function(vren_radix_embed_shader_variant target name source)
  string(REPLACE "radix_" "" short "${name}")
  set(defines)
  foreach(define IN LISTS ARGN)
    list(APPEND defines "-D${define}")
  endforeach()
  vren_radix_spirv_header(${target} "${PROJECT_SOURCE_DIR}/shaders/${source}.comp" ${name} vren_radix_${short}_spv
                          ${defines})
endfunction()

function(vren_radix_embed_shaders target)
  foreach(name IN LISTS ARGN)
    vren_radix_embed_shader_variant(${target} ${name} ${name})
  endforeach()
endfunction()

function(vren_radix_embed_local_shaders target prefix)
  foreach(name IN LISTS ARGN)
    vren_radix_spirv_header(${target} "${CMAKE_CURRENT_SOURCE_DIR}/${name}.comp" ${prefix}_${name} ${prefix}_${name}_spv
                            -I${CMAKE_CURRENT_SOURCE_DIR})
  endforeach()
endfunction()
