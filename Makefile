# Vigil: `make up` builds the vigil binary (and only it) and starts Vigil on
# this machine; `make test` builds everything else too and runs every test
# (unit, integration with real peers, and the ASan+UBSan and TSan builds). Both
# install the Debian packages they need first (scripts/deps.sh).

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# The tests of the threaded code (DESIGN.md: TSan for threaded code).
TSAN_TESTS := core_test collect_loop_test collect_system_test gpu_collector_test \
              tsdb_db_test ingester_test http_server_test routes_test \
              logstore_test logagent_test logtail_test query_engine_test \
              ship_test jobs_tracker_test
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
PREFIX     ?= /usr/local
VIGIL      := $(BUILD)/src/cli/vigil
CTEST      := ctest --output-on-failure --no-tests=error -j$(JOBS)

.PHONY: all build build-all install up down status test test-release test-asan test-tsan bench format clean

all: build

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

$(TSAN_BUILD)/build.ninja:
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVIGIL_TSAN=ON \
	  -DVIGIL_BUILD_BENCH=OFF $(CMAKE_ARGS)

$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DVIGIL_SANITIZE=ON \
	  -DVIGIL_BUILD_BENCH=OFF $(CMAKE_ARGS)

# The vigil binary and what it embeds (the web UI, `vigil demo`'s fake NVML):
# what `make up` runs, without the ~300 test and benchmark targets.
build:
	@scripts/deps.sh build
	@scripts/web.sh $(WEB_FLAGS)
	@$(MAKE) --no-print-directory $(BUILD)/build.ninja
	ninja -C $(BUILD) -j$(JOBS) vigil

# Everything: tests, benchmarks, fuzz replays.
build-all: build
	ninja -C $(BUILD) -j$(JOBS)

# Installs the binary without its debug info (about 1/20 of the size) as
# $(PREFIX)/bin/vigil, e.g. make install PREFIX=$$HOME/.local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX) --strip

# Starts Vigil in the background (or says it already runs). ARGS passes flags,
# e.g. make up ARGS="--listen 127.0.0.1:9400".
up: build
	@$(VIGIL) up $(ARGS)

down:
	@$(VIGIL) down $(ARGS)

status:
	@$(VIGIL) status $(ARGS)

# Tests need the UI bundle and its npm packages (the browser test registers
# only when they are there), so a missing node is an error here.
test:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory WEB_FLAGS=--require test-release test-asan test-tsan

test-release: build-all
	cd $(BUILD) && $(CTEST)

# Sanitizers catch memory and UB errors the release build hides. Timing-heavy
# peer comparisons run in the release build only (label: peer).
test-asan:
	@scripts/web.sh $(WEB_FLAGS)
	@$(MAKE) --no-print-directory $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD) -j$(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(CTEST) -LE peer

# ThreadSanitizer over the tests of the threaded code only (a whole TSan build
# would double CI time for code that runs on one thread).
test-tsan:
	@$(MAKE) --no-print-directory $(TSAN_BUILD)/build.ninja
	ninja -C $(TSAN_BUILD) -j$(JOBS) $(TSAN_TESTS)
	cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  $(CTEST) -R '^($(subst $(eval) ,|,$(strip $(TSAN_TESTS))))$$'

bench: build-all
	@scripts/deps.sh bench
	bench/run_all.sh

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
