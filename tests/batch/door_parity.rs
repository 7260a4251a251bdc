//! The same request through every door gives the same files. For each export kind (clip,
//! stream copy, capped video, sampled frames) and each stage (span, decision, boxes, insert),
//! a request is made as a single command and as a manifest line (through `run`, and through
//! `cut --manifest` or the library where those doors apply); then:
//!
//! - both doors wrote the same file names;
//! - every JSON file (sidecar, `frames.json`, V-STaR annotations, payload) is identical once the
//!   output folder, the item id and wall-clock timings are blanked out;
//! - every video decodes (ffmpeg's framemd5: every video and audio frame) to the same checksums;
//! - every other file (images, strip, Base64) is byte-identical.

use crate::common;
use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use support::vidprep;

/// A folder with the bundled example (street video, its boxes, a GOT-10k needle).
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let example = crate::repo_root().join("fixtures/example");
    std::fs::copy(example.join("street.mp4"), dir.path().join("street.mp4")).unwrap();
    std::fs::copy(example.join("track.csv"), dir.path().join("track.csv")).unwrap();
    std::fs::create_dir(dir.path().join("needle")).unwrap();
    for e in std::fs::read_dir(example.join("needle")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.path().join("needle").join(e.file_name())).unwrap();
    }
    dir
}

/// Every file below `dir` (relative names), without the batch's own bookkeeping.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(dir).unwrap().to_path_buf())
        .filter(|p| p != Path::new("item.json"))
        .collect();
    out.sort();
    out
}

/// Keys that hold wall-clock timings (the only fields allowed to differ between runs).
const TIMINGS: &[&str] = &["encode_seconds"];

