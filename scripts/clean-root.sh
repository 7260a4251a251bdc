#!/usr/bin/env bash
# Runs a command in a clean Debian root, as a newcomer's first run would: a fresh debootstrap of
# RELEASE from the Debian mirror this machine already uses, the packages of
# scripts/debian-packages.txt installed with apt, the host's Rust toolchain lent read-only, the
# repository cloned (its committed HEAD) to /work/vidprep with ../shared beside it, then
#   cd /work/vidprep && COMMAND
#
# Usage: scripts/clean-root.sh [--keep] [--refresh] [--tree] [--target-cache]
#            [--packages FILE] [--no-rust] [--cache NAME] RELEASE 'COMMAND'
#   RELEASE   bullseye (11, FFmpeg 4.3), bookworm (12, 5.1), trixie (13, 7.1),
#             forky (testing, 9.0); the numbers 11, 12, 13 and "testing" work too.
#   --keep    keep the run's root (its path is printed) instead of removing it.
#   --refresh rebuild the cached roots of RELEASE from the mirror.
#   --tree    (for developers) mount this working tree, uncommitted changes and all, instead of
#             a clone; implies --target-cache.
#   --packages FILE  install the Debian packages listed in FILE (one or more a line, # comments)
#             instead of scripts/debian-packages.txt; its root is cached under its own name.
#   --no-rust do not lend the host's Rust toolchain (a user's machine without Rust).
#   --cache NAME  mount VIDPREP_ROOTS/NAME (made if missing, kept) at /work/cache in the root:
#             a build cache that outlives the run (scripts/build-wheel.sh keeps FFmpeg there).
#   --target-cache  build in a target directory kept per release in the cache (incremental
#             reruns; CI uses it) instead of a fresh one in the clone.
#
# Needs root, debootstrap and a kernel that allows bind and overlay mounts. Caches (in
# VIDPREP_ROOTS, default /var/cache/vidprep-roots): the bare debootstrap root of each release and
# that root with the packages installed (keyed on the package list), so that a rerun starts in
# seconds; each run writes into an overlay above the cached root, removed afterwards, so every
# run starts clean. The crate downloads are shared with the host's ~/.cargo/registry.
# Exit status: the command's; 75 when the root could not be made (mirror unreachable after
# retries, no overlay or bind mounts), so that callers can tell the two apart; 2 bad usage.
# Environment passed into the root: CI, CARGO_BUILD_JOBS, VIDPREP_REQUIRE_BROWSER.
# VIDPREP_SHARED names the shared/ folder when it is not ../shared (e.g. from a git worktree).
set -euo pipefail

keep=0
refresh=0
tree=0
target_cache=0
pkgopt=""
lend_rust=1
cache_name=""
while [ $# -gt 0 ]; do
    case "$1" in
        --keep) keep=1; shift ;;
        --refresh) refresh=1; shift ;;
        --tree) tree=1; target_cache=1; shift ;;
        --target-cache) target_cache=1; shift ;;
        --packages) [ $# -ge 2 ] || { echo "clean-root.sh: --packages needs a file" >&2; exit 2; }
            pkgopt=$2; shift 2 ;;
        --no-rust) lend_rust=0; shift ;;
        --cache) [ $# -ge 2 ] && [[ "$2" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "clean-root.sh: --cache needs a plain name" >&2; exit 2; }
            cache_name=$2; shift 2 ;;
        -h|--help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --) shift; break ;;
        -*) echo "clean-root.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ $# -ne 2 ]; then
    echo "usage: scripts/clean-root.sh [--keep] [--refresh] RELEASE 'COMMAND' (see --help)" >&2
    exit 2
fi
case "$1" in
    bullseye|11) release=bullseye ;;
    bookworm|12) release=bookworm ;;
    trixie|13) release=trixie ;;
    forky|14|testing) release=forky ;;
    *) echo "clean-root.sh: unknown release '$1' (bullseye, bookworm, trixie or forky)" >&2; exit 2 ;;
esac
command=$2

if [ "$(id -u)" -ne 0 ]; then
    echo "clean-root.sh: needs root (debootstrap, chroot and mounts)" >&2
    exit 2
fi
command -v debootstrap >/dev/null || { echo "clean-root.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${VIDPREP_ROOTS:-/var/cache/vidprep-roots}
mkdir -p "$cache"

# The Debian mirror this machine's apt uses (deb822 or one-line sources), else deb.debian.org.
mirror=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null \
    | grep -oE 'https?://[^ ]+/debian/?' | grep -v security | head -n1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}

# Debian's packages to install: the per-release list if there is one, else the common list.
pkgfile="$repo/scripts/debian-packages.txt"
if [ -f "$repo/scripts/debian-packages-$release.txt" ]; then
    pkgfile="$repo/scripts/debian-packages-$release.txt"
