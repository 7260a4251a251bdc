//! Decoding and seeking against the ffmpeg CLI: every frame vidprep decodes must be the frame
//! ffmpeg decodes (same pixels, same order, same timestamps), for constant and variable frame
//! rate, B-frames with a long GOP, non-zero start times, odd sizes and rotated video; and a
//! seek must give exactly the frame a full decode gives.

use crate::common;
use crate::support;

use common::oracle::{self, Frame as OracleFrame, PixFmt};
use common::synth::{Codec, SynthVideo};
use support::packed;
use vidprep::media::{FrameReader, FrameTable};
use vidprep::time::Time;

struct Decoded {
    frames: Vec<OracleFrame>,
    times: Vec<Time>,
    indices: Vec<usize>,
}

fn decode_all(path: &std::path::Path) -> Decoded {
    let reader = FrameReader::open(path).expect("open");
    let mut out = Decoded {
        frames: Vec::new(),
        times: Vec::new(),
        indices: Vec::new(),
    };
    for frame in reader {
        let frame = frame.expect("decode");
        out.frames.push(packed(&frame));
        out.times.push(frame.time);
        out.indices.push(frame.index);
    }
    out
}

/// Full decode equals ffmpeg's: count, pixels (bit-exact for native yuv420p), timestamps.
fn assert_decode_matches_ffmpeg(path: &std::path::Path, exact_pixels: bool) {
    let ours = decode_all(path);
    let theirs = oracle::decode_frames(path, PixFmt::Yuv420p, None);
    assert_eq!(ours.frames.len(), theirs.len(), "{path:?}: frame count");
    assert_eq!(
        ours.frames.len() as u64,
        oracle::count_frames(path),
        "{path:?}: ffprobe count"
    );
    assert_eq!(ours.indices, (0..ours.frames.len()).collect::<Vec<_>>());
    for (i, (a, b)) in ours.frames.iter().zip(&theirs).enumerate() {
        assert_eq!(
            (a.width, a.height),
            (b.width, b.height),
            "{path:?} frame {i}: size"
        );
        if exact_pixels {
            assert_eq!(
                a.md5(),
                b.md5(),
                "{path:?} frame {i}: pixels differ from ffmpeg"
            );
        } else {
            let p = oracle::psnr(a, b);
            assert!(
                p >= 45.0,
                "{path:?} frame {i}: PSNR {p:.2} dB against ffmpeg"
            );
        }
    }
    // Timestamps relative to the first frame, as ffprobe reports them.
    let pts = oracle::frame_pts(path);
    for (i, (ours, theirs)) in ours.times.iter().zip(&pts).enumerate() {
        let expected = theirs - pts[0];
        assert!(
            (ours.as_secs_f64() - expected).abs() < 1e-6,
            "{path:?} frame {i}: time {} vs ffprobe {expected}",
            ours.as_secs_f64()
        );
    }
}

#[test]
fn constant_rate_mp4_decodes_like_ffmpeg() {
    let v = SynthVideo::new(320, 240).frames(60).cached();
    assert_decode_matches_ffmpeg(&v.path, true);
    let ours = decode_all(&v.path);
    let codes: Vec<u32> = ours
        .frames
        .iter()
        .map(|f| f.code().expect("code"))
        .collect();
    assert_eq!(codes, (0..60).collect::<Vec<u32>>());
}

#[test]
fn variable_rate_keeps_exact_timestamps() {
    for ext in ["mp4", "mkv", "ts"] {
        let v = SynthVideo::new(320, 240)
            .frames(40)
            .vfr(&[40, 40, 80, 20, 120])
            .container(ext)
            .cached();
        assert_decode_matches_ffmpeg(&v.path, true);
        let ours = decode_all(&v.path);
        // The designed times: cumulative 40, 40, 80, 20, 120 ms.
        for (i, t) in ours.times.iter().enumerate() {
            assert!(
                (t.as_secs_f64() - v.times[i]).abs() < 1e-6,
                "{ext} frame {i}: {} vs {}",
                t.as_secs_f64(),
                v.times[i]
            );
        }
    }
}

#[test]
fn b_frames_long_gop_and_nonzero_start() {
    let v = SynthVideo::new(320, 240)
        .frames(120)
        .gop(250)
        .bframes(3)
        .start_offset(10.0)
        .cached();
    assert!(oracle::start_time(&v.path).unwrap() > 9.9);
    assert_decode_matches_ffmpeg(&v.path, true);
    let ours = decode_all(&v.path);
    assert_eq!(
        ours.times[0],
        Time::ZERO,
        "times are relative to the stream's first frame"
    );
    let ts = SynthVideo::new(320, 240)
        .frames(60)
        .gop(30)
        .bframes(2)
        .container("ts")
        .cached();
    assert_decode_matches_ffmpeg(&ts.path, true);
}

