//! One item opens its source once at a thread budget of one (issue 25): the frame table's
//! scan and the one sparse worker read the same input (the worker seeks back in it), and at
//! a budget of W the workers open at most W inputs, the first of them the scan's. The frames
//! read that way are still the frames ffmpeg decodes (md5 of each sampled image against the
//! ffmpeg CLI's decode of the source frame `frames.json` names). And a plan is checked and
//! normalised once per item: a manifest's reader checks its lines, the batch runner runs
//! them without a second check, and a `--resume` run normalises an item once for its check
//! and its run.
//!
//! Counted by the call's tally (`vidprep::call::Tally`) and, for the `vidprep` binary, by `strace`
//! (skipped with a message when it is not installed).

use crate::batch::work_once::boxes;
use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::synth::SynthVideo;
use vidprep::batch::{Quiet, Status};
use vidprep::call::Counts;
use vidprep::call::Tally;
use vidprep::manifest::ManifestItem;
use vidprep::{execute, run_batch, BatchOptions, Destination, ExecOptions};
use vidprep::{NoProgress, Plan};

/// 120 frames, a keyframe every 30, two B-frames, a soundtrack: the first sampled frame of
/// the span lies in the first GOP (the worker's seek back to the first keyframe).
fn source() -> PathBuf {
    SynthVideo::new(160, 120)
        .frames(120)
        .gop(30)
        .bframes(2)
        .audio_tone(440.0)
        .cached()
        .path
}

/// A span, boxes when given, and a 6-frame PNG export.
fn line(source: &Path, boxes: Option<&Path>) -> String {
    let boxes = boxes.map_or(String::new(), |b| {
        format!(
            r#""boxes": {{"path": "{}", "labels": false}}, "#,
            b.display()
        )
    });
    format!(
        r#"{{"id": "one", "source": "{}", "start": "0.5s", "end": "4.5s", {boxes}"exports": [{{"kind": "frames", "count": 6, "format": "png"}}]}}"#,
        source.display()
    )
}

/// Runs `plan` into `out/one` with a thread budget of `threads`; what its tally counted.
fn run_counted(plan: &Plan, threads: usize, out: &Path) -> Counts {
    let tally = Tally::new();
    let mut options = ExecOptions::default();
    options.threads = threads;
    options.tally = Some(tally.clone());
    execute(
        plan,
        &Destination::Folder(out.join("one")),
        &options,
        &mut NoProgress,
    )
    .unwrap();
    tally.counts()
}

/// Every frame of `path` as the ffmpeg CLI decodes it, through vidprep's pipeline format, as
/// packed RGB.
fn ffmpeg_rgb_frames(path: &Path) -> Vec<Vec<u8>> {
    let (w, h) = common::oracle::dimensions(path);
    let filter = common::oracle::to_pipeline_yuv(path);
    let out = common::cmd::run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-i",
            &path.display().to_string(),
            "-map",
            "0:v:0",
            "-vf",
            &filter,
            common::cmd::passthrough()[0],
            common::cmd::passthrough()[1],
            "-pix_fmt",
            "rgb24",
            "-f",
            "rawvideo",
            "-",
        ],
    );
    out.stdout
        .chunks_exact((w * h * 3) as usize)
        .map(<[u8]>::to_vec)
        .collect()
}

/// Each image of the frames export in `dir` is, byte for byte, the source frame its
/// `frames.json` names, as ffmpeg decodes it.
fn assert_frames_are_ffmpegs(dir: &Path, theirs: &[Vec<u8>], what: &str) {
    let fj: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("frames.json")).unwrap()).unwrap();
    let frames = fj["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 6, "{what}");
    for f in frames {
        let s = f["source_frame"].as_u64().unwrap() as usize;
        let image = common::oracle::decode_image(
            &dir.join(f["file"].as_str().unwrap()),
            common::oracle::PixFmt::Rgb24,
        );
        assert_eq!(
            common::md5::md5_hex(&image.data),
            common::md5::md5_hex(&theirs[s]),
            "{what}: {} is not source frame {s} as ffmpeg decodes it",
            f["file"]
        );
    }
}

