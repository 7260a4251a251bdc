//! Sources of every shape, against the ffmpeg CLI: image sequences (MOT and GOT-10k layouts, a
//! plain folder with `--source-fps`, a printf pattern) probe, cut, sample, overlay, insert and
//! run through a manifest with frame `i` = file `i`, proven on pixels; http(s) URLs (a `tiny_http`
//! server on loopback, with range requests) give the same bytes as the local file; bad
//! folders, schemes and servers fail clearly, quickly and leave nothing behind.

use crate::common;
use crate::support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::cmd::{self, p};
use common::oracle::{self, DecodeOpts, Frame, PixFmt};
use common::synth::SynthVideo;
use serde_json::Value;
use support::http::{Server, Version};
use support::{shared, sidecar, source_frames, temporaries, vidprep};

/// Writes `frames` frame-coded testsrc2 images `dir/<name>` (a printf name, numbered from 1).
fn images(dir: &Path, frames: u32, name: &str, size: (u32, u32)) {
    std::fs::create_dir_all(dir).unwrap();
    let mut args: Vec<String> = [
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        &format!("testsrc2=size={}x{}:rate=25", size.0, size.1),
        "-vf",
        &common::code::ffmpeg_code_filter(16),
        "-frames:v",
        &frames.to_string(),
        "-start_number",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if name.ends_with(".jpg") {
        args.extend(["-q:v".into(), "2".into()]);
    }
    // The image2 muxer formats the whole path: a % in the folder's name is written %%.
    args.push(format!("{}/{name}", p(dir).replace('%', "%%")));
    cmd::ffmpeg(&args).unwrap();
}

/// A MOT sequence: `seq/seqinfo.ini` (frameRate=25) and `seq/img1/000001.jpg`...
fn mot(dir: &Path, frames: u32) -> PathBuf {
    let seq = dir.join("MOT-TEST");
    images(&seq.join("img1"), frames, "%06d.jpg", (320, 240));
    std::fs::write(
        seq.join("seqinfo.ini"),
        format!(
            "[Sequence]\nname=MOT-TEST\nimDir=img1\nframeRate=25\nseqLength={frames}\nimWidth=320\nimHeight=240\nimExt=.jpg\n"
        ),
    )
    .unwrap();
    seq
}

/// The box of GOT-10k frame `i` (x, y, w, h): moving right 4 px a frame.
fn got_box(i: u32) -> (u32, u32, u32, u32) {
    (40 + 4 * i, 80, 80, 60)
}

/// A GOT-10k sequence: `00000001.jpg`..., `groundtruth.txt`, `meta_info.ini` (`anno_fps`).
fn got10k(dir: &Path, frames: u32, anno_fps: Option<&str>) -> PathBuf {
    let seq = dir.join("GOT-10k_Test_000001");
    images(&seq, frames, "%08d.jpg", (320, 240));
    let gt: String = (0..frames)
        .map(|i| {
            let (x, y, w, h) = got_box(i);
            format!("{x},{y},{w},{h}\n")
        })
        .collect();
    std::fs::write(seq.join("groundtruth.txt"), gt).unwrap();
    if let Some(fps) = anno_fps {
        std::fs::write(
            seq.join("meta_info.ini"),
            format!("[METAINFO]\nobject_class: box\nanno_fps: {fps}\n"),
        )
        .unwrap();
    }
    seq
}

fn probe_json(args: &[&str], source: &Path) -> Value {
    let out = vidprep()
        .arg("probe")
        .arg(source)
        .arg("--json")
        .args(args)
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

/// ffprobe's view of an image pattern read at `rate` from number 1: (decoded frames, width,
/// height, r_frame_rate).
fn ffprobe_pattern(pattern: &Path, rate: &str) -> (u64, u64, u64, String) {
    let out = cmd::ffprobe(&[
        "-v",
        "error",
        "-f",
        "image2",
        "-framerate",
        rate,
        "-start_number",
        "1",
        "-i",
        &p(pattern),
        "-count_frames",
        "-show_entries",
        "stream=nb_read_frames,width,height,r_frame_rate",
        "-of",
        "json",
    ])
    .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["streams"][0];
    (
        oracle::num(&s["nb_read_frames"]).unwrap() as u64,
        s["width"].as_u64().unwrap(),
        s["height"].as_u64().unwrap(),
        s["r_frame_rate"].as_str().unwrap().to_string(),
    )
}

/// ffmpeg's pixels of an image as vidprep's RGB outputs hold them ([`oracle::to_export_rgb`]):
/// a full-range picture (a JPEG) converted to RGB as `ffmpeg -pix_fmt rgb24` converts it, any
/// other through the pipeline's 4:2:0, with ffmpeg's default (bicubic) scaler.
fn through_420(image: &Path) -> Frame {
    let out = cmd::ffmpeg(&[
        "-v",
        "error",
        "-i",
        &p(image),
        "-vf",
        &oracle::to_export_rgb(image),
        "-f",
        "rawvideo",
        "-",
    ])
    .unwrap();
    let (w, h) = oracle::dimensions(image);
    Frame {
        width: w as usize,
        height: h as usize,
        pix_fmt: PixFmt::Rgb24,
        data: out.stdout,
    }
}

fn frames_json(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("frames.json")).unwrap()).unwrap()
}

