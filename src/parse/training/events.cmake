# Failure and lifecycle events from log records, the Xid table, and the
# inspector behind `vigil inspect-log` (docs/training-events.md).
vigil_library(vigil_training_events
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/log_events.cc
    ${CMAKE_CURRENT_LIST_DIR}/xid.cc
    ${CMAKE_CURRENT_LIST_DIR}/wire_events.cc
  DEPS vigil_parse_logs vigil_wire vigil_core)

vigil_test(training_events_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/log_events_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/xid_test.cc
  DEPS vigil_training_events)

vigil_library(vigil_training_inspect
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/inspector.cc ${CMAKE_CURRENT_LIST_DIR}/tfevents.cc
  DEPS vigil_training_events vigil_training_metrics vigil_parse_logs vigil_core)

# The corpus test reads every tests/data/training/*/*.log with its
# hand-written .expected.jsonl.
vigil_test(training_inspect_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/inspector_test.cc ${CMAKE_CURRENT_LIST_DIR}/tfevents_test.cc
  DEPS vigil_training_inspect)
target_compile_definitions(training_inspect_test PRIVATE
  VIGIL_TRAINING_CORPUS="${PROJECT_SOURCE_DIR}/tests/data/training")
