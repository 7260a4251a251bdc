//! Memory of the fleet's big inputs (issue 51, items 10 and 11): one shard of a 1M-line
//! manifest costs its own items, not the manifest (it took 1.75 GB and 11 s to make its 19
//! items before; 79 MB and 1.5 s now, debug builds), with the same report of its bad lines
//! and the same refusals of items that read another shard's output folder; an overlay of a
//! few frames from one item of a 95 MB V-STaR benchmark file costs that item, not the file
//! (1.43 GB and 3.9 s before; 63 MB and 0.6 s now), also when every item of a manifest reads
//! the same file (2.8 GB before with two items at a time; 63 MB now); and an overlay with a
//! 50 MB plain or Waymo CSV box list costs the video's boxes (1.55 GB before; under 100 MB
//! now), and so do one with a 60 MB GOT-10k groundtruth.txt (823 MB before; 64 MB now) and
//! one with a 52 MB vidprep JSON file (1.29 GB before; 90 MB now), a 52 MB plain or 147 MB
//! Waymo JSON list (1.37 and 1.54 GB before; 66 and 63 MB now) and a one-item V-STaR file of 200,000
//! boxes (344 MB before; 106 MB now). Peak memory is the kernel's count (`/usr/bin/time -v`'s maximum resident
//! set size), checked against generous bounds; where `/usr/bin/time` is absent the check is
//! skipped with a message.

use crate::common;
use crate::reliability::hostile_memory::{peak_rss_kib, timed};
use crate::support;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use common::cmd::tail_lines;
use common::synth::SynthVideo;
use serde_json::Value;

/// Lines of the generated manifests.
const LINES: usize = 1_000_000;
/// Shards of the generated manifests: about 20 items each.
const SHARDS: usize = 50_000;
/// The peak resident memory a shard's run may reach (the issue's target).
const SHARD_LIMIT_KIB: u64 = 150 * 1024;

/// The id of the item on line `line` of a generated manifest.
fn id_of(line: usize) -> String {
    format!("item-{line:07}")
}

/// A 10-frame 160x120 video at 10 frames a second in `dir` as `v.mp4`.
fn video(dir: &Path) {
    let info = SynthVideo::new(160, 120).fps(10, 1).frames(10).cached();
    std::fs::copy(&info.path, dir.join("v.mp4")).unwrap();
}

/// Writes `m.jsonl` in `dir`: `LINES` lines, line `n` the item `id_of(n)` (one frame of
/// v.mp4; about 100 bytes a line, 102 MB in all) unless `lines` gives its text.
fn manifest(dir: &Path, lines: &BTreeMap<usize, String>) -> PathBuf {
    let path = dir.join("m.jsonl");
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
    for n in 1..=LINES {
        match lines.get(&n) {
            Some(text) => writeln!(w, "{text}").unwrap(),
            None => writeln!(
                w,
                r#"{{"id": "{}", "source": "v.mp4", "start": "0s", "exports": [{{"kind": "frames", "count": 1}}]}}"#,
                id_of(n)
            )
            .unwrap(),
        }
    }
    w.flush().unwrap();
    path
}

/// The first id `prefix-K` (K = 0, 1, ...) in shard `shard` of `SHARDS`.
fn id_in_shard(prefix: &str, shard: usize) -> String {
    (0..)
        .map(|k| format!("{prefix}-{k}"))
        .find(|id| vidprep::batch::shard_of(id, SHARDS) == shard)
        .unwrap()
}

/// Checks the peak resident memory `/usr/bin/time -v` wrote to `stderr`.
fn check_peak(stderr: &str, limit_kib: u64, what: &str) {
    if let Some(kib) = peak_rss_kib(stderr) {
        eprintln!("{what}: peak RSS {kib} KiB");
        assert!(
            kib < limit_kib,
            "{what}: peak RSS {kib} KiB, over {limit_kib} KiB"
        );
    }
}