#[test]
fn every_layout_probes_as_ffprobe_reads_its_pattern() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mot = mot(d, 40);
    let got = got10k(d, 30, Some("10Hz"));
    images(&d.join("plain"), 24, "%06d.png", (320, 240));
    images(&d.join("pat"), 12, "%06d.png", (160, 120));
    std::fs::write(d.join("pat/readme.txt"), "not a frame").unwrap();
    let cases = vec![
        // (source, extra args, the pattern ffprobe reads, rate, layout, where the rate is from)
        (
            mot.clone(),
            vec![],
            mot.join("img1/%06d.jpg"),
            "25",
            "mot",
            "frameRate",
        ),
        (
            mot.join("img1"),
            vec![],
            mot.join("img1/%06d.jpg"),
            "25",
            "mot",
            "frameRate",
        ),
        (
            got.clone(),
            vec![],
            got.join("%08d.jpg"),
            "10",
            "got10k",
            "anno_fps",
        ),
        (
            d.join("plain"),
            vec!["--source-fps", "30000/1001"],
            d.join("plain/%06d.png"),
            "30000/1001",
            "folder",
            "source_fps",
        ),
        (
            d.join("pat/%06d.png"),
            vec!["--source-fps", "12.5"],
            d.join("pat/%06d.png"),
            "25/2",
            "pattern",
            "source_fps",
        ),
    ];
    for (source, args, pattern, rate, layout, rate_from) in cases {
        let what = source.display().to_string();
        let j = probe_json(&args, &source);
        let (frames, w, h, r) = ffprobe_pattern(&pattern, rate);
        assert_eq!(j["kind"], "images", "{what}");
        assert_eq!(j["video"]["frames"].as_u64(), Some(frames), "{what}");
        assert_eq!(j["video"]["width"].as_u64(), Some(w), "{what}");
        assert_eq!(j["video"]["height"].as_u64(), Some(h), "{what}");
        assert_eq!(
            j["video"]["avg_frame_rate"].as_str(),
            Some(r.as_str()),
            "{what}"
        );
        assert_eq!(j["images"]["layout"], layout, "{what}");
        assert_eq!(j["images"]["first_number"], 1, "{what}");
        assert_eq!(j["images"]["files"].as_u64(), Some(frames), "{what}");
        assert!(
            j["images"]["rate_from"]
                .as_str()
                .unwrap()
                .contains(rate_from),
            "{what}: {}",
            j["images"]["rate_from"]
        );
        let duration = j["video"]["duration_s"].as_f64().unwrap();
        let (n, dd) = r.split_once('/').unwrap_or((&r, "1"));
        let expected = frames as f64 * dd.parse::<f64>().unwrap() / n.parse::<f64>().unwrap();
        assert!((duration - expected).abs() < 1e-9, "{what}: {duration} s");
    }
    // The text form says where the frames and the rate come from.
    let out = vidprep().arg("probe").arg(&mot).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("40 MOT images") && text.contains("000001.jpg to 000040.jpg"),
        "{text}"
    );
}

