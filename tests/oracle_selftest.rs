//! Self-test of the test toolkit in `tests/common/` (generator + oracle):
//! every synthetic variant is generated small and checked with ffprobe /
//! ffmpeg, and the code reader, MD5 and PSNR are cross-checked against
//! ffmpeg, so vidprep's end-to-end tests can trust them. Does not use vidprep.

use crate::common;

use common::code::{self, paint_code, read_code, CodeGeom};
use common::md5::md5_hex;
use common::oracle::{self, DecodeOpts, PixFmt};
use common::synth::{AudioCodec, Codec, Corruption, Source, SynthVideo};
use std::path::Path;

fn tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("vidprep-selftest")
        .tempdir()
        .expect("tempdir")
}

fn seq(n: u32) -> Vec<u32> {
    (0..n).collect()
}

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// Area-average downscale of a packed luma plane (like `scale=flags=area`).
fn downscale(src: &[u8], w: usize, h: usize, nw: usize, nh: usize) -> Vec<u8> {
    let (sx, sy) = (w as f64 / nw as f64, h as f64 / nh as f64);
    let mut out = vec![0u8; nw * nh];
    for y in 0..nh {
        for x in 0..nw {
            let (x0, x1) = (x as f64 * sx, (x + 1) as f64 * sx);
            let (y0, y1) = (y as f64 * sy, (y + 1) as f64 * sy);
            let (mut acc, mut wsum) = (0.0, 0.0);
            for yy in y0.floor() as usize..(y1.ceil() as usize).min(h) {
                let wy = (y1.min(yy as f64 + 1.0) - y0.max(yy as f64)).max(0.0);
                for xx in x0.floor() as usize..(x1.ceil() as usize).min(w) {
                    let wx = (x1.min(xx as f64 + 1.0) - x0.max(xx as f64)).max(0.0);
                    acc += src[yy * w + xx] as f64 * wx * wy;
                    wsum += wx * wy;
                }
            }
            out[y * nw + x] = (acc / wsum).round() as u8;
        }
    }
    out
}

fn noise_plane(w: usize, h: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    (0..w * h).map(|_| (xorshift(&mut s) >> 24) as u8).collect()
}

// ------------------------------------------------------------ pure Rust

