//! `vidprep run`, end to end: a 200-item manifest with bad items mixed in, a run killed with
//! SIGKILL and resumed, shards that split a manifest exactly, and one-pass items equal to the
//! same work done as separate steps.

use crate::common;
use crate::support;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::oracle::{self, PixFmt};
use common::synth::{Corruption, SynthVideo};
use serde_json::Value;
use support::{source_frames, temporaries, vidprep};

fn report(dir: &Path, name: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.join(name))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_200_item_manifest_with_bad_items_mixed_in() {
    let dir = tempfile::tempdir().unwrap();
    let sources: Vec<PathBuf> = (0..4)
        .map(|i| {
            SynthVideo::new(160, 120)
                .frames(60 + 10 * i)
                .code_block(8)
                .cached()
                .path
        })
        .collect();
    let corrupt = SynthVideo::new(160, 120)
        .frames(60)
        .code_block(8)
        .corrupt(Corruption::Garbage {
            at_fraction: 0.4,
            len_fraction: 0.3,
            seed: 9,
        })
        .cached()
        .path;
    let bad_boxes = dir.path().join("bad_boxes.txt");
    std::fs::write(&bad_boxes, "1,2,3\nnot numbers\n").unwrap();
    let mut lines = Vec::new();
    let mut expected_bad = HashSet::new();
    for i in 0..200 {
        let id = format!("item{i:03}");
        let src = sources[i % 4].display().to_string();
        let line = match i % 40 {
            7 => {
                expected_bad.insert(id.clone());
                format!(r#"{{"id": "{id}", "source": "missing/{i}.mp4"}}"#)
            }
            13 => {
                // Damaged but decodable: made from what decodes, with the damage reported.
                format!(
                    r#"{{"id": "{id}", "source": "{}", "exports": [{{"kind": "clip", "preset": "ultrafast"}}]}}"#,
                    corrupt.display()
                )
            }
            21 => {
                expected_bad.insert(id.clone());
                format!(r#"{{"id": "{id}", "source": "{src}", "start": 10, "end": 500}}"#)
            }
            29 => {
                expected_bad.insert(id.clone());
                format!(
                    r#"{{"id": "{id}", "source": "{src}", "boxes": {{"path": "{}", "format": "mot"}}}}"#,
                    bad_boxes.display()
                )
            }
            33 => {
                expected_bad.insert(id.clone());
                format!(
                    r#"{{"id": "{id}", "source": "{src}", "exports": [{{"kind": "thumbnail"}}]}}"#
                )
            }
            _ => {
                let start = i % 20;
                format!(
                    r#"{{"id": "{id}", "source": "{src}", "start": {start}, "end": {}, "exports": [{{"kind": "clip", "preset": "ultrafast"}}, {{"kind": "frames", "count": 3, "format": "png"}}]}}"#,
                    start + 12
                )
            }
        };
        lines.push(line);
    }
    let manifest = dir.path().join("m.jsonl");
    std::fs::write(&manifest, lines.join("\n")).unwrap();
    let out = dir.path().join("out");
    let a = vidprep()
        .arg("run")
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&out)
        .args(["--preset", "ultrafast"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    let rows = report(&out, "report.jsonl");
    assert_eq!(rows.len(), 200);
    let failed: HashSet<String> = rows
        .iter()
        .filter(|r| r["status"] == "failed")
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(failed, expected_bad);
    for r in rows.iter().filter(|r| r["status"] == "failed") {
        let e = r["error"].as_str().unwrap();
        assert!(e.contains(&format!("line {}", r["line"])), "{e}");
        let i: usize = r["id"].as_str().unwrap()[4..].parse().unwrap();
        let why = match i % 40 {
            7 => "file not found",
            21 => "outside the video",
            29 => "bad_boxes.txt line 1",
            _ => "unknown variant `thumbnail`",
        };
        assert!(e.contains(why), "{e}");
        assert!(
            !out.join(r["id"].as_str().unwrap()).exists(),
            "a failed item leaves nothing"
        );
    }
    // Manifest problems are reported before any work.
    let first_ok = stderr.find("ok ").unwrap_or(stderr.len());
    assert!(
        stderr.find("(manifest)").is_some_and(|p| p < first_ok),
        "{stderr}"
    );
    // The damaged items are made from what decodes, and the report says so.
    for r in rows
        .iter()
        .filter(|r| r["id"].as_str().unwrap()[4..].parse::<usize>().unwrap() % 40 == 13)
    {
        assert_eq!(r["status"], "ok", "{r}");
        assert!(
            r["damage"]
                .as_str()
                .unwrap()
                .contains("could not be decoded"),
            "{r}"
        );
    }
    // Every good item: the right frames in its clip, and its sampled frames.
    for (k, r) in rows
        .iter()
        .filter(|r| r["status"] == "ok")
        .filter(|r| r["id"].as_str().unwrap()[4..].parse::<usize>().unwrap() % 40 != 13)
        .enumerate()
    {
        let id = r["id"].as_str().unwrap();
        let i: usize = id[4..].parse().unwrap();
        let start = i % 20;
        let clip = out.join(id).join("clip.mp4");
        let sc: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(id).join("clip.json")).unwrap())
                .unwrap();
        assert_eq!(
            source_frames(&sc),
            (start..start + 12).collect::<Vec<_>>(),
            "{id}"
        );
        let fj: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(id).join("frames/frames.json")).unwrap(),
        )
        .unwrap();
        let picked: Vec<u64> = fj["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["source_frame"].as_u64().unwrap())
            .collect();
        assert_eq!(
            picked,
            vec![start as u64, start as u64 + 6, start as u64 + 11],
            "{id}: round(linspace(0, 11, 3)) of the clip"
        );
        if k % 15 == 0 {
            // Independent check on a sample: ffmpeg reads the clip's frames back.
            let codes = oracle::frame_codes(&clip);
            assert_eq!(
                codes,
                (start as u32..start as u32 + 12).collect::<Vec<_>>(),
                "{id}"
            );
            let img = oracle::decode_image(
                &out.join(id)
                    .join("frames")
                    .join(fj["frames"][1]["file"].as_str().unwrap()),
                PixFmt::Gray,
            );
            assert_eq!(img.code(), Some(start as u32 + 6));
        }
    }
    assert!(temporaries(&out).is_empty());
}