#[test]
fn sampled_frames_are_the_files_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    images(&d.join("png"), 30, "%06d.png", (320, 240));
    let mot = mot(d, 30);
    for (source, args, folder, ext, out) in [
        (
            d.join("png"),
            vec!["--source-fps", "25"],
            d.join("png"),
            "png",
            d.join("from_png"),
        ),
        (
            mot.clone(),
            vec![],
            mot.join("img1"),
            "jpg",
            d.join("from_jpg"),
        ),
    ] {
        vidprep()
            .args(["export", "frames"])
            .arg(&source)
            .args(&args)
            .args([
                "--count", "7", "--format", "png", "--order", "shuffled", "--seed", "3",
            ])
            .arg("--out-dir")
            .arg(&out)
            .assert()
            .success();
        let j = frames_json(&out);
        assert_eq!(j["total_frames"], 30);
        assert_eq!(j["sources"][0]["images"]["pattern"], format!("%06d.{ext}"));
        for f in j["frames"].as_array().unwrap() {
            let i = f["source_frame"].as_u64().unwrap();
            let file = f["source_file"].as_str().unwrap();
            // Frame i is the (i+1)-th file: 000001 is frame 0.
            assert_eq!(file, format!("{:06}.{ext}", i + 1), "{f}");
            let img = oracle::decode_image(&out.join(f["file"].as_str().unwrap()), PixFmt::Rgb24);
            assert_eq!(img.code(), Some(i as u32), "{file}");
            let src = folder.join(file);
            // A PNG (RGB-coded) is exported as its own pixels, and so is a JPEG (full-range
            // YUV, converted as ffmpeg converts it).
            let want = if ext == "png" {
                oracle::decode_image(&src, PixFmt::Rgb24)
            } else {
                through_420(&src)
            };
            assert!(
                img.data == want.data,
                "{file}: exported pixels differ from ffmpeg's {} ({}) ({:.2} dB)",
                src.display(),
                if ext == "png" {
                    "rgb24"
                } else {
                    "as vidprep's RGB outputs make it"
                },
                oracle::psnr(&img, &want)
            );
            let direct = oracle::decode_image(&src, PixFmt::Rgb24);
            let psnr = oracle::psnr(&img, &direct);
            assert!(
                psnr >= 35.0,
                "{file}: {psnr:.2} dB against ffmpeg's decode of the file"
            );
        }
    }
    // JPEG images from a JPEG sequence: within 45 dB of ffmpeg's decode of each file.
    let out = d.join("jpg_frames");
    vidprep()
        .args(["export", "frames"])
        .arg(&mot)
        .args(["--count", "5", "--quality", "100"])
        .arg("--out-dir")
        .arg(&out)
        .assert()
        .success();
    for f in frames_json(&out)["frames"].as_array().unwrap() {
        let file = mot.join("img1").join(f["source_file"].as_str().unwrap());
        let img = oracle::decode_image(&out.join(f["file"].as_str().unwrap()), PixFmt::Yuv420p);
        let src = oracle::decode_image(&file, PixFmt::Yuv420p);
        let psnr = oracle::psnr(&img, &src);
        assert!(psnr >= 45.0, "{}: {psnr:.2} dB", file.display());
        assert_eq!(img.code(), Some(f["source_frame"].as_u64().unwrap() as u32));
    }
}

