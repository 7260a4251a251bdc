//! Boxes on video whose pixels are not square (a DVD's 720x480 at 8:9, shown 640x480), proved
//! on pixels the ffmpeg CLI decodes: by default a box is on the stored grid (the frames
//! `ffmpeg -i SRC f%d.png` writes, which annotation tools label), so it is drawn where
//! ffmpeg's own `drawbox` draws it; `--grid display` (manifest `"grid": "display"`) takes a
//! box drawn on the square-pixel picture and lands it where players show it. Clips keep the
//! stored size and pixel shape; `export frames` and `export video` are square pixels, the boxes
//! scaled with the picture; sidecars say which grid their boxes are on. Neighbours: 32:27,
//! anamorphic 1440x1080 at 4:3, and a 237:235 MPEG-TS.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::cmd::{p, run_ok};
use common::oracle::{self, DecodeOpts, Frame, PixFmt};
use support::{sidecar, vidprep};

/// A box at x 320..400, y 200..280 on every frame (one track, keyed at both ends).
const BOX: [u32; 4] = [320, 200, 400, 280];

/// `w x h` flat grey with pixel shape `sar` (`8/9`), H.264, in `name` (its container by
/// extension).
fn source(dir: &Path, name: &str, (w, h): (u32, u32), sar: &str) -> PathBuf {
    let out = dir.join(name);
    run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            &format!("color=c=gray:s={w}x{h}:r=30000/1001:d=0.1"),
            "-vf",
            // `max`: the ratio exactly (setsar approximates 237:235 to 100:99 by default).
            &format!("setsar=sar={sar}:max=1000"),
            "-frames:v",
            "3",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-crf",
            "10",
            "-pix_fmt",
            "yuv420p",
            &p(&out),
        ],
    );
    out
}

fn boxes_file(dir: &Path) -> PathBuf {
    let path = dir.join("boxes.json");
    let [x1, y1, x2, y2] = BOX;
    std::fs::write(
        &path,
        format!(
            r#"{{"vidprep_annotations": 1, "coords": "pixels", "tracks": [{{"id": "1", "keys": [
                {{"frame": 0, "box": [{x1}, {y1}, {x2}, {y2}]}},
                {{"frame": 2, "box": [{x1}, {y1}, {x2}, {y2}]}}]}}]}}"#
        ),
    )
    .unwrap();
    path
}

const DRAW: &[&str] = &[
    "--thickness",
    "4",
    "--color",
    "ff0000",
    "--no-labels",
    "--preset",
    "ultrafast",
    "--crf",
    "10",
];

/// The first and last column (inclusive) of red along row `y` of an RGB frame.
fn red_columns(f: &Frame, y: usize) -> Option<(usize, usize)> {
    let red: Vec<usize> = (0..f.width)
        .filter(|&x| {
            let px = f.pixel(0, x, y);
            px[0] > 160 && px[1] < 100 && px[2] < 100
        })
        .collect();
    Some((*red.first()?, *red.last()?))
}

/// Red columns of frame 0 of `video` along the box's middle row, on the stored grid, and
/// as shown (scaled by ffmpeg to `display` width).
fn red_in(video: &Path, display: Option<(u32, u32)>) -> (usize, usize) {
    let opts = match display {
        Some((w, h)) => DecodeOpts::new(PixFmt::Rgb24).size(w, h),
        None => DecodeOpts::new(PixFmt::Rgb24),
    };
    let f = oracle::decode_frame_at_opts(video, 0, &opts);
    let y = ((BOX[1] + BOX[3]) / 2) as usize;
    red_columns(&f, y).unwrap_or_else(|| panic!("{}: no red on row {y}", video.display()))
}

/// ffmpeg's own `drawbox` of the box `x1..x2` (stored pixels) on `src`: the oracle of where a
/// box on the stored grid is drawn.
fn ffmpeg_drawbox(src: &Path, out: &Path, x1: f64, x2: f64) -> (usize, usize) {
    // Corners rounded to whole pixels (a box covers the pixels between them).
    let (x, w) = (x1.round() as i64, (x2.round() - x1.round()) as i64);
    run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-y",
            "-i",
            &p(src),
            "-vf",
            &format!(
                "drawbox=x={x}:y={}:w={w}:h={}:color=red:t=4",
                BOX[1],
                BOX[3] - BOX[1]
            ),
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-crf",
            "10",
            &p(out),
        ],
    );
    red_in(out, None)
}

