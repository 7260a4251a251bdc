//! The WebDriver harness itself (`tests/support/webdriver.rs`) against a real headless
//! Chromium: keys (named, special, chords) arrive as the DOM events a page listens for,
//! pointer clicks land where asked from both origins, downloads land in the download folder
//! without a prompt, console errors are collected, screenshots are PNGs, and dropping the
//! browser leaves no chromedriver or Chromium behind. Skips (with a message) when chromedriver
//! or Chromium is absent, unless `VIDPREP_REQUIRE_BROWSER=1`.

use crate::support;

use std::time::Duration;

use serde_json::{json, Value};
use support::webdriver::{pid_alive, Browser, Origin};

const PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><style>
 body { margin: 0; font: 14px sans-serif; }
 #timeline { position: absolute; left: 100px; top: 200px; width: 800px; height: 40px; background: #ccc; }
 #list li { height: 20px; }
</style></head><body>
<input id="name" value="start">
<p id="msg" data-kind="greeting">Hello <b>review</b></p>
<ul id="list"><li>a</li><li>b</li><li>c</li></ul>
<div id="timeline"></div>
<a id="dl">download</a>
<script>
 window.keys = [];
 document.addEventListener('keydown', e => {
   if (e.target.id === 'name') return;
   keys.push({key: e.key, code: e.code, shift: e.shiftKey, ctrl: e.ctrlKey});
   if (e.key === ' ' || e.key.startsWith('Arrow')) e.preventDefault();
 });
 window.clicks = [];
 document.getElementById('timeline').addEventListener('click', e => {
   const r = e.currentTarget.getBoundingClientRect();
   clicks.push({x: e.clientX - r.left, y: e.clientY - r.top, frac: (e.clientX - r.left) / r.width});
 });
 const blob = new Blob(["frame,label\n12,ok\n"], {type: 'text/csv'});
 const a = document.getElementById('dl');
 a.href = URL.createObjectURL(blob); a.download = 'review.csv';
 setTimeout(() => { document.body.dataset.late = '1'; const d = document.createElement('div'); d.id = 'late'; document.body.appendChild(d); }, 300);
 console.error('deliberate console error');
</script></body></html>"#;