#[test]
fn md5_known_vectors() {
    assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
    assert_eq!(md5_hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    assert_eq!(
        md5_hex(b"The quick brown fox jumps over the lazy dog"),
        "9e107d9d372bb6826bd81d3542a419d6"
    );
    assert_eq!(
        md5_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
        "8215ef0796a20bcaaae116d3876c664a"
    );
    assert_eq!(md5_hex(&[b'a'; 1000]), "cabe45dcc9ae5b66ba86600cca6b8ba8");
}

#[test]
fn code_layout_is_consistent() {
    let mut data = Vec::new();
    let mut check = Vec::new();
    let mut markers = 0;
    for r in 0..code::ROWS {
        for c in 0..code::COLS {
            match code::cell_role(r, c) {
                code::Cell::Marker(_) => markers += 1,
                code::Cell::Data(b) => data.push(b),
                code::Cell::Check(b) => check.push(b),
            }
        }
    }
    assert_eq!(markers, 6);
    assert_eq!(data, (0..14).rev().collect::<Vec<_>>());
    assert_eq!(check, vec![3, 2, 1, 0]);
    // every single data-bit flip changes the check nibble
    for n in [0u32, 1, 77, 4095, 16383] {
        for b in 0..code::DATA_BITS {
            assert_ne!(
                code::check_nibble(n),
                code::check_nibble(n ^ (1 << b)),
                "n={n} bit={b}"
            );
        }
    }
}

#[test]
fn code_paint_read_roundtrip_and_scaled() {
    let (w, h, stride) = (200usize, 100usize, 208usize);
    for (i, n) in [0u32, 1, 2, 3, 100, 255, 256, 1000, 4095, 4096, 9999, 16383]
        .into_iter()
        .enumerate()
    {
        let mut buf = noise_plane(stride, h, 99 + i as u64);
        paint_code(&mut buf, w, h, stride, n, 16, 16, 235);
        assert_eq!(read_code(&buf, w, h, stride), Some(n), "unscaled n={n}");
        assert_eq!(
            code::read_code_geom(&buf, w, h, stride, &CodeGeom::unscaled(16)),
            Some(n)
        );
        // packed copy for downscaling
        let packed: Vec<u8> = (0..h)
            .flat_map(|y| buf[y * stride..y * stride + w].to_vec())
            .collect();
        for (nw, nh) in [
            (100, 50),
            (60, 30),
            (50, 25),
            (40, 20),
            (100, 30),
            (64, 50),
            (150, 75),
        ] {
            let s = downscale(&packed, w, h, nw, nh);
            assert_eq!(
                read_code(&s, nw, nh, nw),
                Some(n),
                "n={n} scaled to {nw}x{nh}"
            );
        }
        // full-range values too
        let mut full = noise_plane(w, h, 7 + i as u64);
        paint_code(&mut full, w, h, w, n, 8, 0, 255);
        assert_eq!(
            read_code(&full, w, h, w),
            Some(n),
            "block 8, full range, n={n}"
        );
    }
}

#[test]
fn code_rejects_garbage() {
    let (w, h) = (160usize, 120usize);
    for v in [0u8, 16, 128, 235, 255] {
        assert_eq!(read_code(&vec![v; w * h], w, h, w), None, "uniform {v}");
    }
    for seed in 1..200u64 {
        assert_eq!(
            read_code(&noise_plane(w, h, seed), w, h, w),
            None,
            "noise seed {seed}"
        );
    }
    // coarse blocky noise (looks like a code to a naive reader)
    for seed in 1..200u64 {
        let mut s = seed;
        let cells: Vec<u8> = (0..(w / 16 + 1) * (h / 16 + 1))
            .map(|_| if xorshift(&mut s) & 1 == 1 { 235 } else { 16 })
            .collect();
        let buf: Vec<u8> = (0..w * h)
            .map(|i| cells[(i / w / 16) * (w / 16 + 1) + (i % w) / 16])
            .collect();
        if let Some(n) = read_code(&buf, w, h, w) {
            // only acceptable if it is exactly a valid code picture
            let mut painted = buf.clone();
            paint_code(&mut painted, w, h, w, n, 16, 16, 235);
            assert_eq!(painted, buf, "blocky noise seed {seed} misread as {n}");
        }
    }
    // any single cell flipped is rejected
    let n = 1234;
    for r in 0..code::ROWS {
        for c in 0..code::COLS {
            let mut buf = vec![90u8; w * h];
            paint_code(&mut buf, w, h, w, n, 16, 16, 235);
            for y in r as usize * 16..(r as usize + 1) * 16 {
                for x in c as usize * 16..(c as usize + 1) * 16 {
                    buf[y * w + x] = 251 - buf[y * w + x];
                }
            }
            assert_eq!(read_code(&buf, w, h, w), None, "cell ({r},{c}) flipped");
        }
    }
    // mid-grey cell is rejected rather than guessed
    let mut buf = vec![0u8; w * h];
    paint_code(&mut buf, w, h, w, n, 16, 16, 235);
    for y in 16..32 {
        for x in 32..48 {
            buf[y * w + x] = 128;
        }
    }
    assert_eq!(read_code(&buf, w, h, w), None);
}

// ------------------------------------------------------------ generated media

fn assert_codes(path: &Path, n: u32) {
    assert_eq!(oracle::frame_codes(path), seq(n), "codes of {path:?}");
}

#[test]
fn cfr_h264_mp4_counts_pts_codes_md5_psnr() {
    let d = tmp();
    let path = d.path().join("cfr.mp4");
    let info = SynthVideo::new(160, 120).frames(48).write(&path);
    assert_eq!(info.frames, 48);
    let s = oracle::video_stream(&path);
    assert_eq!(s["codec_name"], "h264");
    assert_eq!(s["pix_fmt"], "yuv420p");
    assert_eq!(oracle::dimensions(&path), (160, 120));
    assert_eq!(oracle::count_frames(&path), 48);
    assert_eq!(oracle::header_frame_count(&path), Some(48));
    assert_eq!(oracle::time_base(&path), (1, 12800));
    assert_eq!(oracle::start_time(&path), Some(0.0));
    let pts = oracle::frame_pts(&path);
    assert_eq!(pts.len(), 48);
    for (i, t) in pts.iter().enumerate() {
        assert!((t - i as f64 * 0.04).abs() < 1e-9, "pts[{i}] = {t}");
        assert!((t - info.times[i]).abs() < 1e-9);
    }
    let frames = oracle::decode_frames(&path, PixFmt::Gray, None);
    assert_eq!(frames.len(), 48);
    let codes: Vec<u32> = frames.iter().map(|f| f.code().expect("code")).collect();
    assert_eq!(codes, seq(48));
    // decode_frame_at is the same frame
    let f17 = oracle::decode_frame_at(&path, 17, PixFmt::Gray);
    assert_eq!(f17.code(), Some(17));
    assert_eq!(f17, frames[17]);
    // our MD5 of the raw frames equals ffmpeg's framemd5
    let ff = oracle::framemd5(&path, &DecodeOpts::new(PixFmt::Gray));
    let ours: Vec<String> = frames.iter().map(|f| f.md5()).collect();
    assert_eq!(ff, ours);
    // PSNR sanity
    assert!(oracle::psnr(&frames[3], &frames[3]).is_infinite());
    let p = oracle::psnr(&frames[3], &frames[20]);
    assert!(p.is_finite() && p < 40.0, "different frames psnr {p}");
    // yuv420p and rgb24 decodes carry the code too
    let y = oracle::decode_frame_at(&path, 33, PixFmt::Yuv420p);
    assert_eq!(y.data.len(), 160 * 120 * 3 / 2);
    assert_eq!(y.code(), Some(33));
    assert_eq!(
        oracle::decode_frame_at(&path, 34, PixFmt::Rgb24).code(),
        Some(34)
    );
    // a still image written by ffmpeg reads back through the same oracle
    let png = d.path().join("f21.png");
    let src = common::cmd::p(&path);
    let dst = common::cmd::p(&png);
    let args = [
        "-v",
        "error",
        "-i",
        &src,
        "-vf",
        "select='eq(n,21)'",
        "-frames:v",
        "1",
        &dst,
    ];
    common::cmd::ffmpeg(&args).unwrap_or_else(|e| panic!("{e}"));
    let img = oracle::decode_image(&png, PixFmt::Rgb24);
    assert_eq!((img.width, img.height), (160, 120));
    assert_eq!(img.code(), Some(21));
    assert!(oracle::psnr(&img, &oracle::decode_frame_at(&path, 21, PixFmt::Rgb24)) > 45.0);
}

#[test]
#[should_panic(expected = "expected frame 99")]
fn decode_frame_at_past_end_panics() {
    let info = SynthVideo::new(160, 120).frames(12).cached();
    oracle::decode_frame_at(&info.path, 99, PixFmt::Gray);
}

#[test]
fn psnr_agrees_with_ffmpeg_psnr_filter() {
    let d = tmp();
    let lossless = d.path().join("ref.mkv");
    let lossy = d.path().join("lossy.mp4");
    SynthVideo::new(160, 120)
        .frames(10)
        .codec(Codec::Ffv1)
        .write(&lossless);
    SynthVideo::new(160, 120)
        .frames(10)
        .quality(38)
        .write(&lossy);
    let a = oracle::decode_frames(&lossless, PixFmt::Yuv420p, None);
    let b = oracle::decode_frames(&lossy, PixFmt::Yuv420p, None);
    let ff = oracle::ffmpeg_psnr_frames(&lossy, &lossless);
    assert_eq!(ff.len(), 10);
    for (i, st) in ff.iter().enumerate() {
        let ours = oracle::psnr(&b[i], &a[i]);
        let planes = oracle::psnr_planes(&b[i], &a[i]);
        assert!(
            (ours - st.psnr_avg).abs() < 0.011,
            "frame {i}: ours {ours} ffmpeg {}",
            st.psnr_avg
        );
        for (o, f) in planes.iter().zip([st.psnr_y, st.psnr_u, st.psnr_v]) {
            assert!(
                (o - f).abs() < 0.011,
                "frame {i}: plane ours {o} ffmpeg {f}"
            );
        }
        assert!(ours > 20.0 && ours < 60.0, "lossy psnr {ours}");
    }
    // ffv1 is lossless: identical to itself through the filter
    let same = oracle::ffmpeg_psnr_frames(&lossless, &lossless);
    assert!(same.iter().all(|s| s.psnr_avg.is_infinite()));
}

#[test]
fn bframes_long_gop() {
    let d = tmp();
    for ext in ["mp4", "mkv", "ts"] {
        let path = d.path().join(format!("bf.{ext}"));
        SynthVideo::new(160, 120)
            .frames(120)
            .gop(250)
            .bframes(3)
            .write(&path);
        assert_eq!(oracle::count_frames(&path), 120, "{ext}");
        let ft = oracle::frame_times(&path);
        assert_eq!(ft.frames.len(), 120);
        let b = ft.frames.iter().filter(|f| f.pict_type == "B").count();
        let k: Vec<usize> = ft
            .frames
            .iter()
            .enumerate()
            .filter(|(_, f)| f.key_frame)
            .map(|(i, _)| i)
            .collect();
        assert!(b >= 30, "{ext}: only {b} B-frames");
        assert_eq!(k, vec![0], "{ext}: key frames");
        let t: Vec<f64> = ft.seconds().into_iter().map(Option::unwrap).collect();
        for i in 1..t.len() {
            assert!(
                (t[i] - t[i - 1] - 0.04).abs() < 1e-4,
                "{ext}: pts step at {i}: {}",
                t[i] - t[i - 1]
            );
        }
        assert!(
            oracle::video_stream(&path)["has_b_frames"]
                .as_i64()
                .unwrap_or(0)
                > 0,
            "{ext}"
        );
        assert_codes(&path, 120);
    }
}

#[test]
fn vfr_pts_follow_pattern() {
    let d = tmp();
    let pattern = [40u32, 40, 80, 20, 120];
    for ext in ["mp4", "mkv", "mov", "ts"] {
        let path = d.path().join(format!("vfr.{ext}"));
        let info = SynthVideo::new(160, 120)
            .frames(30)
            .vfr(&pattern)
            .bframes(2)
            .write(&path);
        // Every designed frame is in the file as a packet.
        let packet_pts = packet_pts_ms(&path);
        assert_eq!(packet_pts.len(), 30, "{ext}: packets");
        // What the file presents: all 30 frames, or (MP4/MOV muxed by FFmpeg 4.3 or 7.1) all
        // but the last. Those muxers give the last sample no duration when the encoder's packets
        // carry none (setpts leaves it unknown), and write an edit list ending at the last
        // frame's pts, so the last frame lies in the file but outside its presentation; 5.1 and
        // 9.0 give it the previous sample's duration. ffprobe's frame list is the truth either
        // way (vidprep follows it too); the cut is allowed only there and only for the last frame.
        let presented = oracle::count_frames(&path) as usize;
        let want_frames = if presented == 29 && (ext == "mp4" || ext == "mov") {
            let last_designed = (info.times[29] * 1000.0).round() as i64;
            assert_eq!(
                packet_pts.iter().max().copied(),
                Some(last_designed),
                "{ext}: only the last frame may fall outside the edit list"
            );
            29
        } else {
            assert_eq!(presented, 30, "{ext}: presented frames");
            30
        };
        if ext != "ts" {
            assert_eq!(oracle::time_base(&path), (1, 1000), "{ext}");
            // exact integer milliseconds
            let ft = oracle::frame_times(&path);
            let ms: Vec<i64> = ft
                .frames
                .iter()
                .map(|f| f.best_effort.or(f.pts).unwrap())
                .collect();
            let want: Vec<i64> = info.times[..want_frames]
                .iter()
                .map(|t| (t * 1000.0).round() as i64)
                .collect();
            assert_eq!(ms, want, "{ext}: pts in ms");
        }
        let pts = oracle::frame_pts(&path);
        let steps: Vec<i64> = pts
            .windows(2)
            .map(|w| ((w[1] - w[0]) * 1000.0).round() as i64)
            .collect();
        let want: Vec<i64> = (0..want_frames - 1)
            .map(|i| pattern[i % 5] as i64)
            .collect();
        assert_eq!(steps, want, "{ext}: frame durations in ms");
        let c = oracle::decode_check(&path);
        assert!(c.is_clean(), "{ext}: {c:?}");
        assert_codes(&path, want_frames as u32);
    }
}

/// Every video packet's pts in milliseconds (ffprobe), in file order.
fn packet_pts_ms(path: &Path) -> Vec<i64> {
    let out = common::cmd::ffprobe(&[
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-show_entries",
        "packet=pts_time",
        "-of",
        "csv=p=0",
        path.to_str().unwrap(),
    ])
    .expect("ffprobe");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(',').parse::<f64>().ok())
        .map(|t| (t * 1000.0).round() as i64)
        .collect()
}

