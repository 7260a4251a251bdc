//! Sparse reading leaves out the H.264 reference frames no target depends on, MMCO-marked
//! ones included (issue 26): x264's B-pyramid reference B-frames (normal and strict pyramid)
//! carry MMCO 1, and a P-frame chain does not refer to them, so a target needs the P-frames
//! before it and, when it is a B-frame, its own reference B-frame (with the one before it,
//! decoded for its marking).
//!
//! (With three references, as x264's medium preset makes them, its P-frames may refer to the
//! reference B-frames, so those are needed and nothing more is left out than before:
//! `sparse_skip::h264_pyramid_three_references` checks that case's frames.)
//!
//! Each case is a `sparse_skip` check (every returned frame bit-identical to the ffmpeg CLI's
//! full decode, the work counted on the call's tally) that must also decode clearly fewer
//! frames than skipping only non-reference frames does (ffprobe's `-skip_frame noref`
//! decode says which frames those are).

use crate::decode::sparse_skip::{check_targets, Variant};

const fn x264(name: &'static str, args: &'static [&'static str]) -> Variant {
    Variant { name, args }
}

/// The benchmark video's settings (veryfast: one reference; B-pyramid normal by default).
const BENCH_LIKE: Variant = x264(
    "x264_bench_like.mp4",
    &[
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
        "-crf",
        "23",
        "-g",
        "250",
        "-keyint_min",
        "250",
        "-sc_threshold",
        "0",
        "-bf",
        "3",
    ],
);

const STRICT: Variant = x264(
    "x264_strict.mp4",
    &[
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
        "-g",
        "120",
        "-keyint_min",
        "120",
        "-sc_threshold",
        "0",
        "-bf",
        "3",
        "-x264-params",
        "b-pyramid=strict",
    ],
);

/// Checks `v` with the default targets and with a target every `dense` frames; both must
/// decode at most `share` of the non-reference floor.
fn skips_references(v: &Variant, dense: usize, share: f64) {
    for every in [None, Some(dense)] {
        let work = check_targets(v, every);
        eprintln!(
            "{} (targets every {every:?}): {} decoded, non-reference floor {}",
            v.name, work.frames_decoded, work.nonref_floor
        );
        assert!(
            (work.frames_decoded as f64) <= share * work.nonref_floor as f64,
            "{} (targets every {every:?}): {} frames decoded, not under {share} of the \
             non-reference floor {}",
            v.name,
            work.frames_decoded,
            work.nonref_floor
        );
    }
}

#[test]
fn pyramid_normal_like_the_benchmark() {
    skips_references(&BENCH_LIKE, 23, 0.8);
}

#[test]
fn pyramid_strict() {
    skips_references(&STRICT, 23, 0.8);
}
