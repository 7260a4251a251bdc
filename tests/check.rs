//! `vidprep check`: clean files of every kind read exactly (exit 0), with the reference decode
//! inside the tool proven against the ffmpeg CLI (`ffprobe -count_frames`, each frame's
//! best-effort timestamp from `ffprobe -show_frames`, `ffmpeg -f framemd5`); damaged files
//! (truncated, bytes overwritten) get an answer naming the damage within the time limit;
//! the time limit answers for a source it stops; many sources with `--jobs` and a manifest's
//! sources; the JSON validates against `vidprep schema check`.

use crate::common;
use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use common::cmd::p;
use common::oracle::{self, DecodeOpts, PixFmt};
use common::synth::{Codec, Corruption, SynthVideo};
use serde_json::Value;
use support::vidprep;

/// Runs `vidprep check ARGS --json --list-frames`; returns the exit code and the report.
fn check(args: &[&str]) -> (i32, Value) {
    let out = vidprep()
        .arg("check")
        .args(args)
        .args(["--json", "--list-frames"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let code = out.status.code().expect("exited, not killed");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let schema = vidprep::records::json_schema(vidprep::records::SchemaKind::Check);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{report:#}");
    (code, report)
}

/// The reference frames a check listed agree with the ffmpeg CLI: count, each frame's
/// best-effort timestamp, and (for a `yuv420p` decode) each frame's MD5.
fn reference_is_ffmpegs(path: &Path, source: &Value) {
    let frames = source["frames"].as_array().expect("--list-frames");
    assert_eq!(
        frames.len() as u64,
        oracle::count_frames(path),
        "{} frames against ffprobe -count_frames",
        path.display()
    );
    let times = oracle::frame_times(path);
    assert_eq!(times.frames.len(), frames.len());
    for (i, (f, o)) in frames.iter().zip(&times.frames).enumerate() {
        assert_eq!(
            f["pts"].as_i64(),
            o.best_effort,
            "frame {i} of {}",
            path.display()
        );
    }
    let stream = oracle::video_stream(path);
    if stream["pix_fmt"] == "yuv420p" {
        // A stream whose decoder rejects packets or conceals errors is decoded with one thread
        // (a frame-threaded decode of it differs from run to run): `ffmpeg -threads 1`.
        let damage = &source["damage"];
        let damaged = damage["rejected_packets"].as_u64().unwrap_or(0) > 0
            || damage["reference_frames"]
                .as_array()
                .is_some_and(|a| !a.is_empty());
        let mut opts = DecodeOpts::new(PixFmt::Yuv420p).autorotate(false);
        if damaged {
            opts = opts.threads(1);
        }
        let md5s = oracle::framemd5(path, &opts);
        let ours: Vec<&str> = frames.iter().map(|f| f["md5"].as_str().unwrap()).collect();
        assert_eq!(
            ours,
            md5s,
            "{}: MD5s against ffmpeg -f framemd5",
            path.display()
        );
    }
}

fn assert_exact(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec![p(path)];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, report) = check(&args);
    let s = &report["sources"][0];
    assert_eq!(s["verdict"], "exact", "{report:#}");
    assert_eq!(code, 0);
    assert_eq!(report["exact"], true);
    assert_eq!(s["differences_total"], 0);
    let c = &s["compared"];
    let n = s["reference_frames"].as_u64().unwrap();
    assert_eq!(c["times"].as_u64(), Some(n));
    for read in ["seeks", "seek_times", "span", "sparse", "time_lookups"] {
        assert!(c[read].as_u64().unwrap() > 0, "{read}: {report:#}");
    }
    s.clone()
}

#[test]
fn clean_files_of_every_kind_read_exactly() {
    let cases = [
        // MP4 with B-frames (2) and a 12-frame GOP.
        SynthVideo::new(160, 120).frames(60).gop(12).bframes(2),
        // Matroska.
        SynthVideo::new(160, 120)
            .frames(50)
            .gop(10)
            .bframes(2)
            .container("mkv"),
        // MPEG-TS starting 1.4 s into its clock.
        SynthVideo::new(160, 120)
            .frames(50)
            .gop(10)
            .codec(Codec::Mpeg2)
            .container("ts")
            .start_offset(1.4),
        // Variable frame rate.
        SynthVideo::new(160, 120)
            .frames(40)
            .vfr(&[40, 80, 40, 120])
            .container("mkv"),
    ];
    for case in cases {
        let v = case.cached();
        let s = assert_exact(&v.path, &[]);
        reference_is_ffmpegs(&v.path, &s);
        // Short: every frame read in order too.
        assert_eq!(s["compared"]["sequential"], s["reference_frames"]);
    }
}

#[test]
fn an_image_folder_reads_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let frames = dir.path().join("frames");
    std::fs::create_dir(&frames).unwrap();
    common::cmd::run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=96x64:rate=25",
            "-frames:v",
            "30",
            &p(&frames.join("%06d.png")),
        ],
    );
    let s = assert_exact(&frames, &["--source-fps", "25"]);
    assert_eq!(s["reference_frames"], 30);
}

