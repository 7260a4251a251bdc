//! Decoding exactly as ffmpeg does on field footage: RGB-coded sources (GIF, PNG/APNG, QTRLE,
//! FFV1 RGB, Cinepak, PNG folders) give PNG frames byte-equal to the ffmpeg CLI's
//! `-pix_fmt rgb24` decode (no detour through YUV 4:2:0), scaled ones equal to its bicubic
//! `scale` filter in RGB; and a Theora file with damaged packets is numbered, cut, exported and
//! scanned with one frame count, its frames being ffmpeg's sequential decode of the same indices.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::cmd;
use common::oracle::{self, DecodeOpts, PixFmt};
use serde_json::Value;
use support::vidprep;

/// Writes `name` in `dir` with the ffmpeg CLI from a moving 160x120 testsrc2 (20 frames).
fn make(dir: &Path, name: &str, encode: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut a: Vec<String> = ["-v", "error", "-y", "-f", "lavfi", "-i"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.push("testsrc2=size=160x120:rate=10:duration=2".into());
    a.extend(encode.iter().map(|s| s.to_string()));
    a.push(cmd::p(&out));
    cmd::ffmpeg(&a).unwrap_or_else(|e| panic!("making {name}: {e}"));
    out
}

fn frames_json(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("frames.json")).unwrap()).unwrap()
}

/// Exports 5 PNG frames of `input` (with `extra` options) and checks each against the ffmpeg
/// CLI's rgb24 decode of the same source frame (at `size` when given): byte-equal.
fn assert_png_frames_equal_ffmpeg(input: &Path, extra: &[&str], size: Option<(u32, u32)>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("frames");
    vidprep()
        .args(["export", "frames"])
        .arg(input)
        .arg("--out-dir")
        .arg(&out)
        .args(["--count", "5", "--format", "png"])
        .args(extra)
        .assert()
        .success();
    let j = frames_json(&out);
    let mut opts = DecodeOpts::new(PixFmt::Rgb24).scale_flags("bicubic");
    opts.size = size;
    let reference = oracle::decode_frames_opts(input, &opts);
    let records = j["frames"].as_array().unwrap();
    assert_eq!(records.len(), 5);
    for r in records {
        let i = r["source_frame"].as_u64().unwrap() as usize;
        let got = oracle::decode_image(&out.join(r["file"].as_str().unwrap()), PixFmt::Rgb24);
        let want = &reference[i];
        assert_eq!(
            (got.width, got.height),
            (want.width, want.height),
            "{input:?} frame {i}: size"
        );
        if got.data != want.data {
            let mse = got
                .data
                .iter()
                .zip(&want.data)
                .map(|(&a, &b)| (a as f64 - b as f64).powi(2))
                .sum::<f64>()
                / got.data.len() as f64;
            panic!(
                "{input:?} frame {i}: the PNG differs from ffmpeg's rgb24 decode ({:.2} dB)",
                10.0 * (255.0f64 * 255.0 / mse).log10()
            );
        }
    }
}

fn rgb_case(name: &str, encode: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let src = make(dir.path(), name, encode);
    assert_png_frames_equal_ffmpeg(&src, &[], None);
}

#[test]
fn gif_frames_are_ffmpegs_rgb() {
    // The GIF decoder gives bgra: 28 dB through YUV 4:2:0 before.
    rgb_case("a.gif", &["-c:v", "gif"]);
}

#[test]
fn cinepak_frames_are_ffmpegs_rgb() {
    // FFmpeg's Cinepak decoder outputs rgb24 itself (it converts its YUV-like codebooks), so
    // the CLI's rgb24 is the decoder's picture: byte-equal (37 dB before).
    rgb_case("a.avi", &["-c:v", "cinepak"]);
}

#[test]
fn qtrle_frames_are_ffmpegs_rgb() {
    rgb_case("a.mov", &["-c:v", "qtrle"]);
}

#[test]
fn ffv1_rgb_frames_are_ffmpegs_rgb() {
    rgb_case("a.mkv", &["-c:v", "ffv1", "-pix_fmt", "bgr0"]);
}

#[test]
fn apng_frames_are_ffmpegs_rgb() {
    rgb_case("a.apng", &["-c:v", "apng"]);
}

