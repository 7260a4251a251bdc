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
    retired_span => (r#"{"id": "a", "source": "g.mp4", "span": {"start": 1}}"#, false),
    retired_annotations => (r#"{"id": "a", "source": "g.mp4", "boxes": "g.txt", "annotations": {"fill": "hold"}}"#, false),
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

/// A run of `m2.jsonl` (from the state the small run left: `out/a/clip.mp4`) whose item `b`
/// reads `b_source`, beside item `a` redone (frames 0 to 30 now) when `with_a`.
fn reads_another_items_output(b_source: &'static str, with_a: bool, shard: Option<&str>) -> Case {
    let mut args = vec!["run", "m2.jsonl", "--out-dir", "out"];
    if let Some(s) = shard {
        args.extend(["--shard", s]);
    }
    let refused = with_a;
    let c = case(
        &format!("item b reads {b_source} (item a in the run: {with_a}, shard {shard:?})"),
        &args,
        if refused { &[2] } else { &[0] },
    )
    .with(move |d| {
        small_run(d);
        let mut lines = Vec::new();
        if with_a {
            lines.push(r#"{"id": "a", "source": "g2.mp4", "end": 30, "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#.to_string());
        }
        lines.push(format!(
            r#"{{"id": "b", "source": "{b_source}", "exports": [{{"kind": "frames", "count": 4}}]}}"#
        ));
        manifest(d, "m2.jsonl", &lines);
    });
    if refused {
        c.says("item \"b\" reads")
            .says("item \"a\" of this run writes")
    } else {
        c.writes("out/b").writes("out/report.jsonl")
    }
}

/// The shard of a two-shard run that holds item `b`.
fn shard_of_b() -> &'static str {
    if vidprep::batch::shard_of("b", 2) == 0 {
        "0/2"
    } else {
        "1/2"
    }
}

#[test]
fn an_item_reading_another_items_output() {
    check(reads_another_items_output("out/a/clip.mp4", true, None));
}

#[test]
fn an_item_reading_another_items_output_by_a_dotted_path() {
    check(reads_another_items_output(
        "./out/../out/a/clip.mp4",
        true,
        None,
    ));
}

#[test]
fn an_item_reading_another_items_output_in_another_shard() {
    check(reads_another_items_output(
        "out/a/clip.mp4",
        true,
        Some(shard_of_b()),
    ));
}

#[test]
fn an_item_reading_an_earlier_runs_output_not_redone() {
    // Item a is not in this manifest: its folder is only read.
    check(reads_another_items_output("out/a/clip.mp4", false, None));
}

/// `out/a` is a symbolic link to `elsewhere`, which holds what `fill` puts there, a file
/// named like vidprep's temporaries and, with `note`, a file of the user's; a run of item `a`
/// is refused, naming the link, and nothing in `elsewhere` is touched.
fn linked_item_folder(fill: fn(&Path), note: bool) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    small_run(d);
    fill(d);
    std::fs::write(d.join("elsewhere/.vidprep-tmp-x-1-0.tmp"), b"not vidprep's").unwrap();
    if note {
        std::fs::write(d.join("elsewhere/notes.txt"), b"mine").unwrap();
    }
    std::os::unix::fs::symlink("../elsewhere", d.join("out/a")).unwrap();
    let before = snapshot(d);
    let elsewhere = snapshot(&d.join("elsewhere"));
    let out = vidprep()
        .args(["run", "m.jsonl", "--out-dir", "out"])
        .current_dir(d)
        .timeout(Duration::from_secs(90))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("out/a is a symbolic link") && stderr.contains("elsewhere"),
        "{stderr}"
    );
    assert_eq!(
        snapshot(&d.join("elsewhere")),
        elsewhere,
        "deleted through the link"
    );
    assert_eq!(snapshot(d), before);
}

fn empty_elsewhere(d: &Path) {
    std::fs::remove_dir_all(d.join("out/a")).unwrap();
    std::fs::create_dir(d.join("elsewhere")).unwrap();
}

#[test]
fn an_item_folder_that_is_a_link_to_a_folder() {
    linked_item_folder(empty_elsewhere, false);
}

#[test]
fn an_item_folder_that_is_a_link_to_a_folder_with_a_users_file() {
    linked_item_folder(empty_elsewhere, true);
}

#[test]
fn an_item_folder_that_is_a_link_to_an_item_folder() {
    // vidprep's own complete item folder, moved and linked back: still never written through.
    linked_item_folder(
        |d| std::fs::rename(d.join("out/a"), d.join("elsewhere")).unwrap(),
        false,
    );
}
