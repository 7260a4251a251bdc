//! Outputs that would overwrite inputs or each other (bad usage, nothing touched), and outputs that work: long names, missing folders, earlier outputs replaced whole.

use super::*;

#[test]
fn output_is_input() {
    check(
        case("output is input", &["cut", "g.mp4", "-o", "g.mp4"], &[2])
            .says("refusing to overwrite an input"),
    );
}

#[test]
fn output_is_input_via() {
    check(
        case(
            "output is input via ./",
            &["cut", "g.mp4", "-o", "./g.mp4"],
            &[2],
        )
        .says("input"),
    );
}

#[test]
fn sidecar_is_output() {
    check(
        case(
            "sidecar is output",
            &["cut", "g.mp4", "-o", "out.json"],
            &[2],
        )
        .says(".json"),
    );
}

#[test]
fn base64_is_output() {
    check(
        case(
            "base64 is output",
            &[
                "export", "video", "g.mp4", "-o", "o.mp4", "--base64", "o.mp4",
            ],
            &[2],
        )
        .says("both be"),
    );
}

#[test]
fn base64_is_sidecar() {
    check(
        case(
            "base64 is sidecar",
            &[
                "export", "video", "g.mp4", "-o", "o.mp4", "--base64", "o.json",
            ],
            &[2],
        )
        .says("both be"),
    );
}

#[test]
fn annotations_is_output() {
    check(
        case(
            "annotations is output",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "i.mp4",
                "--annotations",
                "i.mp4",
            ],
            &[2],
        )
        .says("both be"),
    );
}

#[test]
fn annotations_is_sidecar() {
    check(
        case(
            "annotations is sidecar",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "i.mp4",
                "--annotations",
                "i.json",
            ],
            &[2],
        )
        .says("both be"),
    );
}

#[test]
fn output_inside_sequence() {
    check(
        case(
            "output inside sequence",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "seq/x.mp4",
            ],
            &[2],
        )
        .says("input folder"),
    );
}

#[test]
fn annotations_over_groundtruth() {
    check(
        case(
            "annotations over groundtruth",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "i.mp4",
                "--annotations",
                "seq/groundtruth.txt",
            ],
            &[2],
        )
        .says("input"),
    );
}

#[test]
fn ratios_collide() {
    check(
        case(
            "ratios collide",
            &["truncate", "g.mp4", "--ratios", "50%,50", "-o", "t.mp4"],
            &[2],
        )
        .says("twice"),
    );
}

#[test]
fn output_onto_a_fifo() {
    check(
        case("output onto a fifo", &["cut", "g.mp4", "-o", "p.mp4"], &[2])
            .says("not a regular file")
            .with(|d| mkfifo(&d.join("p.mp4"))),
    );
}

#[test]
fn output_onto_a_device() {
    check(
        case(
            "output onto a device",
            &["cut", "g.mp4", "-o", "/dev/null"],
            &[2],
        )
        .says("extension"),
    );
}

#[test]
fn output_onto_a_folder() {
    check(
        case(
            "output onto a folder",
            &["cut", "g.mp4", "-o", "seq2.mp4"],
            &[2],
        )
        .says("folder")
        .with(|d| std::fs::create_dir(d.join("seq2.mp4")).unwrap()),
    );
}

