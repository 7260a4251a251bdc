//! Boxes drawn on the review page, round trip: in headless Chromium a reviewer opens the boxes
//! panel of an item, steps to a known span frame (the frame on screen is read back from its
//! painted frame code and must be the source frame the page names), draws a box by dragging
//! with the mouse between known pixels, widens it by its right edge, labels it, and exports
//! the boxes. `vidprep overlay` with that file then draws the box on exactly that source frame
//! at those source pixels: the oracle is the ffmpeg CLI's decode of the overlay's frames,
//! compared with the source's (red where the page put the box's edges, scaled from the shown
//! preview to the source; nothing red on the neighbouring frames). The boxes also persist in
//! the browser (a reload shows them) and in decisions.json.
//!
//! Skips with a message when chromedriver or Chromium is absent, unless
//! `VIDPREP_REQUIRE_BROWSER=1` (CI).

use crate::common;
use crate::support;

use common::oracle::{self, PixFmt};
use serde_json::{json, Value};
use support::vidprep;

use crate::review::browser_page::{
    hold_presentations, reviewed_run, select_item, shown_code, WAIT,
};

/// A pointer drag from one viewport point to another, in steps (as a hand moves).
fn drag(b: &support::webdriver::Browser, from: (i64, i64), to: (i64, i64)) {
    let mut acts = vec![
        json!({"type": "pointerMove", "duration": 0, "origin": "viewport", "x": from.0, "y": from.1}),
        json!({"type": "pointerDown", "button": 0}),
    ];
    for i in 1..=5 {
        let f = i as f64 / 5.0;
        acts.push(
            json!({"type": "pointerMove", "duration": 20, "origin": "viewport",
            "x": (from.0 as f64 + (to.0 - from.0) as f64 * f).round() as i64,
            "y": (from.1 as f64 + (to.1 - from.1) as f64 * f).round() as i64}),
        );
    }
    acts.push(json!({"type": "pointerUp", "button": 0}));
    b.actions(json!([{"type": "pointer", "id": "mouse",
        "parameters": {"pointerType": "mouse"}, "actions": acts}]));
}

/// Whether an RGB pixel is the overlay's pure red (after x264 at crf 0 and 4:2:0 chroma).
fn red(p: &[u8]) -> bool {
    p[0] > 160 && p[1] < 90 && p[2] < 90
}

