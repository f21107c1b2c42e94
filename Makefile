# coflowkit: `make help` lists the targets.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip

.PHONY: help install demo test test-rust test-python lint bench fmt

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-12s %s\n", $$1, $$2}'

install: ## build and install the package (Rust engine + Python), with test tools
	$(PIP) install --quiet --disable-pip-version-check ".[test]"

demo: install ## install, then compare policies on the synthetic Facebook-like workload
	$(PYTHON) -m coflowkit compare --synthetic fb --seed 1 --first 100 \
		--policies fifo,varys,aalo,sincronia --baseline fair

test: install test-rust test-python ## install, then run every test (Rust and Python)

test-rust: ## Rust unit and integration tests (optimized build)
	cargo test --release --workspace --exclude coflowkit-py

test-python: ## Python tests (API, CLI, bad input, runner, Facebook trace)
	$(PYTHON) -m pytest -q tests

lint: ## clippy, rustfmt and ruff
	cargo clippy --workspace --all-targets -- -D warnings
	cargo fmt --all -- --check
	$(PYTHON) -m ruff check python tests
	$(PYTHON) -m ruff format --check python tests

fmt: ## format Rust and Python
	cargo fmt --all
	$(PYTHON) -m ruff format python tests

bench: install ## time every policy on the Facebook trace (whole command, peak RSS)
	$(PYTHON) -m coflowkit bench --out docs/results/bench/bench.md