/// ffprobe's stored size and sample aspect ratio of `path`'s video.
fn grid_of(path: &Path) -> (u32, u32, String) {
    let v = oracle::video_stream(path);
    (
        v["width"].as_u64().unwrap() as u32,
        v["height"].as_u64().unwrap() as u32,
        v["sample_aspect_ratio"]
            .as_str()
            .unwrap_or("1:1")
            .to_string(),
    )
}

fn near(got: (usize, usize), want: (f64, f64), tol: f64, what: &str) {
    assert!(
        (got.0 as f64 - want.0).abs() <= tol && (got.1 as f64 - want.1).abs() <= tol,
        "{what}: red columns {got:?}, expected about {want:?} (within {tol})"
    );
}

/// The DVD case, 720x480 at 8:9: a clip keeps 720x480 8:9; the default box lands on stored
/// 320..400 (ffmpeg's drawbox there), shown at 284..356; `--grid display` lands it on stored
/// 360..450, shown at 320..400. `export frames` writes 640x480 images with the box where it is
/// shown. Sidecars name the grid.
#[test]
fn boxes_on_8_9_pixels_follow_the_grid_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = source(d, "dvd.mp4", (720, 480), "8/9");
    let boxes = boxes_file(d);
    let overlay = |name: &str, extra: &[&str]| {
        let out = d.join(name);
        vidprep()
            .arg("overlay")
            .arg(&src)
            .arg("--boxes")
            .arg(&boxes)
            .args(DRAW)
            .args(extra)
            .arg("-o")
            .arg(&out)
            .assert()
            .success();
        out
    };

    let stored = overlay("stored.mp4", &[]);
    assert_eq!(
        grid_of(&stored),
        (720, 480, "8:9".into()),
        "a clip keeps its pixels"
    );
    let want = ffmpeg_drawbox(&src, &d.join("oracle_stored.mp4"), 320.0, 400.0);
    near(
        red_in(&stored, None),
        (want.0 as f64, want.1 as f64),
        1.0,
        "stored grid vs drawbox",
    );
    // Shown (ffmpeg scales to 640x480): 320 * 8/9 = 284.4, 400 * 8/9 = 355.6.
    near(
        red_in(&stored, Some((640, 480))),
        (284.4, 355.6),
        2.0,
        "stored grid, shown",
    );
    let meta = &sidecar(&stored)["annotations"]["meta"]["fields"];
    assert_eq!(meta["pixel_grid"], "stored", "{meta}");
    assert_eq!(meta["sample_aspect_ratio"], "8:9", "{meta}");

    let display = overlay("display.mp4", &["--grid", "display"]);
    assert_eq!(grid_of(&display), (720, 480, "8:9".into()));
    // 320 * 720/640 = 360, 400 * 720/640 = 450 on the stored grid.
    let want = ffmpeg_drawbox(&src, &d.join("oracle_display.mp4"), 360.0, 450.0);
    near(
        red_in(&display, None),
        (want.0 as f64, want.1 as f64),
        1.0,
        "display grid vs drawbox",
    );
    near(
        red_in(&display, Some((640, 480))),
        (320.0, 399.0),
        2.0,
        "display grid, shown",
    );
    let sc = sidecar(&display);
    assert_eq!(
        sc["request"]["boxes"]["grid"], "display",
        "{}",
        sc["request"]
    );
    // The boxes the sidecar gives are on the clip's stored grid: where the pixels are.
    let key = &sc["annotations"]["tracks"][0]["keys"][0]["box"];
    assert!((key[0].as_f64().unwrap() - 360.0).abs() < 0.01, "{key}");
    assert!((key[2].as_f64().unwrap() - 450.0).abs() < 0.01, "{key}");

    // export frames: square pixels, 640x480, the box scaled with the picture.
    for (grid, want) in [("stored", (284.4, 355.6)), ("display", (320.0, 399.0))] {
        let out = d.join(format!("frames_{grid}"));
        let fj = support::export_frames(
            &src,
            &out,
            &[
                "--count",
                "1",
                "--format",
                "png",
                "--boxes",
                &p(&boxes),
                "--grid",
                grid,
                "--thickness",
                "4",
                "--color",
                "ff0000",
                "--no-labels",
            ],
        );
        let image = out.join(fj["frames"][0]["file"].as_str().unwrap());
        let f = oracle::decode_image(&image, PixFmt::Rgb24);
        assert_eq!((f.width, f.height), (640, 480), "{grid}");
        let y = ((BOX[1] + BOX[3]) / 2) as usize;
        near(
            red_columns(&f, y).unwrap(),
            want,
            2.0,
            &format!("export frames, {grid}"),
        );
        let b = &fj["frames"][0]["boxes"][0];
        assert!(
            (b["x1"].as_f64().unwrap() - want.0).abs() < 0.5,
            "{grid}: {b}"
        );
    }

    // export video: square pixels, and its sidecar says so.
    let video = d.join("video.mp4");
    vidprep()
        .args(["export", "video"])
        .arg(&src)
        .arg("--boxes")
        .arg(&boxes)
        .args(DRAW)
        .arg("-o")
        .arg(&video)
        .assert()
        .success();
    let (w, h, sar) = grid_of(&video);
    assert_eq!((w, h), (640, 480));
    assert!(sar == "1:1" || sar == "0:1", "{sar}");
    near(red_in(&video, None), (284.4, 355.6), 2.0, "export video");
    let meta = &sidecar(&video)["annotations"]["meta"]["fields"];
    assert_eq!(meta["sample_aspect_ratio"], "1:1", "{meta}");
}