#[test]
fn a_box_drawn_on_the_page_is_drawn_by_overlay_on_that_source_frame_at_those_pixels() {
    // 640x360 source: the preview is 480x270, so a preview pixel is 4/3 source pixels.
    let line = r#"{"id": "a", "source": "src.mp4", "start": 10, "end": 30, "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#;
    let Some((dir, browser)) = reviewed_run((640, 360), 40, &[line], &["--manifest", "m.jsonl"])
    else {
        return;
    };
    let (d, b) = (dir.path(), &browser);
    b.goto_file(&d.join("out/review/index.html"));
    select_item(b, "a");

    // Open the boxes panel and step to span frame 7: source frame 17, on screen.
    b.click(&b.find("#boxes-panel > summary"));
    let next = b.find("#box-next");
    for _ in 0..7 {
        b.click(&next);
    }
    b.wait_until(
        "const l = document.getElementById('box-label');
         return l.dataset.frame === '7' && l.dataset.ready === 'true';",
        WAIT,
    );
    let label = b.find("#box-label");
    assert_eq!(
        b.attribute(&label, "data-source-frame").as_deref(),
        Some("17")
    );
    assert_eq!(
        shown_code(b, &b.find("#box-view")),
        Some(17),
        "the frame under the boxes is source frame 17"
    );

    // Draw: drag from (150, 45) to (300, 195) preview pixels, then pull the right edge 30 px
    // (source x 200..440: off the red bar at the left of the synthetic frames).
    let layer = b.find("#box-layer");
    let r = b.rect(&layer);
    assert_eq!(
        (r.width, r.height),
        (480.0, 270.0),
        "the preview at its own size"
    );
    let at = |x: f64, y: f64| ((r.x + x).round() as i64, (r.y + y).round() as i64);
    let (p0, p1) = (at(150.0, 45.0), at(300.0, 195.0));
    drag(b, p0, p1);
    // The right edge's handle is centred 1 px right of the edge, half way down.
    let edge = at(
        (p1.0 as f64 - r.x) + 1.0,
        ((p0.1 + p1.1) as f64 / 2.0 - r.y).floor(),
    );
    drag(b, edge, (edge.0 + 30, edge.1));
    let to_source =
        |v: i64, origin: f64, size: f64, source: f64| (v as f64 - origin) / size * source;
    let want = [
        to_source(p0.0, r.x, r.width, 640.0),
        to_source(p0.1, r.y, r.height, 360.0),
        to_source(p1.0 + 30, r.x, r.width, 640.0),
        to_source(p1.1, r.y, r.height, 360.0),
    ];
    // A label and a track id.
    let label_input = b.find("#box-list .box-label-input");
    b.click(&label_input);
    b.send_keys(&label_input, "ball");
    b.press("Escape");
    b.click(&b.find("#box-list .box-track"));
    b.press_chord(&["Control", "a"]);
    b.type_text("7");
    b.press("Escape");

    let file = b.execute("return window.vidprepReview.boxesFile();", vec![]);
    assert_eq!(file["vidprep_annotations"], 1, "{file}");
    assert_eq!(file["coords"], "pixels");
    assert_eq!(file["meta"]["frame_size"], json!([640, 360]));
    let tracks = file["tracks"].as_array().unwrap();
    assert_eq!(tracks.len(), 1, "{file}");
    assert_eq!(tracks[0]["id"], "7");
    assert_eq!(tracks[0]["label"], "ball");
    let keys = tracks[0]["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1, "{file}");
    assert_eq!(keys[0]["frame"], 17, "the source's frame number");
    let got: Vec<f64> = keys[0]["box"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1.5, "box {got:?}, expected {want:?}");
    }

    // Export: the download is that file.
    b.click(&b.find("#export-boxes"));
    let downloaded = b.wait_for_download("a.boxes.json", WAIT);
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(&downloaded).unwrap()).unwrap();
    assert_eq!(on_disk, file);

    // Kept in the browser (a reload shows the box) and in decisions.json.
    b.goto_file(&d.join("out/review/index.html"));
    select_item(b, "a");
    b.wait_until(
        "return document.querySelectorAll('#box-list .box-row').length === 1;",
        WAIT,
    );
    b.click(&b.find("#export"));
    let decisions_file = b.wait_for_download("decisions.json", WAIT);
    let held: Value =
        serde_json::from_str(&std::fs::read_to_string(&decisions_file).unwrap()).unwrap();
    assert_eq!(held["items"][0]["boxes"][0]["frame"], 17, "{held}");
    assert_eq!(held["items"][0]["boxes"][0]["track"], "7");
    assert_eq!(held["items"][0]["boxes"][0]["label"], "ball");
    let errors = b.js_errors();
    assert!(errors.is_empty(), "JavaScript errors: {errors:?}");
    drop(browser);

    // review-apply reads decisions with boxes (and leaves the manifest's items as they are).
    vidprep()
        .current_dir(d)
        .arg("review-apply")
        .arg(&decisions_file)
        .args(["--manifest", "m.jsonl"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(d.join("m.reviewed.jsonl")).unwrap(),
        format!("{line}\n")
    );

    // overlay draws it on source frame 17 only, at those pixels.
    vidprep()
        .current_dir(d)
        .args(["overlay", "src.mp4", "--boxes"])
        .arg(&downloaded)
        .args(["--fill", "none", "--color", "ff0000", "--no-labels"])
        .args(["--thickness", "4", "--crf", "0", "--preset", "ultrafast"])
        .args(["-o", "ov.mp4"])
        .assert()
        .success();
    let (x1, y1, x2, y2) = (want[0], want[1], want[2], want[3]);
    let frame = |path: &str, i: u64| oracle::decode_frame_at(&d.join(path), i, PixFmt::Rgb24);
    let px = |f: &oracle::Frame, x: usize, y: usize| f.pixel(0, x, y).to_vec();
    // Red columns of row `y` and red rows of column `x` that the source does not have.
    let red_cols = |f: &oracle::Frame, s: &oracle::Frame, y: usize| -> Vec<usize> {
        (0..f.width)
            .filter(|&x| red(&px(f, x, y)) && !red(&px(s, x, y)))
            .collect()
    };
    let red_rows = |f: &oracle::Frame, s: &oracle::Frame, x: usize| -> Vec<usize> {
        (0..f.height)
            .filter(|&y| red(&px(f, x, y)) && !red(&px(s, x, y)))
            .collect()
    };
    let near = |found: &[usize], at: f64| found.iter().any(|&v| (v as f64 - at).abs() <= 3.0);
    let (ov, src) = (frame("ov.mp4", 17), frame("src.mp4", 17));
    let (mid_y, mid_x) = (((y1 + y2) / 2.0) as usize, ((x1 + x2) / 2.0) as usize);
    let cols = red_cols(&ov, &src, mid_y);
    let rows = red_rows(&ov, &src, mid_x);
    assert!(
        near(&cols, x1) && near(&cols, x2),
        "frame 17, row {mid_y}: red at columns {cols:?}, expected the edges x = {x1:.1} and {x2:.1}"
    );
    assert!(
        near(&rows, y1) && near(&rows, y2),
        "frame 17, column {mid_x}: red at rows {rows:?}, expected the edges y = {y1:.1} and {y2:.1}"
    );
    assert!(
        cols.iter()
            .all(|&c| (c as f64 - x1).abs() <= 6.0 || (c as f64 - x2).abs() <= 6.0),
        "red only at the box's edges: {cols:?}"
    );
    for other in [16, 18] {
        let (ov, src) = (frame("ov.mp4", other), frame("src.mp4", other));
        assert!(
            red_cols(&ov, &src, mid_y).is_empty() && red_rows(&ov, &src, mid_x).is_empty(),
            "frame {other} has no box"
        );
    }
}

