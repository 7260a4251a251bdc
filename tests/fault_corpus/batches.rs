//! Manifests and batches.

use super::*;

fn ok_line(id: &str) -> String {
    format!(
        r#"{{"id": "{id}", "source": "g.mp4", "end": 10, "exports": [{{"kind": "clip", "preset": "ultrafast"}}]}}"#
    )
}

#[test]
fn bom_manifest() {
    let ok1 = ok_line("a");
    check(
        case(
            "bom manifest",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[0],
        )
        .writes("out")
        .with(move |d| {
            std::fs::write(d.join("m.jsonl"), format!("\u{feff}{ok1}\n")).unwrap();
        }),
    );
}

/// A manifest whose one line is bad: the run reports it (line 1) and makes nothing else.
fn bad_line(line: &str, fifo_source: bool) -> Case {
    let line = line.to_string();
    let name = line.clone();
    case(
        &format!("manifest: {name}"),
        &["run", "m.jsonl", "--out-dir", "out"],
        &[1],
    )
    .says("m.jsonl line 1")
    .writes("out")
    .with(move |d| {
        if fifo_source {
            mkfifo(&d.join("f.mp4"));
        }
        manifest(d, "m.jsonl", std::slice::from_ref(&line));
    })
}

cases!(bad_line:
    id_report_jsonl => (r#"{"id": "report.jsonl", "source": "g.mp4"}"#, false),
    id_report_shard => (r#"{"id": "report.shard-0-of-2.jsonl", "source": "g.mp4"}"#, false),
    id_with_slash => (r#"{"id": "../x", "source": "g.mp4"}"#, false),
    id_starting_with_a_dot => (r#"{"id": ".x", "source": "g.mp4"}"#, false),
    export_named_item => (r#"{"id": "a", "source": "g.mp4", "exports": [{"kind": "clip", "name": "item"}]}"#, false),
    unknown_field => (r#"{"id": "a", "source": "g.mp4", "colour": "red"}"#, false),
    unknown_export => (r#"{"id": "a", "source": "g.mp4", "exports": [{"kind": "gif"}]}"#, false),
    exports_not_a_list => (r#"{"id": "a", "source": "g.mp4", "exports": {"kind": "clip"}}"#, false),
    source_is_a_number => (r#"{"id": "a", "source": 5}"#, false),
    time_is_an_object => (r#"{"id": "a", "source": "g.mp4", "start": {"s": 1}}"#, false),
    huge_frame_number => (r#"{"id": "a", "source": "g.mp4", "start": 18446744073709551616}"#, false),
    negative_frame_number => (r#"{"id": "a", "source": "g.mp4", "start": -3}"#, false),
    not_json => (r#"{"id": "a", "source": "#, false),
    array_line => ("[1, 2, 3]", false),
    missing_source => (r#"{"id": "a", "source": "nope.mp4"}"#, false),
    fifo_source => (r#"{"id": "a", "source": "f.mp4"}"#, true),
    two_decisions_forms => (r#"{"id": "a", "source": "g.mp4", "span": {"start": 1}, "start": 2}"#, false),
    insert_at_and_seed => (r#"{"id": "a", "source": "g.mp4", "insert": {"sequence": "seq", "at": 0, "seed": 1}}"#, false),
    boxes_out_without_boxes => (r#"{"id": "a", "source": "g.mp4", "exports": [{"kind": "clip", "boxes_out": "vstar"}]}"#, false),
    copy_with_insert => (r#"{"id": "a", "source": "g.mp4", "insert": {"sequence": "seq", "at": 0}, "exports": [{"kind": "clip", "copy": true}]}"#, false),
);

#[test]
fn duplicate_ids() {
    let (a, b) = (ok_line("a"), ok_line("a"));
    check(
        case(
            "duplicate ids",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .says("duplicate id")
        .writes("out")
        .with(move |d| manifest(d, "m.jsonl", &[a.clone(), b.clone()])),
    );
}

#[test]
fn empty_manifest() {
    check(
        case(
            "empty manifest",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[0],
        )
        .writes("out")
        .with(|d| manifest(d, "m.jsonl", &[])),
    );
}

#[test]
fn binary_manifest() {
    check(
        case(
            "binary manifest",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .says("m.jsonl")
        .with(|d| std::fs::write(d.join("m.jsonl"), b"\xff\xfe\x00garbage").unwrap()),
    );
}

#[test]
fn fifo_manifest() {
    check(
        case(
            "fifo manifest",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1, 2],
        )
        .says("m.jsonl")
        .with(|d| mkfifo(&d.join("m.jsonl"))),
    );
}

#[test]
fn jobs_10000() {
    let l = ok_line("a");
    check(
        case(
            "jobs 10000",
            &["run", "m.jsonl", "--out-dir", "out", "--jobs", "4096"],
            &[0],
        )
        .writes("out")
        .with(move |d| manifest(d, "m.jsonl", std::slice::from_ref(&l))),
    );
}

#[test]
fn source_inside_its_item_folder() {
    check(
        case(
            "source inside its item folder",
            &["run", "m.jsonl", "--out-dir", "."],
            &[2],
        )
        .says("holds its input")
        .with(|d| {
            std::fs::create_dir(d.join("a")).unwrap();
            std::fs::copy(d.join("g.mp4"), d.join("a/clip.mp4")).unwrap();
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "a/clip.mp4"}"#.to_string()],
            );
        }),
    );
}

#[test]
fn manifest_inside_an_item_folder() {
    check(
        case(
            "manifest inside an item folder",
            &["run", "a/item.json", "--out-dir", "."],
            &[2],
        )
        .says("holds its input")
        .with(|d| {
            std::fs::create_dir(d.join("a")).unwrap();
            manifest(
                d,
                "a/item.json",
                &[r#"{"id": "a", "source": "../g.mp4"}"#.to_string()],
            );
        }),
    );
}

#[test]
fn manifest_where_the_report_goes() {
    check(
        case(
            "manifest where the report goes",
            &["run", "report.jsonl", "--out-dir", "."],
            &[2],
        )
        .says("report")
        .with(|d| {
            manifest(
                d,
                "report.jsonl",
                &[r#"{"id": "a", "source": "g.mp4"}"#.to_string()],
            )
        }),
    );
}

#[test]
fn foreign_files_in_an_item_folder() {
    check(
        case(
            "foreign files in an item folder",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[2],
        )
        .says("did not write")
        .writes("out/report.jsonl")
        .with(|d| {
            std::fs::create_dir_all(d.join("out/a")).unwrap();
            std::fs::write(d.join("out/a/notes.txt"), b"mine").unwrap();
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g.mp4"}"#.to_string()],
            );
        }),
    );
}

#[test]
fn out_dir_is_a_file() {
    check(
        case(
            "out-dir is a file",
            &["run", "m.jsonl", "--out-dir", "g.mp4"],
            &[1, 2],
        )
        .with(|d| {
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g.mp4"}"#.to_string()],
            )
        }),
    );
}

#[test]
fn a_panic_fails_one_item() {
    let l = ok_line("b");
    check(
        case(
            "a panic fails one item",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .says("panic")
        .writes("out")
        .env("VIDPREP_FAULT_PANIC", "a")
        .with(move |d| {
            manifest(
                d,
                "m.jsonl",
                &[
                    r#"{"id": "a", "source": "g.mp4", "end": 5}"#.to_string(),
                    l.clone(),
                ],
            );
        })
        .then(|d| {
            // The other item finished; the report says why the first failed.
            let report = std::fs::read_to_string(d.join("out/report.jsonl")).unwrap();
            let lines: Vec<serde_json::Value> = report
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let status = |id: &str| {
                lines.iter().find(|r| r["id"] == id).map(|r| {
                    (
                        r["status"].clone(),
                        r["error"].clone(),
                        r["error_kind"].clone(),
                    )
                })
            };
            let (a, b) = (status("a"), status("b"));
            match (&a, &b) {
                (Some((sa, ea, ka)), Some((sb, _, _)))
                    if sa == "failed"
                        && ea.as_str().is_some_and(|e| e.contains("panic"))
                        && ka == "internal"
                        && sb == "ok"
                        && d.join("out/b/clip.mp4").is_file() =>
                {
                    Ok(())
                }
                _ => Err(format!("report: {report}")),
            }
        }),
    );
}

#[test]
fn item_with_a_200_tb_needle() {
    check(
        case(
            "item with a 200 TB needle",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .says("anno_fps")
        .writes("out")
        .with(|d| {
            std::fs::write(
                d.join("seq/meta_info.ini"),
                "[METAINFO]\nanno_fps: 1/1000000000000Hz\n",
            )
            .unwrap();
            manifest(
                d,
                "m.jsonl",
                &[
                    r#"{"id": "a", "source": "g.mp4", "insert": {"sequence": "seq", "seed": 1}}"#
                        .to_string(),
                ],
            );
        })
        .then(|d| {
            let report = std::fs::read_to_string(d.join("out/report.jsonl")).unwrap();
            if report.contains("\"failed\"") && report.contains("anno_fps") {
                Ok(())
            } else {
                Err(format!("report: {report}"))
            }
        }),
    );
}

#[test]
fn another_run_holds_the_folder() {
    check(
        case("another run holds the folder", &["run", "m.jsonl", "--out-dir", "out"], &[2]).says("in use").writes("out").with(|d| {
        std::fs::create_dir(d.join("out")).unwrap();
        // A lock held by a live process (this test's parent, pid 1 is always alive).
        std::fs::write(d.join("out/.vidprep-lock"), r#"{"pid": 1, "host": "elsewhere", "manifest": null, "shard": null, "started_unix": 0}"#).unwrap();
        manifest(d, "m.jsonl", &[r#"{"id": "a", "source": "g.mp4"}"#.to_string()]);
    }),
    );
}

#[test]
fn cut_manifest() {
    check(
        case(
            "cut manifest",
            &["cut", "--manifest", "m.jsonl", "--out-dir", "out"],
            &[0],
        )
        .writes("out")
        .with(|d| {
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g.mp4", "start": 1, "end": 9}"#.to_string()],
            );
        }),
    );
}

#[test]
fn cut_manifest_with_style_flags() {
    check(
        case(
            "cut manifest with style flags",
            &[
                "cut",
                "--manifest",
                "m.jsonl",
                "--out-dir",
                "out",
                "--thickness",
                "3",
            ],
            &[2],
        )
        .says("manifest item")
        .with(|d| manifest(d, "m.jsonl", &[])),
    );
}

#[test]
fn insert_hosts_with_no_hosts() {
    check(
        case(
            "insert hosts with no hosts",
            &[
                "insert",
                "--hosts",
                "nohosts",
                "--sequences",
                ".",
                "--count",
                "2",
                "--seed",
                "1",
                "--out-dir",
                "out",
            ],
            &[1],
        )
        .says("nohosts")
        .with(|d| std::fs::create_dir(d.join("nohosts")).unwrap()),
    );
}
