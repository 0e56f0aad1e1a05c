# loralay-build. Two commands set up a fresh Debian/Ubuntu machine:
#   make demo   installs everything, then builds the sample dataset into out/sample
#   make test   runs the tests
#
#   make test-fast  the unit tier alone (under 3 minutes here), for the edit-test loop
#   make lint       ruff, mypy and the import contracts
#
# Everything Python runs from a virtual environment in the checkout (.venv): Debian 12 and
# Ubuntu 23.04+ refuse `pip install` into the system Python (PEP 668), and a venv keeps the
# project's pins away from the system's packages on any machine. Inside an activated venv
# (VIRTUAL_ENV set) that one is used instead, so a developer's own set-up keeps working.
PYTHON ?= python3
VENV ?= $(or $(VIRTUAL_ENV),.venv)
VPY = $(VENV)/bin/python
# Per checkout: an activated venv may serve several checkouts, each installed editable.
STAMP = $(VENV)/.loralay-installed$(subst /,_,$(CURDIR))
OUT ?= out
CONFIG ?=
CONFIG_ARG = $(if $(CONFIG),--config $(CONFIG),)
WORKERS ?= 2
SHARED ?= ../shared
PYTEST_ARGS ?=
# `make bench` pins itself and its children to this CPU: per-core ratios (docs/performance.md);
# 5 runs, because on this host the same code's ratios move by up to 0.2 between runs
BENCH_CPU ?= 1
# the sources with a target of their own: the registry's network sources (registry.py)
SOURCES := $(shell $(PYTHON) loralay_build/registry.py --network 2>/dev/null)
# VILA's own preprocessors, for the test that checks `loralay export vila` against them;
# installed --no-deps, which keeps torch out (the preprocessors need none of it)
VILA_REFERENCE = vila==0.5.0 layoutparser==0.3.4 opencv-python-headless==5.0.0.93

.PHONY: install system-packages demo test test-fast bench bench-finish bench-scale lint citesum \
        $(SOURCES)

# System packages: Poppler runs the pipeline; Tesseract and its five language packs read
# scanned pages (`--ocr auto`, docs/ocr.md; the demo keeps the scanned sample paper); qpdf and the Noto CJK font are what
# `scripts/make_sample.py` needs, and a test re-makes the sample corpus with them;
# a C compiler and the Python headers build the reader of Poppler's output
# (loralay_build/pdftext/_fastread.c; without them it installs, reading ~10 % slower).
PY_VERSION = $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PY_HEADERS = $(shell $(PYTHON) -c 'import os, sysconfig; \
  print(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null)
APT_NEEDS = $(if $(shell command -v pdftotext),,poppler-utils) \
            $(if $(shell command -v qpdf),,qpdf) \
            $(if $(shell command -v tesseract),,tesseract-ocr) \
            $(if $(wildcard /usr/share/tesseract-ocr/5/tessdata/kor.traineddata),,\
              tesseract-ocr-eng tesseract-ocr-fra tesseract-ocr-spa tesseract-ocr-por \
              tesseract-ocr-kor) \
            $(if $(wildcard /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc),,fonts-noto-cjk) \
            $(if $(shell command -v cc),,gcc libc6-dev) \
            $(if $(wildcard $(PY_HEADERS)),,python$(PY_VERSION)-dev)

# $(call apt_install,PACKAGES): apt-get, through sudo unless we are root.
apt_install = echo "Installing with apt-get: $(1)"; \
  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1)

install: system-packages $(STAMP)

system-packages:
	@if [ -n "$(strip $(APT_NEEDS))" ]; then $(call apt_install,$(strip $(APT_NEEDS))); fi

# The venv is (re)made when its pip does not run: a first run, or a venv left half-made by
# a `python -m venv` that failed for want of ensurepip. Debian ships ensurepip apart, in
# python3.X-venv, so that package is installed first when it is missing.
$(VPY):
	@if ! $(PYTHON) -c 'import ensurepip, venv' 2>/dev/null; then \
	  $(call apt_install,python$(PY_VERSION)-venv); fi
	$(PYTHON) -m venv --clear $(VENV)

