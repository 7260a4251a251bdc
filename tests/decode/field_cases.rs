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

/// The source frames a clip's sidecar lists in `damaged_frames` (none when absent).
fn listed_damaged(sidecar: &Value) -> Vec<usize> {
    sidecar["damaged_frames"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| d["source_frame"].as_u64().unwrap() as usize)
                .collect()
        })
        .unwrap_or_default()
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

/// YUV whose chroma is not 4:2:0, or deeper than 8 bits, converts to RGB from its own
/// layout, as the ffmpeg CLI does (through the pipeline's 8-bit 4:2:0 a 4:4:4 H.264 PNG was
/// 29.6 dB from ffmpeg's rgb24, values off by up to 83; Indeo 3's 4:1:0 37.8 dB; MJPEG's
/// 4:2:2 44.6 dB).
#[test]
fn non_420_and_deep_yuv_frames_are_ffmpegs_rgb() {
    let cases: [(&str, &[&str]); 8] = [
        (
            "h264_444.mp4",
            &[
                "-c:v",
                "libx264",
                "-pix_fmt",
                "yuv444p",
                "-preset",
                "ultrafast",
            ],
        ),
        (
            "h264_422.mkv",
            &[
                "-c:v",
                "libx264",
                "-pix_fmt",
                "yuv422p",
                "-preset",
                "ultrafast",
            ],
        ),
        ("mjpeg_422.mov", &["-c:v", "mjpeg", "-pix_fmt", "yuvj422p"]),
        ("ffv1_410.mkv", &["-c:v", "ffv1", "-pix_fmt", "yuv410p"]),
        ("ffv1_411.mkv", &["-c:v", "ffv1", "-pix_fmt", "yuv411p"]),
        ("ffv1_440.mkv", &["-c:v", "ffv1", "-pix_fmt", "yuv440p"]),
        (
            "ffv1_420_10.mkv",
            &["-c:v", "ffv1", "-pix_fmt", "yuv420p10le"],
        ),
        (
            "ffv1_444_12.mkv",
            &["-c:v", "ffv1", "-pix_fmt", "yuv444p12le"],
        ),
    ];
    for (name, encode) in cases {
        rgb_case(name, encode);
    }
}

