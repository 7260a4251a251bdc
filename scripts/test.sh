#!/usr/bin/env bash
# The whole test suite, as README.md gives it and CI runs it: the Rust tests (`cargo test`:
# unit and end-to-end, against the ffmpeg CLI and, for the browser-facing pages, headless
# Chromium), then the Python package (python/) built with maturin into a virtual environment
# and its pytest tests. The Python build uses the dev profile and reuses what `cargo test`
# compiled in target/ (seconds); `pip install ./python` builds the release profile (minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
# With OpenCV's trackers (the `tracking` feature) where OpenCV 4.6+ is installed.
source scripts/tracking-features.sh
# The transformers profiles' `transformers=5.21` option against that release's own code
# (tests/profiles/transformers.rs): transformers 5.21.1 without its dependencies beside the
# parity venv, put first on PYTHONPATH by the test (scripts/transformers-release.sh).
if [ -n "${VIDPREP_PYTHON:-}" ] && [ -z "${VIDPREP_TRANSFORMERS_OLD:-}" ] \
    && "$VIDPREP_PYTHON" -c "import transformers" 2>/dev/null; then
    VIDPREP_TRANSFORMERS_OLD=$(bash scripts/transformers-release.sh 5.21.1)
    export VIDPREP_TRANSFORMERS_OLD
fi
# Each test that skips (tests/common/skip.rs) appends its `SKIP` line here: listed below, since
# cargo test shows a passing test's output only with --nocapture.
export VIDPREP_SKIP_LOG=${VIDPREP_SKIP_LOG:-$PWD/target/skips.txt}
rm -f "$VIDPREP_SKIP_LOG"
cargo test "${features[@]}"
if [ -s "$VIDPREP_SKIP_LOG" ]; then
    echo "$(wc -l <"$VIDPREP_SKIP_LOG") tests skipped (README.md, \"Testing: what may skip\"):" >&2
    sort "$VIDPREP_SKIP_LOG" >&2
fi
python3 -m venv target/test-venv
# VIDPREP_TEST_EXTRAS: more packages for optional tests (.ci/run: Ray for python/tests/test_ray.py).
target/test-venv/bin/pip install --quiet maturin numpy pytest pillow ${VIDPREP_TEST_EXTRAS:-}
rm -rf target/test-wheels
(cd python && ../target/test-venv/bin/maturin build --quiet --profile dev -o ../target/test-wheels)
target/test-venv/bin/pip install --quiet --force-reinstall --no-deps target/test-wheels/vidprep-*.whl
# (test_qwen_releases.py, test_resize_sweep.py and test_pipeline_loaders.py need torch: they run below.)
target/test-venv/bin/python -m pytest -q python/tests --ignore=python/tests/test_qwen_releases.py \
    --ignore=python/tests/test_resize_sweep.py --ignore=python/tests/test_pipeline_loaders.py

# The profiles' pixels against the real packages from PyPI over a sweep of sizes, in the
# interpreter VIDPREP_PYTHON names (scripts/parity-venv.sh makes one), with this wheel.
if [ -n "${VIDPREP_PYTHON:-}" ] && "$VIDPREP_PYTHON" -c "import torch, torchcodec, transformers, decord, qwen_vl_utils, pytest" 2>/dev/null; then
    "$VIDPREP_PYTHON" -m pip install --quiet --force-reinstall --no-deps target/test-wheels/vidprep-*.whl
    "$VIDPREP_PYTHON" -m pytest -q python/tests/test_resize_sweep.py python/tests/test_pipeline_loaders.py
elif [ -n "${VIDPREP_REQUIRE_PARITY:-}${VIDPREP_REQUIRE_ALL:-}" ]; then
    echo "VIDPREP_PYTHON (${VIDPREP_PYTHON:-unset}) lacks torch, torchcodec, transformers, decord, qwen-vl-utils or pytest (scripts/parity-venv.sh), but VIDPREP_REQUIRE_PARITY (or _ALL) is set" >&2
    exit 1
else
    echo "skipping the profiles' resize sweep: set VIDPREP_PYTHON=\$(bash scripts/parity-venv.sh) to run it" >&2
fi

# The qwen-vl-utils drop-ins against each release users pin (0.0.8 to 0.0.14), each release's own
# code: Debian's python, which sees Debian's torch and torchvision (scripts/parity-packages.txt),
# with the wheel just built and the releases' wheels (pure Python, a few kB each) from PyPI,
# cached outside the repository.
py=/usr/bin/python3
if "$py" -c "import torch, torchvision" 2>/dev/null; then
    "$py" -m venv --system-site-packages target/qwen-venv
    target/qwen-venv/bin/pip install --quiet pytest
    target/qwen-venv/bin/pip install --quiet --force-reinstall --no-deps target/test-wheels/vidprep-*.whl
    wheels=${VIDPREP_QWEN_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/vidprep/qwen-vl-utils}
    mkdir -p "$wheels"
    for v in 0.0.8 0.0.9 0.0.10 0.0.11 0.0.13 0.0.14; do
        ls "$wheels"/qwen_vl_utils-"$v"-*.whl >/dev/null 2>&1 \
            || target/qwen-venv/bin/pip download --quiet --no-deps "qwen-vl-utils==$v" -d "$wheels"
    done
    VIDPREP_QWEN_WHEELS=$wheels target/qwen-venv/bin/python -m pytest -q python/tests/test_qwen_releases.py
elif [ -n "${VIDPREP_REQUIRE_PARITY:-}${VIDPREP_REQUIRE_ALL:-}" ]; then
    echo "Debian's torch and torchvision are not installed, but VIDPREP_REQUIRE_PARITY (or _ALL) is set" >&2
    exit 1
else
    echo "skipping the qwen-vl-utils release tests: Debian's torch and torchvision are not installed (scripts/parity-packages.txt)" >&2
fi
