# GPU memory guide: build, serve and test. On a fresh Debian 12 machine, as root, with only the
# package registries reachable:
#
#   make serve   install what is missing, build the site, serve it on http://127.0.0.1:8000
#   make test    install what is missing (Chromium, nginx too), run every test: pytest tests,
#                then the calculator's browser tests against nginx (hosting/nginx.conf)
#   make site    static build into site/ (any static host; .wasm must be application/wasm)
#
# Re-runs are cheap: the venv and node_modules carry their own stamp files and are only
# reinstalled when requirements.txt / package-lock.json change; the site is rebuilt only when
# its sources change.

SHELL := /bin/bash
.DELETE_ON_ERROR:
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := site

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000
# Where the site will be served (mkdocs.yml site_url): hreflang links and sitemaps use it.
SITE_URL ?= http://127.0.0.1:8000/
export SITE_URL

export NO_MKDOCS_2_WARNING := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export DEBIAN_FRONTEND := noninteractive

VENV_STAMP := $(VENV)/.installed
NPM_STAMP  := node_modules/.package-lock.json
SITE_STAMP := site/sitemap.xml
SITE_SOURCES := mkdocs.yml build_tables.py pyproject.toml \
	$(shell find docs overrides calc site_build -type f -not -path '*/__pycache__/*' 2>/dev/null)

.PHONY: site serve test deps system chromium nginx clean distclean FORCE

# --- system packages (only when missing) ------------------------------------------------------

system:
	@missing=""; \
	$(PYTHON) -c 'import venv, ensurepip' >/dev/null 2>&1 || missing="$$missing python3 python3-venv"; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  echo "Installing system packages:$$missing"; \
	  apt-get update && apt-get install -y --no-install-recommends $$missing; \
	fi

chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
	  echo "Installing Chromium for the browser tests"; \
	  apt-get update && apt-get install -y chromium; \
	fi

# nginx with the Brotli static module: the tests serve the build with hosting/nginx.conf.
nginx:
	@if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ] \
	    || [ ! -e /usr/share/nginx/modules/ngx_http_brotli_static_module.so ]; then \
	  echo "Installing nginx for the hosting tests"; \
	  apt-get update && apt-get install -y --no-install-recommends nginx libnginx-mod-http-brotli-static; \
	fi

# --- Python and Node dependencies -------------------------------------------------------------

$(VENV_STAMP): requirements.txt | system
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

# npm ci writes node_modules/.package-lock.json itself; touch it so make sees it as new.
$(NPM_STAMP): package.json package-lock.json | system
	npm ci --no-audit --no-fund
	touch $@

deps: $(VENV_STAMP) $(NPM_STAMP)

# --- the site ---------------------------------------------------------------------------------

# Rewritten only when SITE_URL changes, so a new address rebuilds the site.
.stamps/site-url: FORCE
	@mkdir -p .stamps
	@echo "$(SITE_URL)" | cmp -s - $@ || echo "$(SITE_URL)" > $@

$(SITE_STAMP): $(SITE_SOURCES) .stamps/site-url $(VENV_STAMP) $(NPM_STAMP)
	$(VENV)/bin/mkdocs build --strict --site-dir site

site: $(SITE_STAMP)

serve:
	@$(MAKE) --no-print-directory site SITE_URL=http://$(HOST):$(PORT)/
	$(PY) serve.py --dir site --host $(HOST) --port $(PORT)

FORCE:

# --- tests ------------------------------------------------------------------------------------

# Every test, then the calculator's browser tests again with the site served by nginx and the
# shipped hosting/nginx.conf (tests/host checks its headers in the first pass).
test: deps chromium nginx
	$(PY) -m pytest tests
	CALC_HOST=nginx $(PY) -m pytest tests/browser/test_widgets.py -q -p no:cacheprovider

# --- hostile input: fuzzing the engine; known vulnerabilities in the dependencies -------------
# `make fuzz`: the fuzz targets of tests/unit/test_fuzz.py with FUZZ_EXAMPLES examples each
# (10,000: about 8 minutes on 2 cores; `make test` runs them at 60). Prints the slowest call
# of each function; any call over CALC_FUZZ_CALL_LIMIT seconds (default 1) fails.
FUZZ_EXAMPLES ?= 10000