/// The same at a rotation (a display matrix, rotated in RGB as the CLI's autorotation does)
/// and through a resize (`--max-size`: ffmpeg's one bicubic conversion and scale of the
/// source's own layout).
#[test]
fn rotated_and_scaled_444_frames_are_ffmpegs_rgb() {
    let dir = tempfile::tempdir().unwrap();
    let src = make(
        dir.path(),
        "a.mp4",
        &[
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv444p",
            "-preset",
            "ultrafast",
        ],
    );
    let rotated = dir.path().join("r.mp4");
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
    assert_eq!(
        oracle::video_stream(&rotated)["width"].as_u64(),
        Some(160),
        "stored 160x120"
    );
    assert_png_frames_equal_ffmpeg(&rotated, &[], None);
    assert_png_frames_equal_ffmpeg(&src, &["--max-size", "80x80"], Some((80, 60)));
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

/// The CRC of an Ogg page (polynomial 0x04c11db7, not reflected, initial 0).
fn ogg_crc(data: &[u8]) -> u32 {
    let mut crc = 0u32;
    for &b in data {
        crc ^= u32::from(b) << 24;
        for _ in 0..8 {
            crc = if crc & 0x8000_0000 != 0 {
                (crc << 1) ^ 0x04c1_1db7
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// Damages the Theora packets of an Ogg file whose frames are shown at or after `after_s`:
/// about `per_mille` of every 1000 bytes of each packet's payload are changed (its first 4
/// bytes kept: it stays a data packet), and every page's checksum rewritten, so the pages
/// are read and their packets handed to the decoder, which rejects most of the damaged ones
/// (its frames are missing from ffmpeg's decode). A packet's frame is counted back from its
/// page's granule position; the keyframe shift and rate come from the identification header.
fn damage_theora_packets(bytes: &mut [u8], after_s: f64, per_mille: u64) {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut shift, mut fps) = (6u32, 24.0f64);
    let mut pos = 0;
    while pos + 27 <= bytes.len() {
        assert_eq!(&bytes[pos..pos + 4], b"OggS", "an Ogg page at {pos}");
        let granule = i64::from_le_bytes(bytes[pos + 6..pos + 14].try_into().unwrap());
        let segments = bytes[pos + 26] as usize;
        let lacing = bytes[pos + 27..pos + 27 + segments].to_vec();
        let body = pos + 27 + segments;
        let end = body + lacing.iter().map(|&l| l as usize).sum::<usize>();
        let continued = bytes[pos + 5] & 1 != 0;
        if bytes[body..].starts_with(b"\x80theora") {
            let h = &bytes[body..];
            let num = u32::from_be_bytes(h[22..26].try_into().unwrap());
            let den = u32::from_be_bytes(h[26..30].try_into().unwrap());
            fps = f64::from(num) / f64::from(den);
            shift = u32::from((h[40] & 3) << 3 | h[41] >> 5);
        }
        // The packets (pieces of them) on this page: (start, end, completed here).
        let mut pieces = Vec::new();
        let mut start = 0usize;
        let mut at = 0usize;
        for &l in &lacing {
            at += l as usize;
            if l < 255 {
                pieces.push((start, at, true));
                start = at;
            }
        }
        if start < at {
            pieces.push((start, at, false));
        }
        if granule > 0 {
            let last = (granule >> shift) + (granule & ((1 << shift) - 1));
            let completed = pieces.iter().filter(|p| p.2).count() as i64;
            let mut k = 0i64;
            for (n, &(a, b, done)) in pieces.iter().enumerate() {
                let frame = if done {
                    last - (completed - 1 - k)
                } else {
                    last + 1
                };
                k += i64::from(done);
                let starts_packet = n > 0 || !continued;
                let header = starts_packet && bytes[body + a] & 0x80 != 0;
                if header || (frame as f64) / fps < after_s {
                    continue;
                }
                let from = if starts_packet { a + 4 } else { a };
                for i in from..b {
                    if random() % 1000 < per_mille {
                        bytes[body + i] ^= (random() % 255 + 1) as u8;
                    }
                }
            }
        }
        bytes[pos + 22..pos + 26].fill(0);
        let crc = ogg_crc(&bytes[pos..end]);
        bytes[pos + 22..pos + 26].copy_from_slice(&crc.to_le_bytes());
        pos = end;
    }
}

/// A 60 s Theora file (160x120, 24 fps: 1440 frames when whole) whose packets from 0.38 s on
/// are mostly undecodable: ffmpeg decodes about a quarter of its frames.
fn theora_with_undecodable_packets(dir: &Path) -> PathBuf {
    let src = dir.join("whole.ogv");
    cmd::ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=160x120:rate=24:duration=60",
        "-c:v",
        "libtheora",
        "-q:v",
        "5",
        &cmd::p(&src),
    ])
    .unwrap();
    let mut bytes = std::fs::read(&src).unwrap();
    damage_theora_packets(&mut bytes, 0.38, 22);
    let out = dir.join("damaged.ogv");
    std::fs::write(&out, bytes).unwrap();
    out
}

/// Seeks to every 7th frame (and the last) with the library's reader and compares each
/// frame with ffmpeg's sequential decode of the file: byte-equal, or marked damaged.
/// `packets_lie`: the table from packets lists frames that do not decode (found wrong at the
/// first seek, then rebuilt by decoding).
fn assert_seeks_give_ffmpegs_frames(src: &Path, packets_lie: bool) {
    let reference = oracle::decode_frames(src, PixFmt::Yuv420p, None);
    let count = oracle::count_frames(src) as usize;
    assert_eq!(reference.len(), count);
    let tables = vidprep::media::TableCache::new();
    let source = vidprep::media::Source::from(src);
    let mut reader =
        vidprep::media::FrameReader::open_in(&tables, &source, Default::default()).unwrap();
    if !packets_lie {
        assert_eq!(
            reader.table().len(),
            count,
            "the frame table counts what ffprobe decodes"
        );
    }
    let mut bad = Vec::new();
    let targets: Vec<usize> = (0..count).step_by(7).chain([count - 1]).collect();
    for i in targets {
        let frame = match reader.seek_to_index(i).and_then(|()| reader.next_frame()) {
            Ok(f) => f.unwrap(),
            Err(vidprep::Error::TableMismatch { .. }) => {
                // The table is rebuilt by decoding: reopen with it, as jobs do.
                tables.distrust(&source);
                reader = vidprep::media::FrameReader::open_in(&tables, &source, Default::default())
                    .unwrap();
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
    assert_seeks_give_ffmpegs_frames(&damaged_theora(dir.path(), Damage::LostPages), false);
}

#[test]
fn unreadable_theora_seeks_give_ffmpegs_frames() {
    let dir = tempfile::tempdir().unwrap();
    assert_seeks_give_ffmpegs_frames(&damaged_theora(dir.path(), Damage::Unreadable), false);
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
    assert_eq!(last["end"].as_str(), Some(count.to_string().as_str()));
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

// ------------------------------------------------- Theora whose packets mostly do not decode

/// Each command on `theora_with_undecodable_packets` must answer within this (it ran for more
/// than 12 minutes: a seek that landed where it landed before, again and again).
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(120);

#[test]
fn theora_with_undecodable_packets_seeks_give_ffmpegs_frames() {
    let dir = tempfile::tempdir().unwrap();
    let src = theora_with_undecodable_packets(dir.path());
    let count = oracle::count_frames(&src);
    assert!(
        (200..700).contains(&count),
        "about a quarter of the 1440 frames should decode (ffprobe decodes {count})"
    );
    support::within(ANSWER_WITHIN, "seeking in the damaged Theora", move || {
        assert_seeks_give_ffmpegs_frames(&src, true);
        assert_eq!(
            vidprep::media::FrameTable::for_file(&src).unwrap().len(),
            1440,
            "the packets list every frame"
        );
    });
}

/// Every frame of a cut inside the damage is ffmpeg's, or listed as damaged in the sidecar.
#[test]
fn theora_cut_frames_are_ffmpegs_or_listed() {
    let dir = tempfile::tempdir().unwrap();
    let src = theora_with_undecodable_packets(dir.path());
    let count = oracle::count_frames(&src) as usize;
    let reference = oracle::decode_frames(&src, PixFmt::Yuv420p, None);
    let start = count / 2;
    let clip = dir.path().join("clip.mp4");
    vidprep()
        .arg("cut")
        .arg(&src)
        .args([
            "--start",
            &start.to_string(),
            "--end",
            &(start + 60).to_string(),
        ])
        .args(["--crf", "10", "--preset", "ultrafast", "-o"])
        .arg(&clip)
        .timeout(ANSWER_WITHIN)
        .assert()
        .success();
    let sc = support::sidecar(&clip);
    let listed = listed_damaged(&sc);
    let unlike: Vec<usize> = oracle::decode_frames(&clip, PixFmt::Yuv420p, None)
        .iter()
        .enumerate()
        .filter(|&(k, f)| {
            oracle::psnr(f, &reference[start + k]) < 40.0 && !listed.contains(&(start + k))
        })
        .map(|(k, _)| start + k)
        .collect();
    assert!(
        unlike.is_empty(),
        "clip frames unlike ffmpeg's and not listed: {unlike:?}"
    );
}

/// ffmpeg's frame-threaded decode of a stream whose packets do not decode conceals
/// differently from run to run (frame 236 of this file once at 9.4 dB, once at 11.6 dB against
/// another run). vidprep decodes such a stream with one thread: every frame the damage does not
/// list is `ffmpeg -threads 1`'s, byte for byte, on every read; and every frame that any
/// threaded ffmpeg decode gives otherwise is one the damage lists (from the rejected packet up
/// to the keyframe after the next picture).
#[test]
fn damaged_theora_reads_one_way_and_lists_every_frame_threads_change() {
    let dir = tempfile::tempdir().unwrap();
    let src = theora_with_undecodable_packets(dir.path());
    let single = oracle::framemd5(&src, &oracle::DecodeOpts::new(PixFmt::Yuv420p).threads(1));
    // The frames some threaded decode gives otherwise (ffmpeg's own count, 2 and 3 threads,
    // twice each).
    let mut unstable = std::collections::BTreeSet::new();
    for threads in [None, Some(2), Some(3), None, Some(2), Some(3)] {
        let mut opts = oracle::DecodeOpts::new(PixFmt::Yuv420p);
        opts.threads = threads;
        let threaded = oracle::framemd5(&src, &opts);
        assert_eq!(threaded.len(), single.len(), "every decode has one count");
        unstable.extend((0..single.len()).filter(|&i| threaded[i] != single[i]));
    }
    assert!(
        !unstable.is_empty(),
        "the premise: threaded decodes of the damage differ from the single-threaded one"
    );
    let out = vidprep()
        .args(["probe", "--json", "--count-frames"])
        .arg(&src)
        .timeout(ANSWER_WITHIN)
        .output()
        .unwrap();
    let v = json_of(&out);
    let suspect: std::collections::BTreeSet<usize> = v["video"]["damage"]["undecodable_packets"]
        .as_array()
        .expect("undecodable packets listed")
        .iter()
        .flat_map(|p| {
            let r = &p["suspect_frames"];
            r[0].as_u64().unwrap() as usize..r[1].as_u64().unwrap() as usize
        })
        .collect();
    let unlisted: Vec<usize> = unstable.difference(&suspect).copied().collect();
    assert!(
        unlisted.is_empty(),
        "frames a threaded decode changes that the damage does not list: {unlisted:?}"
    );
    // Keyframes after the damage are not suspect: the list is not "everything after".
    assert!(
        suspect.len() < single.len() - 9,
        "{} suspect",
        suspect.len()
    );
    // The library's reads, sequential and by seeks, twice: every frame the damage does not
    // list is ffmpeg -threads 1's. (A listed frame may hold, where the decoder could not write,
    // whatever its reused buffer held: on FFmpeg 9.0 even two `ffmpeg -threads 1` decodes of
    // this file differ there.)
    let count = single.len();
    support::within(ANSWER_WITHIN, "reading the damaged Theora", move || {
        let tables = vidprep::media::TableCache::new();
        let source = vidprep::media::Source::from(src.as_path());
        // (The packets list 1440 frames: the table is rebuilt by decoding, as jobs do when
        // the decoder disagrees with it.)
        tables.distrust(&source);
        for round in 0..2 {
            let mut reader =
                vidprep::media::FrameReader::open_in(&tables, &source, Default::default()).unwrap();
            let read = |reader: &mut vidprep::media::FrameReader, i: usize| {
                reader.seek_to_index(i).and_then(|()| reader.next_frame())
            };
            let first = read(&mut reader, 0).unwrap();
            assert!(first.is_some());
            assert_eq!(reader.table().len(), single.len());
            let mut differ = Vec::new();
            let mut check = |i: usize, f: vidprep::media::Frame| {
                assert_eq!(f.index, i);
                assert!(
                    f.damaged || !suspect.contains(&i),
                    "frame {i}: not marked damaged"
                );
                if !f.damaged && support::packed(&f).md5() != single[i] {
                    differ.push(i);
                }
            };
            // Sequential from frame 1, then by seeks in a scattered order.
            for i in 1..single.len() {
                check(i, reader.next_frame().unwrap().unwrap());
            }
            for i in (0..single.len()).step_by(13).rev() {
                check(i, read(&mut reader, i).unwrap().unwrap());
            }
            assert!(
                differ.is_empty(),
                "round {round}: frames not listed as damaged, unlike ffmpeg -threads 1's: {differ:?}"
            );
        }
    });
    // Two cuts of the same span list the same damaged frames and hold the same pictures in
    // every other frame. (On FFmpeg 5.1 the files are the same bytes; on 9.0 a listed frame may
    // keep a reused buffer's stale rows, see above.)
    let (start, end) = (count / 2, count / 2 + 60);
    let cut = |name: &str| {
        let clip = dir.path().join(name);
        vidprep()
            .arg("cut")
            .arg(dir.path().join("damaged.ogv"))
            .args(["--start", &start.to_string(), "--end", &end.to_string()])
            .args(["--crf", "0", "--preset", "ultrafast", "-o"])
            .arg(&clip)
            .timeout(ANSWER_WITHIN)
            .assert()
            .success();
        let listed = listed_damaged(&support::sidecar(&clip));
        (listed, oracle::decode_frames(&clip, PixFmt::Yuv420p, None))
    };
    let (listed_a, frames_a) = cut("a.mp4");
    let (listed_b, frames_b) = cut("b.mp4");
    assert_eq!(listed_a, listed_b, "two cuts list other damaged frames");
    assert_eq!(frames_a.len(), end - start);
    let unlike: Vec<usize> = (0..frames_a.len())
        .filter(|&k| !listed_a.contains(&(start + k)) && frames_a[k].data != frames_b[k].data)
        .map(|k| start + k)
        .collect();
    assert!(
        unlike.is_empty(),
        "two cuts of one request differ in frames not listed as damaged: {unlike:?}"
    );
}

#[test]
fn theora_with_undecodable_packets_has_one_frame_count_and_answers_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let src = theora_with_undecodable_packets(dir.path());
    let count = oracle::count_frames(&src) as usize;
    let reference = oracle::decode_frames(&src, PixFmt::Yuv420p, None);
    assert_eq!(reference.len(), count);
    // probe --count-frames describes the decode: frame i is the i-th picture it returns;
    // the packets' count is kept under its own name.
    let out = vidprep()
        .args(["probe", "--json", "--count-frames"])
        .arg(&src)
        .timeout(ANSWER_WITHIN)
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
        "probe frames"
    );
    assert_eq!(v["video"]["frames_decoded"].as_u64(), Some(count as u64));
    assert_eq!(v["video"]["frames_listed_by_packets"].as_u64(), Some(1440));
    // export frames --count 8: answers, over the decoded count, with ffmpeg's frames
    let frames = dir.path().join("frames");
    let out = vidprep()
        .args(["export", "frames"])
        .arg(&src)
        .arg("--out-dir")
        .arg(&frames)
        .args(["--count", "8", "--format", "png"])
        .timeout(ANSWER_WITHIN)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "export frames: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let j = frames_json(&frames);
    assert_eq!(j["total_frames"].as_u64(), Some(count as u64));
    assert_eq!(j["frames"].as_array().unwrap().len(), 8);
    // a 60-frame cut after the damage: every frame ffmpeg's, or listed as damaged
    let start = count / 2;
    let clip = dir.path().join("clip.mp4");
    let out = vidprep()
        .arg("cut")
        .arg(&src)
        .args([
            "--start",
            &start.to_string(),
            "--end",
            &(start + 60).to_string(),
        ])
        .args(["--crf", "10", "--preset", "ultrafast", "-o"])
        .arg(&clip)
        .timeout(ANSWER_WITHIN)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sc = support::sidecar(&clip);
    let listed = listed_damaged(&sc);
    let ours = oracle::decode_frames(&clip, PixFmt::Yuv420p, None);
    assert_eq!(ours.len(), 60);
    let unlike: Vec<(usize, String)> = ours
        .iter()
        .enumerate()
        .map(|(k, f)| (start + k, oracle::psnr(f, &reference[start + k])))
        .filter(|&(i, p)| p < 40.0 && !listed.contains(&i))
        .map(|(i, p)| (i, format!("{p:.1} dB")))
        .collect();
    // Known gap (issue 40 item 5, kept open): a frame decoded after the cut's seek whose
    // picture rests on damaged data is concealed from other history than ffmpeg's sequential
    // decode had, and is not listed; which frames, and by how much, varies from run to run
    // (frame 236 at 9.4 and 11.6 dB in two runs). `theora_cut_frames_are_ffmpegs_or_listed`
    // (ignored until it is fixed) asserts it.
    if !unlike.is_empty() {
        eprintln!("known gap: clip frames unlike ffmpeg's and not listed as damaged: {unlike:?}");
    }
    // detect: answers over the same count
    let proposals = dir.path().join("p.jsonl");
    let out = vidprep()
        .arg("detect")
        .arg(&src)
        .arg("-o")
        .arg(&proposals)
        .timeout(ANSWER_WITHIN)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "detect: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&proposals).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    // detect's scan decodes without the deblocking filter, so on a stream this damaged it may
    // lose a frame or two at the end that the plain decode keeps (FFmpeg 9.0: 336 of 338 in
    // one run, all of them in another): it must answer, within the decoded count.
    let end: usize = last["end"].as_str().unwrap().parse().unwrap();
    assert!(
        end <= count && end + count / 20 >= count,
        "detect's last span ends at {end}, the decode has {count} frames"
    );
}

// ------------------------------------------------- MJPEG whose pictures the decoder patches up

/// Packets of `path`'s video stream: (byte position, size), in file order (ffprobe, which
/// prints a packet's fields in its own order: size, then pos).
fn packet_positions(path: &Path) -> Vec<(usize, usize)> {
    let out = cmd::ffprobe(&[
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-show_entries",
        "packet=pos,size",
        "-of",
        "csv=p=0",
        &cmd::p(path),
    ])
    .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut it = l.split(',').map(|v| v.trim().parse::<usize>());
            match (it.next(), it.next()) {
                (Some(Ok(size)), Some(Ok(pos))) => Some((pos, size)),
                _ => None,
            }
        })
        .collect()
}

/// FFmpeg's MJPEG decoder meets a zeroed block, logs "error y=.. x=..", and returns the picture
/// unflagged, the rows it could not decode left as the reused buffer held them (a decode from
/// the start, one after a seek and vidprep's differed there, 20 dB). The damaged pictures are
/// listed: every frame unlike the undamaged file's (the oracle: ffmpeg's decode of both files)
/// is in the cut's `damaged_frames`, and no other; `check` says damaged, not exact.
/// Neighbours: two blocks zeroed in two frames, and a file with none (nothing listed).
#[test]
fn mjpeg_pictures_patched_up_by_the_decoder_are_listed_as_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let whole = make(dir.path(), "whole.mov", &["-c:v", "mjpeg", "-q:v", "5"]);
    let packets = packet_positions(&whole);
    assert_eq!(packets.len(), 20);
    for (name, damaged_packets) in [
        ("one.mov", &[13usize][..]),
        ("two.mov", &[4, 16][..]),
        ("none.mov", &[][..]),
    ] {
        let mut bytes = std::fs::read(&whole).unwrap();
        for &k in damaged_packets {
            let (pos, size) = packets[k];
            let at = pos + size / 2;
            bytes[at..at + 188].fill(0);
        }
        let src = dir.path().join(name);
        std::fs::write(&src, &bytes).unwrap();
        // The oracle: the frames whose pixels differ from the undamaged file's.
        let a = oracle::framemd5(&whole, &DecodeOpts::new(PixFmt::Yuv420p));
        let b = oracle::framemd5(&src, &DecodeOpts::new(PixFmt::Yuv420p));
        assert_eq!(a.len(), b.len(), "{name}: every picture decodes");
        let unlike: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
        assert_eq!(
            unlike, damaged_packets,
            "{name}: the premise (the zeroed frames differ)"
        );
        let clip = dir.path().join(format!("clip_{name}.mp4"));
        vidprep()
            .arg("cut")
            .arg(&src)
            .args(["--crf", "10", "--preset", "ultrafast", "-o"])
            .arg(&clip)
            .assert()
            .success();
        let sc = support::sidecar(&clip);
        let listed = listed_damaged(&sc);
        assert_eq!(listed, unlike, "{name}: damaged_frames");
        let out = vidprep()
            .args(["check", "--json"])
            .arg(&src)
            .output()
            .unwrap();
        let report = json_of(&out);
        let verdict = report["sources"][0]["verdict"]
            .as_str()
            .unwrap()
            .to_string();
        let want = if unlike.is_empty() {
            "exact"
        } else {
            "damaged"
        };
        assert_eq!(verdict, want, "{name}: {report:#}");
    }
}

// ------------------------------------------ timestamps that contradict the pictures' order

/// An MPEG-2 TS whose video timestamps were scaled by 3/2 (`setts=ts=TS*3/2`): the decoder
/// gives its pictures in another order than their timestamps (a P frame stamped before the
/// two B frames given before it). Every plain decode (ffmpeg's, `vidprep check`'s reference)
/// numbers frames as the decoder gives them; the table numbered them by timestamp, so the
/// exported frame 15 was ffmpeg's frame 14 (and the campaign's first run hung on it). The
/// reader should notice the order and number the frames as the decoder gives them.
#[test]
#[ignore = "known gap (issue 42's campaign): frames are numbered by their timestamps; a reader that skips non-reference pictures never sees the decoder's order (the first try, in the full-decode reader only, made commands number such a file two ways)"]
fn timestamps_against_the_decoders_order_number_frames_as_the_decoder_gives_them() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("mpeg2.ts");
    cmd::ffmpeg(&[
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=352x288:rate=25:duration=3",
        "-f",
        "lavfi",
        "-i",
        "sine=duration=3",
        "-c:v",
        "mpeg2video",
        "-bf",
        "2",
        "-c:a",
        "mp2",
        "-shortest",
        &cmd::p(&src),
    ])
    .unwrap();
    let mutant = dir.path().join("m.ts");
    cmd::ffmpeg(&[
        "-v",
        "error",
        "-i",
        &cmd::p(&src),
        "-map",
        "0",
        "-c",
        "copy",
        "-bsf:v",
        "setts=ts=TS*3/2",
        &cmd::p(&mutant),
    ])
    .unwrap();
    // The premise: the decoder's order is not the timestamps' (ffprobe's frames).
    let times = oracle::frame_times(&mutant);
    let pts: Vec<i64> = times.frames.iter().filter_map(|f| f.pts).collect();
    assert!(
        pts.windows(2).any(|w| w[1] < w[0]),
        "the mutant's pictures come out in timestamp order"
    );
    assert_png_frames_equal_ffmpeg(&mutant, &[], None);
    // And the unmutated file, whose order agrees, is read from its packets (no rebuild).
    assert_png_frames_equal_ffmpeg(&src, &[], None);
    let out = vidprep()
        .args(["probe", "--json"])
        .arg(&src)
        .output()
        .unwrap();
    assert_eq!(json_of(&out)["video"]["frame_times_from"], "packets");
}

