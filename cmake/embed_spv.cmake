# Turns one SPIR-V file into a C array: spv_<NAME>[] (uint32 words) and spv_<NAME>_size (bytes).
# Run as: cmake -DIN=x.spv -DOUT=x.spv.c -DNAME=x -P embed_spv.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" nhex)
math(EXPR nbytes "${nhex} / 2")
math(EXPR rem "${nbytes} % 4")
if(NOT rem EQUAL 0)
  message(FATAL_ERROR "${IN}: SPIR-V size ${nbytes} is not a multiple of 4")
endif()
# SPIR-V words are little-endian in the file; rebuild each word as 0xDDCCBBAA.
string(REGEX REPLACE "([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])"
       "0x\\4\\3\\2\\1u," words "${hex}")
file(WRITE ${OUT} "/* generated from ${NAME}.spv */\n#include <stddef.h>\n#include <stdint.h>\n"
     "const uint32_t spv_${NAME}[] = {${words}};\nconst size_t spv_${NAME}_size = ${nbytes};\n")