fn report(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `vidprep run --shard 0/50000` of a 1M-line manifest: its peak memory is under 150 MB (1.75
/// GB before), and its report is the shard's items, made, and the shard's bad lines (bad JSON
/// by its line, a duplicate of one of its ids, a missing source), each with the manifest's
/// name, line and what is wrong; other shards' bad lines are not in it.
#[test]
fn a_shard_of_a_million_line_manifest_costs_its_own_items() {
    let dir = tempfile::tempdir().unwrap();
    video(dir.path());
    // The first item of shard 0, duplicated near the end; an id of shard 1, duplicated too.
    let first = (1..)
        .find(|&n| vidprep::batch::shard_of(&id_of(n), SHARDS) == 0)
        .unwrap();
    let other = (1..)
        .find(|&n| vidprep::batch::shard_of(&id_of(n), SHARDS) == 1)
        .unwrap();
    let missing = id_in_shard("missing", 0);
    let dup = |n: usize| format!(r#"{{"id": "{}", "source": "v.mp4"}}"#, id_of(n));
    let lines = BTreeMap::from([
        // Line 100000 is in shard 0 (no id: the shard of its line); 500001 in shard 1.
        (100_000, "{\"id\": \"broken\", not json".to_string()),
        (500_001, "{\"id\": \"broken too\", not json".to_string()),
        (
            700_000,
            format!(r#"{{"id": "{missing}", "source": "missing.mp4"}}"#),
        ),
        (999_998, dup(other)),
        (999_999, dup(first)),
    ]);
    manifest(dir.path(), &lines);
    let out = timed(
        dir.path(),
        &["run", "m.jsonl", "--out-dir", "out", "--shard", "0/50000"],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{}", tail_lines(&err, 20));
    check_peak(&err, SHARD_LIMIT_KIB, "a shard of a 1M-line manifest");

    let got = report(&dir.path().join("out/report.shard-0-of-50000.jsonl"));
    let made: Vec<usize> = (1..=LINES)
        .filter(|n| !lines.contains_key(n) && vidprep::batch::shard_of(&id_of(*n), SHARDS) == 0)
        .collect();
    assert!((10..40).contains(&made.len()), "{} items", made.len());
    let mut want: Vec<(usize, Option<String>, &str, Option<String>)> = made
        .iter()
        .map(|&n| (n, Some(id_of(n)), "ok", None))
        .collect();
    // The run names the manifest as it was given.
    let origin = "m.jsonl";
    want.extend([
        (
            100_000,
            None,
            "failed",
            Some(format!("{origin} line 100000: not valid JSON: ")),
        ),
        (
            700_000,
            Some(missing.clone()),
            "failed",
            Some(format!("{origin} line 700000: missing.mp4: file not found")),
        ),
        (
            999_999,
            Some(id_of(first)),
            "failed",
            Some(format!(
                "{origin} line 999999: duplicate id {:?}",
                id_of(first)
            )),
        ),
    ]);
    want.sort();
    let got: Vec<(usize, Option<String>, String, Option<String>)> = got
        .iter()
        .map(|r| {
            (
                r["line"].as_u64().unwrap() as usize,
                r["id"].as_str().map(str::to_string),
                r["status"].as_str().unwrap().to_string(),
                r["error"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!((g.0, &g.1, g.2.as_str()), (w.0, &w.1, w.2), "{g:?}");
        match (&g.3, &w.3) {
            (Some(g), Some(w)) => assert!(g.starts_with(w.as_str()), "{g}\nexpected {w}"),
            (g, w) => assert_eq!(g, w),
        }
    }
    for &n in &made {
        assert!(
            dir.path()
                .join("out")
                .join(id_of(n))
                .join("item.json")
                .is_file(),
            "item {} not made",
            id_of(n)
        );
    }
}

/// A shard's item that reads inside the output folder of another shard's item is refused as
/// a whole run refuses it (exit 2, naming both), under 150 MB; when that other item cannot
/// run (its source is missing), it writes nothing and the shard runs.
#[test]
fn a_shard_refuses_reading_another_shards_output_folder_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    video(dir.path());
    let writer = id_in_shard("writer", 1);
    let reader = id_in_shard("reader", 0);
    std::fs::create_dir_all(dir.path().join("out").join(&writer)).unwrap();
    std::fs::copy(
        dir.path().join("v.mp4"),
        dir.path().join("out").join(&writer).join("x.mp4"),
    )
    .unwrap();
    let reads = format!(
        r#"{{"id": "{reader}", "source": "out/{writer}/x.mp4", "exports": [{{"kind": "frames", "count": 1}}]}}"#
    );
    for (writer_line, refused) in [
        (format!(r#"{{"id": "{writer}", "source": "v.mp4"}}"#), true),
        (
            format!(r#"{{"id": "{writer}", "source": "missing.mp4"}}"#),
            false,
        ),
    ] {
        let lines = BTreeMap::from([(3, writer_line), (900_000, reads.clone())]);
        manifest(dir.path(), &lines);
        let out = timed(
            dir.path(),
            &["run", "m.jsonl", "--out-dir", "out", "--shard", "0/50000"],
        );
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        check_peak(&err, SHARD_LIMIT_KIB, "a refused shard");
        if refused {
            assert_eq!(out.status.code(), Some(2), "{}", tail_lines(&err, 20));
            assert!(
                err.contains(&format!(
                    "item \"{reader}\" reads {}, inside the folder {} that item \"{writer}\" of this run writes",
                    dir.path().join("out").join(&writer).join("x.mp4").display(),
                    dir.path().join("out").join(&writer).display()
                )),
                "{}",
                tail_lines(&err, 20)
            );
        } else {
            assert_eq!(out.status.code(), Some(0), "{}", tail_lines(&err, 20));
            let got = report(&dir.path().join("out/report.shard-0-of-50000.jsonl"));
            let line = got.iter().find(|r| r["id"] == reader.as_str()).unwrap();
            assert_eq!(line["status"], "ok", "{line}");
        }
    }
}

/// Writes a V-STaR benchmark file of `items` items (`vid_00000`, ...), each with 200 boxes in
/// the list form (frame `j` at `j / 10` s: x from `1 + (k + j) % 20`), about 17.6 KB an item.
fn vstar_bench(path: &Path, items: usize) {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    writeln!(w, "[").unwrap();
    for k in 0..items {
        write!(
            w,
            r#"{{"vid": "vid_{k:05}", "domain": "test", "fps": 10, "width": 160, "height": 120, "frame_count": 10, "question": "where is the box?", "object": "box", "bboxes": ["#
        )
        .unwrap();
        for j in 0..200 {
            let (x, y) = (1 + (k + j) % 20, 2 + j % 15);
            let sep = if j == 199 { "" } else { ", " };
            write!(
                w,
                r#"{{"timestamp": {}, "frame_index": {j}, "xmin": {x}, "ymin": {y}, "xmax": {}, "ymax": {}}}{sep}"#,
                j as f64 / 10.0,
                x + 29,
                y + 23
            )
            .unwrap();
        }
        writeln!(w, "]}}{}", if k + 1 == items { "" } else { "," }).unwrap();
    }
    writeln!(w, "]").unwrap();
    w.flush().unwrap();
}

/// The box of item `k` on frame `j` (as [`vstar_bench`] writes it).
fn vstar_box(k: usize, j: usize) -> [f64; 4] {
    let (x, y) = ((1 + (k + j) % 20) as f64, (2 + j % 15) as f64);
    [x, y, x + 29.0, y + 23.0]
}

/// An overlay of the 10 frames of a video with one item of a 95 MB V-STaR benchmark file
/// (5,400 items of 200 boxes), the format detected and named: peak memory under 150 MB (1.43
/// GB before), and the sidecar holds that item's boxes of those frames.
#[test]
fn an_overlay_from_a_large_vstar_file_costs_its_item_not_the_file() {
    let dir = tempfile::tempdir().unwrap();
    video(dir.path());
    let bench = dir.path().join("bench.json");
    vstar_bench(&bench, 5_400);
    let size = std::fs::metadata(&bench).unwrap().len();
    assert!(size > 90_000_000, "{size} bytes");
    for (k, format) in [(2_700, "auto"), (5_399, "vstar")] {
        let vid = format!("vid_{k:05}");
        let out = timed(
            dir.path(),
            &[
                "overlay",
                "v.mp4",
                "--boxes",
                "bench.json",
                "--format",
                format,
                "--item",
                &vid,
                "-o",
                "o.mp4",
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{}", tail_lines(&err, 20));
        check_peak(&err, 150 * 1024, &format!("overlay of {vid} ({format})"));
        let sidecar = support::sidecar(&dir.path().join("o.mp4"));
        let tracks = sidecar["annotations"]["tracks"].as_array().unwrap();
        assert_eq!(tracks.len(), 1);
        let keys = tracks[0]["keys"].as_array().unwrap();
        let got: Vec<(u64, Vec<f64>)> = keys
            .iter()
            .map(|key| {
                let b = key["box"].as_array().unwrap();
                (
                    key["frame"].as_u64().unwrap(),
                    b.iter().map(|v| v.as_f64().unwrap()).collect(),
                )
            })
            .collect();
        let want: Vec<(u64, Vec<f64>)> = (0..10)
            .map(|j| (j as u64, vstar_box(k, j).to_vec()))
            .collect();
        assert_eq!(got, want, "{vid}");
    }
}

/// Every item of a manifest reads one 95 MB V-STaR file (two at a time): the run's peak
/// memory stays under 250 MB (two items' reads at once, each bounded by its item; 2.8 GB
/// before), and each item is made.
#[test]
fn a_vstar_file_read_by_every_item_of_a_manifest_costs_its_items() {
    let dir = tempfile::tempdir().unwrap();
    video(dir.path());
    vstar_bench(&dir.path().join("bench.json"), 5_400);
    let mut text = String::new();
    for k in [0, 1_000, 2_000, 5_399] {
        text.push_str(&format!(
            r#"{{"id": "i{k}", "source": "v.mp4", "boxes": {{"path": "bench.json", "item": "vid_{k:05}"}}, "exports": [{{"kind": "frames", "count": 2}}]}}"#
        ));
        text.push('\n');
    }
    std::fs::write(dir.path().join("m.jsonl"), text).unwrap();
    let out = timed(
        dir.path(),
        &["run", "m.jsonl", "--out-dir", "out", "--jobs", "2"],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", tail_lines(&err, 20));
    check_peak(&err, 250 * 1024, "4 items reading one V-STaR file");
    let got = report(&dir.path().join("out/report.jsonl"));
    assert_eq!(got.len(), 4);
    assert!(got.iter().all(|r| r["status"] == "ok"), "{got:?}");
}

/// Rows of the generated box lists: 40,000 frames of 50 tracks (about 50 MB of CSV).
const BOX_ROWS: usize = 2_000_000;
/// Tracks of the generated box lists.
const BOX_TRACKS: usize = 50;

/// The corners of row `i` of a generated box list (track `i % 50` on frame `i / 50`).
fn list_box(i: usize) -> [f64; 4] {
    let (x, y) = ((1 + i % 20) as f64, (2 + i % 15) as f64);
    [x, y, x + 30.0, y + 24.0]
}

/// Writes a CSV box list of [`BOX_ROWS`] rows: `waymo` in centre and extent columns, else
/// plain corners.
fn box_list_csv(path: &Path, waymo: bool) {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    if waymo {
        writeln!(w, "frame,id,type,center_x,center_y,length,width").unwrap();
    } else {
        writeln!(w, "frame,id,label,x1,y1,x2,y2").unwrap();
    }
    for i in 0..BOX_ROWS {
        let [x1, y1, x2, y2] = list_box(i);
        let (frame, track) = (i / BOX_TRACKS, i % BOX_TRACKS);
        if waymo {
            let (cx, cy) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
            writeln!(w, "{frame},t{track},1,{cx},{cy},30,24").unwrap();
        } else {
            writeln!(w, "{frame},t{track},car,{x1},{y1},{x2},{y2}").unwrap();
        }
    }
    w.flush().unwrap();
}

/// The sidecar holds each of the [`BOX_TRACKS`] tracks' boxes of the video's 10 frames, in the
/// generated lists' order of tracks (`what` names the case).
fn check_track_boxes(sidecar: &Value, what: &str) {
    let tracks = sidecar["annotations"]["tracks"].as_array().unwrap();
    let ids: Vec<&str> = tracks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    let want_ids: Vec<String> = (0..BOX_TRACKS).map(|t| format!("t{t}")).collect();
    assert_eq!(ids, want_ids, "{what}");
    for (t, track) in tracks.iter().enumerate() {
        let got: Vec<(u64, Vec<f64>)> = track["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|key| {
                let b = key["box"].as_array().unwrap();
                (
                    key["frame"].as_u64().unwrap(),
                    b.iter().map(|v| v.as_f64().unwrap()).collect(),
                )
            })
            .collect();
        let want: Vec<(u64, Vec<f64>)> = (0..10)
            .map(|j| (j as u64, list_box(j * BOX_TRACKS + t).to_vec()))
            .collect();
        assert_eq!(got, want, "{what} track t{t}");
    }
}

/// An overlay of `v.mp4`'s 10 frames with the generated box list `name` of `rows` rows (in
/// `dir`): it succeeds under 150 MB, counts the rows past the video, and its sidecar holds each
/// track's boxes of those 10 frames, in the file's order of tracks.
fn overlay_and_check_boxes(dir: &Path, name: &str, rows: usize) {
    let out = timed(dir, &["overlay", "v.mp4", "--boxes", name, "-o", "o.mp4"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", tail_lines(&err, 20));
    check_peak(&err, 150 * 1024, &format!("overlay with {name}"));
    assert!(
        err.contains(&format!(
            "{name}: {} annotation keys fall outside the video",
            rows - 10 * BOX_TRACKS
        )),
        "{}",
        tail_lines(&err, 20)
    );
    check_track_boxes(&support::sidecar(&dir.join("o.mp4")), name);
}

/// An overlay of the 10 frames of a video with a 50 MB plain or Waymo CSV of 40,000 frames
/// (50 tracks): peak memory under 150 MB (1.55 GB before, for each), and the sidecar holds
/// each track's boxes of those 10 frames, in the file's order of tracks.
#[test]
fn an_overlay_from_a_large_csv_box_list_costs_the_video_s_boxes() {
    let dir = tempfile::tempdir().unwrap();
    video(dir.path());
    for (name, waymo) in [("plain.csv", false), ("waymo.csv", true)] {
        box_list_csv(&dir.path().join(name), waymo);
        overlay_and_check_boxes(dir.path(), name, BOX_ROWS);
        std::fs::remove_file(dir.path().join(name)).unwrap();
    }
}

/// Rows of the generated JSON box lists: 12,000 frames of 50 tracks (about 60 MB).
const JSON_ROWS: usize = 600_000;

/// Writes a JSON box list of [`JSON_ROWS`] records: `waymo` as Waymo v2 camera boxes (a
/// list of flat records with decorated column names), else plain corners in an object's
/// `"boxes"` list.
fn box_list_json(path: &Path, waymo: bool) {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    w.write_all(if waymo {
        b"[\n"
    } else {
        b"{\"source\": \"made by the test\", \"boxes\": [\n"
    })
    .unwrap();
    for i in 0..JSON_ROWS {
        let [x1, y1, x2, y2] = list_box(i);
        let (frame, track) = (i / BOX_TRACKS, i % BOX_TRACKS);
        let sep = if i + 1 == JSON_ROWS { "" } else { "," };
        if waymo {
            let (cx, cy) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
            writeln!(
                w,
                r#" {{"key.frame": {frame}, "key.camera_object_id": "t{track}", "[CameraBoxComponent].type": 1, "[CameraBoxComponent].box.center.x": {cx}, "[CameraBoxComponent].box.center.y": {cy}, "[CameraBoxComponent].box.size.x": 30, "[CameraBoxComponent].box.size.y": 24}}{sep}"#
            )
            .unwrap();
        } else {
            writeln!(
                w,
                r#" {{"frame": {frame}, "id": "t{track}", "label": "car", "x1": {x1}, "y1": {y1}, "x2": {x2}, "y2": {y2}}}{sep}"#
            )
            .unwrap();
        }
    }
    w.write_all(if waymo { b"]\n" } else { b"]}\n" }).unwrap();
    w.flush().unwrap();
}

/// An overlay of the 10 frames of a video with a plain (52 MB) or Waymo v2 (147 MB) JSON box
/// list of 12,000 frames (50 tracks): peak memory under 150 MB (the file was built as one JSON
/// value, then a table of every record: 1.37 and 1.54 GB before for the same lists; 66 and 63
/// MB now, the records read from the file one at a time), and the sidecar holds each track's
/// boxes of those 10 frames, in the file's order of tracks.
#[test]
fn an_overlay_from_a_large_json_box_list_costs_the_video_s_boxes() {
    let dir = tempfile::tempdir().unwrap();
    video(dir.path());
    for (name, waymo) in [("plain.json", false), ("waymo.json", true)] {
        box_list_json(&dir.path().join(name), waymo);
        let size = std::fs::metadata(dir.path().join(name)).unwrap().len();
        assert!(size > 45_000_000, "{name}: {size} bytes");
        overlay_and_check_boxes(dir.path(), name, JSON_ROWS);
        std::fs::remove_file(dir.path().join(name)).unwrap();
    }
}

/// Boxes of the generated one-item V-STaR file: 200,000 (about 20 MB).
const VSTAR_ITEM_BOXES: usize = 200_000;

/// An overlay of the 10 frames of a video with a V-STaR file of one item (not a list) of
/// 200,000 boxes (20 MB): the file is read as a stream and its boxes built one at a time (it
/// was built as one JSON value twice, detection's and the reader's: 344 MB before, 106 MB
/// now), and the sidecar holds the boxes of those frames. A V-STaR item's boxes are keyed by
/// time, so every box of the item is kept (about 300 bytes each; 400,000 took 171 MB, 647 MB
/// before): memory follows the item's boxes, not the file.
#[test]
fn an_overlay_from_a_large_one_item_vstar_file_reads_one_box_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    video(dir.path());
    let path = dir.path().join("item.json");
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
    write!(
        w,
        r#"{{"vid": "long", "fps": 10, "width": 160, "height": 120, "object": "car", "bboxes": ["#
    )
    .unwrap();
    for j in 0..VSTAR_ITEM_BOXES {
        let [x1, y1, x2, y2] = list_box(j);
        let sep = if j == 0 { "" } else { "," };
        write!(
            w,
            "{sep}\n {{\"timestamp\": {}, \"frame_index\": {j}, \"xmin\": {x1}, \"ymin\": {y1}, \"xmax\": {x2}, \"ymax\": {y2}}}",
            j as f64 / 10.0
        )
        .unwrap();
    }
    writeln!(w, "]}}").unwrap();
    w.flush().unwrap();
    drop(w);
    let out = timed(
        dir.path(),
        &["overlay", "v.mp4", "--boxes", "item.json", "-o", "o.mp4"],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", tail_lines(&err, 20));
    check_peak(&err, 150 * 1024, "overlay with a one-item V-STaR file");
    let sidecar = support::sidecar(&dir.path().join("o.mp4"));
    let tracks = sidecar["annotations"]["tracks"].as_array().unwrap();
    assert_eq!(tracks.len(), 1);
    let got: Vec<(u64, Vec<f64>)> = tracks[0]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|key| {
            let b = key["box"].as_array().unwrap();
            (
                key["frame"].as_u64().unwrap(),
                b.iter().map(|v| v.as_f64().unwrap()).collect(),
            )
        })
        .collect();
    let want: Vec<(u64, Vec<f64>)> = (0..10).map(|j| (j as u64, list_box(j).to_vec())).collect();
    assert_eq!(got, want);
}

/// Lines of the generated GOT-10k groundtruth: 3M frames (about 60 MB).
const GT_LINES: usize = 3_000_000;

/// An overlay of the 10 frames of a video with a 60 MB GOT-10k groundtruth.txt (3M frames)
/// costs those frames' boxes (1.48 GB for a 92 MB file before, the file and every box held;
/// 64 MB now): peak memory under 150 MB, and the sidecar holds exactly the boxes of lines
/// 1..10 (frames 0..9); the other lines are counted as outside the video.
#[test]
fn an_overlay_from_a_large_got10k_groundtruth_costs_the_video_s_boxes() {
    let dir = tempfile::tempdir().unwrap();
    video(dir.path());
    let seq = dir.path().join("seq");
    std::fs::create_dir(&seq).unwrap();
    let mut w = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(seq.join("groundtruth.txt")).unwrap(),
    );
    for i in 0..GT_LINES {
        let [x1, y1, x2, y2] = list_box(i);
        writeln!(w, "{x1},{y1},{},{}", x2 - x1, y2 - y1).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let out = timed(
        dir.path(),
        &[
            "overlay",
            "v.mp4",
            "--boxes",
            "seq/groundtruth.txt",
            "-o",
            "o.mp4",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", tail_lines(&err, 20));
    check_peak(&err, 150 * 1024, "overlay with a GOT-10k groundtruth.txt");
    assert!(
        err.contains(&format!(
            "groundtruth.txt: {} annotation keys fall outside the video",
            GT_LINES - 10
        )),
        "{}",
        tail_lines(&err, 20)
    );
    let sidecar = support::sidecar(&dir.path().join("o.mp4"));
    let tracks = sidecar["annotations"]["tracks"].as_array().unwrap();
    assert_eq!(tracks.len(), 1, "{tracks:?}");
    assert_eq!(tracks[0]["id"], "seq");
    let got: Vec<(u64, Vec<f64>)> = tracks[0]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|key| {
            let b = key["box"].as_array().unwrap();
            (
                key["frame"].as_u64().unwrap(),
                b.iter().map(|v| v.as_f64().unwrap()).collect(),
            )
        })
        .collect();
    let want: Vec<(u64, Vec<f64>)> = (0..10).map(|j| (j as u64, list_box(j).to_vec())).collect();
    assert_eq!(got, want);
}

/// Keys of each of the [`BOX_TRACKS`] tracks of the generated vidprep JSON file (about 52 MB).
const NATIVE_KEYS: usize = 25_000;

/// An overlay of the 10 frames of a video with a 52 MB vidprep JSON file (50 tracks of 25,000
/// frame keys) costs those frames' boxes (1.06 GB for a 41 MB file before, parsed into a JSON
/// value and then every key; 90 MB now): peak memory under 150 MB, and the sidecar holds
/// exactly each track's keys of frames 0..9.
#[test]
fn an_overlay_from_a_large_vidprep_json_file_costs_the_video_s_boxes() {
    let dir = tempfile::tempdir().unwrap();
    video(dir.path());
    let mut w = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(dir.path().join("boxes.json")).unwrap(),
    );
    write!(
        w,
        r#"{{"vidprep_annotations": 1, "coords": "pixels", "tracks": ["#
    )
    .unwrap();
    for t in 0..BOX_TRACKS {
        let sep = if t == 0 { "" } else { "," };
        write!(w, "{sep}\n{{\"id\": \"t{t}\", \"keys\": [").unwrap();
        for j in 0..NATIVE_KEYS {
            let [x1, y1, x2, y2] = list_box(j * BOX_TRACKS + t);
            let sep = if j == 0 { "" } else { ", " };
            write!(
                w,
                r#"{sep}{{"frame": {j}, "box": [{x1}, {y1}, {x2}, {y2}]}}"#
            )
            .unwrap();
        }
        write!(w, "]}}").unwrap();
    }
    writeln!(w, "\n]}}").unwrap();
    w.flush().unwrap();
    drop(w);
    let out = timed(
        dir.path(),
        &["overlay", "v.mp4", "--boxes", "boxes.json", "-o", "o.mp4"],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", tail_lines(&err, 20));
    check_peak(&err, 150 * 1024, "overlay with a vidprep JSON file");
    assert!(
        err.contains(&format!(
            "boxes.json: {} annotation keys fall outside the video",
            (NATIVE_KEYS - 10) * BOX_TRACKS
        )),
        "{}",
        tail_lines(&err, 20)
    );
    check_track_boxes(&support::sidecar(&dir.path().join("o.mp4")), "vidprep JSON");
}
