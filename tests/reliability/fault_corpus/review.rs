//! review: the page never lands on an item, a foreign folder or the run itself, and review-apply never replaces a manifest.

use super::*;

#[test]
fn review_a_folder_that_is_no_run() {
    check(
        case("review a folder that is no run", &["review", "empty"], &[2])
            .says("no items")
            .with(|d| std::fs::create_dir(d.join("empty")).unwrap()),
    );
}

#[test]
fn review_a_file() {
    check(case("review a file", &["review", "g.mp4"], &[2]).says("not a folder"));
}

#[test]
fn review_page_onto_an_item() {
    check(
        case(
            "review page onto an item",
            &["review", "out", "-o", "out/a"],
            &[2],
        )
        .says("item's folder")
        .with(small_run),
    );
}

#[test]
fn review_page_into_a_foreign_folder() {
    check(
        case(
            "review page into a foreign folder",
            &["review", "out", "-o", "mine"],
            &[2],
        )
        .says("did not write")
        .with(|d| {
            small_run(d);
            std::fs::create_dir(d.join("mine")).unwrap();
            std::fs::write(d.join("mine/notes.txt"), "mine").unwrap();
        }),
    );
}

#[test]
fn review_page_onto_the_run_folder() {
    check(
        case(
            "review page onto the run folder",
            &["review", "out", "-o", "out"],
            &[2],
        )
        .says("run folder")
        .with(small_run),
    );
}

#[test]
fn review_page_where_a_file_is() {
    check(
        case(
            "review page where a file is",
            &["review", "out", "-o", "g.mp4"],
            &[2],
        )
        .says("not a folder")
        .with(small_run),
    );
}

#[test]
fn review_writes_only_its_page() {
    check(
        case(
            "review writes only its page",
            &["review", "out", "--manifest", "m.jsonl"],
            &[0],
        )
        .writes("out/review")
        .with(small_run)
        .then(|d| {
            let page = d.join("out/review");
            for f in [
                page.join("index.html"),
                page.join("assets/review.js"),
                page.join("data/index.js"),
                page.join("data/items/00000.js"),
                media_folder(&page, "a").join("preview.mp4"),
            ] {
                if !f.is_file() {
                    return Err(format!("the page lacks {}", f.display()));
                }
            }
            Ok(())
        }),
    );
}

#[test]
fn review_twice_replaces_its_page() {
    check(
        case(
            "review twice replaces its page",
            &["review", "out", "--manifest", "m.jsonl", "--thumbs", "3"],
            &[0],
        )
        .writes("out/review")
        .with(|d| {
            small_run(d);
            vidprep()
                .current_dir(d)
                .args(["review", "out", "--manifest", "m.jsonl"])
                .assert()
                .success();
        })
        .then(|d| {
            let thumbs = std::fs::read_dir(media_folder(&d.join("out/review"), "a").join("thumbs"))
                .unwrap()
                .count();
            (thumbs == 4).then_some(()).ok_or(format!(
                "{thumbs} files in thumbs/, expected 3 images and frames.json"
            ))
        }),
    );
}

#[test]
fn review_of_a_run_whose_source_is_gone() {
    check(
        case(
            "review of a run whose source is gone",
            &["review", "out"],
            &[1],
        )
        .says("no preview")
        .writes("out/review")
        .with(|d| {
            small_run(d);
            std::fs::remove_file(d.join("g2.mp4")).unwrap();
        })
        .then(|d| {
            let index = std::fs::read_to_string(d.join("out/review/data/index.js"))
                .map_err(|e| format!("no page: {e}"))?;
            index
                .contains("\"id\":\"a\"")
                .then_some(())
                .ok_or("item a is not listed".into())
        }),
    );
}

