//! Visual prompting, proved on pixels decoded by the ffmpeg CLI: box edges carry the track's
//! colour, pixels away from boxes are the source's, absent frames have no box, interpolated
//! boxes sit where the formula puts them; and the boxes written to sidecars follow the video
//! through cuts and truncation. Real data: MOT detections over PETS09 and GOT-10k boxes over
//! the VOT "bag" video.

use crate::common;
use crate::support;

use std::path::Path;

use common::oracle::{self, Frame, PixFmt};
use common::palette::track_yuv_bt601;
use common::synth::SynthVideo;
use support::{shared, sidecar, vidprep};
use vidprep::boxes::{from_native_str, Entry, Key};

/// Two tracks: "a" keyed at frames 0 and 20 (interpolated between), absent at 30, back at 40;
/// "b" at frames 5 and 15 only. Boxes are even-aligned so chroma lines up.
const BOXES: &str = r#"{
  "vidprep_annotations": 1,
  "coords": "pixels",
  "tracks": [
    {"id": "a", "label": "car", "keys": [
      {"frame": 0, "box": [40, 80, 120, 160]},
      {"frame": 20, "box": [120, 80, 200, 160]},
      {"frame": 30, "absent": true},
      {"frame": 40, "box": [200, 120, 280, 200]}
    ]},
    {"id": "b", "keys": [
      {"frame": 5, "box": [220, 60, 300, 100]},
      {"frame": 15, "box": [220, 60, 300, 100]}
    ]}
  ]
}"#;

fn yuv_at(f: &Frame, x: usize, y: usize) -> (i32, i32, i32) {
    let (w, _) = (f.width, f.height);
    let luma = f.plane(0)[y * w + x] as i32;
    let cw = w.div_ceil(2);
    let u = f.plane(1)[(y / 2) * cw + x / 2] as i32;
    let v = f.plane(2)[(y / 2) * cw + x / 2] as i32;
    (luma, u, v)
}

fn assert_colour(f: &Frame, x: usize, y: usize, track: usize, what: &str) {
    let want = track_yuv_bt601(track);
    let (y_, u, v) = yuv_at(f, x, y);
    let close = (y_ - want.y as i32).abs() <= 12
        && (u - want.u as i32).abs() <= 12
        && (v - want.v as i32).abs() <= 12;
    assert!(
        close,
        "{what}: ({x},{y}) is YUV ({y_},{u},{v}), track colour is ({},{},{})",
        want.y, want.u, want.v
    );
}

fn assert_not_colour(f: &Frame, x: usize, y: usize, track: usize, what: &str) {
    let want = track_yuv_bt601(track);
    let (y_, u, v) = yuv_at(f, x, y);
    let close = (y_ - want.y as i32).abs() <= 12
        && (u - want.u as i32).abs() <= 12
        && (v - want.v as i32).abs() <= 12;
    assert!(
        !close,
        "{what}: ({x},{y}) has the track colour but should not"
    );
}

/// PSNR of the luma outside every box (and outside the label tabs above them).
fn psnr_outside(a: &Frame, b: &Frame, boxes: &[(usize, usize, usize, usize)]) -> f64 {
    let w = a.width;
    let (mut se, mut n) = (0f64, 0f64);
    for y in 0..a.height {
        for x in 0..w {
            let inside = boxes
                .iter()
                .any(|&(x0, y0, x1, y1)| x + 2 >= x0 && x < x1 + 2 && y + 30 >= y0 && y < y1 + 2);
            if inside {
                continue;
            }
            let d = a.plane(0)[y * w + x] as f64 - b.plane(0)[y * w + x] as f64;
            se += d * d;
            n += 1.0;
        }
    }
    if se == 0.0 {
        f64::INFINITY
    } else {
        10.0 * (255.0f64 * 255.0 / (se / n)).log10()
    }
}

fn overlay(src: &Path, dir: &Path, name: &str, extra: &[&str]) -> std::path::PathBuf {
    let boxes = dir.join("boxes.json");
    std::fs::write(&boxes, BOXES).unwrap();
    let out = dir.join(name);
    vidprep()
        .arg("overlay")
        .arg(src)
        .arg("--boxes")
        .arg(&boxes)
        .args([
            "--thickness",
            "4",
            "--preset",
            "ultrafast",
            "--crf",
            "8",
            "-o",
        ])
        .arg(&out)
        .args(extra)
        .assert()
        .success();
    out
}

