#!/usr/bin/env bash
# The fixed request set: one run of each job family over the bundled example, for checking that
# a refactor changed no output byte (#54: "the fixed request set gives byte-identical files
# before and after"). Run it with two builds and compare the folders:
#
#   bench/request_set.sh OLD/vidprep /tmp/rs-old
#   bench/request_set.sh target/debug/vidprep /tmp/rs-new
#   diff -r /tmp/rs-old /tmp/rs-new && echo identical
#
# Covered: clips (re-encoded, copied, smart-cut with its verify), the capped video with Base64
# and a payload, frames (uniform, fps, shuffled, a model profile, audio, labels, strips, JPEG),
# boxes (CSV drawn and carried, written as V-STaR), needle insertion with its overlay, a
# preview, event detection (manifest and per-frame statistics), the review page and probe.
# Times that differ between runs by nature (seconds taken, the report's wall clock) are
# blanked in the copies compared; everything else must match byte for byte.
set -euo pipefail
bin=$(realpath "$1")
out=$2
here=$(cd "$(dirname "$0")/.." && pwd)
# Fixed paths, so that the paths the records name are the same in both runs.
base=${TMPDIR:-/tmp}/vidprep-request-set
final=$(realpath -m "$out")
rm -rf "$base" "$final"
mkdir -p "$base/in"
out=$base/out
cp -r "$here/fixtures/example/." "$base/in/"
cd "$base/in"
cat > extra.jsonl <<'JSON'
{"id": "copy", "source": "street.mp4", "start": "2s", "end": "6s", "exports": [{"kind": "clip", "copy": true}]}
{"id": "smart", "source": "street.mp4", "start": "0.5s", "end": "3.3s", "exports": [{"kind": "clip", "smart": true, "verify": true}]}
{"id": "profile", "source": "street.mp4", "end": "6s", "exports": [{"kind": "frames", "count": 8, "profile": "qwen2.5-vl"}, {"kind": "frames", "name": "glm", "profile": "glm-4.6v", "allow_repeats": true}]}
{"id": "audio", "source": "street.mp4", "start": "1s", "end": "3s", "exports": [{"kind": "frames", "count": 4, "audio": true, "format": "jpg", "label": "time"}]}
{"id": "boxes", "source": "street.mp4", "start": 0, "end": 90, "boxes": "track.csv", "exports": [{"kind": "video", "boxes_out": "vstar"}, {"kind": "preview"}, {"kind": "frames", "fps": 1, "strip": true}]}
JSON
run() { "$bin" "$@"; }
run run benchmark.jsonl --out-dir "$out/run" --jobs 1 >/dev/null
run run extra.jsonl --out-dir "$out/extra" --jobs 1 >/dev/null
run review "$out/run" --manifest benchmark.jsonl >/dev/null
run detect street.mp4 --by shots -o "$out/detect.jsonl" --stats "$out/detect-stats.csv" >/dev/null
run detect street.mp4 --by activity --region 0,0,160,120 --split-at-shots -o "$out/activity.jsonl" --json > "$out/activity.json"
run probe street.mp4 > "$out/probe.txt"
# Times of the run itself, not of its outputs.
find "$out" -name '*.json' -o -name '*.jsonl' -o -path '*/review/data/*.js' | while read -r f; do
    python3 - "$f" <<'PY'
import json, re, sys
p = sys.argv[1]
text = open(p).read()
text = re.sub(r'"(\w*seconds|modified_ns|wall_s|started_at|finished_at|review_id)":(\s*)[^,}\n]+', r'"\1":\2"-"', text)
if p.endswith("item.json"):
    # An output's size as the item records it: a sidecar's holds its timing text.
    text = re.sub(r'"bytes":(\s*)[0-9]+', r'"bytes":\1"-"', text)
open(p, "w").write(text)
PY
done
mkdir -p "$(dirname "$final")"
mv "$out" "$final"
echo "request set written to $final ($(find "$final" -type f | wc -l) files)"
