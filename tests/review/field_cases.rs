//! The review page's timeline captions in a real headless Chromium: every thumbnail's caption
//! (its time and frame) fits inside its tile, so none is cut off ("1.13 s · f"). Skips with a
//! message when chromedriver or Chromium is absent, unless `VIDPREP_REQUIRE_BROWSER=1`.

use crate::common;
use crate::support;

use std::time::Duration;

use common::synth::SynthVideo;
use serde_json::Value;
use support::vidprep;
use support::webdriver::Browser;

const WAIT: Duration = Duration::from_secs(20);

#[test]
fn timeline_captions_are_not_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let downloads = d.join("downloads");
    std::fs::create_dir(&downloads).unwrap();
    let Some(mut browser) = Browser::start(&downloads) else {
        return;
    };
    browser.set_script_timeout(WAIT);
    let source = SynthVideo::new(640, 360).frames(300).gop(25).cached();
    std::fs::copy(&source.path, d.join("src.mp4")).unwrap();
    std::fs::write(
        d.join("m.jsonl"),
        r#"{"id": "a", "source": "src.mp4", "start": 10, "end": 290, "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#
            .to_string()
            + "\n",
    )
    .unwrap();
    vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "out"])
        .assert()
        .success();
    vidprep()
        .current_dir(d)
        .args(["review", "out", "--manifest", "m.jsonl"])
        .assert()
        .success();
    let b = &browser;
    b.goto_file(&d.join("out/review/index.html"));
    b.wait_until(
        "return document.querySelectorAll('#item-list .item-row').length === 1;",
        WAIT,
    );
    b.click(&b.find(".item-row[data-id='a']"));
    b.wait_until(
        "return document.querySelectorAll('.tl-thumb-label').length > 0;",
        WAIT,
    );
    // Per caption: its text, whether its text overflows it, and whether it overflows its tile.
    let got = b.execute(
        "return Array.from(document.querySelectorAll('.tl-thumb-label')).map(function (l) {\
           var tile = l.parentElement.getBoundingClientRect(), r = l.getBoundingClientRect();\
           return [l.textContent, l.scrollWidth > l.clientWidth + 1, r.right > tile.right + 1,\
                   r.top < tile.top - 1, l.scrollWidth, l.clientWidth, tile.width]; });",
        vec![],
    );
    let labels = got.as_array().unwrap();
    assert!(labels.len() >= 10, "{got}");
    for l in labels {
        let text = l[0].as_str().unwrap();
        assert!(
            text.contains('s') && text.contains('f'),
            "caption {text:?} names the time and the frame"
        );
        assert_eq!(
            (&l[1], &l[2], &l[3]),
            // (the widths follow: the caption's text, its box, its tile)
            (
                &Value::Bool(false),
                &Value::Bool(false),
                &Value::Bool(false)
            ),
            "caption {text:?} is cut off: {l}"
        );
    }
}