/// `v` with the door's output folder, item id and timings blanked out.
fn blank(v: &Value, folder: &str, id: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace(folder, "<OUT>")),
        Value::Array(a) => Value::Array(a.iter().map(|x| blank(x, folder, id)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| {
                    let x = if k == "id" && x.as_str() == Some(id) {
                        Value::String("<ID>".into())
                    } else if TIMINGS.contains(&k.as_str()) {
                        Value::Null
                    } else {
                        blank(x, folder, id)
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Where two JSON values differ: `path: a != b` lines.
fn json_diff(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let p = format!("{path}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => json_diff(u, v, &p, out),
                    (u, v) => out.push(format!("{p}: {u:?} != {v:?}")),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                json_diff(u, v, &format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} != {b}")),
        _ => {}
    }
}

/// ffmpeg's checksum of every decoded video and audio frame, with its timestamps.
fn framemd5(path: &Path) -> String {
    let out = common::cmd::run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-i",
            &common::cmd::p(path),
            "-f",
            "framemd5",
            "-",
        ],
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Asserts that two doors' folders hold the same files.
fn assert_same_outputs(label: &str, a: (&Path, &str, &str), b: (&Path, &str, &str)) {
    let (dir_a, folder_a, id_a) = a;
    let (dir_b, folder_b, id_b) = b;
    let names_a = files(dir_a);
    let names_b = files(dir_b);
    assert_eq!(names_a, names_b, "{label}: the doors wrote different files");
    assert!(!names_a.is_empty(), "{label}: nothing was written");
    for name in &names_a {
        let (pa, pb) = (dir_a.join(name), dir_b.join(name));
        let ext = name.extension().and_then(|e| e.to_str()).unwrap_or("");
        match ext {
            "json" => {
                let va: Value = serde_json::from_slice(&std::fs::read(&pa).unwrap()).unwrap();
                let vb: Value = serde_json::from_slice(&std::fs::read(&pb).unwrap()).unwrap();
                let (va, vb) = (blank(&va, folder_a, id_a), blank(&vb, folder_b, id_b));
                let mut diff = Vec::new();
                json_diff(&va, &vb, "", &mut diff);
                diff.truncate(20);
                assert!(
                    diff.is_empty(),
                    "{label}: {} differs ({} vs {}):\n{}",
                    name.display(),
                    pa.display(),
                    pb.display(),
                    diff.join("\n")
                );
            }
            "jsonl" => {
                let lines = |p: &Path, folder: &str, id: &str| -> Vec<Value> {
                    std::fs::read_to_string(p)
                        .unwrap()
                        .lines()
                        .map(|l| blank(&serde_json::from_str(l).unwrap(), folder, id))
                        .collect()
                };
                assert!(
                    lines(&pa, folder_a, id_a) == lines(&pb, folder_b, id_b),
                    "{label}: {} differs",
                    name.display()
                );
            }
            "mp4" | "mov" | "mkv" => {
                let (ma, mb) = (framemd5(&pa), framemd5(&pb));
                assert!(
                    ma.lines().count() > 5,
                    "{label}: {} decodes to nothing",
                    name.display()
                );
                let first = ma.lines().zip(mb.lines()).find(|(x, y)| x != y);
                assert!(
                    ma == mb,
                    "{label}: {} decodes differently ({} vs {} lines; first difference {first:?})",
                    name.display(),
                    ma.lines().count(),
                    mb.lines().count()
                );
            }
            _ => assert!(
                std::fs::read(&pa).unwrap() == std::fs::read(&pb).unwrap(),
                "{label}: {} differs",
                name.display()
            ),
        }
    }
}

/// Runs `args` (writing below `cli/`) and the manifest `line` (item id `a`) through `run`,
/// and, where `cut_manifest`, through `cut --manifest`; compares every door with the first.
fn check(label: &str, args: &[&str], line: &str, cut_manifest: bool) {
    let ws = workspace();
    let d = ws.path();
    vidprep()
        .current_dir(d)
        .args(args)
        .args(["--preset", "ultrafast"])
        .assert()
        .success();
    // Two copies of the item at once: the output does not depend on --jobs or threads.
    let twin = line.replacen(r#""id": "a""#, r#""id": "b""#, 1);
    std::fs::write(d.join("m.jsonl"), format!("{line}\n{twin}\n")).unwrap();
    vidprep()
        .current_dir(d)
        .args([
            "run",
            "m.jsonl",
            "--out-dir",
            "run",
            "--preset",
            "ultrafast",
            "--jobs",
            "2",
            "--codec-threads",
            "1",
        ])
        .assert()
        .success();
    // The command names its item after its output.
    let cli_id = ["clip", "video", "frames"]
        .into_iter()
        .find(|n| args.iter().any(|a| a.starts_with(&format!("cli/{n}"))))
        .unwrap();
    let cli = (d.join("cli"), "cli/", cli_id);
    assert_same_outputs(
        &format!("{label}: command vs run"),
        (&cli.0, cli.1, cli.2),
        (&d.join("run/a"), "run/a/", "a"),
    );
    assert_same_outputs(
        &format!("{label}: command vs run --jobs 2, second item"),
        (&cli.0, cli.1, cli.2),
        (&d.join("run/b"), "run/b/", "b"),
    );
    if cut_manifest {
        vidprep()
            .current_dir(d)
            .args([
                "cut",
                "--manifest",
                "m.jsonl",
                "--out-dir",
                "cut",
                "--preset",
                "ultrafast",
            ])
            .assert()
            .success();
        assert_same_outputs(
            &format!("{label}: command vs cut --manifest"),
            (&cli.0, cli.1, cli.2),
            (&d.join("cut/a"), "cut/a/", "a"),
        );
    }
}

#[test]
fn clip_with_span_decision_and_boxes() {
    check(
        "cut",
        &[
            "cut",
            "street.mp4",
            "--start",
            "5",
            "--end",
            "60",
            "--decision",
            "40",
            "--boxes",
            "track.csv",
            "-o",
            "cli/clip.mp4",
        ],
        r#"{"id": "a", "source": "street.mp4", "start": 5, "end": 60, "decision": 40, "boxes": "track.csv"}"#,
        true,
    );
}

#[test]
fn clip_with_a_span_object_and_export_settings() {
    // The span as an object and the preset on the export: the same plan once normalised.
    check(
        "cut span object",
        &[
            "cut",
            "street.mp4",
            "--start",
            "0.5s",
            "--end",
            "3s",
            "--crf",
            "30",
            "-o",
            "cli/clip.mp4",
        ],
        r#"{"id": "a", "source": "street.mp4", "start": "0.5s", "end": "3s", "exports": [{"kind": "clip", "crf": 30, "preset": "ultrafast"}]}"#,
        true,
    );
}

#[test]
fn truncation_by_percentage() {
    check(
        "truncate",
        &[
            "truncate",
            "street.mp4",
            "--at",
            "75%",
            "-o",
            "cli/clip.mp4",
        ],
        r#"{"id": "a", "source": "street.mp4", "decision": "75%"}"#,
        true,
    );
}

#[test]
fn overlay_with_style_and_boxes_out() {
    check(
        "overlay",
        &[
            "overlay",
            "street.mp4",
            "--boxes",
            "track.csv",
            "--thickness",
            "3",
            "--color",
            "red",
            "--no-labels",
            "--fill",
            "hold",
            "--boxes-out",
            "vstar",
            "--start",
            "1s",
            "-o",
            "cli/clip.mp4",
        ],
        r#"{"id": "a", "source": "street.mp4", "start": "1s", "boxes": {"path": "track.csv", "thickness": 3, "color": "red", "labels": false, "fill": "hold"}, "exports": [{"kind": "clip", "boxes_out": "vstar"}]}"#,
        true,
    );
}

#[test]
fn stream_copy() {
    check(
        "copy",
        &[
            "cut",
            "street.mp4",
            "--copy",
            "--start",
            "2s",
            "--end",
            "6s",
            "-o",
            "cli/clip.mp4",
        ],
        r#"{"id": "a", "source": "street.mp4", "start": "2s", "end": "6s", "exports": [{"kind": "clip", "copy": true}]}"#,
        true,
    );
}

/// `--copy --no-audio` on the command line and `"copy": true, "audio": false` on a manifest
/// line: the same file, without the source's AAC stream.
#[test]
fn stream_copy_without_audio() {
    check(
        "copy without audio",
        &[
            "cut",
            "street.mp4",
            "--copy",
            "--no-audio",
            "--start",
            "2s",
            "--end",
            "6s",
            "-o",
            "cli/clip.mp4",
        ],
        r#"{"id": "a", "source": "street.mp4", "start": "2s", "end": "6s", "exports": [{"kind": "clip", "copy": true, "audio": false}]}"#,
        true,
    );
}

#[test]
fn insertion_at_a_frame_and_by_seed() {
    check(
        "insert at",
        &[
            "insert",
            "--host",
            "street.mp4",
            "--sequence",
            "needle",
            "--at",
            "30",
            "--overlay",
            "-o",
            "cli/clip.mp4",
        ],
        r#"{"id": "a", "source": "street.mp4", "insert": {"sequence": "needle", "at": 30, "overlay": true}}"#,
        false,
    );
    check(
        "insert seed",
        &[
            "insert",
            "--host",
            "street.mp4",
            "--sequence",
            "needle",
            "--seed",
            "7",
            "--fit",
            "crop",
            "-o",
            "cli/clip.mp4",
        ],
        r#"{"id": "a", "source": "street.mp4", "insert": {"sequence": "needle", "seed": 7, "fit": "crop"}}"#,
        false,
    );
}

#[test]
fn capped_video_with_base64() {
    check(
        "export video",
        &[
            "export",
            "video",
            "street.mp4",
            "--max-size",
            "160x120",
            "--base64",
            "cli/video.b64",
            "--decision",
            "50%",
            "--boxes",
            "track.csv",
            "--boxes-out",
            "vidprep",
            "-o",
            "cli/video.mp4",
        ],
        r#"{"id": "a", "source": "street.mp4", "decision": "50%", "boxes": "track.csv", "exports": [{"kind": "video", "max_size": "160x120", "base64": true, "boxes_out": "vidprep"}]}"#,
        false,
    );
}

/// A capped video with audio whose budget takes two encodes, at the default preset: the same
/// bytes (video and Base64) from the command, from two manifest items at `--jobs 2`, and from
/// the library (what the Python package's `run`/`execute` call), twice in one process.
#[test]
fn capped_video_with_audio_and_two_encodes_is_the_same_bytes_through_every_door() {
    let ws = workspace();
    let d = ws.path();
    let budget = "150000";
    vidprep()
        .current_dir(d)
        .args([
            "export",
            "video",
            "street.mp4",
            "--max-base64-bytes",
            budget,
        ])
        .args([
            "--reencode",
            "--base64",
            "cli/video.b64",
            "-o",
            "cli/video.mp4",
        ])
        .assert()
        .success();
    let line = |id: &str| {
        format!(
            r#"{{"id": "{id}", "source": "street.mp4", "exports": [{{"kind": "video", "max_base64_bytes": {budget}, "reencode": true, "base64": true}}]}}"#
        )
    };
    std::fs::write(d.join("m.jsonl"), format!("{}\n{}\n", line("a"), line("b"))).unwrap();
    vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "run", "--jobs", "2"])
        .assert()
        .success();
    let mut folders = vec![d.join("run/a"), d.join("run/b")];
    for id in ["l1", "l2"] {
        let mut plan: vidprep::Plan = serde_json::from_str(&line(id)).unwrap();
        plan.resolve_paths(d);
        let folder = d.join("lib").join(id);
        vidprep::execute(
            &plan,
            &vidprep::Destination::Folder(folder.clone()),
            &vidprep::ExecOptions::default(),
            &mut vidprep::NoProgress,
        )
        .unwrap();
        folders.push(folder);
    }
    let cli = d.join("cli/video.mp4");
    let encodes = support::sidecar(&cli)["budget"]["encodes"].as_u64();
    assert_eq!(encodes, Some(2), "the budget is meant to take two encodes");
    for name in ["video.mp4", "video.b64"] {
        let want = std::fs::read(d.join("cli").join(name)).unwrap();
        for folder in &folders {
            let got = std::fs::read(folder.join(name)).unwrap();
            assert!(
                got == want,
                "{}: {} bytes, the command wrote {}",
                folder.join(name).display(),
                got.len(),
                want.len()
            );
        }
    }
}

/// #53: a video request body (`--payload gemini-video` under the gemini limits, and
/// `openai-video` under vllm's) is the same bytes from the command and from two manifest
/// items at `--jobs 2`, with the same sidecars.
#[test]
fn video_payloads_are_the_same_bytes_through_every_door() {
    for (payload, limits) in [("gemini-video", "gemini"), ("openai-video", "vllm")] {
        let ws = workspace();
        let d = ws.path();
        vidprep()
            .current_dir(d)
            .args(["export", "video", "street.mp4", "--max-size", "160x120"])
            .args(["--payload", payload, "--limits", limits])
            .args(["--preset", "ultrafast", "-o", "cli/video.mp4"])
            .assert()
            .success();
        let line = |id: &str| {
            format!(
                r#"{{"id": "{id}", "source": "street.mp4", "exports": [{{"kind": "video", "max_size": "160x120", "payload": "{payload}", "limits": "{limits}"}}]}}"#
            )
        };
        std::fs::write(d.join("m.jsonl"), format!("{}\n{}\n", line("a"), line("b"))).unwrap();
        vidprep()
            .current_dir(d)
            .args([
                "run",
                "m.jsonl",
                "--out-dir",
                "run",
                "--preset",
                "ultrafast",
            ])
            .args(["--jobs", "2", "--codec-threads", "1"])
            .assert()
            .success();
        let want = std::fs::read(d.join("cli/video.payload.json")).unwrap();
        for id in ["a", "b"] {
            assert_same_outputs(
                &format!("{payload}: command vs run, item {id}"),
                (&d.join("cli"), "cli/", "video"),
                (&d.join("run").join(id), &format!("run/{id}/"), id),
            );
            let got = std::fs::read(d.join("run").join(id).join("video.payload.json")).unwrap();
            assert!(
                got == want,
                "{payload}: item {id}'s body differs from the command's"
            );
        }
    }
}

#[test]
fn sampled_frames_with_strip_payload_and_boxes() {
    check(
        "export frames",
        &[
            "export",
            "frames",
            "street.mp4",
            "--count",
            "8",
            "--boxes",
            "track.csv",
            "--strip",
            "--payload",
            "openai",
            "--jsonl",
            "--max-size",
            "160x120",
            "--out-dir",
            "cli/frames",
        ],
        r#"{"id": "a", "source": "street.mp4", "boxes": "track.csv", "exports": [{"kind": "frames", "count": 8, "strip": true, "payload": "openai", "jsonl": true, "max_size": "160x120"}]}"#,
        false,
    );
    // #53: the vllm payload (one video/jpeg list, the source's indices and rate).
    check(
        "export frames vllm",
        &[
            "export",
            "frames",
            "street.mp4",
            "--count",
            "6",
            "--start",
            "2s",
            "--format",
            "jpg",
            "--payload",
            "vllm",
            "--out-dir",
            "cli/frames",
        ],
        r#"{"id": "a", "source": "street.mp4", "start": "2s", "exports": [{"kind": "frames", "count": 6, "format": "jpg", "payload": "vllm"}]}"#,
        false,
    );
    check(
        "export frames fps",
        &[
            "export",
            "frames",
            "street.mp4",
            "--fps",
            "2",
            "--max-frames",
            "10",
            "--start",
            "1s",
            "--end",
            "9s",
            "--decision",
            "6s",
            "--order",
            "shuffled",
            "--seed",
            "3",
            "--format",
            "png",
            "--out-dir",
            "cli/frames",
        ],
        r#"{"id": "a", "source": "street.mp4", "start": "1s", "end": "9s", "decision": "6s", "exports": [{"kind": "frames", "fps": 2, "max_frames": 10, "order": "shuffled", "seed": 3, "format": "png"}]}"#,
        false,
    );
}

#[test]
fn insert_hosts_items_are_plain_plans() {
    // `insert --hosts` draws its items' plans; each one, run as a manifest line, gives the
    // same files.
    let ws = workspace();
    let d = ws.path();
    std::fs::create_dir_all(d.join("hosts")).unwrap();
    std::fs::rename(d.join("street.mp4"), d.join("hosts/street.mp4")).unwrap();
    std::fs::create_dir_all(d.join("got/train")).unwrap();
    std::fs::rename(d.join("needle"), d.join("got/train/needle")).unwrap();
    vidprep()
        .current_dir(d)
        .args([
            "insert",
            "--hosts",
            "hosts",
            "--sequences",
            "got",
            "--count",
            "2",
            "--seed",
            "5",
        ])
        .args(["--out-dir", "ins", "--preset", "ultrafast"])
        .assert()
        .success();
    let mut lines = Vec::new();
    let mut ids = Vec::new();
    for e in std::fs::read_dir(d.join("ins")).unwrap() {
        let e = e.unwrap();
        if !e.file_type().unwrap().is_dir() {
            continue;
        }
        let sidecar: Value =
            serde_json::from_slice(&std::fs::read(e.path().join("clip.json")).unwrap()).unwrap();
        ids.push(sidecar["request"]["id"].as_str().unwrap().to_string());
        lines.push(serde_json::to_string(&sidecar["request"]).unwrap());
    }
    assert_eq!(lines.len(), 2);
    std::fs::write(d.join("m.jsonl"), lines.join("\n") + "\n").unwrap();
    vidprep()
        .current_dir(d)
        .args([
            "run",
            "m.jsonl",
            "--out-dir",
            "run",
            "--preset",
            "ultrafast",
        ])
        .assert()
        .success();
    for id in &ids {
        assert_same_outputs(
            "insert --hosts vs run",
            (&d.join("ins").join(id), &format!("ins/{id}/"), id),
            (&d.join("run").join(id), &format!("run/{id}/"), id),
        );
    }
}

#[test]
fn review_previews_are_plain_plans() {
    // `vidprep review` makes each item's preview and thumbnails from a plan its sidecar
    // records; that plan, run as a manifest line, gives the same files.
    let ws = workspace();
    let d = ws.path();
    std::fs::write(
        d.join("m.jsonl"),
        r#"{"id": "q", "source": "street.mp4", "start": "1s", "end": 150, "decision": "60%", "boxes": {"path": "track.csv", "draw": false}, "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#.to_string() + "\n",
    )
    .unwrap();
    vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "out"])
        .assert()
        .success();
    vidprep()
        .current_dir(d)
        .args(["review", "out", "--manifest", "m.jsonl", "--thumbs", "6"])
        .assert()
        .success();
    let media = d.join("out/review/media");
    // The preview's folder is the item's id and a hash of its plan (`q.HASH`).
    let name = std::fs::read_dir(&media)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("q."))
        .expect("the preview's folder");
    let sidecar: Value =
        serde_json::from_slice(&std::fs::read(media.join(&name).join("preview.json")).unwrap())
            .unwrap();
    let request = &sidecar["request"];
    // The preview is the item's span without its decision point, its boxes drawn.
    assert_eq!(request["decision"], Value::Null);
    assert!(!request["boxes"].is_null(), "{request}");
    assert!(
        !request.to_string().contains(r#""draw":false"#),
        "{request}"
    );
    std::fs::write(
        d.join("p.jsonl"),
        serde_json::to_string(request).unwrap() + "\n",
    )
    .unwrap();
    vidprep()
        .current_dir(d)
        .args(["run", "p.jsonl", "--out-dir", "run"])
        .assert()
        .success();
    assert_same_outputs(
        "review previews vs run",
        (
            &media.join(&name),
            &format!("out/review/media/{name}/"),
            &name,
        ),
        (&d.join("run").join(&name), &format!("run/{name}/"), &name),
    );
    // Every frame of the span, in order: the preview holds the span's 125 frames.
    assert_eq!(sidecar["output"]["frames"], 125);
    assert_eq!(sidecar["preview"]["times"].as_array().unwrap().len(), 125);
}

#[test]
fn the_library_door_matches_the_command() {
    let ws = workspace();
    let d = ws.path();
    vidprep()
        .current_dir(d)
        .args([
            "cut",
            "street.mp4",
            "--start",
            "5",
            "--end",
            "60",
            "--decision",
            "40",
            "--boxes",
            "track.csv",
        ])
        .args(["--preset", "ultrafast", "-o", "cli/clip.mp4"])
        .assert()
        .success();
    let mut plan: vidprep::Plan = serde_json::from_str(
        r#"{"id": "a", "source": "street.mp4", "start": 5, "end": 60, "decision": 40, "boxes": "track.csv"}"#,
    )
    .unwrap();
    plan.resolve_paths(d);
    let mut options = vidprep::ExecOptions::default();
    options.defaults.preset = "ultrafast".into();
    vidprep::execute(
        &plan,
        &vidprep::Destination::Folder(d.join("lib/a")),
        &options,
        &mut vidprep::NoProgress,
    )
    .unwrap();
    // The library was given absolute paths: blank the workspace out of them.
    let root = format!("{}/", d.display());
    for name in files(&d.join("lib/a")) {
        if name.extension().is_some_and(|e| e == "json") {
            let path = d.join("lib/a").join(&name);
            let text = std::fs::read_to_string(&path).unwrap().replace(&root, "");
            std::fs::write(&path, text).unwrap();
        }
    }
    assert_same_outputs(
        "command vs library",
        (&d.join("cli"), "cli/", "clip"),
        (&d.join("lib/a"), "lib/a/", "a"),
    );
    // item.json lists every output with its size (the sidecar was rewritten above: skip it).
    let record: Value =
        serde_json::from_slice(&std::fs::read(d.join("lib/a/item.json")).unwrap()).unwrap();
    let listed: BTreeMap<String, u64> = record["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["path"].as_str().unwrap().to_string(),
                o["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    for name in files(&d.join("lib/a"))
        .into_iter()
        .filter(|n| n.extension().is_some_and(|e| e == "mp4"))
    {
        let bytes = std::fs::metadata(d.join("lib/a").join(&name))
            .unwrap()
            .len();
        assert_eq!(
            listed.get(&name.display().to_string()),
            Some(&bytes),
            "{name:?} in item.json"
        );
    }
}

/// The in-memory door (`Destination::Memory`, what the Python package's `vidprep.sample` runs)
/// samples the frames the command writes: the same `frames.json` facts, and pixels that are
/// the images' before JPEG (checked against a PNG export, which is lossless).
#[test]
fn the_memory_door_matches_the_command() {
    let ws = workspace();
    let d = ws.path();
    vidprep()
        .current_dir(d)
        .args(["export", "frames", "street.mp4", "--out-dir", "cli"])
        .args(["--count", "6", "--sampler", "qwen", "--order", "reversed"])
        .args([
            "--format",
            "png",
            "--max-size",
            "160x160",
            "--boxes",
            "track.csv",
        ])
        .assert()
        .success();
    let mut plan: vidprep::Plan = serde_json::from_str(
        r#"{"id": "m", "source": "street.mp4", "boxes": "track.csv", "exports": [{"kind": "frames", "count": 6, "sampler": "qwen", "order": "reversed", "format": "png", "max_size": "160x160"}]}"#,
    )
    .unwrap();
    plan.resolve_paths(d);
    let outcome = vidprep::execute(
        &plan,
        &vidprep::Destination::Memory,
        &vidprep::ExecOptions::default(),
        &mut vidprep::NoProgress,
    )
    .unwrap();
    assert!(
        outcome.files.is_empty(),
        "nothing is written: {:?}",
        outcome.files
    );
    let [memory] = &outcome.memory[..] else {
        panic!("one frames export, got {}", outcome.memory.len())
    };
    let cli: Value =
        serde_json::from_slice(&std::fs::read(d.join("cli/frames.json")).unwrap()).unwrap();
    // The typed record serialises to what the command line wrote.
    let typed = serde_json::to_value(&memory.frames_json).unwrap();
    for key in ["total_frames", "sampled", "order", "frames"] {
        assert_eq!(typed[key], cli[key], "{key}");
    }
    let records = &memory.frames_json.frames;
    assert_eq!(records.len(), 6);
    assert_eq!(memory.frames_json.sampled.indices.len(), 6);
    assert!(
        records.iter().all(|r| r.width == 160 && r.height == 120),
        "every record names the image's size"
    );
    assert_eq!((memory.count, memory.width, memory.height), (6, 160, 120));
    let frame_bytes = 160 * 120 * 3;
    assert_eq!(memory.pixels.len(), 6 * frame_bytes);
    for (p, rec) in cli["frames"].as_array().unwrap().iter().enumerate() {
        let png = image::open(d.join("cli").join(rec["file"].as_str().unwrap()))
            .unwrap()
            .to_rgb8();
        assert!(
            png.as_raw()[..] == memory.pixels[p * frame_bytes..(p + 1) * frame_bytes],
            "position {p}: the memory pixels differ from the PNG the command wrote"
        );
    }
    // Only frames exports can stay in memory, and only without file-only options.
    plan.exports
        .push(vidprep::plan::ExportSpec::Clip(Default::default()));
    let err = vidprep::execute(
        &plan,
        &vidprep::Destination::Memory,
        &vidprep::ExecOptions::default(),
        &mut vidprep::NoProgress,
    )
    .unwrap_err();
    assert_eq!(err.kind(), vidprep::ErrorKind::Usage, "{err}");
}

/// `cut --ratios` makes one clip per decision point; each is the clip a manifest line with that
/// decision point makes (the same frames, the same resolved span and decision in the sidecar).
#[test]
fn cut_ratios_match_manifest_lines_with_each_decision() {
    let ws = workspace();
    let d = ws.path();
    vidprep()
        .current_dir(d)
        .args(["cut", "street.mp4", "--start", "2s", "--end", "6s"])
        .args(["--ratios", "50%,100%", "-o", "cli/clip.mp4"])
        .args(["--preset", "ultrafast"])
        .assert()
        .success();
    let lines: Vec<String> = ["50", "100"]
        .iter()
        .map(|r| {
            format!(
                r#"{{"id": "r{r}", "source": "street.mp4", "start": "2s", "end": "6s", "decision": "{r}%"}}"#
            )
        })
        .collect();
    std::fs::write(d.join("m.jsonl"), lines.join("\n") + "\n").unwrap();
    vidprep()
        .current_dir(d)
        .args([
            "run",
            "m.jsonl",
            "--out-dir",
            "run",
            "--preset",
            "ultrafast",
        ])
        .assert()
        .success();
    let resolved = |p: &Path| -> Value {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        v["resolved"].clone()
    };
    for r in ["50", "100"] {
        let cli = d.join(format!("cli/clip_{r}.mp4"));
        let run = d.join(format!("run/r{r}/clip.mp4"));
        let (a, b) = (framemd5(&cli), framemd5(&run));
        assert!(
            a.lines().count() > 5,
            "{r}%: the command's clip decodes to nothing"
        );
        assert!(
            a == b,
            "{r}%: the command's clip decodes differently from the manifest's"
        );
        let (ra, rb) = (
            resolved(&cli.with_extension("json")),
            resolved(&run.with_extension("json")),
        );
        assert!(!ra.is_null(), "{r}%: the sidecar has no resolved section");
        assert_eq!(ra, rb, "{r}%: resolved span and decision differ");
    }
}

/// The doors this round added: a model profile on a frames export, and the cubic fill of
/// sparse boxes, give the same files through the command and a manifest line.
#[test]
fn profiles_and_cubic_fill_match_their_manifest_lines() {
    check(
        "export frames --profile",
        &[
            "export",
            "frames",
            "street.mp4",
            "--profile",
            "qwen3-vl",
            "--count",
            "4",
            "--out-dir",
            "cli/frames",
        ],
        r#"{"id": "a", "source": "street.mp4", "exports": [{"kind": "frames", "profile": "qwen3-vl", "count": 4}]}"#,
        false,
    );
    check(
        "export frames --fill cubic",
        &[
            "export",
            "frames",
            "street.mp4",
            "--count",
            "6",
            "--boxes",
            "track.csv",
            "--fill",
            "cubic",
            "--out-dir",
            "cli/frames",
        ],
        r#"{"id": "a", "source": "street.mp4", "boxes": {"path": "track.csv", "fill": "cubic"}, "exports": [{"kind": "frames", "count": 6}]}"#,
        false,
    );
}
