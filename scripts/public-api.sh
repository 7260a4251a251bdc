#!/usr/bin/env bash
# Counts the library's public surface: the public items reachable from the crate root, by
# kind, read from rustdoc's JSON output (nightly only: `-Z unstable-options --output-format
# json`). Builds in target/rustdoc-json so that it leaves other builds alone.
#
#   scripts/public-api.sh            # the library (package `vidprep`, what cli/ and python/ use)
#   scripts/public-api.sh --hidden   # also `#[doc(hidden)]` items (the `fuzzing` module)
#   scripts/public-api.sh --list     # also every counted item's path
#
# Needs python3, and a nightly toolchain or else RUSTC_BOOTSTRAP (set here when there is no
# nightly). Counted: items whose visibility is
# public and that a path from the crate root reaches (through public modules and `pub use`
# re-exports, each item once); methods and associated constants are those of inherent impls
# of counted types, with trait methods counted apart. Fields and variants are not counted.
set -euo pipefail
cd "$(dirname "$0")/.."

rustdoc_flags=(-Z unstable-options --output-format json)
list=0
for arg in "$@"; do
    case "$arg" in
        --hidden) rustdoc_flags+=(--document-hidden-items) ;;
        --list) list=1 ;;
        *) echo "usage: scripts/public-api.sh [--hidden] [--list]" >&2; exit 2 ;;
    esac
done

# rustdoc's JSON output is unstable: a nightly toolchain where one is installed, else this
# toolchain with its unstable options unlocked (RUSTC_BOOTSTRAP=1).
toolchain=(+nightly)
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "public-api.sh: no nightly toolchain; using $(rustc --version) with RUSTC_BOOTSTRAP=1" >&2
    toolchain=()
    export RUSTC_BOOTSTRAP=1
fi

export CARGO_TARGET_DIR=target/rustdoc-json
cargo "${toolchain[@]}" rustdoc -p vidprep --lib -- "${rustdoc_flags[@]}" >&2

python3 - "$CARGO_TARGET_DIR/doc/vidprep.json" "$list" <<'EOF'
import json
import sys

path, show_list = sys.argv[1], sys.argv[2] == "1"
doc = json.load(open(path))
index = doc["index"]

def inner(item):
    ((kind, body),) = item["inner"].items()
    # Older format versions spell a few kinds differently.
    return {"import": "use", "typedef": "type_alias"}.get(kind, kind), body

KINDS = {
    "module": "modules", "struct": "structs", "enum": "enums", "union": "unions",
    "function": "functions", "trait": "traits", "type_alias": "type aliases",
    "constant": "constants", "static": "statics", "macro": "macros",
}
counts = {}
listed = []
seen = set()

def count(label, name):
    counts[label] = counts.get(label, 0) + 1
    listed.append((label, name))

def items_of_impls(impl_ids, owner):
    for impl_id in impl_ids:
        impl = index.get(str(impl_id))
        if impl is None:
            continue
        _, body = inner(impl)
        if body.get("trait") is not None or body.get("synthetic") or body.get("is_synthetic"):
            continue
        for member_id in body.get("items", []):
            member = index.get(str(member_id))
            if member is None or member.get("visibility") != "public":
                continue
            kind, _ = inner(member)
            if kind == "function":
                count("methods", f"{owner}::{member['name']}")
            elif kind in ("assoc_const", "constant"):
                count("associated constants", f"{owner}::{member['name']}")

def visit(item_id, prefix, name=None):
    item = index.get(str(item_id))
    if item is None:
        return  # an item of another crate, re-exported
    kind, body = inner(item)
    name = name or item.get("name") or ""
    here = f"{prefix}::{name}" if prefix else name
    if kind == "use":
        if item.get("visibility") != "public" or body.get("id") is None:
            return
        if body.get("is_glob"):
            target = index.get(str(body["id"]))
            if target is not None and inner(target)[0] == "module":
                for child in inner(target)[1]["items"]:
                    visit(child, prefix)
            return
        visit(body["id"], prefix, body.get("name"))
        return
    if item.get("visibility") != "public" and item_id != doc["root"]:
        return
    key = str(item_id)
    if key in seen:
        return
    seen.add(key)
    if kind == "module":
        if item_id != doc["root"]:
            count("modules", here)
        for child in body["items"]:
            visit(child, here if item_id != doc["root"] else "")
        return
    if kind in KINDS:
        count(KINDS[kind], here)
    if kind in ("struct", "enum", "union"):
        items_of_impls(body.get("impls", []), here)
    elif kind == "trait":
        for member_id in body.get("items", []):
            member = index.get(str(member_id))
            if member is not None and inner(member)[0] == "function":
                count("trait methods", f"{here}::{member['name']}")

visit(doc["root"], "")

order = ["modules", "structs", "enums", "unions", "traits", "functions", "type aliases",
         "constants", "statics", "macros", "methods", "associated constants", "trait methods"]
print(f"rustdoc JSON format {doc.get('format_version')}, crate {doc['index'][str(doc['root'])]['name']}")
print(f"{'kind':<22} {'count':>5}")
for label in order:
    if counts.get(label):
        print(f"{label:<22} {counts[label]:>5}")
print(f"{'total':<22} {sum(counts.values()):>5}")
if show_list:
    for label, name in sorted(listed):
        print(f"{label}: {name}")
EOF