fi
# Roots of another list (--packages) are cached under that list's name, beside the default one.
pkgtag=pkgs
if [ -n "$pkgopt" ]; then
    [ -f "$pkgopt" ] || { echo "clean-root.sh: no package list $pkgopt" >&2; exit 2; }
    pkgfile=$pkgopt
    pkgtag=$(basename "$pkgfile" .txt | tr -c 'A-Za-z0-9_\n-' '_')-pkgs
fi
packages=$(grep -v '^#' "$pkgfile" | tr -s ' \n' ' ')
pkghash=$(printf '%s' "$packages" | sha256sum | cut -c1-12)

log() { printf '[clean-root %s %s] %s\n' "$release" "$(date -u +%H:%M:%S)" "$*" >&2; }

# Retries a command (apt and debootstrap downloads fail now and then).
retry() {
    local n
    for n in 1 2 3 4; do
        if "$@"; then return 0; fi
        log "attempt $n failed: $*"
        sleep $((n * 10))
    done
    return 1
}

# Mounts for a chroot at $1, undone by unmount_all (the trap calls it on any exit).
mounted=()
mount_chroot() {
    local root=$1
    mount -t proc proc "$root/proc"; mounted+=("$root/proc")
    mount --rbind /sys "$root/sys"; mount --make-rslave "$root/sys"; mounted+=("$root/sys")
    mount --rbind /dev "$root/dev"; mount --make-rslave "$root/dev"; mounted+=("$root/dev")
    cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}
unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -R "${mounted[$i]}" 2>/dev/null || umount -l -R "${mounted[$i]}" 2>/dev/null || true
    done
    mounted=()
}

in_root() { # in_root ROOT COMMAND...: runs COMMAND in the root with a plain environment.
    local root=$1; shift
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
        PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        DEBIAN_FRONTEND=noninteractive "$@"
}

