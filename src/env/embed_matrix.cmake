# Writes the matrix's data into a C++ source as a raw string (run by
# src/env/CMakeLists.txt at build time, so editing the data rebuilds one file
# and does not re-run CMake):
#   cmake -DIN=data/matrix.txt -DTEMPLATE=builtin_matrix.cc.in -DOUT=builtin_matrix.cc -P embed_matrix.cmake
file(READ ${IN} VIGIL_MATRIX_TEXT)
string(FIND "${VIGIL_MATRIX_TEXT}" ")vigil_matrix" delimiter_at)
if(NOT delimiter_at EQUAL -1)
  message(FATAL_ERROR "${IN} holds the raw string's delimiter \")vigil_matrix\"")
endif()
configure_file(${TEMPLATE} ${OUT} @ONLY)
