# loralay-build. Two commands set up a fresh Debian/Ubuntu machine:
#   make demo   installs everything, then builds the sample dataset into out/sample
#   make test   runs the tests
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
OUT ?= out
CONFIG ?=
CONFIG_ARG = $(if $(CONFIG),--config $(CONFIG),)
WORKERS ?= 2
SHARED ?= ../shared

.PHONY: install demo test bench lint arxiv pubmed hal scielo-es scielo-pt koreascience

install:
	@command -v pdftotext >/dev/null 2>&1 || { \
	  echo "Installing Poppler (poppler-utils) with apt-get"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq poppler-utils; }
	$(PIP) install -q -e '.[dev]'

demo: install
	loralay build --source local --manifest data/sample/manifest.jsonl --out $(OUT)/sample \
	  --workers $(WORKERS) $(CONFIG_ARG)
	@echo "Dataset: $(OUT)/sample (report: $(OUT)/sample/report.md)"

test:
	$(PYTHON) -m pytest -q

bench:
	$(PYTHON) scripts/bench_extract.py $(SHARED)/bench/pdfs

lint:
	ruff check loralay_build tests scripts

arxiv pubmed hal scielo-es scielo-pt koreascience:
	loralay build --source $@ --out $(OUT)/$@ --workers $(WORKERS) $(CONFIG_ARG)
