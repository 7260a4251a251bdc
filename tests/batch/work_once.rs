//! Work done once per item: one `run` item with a span, boxes and a frames export (and one
//! with a video export, one with a smart cut) opens its source once (plus one decoder per
//! parallel seeking worker, bounded by the item's thread budget), scans its packets once,
//! checks and normalises its plan once and reads its annotation file once; its decoder
//! threads stay within the budget. Counted by the call's own tally (`vidprep::call::Tally`), and
//! checked against independent witnesses: the kernel's `/proc/self/task` for threads and
//! `strace` (when installed) for the files the `vidprep` binary opens.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::synth::SynthVideo;
use vidprep::call::{Counts, Tally};
use vidprep::{execute, Destination, ExecOptions, NoProgress, Plan};

/// Threads are counted for the whole test process: one measurement at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn source() -> PathBuf {
    SynthVideo::new(160, 120)
        .frames(120)
        .gop(30)
        .bframes(2)
        .label(false)
        .audio_tone(440.0)
        .cached()
        .path
}

/// A two-key boxes CSV over the 120 frames of [`source`].
pub(crate) fn boxes(dir: &Path) -> PathBuf {
    let path = dir.join("b.csv");
    std::fs::write(
        &path,
        "frame,track_id,x1,y1,x2,y2\n0,1,10,10,60,60\n119,1,50,40,100,90\n",
    )
    .unwrap();
    path
}

fn plan(source: &Path, boxes: &Path, exports: &str) -> Plan {
    let line = format!(
        r#"{{"id": "one", "source": "{}", "start": "0.5s", "end": "4.5s", "boxes": {{"path": "{}", "labels": false}}, "exports": [{exports}]}}"#,
        source.display(),
        boxes.display()
    );
    serde_json::from_str(&line).unwrap()
}

const FRAMES: &str = r#"{"kind": "frames", "count": 6, "format": "png"}"#;
const VIDEO: &str = r#"{"kind": "video", "max_size": "96x96"}"#;
const SMART: &str = r#"{"kind": "clip", "smart": true}"#;

fn task_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// Runs `plan` into a fresh folder with a thread budget of `threads` and returns what its
/// tally counted and the most threads the process ran beyond those it had before.
fn run_counted(plan: &Plan, threads: usize) -> (Counts, usize, f64) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out = tempfile::tempdir().unwrap();
    let tally = Tally::new();
    let mut options = ExecOptions::default();
    options.threads = threads;
    options.tally = Some(tally.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicUsize::new(0));
    let base = task_count();
    let sampler = {
        let (stop, peak) = (stop.clone(), peak.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                peak.fetch_max(task_count(), Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        })
    };
    let t0 = std::time::Instant::now();
    execute(
        plan,
        &Destination::Folder(out.path().join("one")),
        &options,
        &mut NoProgress,
    )
    .unwrap();
    let seconds = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    sampler.join().unwrap();
    // The sampler itself is one thread above the base.
    let extra = peak.load(Ordering::SeqCst).saturating_sub(base + 1);
    (tally.counts(), extra, seconds)
}

#[test]
fn a_span_boxes_frames_item_does_each_piece_of_work_once() {
    let dir = tempfile::tempdir().unwrap();
    let (src, b) = (source(), boxes(dir.path()));
    for threads in [1, 2, 4] {
        let (c, os_threads, s) = run_counted(&plan(&src, &b, FRAMES), threads);
        eprintln!("frames, budget {threads}: {c:?}, {os_threads} threads beyond the base, {s:.3}s");
        assert!(c.opens <= 1 + threads, "{c:?}");
        assert_eq!((c.packet_scans, c.decode_scans), (1, 0), "{c:?}");
        assert_eq!((c.plan_checks, c.normalisations), (1, 1), "{c:?}");
        assert_eq!(c.annotation_reads, 1, "{c:?}");
        assert!(c.peak_decoder_threads <= threads, "{c:?}");
        // The kernel's count: the workers (one decoder thread each, so FFmpeg starts none)
        // and the pipeline's reader, with room for a test thread starting meanwhile. The
        // count is the whole test process's, so other tests running beside (a smart cut's
        // x264 threads) can only add to it: the least of up to 5 runs bounds the item's own.
        let bound = threads + 3;
        let least = (0..4).fold(os_threads, |least, _| {
            if least <= bound {
                least
            } else {
                least.min(run_counted(&plan(&src, &b, FRAMES), threads).1)
            }
        });
        assert!(
            least <= bound,
            "{least} threads (the least of up to 5 runs) for a budget of {threads}"
        );
    }
}

