# Sourced by scripts/demo.sh and scripts/test.sh: sets `features` to the cargo flags of the
# `tracking` feature (OpenCV's trackers: --fill track, vidprep track). On where OpenCV 4.6 or
# newer is installed (pkg-config opencv4): Debian 12 (4.6) and testing (4.10) build it;
# Debian 11's 4.5.1 does not (its contrib tracking headers include a private header of the
# video module that the package leaves out, and the opencv crate's binding generator stops
# there). Off with VIDPREP_NO_TRACKING=1; VIDPREP_REQUIRE_TRACKING=1 (CI) makes a missing
# OpenCV an error instead of a build without the feature.
features=()
if [ -n "${VIDPREP_NO_TRACKING:-}" ]; then
    :
elif pkg-config --atleast-version=4.6 opencv4 2>/dev/null; then
    features=(--features tracking)
else
    found=$(pkg-config --modversion opencv4 2>/dev/null || echo "none")
    msg="OpenCV 4.6 or newer is not installed (pkg-config opencv4: $found): building without the tracking feature (--fill track, vidprep track)"
    if [ -n "${VIDPREP_REQUIRE_TRACKING:-}${VIDPREP_REQUIRE_ALL:-}" ]; then
        echo "$msg, but VIDPREP_REQUIRE_TRACKING (or _ALL) is set" >&2
        exit 1
    fi
    echo "$msg" >&2
fi
