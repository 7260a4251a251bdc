//! Memory under hostile sizes (issue 22): what a request costs is bounded by the work and a
//! documented cost per box, and inputs whose sizes would need more memory than is there give
//! an error, not an abort; inputs whose headers claim more than they can hold (a 12000x12000
//! TIFF in a folder, an MP4 claiming more samples than bytes) are refused from the header,
//! before vidprep decodes or allocates anything for them. Peak memory is measured with `/usr/bin/time -v` (the check is
//! skipped, with a message, where it is absent); the outputs are checked against the input's
//! own rows.

use crate::common;
use crate::support;

use std::path::Path;

use common::synth::SynthVideo;

/// Peak resident memory of a finished command run under `/usr/bin/time -v`, in KiB.
pub(crate) fn peak_rss_kib(stderr: &str) -> Option<u64> {
    stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok())
}

/// `vidprep args` in `dir`, under `/usr/bin/time -v` where it exists.
pub(crate) fn timed(dir: &Path, args: &[&str]) -> std::process::Output {
    let time = Path::new("/usr/bin/time");
    let mut cmd = if time.exists() {
        let mut c = std::process::Command::new(time);
        c.arg("-v").arg(assert_cmd::cargo::cargo_bin("vidprep"));
        c
    } else {
        crate::common::skip::skip(
            crate::common::skip::Needs::Tools,
            "/usr/bin/time is absent: the peak memory is not checked",
        );
        std::process::Command::new(assert_cmd::cargo::cargo_bin("vidprep"))
    };
    cmd.current_dir(dir).args(args).output().unwrap()
}