#[test]
fn png_folder_frames_are_ffmpegs_rgb() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("seq");
    std::fs::create_dir(&folder).unwrap();
    make(&folder, "%04d.png", &[]);
    let dir2 = tempfile::tempdir().unwrap();
    let out = dir2.path().join("frames");
    vidprep()
        .args(["export", "frames"])
        .arg(&folder)
        .args(["--source-fps", "10", "--out-dir"])
        .arg(&out)
        .args(["--count", "5", "--format", "png"])
        .assert()
        .success();
    let j = frames_json(&out);
    for r in j["frames"].as_array().unwrap() {
        let i = r["source_frame"].as_u64().unwrap();
        let got = oracle::decode_image(&out.join(r["file"].as_str().unwrap()), PixFmt::Rgb24);
        let want = oracle::decode_image(&folder.join(format!("{:04}.png", i + 1)), PixFmt::Rgb24);
        assert!(got.data == want.data, "frame {i} differs from its PNG file");
    }
}

#[test]
fn scaled_gif_frames_are_ffmpegs_bicubic_rgb() {
    // Scaled in RGB, as `ffmpeg -vf scale=80:60 -pix_fmt rgb24` does.
    let dir = tempfile::tempdir().unwrap();
    let src = make(dir.path(), "a.gif", &["-c:v", "gif"]);
    assert_png_frames_equal_ffmpeg(&src, &["--max-size", "80x80"], Some((80, 60)));
}

#[test]
fn rotated_qtrle_frames_are_ffmpegs_rgb() {
    // A display matrix on an RGB source: rotated in RGB, as the CLI's autorotation does.
    let dir = tempfile::tempdir().unwrap();
    let src = make(dir.path(), "a.mov", &["-c:v", "qtrle"]);
    let rotated = dir.path().join("r.mov");
    cmd::ffmpeg(&[
        "-v",
        "error",
        "-i",
        &cmd::p(&src),
        "-c",
        "copy",
        "-metadata:s:v:0",
        "rotate=90",
        &cmd::p(&rotated),
    ])
    .unwrap();
    assert_png_frames_equal_ffmpeg(&rotated, &[], None);
}

// ------------------------------------------------------------------ damaged Theora

/// How a Theora file is damaged.
#[derive(Clone, Copy)]
enum Damage {
    /// Three runs of 400 bytes of 0xff at 45, 52 and 60 % of the file, as the format matrix's
    /// `damaged_ogv` is made: pages fail their CRC, their packets are lost, later frames are
    /// decoded from wrong references (concealed).
    LostPages,
    /// 40,000 zero bytes at 30 %: the Ogg demuxer reports invalid data there and ffmpeg and
    /// ffprobe stop reading (the rest of the file is not part of the video for them).
    Unreadable,
}

/// A 40 s frame-coded Theora file (24 fps, keyframe every 24, 960 frames when whole),
/// damaged as `damage` says.
fn damaged_theora(dir: &Path, damage: Damage) -> PathBuf {
    let src = dir.join("whole.ogv");
    let filter = common::code::ffmpeg_code_filter(16);
    cmd::ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=320x240:rate=24:duration=40",
        "-vf",
        &filter,
        "-c:v",
        "libtheora",
        "-q:v",
        "7",
        "-g",
        "24",
        &cmd::p(&src),
    ])
    .unwrap();
    let mut bytes = std::fs::read(&src).unwrap();
    let size = bytes.len();
    let runs: &[(usize, usize, u8)] = match damage {
        Damage::LostPages => &[(45, 400, 0xff), (52, 400, 0xff), (60, 400, 0xff)],
        Damage::Unreadable => &[(30, 40_000, 0)],
    };
    for &(at, len, value) in runs {
        let start = size * at / 100;
        bytes[start..start + len].fill(value);
    }
    let out = dir.join("damaged.ogv");
    std::fs::write(&out, bytes).unwrap();
    out
}