/// A manifest of `n` items whose clips take a moment each.
fn slow_manifest(dir: &Path, n: usize) -> PathBuf {
    let src = SynthVideo::new(320, 240).frames(120).cached().path;
    let lines: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id": "k{i:02}", "source": "{}", "exports": [{{"kind": "clip", "preset": "medium", "crf": 10}}, {{"kind": "frames", "count": 4}}]}}"#,
                src.display()
            )
        })
        .collect();
    let m = dir.join("m.jsonl");
    std::fs::write(&m, lines.join("\n")).unwrap();
    m
}

#[test]
fn a_killed_run_resumes_without_redoing_or_leaving_partial_files() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = slow_manifest(dir.path(), 12);
    let out = dir.path().join("out");
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    let mut child = std::process::Command::new(&bin)
        .arg("run")
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&out)
        .args(["--jobs", "1"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until a few items are complete, then kill the run in the middle of the next.
    let complete = |out: &Path| -> Vec<PathBuf> {
        (0..12)
            .map(|i| out.join(format!("k{i:02}")).join("item.json"))
            .filter(|p| p.exists())
            .collect()
    };
    let t0 = Instant::now();
    while complete(&out).len() < 4 {
        assert!(
            t0.elapsed() < Duration::from_secs(240),
            "the run made no progress"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done_before = complete(&out);
    assert!(
        done_before.len() < 12,
        "the run finished before it could be killed"
    );
    let mtimes: Vec<(PathBuf, std::time::SystemTime)> = done_before
        .iter()
        .map(|p| {
            let clip = p.with_file_name("clip.mp4");
            let t = std::fs::metadata(&clip).unwrap().modified().unwrap();
            (clip, t)
        })
        .collect();
    // Nothing under a final name is half-written: every clip that exists is complete.
    for i in 0..12 {
        let clip = out.join(format!("k{i:02}")).join("clip.mp4");
        if clip.exists() {
            assert_eq!(oracle::count_frames(&clip), 120, "{clip:?}");
        }
    }
    std::thread::sleep(Duration::from_millis(20));
    vidprep()
        .arg("run")
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&out)
        .args(["--resume", "--jobs", "2"])
        .assert()
        .success();
    let rows = report(&out, "report.jsonl");
    let skipped = rows.iter().filter(|r| r["status"] == "skipped").count();
    assert_eq!(skipped, done_before.len(), "completed items are not redone");
    assert!(rows
        .iter()
        .all(|r| r["status"] == "ok" || r["status"] == "skipped"));
    for (clip, t) in mtimes {
        assert_eq!(
            std::fs::metadata(&clip).unwrap().modified().unwrap(),
            t,
            "{clip:?} was produced twice"
        );
    }
    for i in 0..12 {
        let item = out.join(format!("k{i:02}"));
        assert_eq!(oracle::count_frames(&item.join("clip.mp4")), 120);
        assert!(item.join("frames/frames.json").exists());
    }
    assert!(temporaries(&out).is_empty(), "left {:?}", temporaries(&out));
    // A changed manifest entry is redone, the others are not.
    let text =
        std::fs::read_to_string(&manifest)
            .unwrap()
            .replacen("\"count\": 4", "\"count\": 5", 1);
    std::fs::write(&manifest, text).unwrap();
    vidprep()
        .arg("run")
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&out)
        .arg("--resume")
        .assert()
        .success();
    let rows = report(&out, "report.jsonl");
    assert_eq!(rows.iter().filter(|r| r["status"] == "ok").count(), 1);
    assert_eq!(rows[0]["status"], "ok");
    let fj: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("k00/frames/frames.json")).unwrap())
            .unwrap();
    assert_eq!(fj["frames"].as_array().unwrap().len(), 5);
}

