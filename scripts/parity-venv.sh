#!/usr/bin/env bash
# Makes (or reuses) the venv of the model pipelines' real packages from PyPI
# (scripts/parity-pypi.txt, plus lmms-eval's loader without its dependencies) and prints its
# interpreter, for VIDPREP_PYTHON:
#
#   export VIDPREP_PYTHON=$(bash scripts/parity-venv.sh)
#
# The venv lives outside the repository (${VIDPREP_PARITY_VENV:-~/.cache/vidprep/parity-venv})
# and is made again only when the package list changes. Measured here: 31 s to download,
# 51 s to install, 5.8 GB.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VIDPREP_PARITY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/vidprep/parity-venv}
py=${VIDPREP_PARITY_BASE_PYTHON:-python3}
vllm_pkgs="vllm==0.34.0 opencv-python-headless==5.1.0.95 psutil==7.2.2 pyzmq==27.3.0 aiohttp==3.14.5 multidict==7.2.1 attrs==26.1.0 yarl==1.25.1 propcache==0.5.4 aiohappyeyeballs==2.7.1 aiosignal==1.4.0 frozenlist==1.8.0 pybase64==1.5.1 cachetools==8.0.2"
stamp=$( (cat scripts/parity-pypi.txt; echo "lmms-eval==0.7.3 pysubs2==1.8.1 $vllm_pkgs"; "$py" --version) | sha256sum | cut -c1-16)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.vidprep-stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$venv"
    "$py" -m venv "$venv"
    "$venv/bin/pip" install --quiet -r scripts/parity-pypi.txt >&2
    # lmms-eval's loader (lmms_eval.models.model_utils.load_video) needs only av and numpy; the
    # package's own dependencies (the whole evaluation harness) are not installed.
    "$venv/bin/pip" install --quiet --no-deps lmms-eval==0.7.3 pysubs2==1.8.1 >&2
    # vLLM's video loaders (python/tests/test_pipeline_loaders.py): vllm without its dependencies
    # (they pin another torch and transformers), OpenCV (its default decoder) and the small
    # modules `vllm.multimodal.video` and `vllm.multimodal.media.video` import. Measured here:
    # 15 s, 737 MB more (vllm 546 MB, OpenCV 173 MB).
    "$venv/bin/pip" install --quiet --no-deps $vllm_pkgs >&2
    echo "$stamp" > "$venv/.vidprep-stamp"
fi
echo "$venv/bin/python"
