//! Needle insertion, checked independently: the output's frames at the predicted span are the
//! sequence's JPEGs scaled the way ffmpeg's scale+pad filters scale them (PSNR), host frames
//! before and after are the host's (shifted), frame count and duration agree with ffprobe, the
//! audio is silent under the needle, and the V-STaR boxes follow the formula.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::oracle::{self, Frame, PixFmt};
use common::synth::SynthVideo;
use common::{read_code_geom, CodeGeom};
use serde_json::Value;
use support::{files_in, shared, sidecar, vidprep};

/// Runs the ffmpeg CLI, panicking with its message on failure.
fn ffmpeg(args: &[&str]) {
    common::cmd::ffmpeg(args).unwrap_or_else(|e| panic!("{e}"));
}

/// A GOT-10k sequence folder: `n` frame-coded JPEGs of `w x h`, one box per frame
/// (`x = 10 + i, y = 20, w = 40, h = 30`), frame `absent` marked absent, `anno_fps` in
/// meta_info.ini.
fn make_sequence(
    dir: &Path,
    n: u32,
    w: u32,
    h: u32,
    anno_fps: u32,
    absent: Option<usize>,
) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let v = SynthVideo::new(w, h)
        .frames(n)
        .label(false)
        .quality(12)
        .cached();
    let pattern = dir.join("%08d.jpg");
    ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-i",
        &v.path.display().to_string(),
        "-q:v",
        "2",
        "-start_number",
        "1",
        &pattern.display().to_string(),
    ]);
    let mut gt = String::new();
    let mut absence = String::new();
    for i in 0..n as usize {
        gt.push_str(&format!("{},20,40,30\n", 10 + i));
        absence.push_str(if Some(i) == absent { "1\n" } else { "0\n" });
    }
    std::fs::write(dir.join("groundtruth.txt"), gt).unwrap();
    std::fs::write(dir.join("absence.label"), absence).unwrap();
    std::fs::write(
        dir.join("meta_info.ini"),
        format!("[METAINFO]\nobject_class: cart\nanno_fps: {anno_fps}Hz\n"),
    )
    .unwrap();
    dir.to_path_buf()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The code painted in a frame whose picture starts at `(x0, y0)` scaled by `scale`.
fn code_at(f: &Frame, x0: f64, y0: f64, scale: f64) -> Option<u32> {
    let luma = f.luma();
    read_code_geom(
        &luma,
        f.width,
        f.height,
        f.width,
        &CodeGeom {
            x0,
            y0,
            bx: 16.0 * scale,
            by: 16.0 * scale,
        },
    )
}

/// Mean absolute sample value of the decoded audio between two times (s16 mono).
fn audio_level(path: &Path, start: f64, end: f64) -> f64 {
    let out = common::cmd::run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-i",
            &path.display().to_string(),
            "-ss",
            &format!("{start}"),
            "-to",
            &format!("{end}"),
            "-ac",
            "1",
            "-f",
            "s16le",
            "-",
        ],
    );
    let samples: Vec<i16> = out
        .stdout
        .chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect();
    samples.iter().map(|&s| (s as f64).abs()).sum::<f64>() / samples.len().max(1) as f64
}

