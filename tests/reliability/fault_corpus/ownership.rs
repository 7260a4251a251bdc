//! Ownership: a folder vidprep would replace as a whole must prove by its marker's content
//! (vidprep's schema, listing the files it wrote) that vidprep wrote it. A file merely named
//! `frames.json` or `item.json` proves nothing, and a file the marker does not list is never
//! deleted: the request is refused (exit 2) naming it, and nothing is touched.

use std::path::Path;

use super::*;

/// A user's project folder `proj/`: their README, their annotations and `frames_json`.
fn project(d: &Path, frames_json: &str) {
    std::fs::create_dir_all(d.join("proj/annotations")).unwrap();
    std::fs::write(d.join("proj/frames.json"), frames_json).unwrap();
    std::fs::write(d.join("proj/README.txt"), "my project\n").unwrap();
    std::fs::write(d.join("proj/annotations/boxes.csv"), "frame,x1\n0,1\n").unwrap();
}

#[test]
fn frames_over_a_project_folder_with_a_file_named_frames_json() {
    check(
        case(
            "frames over a project folder",
            &[
                "export",
                "frames",
                "g.mp4",
                "--out-dir",
                "proj",
                "--count",
                "4",
            ],
            &[2],
        )
        .says("did not write")
        .says("README.txt")
        .says("annotations/boxes.csv")
        .with(|d| project(d, r#"{"frames": ["mine.jpg"], "notes": "my own file"}"#)),
    );
}

#[test]
fn frames_over_an_earlier_export_holding_user_files() {
    // A real frames.json lists what vidprep wrote; the README and annotations it does not.
    check(
        case(
            "frames over an earlier export with user files",
            &[
                "export",
                "frames",
                "g.mp4",
                "--out-dir",
                "proj",
                "--count",
                "4",
            ],
            &[2],
        )
        .says("README.txt")
        .says("annotations/boxes.csv")
        .with(|d| {
            vidprep()
                .current_dir(d)
                .args([
                    "export",
                    "frames",
                    "g.mp4",
                    "--out-dir",
                    "proj",
                    "--count",
                    "3",
                ])
                .assert()
                .success();
            std::fs::create_dir(d.join("proj/annotations")).unwrap();
            std::fs::write(d.join("proj/README.txt"), "my project\n").unwrap();
            std::fs::write(d.join("proj/annotations/boxes.csv"), "frame,x1\n0,1\n").unwrap();
        }),
    );
}

#[test]
fn run_over_an_item_folder_holding_a_thesis() {
    check(
        case(
            "run over an item folder with item.json and thesis.tex",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[2],
        )
        .says("thesis.tex")
        .says("did not write")
        .with(|d| {
            small_run(d);
            std::fs::write(d.join("out/a/thesis.tex"), "\\documentclass{article}\n").unwrap();
            // Another plan for the item, so it would be made again.
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g2.mp4", "start": 5, "end": 20, "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#.to_string()],
            );
        }),
    );
}

#[test]
fn run_over_a_folder_with_a_file_named_item_json() {
    check(
        case(
            "run over a folder with a foreign item.json",
            &["run", "m.jsonl", "--out-dir", "out", "--resume"],
            &[2],
        )
        .says("thesis.tex")
        .says("item.json")
        .with(|d| {
            std::fs::create_dir_all(d.join("out/a")).unwrap();
            std::fs::write(d.join("out/a/item.json"), r#"{"title": "my thesis"}"#).unwrap();
            std::fs::write(d.join("out/a/thesis.tex"), "\\documentclass{article}\n").unwrap();
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g.mp4", "end": 5, "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#.to_string()],
            );
        }),
    );
}

#[test]
fn an_earlier_item_is_replaced_whole() {
    // The item's own files (listed in its item.json) are replaced; the item is current.
    check(
        case(
            "an earlier item is replaced",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[0],
        )
        .writes("out")
        .with(|d| {
            small_run(d);
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g2.mp4", "start": 5, "end": 20, "exports": [{"kind": "video", "preset": "ultrafast"}]}"#.to_string()],
            );
        })
        .then(|d| {
            let a = d.join("out/a");
            match (a.join("clip.mp4").exists(), a.join("video.mp4").is_file()) {
                (false, true) => Ok(()),
                other => Err(format!("clip.mp4 left, video.mp4 made: {other:?}")),
            }
        }),
    );
}

#[test]
fn a_review_page_folder_holding_user_files() {
    check(
        case(
            "review over a page folder with user files in data/",
            &["review", "out", "--manifest", "m.jsonl"],
            &[2],
        )
        .says("notes.txt")
        .with(|d| {
            small_run(d);
            vidprep()
                .current_dir(d)
                .args(["review", "out", "--manifest", "m.jsonl"])
                .assert()
                .success();
            std::fs::write(d.join("out/review/data/notes.txt"), "mine").unwrap();
        }),
    );
}

#[test]
fn a_persons_file_where_the_base64_or_the_boxes_go_is_never_replaced() {
    // `--base64 PATH` and the boxes file beside a clip (`NAME.vstar.json` may well be the
    // person's own V-STaR annotations) replaced whatever was there, exit 0. Now a file there
    // is replaced only when the output's sidecar records it as its own.
    let v = common::synth::SynthVideo::new(320, 240).frames(30).cached();
    let boxes = crate::repo_root().join("fixtures/annotations/plain/boxes.csv");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: [(&str, Vec<String>, &str); 3] = [
        (
            "c.b64",
            [
                "export",
                "video",
                "SRC",
                "-o",
                "c.mp4",
                "--base64",
                "c.b64",
                "--preset",
                "ultrafast",
            ]
            .map(String::from)
            .to_vec(),
            "c.mp4's Base64 text",
        ),
        (
            "k.vstar.json",
            [
                "cut",
                "SRC",
                "-o",
                "k.mp4",
                "--boxes",
                "BOXES",
                "--boxes-out",
                "vstar",
            ]
            .map(String::from)
            .to_vec(),
            "k.mp4's boxes file",
        ),
        (
            "e.boxes.json",
            [
                "export",
                "video",
                "SRC",
                "-o",
                "e.mp4",
                "--boxes",
                "BOXES",
                "--boxes-out",
                "vidprep",
                "--preset",
                "ultrafast",
            ]
            .map(String::from)
            .to_vec(),
            "e.mp4's boxes file",
        ),
    ];
    for (file, args, what) in &cases {
        let args: Vec<String> = args
            .iter()
            .map(|a| match a.as_str() {
                "SRC" => common::cmd::p(&v.path),
                "BOXES" => common::cmd::p(&boxes),
                _ => a.clone(),
            })
            .collect();
        let run = || {
            crate::support::vidprep()
                .current_dir(d)
                .args(&args)
                .output()
                .unwrap()
        };
        std::fs::write(d.join(file), "my annotations\n").unwrap();
        let out = run();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{file}: {stderr}");
        assert!(
            stderr.contains(&format!("{file}: is in the way of {what}")),
            "{file}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(d.join(file)).unwrap(),
            "my annotations\n",
            "{file}"
        );
        // Nothing of the request was written.
        let main = args[args.iter().position(|a| a == "-o").unwrap() + 1].clone();
        assert!(!d.join(&main).exists(), "{file}: {main} was written");
        // Moved away, the command writes it, and a rerun replaces its own.
        std::fs::remove_file(d.join(file)).unwrap();
        for _ in 0..2 {
            let out = run();
            assert!(
                out.status.success(),
                "{file}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_ne!(
                std::fs::read_to_string(d.join(file)).unwrap(),
                "my annotations\n"
            );
        }
    }
}
