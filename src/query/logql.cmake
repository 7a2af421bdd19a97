# The log query language (included by CMakeLists.txt in this folder).
if(TARGET vigil_logstore AND TARGET vigil_query)
  vigil_library(vigil_logql SOURCES logql.cc DEPS vigil_query vigil_logstore PkgConfig::RE2)
  vigil_test(logql_test SOURCES logql_test.cc DEPS vigil_logql)
endif()
