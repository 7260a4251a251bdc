//! smart encoding: contradictory requests are refused before anything is written.

use super::*;

#[test]
fn verify_without_smart() {
    check(
        case(
            "verify without smart",
            &[
                "cut", "g.mp4", "--start", "5", "--end", "30", "--verify", "-o", "c.mp4",
            ],
            &[2],
        )
        .says("--smart"),
    );
}

#[test]
fn smart_and_copy() {
    check(case(
        "smart and copy",
        &[
            "cut", "g.mp4", "--start", "5", "--end", "30", "--smart", "--copy", "-o", "c.mp4",
        ],
        &[2],
    ));
}

#[test]
fn smart_and_copy_in_a_manifest() {
    check(
        case(
            "smart and copy in a manifest",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .says("not both")
        .writes("out")
        .with(|d| {
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g.mp4", "exports": [{"kind": "clip", "smart": true, "copy": true}]}"#.to_string()],
            )
        }),
    );
}

#[test]
fn smart_onto_its_source() {
    check(
        case(
            "smart onto its source",
            &[
                "cut", "g.mp4", "--start", "5", "--end", "30", "--smart", "-o", "g.mp4",
            ],
            &[2],
        )
        .says("input"),
    );
}
