//! The review page and untrusted run folders (issue 22):
//!
//! - ids that are JavaScript member names (`toString`, `constructor`, `hasOwnProperty`,
//!   `__proto__`) get verdicts, survive a reload and an export, `review-apply` reads the
//!   export, and `Object.prototype` is untouched (headless Chromium over WebDriver; skipped
//!   without a browser unless `VIDPREP_REQUIRE_BROWSER=1`);
//! - the page's saved state is keyed by the run (its `item.json` records), not its path;
//! - `vidprep review OUT` without `--manifest` does not fetch a URL nor read a file outside
//!   OUT that only a sidecar names (a local listener sees no connection), unless
//!   `--trust-sidecars`;
//! - `review` refuses while a `run` holds the folder's lock.
//!
//! One `#[test]` per case. Oracles: the browser's own objects, the file system, a TCP listener.

use crate::common;
use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use common::synth::SynthVideo;
use serde_json::{json, Value};
use support::vidprep;
use support::webdriver::Browser;

const WAIT: Duration = Duration::from_secs(20);

/// A folder with `src.mp4` (a small coded video) and the run `out/` of `ids` (one clip each).
fn run_of(ids: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let source = SynthVideo::new(320, 240).frames(20).cached();
    std::fs::copy(&source.path, d.join("src.mp4")).unwrap();
    let lines: Vec<String> = ids
        .iter()
        .map(|id| {
            json!({"id": id, "source": "src.mp4", "exports": [{"kind": "clip", "preset": "ultrafast"}]})
                .to_string()
        })
        .collect();
    std::fs::write(d.join("m.jsonl"), lines.join("\n") + "\n").unwrap();
    vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "out"])
        .assert()
        .success();
    dir
}

/// The page's index data (`data/index.js` is `window.VIDPREP_REVIEW_INDEX = {...};`).
fn index_of(page: &Path) -> Value {
    let text = std::fs::read_to_string(page.join("data/index.js")).unwrap();
    let start = text.find('{').unwrap();
    let end = text.rfind('}').unwrap();
    serde_json::from_str(&text[start..=end]).unwrap()
}

