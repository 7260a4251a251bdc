//! Plain CSV annotations read through the `csv` crate, end to end: quoted fields holding a
//! comma and a newline reach the clip's sidecar exactly as the file spells them, and a
//! malformed line is refused naming the file and the line it starts on. The oracle is the CSV
//! text the test writes.

use crate::common;
use crate::support;

use std::path::Path;

use common::synth::SynthVideo;
use support::{sidecar, vidprep};
use vidprep::boxes::{from_native_str, BBox, Entry, Key};

/// Two tracks whose labels need quoting: one holds a comma, one a newline and a quote.
const CSV: &str = "frame,id,label,x1,y1,x2,y2\n\
                   0,car1,\"car, red\",10,20,50,60\n\
                   1,bus2,\"two\nlines \"\"quoted\"\"\",12,22,52,62\n";

fn overlay(dir: &Path, csv: &str) -> assert_cmd::assert::Assert {
    let v = SynthVideo::new(160, 120).frames(5).cached();
    let boxes = dir.join("boxes.csv");
    std::fs::write(&boxes, csv).unwrap();
    vidprep()
        .arg("overlay")
        .arg(&v.path)
        .arg("--boxes")
        .arg(&boxes)
        .args(["--format", "csv", "--preset", "ultrafast", "-o"])
        .arg(dir.join("c.mp4"))
        .assert()
}

#[test]
fn quoted_commas_and_newlines_reach_the_sidecar_as_written() {
    let dir = tempfile::tempdir().unwrap();
    overlay(dir.path(), CSV).success();
    let sc = sidecar(&dir.path().join("c.mp4"));
    let text = serde_json::to_string(&sc["annotations"]).unwrap();
    let ann = from_native_str(&text, Path::new("sidecar")).unwrap();
    let track = |id: &str| ann.tracks.iter().find(|t| t.id == id).expect(id);
    assert_eq!(track("car1").label.as_deref(), Some("car, red"));
    assert_eq!(
        track("bus2").label.as_deref(),
        Some("two\nlines \"quoted\"")
    );
    assert_eq!(
        track("car1").keys.get(&Key::Frame(0)),
        Some(&Entry::Present(BBox {
            x1: 10.0,
            y1: 20.0,
            x2: 50.0,
            y2: 60.0
        }))
    );
    assert_eq!(
        track("bus2").keys.get(&Key::Frame(1)),
        Some(&Entry::Present(BBox {
            x1: 12.0,
            y1: 22.0,
            x2: 52.0,
            y2: 62.0
        }))
    );
}

#[test]
fn a_malformed_line_after_a_quoted_newline_is_named_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    // Lines 2-3 are one record (a quoted newline); line 4 has one cell too many.
    let bad = "frame,id,label,x1,y1,x2,y2\n\
               0,car1,\"a\nb\",10,20,50,60\n\
               1,car1,car,12,22,52,62,9\n";
    let out = overlay(dir.path(), bad).code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("boxes.csv line 4") && stderr.contains("expected 7 comma-separated values"),
        "{stderr}"
    );
    assert!(
        !dir.path().join("c.mp4").exists(),
        "nothing written for a bad file"
    );
}

/// Boxes that cannot be drawn (NaN, infinite, `1e308`, negative sizes) are named by file and
/// line on stderr and in the sidecar's warnings, not dropped with only "no annotated box
/// falls inside this output" (issue 41). The oracle: the lines the test wrote them on.
#[test]
fn unusable_boxes_are_named_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let csv = "frame,id,x,y,w,h\n\
               0,a,NaN,20,30,30\n\
               1,a,10,inf,30,30\n\
               2,a,1e308,20,30,30\n\
               3,a,10,20,-30,30\n";
    let out = overlay(dir.path(), csv).success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    for needle in [
        "boxes.csv",
        "line 2",
        "line 3",
        "line 4",
        "line 5",
        "4 box(es)",
    ] {
        assert!(
            stderr.contains(needle),
            "stderr lacks {needle:?}:\n{stderr}"
        );
    }
    let sc = sidecar(&dir.path().join("c.mp4"));
    let warnings = serde_json::to_string(&sc["warnings"]).unwrap();
    assert!(
        warnings.contains("line 5") && warnings.contains("boxes.csv"),
        "{warnings}"
    );
    // A usable box beside them is drawn and no warning names its line; a zero-size box is the
    // datasets' "not visible" and is not named either.
    let csv = "frame,id,x,y,w,h\n0,a,10,20,30,30\n1,a,10,20,0,0\n2,a,NaN,20,30,30\n";
    let out = overlay(dir.path(), csv).success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("1 box(es)") && stderr.contains("line 4"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("line 2,") && !stderr.contains("line 3"),
        "{stderr}"
    );
}
