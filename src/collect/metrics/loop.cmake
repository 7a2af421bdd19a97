vigil_library(vigil_collect_loop SOURCES loop.cc DEPS vigil_collect_metrics vigil_core vigil_wire)
vigil_test(collect_loop_test SOURCES loop_test.cc DEPS vigil_collect_loop)