#[test]
fn a_sequence_lands_where_predicted_with_its_boxes() {
    // Host: 320x180 at 25 fps, 100 frames, with a tone. Sequence: 160x120 at 10 Hz, 20 frames
    // (2 s) -> K = 50 host frames; letterbox: 240x180 at x = 40.
    let host = SynthVideo::new(320, 180)
        .frames(100)
        .gop(30)
        .bframes(2)
        .audio_tone(440.0)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let seq = make_sequence(&dir.path().join("seq"), 20, 160, 120, 10, Some(7));
    let out = dir.path().join("needle.mp4");
    vidprep()
        .args(["insert", "--host"])
        .arg(&host.path)
        .arg("--sequence")
        .arg(&seq)
        .args(["--at", "1.2s", "--preset", "ultrafast", "--crf", "12", "-o"])
        .arg(&out)
        .assert()
        .success();
    // 1.2 s = host frame 30.
    let (i, k) = (30usize, 50usize);
    assert_eq!(oracle::count_frames(&out) as usize, 100 + k);
    let frames = oracle::decode_frames(&out, PixFmt::Yuv420p, None);
    let host_frames = oracle::decode_frames(&host.path, PixFmt::Yuv420p, None);
    // Host before and after, shifted by K frames.
    for j in (0..i).chain(i + k..100 + k) {
        let src = if j < i { j } else { j - k };
        assert_eq!(frames[j].code(), Some(src as u32), "output frame {j}");
        assert!(
            oracle::psnr(&frames[j], &host_frames[src]) >= 40.0,
            "output frame {j} vs host {src}"
        );
    }
    // The needle: frame i + k shows sequence frame floor(k * 10 / 25), scaled 1.5x at x = 40.
    let reference = oracle::decode_frames_opts(
        &seq.join("%08d.jpg"),
        &oracle::DecodeOpts::new(PixFmt::Yuv420p),
    );
    assert_eq!(reference.len(), 20);
    let scaled: Vec<Frame> = {
        let pattern = seq.join("%08d.jpg").display().to_string();
        let raw = common::cmd::run_ok(
            "ffmpeg",
            &[
                "-v",
                "error",
                "-i",
                &pattern,
                "-vf",
                "scale=240:180:out_range=tv,pad=320:180:40:0:black",
                "-pix_fmt",
                "yuv420p",
                "-f",
                "rawvideo",
                "-",
            ],
        );
        raw.stdout
            .chunks_exact(320 * 180 * 3 / 2)
            .map(|c| Frame {
                width: 320,
                height: 180,
                pix_fmt: PixFmt::Yuv420p,
                data: c.to_vec(),
            })
            .collect()
    };
    for n in 0..k {
        let s = n * 10 / 25;
        let f = &frames[i + n];
        assert_eq!(
            code_at(f, 40.0, 0.0, 1.5),
            Some(s as u32),
            "needle frame {n}"
        );
        let p = oracle::psnr(f, &scaled[s]);
        assert!(
            p >= 38.0,
            "needle frame {n} vs ffmpeg-scaled JPEG {s}: {p:.2} dB"
        );
    }
    // Timing: host times, then 1/25 s steps, then host times + 2 s.
    let pts = oracle::frame_pts(&out);
    let host_pts = oracle::frame_pts(&host.path);
    assert!((pts[i] - 1.2).abs() < 1e-3 && (pts[i + k - 1] - (1.2 + 49.0 / 25.0)).abs() < 1e-3);
    assert!((pts[i + k] - (host_pts[i] + 2.0)).abs() < 1e-3);
    // Audio: the tone around the needle, silence under it.
    assert!(audio_level(&out, 0.2, 1.1) > 1000.0);
    assert!(
        audio_level(&out, 1.3, 3.1) < 5.0,
        "the needle must be silent"
    );
    assert!(audio_level(&out, 3.3, 5.0) > 1000.0);
    let probe = oracle::probe(&out);
    let ad = oracle::num(&oracle::stream(&probe, "audio").unwrap()["duration"]).unwrap();
    assert!(
        (ad - 6.0).abs() < 0.05,
        "audio lasts {ad} s, the output 6 s"
    );
    // V-STaR annotations: output frames and pixels, absent frame omitted.
    let ann = json(&dir.path().join("needle.vstar.json"));
    assert_eq!(ann["object"], "cart");
    assert_eq!(ann["frame_count"], 150);
    assert_eq!(ann["timestamps"], serde_json::json!([1.2, 3.2]));
    assert_eq!(ann["provenance"]["insert_frame"], 30);
    let boxes = ann["bboxes"].as_array().unwrap();
    // Sequence frame 7 (absent) covers needle frames with floor(n * 0.4) = 7: n = 18, 19.
    assert_eq!(boxes.len(), k - 2);
    for b in boxes {
        let n = b["frame_index"].as_u64().unwrap() as usize - i;
        let s = n * 10 / 25;
        assert_ne!(s, 7);
        let x = 10.0 + s as f64;
        assert_eq!(b["xmin"].as_f64().unwrap(), x * 1.5 + 40.0);
        assert_eq!(b["ymin"].as_f64().unwrap(), 20.0 * 1.5);
        assert_eq!(b["xmax"].as_f64().unwrap(), (x + 40.0) * 1.5 + 40.0);
        assert_eq!(b["ymax"].as_f64().unwrap(), 50.0 * 1.5);
        assert!((b["timestamp"].as_f64().unwrap() - (1.2 + n as f64 / 25.0)).abs() < 1e-9);
    }
    let sc = sidecar(&out);
    assert_eq!(sc["kind"], "clip");
    assert_eq!(sc["resolved"]["insert"]["needle_frames"], 50);
    assert_eq!(sc["sources"][1]["frames"], 20);
}