#[test]
fn start_offset_variants() {
    let d = tmp();
    // (ext, offset, expected start_time)
    for (ext, off, want) in [
        ("mp4", Some(10.0), 10.0),
        ("mov", Some(3.0), 3.0),
        ("mkv", Some(2.5), 2.5),
        ("ts", Some(10.0), 11.4),
        ("ts", None, 1.4),
    ] {
        let path = d
            .path()
            .join(format!("off-{ext}-{}.{ext}", off.unwrap_or(0.0)));
        let mut b = SynthVideo::new(160, 120).frames(25);
        if let Some(o) = off {
            b = b.start_offset(o);
        }
        b.write(&path);
        let st = oracle::start_time(&path).expect("start_time");
        assert!(
            (st - want).abs() < 1e-6,
            "{ext} offset {off:?}: start_time {st}, want {want}"
        );
        let pts = oracle::frame_pts(&path);
        assert!((pts[0] - want).abs() < 1e-6, "{ext}: first pts {}", pts[0]);
        assert!((pts[24] - pts[0] - 0.96).abs() < 1e-4);
        assert_codes(&path, 25);
    }
    // AVI cannot express it: the offset becomes 250 empty leading chunks.
    let path = d.path().join("off.avi");
    SynthVideo::new(160, 120)
        .frames(25)
        .codec(Codec::Mpeg4)
        .start_offset(10.0)
        .write(&path);
    assert_eq!(oracle::start_time(&path), Some(0.0));
    assert_eq!(oracle::count_frames(&path), 25);
}