// ------------------------------------------------- which video stream

/// Two video streams of one size, both marked default, the second with the higher bit rate:
/// the ffmpeg CLI reads the first (most pixels, default counting, first of equals);
/// `av_find_best_stream` ranked by bit rate and vidprep read the second. The corpus's AVIF
/// sequence (AV1 colour and a grey alpha track of the same size) was read as its alpha
/// plane. Neighbours: a larger second stream is chosen (both default), a default one before
/// another (an MP4 whose first track is not marked default gets the mark from the muxer).
#[test]
fn the_video_stream_is_the_one_the_ffmpeg_cli_reads() {
    let dir = tempfile::tempdir().unwrap();
    let two = |name: &str, second: &str, dispositions: [&str; 2]| {
        let out = dir.path().join(name);
        cmd::ffmpeg(&[
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "color=c=gray:size=160x120:rate=10:duration=1",
            "-f",
            "lavfi",
            "-i",
            second,
            "-map",
            "0",
            "-map",
            "1",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-disposition:v:0",
            dispositions[0],
            "-disposition:v:1",
            dispositions[1],
            &cmd::p(&out),
        ])
        .unwrap();
        out
    };
    for (src, want) in [
        (
            two(
                "same_size.mp4",
                "testsrc2=size=160x120:rate=10:duration=1",
                ["default", "default"],
            ),
            0,
        ),
        (
            two(
                "larger.mp4",
                "testsrc2=size=320x240:rate=10:duration=1",
                ["default", "default"],
            ),
            1,
        ),
        (
            two(
                "second_default.mp4",
                "testsrc2=size=160x120:rate=10:duration=1",
                ["0", "default"],
            ),
            1,
        ),
    ] {
        let out = vidprep()
            .args(["probe", "--json"])
            .arg(&src)
            .output()
            .unwrap();
        let v = json_of(&out);
        assert_eq!(v["video"]["stream_index"], want, "{src:?}");
        // The CLI's own choice, without -map: its first frame is the one vidprep reads.
        let cli = cmd::ffmpeg(&[
            "-v",
            "error",
            "-i",
            &cmd::p(&src),
            "-frames:v",
            "1",
            "-f",
            "framemd5",
            "-",
        ])
        .unwrap();
        let mapped = cmd::ffmpeg(&[
            "-v",
            "error",
            "-i",
            &cmd::p(&src),
            "-map",
            &format!("0:{want}"),
            "-frames:v",
            "1",
            "-f",
            "framemd5",
            "-",
        ])
        .unwrap();
        let last = |o: &std::process::Output| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .last()
                .unwrap_or_default()
                .rsplit(',')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        assert_eq!(
            last(&cli),
            last(&mapped),
            "{src:?}: the CLI reads stream {want}"
        );
    }
}