.PHONY: fuzz
fuzz: $(VENV_STAMP)
	CALC_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest tests/unit/test_fuzz.py -q -s \
	  -p no:cacheprovider

# `make audit`: pip-audit (pinned in requirements-dev.txt, its own venv) over every Python pin,
# npm audit over the lock files. Both ask their registry's advisory service (PyPI's JSON API
# per release, npm's bulk advisory endpoint); a dependency that could not be checked fails the
# audit (--strict) rather than passing unchecked. Every command runs; the target fails if any did.
AUDIT_VENV := .venv-audit

$(AUDIT_VENV)/.installed: requirements-dev.txt | system
	test -x $(AUDIT_VENV)/bin/python || $(PYTHON) -m venv $(AUDIT_VENV)
	$(AUDIT_VENV)/bin/pip install --quiet -r requirements-dev.txt
	touch $@

.PHONY: audit
audit: $(AUDIT_VENV)/.installed
	@status=0; \
	run() { echo "+ $$*"; "$$@" || { status=1; echo "audit: FAILED: $$*" >&2; }; }; \
	run $(AUDIT_VENV)/bin/pip-audit --strict --disable-pip --no-deps --progress-spinner off \
	  -r requirements.txt -r requirements-dev.txt $(addprefix -r ,$(wildcard bench/requirements-*.txt)); \
	run npm audit --omit=dev; \
	run npm audit; \
	$(if $(wildcard bench/package-lock.json),run npm audit --prefix bench;) \
	exit $$status

# --- ground truth for the accuracy page (not part of the tests; about 30 minutes) -------------
# PyTorch (CPU build), transformers and peft in their own venv; results recorded in
# calc/data/ground_truth.json, then compared component by component with detailed mode.

TRUTH_VENV := .venv-truth
# TRUTH_ARGS, e.g. "--new" (only the knob runs, merged into the recorded file) or "--only NAME".
TRUTH_ARGS ?=

$(TRUTH_VENV)/.installed: bench/requirements-truth.txt
	test -x $(TRUTH_VENV)/bin/python || $(PYTHON) -m venv $(TRUTH_VENV)
	$(TRUTH_VENV)/bin/pip install --quiet -r bench/requirements-truth.txt
	touch $@

.PHONY: truth
truth: $(TRUTH_VENV)/.installed $(VENV_STAMP)
	$(TRUTH_VENV)/bin/python -W ignore bench/ground_truth.py $(TRUTH_ARGS)
	$(PY) bench/compare_truth.py

# --- accuracy against published runs (not a test; seconds) -------------------------------------
# The realistic model and the textbook formula against calc/data/measurements.json (each run
# with its own training stack) and our MemTracker runs, with issue 13's targets.

.PHONY: accuracy
accuracy: $(VENV_STAMP)
	$(PY) bench/accuracy.py --by-stack --truth

# --- performance benchmark (not part of the tests; about 15 minutes) --------------------------
# Builds the site, serves it on loopback and measures it in headless Chromium beside a bare
# Pyodide boot; Lighthouse (pinned in bench/package-lock.json, installed only here). Writes
# BENCHMARKS.md (and bench/results.json). BENCH_ARGS, e.g. "--reps 3 --no-lighthouse".

BENCH_NPM_STAMP := bench/node_modules/.package-lock.json
BENCH_ARGS ?=

$(BENCH_NPM_STAMP): bench/package.json bench/package-lock.json | system
	npm ci --prefix bench --no-audit --no-fund
	touch $@

.PHONY: bench
bench: deps chromium $(BENCH_NPM_STAMP)
	$(PY) bench/bench.py $(BENCH_ARGS)

# --- cleaning ---------------------------------------------------------------------------------

clean:
	rm -rf site .pytest_cache

distclean: clean
	rm -rf $(VENV) node_modules bench/node_modules .stamps .cache
