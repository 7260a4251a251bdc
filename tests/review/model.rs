//! "What the model sees" on the review page, in headless Chromium: an item whose frames export
//! has a model profile (qwen3-vl) shows that export's frames as the model receives them, and
//! nothing else there. Checked against the files on disk, independently of the page's code:
//! the export folder's images in name order (their position prefix), each decoded by the
//! ffmpeg CLI; every image the panel shows is that file, at its own size (natural and
//! displayed size equal to the file's), with the same pixels on screen (an element screenshot
//! against ffmpeg's decode); and the `<t seconds>` strings are qwen3-vl's rule computed here
//! (the mean presentation time, from ffprobe, of each pair of the frames
//! `round(linspace(0, n - 1, 4))`, one decimal).
//!
//! Skips with a message when chromedriver or Chromium is absent, unless
//! `VIDPREP_REQUIRE_BROWSER=1` (CI).

use crate::common;

use common::oracle::{self, PixFmt};
use serde_json::json;

use crate::review::browser_page::{reviewed_run, select_item, WAIT};

#[test]
fn the_model_view_shows_the_profiles_frames_as_they_are_on_disk() {
    let line = r#"{"id": "m", "source": "src.mp4", "exports": [{"kind": "clip", "preset": "ultrafast"}, {"kind": "frames", "name": "qwen", "profile": "qwen3-vl", "count": 4, "format": "png"}, {"kind": "frames", "name": "plain", "count": 3}]}"#;
    let Some((dir, browser)) = reviewed_run((320, 240), 50, &[line], &["--manifest", "m.jsonl"])
    else {
        return;
    };
    let (d, b) = (dir.path(), &browser);
    b.goto_file(&d.join("out/review/index.html"));
    select_item(b, "m");

    // The files on disk, in the model's order (their names start with the position).
    let folder = d.join("out/m/qwen");
    let mut files: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".png"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 4, "{files:?}");

    // Every image of the panel loaded and on screen.
    let shown = b.execute(
        "const imgs = [...document.querySelectorAll('#model-view img')];
         imgs.forEach(i => { i.loading = 'eager'; });
         return imgs.length;",
        vec![],
    );
    assert_eq!(shown, json!(4), "only the profile's export is shown");
    b.wait_until(
        "const p = document.getElementById('model-panel');
         const imgs = [...document.querySelectorAll('#model-view img')];
         return !p.hidden && imgs.every(i => i.complete && i.naturalWidth > 0);",
        WAIT,
    );
    let images = b.find_all("#model-view img");
    for (i, (img, name)) in images.iter().zip(&files).enumerate() {
        let disk = oracle::decode_image(&folder.join(name), PixFmt::Rgb24);
        let facts = b.execute(
            "const i = arguments[0]; i.scrollIntoView({block: 'nearest'});
             const r = i.getBoundingClientRect();
             return {src: decodeURIComponent(new URL(i.src).pathname), nw: i.naturalWidth, nh: i.naturalHeight,
                     w: r.width, h: r.height, dpr: window.devicePixelRatio};",
            vec![img.json()],
        );
        assert!(
            facts["src"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/out/m/qwen/{name}")),
            "image {i} is {name}: {facts}"
        );
        let dims = json!([disk.width, disk.height]);
        assert_eq!(json!([facts["nw"], facts["nh"]]), dims, "{name}: {facts}");
        assert_eq!(
            json!([
                facts["w"].as_f64().unwrap() as usize,
                facts["h"].as_f64().unwrap() as usize
            ]),
            dims,
            "{name} is shown at its own size: {facts}"
        );
        // The pixels on screen are the file's.
        let png = b.element_screenshot(img);
        let screen = image::load_from_memory(&png).unwrap().to_rgb8();
        assert_eq!(
            (screen.width() as usize, screen.height() as usize),
            (disk.width, disk.height),
            "{name}: screenshot size (device pixel ratio {})",
            facts["dpr"]
        );
        let mut worst = 0u8;
        for (a, b) in screen.as_raw().iter().zip(&disk.data) {
            worst = worst.max(a.abs_diff(*b));
        }
        assert!(worst <= 2, "{name}: on screen up to {worst} off the file");
    }

    // The `<t seconds>` strings: qwen3-vl's rule over ffprobe's frame times.
    let pts = oracle::frame_pts(&d.join("src.mp4"));
    let n = pts.len();
    let idx: Vec<usize> = (0..4)
        .map(|i| (i as f64 * (n - 1) as f64 / 3.0).round() as usize)
        .collect();
    let want: Vec<String> = idx
        .chunks(2)
        .map(|p| format!("<{:.1} seconds>", (pts[p[0]] + pts[p[1]]) / 2.0))
        .collect();
    let strings = b.execute(
        "return [...document.querySelectorAll('#model-view .model-t')].map(e => e.textContent);",
        vec![],
    );
    assert_eq!(strings, json!(want));
    // Each string comes before its pair.
    let order = b.execute(
        "return [...document.querySelector('#model-view .model-seq').children].map(e => e.tagName);",
        vec![],
    );
    assert_eq!(
        order,
        json!(["SPAN", "FIGURE", "FIGURE", "SPAN", "FIGURE", "FIGURE"])
    );
    let errors = b.js_errors();
    assert!(errors.is_empty(), "JavaScript errors: {errors:?}");
}