#[test]
fn ids_that_are_javascript_member_names_work_and_pollute_nothing() {
    let ids = [
        "toString",
        "constructor",
        "hasOwnProperty",
        "__proto__",
        "plain",
    ];
    let dir = run_of(&ids);
    let d = dir.path();
    vidprep()
        .current_dir(d)
        .args(["review", "out", "--manifest", "m.jsonl", "--thumbs", "3"])
        .assert()
        .success();
    let downloads = d.join("downloads");
    std::fs::create_dir(&downloads).unwrap();
    let Some(mut browser) = Browser::start(&downloads) else {
        return;
    };
    browser.set_script_timeout(WAIT);
    let b = &browser;
    let page = d.join("out/review/index.html");
    b.goto_file(&page);
    b.wait_until(
        "return document.querySelectorAll('#item-list .item-row').length === 5;",
        WAIT,
    );
    // Each odd one out is rejected, the others accepted, through the page's own buttons.
    for (k, id) in ids.iter().enumerate() {
        let row = b.find(&format!(".item-row[data-id='{id}']"));
        b.click(&row);
        b.wait_until(
            &format!(
                "const d = document.getElementById('detail'); return d && d.dataset.id === '{id}';"
            ),
            WAIT,
        );
        b.click(&b.find(if k % 2 == 0 { "#accept" } else { "#reject" }));
    }
    let expected: Vec<&str> = (0..ids.len())
        .map(|k| if k % 2 == 0 { "accepted" } else { "rejected" })
        .collect();
    let verdicts = |b: &Browser| -> Vec<String> {
        let d = b.execute("return window.vidprepReview.decisions();", vec![]);
        d["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["verdict"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(verdicts(b), expected);
    // Object.prototype is what it was: no new member, toString still a function.
    let proto = b.execute(
        "return {own: Object.getOwnPropertyNames(Object.prototype).filter(k => !['constructor','__defineGetter__','__defineSetter__','hasOwnProperty','__lookupGetter__','__lookupSetter__','isPrototypeOf','propertyIsEnumerable','toString','valueOf','__proto__','toLocaleString'].includes(k)),
                 verdict: ({}).verdict === undefined, criteria: ({}).criteria === undefined,
                 toString: typeof ({}).toString, proto: Object.getPrototypeOf({}) === Object.prototype};",
        vec![],
    );
    assert_eq!(
        proto,
        json!({"own": [], "verdict": true, "criteria": true, "toString": "function", "proto": true})
    );
    // Reloaded: the saved state comes back for every id.
    b.goto_file(&page);
    b.wait_until(
        "return document.querySelectorAll('#item-list .item-row').length === 5;",
        WAIT,
    );
    assert_eq!(verdicts(b), expected, "after a reload");
    // Exported, and the export applies.
    b.click(&b.find("#export"));
    let downloaded = b.wait_for_download("decisions.json", WAIT);
    let decisions: Value =
        serde_json::from_str(&std::fs::read_to_string(&downloaded).unwrap()).unwrap();
    let got: Vec<(&str, &str)> = decisions["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["id"].as_str().unwrap(), x["verdict"].as_str().unwrap()))
        .collect();
    let want: Vec<(&str, &str)> = ids.iter().copied().zip(expected.iter().copied()).collect();
    assert_eq!(got, want);
    let errors = b.js_errors();
    assert!(errors.is_empty(), "JavaScript errors: {errors:?}");
    drop(browser);
    vidprep()
        .current_dir(d)
        .args(["review-apply"])
        .arg(&downloaded)
        .args(["--manifest", "m.jsonl"])
        .assert()
        .success();
    let reviewed = std::fs::read_to_string(d.join("m.reviewed.jsonl")).unwrap();
    let kept: Vec<String> = reviewed
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(kept, ["toString", "hasOwnProperty", "plain"]);
}

#[test]
fn saved_review_state_is_keyed_by_the_run_not_its_folder() {
    let dir = run_of(&["a", "b"]);
    let d = dir.path();
    let review = |folder: &str| -> String {
        vidprep()
            .current_dir(d)
            .args(["review", folder, "--manifest", "m.jsonl", "--thumbs", "2"])
            .assert()
            .success();
        index_of(&d.join(folder).join("review"))["review_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let first = review("out");
    assert_eq!(review("out"), first, "the same run keeps its id");
    // Moved elsewhere: still the same run.
    std::fs::rename(d.join("out"), d.join("moved")).unwrap();
    assert_eq!(review("moved"), first, "a moved run keeps its id");
    // A new run at the first path: another run, another id.
    std::fs::write(
        d.join("m.jsonl"),
        json!({"id": "a", "source": "src.mp4", "start": 5, "exports": [{"kind": "clip", "preset": "ultrafast"}]})
            .to_string()
            + "\n",
    )
    .unwrap();
    vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "out"])
        .assert()
        .success();
    assert_ne!(
        review("out"),
        first,
        "a new run at the same path is a new review"
    );
}

/// Rewrites the `request` of item `id`'s clip sidecar with `edit`.
fn edit_request(out: &Path, id: &str, edit: impl Fn(&mut Value)) {
    let p = out.join(id).join("clip.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    edit(&mut v["request"]);
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn a_sent_run_folder_is_reviewed_without_fetching_or_reading_what_its_sidecars_name() {
    let dir = run_of(&["net", "secret"]);
    let d = dir.path();
    // A listener that would see vidprep fetch the URL.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!(
        "http://127.0.0.1:{}/v.mp4",
        listener.local_addr().unwrap().port()
    );
    // A private file outside the run folder, as MOT boxes (what /etc/passwd was read as).
    std::fs::write(d.join("private.txt"), "1,7,10,10,50,50,1,1,1\n").unwrap();
    let out = d.join("out");
    let u = url.clone();
    edit_request(&out, "net", move |r| r["source"] = json!(u));
    let private = d.join("private.txt").display().to_string();
    edit_request(&out, "secret", move |r| {
        r["boxes"] = json!({"path": private, "format": "mot"})
    });
    let result = vidprep()
        .current_dir(d)
        .args(["review", "out", "--thumbs", "2"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("net: no preview: its sidecars name the URL {url}")),
        "{err}"
    );
    assert!(
        err.contains("secret: no preview: its sidecars name")
            && err.contains("outside the run folder"),
        "{err}"
    );
    assert!(err.contains("--trust-sidecars"), "{err}");
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "vidprep connected to the URL a sidecar named"
    );
    assert!(!has_preview(&out.join("review"), "net"));
    assert!(!has_preview(&out.join("review"), "secret"));
    // The page is still written, listing both items.
    let index = index_of(&out.join("review"));
    assert_eq!(index["items"].as_array().unwrap().len(), 2);

    // Trusted on request: the boxes file is read and drawn into the preview.
    edit_request(&out, "net", |r| r["source"] = json!("src.mp4"));
    let result = vidprep()
        .current_dir(d)
        .args(["review", "out", "--thumbs", "2", "--trust-sidecars"])
        .output()
        .unwrap();
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(has_preview(&out.join("review"), "secret"));
}

#[test]
fn review_refuses_while_a_run_holds_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let source = SynthVideo::new(640, 360).frames(150).cached();
    std::fs::copy(&source.path, d.join("src.mp4")).unwrap();
    std::fs::write(
        d.join("quick.jsonl"),
        "{\"id\": \"a\", \"source\": \"src.mp4\", \"end\": 5, \"exports\": [{\"kind\": \"clip\", \"preset\": \"ultrafast\"}]}\n",
    )
    .unwrap();
    vidprep()
        .current_dir(d)
        .args(["run", "quick.jsonl", "--out-dir", "out"])
        .assert()
        .success();
    // A slow run into the same folder (placebo x264 on every frame, one at a time).
    let slow: String = (0..4)
        .map(|k| {
            json!({"id": format!("s{k}"), "source": "src.mp4", "exports": [{"kind": "clip", "preset": "placebo"}]})
                .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(d.join("slow.jsonl"), slow).unwrap();
    let mut run = std::process::Command::new(assert_cmd::cargo::cargo_bin("vidprep"))
        .current_dir(d)
        .args(["run", "slow.jsonl", "--out-dir", "out", "--jobs", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let began = Instant::now();
    while !std::fs::read_dir(d.join("out")).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".vidprep-lock")
    }) {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "the run never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let result = vidprep()
        .current_dir(d)
        .args([
            "review",
            "out",
            "--manifest",
            "quick.jsonl",
            "--thumbs",
            "2",
        ])
        .output()
        .unwrap();
    let still_running = run.try_wait().unwrap().is_none();
    let _ = support::send_signal("INT", &run.id().to_string());
    let _ = run.wait();
    let err = String::from_utf8_lossy(&result.stderr);
    assert!(
        still_running,
        "the slow run ended before the review: the case proves nothing"
    );
    assert_eq!(result.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot review it now") && err.contains("in use by another vidprep run"),
        "{err}"
    );
    assert!(
        !d.join("out/review").exists(),
        "no page from half-written items"
    );
    // Once the run is gone the review goes ahead.
    vidprep()
        .current_dir(d)
        .args([
            "review",
            "out",
            "--manifest",
            "quick.jsonl",
            "--thumbs",
            "2",
        ])
        .assert()
        .success();
}

/// Whether the page `page` has a preview folder of item `id` (`media/ID.HASH`).
fn has_preview(page: &std::path::Path, id: &str) -> bool {
    std::fs::read_dir(page.join("media")).is_ok_and(|entries| {
        entries.filter_map(|e| e.ok()).any(|e| {
            e.path().is_dir()
                && e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{id}."))
        })
    })
}