/// 300,000 MOT boxes, every one inside the 100-frame video (3,000 tracks on every frame):
/// the overlay's peak memory stays under 250 MB (about 1.9 KB per box, 600 MB, before; about
/// 300 bytes per box now, `docs/benchmarks.md`), and the sidecar holds every box.
#[test]
fn mot_boxes_inside_the_video_cost_a_bounded_amount_each() {
    let dir = tempfile::tempdir().unwrap();
    let info = SynthVideo::new(160, 120).frames(100).cached();
    std::fs::copy(&info.path, dir.path().join("v.mp4")).unwrap();
    let (frames, tracks) = (100u32, 3000u32);
    let mut text = String::with_capacity(10 << 20);
    for f in 1..=frames {
        for id in 1..=tracks {
            use std::fmt::Write;
            writeln!(text, "{f},{id},{},{},8,9,1,1,0.5", id % 150, (id + f) % 110).unwrap();
        }
    }
    std::fs::write(dir.path().join("gt.txt"), &text).unwrap();
    drop(text);
    let out = timed(
        dir.path(),
        &[
            "overlay", "v.mp4", "--boxes", "gt.txt", "--format", "mot", "-o", "o.mp4",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{err}");
    if let Some(kib) = peak_rss_kib(&err) {
        eprintln!("peak RSS {kib} KiB for {} boxes", frames * tracks);
        assert!(kib < 250 * 1024, "peak RSS {kib} KiB");
    }
    let sidecar = support::sidecar(&dir.path().join("o.mp4"));
    let got = sidecar["annotations"]["tracks"].as_array().unwrap();
    assert_eq!(got.len(), tracks as usize);
    let keys: usize = got
        .iter()
        .map(|t| t["keys"].as_array().unwrap().len())
        .sum();
    assert_eq!(keys, (frames * tracks) as usize);
    // Track 7 on frame 0 (the file's frame 1): x = 7, y = 8, 8x9.
    let t7 = got.iter().find(|t| t["id"] == "7").unwrap();
    assert_eq!(
        t7["keys"][0],
        serde_json::json!({"frame": 0, "box": [7.0, 8.0, 15.0, 17.0]})
    );
}

/// `vidprep args` in `dir` with its address space limited to `kib` KiB (`ulimit -v`).
fn under_limit(dir: &Path, kib: u64, args: &[&str]) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Under a hard memory limit (`ulimit -v`, 1 GB), PNG frames of an 8000x8000 video (within
/// the pixel budget; 183 MiB of RGB each) end with an error naming the size (exit 1), not an
/// abort (exit 134, as before), and leave nothing behind; the same request at `--max-size`
/// (the advice) works under the same limit.
#[test]
fn frames_too_large_for_a_hard_memory_limit_are_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    common::cmd::ffmpeg(&[
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=s=8000x8000:r=5",
        "-frames:v",
        "3",
        "-c:v",
        "mjpeg",
        "-q:v",
        "5",
        &common::cmd::p(&dir.path().join("big.avi")),
    ])
    .unwrap();
    let limit = 1_000_000; // KiB
    let args = [
        "export",
        "frames",
        "big.avi",
        "--out-dir",
        "png",
        "--count",
        "2",
        "--image-format",
        "png",
    ];
    let out = under_limit(dir.path(), limit, &args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("memory"), "{err}");
    if err.contains("to RGB") {
        assert!(
            err.contains("needs 183.1 MiB (192000000 bytes) of memory and the system refused it")
                && err.contains("--max-size"),
            "{err}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["big.avi"], "{err}");
    // The advice works under the same limit.
    let mut small = args.to_vec();
    small.extend(["--max-size", "640x640"]);
    let out = under_limit(dir.path(), limit, &small);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frames = std::fs::read_to_string(dir.path().join("png/frames.json")).unwrap();
    let frames: serde_json::Value = serde_json::from_str(&frames).unwrap();
    let first = frames["frames"][0]["file"].as_str().unwrap();
    let png = image::open(dir.path().join("png").join(first)).unwrap();
    assert_eq!((png.width(), png.height()), (640, 640));
}

/// A folder of three 64x48 TIFFs and one 12000x12000 TIFF (deflated gray, 150 KB on disk):
/// whether it is the first image (which FFmpeg decodes to open the folder) or the last, the
/// command fails naming that file and its size from the header, with a peak memory far below
/// its 144 MB of pixels (it was decoded first: an RGB one took 891 MB), and writes nothing.
#[test]
fn a_huge_tiff_in_a_folder_is_refused_from_its_header_before_decoding() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ff = |args: &[&str]| common::cmd::ffmpeg(args).unwrap();
    ff(&[
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        "color=c=gray:s=12000x12000",
        "-frames:v",
        "1",
        "-pix_fmt",
        "gray",
        "-compression_algo",
        "deflate",
        &common::cmd::p(&d.join("huge.tif")),
    ]);
    ff(&[
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=s=64x48:r=10",
        "-frames:v",
        "3",
        "-c:v",
        "tiff",
        &common::cmd::p(&d.join("small%06d.tif")),
    ]);
    for (case, huge_at) in [("first", 1), ("last", 4)] {
        let imgs = d.join(format!("imgs-{case}"));
        std::fs::create_dir(&imgs).unwrap();
        let mut small = 1;
        for i in 1..=4 {
            let from = if i == huge_at {
                d.join("huge.tif")
            } else {
                small += 1;
                d.join(format!("small{:06}.tif", small - 1))
            };
            std::fs::copy(from, imgs.join(format!("{i:06}.tif"))).unwrap();
        }
        let name = format!("imgs-{case}");
        let out = timed(
            d,
            &[
                "export",
                "frames",
                &name,
                "--source-fps",
                "10",
                "--count",
                "4",
                "--out-dir",
                "o",
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{case}: {err}");
        let file = format!("{name}/{huge_at:06}.tif");
        assert!(err.contains(&file), "{case}: {file} not named in: {err}");
        assert!(err.contains("12000x12000"), "{case}: {err}");
        if let Some(kib) = peak_rss_kib(&err) {
            eprintln!("{case}: peak RSS {kib} KiB");
            assert!(kib < 100 * 1024, "{case}: peak RSS {kib} KiB: {err}");
        }
        assert!(!d.join("o").exists(), "{case}: an output was written");
    }
}

/// Patches a one-frame MP4 so that its sample tables claim `samples` samples of one byte
/// each (`stsz`: a constant size 1 and the count; `stts` and `stsc`: the count in their one
/// entry), as a hostile file would.
fn claiming(mp4: &[u8], samples: u32) -> Vec<u8> {
    let mut b = mp4.to_vec();
    let at = |b: &[u8], tag: &[u8]| b.windows(4).position(|w| w == tag).unwrap() + 4;
    let put = |b: &mut Vec<u8>, i: usize, v: u32| b[i..i + 4].copy_from_slice(&v.to_be_bytes());
    let i = at(&b, b"stts");
    assert_eq!(&b[i + 4..i + 8], &1u32.to_be_bytes(), "one stts entry");
    put(&mut b, i + 8, samples);
    let i = at(&b, b"stsz");
    put(&mut b, i + 4, 1);
    put(&mut b, i + 8, samples);
    let i = at(&b, b"stsc");
    put(&mut b, i + 12, samples);
    b
}

/// A 2 KB MP4 whose `stsz` claims 50 million samples: `probe` fails (it said "frames: 1,
/// 50000000 in metadata" and exit 0), naming the file, the claim and what the file can hold,
/// before vidprep sizes anything by it (FFmpeg's own index of the claim, 1.2 GB as in
/// `ffprobe`, is built while the file opens); the same patch with as many samples as the file
/// has bytes is not refused (ffprobe reads the claim as the stream's frame count: the patch
/// took).
#[test]
fn an_mp4_claiming_more_samples_than_bytes_is_refused_before_vidprep_sizes_anything() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    common::cmd::ffmpeg(&[
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=s=64x48:r=25",
        "-frames:v",
        "1",
        "-c:v",
        "libx264",
        "-an",
        &common::cmd::p(&d.join("one.mp4")),
    ])
    .unwrap();
    let one = std::fs::read(d.join("one.mp4")).unwrap();
    let len = one.len();
    std::fs::write(d.join("claims.mp4"), claiming(&one, 50_000_000)).unwrap();
    std::fs::write(d.join("fits.mp4"), claiming(&one, len as u32)).unwrap();
    let nb_frames = |name: &str| {
        common::oracle::video_stream(&d.join(name))["nb_frames"]
            .as_str()
            .map(str::to_string)
    };
    assert_eq!(nb_frames("fits.mp4"), Some(len.to_string()));
    let out = timed(d, &["probe", "claims.mp4"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    for part in [
        "claims.mp4",
        "it claims 50000000 frames",
        &format!("the file has {len} bytes"),
        &format!("at most {len}"),
    ] {
        assert!(err.contains(part), "{part:?} not in: {err}");
    }
    let out = timed(d, &["probe", "fits.mp4"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("it claims"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
