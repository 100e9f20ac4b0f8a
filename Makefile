# mvsim_ros2 — two commands: `make run` and `make test`.
VENV   := .venv
PY     := $(VENV)/bin/python
WORLD  ?= worlds/demo.world.xml

.PHONY: setup run ros test lint bench fuzz fuzz-api clean

setup:
	@bash scripts/setup.sh

run: setup
	@$(VENV)/bin/mvsim launch $(WORLD)

ros: setup  # the same world as a ROS 2 node (topics, tf, /clock); ROS 2 comes from .venv or a sourced install
	@$(VENV)/bin/mvsim_node --ros-args -p world_file:=$(WORLD)

test: setup
	@$(PY) -m pytest -q $(PYTEST_ARGS)

# world-file fuzzer (tests/fuzz/README.md): N mutants of the shipped + upstream worlds, seed SEED, JOBS children at a
# time (default: CPUs), TIMEOUT s each; summary and failing mutants in .fuzz-out/; exit 1 on any failure
N       ?= 1000
SEED    ?= 0
JOBS    ?= $(shell nproc 2>/dev/null || echo 1)
TIMEOUT ?= 30
fuzz: setup
	@$(PY) -m tests.fuzz --n $(N) --seed $(SEED) --jobs $(JOBS) --timeout $(TIMEOUT) $(FUZZ_ARGS)

# Python API fuzzer (tests/fuzz/README.md, "The API fuzzer"): N random public calls, valid and hostile arguments,
# seed SEED, on three worlds; exit 1 on an uncaught error, a change before a documented error, or a NaN
fuzz-api: setup
	@$(PY) -m tests.fuzz.api_fuzzer --n $(N) --seed $(SEED) $(FUZZ_ARGS)

lint: setup  # style (ruff), architecture (import-linter contracts in .importlinter), types (mypy.ini); all three run
	@rc=0; \
	echo "== ruff"; $(VENV)/bin/ruff check mvsim_core mvsim_ros2 tests benchmarks scripts || rc=1; \
	echo "== lint-imports"; $(VENV)/bin/lint-imports || rc=1; \
	echo "== mypy"; $(VENV)/bin/mypy || rc=1; \
	exit $$rc

bench: setup
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache .import_linter_cache .fuzz-out