#[test]
fn seeds_are_reproducible_and_fits_differ() {
    let host = SynthVideo::new(320, 180).frames(60).cached();
    let dir = tempfile::tempdir().unwrap();
    let seq = make_sequence(&dir.path().join("seq"), 6, 160, 120, 10, None);
    let run = |name: &str, extra: &[&str]| -> Value {
        let out = dir.path().join(name);
        vidprep()
            .args(["insert", "--host"])
            .arg(&host.path)
            .arg("--sequence")
            .arg(&seq)
            .args(extra)
            .args(["--preset", "ultrafast", "-o"])
            .arg(&out)
            .assert()
            .success();
        sidecar(&out)["resolved"]["insert"].clone()
    };
    let a = run("a.mp4", &["--seed", "7"]);
    let b = run("b.mp4", &["--seed", "7"]);
    assert_eq!(a["insert_frame"], b["insert_frame"]);
    let frames: Vec<u64> = (0..8)
        .map(|s| {
            run(&format!("s{s}.mp4"), &["--seed", &s.to_string()])["insert_frame"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert!(frames.iter().all(|&f| f <= 60));
    assert!(
        frames.windows(2).any(|w| w[0] != w[1]),
        "different seeds should move the needle: {frames:?}"
    );
    let stretch = run("st.mp4", &["--at", "0", "--fit", "stretch"]);
    assert_eq!(
        stretch["placement"]["scaled"],
        serde_json::json!([320, 180])
    );
    let crop = run("cr.mp4", &["--at", "60", "--fit", "crop"]);
    assert_eq!(crop["placement"]["scaled"], serde_json::json!([320, 240]));
    assert_eq!(crop["placement"]["offset"], serde_json::json!([0, -30]));
    assert_eq!(
        crop["needle_start"], 60,
        "appended after the last host frame"
    );
}

#[test]
fn bad_sequences_and_hosts_are_clear_errors_with_nothing_left() {
    let host = SynthVideo::new(320, 180).frames(30).cached();
    let dir = tempfile::tempdir().unwrap();
    let base = make_sequence(&dir.path().join("good"), 5, 160, 120, 10, None);
    let copy = |name: &str| -> PathBuf {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        for f in std::fs::read_dir(&base).unwrap() {
            let f = f.unwrap();
            std::fs::copy(f.path(), d.join(f.file_name())).unwrap();
        }
        d
    };
    let no_gt = copy("no_gt");
    std::fs::remove_file(no_gt.join("groundtruth.txt")).unwrap();
    let short = copy("short");
    std::fs::write(short.join("groundtruth.txt"), "1,2,3,4\n1,2,3,4\n").unwrap();
    let corrupt = copy("corrupt");
    let jpg = corrupt.join("00000003.jpg");
    let bytes = std::fs::read(&jpg).unwrap();
    std::fs::write(&jpg, &bytes[..bytes.len() / 2]).unwrap();
    let mixed = copy("mixed");
    ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=200x100",
        "-frames:v",
        "1",
        &mixed.join("00000004.jpg").display().to_string(),
    ]);
    let audio_only = dir.path().join("tone.m4a");
    ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "sine=duration=1",
        &audio_only.display().to_string(),
    ]);
    let out_dir = dir.path().join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let cases: Vec<(PathBuf, PathBuf, Vec<&str>)> = vec![
        (
            host.path.clone(),
            no_gt.clone(),
            vec!["no_gt", "groundtruth.txt"],
        ),
        (
            host.path.clone(),
            short.clone(),
            vec!["short", "groundtruth.txt", "2 box lines", "5 images"],
        ),
        (
            host.path.clone(),
            corrupt.clone(),
            vec!["00000003.jpg", "truncated"],
        ),
        (
            host.path.clone(),
            mixed.clone(),
            vec!["00000004.jpg", "200x100", "160x120"],
        ),
        (
            audio_only.clone(),
            base.clone(),
            vec!["tone.m4a", "no video stream"],
        ),
    ];
    for (h, s, needles) in cases {
        let a = vidprep()
            .args(["insert", "--host"])
            .arg(&h)
            .arg("--sequence")
            .arg(&s)
            .args(["--at", "0", "-o"])
            .arg(out_dir.join("o.mp4"))
            .assert()
            .code(1);
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        for n in needles {
            assert!(err.contains(n), "{s:?}: expected {n:?} in {err}");
        }
        assert!(
            files_in(&out_dir).is_empty(),
            "left {:?}",
            files_in(&out_dir)
        );
    }
}