#[test]
fn odd_sizes_decode() {
    // mpeg4 keeps odd 4:2:0; x264 switches odd sizes to 4:4:4 (converted to 4:2:0 by us).
    let a = SynthVideo::new(321, 241)
        .codec(Codec::Mpeg4)
        .container("avi")
        .frames(30)
        .cached();
    assert_decode_matches_ffmpeg(&a.path, true);
    let b = SynthVideo::new(321, 241).frames(30).cached();
    assert_decode_matches_ffmpeg(&b.path, false);
}

#[test]
fn rotated_video_comes_out_upright_like_ffmpeg_shows_it() {
    for deg in [90, 180, 270] {
        let v = SynthVideo::new(320, 240).frames(12).rotation(deg).cached();
        let ours = decode_all(&v.path);
        let theirs = oracle::decode_frames(&v.path, PixFmt::Yuv420p, None);
        assert_eq!(ours.frames.len(), theirs.len());
        for (a, b) in ours.frames.iter().zip(&theirs) {
            assert_eq!(
                a.md5(),
                b.md5(),
                "rotation {deg}: upright pixels differ from ffmpeg's autorotation"
            );
        }
        let (w, h) = (ours.frames[0].width, ours.frames[0].height);
        if deg == 180 {
            assert_eq!((w, h), (320, 240));
        } else {
            assert_eq!((w, h), (240, 320));
        }
        // Undoing the rotation gives back the coded frames (and their codes).
        let code = ours.frames[5].rotate_cw(deg).code();
        assert_eq!(code, Some(5));
    }
}

/// Every seek target gives the same pixels as the full decode.
fn assert_seeks_match_full_decode(path: &std::path::Path, targets: &[usize]) {
    let full = decode_all(path);
    let mut reader = FrameReader::open(path).unwrap();
    for &i in targets {
        reader.seek_to_index(i).unwrap();
        let f = reader.next_frame().unwrap().expect("frame after seek");
        assert_eq!(f.index, i, "{path:?}: seek to {i}");
        assert_eq!(
            packed(&f).md5(),
            full.frames[i].md5(),
            "{path:?}: seek to {i} gave other pixels"
        );
        assert_eq!(f.time, full.times[i]);
        // And the frame after it continues the sequence.
        if i + 1 < full.frames.len() {
            let g = reader.next_frame().unwrap().unwrap();
            assert_eq!(g.index, i + 1);
            assert_eq!(packed(&g).md5(), full.frames[i + 1].md5());
        }
    }
}

#[test]
fn seeking_to_a_frame_index_is_exact_with_b_frames() {
    let v = SynthVideo::new(320, 240)
        .frames(150)
        .gop(48)
        .bframes(3)
        .cached();
    let table = FrameTable::scan(&v.path).unwrap();
    assert!(table.keyframe_count() >= 3);
    let keys: Vec<usize> = (0..table.len()).filter(|&i| table.entry(i).key).collect();
    let mut targets = vec![149, 0, 1, 47, 48, 49, 100, 2, 95, 96, 97, 148, 50, 51];
    targets.extend(keys.iter().map(|k| k.saturating_sub(1)));
    assert_seeks_match_full_decode(&v.path, &targets);
}

#[test]
fn seeking_is_exact_for_variable_rate_and_offset_starts() {
    let v = SynthVideo::new(320, 240)
        .frames(90)
        .vfr(&[40, 40, 80, 20, 120])
        .gop(20)
        .bframes(2)
        .cached();
    // The last frame ffprobe presents: 89, or 88 where the MP4 muxer (FFmpeg 4.3, 7.1) ends
    // the edit list at the last frame's pts (see oracle_selftest::vfr_pts_follow_pattern).
    let last = oracle::count_frames(&v.path) as usize - 1;
    assert!(last == 89 || last == 88, "{last}");
    assert_seeks_match_full_decode(&v.path, &[last, 3, 40, 19, 20, 21, 60, 0]);
    let ts = SynthVideo::new(320, 240)
        .frames(90)
        .gop(25)
        .bframes(2)
        .container("ts")
        .cached();
    assert_seeks_match_full_decode(&ts.path, &[89, 24, 25, 26, 0, 50]);
    let mkv = SynthVideo::new(320, 240)
        .frames(90)
        .gop(25)
        .bframes(2)
        .container("mkv")
        .start_offset(3.0)
        .cached();
    assert_seeks_match_full_decode(&mkv.path, &[70, 24, 25, 5, 89]);
}