#[test]
fn shards_are_disjoint_and_cover_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let src = SynthVideo::new(160, 120)
        .frames(20)
        .code_block(8)
        .cached()
        .path;
    let lines: Vec<String> =
        (0..30).map(|i| format!(r#"{{"id": "s{i}", "source": "{}", "end": 5, "exports": [{{"kind": "frames", "count": 2}}]}}"#, src.display())).collect();
    let manifest = dir.path().join("m.jsonl");
    std::fs::write(&manifest, lines.join("\n")).unwrap();
    let out = dir.path().join("out");
    let mut seen = HashSet::new();
    for shard in 0..3 {
        vidprep()
            .arg("run")
            .arg(&manifest)
            .arg("--out-dir")
            .arg(&out)
            .args(["--shard", &format!("{shard}/3")])
            .assert()
            .success();
        for r in report(&out, &format!("report.shard-{shard}-of-3.jsonl")) {
            assert!(
                seen.insert(r["id"].as_str().unwrap().to_string()),
                "{} in two shards",
                r["id"]
            );
        }
    }
    assert_eq!(seen.len(), 30);
    assert_eq!(
        seen,
        (0..30).map(|i| format!("s{i}")).collect::<HashSet<_>>()
    );
    let a = vidprep()
        .arg("run")
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&out)
        .args(["--shard", "3/3"])
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&a.get_output().stderr).contains("shard"));
}

#[test]
fn one_pass_equals_separate_steps() {
    let v = SynthVideo::new(320, 240)
        .frames(100)
        .gop(30)
        .bframes(2)
        .label(false)
        .audio_tone(440.0)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let boxes = dir.path().join("b.csv");
    std::fs::write(
        &boxes,
        "frame,track_id,x1,y1,x2,y2\n0,1,150,60,250,160\n99,1,200,80,300,180\n",
    )
    .unwrap();
    let manifest = dir.path().join("m.jsonl");
    std::fs::write(
        &manifest,
        format!(
            r#"{{"id": "one", "source": "{}", "start": "1s", "end": "3s", "decision": "75%", "boxes": {{"path": "{}", "labels": false, "thickness": 4}}, "exports": [{{"kind": "clip", "crf": 12}}, {{"kind": "frames", "count": 6, "format": "png"}}]}}"#,
            v.path.display(),
            boxes.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    vidprep()
        .arg("run")
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&out)
        .args(["--preset", "ultrafast"])
        .assert()
        .success();
    // The same work as separate steps: cut + truncate + overlay, then export frames.
    let step = dir.path().join("step.mp4");
    vidprep()
        .arg("overlay")
        .arg(&v.path)
        .args([
            "--start",
            "1s",
            "--end",
            "3s",
            "--decision",
            "75%",
            "--boxes",
        ])
        .arg(&boxes)
        .args([
            "--no-labels",
            "--thickness",
            "4",
            "--crf",
            "12",
            "--preset",
            "ultrafast",
            "-o",
        ])
        .arg(&step)
        .assert()
        .success();
    let frames_dir = dir.path().join("step_frames");
    vidprep()
        .args(["export", "frames"])
        .arg(&step)
        .arg("--out-dir")
        .arg(&frames_dir)
        .args(["--count", "6", "--format", "png"])
        .assert()
        .success();
    let one = oracle::decode_frames(&out.join("one/clip.mp4"), PixFmt::Yuv420p, None);
    let two = oracle::decode_frames(&step, PixFmt::Yuv420p, None);
    assert_eq!(one.len(), 38, "1.5 s of 25 fps: frames at 0 .. 1.48 s");
    assert_eq!(one.len(), two.len());
    for (k, (a, b)) in one.iter().zip(&two).enumerate() {
        assert!(oracle::psnr(a, b) >= 40.0, "clip frame {k}");
    }
    let j1: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("one/frames/frames.json")).unwrap())
            .unwrap();
    let j2: Value =
        serde_json::from_str(&std::fs::read_to_string(frames_dir.join("frames.json")).unwrap())
            .unwrap();
    let f1 = j1["frames"].as_array().unwrap();
    let f2 = j2["frames"].as_array().unwrap();
    assert_eq!(f1.len(), 6);
    for (a, b) in f1.iter().zip(f2) {
        assert_eq!(
            a["stream_frame"], b["source_frame"],
            "the same frames of the clip"
        );
        assert_eq!(
            a["source_frame"].as_u64().unwrap(),
            25 + b["source_frame"].as_u64().unwrap(),
            "traced back to the source"
        );
        let ia = oracle::decode_image(
            &out.join("one/frames").join(a["file"].as_str().unwrap()),
            PixFmt::Rgb24,
        );
        let ib = oracle::decode_image(&frames_dir.join(b["file"].as_str().unwrap()), PixFmt::Rgb24);
        // The separate steps add one generation of loss; the one pass does not.
        assert!(oracle::psnr(&ia, &ib) >= 35.0);
    }
    // The one pass shows the boxes and its audio matches the clip.
    let sc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("one/clip.json")).unwrap()).unwrap();
    assert_eq!(
        sc["annotations"]["tracks"][0]["keys"]
            .as_array()
            .unwrap()
            .len(),
        38
    );
    let probe = oracle::probe(&out.join("one/clip.mp4"));
    let ad = oracle::num(&oracle::stream(&probe, "audio").unwrap()["duration"]).unwrap();
    assert!((ad - 1.5).abs() < 0.03, "audio {ad}");
}

