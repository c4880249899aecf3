# SPDX-License-Identifier: MIT
#
# Convenience wrapper over CMake, which stays the source of truth (see
# docs/internals/build.md). Every target configures the build directory on
# first use, so `make test` or `make demo` works on a fresh clone.
#
#   make [build|test|test-loaded|demo|demo-synthetic|demo-python|bench|
#         install|python|
#         fuzz|fuzz-long|format|format-check|clean]
#   make test SAN=address,undefined   separate build-san-address-undefined/
#   make test-loaded                  the suite beside one CPU hog per core
#   make test SAN=thread TESTS=ring   only runner tests whose name has "ring"
#   make test WERROR=1                warnings are errors (CI)
#   make install PREFIX=$$HOME/.local
#   make python [PYTHON=...]          pip install of bindings/python

SAN      ?=
WERROR   ?= 0
PREFIX   ?= /usr/local
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_TYPE ?= RelWithDebInfo
# Extra arguments for the CMake configure step, e.g. CMAKE_ARGS=-G\ Ninja.
CMAKE_ARGS ?=
# Runner test-name filters (substrings); empty runs the whole suite via ctest.
TESTS    ?=
# Fuzzing: build directory, seconds per target, clang to use.
FUZZ_BUILD ?= build-fuzz
FUZZ_TIME  ?= 60
FUZZ_CC    ?= clang
FUZZ_CXX   ?= clang++

CMAKE    ?= cmake
CTEST    ?= ctest

ifeq ($(strip $(SAN)),)
BUILD ?= build
else
BUILD ?= build-san-$(subst $(comma),-,$(strip $(SAN)))
endif
comma := ,

ifneq ($(filter 1 ON on yes true,$(WERROR)),)
PP_WERROR := ON
else
PP_WERROR := OFF
endif

FORMAT_DIRS := include src tests bench examples fuzz
FORMAT_FILES = $(shell find $(FORMAT_DIRS) -type f \( -name '*.c' -o \
	-name '*.h' \) 2>/dev/null | sort)
FUZZ_NAMES = $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))

# Configure when the cache is missing or an option changed; the stamp holds
# the options last used so that `make WERROR=1` after `make` reconfigures.
CONFIG := -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DPP_WERROR=$(PP_WERROR) \
	-DPP_SANITIZE=$(SAN) $(CMAKE_ARGS)

.PHONY: all deps configure build test test-loaded demo demo-synthetic \
	demo-python bench \
	install python \
	fuzz fuzz-build fuzz-long format format-check clean FORCE
.DEFAULT_GOAL := build

all: build

deps:
	@bash scripts/deps.sh

$(BUILD)/.pp-config: FORCE
	@mkdir -p $(BUILD)
	@if [ ! -f $(BUILD)/CMakeCache.txt ] || \
	   [ "$$(cat $@ 2>/dev/null)" != '$(CONFIG)' ]; then \
	  echo "$(CMAKE) -S . -B $(BUILD) $(CONFIG)"; \
	  $(CMAKE) -S . -B $(BUILD) $(CONFIG) && echo '$(CONFIG)' > $@; \
	fi

configure: deps $(BUILD)/.pp-config

build: configure
	$(CMAKE) --build $(BUILD) -j $(JOBS)

test: build
ifeq ($(strip $(TESTS)),)
	$(CTEST) --test-dir $(BUILD) --output-on-failure
else
	PP_BUILD_DIR=$(CURDIR)/$(BUILD) PP_SOURCE_DIR=$(CURDIR) \
	  $(BUILD)/pp-tests $(TESTS)
endif

# The same tests with a busy loop per core beside them (scripts/
# with-cpu-hogs.sh starts and stops them): no test may depend on how busy
# the machine is.
test-loaded: build
ifeq ($(strip $(TESTS)),)
	bash scripts/with-cpu-hogs.sh \
	  $(CTEST) --test-dir $(BUILD) --output-on-failure
else
	PP_BUILD_DIR=$(CURDIR)/$(BUILD) PP_SOURCE_DIR=$(CURDIR) \
	  bash scripts/with-cpu-hogs.sh $(BUILD)/pp-tests $(TESTS)
endif

# The demo (docs/video-demo.md) builds only what it runs: the CLI, the
# library and the video pipeline example, which decodes an H.264 clip it
# makes with FFmpeg's libraries (installed by `deps`), preprocesses,
# batches into a small CNN, annotates and encodes, on the pipeline
# runtime. `pipeprof run` prints the report and writes $(BUILD)/demo/
# (report.html, trace.json, summary.json); the clip and the annotated
# video go to $(BUILD)/demo-video/. DEMO_ARGS passes options to the
# example, e.g. DEMO_ARGS="--batch 16 --prep separate".
# `make demo-synthetic` profiles the older synthetic six-stage example
# (`pipeprof demo`: no FFmpeg) into $(BUILD)/demo-synthetic/.
DEMO_TARGETS := pipeprof_cli pipeprof-example-video pp_installable
DEMO_ARGS ?=