#[test]
fn the_box_view_is_not_ready_until_its_frame_is_presented() {
    // The box view said ready on `seeked` whatever the screen held (the frame view's CI
    // failure: "ready" over the previous frame on a loaded machine); it now shares the frame
    // view's seeker, ready only once a presented frame proves the wanted one.
    let line = r#"{"id": "a", "source": "src.mp4", "start": 10, "end": 30, "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#;
    let Some((dir, browser)) = reviewed_run((320, 180), 40, &[line], &["--manifest", "m.jsonl"])
    else {
        return;
    };
    let b = &browser;
    b.goto_file(&dir.path().join("out/review/index.html"));
    select_item(b, "a");
    // Presentations of the box view are held back while window.__hold is set.
    hold_presentations(b, "box-view");
    b.click(&b.find("#boxes-panel > summary"));
    b.wait_until(
        "const l = document.getElementById('box-label');
         return l.dataset.frame === '0' && l.dataset.ready === 'true';",
        WAIT,
    );
    b.execute("window.__hold = true;", vec![]);
    b.click(&b.find("#box-next"));
    std::thread::sleep(std::time::Duration::from_secs(3));
    let state = b.execute(
        "const l = document.getElementById('box-label'), v = document.getElementById('box-view');
         return {frame: l.dataset.frame, ready: l.dataset.ready, held: window.__held.length,
                 seeking: v.seeking};",
        vec![],
    );
    assert_eq!(state["frame"], json!("1"), "{state}");
    assert_eq!(state["seeking"], json!(false), "the seek is done: {state}");
    assert_eq!(
        state["ready"],
        json!("false"),
        "no presentation proved the frame, yet the box view says ready: {state}"
    );
    b.execute("window.__hold = false;", vec![]);
    b.wait_until(
        "const l = document.getElementById('box-label'); return l.dataset.ready === 'true';",
        WAIT,
    );
    assert_eq!(shown_code(b, &b.find("#box-view")), Some(11));
}