#[test]
fn fail_fast_stops_starting_items() {
    let dir = tempfile::tempdir().unwrap();
    let src = SynthVideo::new(160, 120)
        .frames(20)
        .code_block(8)
        .cached()
        .path;
    let mut lines = vec![format!(
        r#"{{"id": "bad", "source": "{}", "start": 50}}"#,
        src.display()
    )];
    lines.extend((0..5).map(|i| {
        format!(
            r#"{{"id": "g{i}", "source": "{}", "end": 5}}"#,
            src.display()
        )
    }));
    let manifest = dir.path().join("m.jsonl");
    std::fs::write(&manifest, lines.join("\n")).unwrap();
    let out = dir.path().join("out");
    vidprep()
        .arg("run")
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&out)
        .args(["--jobs", "1", "--fail-fast", "--json"])
        .assert()
        .code(1);
    let rows = report(&out, "report.jsonl");
    assert_eq!(rows[0]["status"], "failed");
    assert!(
        rows[1..].iter().all(|r| r["status"] == "not_run"),
        "{rows:?}"
    );
}

/// The status of each item in a run's report.
fn statuses(dir: &Path) -> std::collections::BTreeMap<String, String> {
    report(dir, "report.jsonl")
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn resume(dir: &Path) -> std::collections::BTreeMap<String, String> {
    vidprep()
        .current_dir(dir)
        .args([
            "run",
            "m.jsonl",
            "--out-dir",
            "out",
            "--resume",
            "--preset",
            "ultrafast",
        ])
        .assert()
        .success();
    statuses(&dir.join("out"))
}

fn expect(dir: &Path, redone: &[&str]) {
    let got = resume(dir);
    for (id, status) in &got {
        let want = if redone.contains(&id.as_str()) {
            "ok"
        } else {
            "skipped"
        };
        assert_eq!(status, want, "item {id}: {got:?}");
    }
}

#[test]
fn resume_redoes_exactly_the_items_whose_outputs_or_inputs_changed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let example = crate::repo_root().join("fixtures/example");
    for f in ["street.mp4", "track.csv"] {
        std::fs::copy(example.join(f), d.join(f)).unwrap();
    }
    std::fs::copy(example.join("street.mp4"), d.join("other.mp4")).unwrap();
    std::fs::create_dir(d.join("needle")).unwrap();
    for e in std::fs::read_dir(example.join("needle")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.join("needle").join(e.file_name())).unwrap();
    }
    let manifest = |frames_count: usize| {
        let lines = [
            r#"{"id": "clip", "source": "street.mp4", "end": 50}"#.to_string(),
            format!(
                r#"{{"id": "frames", "source": "other.mp4", "exports": [{{"kind": "frames", "count": {frames_count}, "payload": "openai", "strip": true}}]}}"#
            ),
            r#"{"id": "needle", "source": "other.mp4", "insert": {"sequence": "needle", "at": 10}, "exports": [{"kind": "frames", "count": 4}]}"#.to_string(),
            r#"{"id": "boxes", "source": "other.mp4", "boxes": "track.csv", "end": 30}"#.to_string(),
        ];
        std::fs::write(d.join("m.jsonl"), lines.join("\n") + "\n").unwrap();
    };
    manifest(6);
    expect(d, &["clip", "frames", "needle", "boxes"]);
    // Nothing changed: nothing redone.
    expect(d, &[]);

    // One output deleted (the payload): that item alone.
    std::fs::remove_file(d.join("out/frames/frames/payload.json")).unwrap();
    expect(d, &["frames"]);
    assert!(d.join("out/frames/frames/payload.json").is_file());

    // A clip cut short (a crash of another tool, a bad copy): redone, and whole again.
    let clip = d.join("out/clip/clip.mp4");
    let bytes = std::fs::read(&clip).unwrap();
    std::fs::write(&clip, &bytes[..100]).unwrap();
    expect(d, &["clip"]);
    assert_eq!(oracle::count_frames(&clip), 50);

    // The source touched (same bytes, new time): the one item made from it.
    common::cmd::run_ok(
        "touch",
        &[
            "-d",
            "2001-02-03 04:05:06",
            &common::cmd::p(&d.join("street.mp4")),
        ],
    );
    expect(d, &["clip"]);

    // The needle's annotations edited: the insertion.
    let gt = d.join("needle/groundtruth.txt");
    let text = std::fs::read_to_string(&gt).unwrap();
    std::fs::write(&gt, text.replacen(',', ".0,", 1)).unwrap();
    expect(d, &["needle"]);

    // The boxes file replaced: the item that draws them.
    let boxes = std::fs::read_to_string(d.join("track.csv")).unwrap();
    std::fs::write(d.join("track.csv"), boxes.replace("200,60", "201,61")).unwrap();
    expect(d, &["boxes"]);

    // A changed item: its old outputs are gone, not left beside the new ones.
    let images = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "jpg")
            })
            .count()
    };
    assert_eq!(
        images(&d.join("out/frames/frames")),
        7,
        "6 frames and a strip"
    );
    manifest(3);
    expect(d, &["frames"]);
    assert_eq!(
        images(&d.join("out/frames/frames")),
        4,
        "3 frames and a strip"
    );
    assert!(temporaries(d).is_empty(), "{:?}", temporaries(d));
}