/// Seeks to every 7th frame (and the last) with the library's reader and compares each
/// frame with ffmpeg's sequential decode of the file: byte-equal, or marked damaged.
fn assert_seeks_give_ffmpegs_frames(src: &Path) {
    let reference = oracle::decode_frames(src, PixFmt::Yuv420p, None);
    let count = oracle::count_frames(src) as usize;
    assert_eq!(reference.len(), count);
    let tables = vidprep::TableCache::new();
    let source = vidprep::Source::from(src);
    let mut reader = vidprep::FrameReader::open_in(&tables, &source, Default::default()).unwrap();
    assert_eq!(
        reader.table().len(),
        count,
        "the frame table counts what ffprobe decodes"
    );
    let mut bad = Vec::new();
    let targets: Vec<usize> = (0..count).step_by(7).chain([count - 1]).collect();
    for i in targets {
        let frame = match reader.seek_to_index(i).and_then(|()| reader.next_frame()) {
            Ok(f) => f.unwrap(),
            Err(vidprep::Error::TableMismatch { .. }) => {
                // The table is rebuilt by decoding: reopen with it, as jobs do.
                tables.distrust(&source);
                reader =
                    vidprep::FrameReader::open_in(&tables, &source, Default::default()).unwrap();
                assert_eq!(reader.table().len(), count);
                reader.seek_to_index(i).unwrap();
                reader.next_frame().unwrap().unwrap()
            }
            Err(e) => panic!("frame {i}: {e}"),
        };
        assert_eq!(frame.index, i);
        let got = support::packed(&frame);
        if got.data != reference[i].data && !frame.damaged {
            bad.push((i, oracle::psnr(&got, &reference[i])));
        }
    }
    assert!(
        bad.is_empty(),
        "frames differing from ffmpeg's sequential decode without being marked damaged: {bad:?}"
    );
}

#[test]
fn theora_with_lost_pages_seeks_give_ffmpegs_frames() {
    let dir = tempfile::tempdir().unwrap();
    assert_seeks_give_ffmpegs_frames(&damaged_theora(dir.path(), Damage::LostPages));
}

