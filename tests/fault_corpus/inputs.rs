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