#[test]
fn harness_drives_a_real_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let dl = dir.path().join("downloads");
    let page = dir.path().join("page.html");
    std::fs::write(&page, PAGE).unwrap();
    let Some(b) = Browser::start(&dl) else { return };
    b.goto_file(&page);
    assert!(b.url().starts_with("file://"), "{}", b.url());

    // Elements, text, attributes, properties, waiting.
    let msg = b.find("#msg");
    assert_eq!(b.text(&msg), "Hello review");
    assert_eq!(b.attribute(&msg, "data-kind").as_deref(), Some("greeting"));
    assert_eq!(b.attribute(&msg, "data-missing"), None);
    assert_eq!(b.find_all("#list li").len(), 3);
    assert!(b.try_find("#nothing").unwrap().is_none());
    b.wait_for("#late", Duration::from_secs(5));
    b.wait_until(
        "return document.body.dataset.late === '1'",
        Duration::from_secs(5),
    );
    assert!(!b.poll_until("return false", Duration::from_millis(200)));
    let name = b.find("#name");
    b.clear(&name);
    b.send_keys(&name, "clip 7");
    assert_eq!(b.property(&name, "value"), json!("clip 7"));

    // Scripts: arguments (elements too), sync and async results.
    assert_eq!(
        b.execute(
            "return arguments[0] + arguments[1]",
            vec![json!(2), json!(3)]
        ),
        json!(5)
    );
    assert_eq!(
        b.execute("return arguments[0].id", vec![msg.json()]),
        json!("msg")
    );
    assert_eq!(
        b.execute_async(
            "const done = arguments[arguments.length - 1]; setTimeout(() => done(arguments[0] * 2), 50)",
            vec![json!(21)]
        ),
        json!(42)
    );

    // Keys on the page (focus off the input first).
    b.execute("document.activeElement.blur()", vec![]);
    b.press("ArrowLeft");
    b.press_chord(&["Shift", "ArrowRight"]);
    b.press("Space");
    b.press("Escape");
    b.press("k");
    let keys = b.execute("return keys", vec![]);
    let got: Vec<(String, String, bool)> = keys
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["key"].as_str().unwrap().to_string(),
                k["code"].as_str().unwrap().to_string(),
                k["shift"].as_bool().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, String, bool)> = [
        ("ArrowLeft", "ArrowLeft", false),
        ("Shift", "ShiftLeft", true),
        ("ArrowRight", "ArrowRight", true),
        (" ", "Space", false),
        ("Escape", "Escape", false),
        ("k", "KeyK", false),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), *c))
    .collect();
    assert_eq!(got, want, "key events as the page saw them");

    // Pointer clicks: a fraction of the timeline, an offset from the top-left, the centre.
    let tl = b.find("#timeline");
    let r = b.rect(&tl);
    assert_eq!((r.width, r.height), (800.0, 40.0));
    b.click_at_fraction(&tl, 0.25, 0.5);
    b.click_at(&tl, Origin::TopLeft, 10.0, 5.0);
    b.click_at(&tl, Origin::Center, -100.0, 0.0);
    b.click(&tl);
    let clicks = b.execute("return clicks", vec![]);
    let xy: Vec<(f64, f64)> = clicks
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["x"].as_f64().unwrap(), c["y"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        xy,
        vec![(200.0, 20.0), (10.0, 5.0), (300.0, 20.0), (400.0, 20.0)],
        "{clicks}"
    );

    // Download without a prompt into the download folder.
    b.click(&b.find("#dl"));
    let f = b.wait_for_download("review.csv", Duration::from_secs(10));
    assert_eq!(std::fs::read_to_string(f).unwrap(), "frame,label\n12,ok\n");

    // Console errors and uncaught exceptions.
    b.execute(
        "setTimeout(() => { throw new Error('deliberate uncaught') }, 0)",
        vec![],
    );
    std::thread::sleep(Duration::from_millis(200));
    let errs: Vec<String> = b.js_errors().into_iter().map(|e| e.message).collect();
    assert!(
        errs.iter().any(|m| m.contains("deliberate console error")),
        "{errs:?}"
    );
    assert!(
        errs.iter().any(|m| m.contains("deliberate uncaught")),
        "{errs:?}"
    );
    assert!(b.js_errors().is_empty(), "the log drains");

    // Screenshots are PNGs of the window size.
    let png = b.screenshot();
    let img = image::load_from_memory_with_format(&png, image::ImageFormat::Png).unwrap();
    assert!(
        img.width() >= 1000 && img.height() >= 500,
        "{}x{}",
        img.width(),
        img.height()
    );
    let el = image::load_from_memory(&b.element_screenshot(&tl)).unwrap();
    assert_eq!((el.width(), el.height()), (800, 40));

    // A failed command names itself and carries the body.
    let e = b
        .command(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": "##"})),
        )
        .unwrap_err();
    let s = e.to_string();
    assert!(
        s.contains("POST /session/{id}/element") && s.contains("invalid selector"),
        "{s}"
    );
    let v: Value = b.cdp("Browser.getVersion", json!({}));
    assert!(
        v["product"].as_str().unwrap_or("").contains("Chrome"),
        "{v}"
    );

    // No processes outlive the browser.
    let pids = b.process_ids();
    assert!(
        pids.len() >= 3,
        "chromedriver, Chromium and its helpers: {pids:?}"
    );
    drop(b);
    let left: Vec<u32> = pids.into_iter().filter(|&p| pid_alive(p)).collect();
    assert!(left.is_empty(), "processes left behind: {left:?}");
}
