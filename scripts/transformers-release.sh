#!/usr/bin/env bash
# Installs one older transformers release (its own code only: `pip install --no-deps`) beside
# the parity venv and prints the folder, to put first on PYTHONPATH with that venv's
# interpreter, so the transformers profiles' `transformers=5.xx` option is checked against the
# release it names (tests/profiles/transformers.rs):
#
#   export VIDPREP_TRANSFORMERS_OLD=$(bash scripts/transformers-release.sh 5.21.1)
#
# The folder lives outside the repository
# (${XDG_CACHE_HOME:-~/.cache}/vidprep/transformers-VERSION) and is made once. The release's
# dependencies are the venv's (scripts/parity-pypi.txt): its torch, tokenizers, huggingface-hub.
# Measured here: 13 MB to download, 6 s.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: transformers-release.sh VERSION (e.g. 5.21.1)}
dir=${XDG_CACHE_HOME:-$HOME/.cache}/vidprep/transformers-$version
py=${VIDPREP_PYTHON:-$(bash scripts/parity-venv.sh)}
if [ ! -f "$dir/.vidprep-done" ]; then
    rm -rf "$dir"
    "$py" -m pip install --quiet --no-deps --target "$dir" "transformers==$version" >&2
    touch "$dir/.vidprep-done"
fi
echo "$dir"
