//! Two drivers on one output folder at once (two `vidprep.ray` runs, or one driver's items
//! spread over hosts): each runs its items with `run_item` and then merges its report lines
//! into `report.jsonl` (`merge_report`, what the Python package's `write_report` calls) at
//! the same moment. Every line of the report must parse and every item of either driver
//! appear exactly once, with its outputs on disk; a torn final line left by a writer that died
//! mid-line is left out with a notice, and any other foreign line is refused, the file left
//! alone.

use crate::common;
use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Barrier};

use common::synth::SynthVideo;
use vidprep::batch::{ItemReport, Quiet, Status};
use vidprep::manifest::ManifestItem;
use vidprep::BatchOptions;

fn item(id: &str, line: usize, source: &Path) -> ManifestItem {
    let plan = serde_json::json!({
        "id": id,
        "source": source,
        "end": 6,
        "exports": [{"kind": "frames", "count": 2}],
    });
    ManifestItem::check(line, serde_json::from_value(plan).unwrap()).unwrap()
}

/// Every line of `report` parsed, by id (each id once).
fn lines_of(report: &Path) -> BTreeMap<String, serde_json::Value> {
    let text = std::fs::read_to_string(report).unwrap();
    assert!(text.ends_with('\n'), "the report ends with a whole line");
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("report line {} does not parse ({e}): {line}", n + 1));
        let id = v["id"].as_str().unwrap().to_string();
        assert!(
            out.insert(id.clone(), v).is_none(),
            "item {id} appears twice in the report:\n{text}"
        );
    }
    out
}

#[test]
fn two_drivers_finishing_at_once_keep_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let video = SynthVideo::new(160, 96).frames(8).write(&d.join("v.mp4"));
    let out = d.join("out");
    let drivers = 4;
    let per_driver = 3;
    // Every driver's lines are merged at once, again and again (each round replaces its own
    // lines with new ones, as a rerun does), so that the merges overlap.
    let rounds = 5;
    let barrier = Arc::new(Barrier::new(drivers));
    let handles: Vec<_> = (0..drivers)
        .map(|k| {
            let barrier = barrier.clone();
            let out = out.clone();
            let source = video.path.clone();
            std::thread::spawn(move || {
                let options = BatchOptions::new(&out);
                let mut reports: Vec<ItemReport> = Vec::new();
                for j in 0..per_driver {
                    let it = item(&format!("d{k}-{j}"), 1 + k * per_driver + j, &source);
                    let r = vidprep::batch::run_item(&it, &options, &Quiet).unwrap();
                    assert_eq!(r.status, Status::Ok, "{r:?}");
                    reports.push(r);
                }
                for _ in 0..rounds {
                    barrier.wait();
                    vidprep::batch::merge_report(&out, None, &reports, &|m: &str| {
                        panic!("unexpected notice: {m}")
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let lines = lines_of(&out.join("report.jsonl"));
    let mut want: Vec<String> = (0..drivers)
        .flat_map(|k| (0..per_driver).map(move |j| format!("d{k}-{j}")))
        .collect();
    want.sort();
    assert_eq!(lines.keys().cloned().collect::<Vec<_>>(), want);
    let mut last_line = 0;
    for (id, v) in &lines {
        assert_eq!(v["status"], "ok", "{id}: {v}");
        assert!(
            out.join(id).join("item.json").is_file(),
            "{id}: no item.json"
        );
        let outputs = v["outputs"].as_array().unwrap();
        assert!(!outputs.is_empty(), "{id}: {v}");
        for o in outputs {
            let p = Path::new(o.as_str().unwrap());
            assert!(p.exists(), "{id}: {} is missing", p.display());
        }
        last_line = last_line.max(v["line"].as_u64().unwrap());
    }
    assert_eq!(last_line as usize, drivers * per_driver);
    // Sorted by manifest line, and nothing of the merge's lock left beside the outputs.
    let text = std::fs::read_to_string(out.join("report.jsonl")).unwrap();
    let order: Vec<u64> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["line"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    let stray: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(stray.is_empty(), "left in the output folder: {stray:?}");
    assert!(support::temporaries(&out).is_empty());
}

#[test]
fn a_torn_final_line_is_left_out_with_a_notice_and_a_foreign_line_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let row = |id: &str, line: usize| {
        format!(
            r#"{{"id":"{id}","line":{line},"status":"ok","outputs":[],"error":null,"seconds":0.0,"frames":0}}"#
        )
    };
    let report = out.join("report.jsonl");
    // A line of another item, then a final one cut short (no newline).
    let torn = format!("{}\n{}", row("old", 1), &row("cut", 2)[..30]);
    std::fs::write(&report, &torn).unwrap();
    let mine: ItemReport = serde_json::from_str(&row("mine", 3)).unwrap();
    let notices = std::sync::Mutex::new(Vec::new());
    vidprep::batch::merge_report(out, None, std::slice::from_ref(&mine), &|m: &str| {
        notices.lock().unwrap().push(m.to_string())
    })
    .unwrap();
    let notices = notices.into_inner().unwrap();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("report.jsonl line 2") && notices[0].contains("cut short"),
        "{notices:?}"
    );
    let lines = lines_of(&report);
    assert_eq!(lines.keys().collect::<Vec<_>>(), ["mine", "old"]);
    // A bad line that is not the last: refused, the file left as it was.
    let foreign = format!("not json\n{}\n", row("old", 1));
    std::fs::write(&report, &foreign).unwrap();
    let e = vidprep::batch::merge_report(out, None, std::slice::from_ref(&mine), &|_: &str| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("report.jsonl line 1") && e.contains("not a report line"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&report).unwrap(), foreign);
}