/// The same request through the command line and a manifest line (`"grid": "display"`):
/// the same clip, decoded frame for frame.
#[test]
fn the_grid_is_the_same_through_both_doors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = source(d, "dvd.mp4", (720, 480), "8/9");
    let boxes = boxes_file(d);
    let cli = d.join("cli.mp4");
    vidprep()
        .arg("cut")
        .arg(&src)
        .arg("--boxes")
        .arg(&boxes)
        .args([
            "--grid",
            "display",
            "--thickness",
            "4",
            "--color",
            "ff0000",
            "--no-labels",
        ])
        .args(["--preset", "ultrafast", "-o"])
        .arg(&cli)
        .assert()
        .success();
    std::fs::write(
        d.join("m.jsonl"),
        format!(
            "{{\"id\": \"a\", \"source\": \"{}\", \"boxes\": {{\"path\": \"{}\", \"grid\": \"display\", \"thickness\": 4, \"color\": \"ff0000\", \"labels\": false}}, \"exports\": [{{\"kind\": \"clip\"}}]}}\n",
            src.display(),
            boxes.display()
        ),
    )
    .unwrap();
    vidprep()
        .arg("run")
        .arg(d.join("m.jsonl"))
        .arg("--out-dir")
        .arg(d.join("run"))
        .args(["--preset", "ultrafast"])
        .assert()
        .success();
    let run = d.join("run/a/clip.mp4");
    let md5 = |v: &Path| oracle::framemd5(v, &DecodeOpts::new(PixFmt::Yuv420p));
    assert_eq!(md5(&cli), md5(&run));
    assert_eq!(
        sidecar(&cli)["annotations"],
        sidecar(&run)["annotations"],
        "the same boxes"
    );
}

/// Neighbours: 32:27 (720x480 shown 854x480), 1440x1080 at 4:3 (shown 1920x1080) and a 237:235
/// MPEG-TS (720x576 shown 726x576): a display-grid box lands on the stored grid scaled by
/// stored/shown width, where ffmpeg's drawbox puts that box; the clip keeps size and SAR.
#[test]
fn other_pixel_shapes_scale_display_boxes_by_their_own_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let boxes = boxes_file(d);
    for (name, size, sar, shown_w) in [
        ("wide.mp4", (720, 480), "32/27", 854.0),
        ("hdv.mp4", (1440, 1080), "4/3", 1920.0),
        ("ts.ts", (720, 576), "237/235", 726.0),
    ] {
        let src = source(d, name, size, sar);
        let out = d.join(format!("{name}.mp4"));
        vidprep()
            .arg("overlay")
            .arg(&src)
            .arg("--boxes")
            .arg(&boxes)
            .args(["--grid", "display"])
            .args(DRAW)
            .arg("-o")
            .arg(&out)
            .assert()
            .success();
        assert_eq!(grid_of(&src).2, sar.replace('/', ":"), "{name}: the source");
        let (w, h, got_sar) = grid_of(&out);
        assert_eq!((w, h), size, "{name}");
        assert_eq!(got_sar, sar.replace('/', ":"), "{name}");
        let k = size.0 as f64 / shown_w;
        let (x1, x2) = (BOX[0] as f64 * k, BOX[2] as f64 * k);
        let want = ffmpeg_drawbox(&src, &d.join(format!("oracle_{name}.mp4")), x1, x2);
        near(
            red_in(&out, None),
            (want.0 as f64, want.1 as f64),
            1.0,
            name,
        );
        // Shown at the box's own columns.
        near(
            red_in(&out, Some((shown_w as u32, size.1))),
            (BOX[0] as f64, BOX[2] as f64 - 1.0),
            2.0,
            &format!("{name}, shown"),
        );
    }
}

