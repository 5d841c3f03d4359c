# The two commands of the README: `make wizard` runs the wizard, `make test` runs the tests.
# Both create the tool's own virtual environment (.venv) on first use; nothing is installed
# into any application's environment.

PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	  command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 && { command -v $$p; break; }; \
	done)
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: wizard test test-fast test-slow lint setup package package-test wheelhouse bench

# pip -qq: errors only. setuptools' editable install otherwise ends with an "Editable installation"
# notice that every package mapped from folders gets and that asks nothing of a newcomer.
$(BIN)/.installed: pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.11 or newer is needed (python3.11 not found)"; exit 2; }
	bash scripts/system-deps.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -qq --upgrade pip
	$(BIN)/python -m pip install -qq -e '.[test]'
	touch $@

setup: $(BIN)/.installed

wizard: $(BIN)/.installed
	$(BIN)/fallback-doctor

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	PYTHONPATH=tools/typecheck $(BIN)/lint-imports
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_import_cycles.py tests/test_code_shape.py tests/test_finding_ids.py

# Everything: the lint, every test on every core but the wizard's (the window tests run one at a
# time: Qt under pytest-xdist crashed once in a full run), then the slow runs.
test: lint
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -n auto --dist worksteal --ignore=tests/gui
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest tests/gui
	$(MAKE) test-slow

# The loop for a change: ruff, then every test except the real broken stacks (-m scenario), the
# frozen build (-m packaging) and the slow runs (-m slow: the 10,000-example runs among them), on
# both cores. `make test` (CI) runs everything.
test-fast: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -p no:cacheprovider -n 2 \
	  -m "not scenario and not packaging and not slow"

# The 10,000-example Hypothesis runs of every reader of outside input, on every core (pytest-xdist;
# about 8 minutes on two cores). Part of `make test`; alone with `make test-slow`.
test-slow: $(BIN)/.installed
	QT_QPA_PLATFORM=offscreen GFD_SLOW=1 GFD_HOSTILE_SLOW=1 $(BIN)/python -m pytest -m slow -n auto --dist worksteal tests/hostile tests/core/bundle/test_bundle_open.py

# The frozen one-folder build, its .tar.gz, the .deb (and .rpm where rpmbuild is installed),
# all under dist/ (packaging/README.md). The tests build it themselves, cached by source hash
# outside the clone (~/.cache/gpu-fallback-doctor/frozen/<hash>): `make package-test`.
package: $(BIN)/.installed
	nice -n 10 $(BIN)/python packaging/build.py
	nice -n 10 $(BIN)/python packaging/linux_packages.py dist/fallback-doctor --out dist

package-test: $(BIN)/.installed
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -m packaging tests/packaging

# One archive with the tool's wheel and every dependency's wheel for Python 3.11 to 3.13, and
# the script that installs them offline into the tool's own virtual environment.
wheelhouse: $(BIN)/.installed
	$(BIN)/python packaging/wheelhouse.py --out dist

# Every benchmark (benchmarks/bench_*.py); writes the table into docs/performance.md.
bench: $(BIN)/.installed
	$(BIN)/python benchmarks/run_all.py
