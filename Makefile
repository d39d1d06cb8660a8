# The two commands of the README. Each creates (or reuses) .venv and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.judgeaudit-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: demo test install browser bench

# llama.cpp is compiled for a portable x86-64 target (AVX2, no AMX) rather than -march=native: the embedded
# judge then grades with the same kernels on every machine, and ggml's AMX kernels, which crash on virtual
# machines that advertise AMX, are not built. --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet --no-cache-dir \
	  "$$(grep -o 'llama-cpp-python==[0-9.]*' pyproject.toml)"
	$(BIN)/python -m pip install --quiet -e '.[all]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/judgeaudit demo --out demo-out

# Headless Chromium for the annotation app's browser tests (Debian's package; needs root or sudo).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  elif command -v sudo >/dev/null 2>&1; then sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium not installed: browser tests will be skipped"; fi; }

test: $(STAMP) browser
	JUDGEAUDIT_DATA_DIR=$${JUDGEAUDIT_DATA_DIR:-$$( [ -d ../shared/data ] && cd ../shared/data && pwd )} \
	  $(BIN)/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --durations=25

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done