#[test]
fn full_reads_every_frame_in_order_and_sparsely() {
    let v = SynthVideo::new(160, 120)
        .frames(40)
        .gop(8)
        .bframes(2)
        .cached();
    let s = assert_exact(&v.path, &["--full", "--samples", "4"]);
    assert_eq!(s["compared"]["sequential"], 40);
    assert_eq!(s["compared"]["sparse"], 40);
}

#[test]
fn real_footage_reads_exactly() {
    for rel in ["host/chaplin.mp4", "host/bag.avi", "edge/video_90.mov"] {
        let Some(path) = support::shared(rel) else {
            return;
        };
        let s = assert_exact(&path, &[]);
        reference_is_ffmpegs(&path, &s);
    }
    if let Some(seq) = support::shared("got10k/OTB_Crossing") {
        let s = assert_exact(&seq, &[]);
        assert_eq!(s["reference_frames"], 120);
    }
}

/// The broken MP4 of decord's test data: a packet that does not decode near 3.1 s; vidprep
/// reads what ffmpeg decodes (same count, same pixels) and lists the concealed frame.
#[test]
fn real_damaged_footage_is_damaged_not_different() {
    let Some(path) = support::shared("edge/corrupted.mp4") else {
        return;
    };
    let (code, report) = check(&[&p(&path)]);
    let s = &report["sources"][0];
    assert_eq!(code, 1);
    assert_eq!(s["verdict"], "damaged", "{report:#}");
    assert_eq!(
        s["reference_frames"].as_u64(),
        Some(oracle::count_frames(&path))
    );
    let reported = s["damage"]["reported_frames"].as_array().unwrap();
    assert!(!reported.is_empty(), "{report:#}");
    for f in s["damage"]["reference_frames"].as_array().unwrap() {
        assert!(reported.contains(f), "{report:#}");
    }
    assert!(s["action"].as_str().unwrap().contains("--strict"));
    reference_is_ffmpegs(&path, s);
}

#[test]
fn a_truncated_mp4_is_refused_naming_the_file() {
    let v = SynthVideo::new(160, 120)
        .frames(50)
        .corrupt(Corruption::Truncate { keep_fraction: 0.5 })
        .cached();
    let (code, report) = check(&[&p(&v.path)]);
    let s = &report["sources"][0];
    assert_eq!(code, 1);
    assert_eq!(s["verdict"], "failed", "{report:#}");
    let error = s["error"].as_str().unwrap();
    assert!(error.contains(&v.path.display().to_string()), "{error}");
    assert!(s["action"].as_str().unwrap().contains("refuses"));
}

/// Damaged streams (a truncated TS, bytes overwritten in the middle of an H.264 TS and MKV):
/// an answer within the limit, exit 1, naming the damage the reference decode met (and the
/// frames vidprep lists as damaged).
#[test]
fn damaged_files_get_an_answer_naming_the_damage() {
    let cases = [
        SynthVideo::new(160, 120)
            .frames(60)
            .gop(12)
            .container("ts")
            .corrupt(Corruption::Garbage {
                at_fraction: 0.45,
                len_fraction: 0.03,
                seed: 7,
            }),
        SynthVideo::new(160, 120)
            .frames(60)
            .gop(12)
            .container("mkv")
            .corrupt(Corruption::Garbage {
                at_fraction: 0.5,
                len_fraction: 0.02,
                seed: 3,
            }),
        SynthVideo::new(160, 120)
            .frames(60)
            .gop(12)
            .container("ts")
            .corrupt(Corruption::Truncate {
                keep_fraction: 0.63,
            }),
    ];
    for case in cases {
        let v = case.cached();
        let started = Instant::now();
        let (code, report) = check(&[&p(&v.path), "--time-limit", "60"]);
        assert!(started.elapsed() < Duration::from_secs(60));
        let s = &report["sources"][0];
        let damage = &s["damage"];
        let named = !damage["reference_frames"].as_array().unwrap().is_empty()
            || damage["rejected_packets"].as_u64().unwrap() > 0
            || !damage["read_error"].is_null()
            || !damage["table"].is_null();
        eprintln!("{}: {}", v.path.display(), s["action"]);
        assert_eq!(code, 1, "{report:#}");
        assert_ne!(s["verdict"], "exact");
        assert!(named, "{report:#}");
        // What the reference decode counted is what ffprobe counts.
        assert_eq!(
            s["reference_frames"].as_u64(),
            Some(oracle::count_frames(&v.path)),
            "{report:#}"
        );
        assert!(!s["action"].as_str().unwrap().is_empty());
    }
}