#[test]
fn boxes_are_drawn_where_the_annotations_say() {
    let v = SynthVideo::new(320, 240).frames(50).label(false).cached();
    let dir = tempfile::tempdir().unwrap();
    let out = overlay(&v.path, dir.path(), "o.mp4", &["--no-labels"]);
    let src = oracle::decode_frames(&v.path, PixFmt::Yuv420p, None);
    let got = oracle::decode_frames(&out, PixFmt::Yuv420p, None);
    assert_eq!(got.len(), 50);
    // Frame 0: track a at (40,80)-(120,160): top edge, left edge, inner corner.
    assert_colour(&got[0], 80, 81, 0, "frame 0 top edge");
    assert_colour(&got[0], 41, 120, 0, "frame 0 left edge");
    assert_colour(&got[0], 118, 158, 0, "frame 0 bottom-right corner");
    assert_not_colour(&got[0], 80, 120, 0, "frame 0 box interior");
    // Frame 10: halfway between the keys, (80,80)-(160,160).
    assert_colour(&got[10], 81, 120, 0, "frame 10 interpolated left edge");
    assert_colour(&got[10], 158, 120, 0, "frame 10 interpolated right edge");
    assert_not_colour(&got[10], 41, 120, 0, "frame 10 old left edge");
    // Frame 25: still interpolated? No: the key at 30 is absent, so 20..30 has no box.
    assert_not_colour(
        &got[25],
        121,
        120,
        0,
        "frame 25 (between a box and an absence)",
    );
    assert_not_colour(&got[30], 121, 120, 0, "frame 30 (absent)");
    // Track b, its own colour, only between its keys.
    assert_colour(&got[10], 260, 61, 1, "frame 10 track b top edge");
    assert_not_colour(&got[3], 260, 61, 1, "frame 3 before track b");
    assert_not_colour(&got[16], 260, 61, 1, "frame 16 after track b");
    // Away from the boxes the picture is the source's.
    let boxes_on = |i: usize| -> Vec<(usize, usize, usize, usize)> {
        let mut b = vec![
            (40, 80, 200, 160),
            (220, 60, 300, 100),
            (200, 120, 280, 200),
        ];
        if i >= 40 {
            b.push((200, 120, 280, 200));
        }
        b
    };
    for i in [0, 10, 25, 30, 45] {
        let p = psnr_outside(&got[i], &src[i], &boxes_on(i));
        assert!(p >= 40.0, "frame {i}: PSNR outside the boxes {p:.2} dB");
    }
    // A frame with no box at all is the source frame.
    assert!(oracle::psnr(&got[30], &src[30]) >= 40.0);
}

#[test]
fn labels_sit_on_a_tab_in_the_track_colour() {
    let v = SynthVideo::new(320, 240).frames(10).label(false).cached();
    let dir = tempfile::tempdir().unwrap();
    let out = overlay(&v.path, dir.path(), "l.mp4", &[]);
    let got = oracle::decode_frames(&out, PixFmt::Yuv420p, None);
    // The tab is above the box's top-left corner (y < 80), starting at x = 40.
    let f = &got[0];
    let tab: Vec<(usize, usize)> = (66..80)
        .flat_map(|y| (40..70).map(move |x| (x, y)))
        .collect();
    let coloured = tab.iter().filter(|&&(x, y)| {
        let want = track_yuv_bt601(0);
        let (y_, u, v) = yuv_at(f, x, y);
        (y_ - want.y as i32).abs() <= 12
            && (u - want.u as i32).abs() <= 16
            && (v - want.v as i32).abs() <= 16
    });
    assert!(
        coloured.count() > tab.len() / 3,
        "no label tab above the box"
    );
    // Text pixels are much lighter than the tab (white ink on red).
    assert!(
        tab.iter().any(|&(x, y)| yuv_at(f, x, y).0 > 180),
        "no text on the tab"
    );
}