#[test]
fn a_budget_of_one_opens_the_source_once_and_reads_ffmpegs_frames() {
    let dir = tempfile::tempdir().unwrap();
    let src = source();
    let b = boxes(dir.path());
    let theirs = ffmpeg_rgb_frames(&src);
    assert_eq!(theirs.len(), 120);
    let with_boxes: Plan = serde_json::from_str(&line(&src, Some(&b))).unwrap();
    let plain: Plan = serde_json::from_str(&line(&src, None)).unwrap();
    for threads in [1, 2, 4] {
        // Span, boxes and frames: the table's scan and the workers, the first of which
        // reads the scan's input.
        let out = dir.path().join(format!("boxes-{threads}"));
        let c = run_counted(&with_boxes, threads, &out);
        eprintln!("span+boxes+frames, budget {threads}: {c:?}");
        assert_eq!((c.packet_scans, c.decode_scans), (1, 0), "{c:?}");
        if threads == 1 {
            assert_eq!(c.opens, 1, "budget 1: the source is opened once: {c:?}");
        } else {
            assert!(c.opens <= threads, "budget {threads}: {c:?}");
        }
        // Without boxes the images are the decoded frames themselves.
        let out = dir.path().join(format!("plain-{threads}"));
        let c = run_counted(&plain, threads, &out);
        assert!(c.opens <= threads.max(1), "plain, budget {threads}: {c:?}");
        assert_frames_are_ffmpegs(
            &out.join("one/frames"),
            &theirs,
            &format!("budget {threads}"),
        );
    }
}