#[test]
fn odd_sizes() {
    let d = tmp();
    for (codec, ext, pix) in [
        (Codec::H264, "mp4", "yuv444p"),
        (Codec::Mpeg4, "avi", "yuv420p"),
        (Codec::Ffv1, "mkv", "yuv420p"),
        (Codec::Vp9, "webm", "yuv420p"),
    ] {
        let path = d.path().join(format!("odd.{ext}"));
        SynthVideo::new(321, 241)
            .frames(12)
            .codec(codec)
            .write(&path);
        assert_eq!(oracle::dimensions(&path), (321, 241), "{codec:?}");
        assert_eq!(oracle::video_stream(&path)["pix_fmt"], pix, "{codec:?}");
        assert_codes(&path, 12);
        let y = oracle::decode_frame_at(&path, 5, PixFmt::Yuv420p);
        assert_eq!(y.data.len(), 321 * 241 + 2 * 161 * 121);
        assert_eq!(y.code(), Some(5));
    }
}

#[test]
fn rotation_metadata() {
    let d = tmp();
    for (ext, deg) in [("mp4", 90), ("mov", 270), ("mp4", 180)] {
        let path = d.path().join(format!("rot{deg}.{ext}"));
        SynthVideo::new(160, 120)
            .frames(12)
            .rotation(deg)
            .write(&path);
        let s = oracle::video_stream(&path);
        assert!(
            s["side_data_list"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x["side_data_type"] == "Display Matrix")),
            "{ext} {deg}: no display matrix: {s}"
        );
        let r = oracle::rotation(&path).expect("rotation");
        // ffprobe 5.1 prints 90 / -180 / -90 for rotate=90 / 180 / 270
        let want = match deg {
            90 => 90.0,
            180 => -180.0,
            _ => -90.0,
        };
        assert_eq!(r, want, "{ext} {deg}");
        assert_eq!(oracle::dimensions(&path), (160, 120));
        // without autorotation the coded frames read directly
        let raw = oracle::frame_codes_opts(&path, &DecodeOpts::new(PixFmt::Gray).autorotate(false));
        assert_eq!(
            raw,
            seq(12).into_iter().map(Some).collect::<Vec<_>>(),
            "{ext} {deg}"
        );
        // with autorotation (default) the frames come out as displayed
        let up = oracle::decode_frames(&path, PixFmt::Gray, None);
        let dims = if deg % 180 == 90 {
            (120, 160)
        } else {
            (160, 120)
        };
        assert_eq!((up[0].width, up[0].height), dims, "{ext} {deg}");
        // ffmpeg 5.1 displays a `rotate=deg` file turned `deg` degrees
        // counter-clockwise (ffprobe's `rotation` sign convention): turning
        // the displayed frame `deg` clockwise restores the coded picture.
        let coded =
            oracle::decode_frames_opts(&path, &DecodeOpts::new(PixFmt::Gray).autorotate(false));
        for (i, f) in up.iter().enumerate() {
            assert_eq!(
                f.rotate_cw(deg).code(),
                Some(i as u32),
                "{ext} {deg} frame {i}"
            );
            assert_eq!(
                f.rotate_cw(deg),
                coded[i],
                "{ext} {deg} frame {i}: rotation is not lossless"
            );
            assert_eq!(f.code_any_orientation(), Some((i as u32, deg)));
        }
        let one = oracle::decode_frame_at(&path, 7, PixFmt::Gray);
        assert_eq!(one, up[7]);
    }
}

