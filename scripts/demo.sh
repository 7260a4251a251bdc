#!/usr/bin/env bash
# One command for a newcomer: installs the Debian packages, builds vidprep, and runs the main
# job on the bundled example (fixtures/example), writing to out/example.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends $(grep -v '^#' scripts/debian-packages.txt)
# With OpenCV's trackers (the `tracking` feature) where OpenCV 4.6+ is installed.
source scripts/tracking-features.sh
cargo build "${features[@]}"
# The demo makes its own out/ (a run names the folders above --out-dir it had to make).
mkdir -p out
./target/debug/vidprep run fixtures/example/benchmark.jsonl --out-dir out/example
./target/debug/vidprep review out/example --manifest fixtures/example/benchmark.jsonl
echo "Outputs and sidecars: out/example/ (report: out/example/report.jsonl)"
echo "Review page: open out/example/review/index.html in a browser"