#[test]
fn a_cut_of_a_folder_holds_exactly_its_span() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mot = mot(d, 40);
    let all = oracle::framemd5(
        &mot.join("img1/%06d.jpg"),
        &DecodeOpts::new(PixFmt::Yuv420p),
    );
    assert_eq!(all.len(), 40);
    // Frames, then seconds (0.28 s at 25 fps is frame 7).
    for (start, end, first, last) in [
        ("7", "19", 7, 19),
        ("0.28s", "0.76s", 7, 19),
        ("0", "40", 0, 40),
    ] {
        let out = d.join(format!("cut_{first}_{last}_{}.mp4", start.len()));
        vidprep()
            .arg("cut")
            .arg(&mot)
            .args([
                "--start",
                start,
                "--end",
                end,
                "--crf",
                "0",
                "--preset",
                "ultrafast",
                "-o",
            ])
            .arg(&out)
            .assert()
            .success();
        // Lossless x264: the decoded frames are the source's, bit for bit.
        let got = oracle::framemd5(&out, &DecodeOpts::new(PixFmt::Yuv420p));
        assert_eq!(got, all[first..last].to_vec(), "{start}..{end}");
        let sc = sidecar(&out);
        assert_eq!(source_frames(&sc), (first..last).collect::<Vec<_>>());
        let images = &sc["sources"][0]["images"];
        assert_eq!(images["pattern"], "%06d.jpg");
        assert_eq!(images["first_number"], 1);
        assert_eq!(images["layout"], "mot");
        assert!(images["folder"].as_str().unwrap().ends_with("img1"));
        let (r, ..) = ffprobe_pattern(&mot.join("img1/%06d.jpg"), "25");
        assert_eq!(sc["sources"][0]["frames"].as_u64(), Some(r));
        assert_eq!(oracle::count_frames(&out), (last - first) as u64);
        let tb = oracle::time_base(&out);
        assert_eq!(
            oracle::frame_pts(&out).len(),
            last - first,
            "time base {tb:?}"
        );
    }
    // Truncation and a decision point work on a folder as on a video: 25 fps, 0.2 s = 5 frames.
    let out = d.join("trunc.mp4");
    vidprep()
        .arg("truncate")
        .arg(mot.join("img1"))
        .args(["--at", "0.2s", "--preset", "ultrafast", "-o"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(oracle::frame_codes(&out), (0..5).collect::<Vec<_>>());
}

#[test]
fn seeks_into_a_sequence_land_on_the_exact_file() {
    let dir = tempfile::tempdir().unwrap();
    images(&dir.path().join("s"), 30, "%06d.jpg", (320, 240));
    let pattern = dir.path().join("s/%06d.jpg");
    let oracle = oracle::framemd5(&pattern, &DecodeOpts::new(PixFmt::Yuv420p));
    let source = vidprep::media::Source::new(&pattern, Some("29.97".parse().unwrap()));
    let mut reader = vidprep::media::FrameReader::open_source(&source, Default::default()).unwrap();
    for i in [17usize, 3, 29, 0, 16, 16, 28] {
        reader.seek_to_index(i).unwrap();
        let f = reader.next_frame().unwrap().unwrap();
        assert_eq!(f.index, i);
        assert_eq!(f.pts, i as i64, "image2 stamps frame i with pts i");
        assert_eq!(
            support::packed(&f).md5(),
            oracle[i],
            "frame {i} after a seek"
        );
    }
    // Seconds at 29.97 fps: frame 10 is shown from 10 * 100/2997 s.
    let i = reader
        .seek_to_time(vidprep::time::Time::new(1000, 2997))
        .unwrap();
    assert_eq!(i, 10);
    assert_eq!(
        reader.table().time(10),
        vidprep::time::Time::new(1000, 2997)
    );
}

#[test]
fn got10k_boxes_land_on_their_own_frames() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let got = got10k(d, 30, Some("25Hz"));
    let out = d.join("boxes.mp4");
    vidprep()
        .arg("overlay")
        .arg(&got)
        .arg("--boxes")
        .arg(&got)
        .args([
            "--thickness",
            "4",
            "--no-labels",
            "--crf",
            "8",
            "--preset",
            "ultrafast",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let frames = oracle::decode_frames(&out, PixFmt::Yuv420p, None);
    let source = oracle::decode_frames(&got.join("%08d.jpg"), PixFmt::Yuv420p, None);
    assert_eq!(frames.len(), 30);
    let want = common::palette::track_yuv_bt601(0);
    for i in [0u32, 11, 29] {
        let (x, y, w, h) = got_box(i);
        let f = &frames[i as usize];
        for (px, py) in [(x + w / 2, y + 1), (x + 1, y + h / 2)] {
            let luma = f.plane(0)[py as usize * f.width + px as usize] as i32;
            assert!(
                (luma - want.y as i32).abs() <= 12,
                "frame {i}: ({px},{py}) luma {luma}, box colour {}",
                want.y
            );
        }
        // Inside the box the picture is the source's (frame i is file i+1).
        let (cx, cy) = ((x + w / 2) as usize, (y + h / 2) as usize);
        let a = f.plane(0)[cy * f.width + cx] as i32;
        let b = source[i as usize].plane(0)[cy * f.width + cx] as i32;
        assert!((a - b).abs() <= 10, "frame {i} inside the box: {a} vs {b}");
    }
    let sc = sidecar(&out);
    assert_eq!(sc["sources"][0]["images"]["layout"], "got10k");
    assert_eq!(sc["sources"][0]["images"]["rate"], "25");
}

#[test]
fn a_manifest_item_with_a_folder_source_runs_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    images(&d.join("frames"), 20, "img_%04d.png", (320, 240));
    let manifest = d.join("m.jsonl");
    std::fs::write(
        &manifest,
        concat!(
            r#"{"id": "seq", "source": "frames", "source_fps": 10, "start": 4, "end": 16, "exports": [{"kind": "clip", "preset": "ultrafast"}, {"kind": "frames", "count": 3}]}"#,
            "\n",
            r#"{"id": "pattern", "source": "frames/img_%04d.png", "source_fps": "10", "start": "0.4s", "end": 16, "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#,
            "\n",
            r#"{"id": "norate", "source": "frames"}"#,
            "\n",
            r#"{"id": "video", "source": "frames/img_0001.png", "source_fps": 10}"#,
            "\n",
        ),
    )
    .unwrap();
    let out = d.join("out");
    let a = vidprep()
        .arg("run")
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&out)
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("line 3") && err.contains("source_fps"),
        "{err}"
    );
    assert!(
        err.contains("line 4") && err.contains("only for image sequences"),
        "{err}"
    );
    let sc = sidecar(&out.join("seq/clip.mp4"));
    assert_eq!(source_frames(&sc), (4..16).collect::<Vec<usize>>());
    assert_eq!(sc["request"]["source_fps"], "10");
    assert_eq!(sc["sources"][0]["images"]["pattern"], "img_%04d.png");
    assert_eq!(
        oracle::frame_codes(&out.join("seq/clip.mp4")),
        (4..16).collect::<Vec<_>>()
    );
    let fj = frames_json(&out.join("seq/frames"));
    let files: Vec<&str> = fj["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["source_file"].as_str().unwrap())
        .collect();
    // 3 of stream frames 0..12 (uniform: 0, 6, 11) = source frames 4, 10, 15 = files 5, 11, 16.
    assert_eq!(files, ["img_0005.png", "img_0011.png", "img_0016.png"]);
    // The pattern and the folder name the same frames: the same clip, byte for byte.
    assert_eq!(
        std::fs::read(out.join("seq/clip.mp4")).unwrap(),
        std::fs::read(out.join("pattern/clip.mp4")).unwrap()
    );
    // The command line with --source-fps makes the same clip.
    let single = d.join("single.mp4");
    vidprep()
        .current_dir(d)
        .args([
            "cut",
            "frames",
            "--source-fps",
            "10",
            "--start",
            "4",
            "--end",
            "16",
            "--preset",
            "ultrafast",
            "-o",
        ])
        .arg(&single)
        .assert()
        .success();
    assert_eq!(
        std::fs::read(&single).unwrap(),
        std::fs::read(out.join("seq/clip.mp4")).unwrap()
    );
    // Resume: nothing changed, nothing redone; a new image redoes the items that read it.
    let resume = || -> Value {
        let a = vidprep()
            .arg("run")
            .arg(&manifest)
            .arg("--out-dir")
            .arg(&out)
            .args(["--resume", "--json"])
            .assert()
            .code(1);
        serde_json::from_slice(&a.get_output().stdout).unwrap()
    };
    let summary = resume();
    assert_eq!(summary["skipped"], 2, "{summary}");
    std::fs::copy(d.join("frames/img_0020.png"), d.join("frames/img_0021.png")).unwrap();
    let summary = resume();
    assert_eq!(summary["skipped"], 0, "{summary}");
}