#[test]
fn a_batch_pairs_reproducibly_and_skips_bad_items() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::create_dir_all(&hosts).unwrap();
    for (name, frames) in [("h1.mp4", 40), ("h2.mp4", 50)] {
        std::fs::copy(
            SynthVideo::new(320, 180).frames(frames).cached().path,
            hosts.join(name),
        )
        .unwrap();
    }
    let root = dir.path().join("got10k");
    make_sequence(&root.join("GOT-10k_Train_000001"), 5, 160, 120, 10, None);
    make_sequence(&root.join("GOT-10k_Train_000002"), 4, 160, 120, 10, None);
    let bad = make_sequence(&root.join("GOT-10k_Train_000003"), 4, 160, 120, 10, None);
    std::fs::write(bad.join("groundtruth.txt"), "1,2,3,4\n").unwrap();
    std::fs::write(
        root.join("list.txt"),
        "GOT-10k_Train_000001\nGOT-10k_Train_000002\nGOT-10k_Train_000003\n",
    )
    .unwrap();
    let run = |out: &str, jobs: &str| -> Vec<Value> {
        let out_dir = dir.path().join(out);
        let a = vidprep()
            .args(["insert", "--hosts"])
            .arg(&hosts)
            .arg("--sequences")
            .arg(&root)
            .args([
                "--count",
                "6",
                "--seed",
                "11",
                "--jobs",
                jobs,
                "--preset",
                "ultrafast",
                "--out-dir",
            ])
            .arg(&out_dir)
            .assert()
            .code(1);
        let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
        assert!(
            err.contains("GOT-10k_Train_000003") && err.contains("groundtruth.txt"),
            "{err}"
        );
        // The batch report (the same schema as `run`), with each item's sidecar.
        let report = std::fs::read_to_string(out_dir.join("report.jsonl")).unwrap();
        report
            .lines()
            .map(|l| {
                let mut row: Value = serde_json::from_str(l).unwrap();
                let id = row["id"].as_str().unwrap().to_string();
                let clip = out_dir.join(&id).join("clip.mp4");
                if row["status"] == "ok" {
                    assert!(out_dir.join(&id).join("clip.vstar.json").exists());
                    row["sidecar"] = sidecar(&clip);
                }
                row
            })
            .collect()
    };
    let one = run("one", "1");
    let two = run("two", "2");
    assert_eq!(one.len(), 6);
    for (a, b) in one.iter().zip(&two) {
        assert_eq!(
            a["id"], b["id"],
            "pairings must not depend on the thread count"
        );
        assert_eq!(
            a["sidecar"]["resolved"]["insert"]["insert_frame"],
            b["sidecar"]["resolved"]["insert"]["insert_frame"],
            "positions must not depend on the thread count"
        );
    }
    assert_eq!(
        one.iter().filter(|o| o["status"] == "failed").count(),
        2,
        "the bad sequence's two items fail"
    );
}