#[test]
fn review_apply_onto_its_manifest() {
    check(
        case(
            "review-apply onto its manifest",
            &[
                "review-apply",
                "d.json",
                "--manifest",
                "m.jsonl",
                "-o",
                "m.jsonl",
            ],
            &[2],
        )
        .says("overwrite an input")
        .with(|d| {
            small_run(d);
            decisions(d, r#"{"id": "a", "verdict": "rejected"}"#);
        }),
    );
}

#[test]
fn review_apply_elsewhere() {
    check(
        case(
            "review-apply elsewhere",
            &[
                "review-apply",
                "d.json",
                "--manifest",
                "m.jsonl",
                "-o",
                "sub/m.jsonl",
            ],
            &[2],
        )
        .says("must be written in the folder")
        .with(|d| {
            small_run(d);
            std::fs::create_dir(d.join("sub")).unwrap();
            decisions(d, r#"{"id": "a", "verdict": "rejected"}"#);
        }),
    );
}

#[test]
fn review_apply_not_decisions() {
    check(
        case(
            "review-apply not decisions",
            &["review-apply", "g.mp4", "--manifest", "m.jsonl"],
            &[1],
        )
        .says("not a review decisions file")
        .with(small_run),
    );
}

#[test]
fn review_apply_decisions_of_another_run() {
    check(
        case(
            "review-apply decisions of another run",
            &["review-apply", "d.json", "--manifest", "m.jsonl"],
            &[1],
        )
        .says("not in")
        .with(|d| {
            small_run(d);
            decisions(d, r#"{"id": "zz", "verdict": "rejected"}"#);
        }),
    );
}

#[test]
fn review_apply_a_frame_past_the_span() {
    check(
        case(
            "review-apply a frame past the span",
            &["review-apply", "d.json", "--manifest", "m.jsonl"],
            &[1],
        )
        .says("past the span")
        .with(|d| {
            small_run(d);
            decisions(
                d,
                r#"{"id": "a", "verdict": "accepted", "decision": {"frame": 21}, "reviewed": {"decision_frame": 15, "decision_requested": "75%", "span_frames": 20}}"#,
            );
        }),
    );
}

#[test]
fn review_apply_writes_the_reviewed_manifest() {
    check(
        case(
            "review-apply writes the reviewed manifest",
            &["review-apply", "d.json", "--manifest", "m.jsonl"],
            &[0],
        )
        .writes("m.reviewed.jsonl")
        .writes("m.reviewed.jsonl.review-apply.json")
        .with(|d| {
            small_run(d);
            decisions(
                d,
                r#"{"id": "a", "verdict": "accepted", "decision": {"frame": 5}, "reviewed": {"decision_frame": 15, "decision_requested": "75%", "span_frames": 20}}"#,
            );
        })
        .then(|d| {
            let text = std::fs::read_to_string(d.join("m.reviewed.jsonl")).unwrap();
            text.contains("\"decision\":5").then_some(()).ok_or(format!("decision not moved: {text}"))
        }),
    );
}

/// review-apply of a decision frame `frame` with no `reviewed` section (nothing says what
/// span the reviewer saw): checked against the manifest item's own span, 20 frames of the
/// small run's item (`start` 5, `end` 25) or the 40 frames of the whole `g.mp4`.
fn review_apply_unreviewed_span(frame: u64, whole: bool, code: i32) -> Case {
    let c = case(
        &format!("review-apply decision frame {frame} without reviewed (whole {whole})"),
        &["review-apply", "d.json", "--manifest", "m.jsonl"],
        &[code],
    )
    .with(move |d| {
        small_run(d);
        if whole {
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g2.mp4", "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#.to_string()],
            );
        }
        decisions(
            d,
            &format!(r#"{{"id": "a", "verdict": "accepted", "decision": {{"frame": {frame}}}}}"#),
        );
    });
    let frames = if whole { 40 } else { 20 };
    if code == 0 {
        c.writes("m.reviewed.jsonl")
            .writes("m.reviewed.jsonl.review-apply.json")
            .then(move |d| {
                let text = std::fs::read_to_string(d.join("m.reviewed.jsonl")).unwrap();
                text.contains(&format!("\"decision\":{frame}"))
                    .then_some(())
                    .ok_or(format!("decision not moved: {text}"))
            })
    } else {
        c.says("item \"a\"")
            .says(&format!("must be 1 to {frames}"))
            .says("m.jsonl (line 1)")
            .then(|d| {
                (!d.join("m.reviewed.jsonl").exists())
                    .then_some(())
                    .ok_or("a reviewed manifest was written".into())
            })
    }
}

cases!(review_apply_unreviewed_span:
    review_apply_unreviewed_frame_999999_of_40 => (999_999, true, 1),
    review_apply_unreviewed_frame_u64_max_of_40 => (u64::MAX, true, 1),
    review_apply_unreviewed_frame_41_of_40 => (41, true, 1),
    review_apply_unreviewed_frame_40_of_40 => (40, true, 0),
    review_apply_unreviewed_frame_21_of_20 => (21, false, 1),
    review_apply_unreviewed_frame_20_of_20 => (20, false, 0),
);

/// A manifest that names a source video, a boxes file and a subtitles file (`m.jsonl`), and
/// decisions (`d.json`) that move its decision point: review-apply reads all of them, and its
/// span is given (nothing is decoded).
fn apply_setup(d: &Path) {
    std::fs::write(
        d.join("subs.srt"),
        "1\n00:00:00,000 --> 00:00:01,000\nhello\n",
    )
    .unwrap();
    manifest(
        d,
        "m.jsonl",
        &[r#"{"id": "a", "source": "g.mp4", "end": 20, "decision": "75%", "boxes": {"path": "boxes.csv"}, "exports": [{"kind": "frames", "count": 4, "subtitles": "subs.srt"}]}"#.to_string()],
    );
    decisions(
        d,
        r#"{"id": "a", "verdict": "accepted", "decision": {"frame": 5}, "reviewed": {"decision_frame": 15, "decision_requested": "75%", "span_frames": 20}}"#,
    );
}

/// `review-apply -o OUTPUT` onto a file it must not replace: refused (exit 2) with `says`,
/// every file byte-identical after (the corpus checks), no reviewed manifest anywhere.
fn review_apply_onto(output: &str, says: &str) -> Case {
    case(
        &format!("review-apply -o {output}"),
        &[
            "review-apply",
            "d.json",
            "--manifest",
            "m.jsonl",
            "-o",
            output,
        ],
        &[2],
    )
    .says(says)
    .with(|d| {
        apply_setup(d);
        std::fs::write(d.join("notes.jsonl"), "my own notes\n").unwrap();
    })
}

cases!(review_apply_onto:
    review_apply_onto_the_source_video => ("g.mp4", "refusing to overwrite an input"),
    review_apply_onto_the_boxes => ("boxes.csv", "refusing to overwrite an input"),
    review_apply_onto_the_subtitles => ("subs.srt", "refusing to overwrite an input"),
    review_apply_onto_the_manifest => ("m.jsonl", "refusing to overwrite an input"),
    review_apply_onto_the_decisions => ("d.json", "refusing to overwrite an input"),
    review_apply_onto_an_unrelated_file => ("notes.jsonl", "was not written by `vidprep review-apply`"),
);

#[test]
fn review_apply_onto_a_file_of_the_needle_sequence() {
    // The manifest lives in the GOT-10k sequence's folder and inserts it (`"sequence": "."`):
    // the sequence's groundtruth.txt is beside the manifest, but inside a folder it reads.
    check(
        case(
            "review-apply onto a file of the needle sequence",
            &[
                "review-apply",
                "seq/d.json",
                "--manifest",
                "seq/m.jsonl",
                "-o",
                "seq/groundtruth.txt",
            ],
            &[2],
        )
        .says("inside the input folder")
        .with(|d| {
            manifest(
                &d.join("seq"),
                "m.jsonl",
                &[r#"{"id": "a", "source": "../g.mp4", "end": 20, "insert": {"sequence": ".", "at": "50%"}}"#.to_string()],
            );
            decisions(&d.join("seq"), r#"{"id": "a", "verdict": "rejected"}"#);
        }),
    );
}

#[test]
fn review_apply_without_o_onto_a_foreign_reviewed_name() {
    // The default output's name is taken by a file review-apply did not write.
    check(
        case(
            "review-apply onto a foreign m.reviewed.jsonl",
            &["review-apply", "d.json", "--manifest", "m.jsonl"],
            &[2],
        )
        .says("was not written by `vidprep review-apply`")
        .with(|d| {
            apply_setup(d);
            std::fs::write(d.join("m.reviewed.jsonl"), "{\"id\": \"mine\"}\n").unwrap();
        }),
    );
}

#[test]
fn review_apply_to_a_new_name() {
    check(
        case(
            "review-apply to a new name",
            &[
                "review-apply",
                "d.json",
                "--manifest",
                "m.jsonl",
                "-o",
                "new.jsonl",
            ],
            &[0],
        )
        .writes("new.jsonl")
        .writes("new.jsonl.review-apply.json")
        .with(apply_setup)
        .then(|d| {
            let text = std::fs::read_to_string(d.join("new.jsonl")).unwrap();
            text.contains("\"decision\":5")
                .then_some(())
                .ok_or(format!("decision not moved: {text}"))
        }),
    );
}

/// The setup, then a first review-apply into `new.jsonl` (moving the decision point to 5),
/// then decisions that move it to 9.
fn applied_once(d: &Path) {
    apply_setup(d);
    vidprep()
        .current_dir(d)
        .args([
            "review-apply",
            "d.json",
            "--manifest",
            "m.jsonl",
            "-o",
            "new.jsonl",
        ])
        .assert()
        .success();
    decisions(
        d,
        r#"{"id": "a", "verdict": "accepted", "decision": {"frame": 9}, "reviewed": {"decision_frame": 15, "decision_requested": "75%", "span_frames": 20}}"#,
    );
}

#[test]
fn review_apply_over_its_earlier_output() {
    check(
        case(
            "review-apply over its earlier output",
            &[
                "review-apply",
                "d.json",
                "--manifest",
                "m.jsonl",
                "-o",
                "new.jsonl",
            ],
            &[0],
        )
        .writes("new.jsonl")
        .writes("new.jsonl.review-apply.json")
        .with(applied_once)
        .then(|d| {
            let text = std::fs::read_to_string(d.join("new.jsonl")).unwrap();
            text.contains("\"decision\":9")
                .then_some(())
                .ok_or(format!("not replaced: {text}"))
        }),
    );
}

#[test]
fn review_apply_over_its_earlier_output_edited_since() {
    // Edited by hand after review-apply wrote it: the file is partly someone's now.
    check(
        case(
            "review-apply over its earlier output, edited since",
            &[
                "review-apply",
                "d.json",
                "--manifest",
                "m.jsonl",
                "-o",
                "new.jsonl",
            ],
            &[2],
        )
        .says("was not written by `vidprep review-apply`")
        .with(|d| {
            applied_once(d);
            let mut text = std::fs::read_to_string(d.join("new.jsonl")).unwrap();
            text.push_str("# my note\n");
            std::fs::write(d.join("new.jsonl"), text).unwrap();
        }),
    );
}

#[test]
fn review_apply_of_a_json_array_over_its_earlier_output() {
    check(
        case(
            "review-apply of a JSON array over its earlier output",
            &["review-apply", "d.json", "--manifest", "m.json", "-o", "new.json"],
            &[0],
        )
        .writes("new.json")
        .writes("new.json.review-apply.json")
        .with(|d| {
            apply_setup(d);
            let line = std::fs::read_to_string(d.join("m.jsonl")).unwrap();
            std::fs::write(d.join("m.json"), format!("[{}]\n", line.trim())).unwrap();
            vidprep()
                .current_dir(d)
                .args(["review-apply", "d.json", "--manifest", "m.json", "-o", "new.json"])
                .assert()
                .success();
            decisions(
                d,
                r#"{"id": "a", "verdict": "accepted", "decision": {"frame": 9}, "reviewed": {"decision_frame": 15, "decision_requested": "75%", "span_frames": 20}}"#,
            );
        })
        .then(|d| {
            let text = std::fs::read_to_string(d.join("new.json")).unwrap();
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            (v[0]["decision"] == 9)
                .then_some(())
                .ok_or(format!("not replaced: {text}"))
        }),
    );
}

/// The folder of item `id`'s preview in the page `page`: `media/ID.HASH` (a new span or
/// thumbnail count gets a new one).
pub(super) fn media_folder(page: &Path, id: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(page.join("media"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            (name == id || name.starts_with(&format!("{id}."))) && p.is_dir()
        })
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.pop().unwrap()
}

/// The item records of a review page (`data/items/*.js`, each a script around one JSON
/// object).
fn page_items(page: &Path) -> Vec<serde_json::Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(page.join("data/items"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let (a, b) = (text.find('{').unwrap(), text.rfind('}').unwrap());
            serde_json::from_str(&text[a..=b]).unwrap_or_else(|e| panic!("{}: {e}", f.display()))
        })
        .collect()
}

/// What a page shows must be on disk and be what it says: every media file a page names
/// exists, and its preview has the frames the page says.
fn page_is_whole(page: &Path) -> Result<(), String> {
    for item in page_items(page) {
        let text = item.to_string();
        let mut named = 0;
        for part in text.split('"').filter(|p| p.starts_with("media/")) {
            named += 1;
            if !page.join(part).is_file() {
                return Err(format!("the page names {part}, which is not there"));
            }
        }
        let preview = &item["preview"];
        if let Some(path) = preview["path"].as_str() {
            let frames = crate::common::oracle::count_frames(&page.join(path));
            if Some(frames) != preview["frames"].as_u64() {
                return Err(format!(
                    "{path} has {frames} frames; the page says {}",
                    preview["frames"]
                ));
            }
        } else if named == 0 {
            return Err(format!("the page shows no preview: {text}"));
        }
    }
    Ok(())
}

#[test]
fn an_interrupted_review_leaves_the_earlier_page_whole_with_its_own_media() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    small_run(d);
    let review = ["review", "out", "--manifest", "m.jsonl", "--thumbs", "24"];
    vidprep().current_dir(d).args(review).assert().success();
    let page = d.join("out/review");
    page_is_whole(&page).unwrap();
    let first = media_folder(&page, "a");

    // The item's span changes and the run makes it again; a review is then killed after its
    // previews are made, when its page is about to go in place (and, in a second copy, at
    // each step of that page's commit).
    manifest(
        d,
        "m.jsonl",
        &[r#"{"id": "a", "source": "g2.mp4", "start": 2, "end": 40, "decision": "75%", "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#.to_string()],
    );
    vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "out", "--resume"])
        .assert()
        .success();
    let probe = super::fleet::copy_of(d);
    let steps = super::fleet::steps(probe.path(), &review, &[]);
    let page_steps: Vec<usize> = steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.contains("review/index.html") || s.contains("review/data"))
        .map(|(i, _)| i + 1)
        .collect();
    assert!(!page_steps.is_empty(), "{steps:?}");
    for step in page_steps.iter().copied().chain([page_steps[0] - 1]) {
        let copy = super::fleet::copy_of(d);
        let c = copy.path();
        let paused = super::fleet::Paused::start(c, &review, step, &[], None, &[]);
        paused.kill();
        let page = c.join("out/review");
        if let Err(e) = page_is_whole(&page) {
            panic!("killed at step {step} ({}): {e}", steps[step - 1]);
        }
    }
    // Uninterrupted, the new page shows the new span, and the earlier preview is gone.
    vidprep().current_dir(d).args(review).assert().success();
    page_is_whole(&page).unwrap();
    let second = media_folder(&page, "a");
    assert_ne!(first, second);
    assert!(!first.exists());
    let items = page_items(&page);
    assert_eq!(items[0]["preview"]["frames"], 38, "{}", items[0]);
}