// ------------------------------------------------- WebM whose demuxer drops a damaged block

/// A 6 s VP8 WebM (320x240, 30 fps, a keyframe every 12 frames) damaged the way a flipped bit
/// damages it: one block's track number no longer names a track (the Matroska demuxer drops
/// what it cannot read there, logging "Invalid track number", and reads on: no packet is
/// flagged, the decoder never hears of it, and 172 of the 180 frames decode). Made from
/// ffprobe's packet positions, so it does not depend on the encoder's bytes. (Bytes flipped
/// inside VP8 pictures are left out: FFmpeg's VP8 decoder then reads memory it never wrote,
/// and the pixels change from process to process: FFmpeg 9.0's CLI and library differed.)
fn webm_with_a_dropped_block(dir: &Path) -> PathBuf {
    let src = dir.join("whole.webm");
    cmd::ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=320x240:rate=30:duration=6",
        "-c:v",
        "libvpx",
        "-b:v",
        "600k",
        "-g",
        "12",
        &cmd::p(&src),
    ])
    .unwrap();
    let out = cmd::ffprobe(&[
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-show_entries",
        "packet=pos,size,flags",
        "-of",
        "json",
        &cmd::p(&src),
    ])
    .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // (pos, size, key) of each packet: a Matroska packet's position is its block's track number.
    let packets: Vec<(usize, usize, bool)> = v["packets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["pos"].as_str().unwrap().parse().unwrap(),
                p["size"].as_str().unwrap().parse().unwrap(),
                p["flags"].as_str().unwrap().starts_with('K'),
            )
        })
        .collect();
    assert_eq!(packets.len(), 180);
    let mut bytes = std::fs::read(&src).unwrap();
    let (dropped, _, key) = packets[40];
    assert!(!key);
    assert_eq!(bytes[dropped], 0x81, "block 40's track number is 1");
    bytes[dropped] = 0x85;
    let damaged = dir.join("damaged.webm");
    std::fs::write(&damaged, bytes).unwrap();
    damaged
}

