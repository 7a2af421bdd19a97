# The embedded web UI (included by CMakeLists.txt). web/dist is built by
# scripts/web.sh (npm + esbuild) before CMake runs; cmake/embed_assets.cmake
# turns it into web_assets.cc on every build, so a rebuilt bundle is picked up
# without reconfiguring. Without web/dist the binary serves a page saying how
# to build the UI. docs/web-ui.md has the details.
if(TARGET vigil_net)
  set(VIGIL_WEB_DIST "${PROJECT_SOURCE_DIR}/web/dist" CACHE PATH "Built web UI to embed")
  set(_web_gen ${CMAKE_CURRENT_BINARY_DIR}/web_assets.cc)
  add_custom_target(vigil_web_assets
    COMMAND ${CMAKE_COMMAND} -DDIST=${VIGIL_WEB_DIST} -DOUT=${_web_gen}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_assets.cmake
    BYPRODUCTS ${_web_gen}
    COMMENT "Embedding the web UI from ${VIGIL_WEB_DIST}"
    VERBATIM)
  vigil_library(vigil_web_routes
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/web_routes.cc ${_web_gen}
    DEPS vigil_net vigil_core)
  add_dependencies(vigil_web_routes vigil_web_assets)
  vigil_test(web_routes_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/web_routes_test.cc
    DEPS vigil_web_routes)

  find_program(VIGIL_NODE node)
  # The UI's pure JavaScript parts (windows, alignment, both languages complete).
  if(VIGIL_NODE)
    add_test(NAME web_ui_unit_test
      COMMAND ${VIGIL_NODE} --test ${PROJECT_SOURCE_DIR}/web/test/unit.test.mjs
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/web)
    set_tests_properties(web_ui_unit_test PROPERTIES LABELS unit TIMEOUT 60)
  endif()

  # The browser test: the real binary on the fake NVML, driven in Debian's
  # chromium by playwright-core (web/test/ui.test.mjs). Registered only where
  # node, chromium and the npm packages (scripts/web.sh) are present.
  find_program(VIGIL_CHROMIUM NAMES chromium chromium-browser)
  if(VIGIL_NODE AND VIGIL_CHROMIUM AND EXISTS ${PROJECT_SOURCE_DIR}/web/node_modules/playwright-core)
    add_test(NAME web_ui_browser_test
      COMMAND ${VIGIL_NODE} --test --test-reporter=spec ${PROJECT_SOURCE_DIR}/web/test/ui.test.mjs
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/web)
    set_tests_properties(web_ui_browser_test PROPERTIES LABELS integration TIMEOUT 180
      ENVIRONMENT "VIGIL_BIN=$<TARGET_FILE:vigil>;VIGIL_FAKE_NVML=$<TARGET_FILE:fake_nvml>;VIGIL_SOURCE_DIR=${PROJECT_SOURCE_DIR};VIGIL_CHROMIUM=${VIGIL_CHROMIUM};VIGIL_WEB_ARTIFACTS=${PROJECT_BINARY_DIR}/web-test-artifacts")
  endif()
endif()