#[test]
fn audio_track() {
    let d = tmp();
    for (ext, codec, acodec, want) in [
        ("mp4", Codec::H264, None, "aac"),
        ("mkv", Codec::H264, Some(AudioCodec::Mp3), "mp3"),
        ("avi", Codec::Mpeg4, None, "mp3"),
        ("mov", Codec::H264, Some(AudioCodec::Pcm), "pcm_s16le"),
    ] {
        let path = d.path().join(format!("audio.{ext}"));
        let mut b = SynthVideo::new(160, 120).frames(50).codec(codec);
        b = match acodec {
            Some(c) => b.audio_tone_codec(440.0, c),
            None => b.audio_tone(440.0),
        };
        b.write(&path);
        let pr = oracle::probe(&path);
        let a = oracle::stream(&pr, "audio").unwrap_or_else(|| panic!("{ext}: no audio: {pr}"));
        assert_eq!(a["codec_name"], want, "{ext}");
        assert_eq!(a["sample_rate"], "48000");
        let dur = oracle::num(&pr["format"]["duration"]).expect("duration");
        assert!((dur - 2.0).abs() < 0.15, "{ext}: duration {dur}");
        assert_eq!(oracle::count_frames(&path), 50);
        assert!(
            oracle::decode_check(&path).is_clean(),
            "{ext}: {:?}",
            oracle::decode_check(&path)
        );
        assert_codes(&path, 50);
    }
}