#[test]
fn sidecar_boxes_follow_the_cut_and_truncation() {
    let v = SynthVideo::new(320, 240).frames(50).cached();
    let dir = tempfile::tempdir().unwrap();
    // Overlay only [frame 10, frame 45) and truncate 1 s into the clip (frames 10..35).
    let out = overlay(
        &v.path,
        dir.path(),
        "c.mp4",
        &[
            "--start",
            "10",
            "--end",
            "45",
            "--decision",
            "1s",
            "--boxes-out",
            "vstar",
        ],
    );
    let sc = sidecar(&out);
    assert_eq!(sc["kind"], "clip");
    let text = serde_json::to_string(&sc["annotations"]).unwrap();
    let ann = from_native_str(&text, Path::new("sidecar")).unwrap();
    assert_eq!(ann.meta.frame_count, Some(25));
    let a = ann.tracks.iter().find(|t| t.id == "a").unwrap();
    // Output frame 0 = source frame 10: the interpolated box (80,80)-(160,160).
    assert_eq!(
        a.keys.get(&Key::Frame(0)),
        Some(&Entry::Present(vidprep::boxes::BBox {
            x1: 80.0,
            y1: 80.0,
            x2: 160.0,
            y2: 160.0
        }))
    );
    // Source frames 20..30 have no box for a, 30 is absent; the clip ends before 40.
    assert!(a
        .keys
        .keys()
        .all(|k| matches!(k, Key::Frame(f) if *f <= 10)));
    let b = ann.tracks.iter().find(|t| t.id == "b").unwrap();
    assert_eq!(
        b.keys.len(),
        6,
        "b covers source frames 10..=15 = output 0..=5"
    );
    // The V-STaR file holds the same boxes with output frame indices and times.
    let vs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("c.vstar.json")).unwrap())
            .unwrap();
    let item_a = vs
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["object"] == "car")
        .unwrap();
    assert_eq!(item_a["frame_count"], 25);
    assert_eq!(item_a["bboxes"][0]["frame_index"], 0);
    assert_eq!(item_a["bboxes"][0]["xmin"], 80.0);
    assert_eq!(item_a["bboxes"][5]["timestamp"], 0.2);
}

#[test]
fn cut_and_truncate_carry_boxes_without_drawing_when_asked() {
    let v = SynthVideo::new(320, 240).frames(50).cached();
    let dir = tempfile::tempdir().unwrap();
    let boxes = dir.path().join("boxes.json");
    std::fs::write(&boxes, BOXES).unwrap();
    let out = dir.path().join("t.mp4");
    vidprep()
        .arg("truncate")
        .arg(&v.path)
        .args([
            "--at",
            "12",
            "--preset",
            "ultrafast",
            "--crf",
            "8",
            "--no-draw",
            "--boxes",
        ])
        .arg(&boxes)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    // Not drawn: the output is the source.
    let src = oracle::decode_frames(&v.path, PixFmt::Yuv420p, None);
    let got = oracle::decode_frames(&out, PixFmt::Yuv420p, None);
    assert_eq!(got.len(), 12);
    for (i, f) in got.iter().enumerate() {
        assert!(oracle::psnr(f, &src[i]) >= 40.0);
    }
    let sc = sidecar(&out);
    let ann = from_native_str(
        &serde_json::to_string(&sc["annotations"]).unwrap(),
        Path::new("s"),
    )
    .unwrap();
    let a = ann.tracks.iter().find(|t| t.id == "a").unwrap();
    assert_eq!(a.keys.len(), 12);
    assert_eq!(sc["request"]["boxes"]["draw"], false);
}

#[test]
fn manifest_items_can_draw_boxes() {
    let v = SynthVideo::new(320, 240).frames(50).label(false).cached();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("boxes.json"), BOXES).unwrap();
    let src = v.path.display().to_string();
    let manifest = dir.path().join("m.jsonl");
    std::fs::write(
        &manifest,
        format!(
            "{{\"id\": \"drawn\", \"source\": \"{src}\", \"end\": 20, \"boxes\": {{\"path\": \"boxes.json\", \"format\": \"vidprep\", \"thickness\": 4, \"labels\": false}}}}\n\
             {{\"id\": \"plain\", \"source\": \"{src}\", \"end\": 20, \"boxes\": {{\"path\": \"boxes.json\", \"draw\": false}}}}\n\
             {{\"id\": \"bad\", \"source\": \"{src}\", \"annotations\": {{\"fill\": \"hold\"}}}}\n"
        ),
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let a = vidprep()
        .args(["cut", "--manifest"])
        .arg(&manifest)
        .arg("--out-dir")
        .arg(&out_dir)
        .args(["--preset", "ultrafast", "--crf", "8"])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("line 3") && err.contains("\"annotations\" is not a plan field"),
        "{err}"
    );
    let drawn = oracle::decode_frames(&out_dir.join("drawn/clip.mp4"), PixFmt::Yuv420p, None);
    assert_colour(&drawn[0], 80, 81, 0, "manifest item drawn");
    let plain = oracle::decode_frames(&out_dir.join("plain/clip.mp4"), PixFmt::Yuv420p, None);
    assert_not_colour(&plain[0], 80, 81, 0, "manifest item with draw false");
    assert_eq!(sidecar(&out_dir.join("plain/clip.mp4"))["kind"], "clip");
}

