//! detect: its outputs are claimed before anything is decoded.

use super::*;

#[test]
fn detect_onto_its_source() {
    check(
        case(
            "detect onto its source",
            &["detect", "g.mp4", "-o", "g.mp4"],
            &[2],
        )
        .says("input"),
    );
}

#[test]
fn detect_manifest_and_stats_collide() {
    check(case(
        "detect manifest and stats collide",
        &["detect", "g.mp4", "-o", "p.jsonl", "--stats", "p.jsonl"],
        &[2],
    ));
}

#[test]
fn detect_sheets_onto_the_manifest() {
    check(
        case(
            "detect sheets onto the manifest",
            &["detect", "g.mp4", "-o", "p.jsonl", "--sheets", "p.jsonl"],
            &[2],
        )
        .says("another output"),
    );
}

#[test]
fn detect_an_empty_folder() {
    check(
        case(
            "detect an empty folder",
            &["detect", "empty", "-o", "p.jsonl"],
            &[1],
        )
        .says("holds no images")
        .with(|d| std::fs::create_dir(d.join("empty")).unwrap()),
    );
}

#[test]
fn detect_a_bad_scheme() {
    check(
        case(
            "detect a bad scheme",
            &["detect", "ftp://x/y.mp4", "-o", "p.jsonl"],
            &[1, 2],
        )
        .says("ftp"),
    );
}

#[test]
fn detect_a_bad_track() {
    check(
        case(
            "detect a bad track",
            &[
                "detect",
                "g.mp4",
                "-o",
                "p.jsonl",
                "--by",
                "annotations",
                "--annotations",
                "b.csv",
                "--track",
                "9",
            ],
            &[1, 2],
        )
        .says("no track \"9\"")
        .with(|d| {
            std::fs::write(
                d.join("b.csv"),
                "frame,track_id,x1,y1,x2,y2\n0,1,0,0,10,10\n",
            )
            .unwrap()
        }),
    );
}

#[test]
fn detect_writes_its_manifest_and_stats() {
    check(
        case(
            "detect writes its manifest and stats",
            &["detect", "g.mp4", "-o", "p.jsonl", "--stats", "s.csv"],
            &[0],
        )
        .writes("p.jsonl")
        .writes("s.csv"),
    );
}