#[test]
fn the_time_limit_answers_for_a_source_it_stops() {
    let v = SynthVideo::new(640, 480).frames(1500).gop(250).cached();
    let started = Instant::now();
    let (code, report) = check(&[&p(&v.path), "--time-limit", "0.3"]);
    let took = started.elapsed();
    let s = &report["sources"][0];
    assert_eq!(code, 1);
    assert_eq!(s["verdict"], "timed_out", "{report:#}");
    assert!(s["error"].as_str().unwrap().contains("time limit"));
    // The limit, the grace given to stop, and the process's start and end.
    assert!(took < Duration::from_secs(8), "{took:?}");
}

/// #52 item 7: a limit that lands in vidprep's own reads (after the reference decode) stopped
/// them, and what they had not read was taken for a difference: a clean file was `differs`
/// ("a bug to report"). A check its limit ended is `timed_out`, wherever the limit lands.
#[test]
fn a_time_limit_anywhere_in_the_check_of_a_clean_file_is_timed_out_never_differs() {
    let v = SynthVideo::new(640, 480).frames(600).gop(50).cached();
    let mut seen = std::collections::BTreeMap::new();
    for limit in ["0.4", "0.8", "1.2", "1.6", "2", "2.5", "3", "3.5", "4.5"] {
        let (_, report) = check(&[&p(&v.path), "--time-limit", limit]);
        let verdict = report["sources"][0]["verdict"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            verdict == "exact" || verdict == "timed_out",
            "--time-limit {limit}: {report:#}"
        );
        seen.insert(limit, verdict);
    }
    eprintln!("{seen:?}");
    // Without a limit it is exact: the verdicts above are the limit's, not the file's.
    let (code, report) = check(&[&p(&v.path), "--time-limit", "600"]);
    assert_eq!(code, 0, "{report:#}");
}

/// #52: `check --manifest` checks an item's GOT-10k needle sequence too (it was skipped: only
/// the items' sources were read).
#[test]
fn a_manifests_needle_sequences_are_checked_too() {
    let root = crate::repo_root().join("fixtures/example");
    let (code, report) = check(&["--manifest", &p(&root.join("benchmark.jsonl"))]);
    let checked: Vec<String> = report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["source"].as_str().unwrap().to_string())
        .collect();
    assert!(checked.iter().any(|c| c.ends_with("needle")), "{checked:?}");
    assert_eq!(code, 0, "{report:#}");
}