#[test]
fn boxes_out_onto_the_input_annotations() {
    check(
        case("boxes-out onto the input annotations", &["overlay", "g.mp4", "--boxes", "out.vstar.json", "--format", "vstar", "-o", "out.mp4", "--boxes-out", "vstar"], &[2]).says("input").with(|d| {
        std::fs::write(d.join("out.vstar.json"), r#"[{"vid": "g", "fps": 25, "width": 160, "height": 120, "frame_count": 40, "bboxes": [{"timestamp": 0.0, "frame_index": 0, "xmin": 1, "ymin": 1, "xmax": 9, "ymax": 9}]}]"#).unwrap();
    }),
    );
}

#[test]
fn boxes_json_onto_the_input_annotations() {
    check(
        case(
            "boxes.json onto the input annotations",
            &[
                "cut",
                "g.mp4",
                "--boxes",
                "out.boxes.json",
                "-o",
                "out.mp4",
                "--boxes-out",
                "vidprep",
            ],
            &[2],
        )
        .says("input")
        .with(|d| {
            std::fs::write(
                d.join("out.boxes.json"),
                r#"{"coords": "pixels", "tracks": []}"#,
            )
            .unwrap();
        }),
    );
}

#[test]
fn frames_into_a_folder_of_other_files() {
    check(
        case(
            "frames into a folder of other files",
            &["export", "frames", "g.mp4", "--out-dir", "."],
            &[2],
        )
        .says("holds the input"),
    );
}

#[test]
fn frames_into_the_sequence() {
    check(
        case(
            "frames into the sequence",
            &["export", "frames", "g.mp4", "--out-dir", "seq"],
            &[2],
        )
        .says("did not write"),
    );
}

#[test]
fn container_by_name() {
    check(case("container by name", &["cut", "g.mp4", "-o", "x.webm"], &[2]).says("WebM"));
}

#[test]
fn unknown_container() {
    check(case("unknown container", &["cut", "g.mp4", "-o", "x.avi"], &[2]).says(".avi"));
}

#[test]
fn no_extension() {
    check(case("no extension", &["cut", "g.mp4", "-o", "x"], &[2]).says("extension"));
}

#[test]
fn c_240_character_name() {
    let long = format!("{}.mp4", "n".repeat(240));
    check(
        case(
            "240-character name",
            &["cut", "g.mp4", "--preset", "ultrafast", "-o", &long],
            &[0],
        )
        .writes(&long)
        .writes(&format!("{}.json", "n".repeat(240))),
    );
}

#[test]
fn missing_folders_are_made() {
    check(
        case(
            "missing folders are made",
            &["cut", "g.mp4", "--preset", "ultrafast", "-o", "a/b/c.mp4"],
            &[0],
        )
        .writes("a"),
    );
}

#[test]
fn earlier_output_replaced() {
    check(
        case(
            "earlier output replaced",
            &["cut", "g.mp4", "--preset", "ultrafast", "-o", "o.mp4"],
            &[0],
        )
        .writes("o.mp4")
        .writes("o.json")
        .with(|d| {
            std::fs::write(d.join("o.mp4"), b"old").unwrap();
            // An earlier run's sidecar (a file vidprep did not write is never replaced).
            std::fs::write(
                d.join("o.json"),
                br#"{"vidprep_version": "0.0.1", "output": {"path": "o.mp4"}}"#,
            )
            .unwrap();
        }),
    );
}

#[test]
fn earlier_frames_replaced_whole() {
    check(
        case(
            "earlier frames replaced whole",
            &[
                "export",
                "frames",
                "g.mp4",
                "--count",
                "4",
                "--out-dir",
                "f",
            ],
            &[0],
        )
        .writes("f")
        .with(|d| {
            // An earlier export: its frames.json (vidprep's schema) lists its eight images.
            std::fs::create_dir(d.join("f")).unwrap();
            let files: Vec<String> = (0..8)
                .map(|i| format!(r#"{{"file": "{i:02}_old.jpg"}}"#))
                .collect();
            std::fs::write(
                d.join("f/frames.json"),
                format!(
                    r#"{{"vidprep_version": "0.1.0", "sources": [], "total_frames": 40, "frames": [{}], "strip": null, "payload": null, "jsonl": null}}"#,
                    files.join(", ")
                ),
            )
            .unwrap();
            for i in 0..8 {
                std::fs::write(d.join(format!("f/{i:02}_old.jpg")), b"x").unwrap();
            }
        })
        .then(|d| {
            // The earlier export is replaced as a whole: four new images, no old one.
            let mut names: Vec<String> = std::fs::read_dir(d.join("f"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            let images = names.iter().filter(|n| n.ends_with(".jpg")).count();
            if images != 4 || names.iter().any(|n| n.contains("_old")) {
                return Err(format!("the folder holds {names:?}"));
            }
            Ok(())
        }),
    );
}

#[test]
fn sidecar_path_is_a_folder() {
    check(
        case(
            "sidecar path is a folder",
            &["cut", "g.mp4", "-o", "s.mp4"],
            &[2],
        )
        .says("folder")
        .with(|d| std::fs::create_dir(d.join("s.json")).unwrap()),
    );
}

#[test]
fn ratios_refused_before_any_clip_is_written() {
    // One of the --ratios outputs cannot be written (a folder holds its name): nothing is
    // written, not the clips of the ratios before it either.
    for cmd in [
        &[
            "cut",
            "g.mp4",
            "--ratios",
            "50%,75%",
            "--preset",
            "ultrafast",
            "-o",
            "o.mp4",
        ][..],
        &[
            "truncate",
            "g.mp4",
            "--ratios",
            "50%,75%",
            "--preset",
            "ultrafast",
            "-o",
            "o.mp4",
        ][..],
    ] {
        check(
            case("ratios with a folder in an output's place", cmd, &[2])
                .says("o_75.mp4 exists and is a folder")
                .with(|d| std::fs::create_dir(d.join("o_75.mp4")).unwrap()),
        );
    }
}