#[test]
fn seeking_to_a_time_gives_the_frame_shown_then() {
    let v = SynthVideo::new(320, 240)
        .frames(60)
        .vfr(&[40, 40, 80, 20, 120])
        .gop(15)
        .cached();
    let full = decode_all(&v.path);
    let mut reader = FrameReader::open(&v.path).unwrap();
    // For each probe time, the expected frame is the last whose ffprobe time is <= t.
    let pts = oracle::frame_pts(&v.path);
    let rel: Vec<f64> = pts.iter().map(|p| p - pts[0]).collect();
    // (Not 299 ms: within a hundredth of the 120 ms interval before frame 5's 300 ms, it is
    // frame 5's time by the time-to-frame rule, docs/annotations.md.)
    for ms in [0i64, 39, 40, 41, 159, 160, 179, 180, 298, 300, 1234, 2000] {
        let t = Time::new(ms, 1000);
        let expected = rel
            .iter()
            .rposition(|&x| x <= ms as f64 / 1000.0 + 1e-9)
            .unwrap();
        let got = reader.seek_to_time(t).unwrap();
        assert_eq!(got, expected, "time {ms} ms");
        let f = reader.next_frame().unwrap().unwrap();
        assert_eq!(f.index, expected);
        assert_eq!(packed(&f).md5(), full.frames[expected].md5());
    }
}

#[test]
fn damaged_video_decodes_as_far_as_ffmpeg_and_the_table_learns_the_damage() {
    use common::synth::Corruption;
    let v = SynthVideo::new(320, 240)
        .frames(96)
        .corrupt(Corruption::Garbage {
            at_fraction: 0.3,
            len_fraction: 0.2,
            seed: 7,
        })
        .cached();
    // A reader with the table from packets meets the damage and says the table is wrong
    // (never a panic, never a silently wrong frame)...
    let tables = vidprep::media::TableCache::new();
    let source = vidprep::media::Source::from(v.path.as_path());
    let first: Result<Vec<_>, _> = FrameReader::open_in(&tables, &source, Default::default())
        .and_then(|r| r.collect::<Result<Vec<_>, _>>());
    if let Err(e) = &first {
        let text = e.to_string();
        assert!(text.contains(&v.path.display().to_string()), "{text}");
        assert!(matches!(e, vidprep::Error::TableMismatch { .. }), "{text}");
        tables.distrust(&source);
    }
    // ...after which the cache builds the file's table by decoding: the frames are the ones
    // ffmpeg decodes, and the damage is known.
    let frames: Vec<_> = FrameReader::open_in(&tables, &source, Default::default())
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    assert_eq!(frames.len() as u64, oracle::count_frames(&v.path));
    let table = tables.table(&source).unwrap();
    assert!(!table.damage.is_empty(), "{:?}", table.damage);
}

/// `Frame::to_rgb` gives the pixels `ffmpeg -i SRC -pix_fmt rgb24` gives: an 8-bit 4:2:0
/// H.264, a 4:4:4 H.264 and an RGB-coded FFV1 (converted from its own picture).
#[test]
fn a_frame_converts_to_the_rgb_ffmpeg_gives() {
    let sources = [
        SynthVideo::new(320, 240).frames(6).cached(),
        SynthVideo::new(320, 240)
            .frames(6)
            .pix_fmt("yuv444p")
            .cached(),
        SynthVideo::new(160, 120)
            .frames(6)
            .codec(Codec::Ffv1)
            .container("mkv")
            .pix_fmt("bgr0")
            .cached(),
    ];
    for v in &sources {
        let theirs = oracle::decode_frames(&v.path, PixFmt::Rgb24, None);
        let reader = FrameReader::open(&v.path).expect("open");
        let mut n = 0;
        for (i, frame) in reader.enumerate() {
            let rgb = frame.expect("decode").to_rgb().expect("to RGB");
            let want = &theirs[i];
            assert_eq!(
                (rgb.width() as usize, rgb.height() as usize),
                (want.width, want.height),
                "{:?} frame {i}: size",
                v.path
            );
            assert!(
                rgb.as_raw() == &want.data,
                "{:?} frame {i}: RGB differs from ffmpeg's rgb24",
                v.path
            );
            n += 1;
        }
        assert_eq!(n, theirs.len(), "{:?}: frame count", v.path);
    }
}