#[test]
fn a_folder_hosts_an_insertion() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let host = mot(d, 30);
    let needle = got10k(&d.join("needles"), 5, Some("25Hz"));
    let out = d.join("ins.mp4");
    vidprep()
        .args(["insert", "--host"])
        .arg(host.join("img1"))
        .arg("--sequence")
        .arg(&needle)
        .args(["--at", "10", "--preset", "ultrafast", "-o"])
        .arg(&out)
        .assert()
        .success();
    let sc = sidecar(&out);
    assert_eq!(sc["resolved"]["insert"]["needle_frames"], 5);
    assert_eq!(sc["output"]["frames"], 35);
    // The host's frames around the needle are its files, in order; the needle is frames
    // 10..15 (the needle shows the same code numbers 0..4 of its own images).
    let codes = oracle::frame_codes_opts(&out, &DecodeOpts::new(PixFmt::Gray));
    let want: Vec<Option<u32>> = (0..10).chain(0..5).chain(10..30).map(Some).collect();
    assert_eq!(codes, want);
    assert_eq!(sc["sources"][1]["images"]["layout"], "got10k");
    assert_eq!(sc["sources"][0]["images"]["layout"], "mot");
}

#[test]
fn the_real_got10k_sequence_is_a_source() {
    let Some(bag) = shared("got10k/VOT_bag") else {
        return;
    };
    let j = probe_json(&[], &bag);
    let (frames, w, h, rate) = ffprobe_pattern(&bag.join("%08d.jpg"), "25");
    assert_eq!(frames, 196);
    assert_eq!(j["video"]["frames"].as_u64(), Some(frames));
    assert_eq!(
        (j["video"]["width"].as_u64(), j["video"]["height"].as_u64()),
        (Some(w), Some(h))
    );
    assert_eq!(j["video"]["avg_frame_rate"].as_str(), Some(rate.as_str()));
    assert!(j["images"]["rate_from"]
        .as_str()
        .unwrap()
        .contains("anno_fps"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f");
    vidprep()
        .args(["export", "frames"])
        .arg(&bag)
        .args(["--count", "4", "--format", "png", "--out-dir"])
        .arg(&out)
        .assert()
        .success();
    let j = frames_json(&out);
    for f in j["frames"].as_array().unwrap() {
        let file = f["source_file"].as_str().unwrap();
        assert_eq!(
            file,
            format!("{:08}.jpg", f["source_frame"].as_u64().unwrap() + 1)
        );
        let img = oracle::decode_image(&out.join(f["file"].as_str().unwrap()), PixFmt::Rgb24);
        assert!(img.data == through_420(&bag.join(file)).data, "{file}");
    }
}

#[test]
fn odd_folder_names_and_unnumbered_images_read_in_order() {
    let dir = tempfile::tempdir().unwrap();
    // Glob and printf characters in the folder's name are taken literally.
    let odd = dir.path().join("a [b] {c} 100% *?");
    images(&odd.join("numbered"), 5, "%03d.png", (320, 240));
    // Names that are not numbered, but sort the same way by name and by number.
    let names = ["alpha.png", "bravo.png", "charlie.png", "delta.png"];
    images(&odd.join("named"), 4, "%d.png", (320, 240));
    for (i, n) in names.iter().enumerate() {
        std::fs::rename(
            odd.join(format!("named/{}.png", i + 1)),
            odd.join("named").join(n),
        )
        .unwrap();
    }
    let j = probe_json(&["--source-fps", "5"], &odd.join("numbered"));
    assert_eq!(j["video"]["frames"], 5);
    assert_eq!(j["images"]["pattern"], "%03d.png");
    let j = probe_json(&["--source-fps", "5"], &odd.join("named"));
    assert_eq!(j["video"]["frames"], 4);
    assert_eq!(j["images"]["naming"], "sorted");
    assert_eq!(j["images"]["names"], serde_json::json!(names));
    let out = dir.path().join("f");
    vidprep()
        .args(["export", "frames"])
        .arg(odd.join("named"))
        .args([
            "--source-fps",
            "5",
            "--count",
            "4",
            "--format",
            "png",
            "--out-dir",
        ])
        .arg(&out)
        .assert()
        .success();
    for f in frames_json(&out)["frames"].as_array().unwrap() {
        let i = f["source_frame"].as_u64().unwrap() as usize;
        assert_eq!(f["source_file"], names[i]);
        let img = oracle::decode_image(&out.join(f["file"].as_str().unwrap()), PixFmt::Rgb24);
        assert_eq!(img.code(), Some(i as u32));
    }
    // A pattern in that folder, with a literal % in the file names too.
    images(&odd.join("pct"), 3, "f%%_%02d.png", (320, 240));
    let j = probe_json(&["--source-fps", "5"], &odd.join("pct/f%%_%02d.png"));
    assert_eq!(j["video"]["frames"], 3);
    assert_eq!(j["images"]["first_file"], "f%_01.png");
}

/// Runs vidprep in `dir`, expects exit `code`, returns stderr; nothing may be left behind.
fn fails(dir: &Path, args: &[&str], code: i32, says: &[&str]) -> String {
    let before = support::files_in(dir);
    let a = vidprep()
        .current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(120))
        .assert()
        .code(code);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    for s in says {
        assert!(err.contains(s), "{args:?}: expected {s:?} in: {err}");
    }
    assert_eq!(support::files_in(dir), before, "{args:?} left files behind");
    assert!(temporaries(dir).is_empty(), "{args:?} left temporaries");
    err
}

#[test]
fn bad_image_sources_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("empty")).unwrap();
    std::fs::write(d.join("empty/notes.txt"), "x").unwrap();
    // Mixed sizes: caught in the PNG headers before any work.
    images(&d.join("sizes"), 6, "%06d.png", (320, 240));
    images(&d.join("small"), 1, "%06d.png", (160, 120));
    std::fs::rename(d.join("small/000001.png"), d.join("sizes/000007.png")).unwrap();
    // Mixed sizes in BMP (no header check here): caught as the frame decodes.
    images(&d.join("bmp"), 4, "%06d.bmp", (320, 240));
    images(&d.join("small"), 1, "%06d.bmp", (160, 120));
    std::fs::rename(d.join("small/000001.bmp"), d.join("bmp/000003.bmp")).unwrap();
    std::fs::remove_dir_all(d.join("small")).unwrap();
    images(&d.join("gaps"), 6, "%06d.jpg", (160, 120));
    std::fs::remove_file(d.join("gaps/000004.jpg")).unwrap();
    images(&d.join("norate"), 3, "%06d.jpg", (160, 120));
    let v = SynthVideo::new(160, 120).frames(10).cached();
    std::fs::copy(&v.path, d.join("v.mp4")).unwrap();
    let mot_dir = tempfile::tempdir().unwrap();
    let mot = mot(mot_dir.path(), 5);
    fails(
        d,
        &["cut", "empty", "--source-fps", "25", "-o", "o.mp4"],
        1,
        &["empty", "holds no images"],
    );
    fails(
        d,
        &["cut", "sizes", "--source-fps", "25", "-o", "o.mp4"],
        1,
        &[
            "000007.png",
            "is 160x120",
            "000001.png",
            "320x240",
            "one size",
        ],
    );
    fails(
        d,
        &["cut", "bmp", "--source-fps", "25", "-o", "o.mp4"],
        1,
        &["000003.bmp", "is 160x120", "one size"],
    );
    fails(
        d,
        &["probe", "gaps", "--source-fps", "25"],
        1,
        &[
            "gaps",
            "000004.jpg is missing between 000003.jpg and 000005.jpg",
        ],
    );
    fails(
        d,
        &[
            "export",
            "frames",
            "norate",
            "--count",
            "2",
            "--out-dir",
            "f",
        ],
        1,
        &["norate", "no frame rate of its own", "--source-fps"],
    );
    fails(
        d,
        &["cut", "v.mp4", "--source-fps", "25", "-o", "o.mp4"],
        1,
        &["v.mp4", "only for image sequences"],
    );
    let m = p(&mot);
    fails(
        d,
        &["cut", &m, "--source-fps", "30", "-o", "o.mp4"],
        1,
        &["own frame rate (25", "says 30"],
    );
    fails(
        d,
        &["cut", "norate", "--source-fps", "25", "-o", "norate/o.mp4"],
        2,
        &["inside the input folder"],
    );
    fails(
        d,
        &["cut", "norate", "--source-fps", "5000", "-o", "o.mp4"],
        2,
        &["outside 0.1..1000"],
    );
    fails(
        d,
        &[
            "cut",
            "norate",
            "--source-fps",
            "25",
            "--copy",
            "-o",
            "o.mp4",
        ],
        1,
        &["image sequence", "--copy"],
    );
    for scheme in [
        "ftp://127.0.0.1/x.mp4",
        "rtmp://127.0.0.1/live",
        "file:v.mp4",
        "concat:v.mp4|v.mp4",
        "subfile:,,start,0,end,100,:v.mp4",
    ] {
        fails(
            d,
            &["probe", scheme],
            1,
            &[scheme, "not a supported source", "http:// or https://"],
        );
    }
    // A manifest names the bad line and the reason.
    std::fs::write(
        d.join("m.jsonl"),
        "{\"id\": \"a\", \"source\": \"gaps\", \"source_fps\": 25}\n{\"id\": \"b\", \"source\": \"ftp://h/x.mp4\"}\n",
    )
    .unwrap();
    let a = vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "out"])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    for s in [
        "line 1",
        "gap",
        "line 2",
        "`ftp:` is not a supported source",
    ] {
        assert!(err.contains(s), "expected {s:?} in: {err}");
    }
    // Only the report: no item folder, no temporaries.
    assert_eq!(support::files_in(&d.join("out")), ["report.jsonl"]);
    assert!(temporaries(d).is_empty());
}

