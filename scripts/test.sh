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
cargo test "${features[@]}"
python3 -m venv target/test-venv
# VIDPREP_TEST_EXTRAS: more packages for optional tests (.ci/run: Ray for python/tests/test_ray.py).
target/test-venv/bin/pip install --quiet maturin numpy pytest pillow ${VIDPREP_TEST_EXTRAS:-}
rm -rf target/test-wheels
(cd python && ../target/test-venv/bin/maturin build --quiet --profile dev -o ../target/test-wheels)
target/test-venv/bin/pip install --quiet --force-reinstall --no-deps target/test-wheels/vidprep-*.whl
target/test-venv/bin/python -m pytest -q python/tests
