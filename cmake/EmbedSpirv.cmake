# cmake -DINPUT=x.spv -DOUTPUT=x.h -DSYMBOL=name -P EmbedSpirv.cmake
# Writes a header holding the SPIR-V words as `static const uint32_t SYMBOL[]`.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" length)
math(EXPR remainder "${length} % 8")
if(NOT remainder EQUAL 0 OR length EQUAL 0)
  message(FATAL_ERROR "${INPUT} is not a SPIR-V module (size not a multiple of 4 bytes)")
endif()
# SPIR-V is little-endian words: reverse each group of 4 bytes.
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "((0x........u,){8})" "\\1\n  " words "${words}")
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT}; do not edit.\n#pragma once\n#include <cstdint>\nstatic const uint32_t ${SYMBOL}[] = {\n  ${words}\n};\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