/// `strace -e openat` of `vidprep run` on one item: the source is opened by the table's scan
/// and by each sparse worker (the item's budget: all the cores for one job), the boxes file
/// twice: once read, once hashed for `item.json` (a side input's content is what `--resume`
/// checks).
#[test]
fn vidprep_run_opens_the_source_and_the_boxes_as_strace_counts() {
    if let Some(why) = support::strace_unusable() {
        crate::common::skip::skip(crate::common::skip::Needs::Tools, why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (src, b) = (source(), boxes(dir.path()));
    let line = serde_json::to_string(&plan(&src, &b, FRAMES)).unwrap();
    let manifest = dir.path().join("m.jsonl");
    std::fs::write(&manifest, format!("{line}\n")).unwrap();
    let trace = dir.path().join("trace.txt");
    let out = dir.path().join("out");
    let trace = support::vidprep_traced(
        &trace,
        [
            "run".as_ref(),
            manifest.as_os_str(),
            "--out-dir".as_ref(),
            out.as_os_str(),
            "--jobs".as_ref(),
            "1".as_ref(),
        ] as [&std::ffi::OsStr; 6],
    )
    .expect("vidprep run failed");
    let opens_of = |p: &Path| trace.opens_of(p);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let source_opens = opens_of(&src);
    assert!(
        (1..=1 + cores).contains(&source_opens),
        "{source_opens} opens of the source"
    );
    assert_eq!(
        opens_of(&b),
        2,
        "opens of the boxes file (its read, its content hash)"
    );
}

#[test]
fn a_video_export_item_opens_its_source_once_per_decode() {
    let dir = tempfile::tempdir().unwrap();
    let (src, b) = (source(), boxes(dir.path()));
    for threads in [1, 2] {
        let (c, os_threads, s) = run_counted(&plan(&src, &b, VIDEO), threads);
        eprintln!("video, budget {threads}: {c:?}, {os_threads} threads beyond the base, {s:.3}s");
        // The table, the stream's description and the full decode, which reads the
        // table's input rewound to its start (an MP4, `media::rewind`), and whose input the
        // soundtrack reads too (its format is what the first open saw): one open, no audio
        // opens (2 before the rewind, 3 before that).
        assert_eq!((c.opens, c.audio_opens), (1, 0), "{c:?}");
        assert_eq!((c.packet_scans, c.decode_scans), (1, 0), "{c:?}");
        assert_eq!((c.plan_checks, c.normalisations), (1, 1), "{c:?}");
        assert_eq!(c.annotation_reads, 1, "{c:?}");
        assert!(c.peak_decoder_threads <= threads, "{c:?}");
    }
}

#[test]
fn a_smart_cut_reuses_the_frame_tables_packet_scan() {
    let mkv = SynthVideo::new(160, 120)
        .frames(120)
        .gop(30)
        .bframes(2)
        .label(false)
        .audio_tone(440.0)
        .container("mkv")
        .cached()
        .path;
    for src in [source(), mkv] {
        let line = format!(
            r#"{{"id": "one", "source": "{}", "start": "0.5s", "end": "4.5s", "exports": [{SMART}]}}"#,
            src.display()
        );
        let plan: Plan = serde_json::from_str(&line).unwrap();
        let (c, os_threads, s) = run_counted(&plan, 2);
        let name = src.file_name().unwrap().to_string_lossy().into_owned();
        eprintln!("smart {name}, budget 2: {c:?}, {os_threads} threads beyond the base, {s:.3}s");
        // One input for the table's scan, the parameter sets, the head (the re-encoded part
        // written first, on this thread) and the copied GOPs, each positioning it by a seek
        // (an MP4, whose seeks are exact by its index, or an MKV, whose seeks land on the
        // cue at or before, each copied packet's order checked); the tail, encoded on a
        // second thread beside the others, opens its own. The soundtrack reads an input of
        // its own (the copied GOPs are read from a seek), its format is what the first open
        // saw. 2 video opens, 4 (MP4) and 3 (MKV) before the scanned input was lent on.
        assert_eq!(c.opens - c.audio_opens, 2, "{name}: {c:?}");
        assert_eq!(c.audio_opens, 1, "{name}: {c:?}");
        assert_eq!((c.packet_scans, c.decode_scans), (1, 0), "{name}: {c:?}");
        assert_eq!((c.plan_checks, c.normalisations), (1, 1), "{name}: {c:?}");
        assert!(c.peak_decoder_threads <= 2, "{name}: {c:?}");
    }
}

/// 1,500 frames, keyframes every 50: long enough for detect's analysis pass to split into
/// three chunks (at least 600 frames each) and read them on several workers.
fn long_source() -> PathBuf {
    SynthVideo::new(160, 120)
        .frames(1500)
        .gop(50)
        .bframes(2)
        .label(false)
        .cached()
        .path
}

/// The detect calls counted: shots; activity inside a region; annotations split at shots.
fn detect_options(boxes: &Path) -> Vec<(&'static str, vidprep::detect::DetectOptions)> {
    use vidprep::detect::{AnnotationSpans, DetectOptions, Detector, Region};
    vec![
        ("shots", DetectOptions::default()),
        (
            "activity in a region",
            DetectOptions {
                by: Detector::Activity,
                region: Some(Region {
                    x1: 20.0,
                    y1: 10.0,
                    x2: 140.0,
                    y2: 100.0,
                }),
                ..DetectOptions::default()
            },
        ),
        (
            "annotations split at shots",
            DetectOptions {
                by: Detector::Annotations,
                annotations: Some(AnnotationSpans::new(boxes)),
                split_at_shots: true,
                ..DetectOptions::default()
            },
        ),
    ]
}

/// A detect call reads its source as the executor reads a plan's (`exec::read_stream`: the
/// executor's processed stream, its table cache and mismatch retry): one open for the
/// stream's description, its table and the analysis pass's first chunk (read from the
/// table's input), plus at most one per further worker (each worker reads its next chunk
/// from the input of its last, positioned by a seek). The frame size a region is checked
/// against and the stream an annotation file is resolved on are the stream's: no open of
/// their own. Before #54 item 3 detect was an executor of its own (its own table cache and
/// retry, a `FrameReader` opened per chunk, one more open for the region's frame size or the
/// annotations' stream): `strace` counted, on this source with 1, 2 and 3 workers, shots 2, 4
/// and 4 opens, activity in a region and annotations split at shots 3, 5 and 5 each (the
/// table's scan, one per chunk, one for the size); now 1, 2 and 3 for all three.
#[test]
fn a_detect_call_opens_its_source_once_plus_one_per_extra_worker() {
    let dir = tempfile::tempdir().unwrap();
    let (src, b) = (long_source(), boxes(dir.path()));
    let source = vidprep::media::Source::from(src.as_path());
    for (name, options) in detect_options(&b) {
        for workers in [1, 2, 3] {
            let tally = Tally::new();
            let ctx = vidprep::call::CallContext::new().with_tally(tally.clone());
            let options = vidprep::detect::DetectOptions {
                workers,
                ..options.clone()
            };
            let t0 = std::time::Instant::now();
            let found = vidprep::detect::detect(&source, &options, &mut NoProgress, &ctx).unwrap();
            let s = t0.elapsed().as_secs_f64();
            let c = tally.counts();
            eprintln!("detect {name}, {workers} workers: {c:?}, {s:.3}s");
            assert_eq!(found.frames, 1500, "{name}");
            assert_eq!(found.stats.len(), 1500, "{name}");
            // One worker: the one open; more: the first open and at most one per extra
            // worker (a worker that finds the queue empty opens nothing).
            assert!((1..=workers).contains(&c.opens), "{name}, {workers}: {c:?}");
            assert_eq!(c.audio_opens, 0, "{name}: {c:?}");
            assert_eq!((c.packet_scans, c.decode_scans), (1, 0), "{name}: {c:?}");
            assert!(c.frames_decoded >= 1500, "{name}: {c:?}");
            assert!(c.peak_decoders <= workers, "{name}, {workers}: {c:?}");
            let reads = usize::from(options.annotations.is_some());
            assert_eq!(c.annotation_reads, reads, "{name}: {c:?}");
        }
    }
}

/// `strace -e openat` of `vidprep detect` with one worker: the source is opened once (it was
/// opened twice for shots, three times with `--region`, before #54 item 3).
#[test]
fn vidprep_detect_opens_the_source_once_as_strace_counts() {
    if let Some(why) = support::strace_unusable() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = long_source();
    for (name, extra) in [
        ("shots", &["--by", "shots"][..]),
        (
            "activity",
            &["--by", "activity", "--region", "20,10,140,100"][..],
        ),
    ] {
        let trace = dir.path().join(format!("{name}.txt"));
        let out = dir.path().join(format!("{name}.jsonl"));
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "detect".as_ref(),
            src.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
            "--workers".as_ref(),
            "1".as_ref(),
        ];
        args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
        let trace = support::vidprep_traced(&trace, args).expect("vidprep detect failed");
        assert_eq!(trace.opens_of(&src), 1, "{name}: opens of the source");
    }
}

/// Tracking reads its source through the executor's stream too (`vidprep::track`): the stream
/// opens the source once, for its table's scan, and the tracker's frames are decoded from that
/// input. A caller that read the table first hands its cache on (`track_source_in`, as
/// `vidprep track` does): one scan for both, and one more open (the stream's description,
/// read by the tracker). Before #54 item 3 `track_source` scanned the source again in a cache
/// of its own and opened a reader of its own: `vidprep track` opened its source 3 times
/// (`strace`), now 2.
#[test]
fn tracking_reads_its_source_through_the_executors_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (src, b) = (source(), boxes(dir.path()));
    let source = vidprep::media::Source::from(src.as_path());
    let keys = vidprep::boxes::read_with_defaults(&b, vidprep::plan::Format::Auto).unwrap();
    // (A fill without a tracker: the count is the reading's, with or without OpenCV.)
    let fill = vidprep::plan::Fill::Linear;
    let tally = Tally::new();
    let ctx = vidprep::call::CallContext::new().with_tally(tally.clone());
    let (tracked, _, _) = vidprep::track::track_source(&source, &keys, None, fill, &ctx).unwrap();
    assert_eq!(tracked.tracks.len(), 1);
    let c = tally.counts();
    eprintln!("track_source: {c:?}");
    assert_eq!(
        (c.opens, c.packet_scans, c.decode_scans),
        (1, 1, 0),
        "{c:?}"
    );

    let tally = Tally::new();
    let ctx = vidprep::call::CallContext::new().with_tally(tally.clone());
    let tables = vidprep::media::TableCache::new();
    let table = tables.table_in(&source, &ctx).unwrap();
    assert_eq!(table.len(), 120);
    vidprep::track::track_source_in(&source, &keys, Some(60), fill, &tables, &ctx).unwrap();
    let c = tally.counts();
    eprintln!("table, then track_source_in: {c:?}");
    assert_eq!(
        (c.opens, c.packet_scans, c.decode_scans),
        (2, 1, 0),
        "{c:?}"
    );
}
