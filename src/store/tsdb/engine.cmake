# Embedded TSDB engine (included by CMakeLists.txt in this folder). Needs the
# codec library, which that file defines once chunk_codec.cc exists.
# GLOBAL: vigil_tsdb links RE2 publicly, so modules in other folders that link
# vigil_tsdb must be able to see the imported target too.
if(NOT TARGET PkgConfig::RE2)
  pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET GLOBAL re2)
endif()

if(TARGET vigil_tsdb_codec)
  vigil_library(vigil_tsdb
    SOURCES series_index.cc wal.cc head.cc chunk_store.cc catalog.cc
            db.cc db_maintain.cc
    DEPS vigil_core vigil_wire vigil_tsdb_codec vigil_store_common PkgConfig::RE2 Threads::Threads)

  vigil_test(tsdb_parts_test
    SOURCES series_index_test.cc wal_test.cc head_test.cc chunk_store_test.cc
    DEPS vigil_tsdb)
  vigil_test(tsdb_db_test
    SOURCES db_test.cc db_crash_test.cc db_select_test.cc
    DEPS vigil_tsdb)
endif()