# Installed once, again only when pyproject.toml or the C reader changes (the install is
# editable, so Python edits need nothing); `make test` on an installed checkout costs no
# pip run.
$(STAMP): pyproject.toml loralay_build/pdftext/_fastread.c | $(VPY)
	@$(VPY) -m pip --version >/dev/null 2>&1 || $(PYTHON) -m venv --clear $(VENV)
	$(VPY) -m pip install -q -e '.[dev,all]'
	$(VPY) -m pip install -q --no-deps $(VILA_REFERENCE)
	@touch $@

demo: install
	$(VENV)/bin/loralay build --source local --manifest data/sample/manifest.jsonl \
	  --out $(OUT)/sample --workers $(WORKERS) --ocr auto $(CONFIG_ARG)
	@echo "Dataset in $(OUT)/sample. Use the tool with: . $(VENV)/bin/activate (or $(VENV)/bin/loralay)"

test: install
	$(VPY) -m pytest -q $(PYTEST_ARGS)

# The unit tier: no end-to-end build, no kill or fuzz round, no speed ratio, no Slurm
# (markers in pyproject.toml; tests/conftest.py says what each tier holds)
test-fast: install
	$(VPY) -m pytest -q -m "not e2e and not stress and not perf and not cluster" $(PYTEST_ARGS)

bench: install
	nice $(VPY) scripts/bench_extract.py $(SHARED)/bench/pdfs --runs 5 --pin $(BENCH_CPU)
	nice $(VPY) scripts/bench_layout.py $(SHARED)/bench/pdfs --runs 5 --pin $(BENCH_CPU)
	LORALAY_SHARED=$(SHARED) nice $(VPY) scripts/bench_build.py --runs 5 --copies 10 --pin $(BENCH_CPU)
	nice taskset -c $(BENCH_CPU) $(VPY) scripts/bench_ocr.py $(SHARED)/corpus/pdf/en_acl_s2orc.pdf:2 \
	  $(SHARED)/corpus/pdf/fr_ahrf_censure.pdf:2 $(SHARED)/corpus/pdf/pt_scielo_rsp_hindex.pdf:2 \
	  $(SHARED)/corpus/pdf/ko_kiit_voting.pdf:2 --router $(SHARED)/corpus/pdf/*.pdf --runs 5
	$(MAKE) bench-finish

# The corpus-wide finish at scale: the shared corpus built once (one shard), its run state
# replicated to 2k / 10k / 20k documents, `build --finish` measured on each in a fresh
# process (peak RSS, ms per document) against the goals of scripts/bench_finish.py.
bench-finish: install
	$(VENV)/bin/loralay build --source local --manifest $(SHARED)/corpus/manifest.jsonl \
	  --out $(OUT)/bench-finish/base --workers 1
	nice $(VPY) scripts/bench_finish.py $(OUT)/bench-finish/base \
	  $(SHARED)/corpus/manifest.jsonl --work $(OUT)/bench-finish

# A whole build at scale: the shared corpus's PDFs listed 2k / 10k / 20k times, built with
# --workers 2 in a fresh folder each (about 1 h here): the driver's peak RSS, CPU ms per
# document and the finish's time per document (scripts/bench_scale.py).
bench-scale: install
	LORALAY_SHARED=$(SHARED) nice $(VPY) scripts/bench_scale.py --sizes 2000,10000,20000 \
	  --workers 2 --work $(OUT)/bench-scale

lint: install
	$(VENV)/bin/ruff check loralay_build tests scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

$(SOURCES): install
	$(VENV)/bin/loralay build --source $@ --out $(OUT)/$@ --workers $(WORKERS) $(CONFIG_ARG)

# CiteSum from S2ORC shards on disk: CONFIG names them (README, "CiteSum"); no PDFs, no network.
citesum: install
	@test -n "$(CONFIG)" || { echo "make citesum needs CONFIG=your-citesum.yaml (README: CiteSum)"; exit 2; }
	$(VENV)/bin/loralay build --source citesum --out $(OUT)/citesum --workers $(WORKERS) $(CONFIG_ARG)
	$(VENV)/bin/loralay eval $(OUT)/citesum --split test
