//! Command-line misuse.

use super::*;

#[test]
fn sequences_with_host() {
    check(case(
        "sequences with host",
        &[
            "insert",
            "--host",
            "g.mp4",
            "--sequences",
            "seq",
            "--at",
            "0",
            "-o",
            "a.mp4",
        ],
        &[2],
    ));
}

#[test]
fn unknown_flag() {
    check(case(
        "unknown flag",
        &["cut", "g.mp4", "--frobnicate", "-o", "o.mp4"],
        &[2],
    ));
}

#[test]
fn crf_out_of_range() {
    check(
        case(
            "crf out of range",
            &["cut", "g.mp4", "--crf", "99", "-o", "o.mp4"],
            &[2],
        )
        .says("crf"),
    );
}

#[test]
fn unknown_preset() {
    check(
        case(
            "unknown preset",
            &["cut", "g.mp4", "--preset", "turbo", "-o", "o.mp4"],
            &[2],
        )
        .says("turbo"),
    );
}

#[test]
fn copy_with_decision() {
    check(
        case(
            "copy with decision",
            &["cut", "g.mp4", "--decision", "1s", "--copy", "-o", "o.mp4"],
            &[2],
        )
        .says("--copy"),
    );
}

#[test]
fn zero_frames() {
    check(
        case(
            "zero frames",
            &[
                "export",
                "frames",
                "g.mp4",
                "--out-dir",
                "f",
                "--count",
                "0",
            ],
            &[2],
        )
        .says("at least 1"),
    );
}

#[test]
fn too_many_frames() {
    check(
        case(
            "too many frames",
            &[
                "export",
                "frames",
                "g.mp4",
                "--out-dir",
                "f",
                "--count",
                "100",
            ],
            &[1],
        )
        .says("--allow-repeats"),
    );
}

#[test]
fn unknown_payload() {
    check(case(
        "unknown payload",
        &[
            "export",
            "frames",
            "g.mp4",
            "--out-dir",
            "f",
            "--payload",
            "claude",
        ],
        &[2],
    ));
}

#[test]
fn unknown_sampler() {
    check(case(
        "unknown sampler",
        &[
            "export",
            "frames",
            "g.mp4",
            "--out-dir",
            "f",
            "--sampler",
            "decord",
        ],
        &[2],
    ));
}

#[test]
fn tiny_budget() {
    check(
        case(
            "tiny budget",
            &[
                "export",
                "video",
                "g.mp4",
                "-o",
                "v.mp4",
                "--max-base64-bytes",
                "10",
            ],
            &[2],
        )
        .says("too small"),
    );
}

#[test]
fn budget_too_small_to_encode() {
    check(
        case(
            "budget too small to encode",
            &[
                "export",
                "video",
                "g.mp4",
                "-o",
                "v.mp4",
                "--max-base64-bytes",
                "2000",
                "--reencode",
            ],
            &[1],
        )
        .says("g.mp4"),
    );
}

#[test]
fn overlay_without_boxes() {
    check(
        case(
            "overlay without boxes",
            &["overlay", "g.mp4", "-o", "o.mp4"],
            &[2],
        )
        .says("--boxes"),
    );
}

#[test]
fn box_options_without_boxes() {
    check(
        case(
            "box options without boxes",
            &["cut", "g.mp4", "--thickness", "4", "-o", "o.mp4"],
            &[2],
        )
        .says("--boxes"),
    );
}

#[test]
fn bad_shard() {
    check(
        case(
            "bad shard",
            &["run", "m.jsonl", "--out-dir", "out", "--shard", "5/2"],
            &[2],
        )
        .with(|d| manifest(d, "m.jsonl", &[])),
    );
}

#[test]
fn strict_on_a_clean_file() {
    check(
        case(
            "strict on a clean file",
            &[
                "cut",
                "g.mp4",
                "--strict",
                "--preset",
                "ultrafast",
                "-o",
                "o.mp4",
            ],
            &[0],
        )
        .writes("o.mp4")
        .writes("o.json"),
    );
}