demo: configure
	$(CMAKE) --build $(BUILD) -j $(JOBS) --target $(DEMO_TARGETS)
	rm -rf $(BUILD)/demo
	$(BUILD)/pipeprof run -o $(BUILD)/demo -- \
	  $(BUILD)/pipeprof-example-video --dir $(BUILD)/demo-video $(DEMO_ARGS)

demo-synthetic: configure
	$(CMAKE) --build $(BUILD) -j $(JOBS) --target pipeprof_cli \
	  pipeprof-example-pipeline
	$(BUILD)/pipeprof demo --out $(BUILD)/demo-synthetic

# The Python example (examples/python/video_pipeline.py, docs/python.md):
# a PyTorch CPU video pipeline on four threads, run under `pipeprof run`,
# which prints the report and writes $(BUILD)/demo-python/ (report.html,
# trace.json, summary.json). Debian's python3-torch, -torchvision and -av
# are installed first when missing (deps.sh --torch); the interpreter is
# the one the build's extension is for (PP_PYTHON, /usr/bin/python3).
# DEMO_PY_ARGS passes options to the example, e.g. DEMO_PY_ARGS=--frames=30.
DEMO_PY_TARGETS := pipeprof_cli pp_python
DEMO_PY_ARGS ?=

demo-python:
	@bash scripts/deps.sh --torch
	@$(MAKE) --no-print-directory configure
	$(CMAKE) --build $(BUILD) -j $(JOBS) --target $(DEMO_PY_TARGETS)
	rm -rf $(BUILD)/demo-python
	PYTHONPATH=$(CURDIR)/$(BUILD)/python $(BUILD)/pipeprof run \
	  -o $(BUILD)/demo-python -- \
	  "$$(sed -n 's/^PP_PYTHON:FILEPATH=//p' $(BUILD)/CMakeCache.txt)" \
	  examples/python/video_pipeline.py $(DEMO_PY_ARGS)

bench: build
	$(BUILD)/pipeprof-bench

install: build
	$(CMAKE) --install $(BUILD) --prefix $(PREFIX)

# The Python binding into PYTHON's environment (the active venv by
# default), offline, with the system's setuptools; it will load the
# library of this build tree (docs/python.md).
PYTHON ?= python3
python: build
	PIPEPROF_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) -m pip install \
	  --no-build-isolation ./bindings/python

# libFuzzer build: everything instrumented for coverage and ASan, fuzz
# targets linked with -fsanitize=fuzzer, at -O1 (assertions kept; -O0 ran
# the reader target at about a tenth of the speed). New inputs go to
# $(FUZZ_BUILD)/corpus/<name>; the checked-in corpus is only read. Crashes
# land in $(FUZZ_BUILD)/crash-* and fail the target. `make fuzz-long`
# runs each target for FUZZ_RUNS executions (10^7) in FUZZ_JOBS processes
# and prints each one's executions and rate (docs/internals/build.md).
FUZZ_RUNS ?= 10000000
FUZZ_JOBS ?= 2
fuzz-build:
	@bash scripts/deps.sh --fuzz
	@mkdir -p $(FUZZ_BUILD)
	CC=$(FUZZ_CC) CXX=$(FUZZ_CXX) $(CMAKE) -S . -B $(FUZZ_BUILD) \
	  -DCMAKE_BUILD_TYPE=Debug -DPP_BUILD_TESTS=ON \
	  -DPP_FUZZ=ON -DPP_SANITIZE=address,undefined \
	  "-DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link -O1" $(CMAKE_ARGS)
	$(CMAKE) --build $(FUZZ_BUILD) -j $(JOBS) --target pp-fuzz-all

fuzz: fuzz-build
	@set -e; for n in $(FUZZ_NAMES); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$n; \
	  seeds=; [ -d fuzz/corpus/$$n ] && seeds=fuzz/corpus/$$n; \
	  echo "fuzz-$$n: $(FUZZ_TIME)s"; \
	  $(FUZZ_BUILD)/fuzz-$$n -max_total_time=$(FUZZ_TIME) \
	    -artifact_prefix=$(FUZZ_BUILD)/ -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus/$$n $$seeds; \
	done

fuzz-long: fuzz-build
	@set -e; for n in $(FUZZ_NAMES); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$n; \
	  seeds=; [ -d fuzz/corpus/$$n ] && seeds=fuzz/corpus/$$n; \
	  start=$$(date +%s); \
	  $(FUZZ_BUILD)/fuzz-$$n -runs=$$(( $(FUZZ_RUNS) / $(FUZZ_JOBS) )) \
	    -jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS) \
	    -artifact_prefix=$(FUZZ_BUILD)/ -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus/$$n $$seeds > $(FUZZ_BUILD)/long-$$n.log 2>&1 \
	    || { tail -30 fuzz-*.log; exit 1; }; \
	  end=$$(date +%s); \
	  runs=$$(cat fuzz-[0-9]*.log | sed -n 's/^stat::number_of_executed_units: *//p' | \
	    awk '{s+=$$1} END {print s}'); \
	  echo "fuzz-$$n: $$runs executions in $$((end - start)) s"; \
	  rm -f fuzz-[0-9]*.log; \
	done

format:
	clang-format -i $(FORMAT_FILES)

format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf build build-san-* $(FUZZ_BUILD) $(filter-out /,$(BUILD))

FORCE:
