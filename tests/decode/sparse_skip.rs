//! Sparse reading decodes only what its targets depend on (issue 26), and still returns
//! exactly the frames ffmpeg decodes.
//!
//! For each variant (H.264 with B-pyramid and one or three references, open GOPs, strict
//! pyramid with MMCO, MPEG-2 and MPEG-4 ASP with B-frames, HEVC with B-frames), a
//! [`FrameReader`] told which frames are wanted (`want_only`, what the samplers, frames
//! exports, Python `sample` and review thumbnails use) seeks to each target in turn; every
//! frame it returns must be bit-identical to the same frame of the ffmpeg CLI's full decode.
//! The work is counted on the call's tally (`Counts::frames_decoded`) and checked against
//! ffprobe: its packets in decoding order and its own decode with `-skip_frame noref` (which
//! frames are reference frames) say what skipping only non-reference frames decodes (from each
//! group's keyframe to its last target's packet, the reference frames, and the targets). No
//! variant may decode more (a little slack per group for reordering). (Reference frames no
//! target depends on are left out as well, MMCO-marked ones included; `tests/decode/sparse_refs.rs`
//! checks that x264's B-pyramid streams then decode well under that floor.)

use crate::common;
use crate::support;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use common::oracle::{self, PixFmt};
use support::packed;
use vidprep::call::Tally;
use vidprep::media::{FrameReader, FrameTable};

/// One test video.
pub(crate) struct Variant {
    pub name: &'static str,
    pub args: &'static [&'static str],
}

const VARIANTS: &[Variant] = &[
    Variant {
        name: "h264_pyramid_ref1.mp4",
        args: &[
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-g",
            "120",
            "-keyint_min",
            "120",
            "-sc_threshold",
            "0",
            "-bf",
            "3",
            "-x264-params",
            "b-pyramid=normal:ref=1",
        ],
    },
    Variant {
        name: "h264_pyramid_ref3.mp4",
        args: &[
            "-c:v",
            "libx264",
            "-preset",
            "medium",
            "-g",
            "120",
            "-keyint_min",
            "120",
            "-sc_threshold",
            "0",
            "-bf",
            "3",
            "-x264-params",
            "b-pyramid=normal:ref=3",
        ],
    },
    Variant {
        name: "h264_strict_pyramid.mp4",
        args: &[
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-g",
            "120",
            "-keyint_min",
            "120",
            "-sc_threshold",
            "0",
            "-bf",
            "3",
            "-x264-params",
            "b-pyramid=strict",
        ],
    },
    Variant {
        name: "h264_open_gop.mp4",
        args: &[
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-g",
            "120",
            "-keyint_min",
            "120",
            "-sc_threshold",
            "0",
            "-bf",
            "3",
            "-x264-params",
            "open-gop=1:ref=1",
        ],
    },
    Variant {
        name: "h264_pyramid.mkv",
        args: &[
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-g",
            "120",
            "-keyint_min",
            "120",
            "-sc_threshold",
            "0",
            "-bf",
            "3",
        ],
    },
    Variant {
        name: "mpeg2_bframes.mp4",
        args: &["-c:v", "mpeg2video", "-q:v", "4", "-g", "30", "-bf", "2"],
    },
    Variant {
        name: "mpeg4_asp_bframes.mp4",
        args: &["-c:v", "mpeg4", "-q:v", "4", "-g", "30", "-bf", "2"],
    },
    Variant {
        name: "hevc_bframes.mp4",
        args: &[
            "-c:v",
            "libx265",
            "-preset",
            "ultrafast",
            "-x265-params",
            "keyint=120:min-keyint=120:scenecut=0:bframes=3:b-pyramid=1:log-level=error",
        ],
    },
];

/// Makes `v` (600 frames of moving 320x240 test pattern) in `dir`.
pub(crate) fn make(dir: &Path, v: &Variant) -> PathBuf {
    let path = dir.join(v.name);
    let mut args: Vec<String> = [
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=320x240:rate=30",
        "-frames:v",
        "600",
        "-pix_fmt",
        "yuv420p",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(v.args.iter().map(|s| s.to_string()));
    args.push(path.display().to_string());
    common::cmd::run_ok("ffmpeg", &args);
    path
}

/// From ffprobe: the packets' pts in decoding order with their keyframe flags, and the pts of
/// the reference frames (`-skip_frame noref` decodes only those).
fn packets_and_references(path: &Path) -> (Vec<(i64, bool)>, HashSet<i64>) {
    let p = path.display().to_string();
    let out = common::cmd::run_ok(
        "ffprobe",
        &[
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-show_entries",
            "packet=pts,flags",
            "-of",
            "csv=p=0",
            &p,
        ],
    );
    let packets = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split(',');
            let pts = f.next()?.trim().parse().ok()?;
            Some((pts, f.next().unwrap_or("").contains('K')))
        })
        .collect();
    let out = common::cmd::run_ok(
        "ffprobe",
        &[
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-skip_frame",
            "noref",
            // FFmpeg 4.x's ffprobe calls a frame's pts `pkt_pts` (and prints no `pts`); 5.0
            // renamed it. Both are asked for; a line holds whichever this ffprobe knows.
            "-show_entries",
            "frame=pts,pkt_pts",
            "-of",
            "csv=p=0",
            &p,
        ],
    );
    let refs = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(',').find_map(|f| f.trim().parse().ok()))
        .collect();
    (packets, refs)
}

/// 16 uniform targets plus the frames next to a keyframe: the last frame before one, the
/// first B-frames after it.
fn targets(n: usize, keyframes: &[usize]) -> Vec<usize> {
    let mut t: Vec<usize> = (0..16).map(|i| (i * (n - 1) + 7) / 15).collect();
    for &k in keyframes.iter().skip(1) {
        t.extend([k - 1, k + 1, k + 2]);
    }
    t.retain(|&i| i < n);
    t.sort_unstable();
    t.dedup();
    t
}

/// The work of one check: frames decoded, and what skipping only non-reference frames
/// would decode (from ffprobe).
pub(crate) struct Work {
    pub frames_decoded: usize,
    pub nonref_floor: usize,
}

fn check(v: &Variant) -> Work {
    check_targets(v, None)
}

/// [`check`] with these targets (default: 16 uniform ones and the frames next to each
/// keyframe).
pub(crate) fn check_targets(v: &Variant, every: Option<usize>) -> Work {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path(), v);
    let table = FrameTable::for_file(&path).unwrap();
    let n = table.len();
    let keyframes: Vec<usize> = (0..n).filter(|&i| table.entry(i).key).collect();
    let want = match every {
        Some(step) => (3..n).step_by(step).collect(),
        None => targets(n, &keyframes),
    };
    let theirs = oracle::decode_frames(&path, PixFmt::Yuv420p, None);
    assert_eq!(theirs.len(), n, "{}: frame count", v.name);

    let tally = Tally::new();
    let ctx = vidprep::call::CallContext::new().with_tally(tally.clone());
    let mut reader = FrameReader::open_with_table_in(
        &path,
        vidprep::media::DecodeOptions::default(),
        table,
        &ctx,
    )
    .unwrap();
    reader.want_only(&want);
    for &t in &want {
        reader.seek_to_index(t).unwrap();
        let frame = reader.next_frame().unwrap().expect("a frame");
        assert_eq!(frame.index, t, "{}", v.name);
        assert_eq!(
            packed(&frame).md5(),
            theirs[t].md5(),
            "{}: frame {t} differs from ffmpeg's decode",
            v.name
        );
    }
    let counts = tally.counts();
    assert_eq!(counts.frames_decoded, reader.frames_decoded(), "{}", v.name);

    // What skipping only non-reference frames decodes, from ffprobe: for each group of targets
    // reached from one keyframe, the reference frames whose packets lie between the keyframe's
    // packet and the last target's (decoding order), and the targets that are not reference
    // frames themselves.
    let (packets, refs) = packets_and_references(&path);
    assert_eq!(packets.len(), n, "{}: ffprobe's packets", v.name);
    let mut by_pts: Vec<i64> = packets.iter().map(|p| p.0).collect();
    by_pts.sort_unstable();
    let position = |pts: i64| packets.iter().position(|p| p.0 == pts).unwrap();
    let key_before = |t: usize| {
        (0..=t)
            .rev()
            .find(|&i| packets[position(by_pts[i])].1)
            .unwrap_or(0)
    };
    let mut nonref_floor = 0;
    let mut groups = 0;
    let mut i = 0;
    while i < want.len() {
        let k = key_before(want[i]);
        let mut j = i;
        while j + 1 < want.len() && key_before(want[j + 1]) == k {
            j += 1;
        }
        let from = position(by_pts[k]);
        let to = want[i..=j]
            .iter()
            .map(|&t| position(by_pts[t]))
            .max()
            .unwrap();
        nonref_floor += packets[from..=to.max(from)]
            .iter()
            .filter(|p| refs.contains(&p.0))
            .count();
        nonref_floor += want[i..=j]
            .iter()
            .filter(|&&t| !refs.contains(&by_pts[t]))
            .count();
        groups += 1;
        i = j + 1;
    }
    let nonref = n - refs.len();
    eprintln!(
        "{}: {} targets in {groups} groups, {} frames decoded, {} packets left out; ffprobe: \
         {nonref} of {n} frames are non-reference; skipping only those decodes {nonref_floor}",
        v.name,
        want.len(),
        counts.frames_decoded,
        counts.packets_left_out,
    );
    assert!(
        nonref > 0,
        "{}: the variant has no non-reference frames",
        v.name
    );
    // (A little slack per group for the decoder's reordering where no drain applies.)
    assert!(
        counts.frames_decoded <= nonref_floor + 4 * groups,
        "{}: {} frames decoded, more than skipping the non-reference frames leaves \
         ({nonref_floor})",
        v.name,
        counts.frames_decoded
    );
    assert!(counts.packets_left_out <= n, "{}", v.name);
    Work {
        frames_decoded: counts.frames_decoded,
        nonref_floor,
    }
}

#[test]
fn h264_pyramid_one_reference() {
    check(&VARIANTS[0]);
}

#[test]
fn h264_pyramid_three_references() {
    check(&VARIANTS[1]);
}

#[test]
fn h264_strict_pyramid_with_mmco() {
    check(&VARIANTS[2]);
}

#[test]
fn h264_open_gop() {
    check(&VARIANTS[3]);
}

#[test]
fn h264_in_matroska() {
    check(&VARIANTS[4]);
}

#[test]
fn mpeg2_with_b_frames() {
    check(&VARIANTS[5]);
}

#[test]
fn mpeg4_asp_with_b_frames() {
    check(&VARIANTS[6]);
}

#[test]
fn hevc_with_b_frames() {
    check(&VARIANTS[7]);
}

/// Not a check: the work of sampling a long video, for `docs/benchmarks.md` (`VIDPREP_SPARSE_VIDEO=path
/// VIDPREP_SPARSE_N=16 cargo test --test integration decode::sparse_skip::work -- --ignored --nocapture`):
/// the table's scan, then the targets read with and without `want_only`, frames decoded and
/// packets left out for each, and the time of each part.
#[test]
#[ignore]
fn work_on_a_long_video() {
    let Some(path) = std::env::var_os("VIDPREP_SPARSE_VIDEO") else {
        crate::common::skip::skip(
            crate::common::skip::Needs::Data,
            "VIDPREP_SPARSE_VIDEO (a long video of your own) is not set",
        );
        return;
    };
    let n: usize = std::env::var("VIDPREP_SPARSE_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let t0 = std::time::Instant::now();
    let table = FrameTable::for_file(Path::new(&path)).unwrap();
    let scan = t0.elapsed();
    let total = table.len();
    let want: Vec<usize> = (0..n)
        .map(|i| ((i as f64) * (total - 1) as f64 / (n - 1) as f64).round() as usize)
        .collect();
    for skip in [false, true] {
        let tally = Tally::new();
        let ctx = vidprep::call::CallContext::new().with_tally(tally.clone());
        let t = std::time::Instant::now();
        let mut reader = FrameReader::open_with_table_in(
            Path::new(&path),
            vidprep::media::DecodeOptions {
                threads: 1,
                ..Default::default()
            },
            table.clone(),
            &ctx,
        )
        .unwrap();
        if skip {
            reader.want_only(&want);
        }
        for &i in &want {
            reader.seek_to_index(i).unwrap();
            assert_eq!(reader.next_frame().unwrap().unwrap().index, i);
        }
        let c = tally.counts();
        eprintln!(
            "{}: {total} frames, table scan {:.3} s; {n} targets {}: {} frames decoded, {} packets left out, {:.3} s on one thread",
            Path::new(&path).display(),
            scan.as_secs_f64(),
            if skip { "with want_only" } else { "seeking only" },
            c.frames_decoded,
            c.packets_left_out,
            t.elapsed().as_secs_f64()
        );
    }
}