#[test]
fn corrupt_files_make_ffmpeg_complain() {
    let d = tmp();
    let clean = d.path().join("clean.mp4");
    SynthVideo::new(160, 120).frames(96).write(&clean);
    assert!(oracle::decode_check(&clean).is_clean());

    let garbage = d.path().join("garbage.mp4");
    SynthVideo::new(160, 120)
        .frames(96)
        .corrupt(Corruption::Garbage {
            at_fraction: 0.4,
            len_fraction: 0.2,
            seed: 7,
        })
        .write(&garbage);
    let c = oracle::decode_check(&garbage);
    assert!(
        !c.error_lines.is_empty(),
        "garbage: no errors reported: {c:?}"
    );

    let trunc = d.path().join("trunc.mkv");
    SynthVideo::new(160, 120)
        .frames(96)
        .corrupt(Corruption::Truncate { keep_fraction: 0.5 })
        .write(&trunc);
    let c = oracle::decode_check(&trunc);
    assert!(!c.error_lines.is_empty(), "truncated mkv: no errors: {c:?}");
    assert!(oracle::count_frames(&trunc) < 96);

    // mp4 with moov first, cut in half: header keeps all 96 samples
    let cut = d.path().join("cut.mp4");
    SynthVideo::new(160, 120)
        .frames(96)
        .faststart(true)
        .corrupt(Corruption::Truncate { keep_fraction: 0.5 })
        .write(&cut);
    assert_eq!(oracle::header_frame_count(&cut), Some(96));
    let n = oracle::count_frames(&cut);
    assert!(n > 10 && n < 96, "decodable {n}");
    assert!(!oracle::decode_check(&cut).error_lines.is_empty());

    // not a video at all
    let junk = d.path().join("junk.mp4");
    std::fs::write(&junk, vec![0x5au8; 4096]).unwrap();
    let c = oracle::decode_check(&junk);
    assert!(!c.exit_ok && !c.error_lines.is_empty(), "{c:?}");
}

