//! Inputs that are missing, not files, or not videos.

use super::*;

#[test]
fn missing_input() {
    check(
        case(
            "missing input",
            &["cut", "nothere.mp4", "-o", "o.mp4"],
            &[1],
        )
        .says("nothere.mp4"),
    );
}

#[test]
fn folder_as_input() {
    check(
        case("folder as input", &["cut", "empty", "-o", "o.mp4"], &[1])
            .says("holds no images")
            .with(|d| std::fs::create_dir(d.join("empty")).unwrap()),
    );
}

#[test]
fn fifo_probe() {
    check(
        case("fifo probe", &["probe", "f.mp4"], &[1])
            .says("not a regular file")
            .with(|d| mkfifo(&d.join("f.mp4"))),
    );
}

#[test]
fn fifo_cut() {
    check(
        case("fifo cut", &["cut", "f.mp4", "-o", "o.mp4"], &[1])
            .says("not a regular file")
            .with(|d| mkfifo(&d.join("f.mp4"))),
    );
}

#[test]
fn device_input() {
    check(case("device input", &["probe", "/dev/zero"], &[1]).says("not a regular file"));
}

#[test]
fn empty_file() {
    check(
        case("empty file", &["cut", "e.mp4", "-o", "o.mp4"], &[1])
            .says("e.mp4")
            .with(|d| std::fs::write(d.join("e.mp4"), b"").unwrap()),
    );
}

#[test]
fn text_as_video() {
    check(
        case("text as video", &["cut", "t.mp4", "-o", "o.mp4"], &[1])
            .says("t.mp4")
            .with(|d| std::fs::write(d.join("t.mp4"), b"hello, not a video\n").unwrap()),
    );
}

#[test]
fn truncated_mp4() {
    check(
        case(
            "truncated mp4",
            &["cut", "half.mp4", "-o", "o.mp4"],
            &[0, 1],
        )
        .writes("o.mp4")
        .writes("o.json")
        .with(|d| {
            let bytes = std::fs::read(d.join("g.mp4")).unwrap();
            std::fs::write(d.join("half.mp4"), &bytes[..bytes.len() / 3]).unwrap();
        }),
    );
}

#[test]
fn lying_png_host() {
    check(
        case(
            "lying png host",
            &[
                "insert",
                "--host",
                "big.png",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "a.mp4",
            ],
            &[1],
        )
        .says("big.png")
        .with(|d| lying_png(&d.join("big.png"), 60000, 60000)),
    );
}

#[test]
fn zero_png() {
    check(
        case("zero png", &["probe", "zero.png"], &[1])
            .says("zero.png")
            .with(|d| lying_png(&d.join("zero.png"), 0, 0)),
    );
}

#[test]
fn c_1x1_video() {
    check(
        case("1x1 video", &["cut", "tiny.mkv", "-o", "o.mp4"], &[1])
            .says("tiny.mkv: its pictures are 1x1")
            .with(|d| {
                common::cmd::run_ok(
                    "ffmpeg",
                    &[
                        "-v",
                        "error",
                        "-f",
                        "lavfi",
                        "-i",
                        "color=red:size=2x2:rate=5",
                        "-vf",
                        "scale=1:1",
                        "-frames:v",
                        "5",
                        "-c:v",
                        "ffv1",
                        "-pix_fmt",
                        "bgr0",
                        &d.join("tiny.mkv").display().to_string(),
                    ],
                );
            }),
    );
}

// ------------------------------------------------ image folders with a file cut short

/// `pngs/`: three 160x120 PNGs (f001..f003), the second cut to half its size (FFmpeg's PNG
/// decoder fails on it: it hung `export frames`, a `run` item and `vidprep.sample`, a seek
/// landing where it landed before, again and again).
fn truncated_png_folder(d: &Path) {
    let folder = d.join("pngs");
    std::fs::create_dir(&folder).unwrap();
    common::cmd::run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=160x120:rate=10",
            "-frames:v",
            "3",
            &common::cmd::p(&folder.join("f%03d.png")),
        ],
    );
    cut_in_half(&folder.join("f002.png"));
}

fn cut_in_half(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
}

#[test]
fn truncated_png_in_folder_export_frames_names_it() {
    check(
        case(
            "truncated png: export frames",
            &[
                "export",
                "frames",
                "pngs",
                "--source-fps",
                "10",
                "--count",
                "3",
                "--out-dir",
                "o",
            ],
            &[1],
        )
        .says("f002.png")
        .says("cut short")
        .with(truncated_png_folder),
    );
}

#[test]
fn truncated_png_in_folder_cut_names_it() {
    check(
        case(
            "truncated png: cut",
            &["cut", "pngs", "--source-fps", "10", "-o", "c.mp4"],
            &[1],
        )
        .says("f002.png")
        .with(truncated_png_folder),
    );
}

#[test]
fn truncated_png_in_folder_probe_count_frames_names_it() {
    check(
        case(
            "truncated png: probe --count-frames",
            &["probe", "--count-frames", "pngs", "--source-fps", "10"],
            &[1],
        )
        .says("f002.png")
        .with(truncated_png_folder),
    );
}

#[test]
fn truncated_png_in_folder_run_item_fails_naming_it() {
    check(
        case(
            "truncated png: run",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .writes("out")
        .with(|d| {
            truncated_png_folder(d);
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "pngs", "source_fps": 10, "exports": [{"kind": "frames", "count": 3}]}"#.to_string()],
            );
        })
        .then(|d| {
            let report = std::fs::read_to_string(d.join("out/report.jsonl"))
                .map_err(|e| format!("no report: {e}"))?;
            if report.contains("f002.png") {
                Ok(())
            } else {
                Err(format!("the report does not name f002.png: {report}"))
            }
        }),
    );
}

/// The base sequence `seq/` with its fifth image (frame 4) cut to half its size: FFmpeg's
/// JPEG decoder conceals the missing data without flagging the picture.
fn truncated_jpeg_in_seq(d: &Path) {
    cut_in_half(&d.join("seq/00000005.jpg"));
}

#[test]
fn truncated_jpeg_in_folder_is_reported_as_damage() {
    check(
        case(
            "truncated jpeg: export frames",
            &[
                "export",
                "frames",
                "seq",
                "--source-fps",
                "10",
                "--count",
                "20",
                "--out-dir",
                "o",
            ],
            &[0],
        )
        .says("00000005.jpg")
        .writes("o")
        .with(truncated_jpeg_in_seq)
        .then(|d| {
            let j: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(d.join("o/frames.json")).unwrap())
                    .unwrap();
            let t = &j["sources"][0]["damage"]["truncated_images"];
            if t[0]["frame"] == 4
                && t[0]["file"] == "00000005.jpg"
                && t.as_array().unwrap().len() == 1
            {
                Ok(())
            } else {
                Err(format!(
                    "frames.json's damage: {}",
                    j["sources"][0]["damage"]
                ))
            }
        }),
    );
}

#[test]
fn truncated_jpeg_in_folder_is_refused_by_strict() {
    check(
        case(
            "truncated jpeg: --strict",
            &[
                "export",
                "frames",
                "seq",
                "--source-fps",
                "10",
                "--count",
                "20",
                "--out-dir",
                "o",
                "--strict",
            ],
            &[1],
        )
        .says("00000005.jpg")
        .with(truncated_jpeg_in_seq),
    );
}