#[test]
fn many_sources_and_a_manifests_sources() {
    let a = SynthVideo::new(160, 120).frames(30).cached();
    let b = SynthVideo::new(160, 120)
        .frames(30)
        .container("mkv")
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let (code, report) = check(&[&p(&a.path), &p(&b.path), "--jobs", "2"]);
    assert_eq!(code, 0, "{report:#}");
    let sources = report["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2);
    assert_eq!(sources[0]["source"], p(&a.path));
    assert_eq!(sources[1]["source"], p(&b.path));
    // A manifest naming a twice (checked once), b, and a missing file (a bad line: exit 1).
    let manifest = dir.path().join("m.jsonl");
    let line = |id: &str, src: &str| {
        format!(r#"{{"id": "{id}", "source": "{src}", "exports": [{{"kind": "clip"}}]}}"#)
    };
    std::fs::write(
        &manifest,
        [
            line("one", &p(&a.path)),
            line("two", &p(&a.path)),
            line("three", &p(&b.path)),
        ]
        .join("\n"),
    )
    .unwrap();
    let (code, report) = check(&["--manifest", &p(&manifest), "--jobs", "2"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["sources"].as_array().unwrap().len(), 2);
    std::fs::write(
        &manifest,
        [line("one", &p(&a.path)), line("gone", "missing.mp4")].join("\n"),
    )
    .unwrap();
    let out = vidprep()
        .args(["check", "--manifest", &p(&manifest)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("missing.mp4"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("exact: "), "{stdout}");
}

#[test]
fn bad_usage_is_exit_2() {
    let out = vidprep().arg("check").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = vidprep()
        .args(["check", "x.mp4", "--time-limit", "-3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Timestamps out of order: a lone timestamp 5 s ahead (a flipped bit in a Matroska block's
/// time, made with FFmpeg's `setts` from a clean VP8 WebM) and a restart at 0 (two recordings
/// joined: the corpus's file). vidprep keeps one increasing clock, so its times are not the stream's
/// there: `check` says `mended` and where, not `differs` (every frame's pixels are the plain
/// decode's). The lone jump is taken as missing: the frames after it keep the stream's times
/// (ffprobe's), where before they all followed it 5 s late.
#[test]
fn timestamps_out_of_order_are_mended_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean.webm");
    common::cmd::ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=160x120:rate=25:duration=4",
        "-c:v",
        "libvpx",
        "-g",
        "25",
        &p(&clean),
    ])
    .unwrap();
    let remux = |name: &str, expr: &str| {
        let out = dir.path().join(name);
        common::cmd::ffmpeg(&[
            "-v",
            "error",
            "-y",
            "-i",
            &p(&clean),
            "-c",
            "copy",
            "-bsf:v",
            &format!("setts=pts={expr}"),
            &p(&out),
        ])
        .unwrap();
        out
    };
    // (WebM's time base is 1 ms.)
    let jump = remux("jump.webm", "if(eq(N\\,50)\\,PTS+5000\\,PTS)");
    let times = |path: &Path| -> Vec<f64> {
        oracle::frame_times(path)
            .seconds()
            .into_iter()
            .map(|t| t.unwrap())
            .collect()
    };
    let jump_times = times(&jump);
    assert!(
        (jump_times[50] - jump_times[49] - 5.0).abs() < 0.1,
        "{jump_times:?}"
    );
    let (code, report) = check(&[&p(&jump)]);
    let s = &report["sources"][0];
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(s["verdict"], "mended", "{report:#}");
    assert_eq!(s["timestamps"]["first_frame"], 50);
    assert_eq!(
        s["timestamps"]["frames"], 1,
        "only the lone jump: {report:#}"
    );
    reference_is_ffmpegs(&jump, s);
    // The frames after the jump: the stream's times, in the table requests read by (the
    // packets' table, in timestamp order, disagrees with the decoder: rebuilt by decoding).
    let tables = vidprep::media::TableCache::new();
    let source = vidprep::media::Source::from(jump.as_path());
    let mut reader =
        vidprep::media::FrameReader::open_in(&tables, &source, Default::default()).unwrap();
    let mut table = reader.table().clone();
    for i in [51, 60, 99] {
        if let Err(vidprep::Error::TableMismatch { .. }) =
            reader.seek_to_index(i).and_then(|()| reader.next_frame())
        {
            tables.distrust(&source);
            reader =
                vidprep::media::FrameReader::open_in(&tables, &source, Default::default()).unwrap();
            reader.seek_to_index(i).unwrap();
            reader.next_frame().unwrap().unwrap();
            table = reader.table().clone();
        }
        let t = table.time(i).as_secs_f64();
        assert!(
            (t - jump_times[i]).abs() < 0.002,
            "frame {i}: {t} against {}",
            jump_times[i]
        );
    }
    // A restart at 0 cannot be muxed by FFmpeg (its muxers mend decreasing timestamps): the
    // corpus's Matroska file whose times restart at frame 57, where it is fetched
    // (`scripts/fetch-corpus.py`).
    let corpus = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_default()
        .join(".cache/vidprep-corpus/debian/golang-github-gabriel-vasile-mimetype-dev/mkv.mkv");
    if !corpus.is_file() {
        crate::common::skip::skip(
            crate::common::skip::Needs::Corpus,
            format!(
                "the restart case: {} is not fetched (scripts/fetch-corpus.py)",
                corpus.display()
            ),
        );
        return;
    }
    let (code, report) = check(&[&p(&corpus)]);
    let s = &report["sources"][0];
    assert_eq!(code, 1);
    assert_eq!(s["verdict"], "mended", "{report:#}");
    assert_eq!(s["timestamps"]["first_frame"], 57);
    assert!(s["action"].as_str().unwrap().contains("frame 57"));
    reference_is_ffmpegs(&corpus, s);
}