// ------------------------------------------------------------------ http

/// A listener on loopback that accepts connections and never answers. Returns its port.
fn stalling_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn);
        }
    });
    port
}

/// A `tiny_http` server of `data` at `/x.mp4`, with range requests.
fn range_server(data: Vec<u8>) -> Server {
    Server::file("/x.mp4", vec![Version::new(data)], true)
}

#[test]
fn a_url_reads_like_the_local_file() {
    let v = SynthVideo::new(320, 240)
        .frames(150)
        .gop(25)
        .audio_tone(440.0)
        .cached();
    let server = range_server(std::fs::read(&v.path).unwrap());
    let url = server.url("/x.mp4");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // probe: the same as the file's, but for the name and kind.
    let mut remote = probe_json(&[], Path::new(&url));
    let mut local = probe_json(&[], &v.path);
    assert_eq!(remote["kind"], "url");
    assert_eq!(
        remote["size_bytes"], local["size_bytes"],
        "the server's Content-Length"
    );
    for j in [&mut remote, &mut local] {
        j.as_object_mut().unwrap().remove("path");
        j.as_object_mut().unwrap().remove("kind");
    }
    assert_eq!(remote, local);
    // cut and sampled frames: the same bytes from the URL as from the file.
    for (name, args) in [
        (
            "cut",
            vec![
                "cut",
                "--start",
                "33",
                "--end",
                "97",
                "--preset",
                "ultrafast",
            ],
        ),
        (
            "cut_s",
            vec![
                "cut",
                "--start",
                "2.5s",
                "--preset",
                "ultrafast",
                "--no-audio",
            ],
        ),
    ] {
        let (a, b) = (
            d.join(format!("{name}_url.mp4")),
            d.join(format!("{name}_file.mp4")),
        );
        for (src, out) in [(url.as_str(), &a), (p(&v.path).as_str(), &b)] {
            vidprep()
                .arg(args[0])
                .arg(src)
                .args(&args[1..])
                .arg("-o")
                .arg(out)
                .assert()
                .success();
        }
        assert!(
            std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
            "{name}: the clip from the URL differs from the clip from the file"
        );
        let (sa, sb) = (sidecar(&a), sidecar(&b));
        assert_eq!(sa["sources"][0]["path"], url.as_str());
        assert_eq!(
            sa["sources"][0]["size_bytes"],
            sb["sources"][0]["size_bytes"]
        );
        assert_eq!(sa["frames"], sb["frames"]);
    }
    let before = server.seeks.load(Ordering::SeqCst);
    let (a, b) = (d.join("f_url"), d.join("f_file"));
    for (src, out) in [(url.as_str(), &a), (p(&v.path).as_str(), &b)] {
        vidprep()
            .args([
                "export",
                "frames",
                src,
                "--count",
                "6",
                "--workers",
                "2",
                "--out-dir",
            ])
            .arg(out)
            .assert()
            .success();
    }
    for f in frames_json(&a)["frames"].as_array().unwrap() {
        let name = f["file"].as_str().unwrap();
        assert!(
            std::fs::read(a.join(name)).unwrap() == std::fs::read(b.join(name)).unwrap(),
            "{name} differs"
        );
        assert!(f.get("source_file").is_none());
    }
    let seeks = server.seeks.load(Ordering::SeqCst) - before;
    assert!(
        seeks >= 2,
        "sampling 6 frames from the URL made {seeks} range requests after byte 0 ({} requests in all)",
        server.requests.load(Ordering::SeqCst)
    );
    // An export video of a URL re-encodes (nothing is downloaded whole to be copied).
    let out = d.join("model.mp4");
    vidprep()
        .args(["export", "video", &url, "--preset", "ultrafast", "-o"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(oracle::count_frames(&out), 150);
}

#[test]
fn network_failures_are_clear_and_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let v = SynthVideo::new(160, 120).frames(10).cached();
    let server = range_server(std::fs::read(&v.path).unwrap());
    let missing = server.url("/nothere.mp4");
    fails(
        d,
        &["cut", &missing, "-o", "o.mp4"],
        1,
        &[&missing, "404 Not Found"],
    );
    let refused = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        format!("http://127.0.0.1:{port}/x.mp4")
    };
    fails(d, &["probe", &refused], 1, &[&refused, "refused"]);
    fails(
        d,
        &[
            "cut",
            &server.url("/x.mp4"),
            "--source-fps",
            "25",
            "-o",
            "o.mp4",
        ],
        1,
        &["is a URL with its own frame timing", "--source-fps"],
    );
    // A server that accepts and never answers: the network timeout ends it.
    let url = format!("http://127.0.0.1:{}/x.mp4", stalling_server());
    let t0 = Instant::now();
    let a = vidprep()
        .current_dir(d)
        .env("VIDPREP_NETWORK_TIMEOUT", "1")
        .args(["export", "frames", &url, "--out-dir", "f"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1);
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains(&url) && err.contains("did not answer within 1 s"),
        "{err}"
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(!d.join("f").exists());
}

/// #52: image folders of every format FFmpeg's image2 reader decodes that datasets write
/// frames as (a folder of 501 `.pgm` images was "holds no images"): each exported frame is
/// ffmpeg's decode of its image, through the 4:2:0 pipeline.
#[test]
fn image_folders_of_netpbm_jpeg2000_and_tga_frames_are_read() {
    let dir = tempfile::tempdir().unwrap();
    for (ext, pix) in [
        ("pgm", "gray"),
        ("ppm", "rgb24"),
        ("pbm", "monob"),
        ("pam", "rgb24"),
        ("jp2", "rgb24"),
        ("tga", "bgr24"),
    ] {
        let seq = dir.path().join(ext);
        std::fs::create_dir(&seq).unwrap();
        crate::common::cmd::run_ok(
            "ffmpeg",
            &[
                "-v",
                "error",
                "-f",
                "lavfi",
                "-i",
                "testsrc2=size=64x48:rate=25",
                "-frames:v",
                "12",
                "-pix_fmt",
                pix,
                "-start_number",
                "1",
                &seq.join(format!("%04d.{ext}")).display().to_string(),
            ],
        );
        let out = dir.path().join(format!("{ext}-frames"));
        vidprep()
            .args(["export", "frames"])
            .arg(&seq)
            .args([
                "--source-fps",
                "25",
                "--count",
                "3",
                "--format",
                "png",
                "--out-dir",
            ])
            .arg(&out)
            .assert()
            .success();
        let fj: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("frames.json")).unwrap())
                .unwrap();
        assert_eq!(fj["total_frames"], 12, "{ext}");
        for f in fj["frames"].as_array().unwrap() {
            let i = f["source_frame"].as_u64().unwrap() as usize;
            let image = seq.join(format!("{:04}.{ext}", i + 1));
            let got = crate::common::oracle::decode_image(
                &out.join(f["file"].as_str().unwrap()),
                crate::common::oracle::PixFmt::Rgb24,
            );
            // An RGB picture is exported as its own RGB (ffmpeg's decode of it); others
            // through the 4:2:0 pipeline (ffmpeg's conversion).
            let own =
                crate::common::oracle::decode_image(&image, crate::common::oracle::PixFmt::Rgb24);
            let want = crate::common::oracle::pipeline_rgb_at(&image, 0);
            let psnr = crate::common::oracle::psnr(&got, &want);
            // Every format is ffmpeg's to the bit, grey (full range) too.
            assert!(
                got.data == own.data || got.data == want.data,
                "{ext} frame {i}: {psnr:.1} dB from ffmpeg's"
            );
        }
    }
}
