# Training metrics read from log lines (docs/training-metrics.md).
vigil_library(vigil_training_metrics
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/log_metrics.cc
  DEPS vigil_core)

vigil_test(training_metrics_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/log_metrics_test.cc
  DEPS vigil_training_metrics)