#[test]
fn avi_header_lies_about_frame_count() {
    let d = tmp();
    let path = d.path().join("lie.avi");
    SynthVideo::new(160, 120)
        .frames(40)
        .codec(Codec::Mpeg4)
        .avi_header_frames(250)
        .write(&path);
    assert_eq!(oracle::header_frame_count(&path), Some(250));
    let dur = oracle::num(&oracle::video_stream(&path)["duration"]).unwrap();
    assert!((dur - 10.0).abs() < 1e-6, "header duration {dur}");
    assert_eq!(oracle::count_frames(&path), 40);
    assert!(oracle::decode_check(&path).is_clean());
    assert_codes(&path, 40);
}

#[test]
fn scaled_decodes_still_read() {
    let info = SynthVideo::new(320, 240).frames(20).cached();
    let path = &info.path;
    // (size, swscale flags): uniform, anisotropic, ~3 px blocks, upscaled
    for ((w, h), flags) in [
        ((160, 120), None),
        ((96, 72), Some("area")),
        ((200, 90), Some("bilinear")),
        ((64, 48), None),
        ((64, 48), Some("neighbor")),
        ((400, 300), None),
    ] {
        let mut o = DecodeOpts::new(PixFmt::Gray).size(w, h);
        if let Some(f) = flags {
            o = o.scale_flags(f);
        }
        let codes = oracle::frame_codes_opts(path, &o);
        let want: Vec<Option<u32>> = seq(20).into_iter().map(Some).collect();
        assert_eq!(codes, want, "{w}x{h} {flags:?}");
    }
    let rgb = oracle::decode_frames(path, PixFmt::Rgb24, Some((160, 120)));
    assert_eq!(
        rgb.iter().map(|f| f.code().unwrap()).collect::<Vec<_>>(),
        seq(20)
    );
}

#[test]
fn other_codecs_and_sources() {
    let d = tmp();
    for (codec, ext, src) in [
        (Codec::H265, "mkv", Source::Testsrc2),
        (Codec::Mpeg2, "ts", Source::Testsrc2),
        (Codec::Mjpeg, "avi", Source::Testsrc2),
        (Codec::Vp9, "webm", Source::Testsrc2),
        (Codec::Ffv1, "nut", Source::Testsrc2),
        (Codec::H264, "mkv", Source::Mandelbrot),
        (Codec::H264, "mp4", Source::Named("smptehdbars".into())),
    ] {
        let path = d.path().join(format!("c-{codec:?}.{ext}"));
        SynthVideo::new(160, 120)
            .frames(24)
            .codec(codec)
            .source(src.clone())
            .write(&path);
        assert_eq!(oracle::count_frames(&path), 24, "{codec:?}/{src:?}");
        assert_codes(&path, 24);
    }
    // 10 fps, 1001-based rate, small blocks
    let path = d.path().join("ntsc.mp4");
    SynthVideo::new(160, 120)
        .fps(30000, 1001)
        .frames(30)
        .code_block(8)
        .label(false)
        .write(&path);
    assert_eq!(oracle::video_stream(&path)["r_frame_rate"], "30000/1001");
    assert_codes(&path, 30);
}

#[test]
fn cached_is_reused_and_errors_are_loud() {
    let a = SynthVideo::new(160, 120).frames(6).cached();
    let b = SynthVideo::new(160, 120).frames(6).cached();
    assert_eq!(a.path, b.path);
    assert!(a.path.exists());
    assert_codes(&a.path, 6);
    let c = SynthVideo::new(160, 120).frames(7).cached();
    assert_ne!(a.path, c.path);
    // invalid requests fail with a message, not a silent bad file
    let d = tmp();
    let e = SynthVideo::new(100, 40)
        .try_write(&d.path().join("x.mp4"))
        .unwrap_err();
    assert!(e.contains("too small"), "{e}");
    let e = SynthVideo::new(160, 120)
        .rotation(90)
        .try_write(&d.path().join("x.mkv"))
        .unwrap_err();
    assert!(e.contains("rotation"), "{e}");
    let e = SynthVideo::new(160, 120)
        .extra_args(&["-no_such_option", "1"])
        .try_write(&d.path().join("x.mp4"))
        .unwrap_err();
    assert!(
        e.contains("$ ffmpeg") && e.contains("no_such_option"),
        "{e}"
    );
}