/// The columns and rows of a frame's luma brighter than `level`, as (first column, last
/// column + 1, first row, last row + 1).
fn bright_extent(f: &Frame, level: u8) -> (usize, usize, usize, usize) {
    let (w, h) = (f.width, f.height);
    let (mut x0, mut x1, mut y0, mut y1) = (w, 0, h, 0);
    for y in 0..h {
        for x in 0..w {
            if f.data[y * w + x] > level {
                x0 = x0.min(x);
                x1 = x1.max(x + 1);
                y0 = y0.min(y);
                y1 = y1.max(y + 1);
            }
        }
    }
    (x0, x1, y0, y1)
}

/// A square needle inserted into a DVD-shaped host (720x480 at 8:9, shown 640x480) is shown
/// square: letterboxed on the picture a player shows (480x480 shown, 540x480 stored), the
/// clip keeping the host's size and pixel shape, the needle's box on the stored grid where the
/// needle is. It was fitted to the stored pixels (480x480 stored, shown 427 wide: squeezed).
/// Neighbours: square host pixels (unchanged) and 32:27.
#[test]
fn insert_into_non_square_pixels_keeps_the_needle_shown_square() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The needle: 6 white 120x120 images, its box the whole image.
    let seq = d.join("needle");
    std::fs::create_dir_all(&seq).unwrap();
    run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "color=c=white:s=120x120:r=10:d=0.6",
            "-q:v",
            "2",
            "-start_number",
            "1",
            &p(&seq.join("%08d.jpg")),
        ],
    );
    std::fs::write(seq.join("groundtruth.txt"), "0,0,120,120\n".repeat(6)).unwrap();
    std::fs::write(
        seq.join("meta_info.ini"),
        "[METAINFO]\nobject_class: square\nanno_fps: 10Hz\n",
    )
    .unwrap();
    for (name, sar, shown_w) in [
        ("dvd.mp4", "8/9", 640.0),
        ("square.mp4", "1/1", 720.0),
        ("pal_wide.mp4", "32/27", 854.0),
    ] {
        let host = source(d, name, (720, 480), sar);
        let out = d.join(format!("needle_{name}"));
        vidprep()
            .args(["insert", "--host"])
            .arg(&host)
            .arg("--sequence")
            .arg(&seq)
            .args(["--at", "0", "--preset", "ultrafast", "--crf", "10", "-o"])
            .arg(&out)
            .assert()
            .success();
        let (w, h, got_sar) = grid_of(&out);
        assert_eq!((w, h), (720, 480), "{name}");
        let want_sar = sar.replace('/', ":");
        assert!(
            got_sar == want_sar || (sar == "1/1" && got_sar == "0:1"),
            "{name}: {got_sar}"
        );
        // As a player shows it (ffmpeg's own scale to square pixels): a square of 480.
        let shown = oracle::decode_frames_opts(
            &out,
            &DecodeOpts::new(PixFmt::Gray).size(shown_w as u32, 480),
        );
        let (x0, x1, y0, y1) = bright_extent(&shown[0], 200);
        let (sw, sh) = (x1 - x0, y1 - y0);
        assert_eq!(sh, 480, "{name}: the needle fills the height");
        assert!(
            (sw as f64 - 480.0).abs() <= 3.0,
            "{name}: the needle is shown {sw}x{sh}, not square"
        );
        assert!(
            ((x0 + x1) as f64 / 2.0 - shown_w / 2.0).abs() <= 3.0,
            "{name}: centred"
        );
        // The box, on the stored grid, is where the needle's stored pixels are.
        let stored = oracle::decode_frames_opts(&out, &DecodeOpts::new(PixFmt::Gray));
        let (sx0, sx1, _, _) = bright_extent(&stored[0], 200);
        let ann: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.with_extension("vstar.json")).unwrap())
                .unwrap();
        let b = &ann["bboxes"][0];
        let (bx0, bx1) = (b["xmin"].as_f64().unwrap(), b["xmax"].as_f64().unwrap());
        assert!(
            (bx0 - sx0 as f64).abs() <= 2.0 && (bx1 - sx1 as f64).abs() <= 2.0,
            "{name}: box x {bx0}..{bx1}, needle's stored columns {sx0}..{sx1}"
        );
    }
}