#[test]
fn unreadable_theora_seeks_give_ffmpegs_frames() {
    let dir = tempfile::tempdir().unwrap();
    assert_seeks_give_ffmpegs_frames(&damaged_theora(dir.path(), Damage::Unreadable));
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn unreadable_theora_has_one_frame_count_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let src = damaged_theora(dir.path(), Damage::Unreadable);
    let count = oracle::count_frames(&src) as usize;
    assert!(
        (100..900).contains(&count),
        "the damage should end the file early for ffprobe (it decodes {count} of 960 frames)"
    );
    // probe, from packets and by decoding
    for extra in [&[][..], &["--count-frames"][..]] {
        let out = vidprep()
            .args(["probe", "--json"])
            .args(extra)
            .arg(&src)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out);
        assert_eq!(
            v["video"]["frames"].as_u64(),
            Some(count as u64),
            "probe {extra:?}"
        );
        assert_eq!(
            v["video"]["damage"]["unreadable"]["after_frame"].as_u64(),
            Some(count as u64),
            "probe {extra:?} reports where the file stops being readable: {}",
            v["video"]["damage"]
        );
    }
    // cut: the last 40 frames are ffmpeg's (frame codes and pixels), the sidecar says why the
    // video ends there
    let clip = dir.path().join("clip.mp4");
    vidprep()
        .args(["cut"])
        .arg(&src)
        .args(["--start", &(count - 40).to_string(), "-o"])
        .arg(&clip)
        .args(["--crf", "10", "--preset", "ultrafast"])
        .assert()
        .success();
    let reference = oracle::decode_frames(&src, PixFmt::Yuv420p, None);
    let ours = oracle::decode_frames(&clip, PixFmt::Yuv420p, None);
    assert_eq!(ours.len(), 40);
    for (k, frame) in ours.iter().enumerate() {
        let i = count - 40 + k;
        assert_eq!(frame.code(), reference[i].code(), "clip frame {k}");
        let p = oracle::psnr(frame, &reference[i]);
        assert!(
            p >= 40.0,
            "clip frame {k} (source {i}): {p:.1} dB against ffmpeg"
        );
    }
    let sc = support::sidecar(&clip);
    assert_eq!(
        sc["sources"][0]["damage"]["unreadable"]["after_frame"].as_u64(),
        Some(count as u64)
    );
    assert!(
        sc["warnings"]
            .to_string()
            .contains("cannot be read after frame"),
        "{}",
        sc["warnings"]
    );
    // export frames samples over the same count
    let frames = dir.path().join("frames");
    vidprep()
        .args(["export", "frames"])
        .arg(&src)
        .arg("--out-dir")
        .arg(&frames)
        .args(["--count", "8"])
        .assert()
        .success();
    let j = frames_json(&frames);
    assert_eq!(j["total_frames"].as_u64(), Some(count as u64));
    // detect works and proposes spans within it
    let proposals = dir.path().join("p.jsonl");
    vidprep()
        .arg("detect")
        .arg(&src)
        .arg("-o")
        .arg(&proposals)
        .assert()
        .success();
    let text = std::fs::read_to_string(&proposals).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        last["span"]["end"].as_str(),
        Some(count.to_string().as_str())
    );
    // --strict refuses the damaged file, naming the damage
    let out = vidprep()
        .arg("cut")
        .arg(&src)
        .args(["--strict", "-o"])
        .arg(dir.path().join("strict.mp4"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be read after frame"), "{err}");
}

#[test]
fn theora_with_lost_pages_lists_the_frames_it_damages() {
    let dir = tempfile::tempdir().unwrap();
    let src = damaged_theora(dir.path(), Damage::LostPages);
    let whole = oracle::decode_frames(&dir.path().join("whole.ogv"), PixFmt::Yuv420p, None);
    let reference = oracle::decode_frames(&src, PixFmt::Yuv420p, None);
    let out = vidprep()
        .args(["probe", "--json"])
        .arg(&src)
        .output()
        .unwrap();
    let v = json_of(&out);
    assert_eq!(v["video"]["frames"].as_u64(), Some(reference.len() as u64));
    let lost = v["video"]["damage"]["lost_packets"].as_array().cloned();
    let lost = lost.unwrap_or_else(|| panic!("no lost packets in {}", v["video"]["damage"]));
    let suspect: Vec<(usize, usize)> = lost
        .iter()
        .map(|l| {
            let r = &l["suspect_frames"];
            (
                r[0].as_u64().unwrap() as usize,
                r[1].as_u64().unwrap() as usize,
            )
        })
        .collect();
    let is_suspect = |i: usize| suspect.iter().any(|&(a, b)| (a..b).contains(&i));
    // A frame is damaged when it is not, pixel for pixel, the undamaged file's frame of the
    // number painted in it: every such frame is listed.
    let damaged: Vec<usize> = (0..reference.len())
        .filter(|&i| {
            let f = &reference[i];
            f.code()
                .is_none_or(|c| whole.get(c as usize).is_none_or(|w| w.data != f.data))
        })
        .collect();
    assert!(!damaged.is_empty(), "the damage shows in ffmpeg's decode");
    let unlisted: Vec<usize> = damaged
        .iter()
        .copied()
        .filter(|&i| !is_suspect(i))
        .collect();
    assert!(
        unlisted.is_empty(),
        "damaged but not listed: {unlisted:?} (listed: {suspect:?})"
    );
    // A cut across the first damage: ffmpeg's frames, the suspect ones in damaged_frames.
    let (a, b) = suspect[0];
    let (start, end) = (a.saturating_sub(5), (b + 5).min(reference.len()));
    let clip = dir.path().join("clip.mp4");
    vidprep()
        .arg("cut")
        .arg(&src)
        .args(["--start", &start.to_string(), "--end", &end.to_string()])
        .args(["--crf", "10", "--preset", "ultrafast", "-o"])
        .arg(&clip)
        .assert()
        .success();
    let ours = oracle::decode_frames(&clip, PixFmt::Yuv420p, None);
    assert_eq!(ours.len(), end - start);
    for (k, f) in ours.iter().enumerate() {
        let p = oracle::psnr(f, &reference[start + k]);
        assert!(
            p >= 40.0,
            "clip frame {k}: {p:.1} dB against ffmpeg's frame {}",
            start + k
        );
    }
    let sc = support::sidecar(&clip);
    let listed: Vec<usize> = sc["damaged_frames"]
        .as_array()
        .unwrap_or_else(|| panic!("no damaged_frames in the sidecar"))
        .iter()
        .map(|d| d["source_frame"].as_u64().unwrap() as usize)
        .collect();
    assert_eq!(listed, (a..b).collect::<Vec<_>>());
}