#[test]
fn real_sequences_into_real_hosts() {
    let (Some(chaplin), Some(pets), Some(bag), Some(crossing)) = (
        shared("host/chaplin.mp4"),
        shared("pets09/vtest.avi"),
        shared("got10k/VOT_bag"),
        shared("got10k/OTB_Crossing"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (host, seq, at) in [
        (&chaplin, &bag, "5s"),
        (&pets, &crossing, "300"),
        (&chaplin, &crossing, "0"),
    ] {
        let out = dir.path().join("o.mp4");
        vidprep()
            .args(["insert", "--host"])
            .arg(host)
            .arg("--sequence")
            .arg(seq)
            .args(["--at", at, "--preset", "ultrafast", "-o"])
            .arg(&out)
            .assert()
            .success();
        let sc = sidecar(&out);
        let r = &sc["resolved"]["insert"];
        let host_frames = oracle::count_frames(host);
        let k = r["needle_frames"].as_u64().unwrap();
        assert_eq!(oracle::count_frames(&out), host_frames + k);
        // The first needle frame is the first JPEG, scaled and padded as ffmpeg would.
        let (sw, sh) = (
            r["placement"]["scaled"][0].as_u64().unwrap(),
            r["placement"]["scaled"][1].as_u64().unwrap(),
        );
        let (ox, oy) = (
            r["placement"]["offset"][0].as_i64().unwrap(),
            r["placement"]["offset"][1].as_i64().unwrap(),
        );
        let (fw, fh) = oracle::dimensions(host);
        let raw = common::cmd::run_ok(
            "ffmpeg",
            &[
                "-v",
                "error",
                "-i",
                &seq.join("00000001.jpg").display().to_string(),
                "-vf",
                &format!("scale={sw}:{sh}:out_range=tv,pad={fw}:{fh}:{ox}:{oy}:black"),
                "-pix_fmt",
                "yuv420p",
                "-f",
                "rawvideo",
                "-",
            ],
        );
        let want = Frame {
            width: fw as usize,
            height: fh as usize,
            pix_fmt: PixFmt::Yuv420p,
            data: raw.stdout,
        };
        let start = r["needle_start"].as_u64().unwrap();
        let got = oracle::decode_frame_at(&out, start, PixFmt::Yuv420p);
        let p = oracle::psnr(&got, &want);
        assert!(
            p >= 35.0,
            "{seq:?} in {host:?}: first needle frame {p:.2} dB"
        );
        let ann = json(&dir.path().join("o.vstar.json"));
        assert!(!ann["bboxes"].as_array().unwrap().is_empty());
    }
}

#[test]
fn a_ten_minute_host_streams() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("long.mp4");
    ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=160x90:rate=25:duration=600",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-g",
        "250",
        &host.display().to_string(),
    ]);
    let seq = make_sequence(&dir.path().join("seq"), 10, 160, 120, 10, None);
    let out = dir.path().join("o.mp4");
    vidprep()
        .args(["insert", "--host"])
        .arg(&host)
        .arg("--sequence")
        .arg(&seq)
        .args(["--seed", "3", "--preset", "ultrafast", "-o"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(oracle::count_frames(&out), 15000 + 25);
    let probe = oracle::probe(&out);
    let d = oracle::num(&oracle::stream(&probe, "video").unwrap()["duration"]).unwrap();
    assert!((d - 601.0).abs() < 0.01, "duration {d}");
}

/// #52 item 3: a host with a skipped frame (a 2-frame gap after frame 0, at 25 fps) and with
/// others (a gap later, none): the V-STaR file gives each box's time as `frame_index / fps`,
/// V-STaR's definition, at the rate the file names; V-STaR's reading (`round(timestamp *
/// fps)`) finds the box's own frame, vidprep's reader warns of nothing on its own file, and
/// the sidecar says where the output's frame times part from `frame_index / fps`. Before, a
/// box's time was its frame's own (0.84 s for frame 20), one frame late by V-STaR's reading.
#[test]
fn vstar_times_are_frame_index_over_fps_in_a_host_with_a_skipped_frame() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let seq = make_sequence(&d.join("seq"), 12, 160, 120, 25, None);
    for (name, skipped, parts) in [
        ("gap_after_0", Some(1), true),
        ("gap_at_30", Some(30), true),
        ("no_gap", None, false),
    ] {
        let host = d.join(format!("{name}.mp4"));
        let select = match skipped {
            Some(n) => format!("select='not(eq(n\\,{n}))'"),
            None => "null".into(),
        };
        let pass = common::cmd::passthrough();
        ffmpeg(&[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=320x240:rate=25",
            "-frames:v",
            "59",
            "-vf",
            &select,
            pass[0],
            pass[1],
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-bf",
            "0",
            "-video_track_timescale",
            "25",
            &host.display().to_string(),
        ]);
        let out = d.join(format!("{name}.out.mp4"));
        vidprep()
            .arg("insert")
            .arg("--host")
            .arg(&host)
            .arg("--sequence")
            .arg(&seq)
            .args(["--at", "20", "-o"])
            .arg(&out)
            .assert()
            .success();
        let text = std::fs::read_to_string(d.join(format!("{name}.out.vstar.json"))).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let item = if v.is_array() { &v[0] } else { &v };
        let fps = item["fps"].as_f64().unwrap();
        assert!((fps - 25.0).abs() < 1e-9, "{name}: fps {fps}");
        let boxes = item["bboxes"].as_array().unwrap();
        assert_eq!(boxes.len(), 12, "{name}");
        for b in boxes {
            let f = b["frame_index"].as_u64().unwrap() as f64;
            let t = b["timestamp"].as_f64().unwrap();
            assert!((t - f / fps).abs() < 1e-9, "{name}: {b}");
            assert_eq!((t * fps).round(), f, "{name}: V-STaR's reading of {b}");
        }
        let span = item["timestamps"].as_array().unwrap();
        assert!(
            (span[0].as_f64().unwrap() - 20.0 / 25.0).abs() < 1e-9,
            "{name}: {span:?}"
        );
        assert!(
            (span[1].as_f64().unwrap() - 32.0 / 25.0).abs() < 1e-9,
            "{name}: {span:?}"
        );
        // The sidecar says where frame times part from frame_index / fps.
        let sc = json(&out.with_extension("json"));
        assert_eq!(!sc["vstar_times"].is_null(), parts, "{name}: {sc:#}");
        // vidprep reads its own file back without a word of disagreement.
        let back = vidprep()
            .arg("overlay")
            .arg(&out)
            .arg("--boxes")
            .arg(d.join(format!("{name}.out.vstar.json")))
            .arg("-o")
            .arg(d.join(format!("{name}.back.mp4")))
            .assert()
            .success();
        let err = String::from_utf8_lossy(&back.get_output().stderr).into_owned();
        assert!(!err.contains("disagree"), "{name}: {err}");
    }
}
