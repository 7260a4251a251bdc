//! The smart cut's tail encoded beside its head: with two threads in the item's budget the
//! last re-encoded part is decoded and encoded on a second thread, its packets kept until the
//! output reaches them. The output must be the same bytes as with a budget of one (one part
//! after the other), on several spans of synthetic videos; checked with the ffmpeg CLI (every
//! frame the right source frame, by its painted code; ffmpeg's framemd5 of both outputs
//! equal) and with the call's tally (two decoders at once with the side thread, one
//! without; never more decoder threads than the budget). A cancel while both threads run
//! leaves nothing behind.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::cmd::{ffmpeg, p};
use common::md5::md5_hex;
use common::oracle::{self, DecodeOpts, PixFmt};
use common::synth::SynthVideo;
use vidprep::call::{CancelToken, Counts, Tally};
use vidprep::{execute, Destination, ExecOptions, NoProgress, Plan};

/// A 320x240 25 fps H.264 source with B-frames (x264 medium: B-pyramid), a keyframe every
/// 25 frames, AAC audio, the frame index painted in.
fn source_gop25() -> PathBuf {
    let mut v = SynthVideo::new(320, 240)
        .frames(150)
        .gop(25)
        .bframes(3)
        .audio_tone(440.0);
    v.preset = "medium".into();
    v.cached().path
}

/// A 256x144 30 fps source without audio, a keyframe every 40 frames, one B-frame.
fn source_gop40() -> PathBuf {
    SynthVideo::new(256, 144)
        .fps(30, 1)
        .frames(200)
        .gop(40)
        .bframes(1)
        .cached()
        .path
}

/// A one-item plan: a smart clip of `src` from frame `start` to `end` into `container`.
fn plan(src: &Path, start: u32, end: u32, container: &str) -> Plan {
    let line = format!(
        r#"{{"id": "one", "source": {:?}, "start": "{start}", "end": "{end}", "exports": [{{"kind": "clip", "smart": true, "container": "{container}"}}]}}"#,
        src.display()
    );
    serde_json::from_str(&line).unwrap()
}

/// Runs `plan` into `dir` with a decoder thread budget of `threads`; returns the output video
/// and what the call's tally counted.
fn run(plan: &Plan, dir: &Path, threads: usize) -> (PathBuf, Counts) {
    let tally = Tally::new();
    let mut options = ExecOptions::default();
    options.threads = threads;
    options.tally = Some(tally.clone());
    execute(
        plan,
        &Destination::Folder(dir.to_path_buf()),
        &options,
        &mut NoProgress,
    )
    .unwrap();
    let video = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.into_path())
        .find(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("mp4" | "mkv")))
        .unwrap_or_else(|| panic!("no video in {}", dir.display()));
    (video, tally.counts())
}

fn file_md5(path: &Path) -> String {
    md5_hex(&std::fs::read(path).unwrap())
}