/// The demuxer's word is damage: the frames after the dropped block are listed, the stream is
/// read as the decode from the start reads it (one thread, never from a later keyframe: VP8
/// carries what a damaged picture left across keyframes), and every frame a seek reads is
/// `ffmpeg -threads 1`'s or listed. `vidprep check` (seeks, spans, the sparse reader) says
/// damaged. Before, it said exact and nothing was listed: the frames decoded from the wrong
/// references after the lost data passed as clean.
#[test]
fn a_webm_block_the_demuxer_drops_is_damage_and_reads_like_the_decode_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let src = webm_with_a_dropped_block(dir.path());
    let single = oracle::framemd5(&src, &DecodeOpts::new(PixFmt::Yuv420p).threads(1));
    let table = vidprep::media::FrameTable::for_file(&src).unwrap();
    assert_eq!(table.len(), single.len(), "one frame count");
    let demuxer = &table.damage.demuxer_errors;
    assert!(
        !demuxer.is_empty() && demuxer[0].frame <= 40,
        "the dropped block is damage: {demuxer:?}"
    );
    assert_eq!(table.damage.first_affected_frame(), Some(0));
    let tables = vidprep::media::TableCache::new();
    let source = vidprep::media::Source::from(src.as_path());
    let mut reader =
        vidprep::media::FrameReader::open_in(&tables, &source, Default::default()).unwrap();
    let mut bad = Vec::new();
    let targets: Vec<usize> = (0..single.len())
        .step_by(7)
        .chain([single.len() - 1])
        .collect();
    for &i in targets.iter().rev().chain(targets.iter()) {
        reader.seek_to_index(i).unwrap();
        let frame = reader.next_frame().unwrap().unwrap();
        assert_eq!(frame.index, i);
        let got = support::packed(&frame);
        if got.md5() != single[i] && !frame.damaged {
            bad.push(i);
        }
    }
    assert!(
        bad.is_empty(),
        "frames unlike ffmpeg -threads 1's and not listed as damaged: {bad:?}"
    );
    let out = vidprep().arg("check").arg(&src).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.starts_with("damaged:") && text.contains("demuxer reported"),
        "{text}"
    );
}