run_dir=""
stage=prepare
cleanup() {
    local rc=$?
    if [ "$stage" = prepare ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ]; then
        log "making the root failed (exit $rc): exiting 75 (EX_TEMPFAIL), the command did not run"
        rc=75
    fi
    unmount_all
    if [ -n "$run_dir" ] && [ -d "$run_dir" ]; then
        if [ "$keep" = 1 ] && [ "$rc" -ne 130 ]; then
            log "kept the run's files in $run_dir (upper layer over $pkgroot)"
        elif awk -v d="$run_dir/" 'index($2, d) == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
            # Never delete through a mount that is still there (the toolchain, the tree).
            log "something is still mounted under $run_dir: left in place"
        else
            rm -rf --one-file-system "$run_dir"
        fi
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. The bare root: debootstrap (minbase), cached as a directory.
base="$cache/$release-base"
if [ "$refresh" = 1 ]; then rm -rf --one-file-system "$base" "$cache/$release"-pkgs-*; fi
if [ ! -f "$base/.complete" ]; then
    log "debootstrap $release from $mirror"
    script=""
    # debootstrap names testing's codename only from its own release on: use sid's script.
    [ -e "/usr/share/debootstrap/scripts/$release" ] || script=/usr/share/debootstrap/scripts/sid
    rm -rf --one-file-system "$base.tmp"
    debootstrap_once() {
        rm -rf --one-file-system "$base.tmp"
        debootstrap --variant=minbase --include=ca-certificates "$release" "$base.tmp" "$mirror" $script \
            > "$cache/$release-debootstrap.log" 2>&1 || { tail -n 20 "$cache/$release-debootstrap.log" >&2; return 1; }
    }
    retry debootstrap_once
    if [ "$release" = forky ]; then
        # The mirror serves testing from a snapshot whose Release file may have expired.
        echo 'Acquire::Check-Valid-Until "false";' > "$base.tmp/etc/apt/apt.conf.d/99vidprep-snapshot"
    fi
    echo 'Acquire::Retries "5";' > "$base.tmp/etc/apt/apt.conf.d/98vidprep-retries"
    touch "$base.tmp/.complete"
    mv "$base.tmp" "$base"
fi

# 2. The root with scripts/debian-packages.txt installed (what the README tells a newcomer to
#    install), cached per package list.
pkgroot="$cache/$release-$pkgtag-$pkghash"
if [ ! -f "$pkgroot/.complete" ]; then
    log "installing $(basename "$pkgfile") into a copy of the bare root"
    rm -rf --one-file-system "$pkgroot.tmp"
    cp -a "$base" "$pkgroot.tmp"
    mount_chroot "$pkgroot.tmp"
    retry in_root "$pkgroot.tmp" apt-get -q update
    aptlog=$cache/$release-apt.log
    [ "$pkgtag" = pkgs ] || aptlog=$cache/$release-$pkgtag-apt.log
    # shellcheck disable=SC2086
    retry in_root "$pkgroot.tmp" apt-get -q -y install --no-install-recommends $packages \
        > "$aptlog" 2>&1 || { tail -n 30 "$aptlog" >&2; exit 1; }
    in_root "$pkgroot.tmp" apt-get clean
    unmount_all
    mkdir -p "$pkgroot.tmp/root/.cargo" "$pkgroot.tmp/root/.rustup" "$pkgroot.tmp/work"
    echo "$packages" > "$pkgroot.tmp/.packages"
    touch "$pkgroot.tmp/.complete"
    mv "$pkgroot.tmp" "$pkgroot"
    # Older package layers of this release are stale now.
    for old in "$cache/$release-$pkgtag"-*; do
        [ "$old" = "$pkgroot" ] || rm -rf --one-file-system "$old"
    done
fi

# 3. This run: an overlay above the cached root, so the cache stays clean.
run_dir=$(mktemp -d "$cache/run-$release-XXXXXX")
root="$run_dir/root"
mkdir -p "$run_dir/upper" "$run_dir/work" "$root"
mount -t overlay overlay -o "lowerdir=$pkgroot,upperdir=$run_dir/upper,workdir=$run_dir/work" "$root"
mounted+=("$root")
mount_chroot "$root"

# The host's Rust toolchain, read-only; the crate registry shared (downloads only).
if [ "$lend_rust" = 1 ]; then
    cargo_home=${CARGO_HOME:-$HOME/.cargo}
    rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
    mkdir -p "$root/root/.cargo/bin" "$root/root/.cargo/registry" "$root/root/.rustup" "$cargo_home/registry"
    mount --bind "$rustup_home" "$root/root/.rustup"; mount -o remount,bind,ro "$root/root/.rustup"; mounted+=("$root/root/.rustup")
    mount --bind "$cargo_home/bin" "$root/root/.cargo/bin"; mount -o remount,bind,ro "$root/root/.cargo/bin"; mounted+=("$root/root/.cargo/bin")
    mount --bind "$cargo_home/registry" "$root/root/.cargo/registry"; mounted+=("$root/root/.cargo/registry")
fi
if [ -n "$cache_name" ]; then
    mkdir -p "$cache/$cache_name" "$root/work/cache"
    mount --bind "$cache/$cache_name" "$root/work/cache"; mounted+=("$root/work/cache")
fi

# The repository's committed HEAD (or, with --tree, this working tree), and ../shared beside it
# (read-only).
if [ "$tree" = 1 ]; then
    mkdir -p "$root/work/vidprep"
    mount --bind "$repo" "$root/work/vidprep"; mounted+=("$root/work/vidprep")
else
    git clone --quiet --no-hardlinks "$repo" "$root/work/vidprep"
    git -C "$root/work/vidprep" checkout --quiet --detach "$(git -C "$repo" rev-parse HEAD)"
fi
if [ "$target_cache" = 1 ]; then
    # Kept per release: a target built against one FFmpeg must never meet another (cargo
    # does not notice that the system headers changed). Mounted as the clone's target/, so
    # that ./target/debug/vidprep is where the README says.
    mkdir -p "$root/work/vidprep/target" "$cache/target-$release"
    mount --bind "$cache/target-$release" "$root/work/vidprep/target"; mounted+=("$root/work/vidprep/target")
fi

shared=${VIDPREP_SHARED:-$repo/../shared}
if [ -d "$shared" ]; then
    mkdir -p "$root/work/shared"
    mount --bind "$(cd "$shared" && pwd)" "$root/work/shared"
    mount -o remount,bind,ro "$root/work/shared"; mounted+=("$root/work/shared")
else
    log "no ../shared beside the repository: tests that need it skip"
fi

ffmpeg_version=$(in_root "$root" sh -c 'pkg-config --modversion libavcodec 2>/dev/null; ffmpeg -version 2>/dev/null | head -n1' | tr '\n' ' ')
log "root ready ($ffmpeg_version); running: $command"
# From here on an exit status is the command's (a failing test must fail the caller, not pass
# for a root that could not be made).
stage=run
start=$(date +%s)
set +e
passed=()
for var in CI CARGO_BUILD_JOBS VIDPREP_REQUIRE_BROWSER; do
    if [ -n "${!var:-}" ]; then passed+=("$var=${!var}"); fi
done
in_root "$root" "${passed[@]}" bash -c "cd /work/vidprep && $command"
rc=$?
set -e
log "command exited $rc after $(($(date +%s) - start)) s"
exit $rc