#[test]
fn mot_detections_over_pets09() {
    let (Some(video), Some(det)) = (shared("pets09/vtest.avi"), shared("pets09/det.txt")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pets.mp4");
    vidprep()
        .arg("overlay")
        .arg(&video)
        .arg("--boxes")
        .arg(&det)
        .args([
            "--end",
            "30",
            "--thickness",
            "4",
            "--preset",
            "ultrafast",
            "--crf",
            "8",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    // det.txt line 1: frame 1 (our frame 0), box x=-2.6049 y=307.56 w=37.593 h=96.887;
    // find the first detection of frame 1 fully inside the picture and check its top edge.
    let text = std::fs::read_to_string(&det).unwrap();
    let inside = text
        .lines()
        .map(|l| {
            l.split(',')
                .map(|x| x.trim().parse::<f64>().unwrap())
                .collect::<Vec<_>>()
        })
        .find(|r| {
            r[0] == 1.0 && r[2] > 10.0 && r[3] > 10.0 && r[2] + r[4] < 750.0 && r[3] + r[5] < 560.0
        })
        .unwrap();
    let (x, y, w) = (inside[2], inside[3], inside[4]);
    let got = oracle::decode_frames(&out, PixFmt::Yuv420p, None);
    let f = &got[0];
    let mid = (x + w / 2.0).round() as usize;
    let top = y.round() as usize + 1;
    // Detections (no tracks) use the first palette colour; 768x576 is SD, BT.601.
    assert_colour(f, mid, top, 0, "PETS09 detection top edge");
    let sc = sidecar(&out);
    let ann = from_native_str(
        &serde_json::to_string(&sc["annotations"]).unwrap(),
        Path::new("s"),
    )
    .unwrap();
    let expected = text
        .lines()
        .filter(|l| l.split(',').next().unwrap().trim().parse::<u32>().unwrap() <= 30)
        .count();
    assert_eq!(
        ann.detections.len(),
        expected,
        "every detection of frames 1..=30 is in the sidecar"
    );
}

#[test]
fn got10k_boxes_over_the_bag_video() {
    let (Some(video), Some(seq)) = (shared("host/bag.avi"), shared("got10k/VOT_bag")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bag.mp4");
    vidprep()
        .arg("overlay")
        .arg(&video)
        .arg("--boxes")
        .arg(&seq)
        .args([
            "--thickness",
            "4",
            "--no-labels",
            "--preset",
            "ultrafast",
            "--crf",
            "8",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let gt = std::fs::read_to_string(seq.join("groundtruth.txt")).unwrap();
    let rows: Vec<Vec<f64>> = gt
        .lines()
        .map(|l| l.split(',').map(|x| x.trim().parse().unwrap()).collect())
        .collect();
    let got = oracle::decode_frames(&out, PixFmt::Yuv420p, None);
    assert_eq!(got.len(), rows.len());
    for i in [0usize, 50, 100, 150, 195] {
        let r = &rows[i];
        let (x, y, w, h) = (r[0], r[1], r[2], r[3]);
        let (fw, fh) = (480.0, 360.0);
        if x < 2.0 || y < 2.0 || x + w > fw - 2.0 || y + h > fh - 2.0 {
            continue;
        }
        assert_colour(
            &got[i],
            (x + w / 2.0) as usize,
            y.round() as usize + 1,
            0,
            &format!("bag frame {i} top edge"),
        );
        assert_colour(
            &got[i],
            x.round() as usize + 1,
            (y + h / 2.0) as usize,
            0,
            &format!("bag frame {i} left edge"),
        );
    }
}