/// Every packet of every stream as ffmpeg reads it (stream, dts, pts, duration, size, md5).
fn packets_md5(path: &Path) -> String {
    let out = ffmpeg(&[
        "-v",
        "error",
        "-i",
        &p(path),
        "-map",
        "0",
        "-c",
        "copy",
        "-f",
        "framemd5",
        "-",
    ])
    .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Budget 1 and budget 2 make the same bytes, the right frames, with (budget 2) and without
/// (budget 1) the tail's thread.
fn same_bytes_with_and_without_the_side_thread(src: &Path, start: u32, end: u32, container: &str) {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan(src, start, end, container);
    let (one, c1) = run(&plan, &dir.path().join("budget1"), 1);
    let (two, c2) = run(&plan, &dir.path().join("budget2"), 2);
    let what = format!("{} frames {start}..{end} into {container}", src.display());
    // The sidecar says which parts were re-encoded: the side thread needs two of them.
    let side = support::sidecar(&two);
    let encoded = side["smart"]["parts"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: {}", side["smart"]))
        .iter()
        .filter(|p| p["how"] == "encoded")
        .count();
    assert!(encoded >= 2, "{what}: {}", side["smart"]);
    assert_eq!(
        c1.peak_decoders, 1,
        "{what}, budget 1: one part at a time: {c1:?}"
    );
    assert_eq!(
        c2.peak_decoders, 2,
        "{what}, budget 2: the tail beside the head: {c2:?}"
    );
    assert!(c1.peak_decoder_threads <= 1, "{what}: {c1:?}");
    assert!(c2.peak_decoder_threads <= 2, "{what}: {c2:?}");
    // (A Matroska output too: it is written without the muxer's random segment UID.)
    assert_eq!(
        packets_md5(&one),
        packets_md5(&two),
        "{what}: the packets differ"
    );
    assert_eq!(file_md5(&one), file_md5(&two), "{what}: the outputs differ");
    // The oracle: every output frame is the source frame it must be, and ffmpeg decodes
    // both outputs to the same pictures.
    let expected: Vec<u32> = (start..end).collect();
    assert_eq!(oracle::frame_codes(&two), expected, "{what}");
    let opts = DecodeOpts::new(PixFmt::Yuv420p);
    let (m1, m2) = (oracle::framemd5(&one, &opts), oracle::framemd5(&two, &opts));
    assert_eq!(m1.len(), expected.len(), "{what}");
    assert_eq!(m1, m2, "{what}: ffmpeg decodes them differently");
}

#[test]
fn a_cut_off_keyframes_at_both_ends_is_the_same_bytes_at_budget_one_and_two() {
    same_bytes_with_and_without_the_side_thread(&source_gop25(), 13, 112, "mp4");
}

#[test]
fn a_cut_with_a_long_tail_and_audio_is_the_same_bytes_at_budget_one_and_two() {
    // Head 30..50, copied 50..125, tail 125..149.
    same_bytes_with_and_without_the_side_thread(&source_gop25(), 30, 149, "mp4");
}

#[test]
fn a_cut_into_matroska_is_the_same_bytes_at_budget_one_and_two() {
    same_bytes_with_and_without_the_side_thread(&source_gop40(), 7, 190, "mkv");
    same_bytes_with_and_without_the_side_thread(&source_gop40(), 41, 170, "mkv");
}

/// A progress that cancels the call's token after `after` frames.
struct CancelAfter {
    token: CancelToken,
    after: u64,
    seen: u64,
}

impl vidprep::Progress for CancelAfter {
    fn advance(&mut self, frames: u64) -> bool {
        self.seen += frames;
        if self.seen >= self.after {
            self.token.cancel();
        }
        true
    }
}

/// A progress that stops the call (returns false) after `after` frames.
struct StopAfter {
    after: u64,
    seen: u64,
}

impl vidprep::Progress for StopAfter {
    fn advance(&mut self, frames: u64) -> bool {
        self.seen += frames;
        self.seen < self.after
    }
}

#[test]
fn a_cancel_while_the_tail_is_encoded_beside_the_head_leaves_nothing_behind() {
    // Head 1..40 and tail 160..199 re-encoded side by side (budget 2).
    let src = source_gop40();
    let plan = plan(&src, 1, 199, "mp4");
    for after in [1u64, 10, 30, 60] {
        for by_token in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("out");
            let token = CancelToken::new();
            let mut options = ExecOptions::default();
            options.threads = 2;
            options.cancel = token.clone();
            let result = if by_token {
                let mut progress = CancelAfter {
                    token,
                    after,
                    seen: 0,
                };
                execute(
                    &plan,
                    &Destination::Folder(out.clone()),
                    &options,
                    &mut progress,
                )
            } else {
                let mut progress = StopAfter { after, seen: 0 };
                execute(
                    &plan,
                    &Destination::Folder(out.clone()),
                    &options,
                    &mut progress,
                )
            };
            let how = if by_token { "token" } else { "progress" };
            let err = result.err().unwrap_or_else(|| {
                panic!("cancelled ({how}) after {after} frames, the cut still succeeded")
            });
            assert!(
                matches!(err, vidprep::Error::Cancelled),
                "{how} after {after}: {err}"
            );
            let left: Vec<String> = walkdir::WalkDir::new(dir.path())
                .min_depth(1)
                .into_iter()
                .map(|e| p(e.unwrap().path()))
                .collect();
            assert!(left.is_empty(), "{how} after {after} left {left:?}");
        }
    }
}