/// A capped video that needs a second encode decodes its frames again; the report still
/// counts each item's frames once, and the summary is the sum of the items.
#[test]
fn frames_are_counted_once_when_a_capped_video_encodes_again() {
    let v = SynthVideo::new(320, 240).frames(60).quality(2).cached();
    let dir = tempfile::tempdir().unwrap();
    // Budgets from loose to tight: the solver's first aim misses some of them.
    let budgets = [60_000, 40_000, 30_000, 24_000, 20_000, 16_000];
    let lines: Vec<String> = budgets
        .iter()
        .map(|b| {
            format!(
                r#"{{"id": "b{b}", "source": "{}", "exports": [{{"kind": "video", "max_base64_bytes": {b}, "reencode": true, "preset": "ultrafast"}}]}}"#,
                v.path.display()
            )
        })
        .collect();
    let manifest = dir.path().join("m.jsonl");
    std::fs::write(&manifest, lines.join("\n")).unwrap();
    let out = dir.path().join("out");
    let a = vidprep()
        .arg("run")
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&out)
        .args(["--jobs", "2", "--json"])
        .assert();
    let summary: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let rows = report(&out, "report.jsonl");
    let mut retried = 0;
    let mut total = 0;
    for r in &rows {
        if r["status"] != "ok" {
            continue;
        }
        assert_eq!(r["frames"], 60, "{r}");
        total += 60;
        let sc: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(r["id"].as_str().unwrap()).join("video.json"))
                .unwrap(),
        )
        .unwrap();
        if sc["budget"]["encodes"].as_u64().unwrap() >= 2 {
            retried += 1;
        }
    }
    assert!(
        retried >= 1,
        "no budget needed a second encode, so nothing was tested: {rows:?}"
    );
    assert_eq!(summary["frames"], total, "{summary}");
}
