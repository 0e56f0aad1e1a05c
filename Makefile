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

# System packages: Poppler runs the pipeline; qpdf and the Noto CJK font are what
# scripts/make_sample.py needs, and a test re-makes the sample corpus with them.
APT_NEEDS = $(if $(shell command -v pdftotext),,poppler-utils) \
            $(if $(shell command -v qpdf),,qpdf) \
            $(if $(wildcard /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc),,fonts-noto-cjk)

install:
	@if [ -n "$(strip $(APT_NEEDS))" ]; then \
	  echo "Installing with apt-get: $(strip $(APT_NEEDS))"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $(strip $(APT_NEEDS)); fi
	$(PIP) install -q -e '.[dev]'

demo: install
	loralay build --source local --manifest data/sample/manifest.jsonl --out $(OUT)/sample \
	  --workers $(WORKERS) $(CONFIG_ARG)

test:
	$(PYTHON) -m pytest -q

bench:
	$(PYTHON) scripts/bench_extract.py $(SHARED)/bench/pdfs

lint:
	ruff check loralay_build tests scripts

arxiv pubmed hal scielo-es scielo-pt koreascience:
	loralay build --source $@ --out $(OUT)/$@ --workers $(WORKERS) $(CONFIG_ARG)