/// `strace -f -e trace=openat` of `vidprep run` on the one-item manifest: at
/// `--codec-threads 1` the source file is opened once (twice before issue 25's fix), at 2 and
/// 4 at most that many times (3 and 5 before); the boxes file twice (read, and hashed for
/// `item.json`).
#[test]
fn vidprep_run_opens_the_source_once_per_worker_as_strace_counts() {
    if let Some(why) = support::strace_unusable() {
        crate::common::skip::skip(crate::common::skip::Needs::Tools, why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = source();
    let b = boxes(dir.path());
    let manifest = dir.path().join("m.jsonl");
    std::fs::write(&manifest, line(&src, Some(&b)) + "\n").unwrap();
    for threads in [1, 2, 4] {
        let trace = dir.path().join(format!("trace-{threads}.txt"));
        let out = dir.path().join(format!("out-{threads}"));
        let threads_arg = threads.to_string();
        let trace = support::vidprep_traced(
            &trace,
            [
                "run".as_ref(),
                manifest.as_os_str(),
                "--out-dir".as_ref(),
                out.as_os_str(),
                "--jobs".as_ref(),
                "1".as_ref(),
                "--codec-threads".as_ref(),
                threads_arg.as_ref(),
            ] as [&std::ffi::OsStr; 8],
        )
        .expect("vidprep run failed");
        let opens_of = |p: &Path| trace.opens_of(p);
        let opens = opens_of(&src);
        eprintln!("vidprep run --codec-threads {threads}: {opens} opens of the source");
        if threads == 1 {
            assert_eq!(opens, 1, "--codec-threads 1: opens of the source");
        } else {
            assert!(
                (1..=threads).contains(&opens),
                "--codec-threads {threads}: {opens} opens of the source"
            );
        }
        // Read once, and hashed once for item.json (a side input's content is what
        // `--resume` checks).
        assert_eq!(
            opens_of(&b),
            2,
            "opens of the boxes file (its read, its content hash)"
        );
    }
}

/// `vidprep run`'s path in the library: the manifest's reader checks the line, the batch
/// runs it without checking it again; normalised once, for a `--resume` run too (its check
/// of the item folder and the run of an item that must be redone share one normalisation).
#[test]
fn a_manifest_item_is_checked_and_normalised_once() {
    let dir = tempfile::tempdir().unwrap();
    let src = source();
    let b = boxes(dir.path());
    let manifest = dir.path().join("m.jsonl");
    std::fs::write(&manifest, line(&src, Some(&b)) + "\n").unwrap();
    let out = dir.path().join("out");
    let run = |resume: bool| {
        let tally = Tally::new();
        let read = vidprep::manifest::read_manifest_in(
            &manifest,
            &vidprep::call::CallContext::new().with_tally(tally.clone()),
        )
        .unwrap();
        assert_eq!(read.items.len(), 1, "{:?}", read.bad);
        let mut options = BatchOptions::new(out.clone());
        options.jobs = 1;
        options.resume = resume;
        options.exec.tally = Some(tally.clone());
        let (summary, _) = run_batch(&read.items, &read.bad, &options, &Quiet).unwrap();
        (tally.counts(), summary)
    };
    let (c, s) = run(false);
    eprintln!("run: {c:?}");
    assert_eq!(s.ok, 1);
    assert_eq!((c.plan_checks, c.normalisations), (1, 1), "{c:?}");
    // Resumed with the item current: read and checked, normalised for the hash, skipped.
    let (c, s) = run(true);
    assert_eq!(s.skipped, 1);
    assert_eq!((c.plan_checks, c.normalisations), (1, 1), "{c:?}");
    // Resumed with an output gone: the same normalisation decides and runs.
    std::fs::remove_file(out.join("one/frames/frames.json")).unwrap();
    let (c, s) = run(true);
    eprintln!("resumed, redone: {c:?}");
    assert_eq!(s.ok, 1);
    assert_eq!((c.plan_checks, c.normalisations), (1, 1), "{c:?}");
}

/// Every door still checks: a plan a door builds becomes an item only through its check
/// (a failed one is the batch's failed line, a usage error), and `execute` checks a bare
/// plan once.
#[test]
fn every_door_checks_its_plans_once() {
    let src = source();
    let bad: Plan = serde_json::from_str(&format!(
        r#"{{"id": "two", "source": "{}", "exports": [{{"kind": "clip"}}, {{"kind": "clip"}}]}}"#,
        src.display()
    ))
    .unwrap();
    let tally = Tally::new();
    let (items, refused) = ManifestItem::check_all_in(
        [(1, bad.clone())],
        &vidprep::call::CallContext::new().with_tally(tally.clone()),
    );
    assert!(items.is_empty());
    let [refused] = &refused[..] else {
        panic!("one refused item, got {}", refused.len())
    };
    assert_eq!(refused.error.kind(), vidprep::ErrorKind::Usage);
    assert!(
        refused.error.to_string().contains("used twice"),
        "{}",
        refused.error
    );
    assert_eq!(tally.counts().plan_checks, 1);
    let dir = tempfile::tempdir().unwrap();
    let mut options = BatchOptions::new(dir.path().join("out"));
    options.exec.tally = Some(tally.clone());
    let (summary, reports) = run_batch(&[], &[refused_again(&bad)], &options, &Quiet).unwrap();
    assert_eq!((summary.failed, reports[0].status), (1, Status::Failed));

    let tally = Tally::new();
    let mut options = ExecOptions::default();
    options.tally = Some(tally.clone());
    let err = execute(
        &bad,
        &Destination::Folder(dir.path().join("two")),
        &options,
        &mut NoProgress,
    )
    .unwrap_err();
    assert_eq!(err.kind(), vidprep::ErrorKind::Usage, "{err}");
    assert_eq!(tally.counts().plan_checks, 1);
}

fn refused_again(plan: &Plan) -> vidprep::manifest::BadItem {
    ManifestItem::check(1, plan.clone()).unwrap_err()
}

/// `strace -f -e trace=openat` of `vidprep run` on video-export items (issue 25): the source
/// is opened once, by the table's scan, whose input the full decode reads again rewound to
/// its start (an MP4: `media::rewind` proves the rewind exact), and the soundtrack reads
/// along (its format, and the pass-through check's container and audio codecs, are what the
/// first open saw): 1 open at `--codec-threads` 1 and 2, where there were 2 before the
/// rewind, and 5 (a span of an MP4 with AAC) and 6 (a whole MP3-in-MP4, which the
/// pass-through check turns to a re-encode) before issue 25. Matroska (a seek of its video
/// to the first cue) and MPEG-TS (a byte seek) are rewound too, with the first audio packet
/// the scan recorded as proof: 1 open each (2 before). Each output's soundtrack is there, as
/// long as its video (ffprobe: 2 s of the span, the 60 frames at 25 fps).
#[test]
fn a_video_item_opens_its_source_once_as_strace_counts() {
    if let Some(why) = support::strace_unusable() {
        crate::common::skip::skip(crate::common::skip::Needs::Tools, why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let aac = source();
    let mp3 = SynthVideo::new(160, 120)
        .frames(60)
        .gop(30)
        .bframes(2)
        .audio_tone_codec(330.0, common::synth::AudioCodec::Mp3)
        .cached()
        .path;
    let mkv = SynthVideo::new(160, 120)
        .frames(60)
        .gop(30)
        .bframes(2)
        .audio_tone(330.0)
        .container("mkv")
        .cached()
        .path;
    let ts = SynthVideo::new(160, 120)
        .frames(60)
        .gop(30)
        .bframes(2)
        .audio_tone(330.0)
        .container("ts")
        .cached()
        .path;
    let items = [
        (
            "span",
            &aac,
            format!(
                r#"{{"id": "span", "source": "{}", "start": "0.5s", "end": "2.5s", "exports": [{{"kind": "video", "max_size": "96x96"}}]}}"#,
                aac.display()
            ),
            2.0,
            1,
        ),
        (
            "whole",
            &mp3,
            format!(
                r#"{{"id": "whole", "source": "{}", "exports": [{{"kind": "video"}}]}}"#,
                mp3.display()
            ),
            2.4,
            1,
        ),
        (
            "mkv",
            &mkv,
            format!(
                r#"{{"id": "mkv", "source": "{}", "exports": [{{"kind": "video", "max_size": "96x96"}}]}}"#,
                mkv.display()
            ),
            2.4,
            1,
        ),
        (
            "ts",
            &ts,
            format!(
                r#"{{"id": "ts", "source": "{}", "exports": [{{"kind": "video", "max_size": "96x96"}}]}}"#,
                ts.display()
            ),
            2.4,
            1,
        ),
    ];
    for (id, src, line, seconds, expected) in &items {
        let manifest = dir.path().join(format!("{id}.jsonl"));
        std::fs::write(&manifest, format!("{line}\n")).unwrap();
        for threads in [1, 2] {
            let trace = dir.path().join(format!("trace-{id}-{threads}.txt"));
            let out = dir.path().join(format!("out-{id}-{threads}"));
            let threads_arg = threads.to_string();
            let trace = support::vidprep_traced(
                &trace,
                [
                    "run".as_ref(),
                    manifest.as_os_str(),
                    "--out-dir".as_ref(),
                    out.as_os_str(),
                    "--jobs".as_ref(),
                    "1".as_ref(),
                    "--codec-threads".as_ref(),
                    threads_arg.as_ref(),
                ] as [&std::ffi::OsStr; 8],
            )
            .unwrap_or_else(|| panic!("{id}: vidprep run failed"));
            let opens = trace.opens_of(src);
            eprintln!("{id}, --codec-threads {threads}: {opens} opens of the source");
            assert_eq!(
                opens, *expected,
                "{id}, --codec-threads {threads}: opens of the source"
            );
            let video = out.join(format!("{id}/video.mp4"));
            let probe = |stream: &str| {
                let out = common::cmd::run_ok(
                    "ffprobe",
                    &[
                        "-v",
                        "error",
                        "-select_streams",
                        stream,
                        "-show_entries",
                        "stream=codec_name,duration",
                        "-of",
                        "csv=p=0",
                        &video.display().to_string(),
                    ],
                );
                let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
                let (codec, duration) = text.split_once(',').expect("a stream");
                (codec.to_string(), duration.parse::<f64>().unwrap())
            };
            let (codec, audio) = probe("a:0");
            let (_, pictures) = probe("v:0");
            assert_eq!(codec, "aac", "{id}");
            assert!(
                (audio - pictures).abs() < 0.05 && (pictures - seconds).abs() < 0.05,
                "{id}: {audio} s of audio for {pictures} s of video ({seconds} s asked)"
            );
        }
    }
}
