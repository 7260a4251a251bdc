//! The fault corpus: well over a hundred bad inputs, hostile files, colliding outputs, misuse
//! of the command line and interrupted runs. For every scenario:
//!
//! - vidprep ends within a timeout, never with a panic (101) or an abort (134, signals);
//! - the exit code is the one documented (2 bad usage, 1 a failed item or input, 0 ok);
//! - every file that existed before is unchanged, unless it is an output the request may
//!   replace (and then it is replaced as a whole);
//! - nothing appears but the request's outputs: no temporary file, no empty folder.
//!
//! Kill tests interrupt a single command at several points (SIGINT, SIGTERM, SIGKILL) and
//! check what is left, and that the next run cleans up after a killed one.

mod common;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::synth::SynthVideo;
use support::vidprep;

/// What a scenario may do.
struct Case {
    name: String,
    /// Prepares the folder (the base files are already there).
    setup: Box<dyn Fn(&Path) + Send + Sync>,
    args: Vec<String>,
    /// Acceptable exit codes.
    codes: Vec<i32>,
    /// Texts the error output must contain.
    stderr: Vec<String>,
    /// Paths (relative, prefixes) the request may create or replace.
    outputs: Vec<String>,
    env: Vec<(String, String)>,
    /// A further check of what the folder holds afterwards.
    after: Option<AfterCheck>,
}

/// A check of the folder after a scenario ran.
type AfterCheck = Box<dyn Fn(&Path) -> Result<(), String> + Send + Sync>;

fn case(name: &str, args: &[&str], codes: &[i32]) -> Case {
    Case {
        name: name.to_string(),
        setup: Box::new(|_| {}),
        args: args.iter().map(|s| s.to_string()).collect(),
        codes: codes.to_vec(),
        stderr: Vec::new(),
        outputs: Vec::new(),
        env: Vec::new(),
        after: None,
    }
}

impl Case {
    fn says(mut self, text: &str) -> Case {
        self.stderr.push(text.to_string());
        self
    }
    fn writes(mut self, path: &str) -> Case {
        self.outputs.push(path.to_string());
        self
    }
    fn with(mut self, setup: impl Fn(&Path) + Send + Sync + 'static) -> Case {
        self.setup = Box::new(setup);
        self
    }
    fn then(mut self, check: impl Fn(&Path) -> Result<(), String> + Send + Sync + 'static) -> Case {
        self.after = Some(Box::new(check));
        self
    }
    fn env(mut self, k: &str, v: &str) -> Case {
        self.env.push((k.to_string(), v.to_string()));
        self
    }
}

/// Every file and folder below `dir`: path -> content hash (folders: "dir").
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(dir).min_depth(1) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
        let ft = e.file_type();
        let v = if ft.is_dir() {
            "dir".to_string()
        } else if ft.is_file() {
            common::md5::md5_hex(&std::fs::read(e.path()).unwrap())
        } else {
            "special".to_string()
        };
        out.insert(rel, v);
    }
    out
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo {path:?}");
}

/// A PNG whose header claims `w x h` (and holds no picture).
fn lying_png(path: &Path, w: u32, h: u32) {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut c = 0xFFFF_FFFFu32;
        for &b in bytes {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
        !c
    }
    let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    let mut chunk = |kind: &[u8], data: &[u8]| {
        png.extend((data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend(data);
        png.extend(&body);
        png.extend(crc32(&body).to_be_bytes());
    };
    let mut ihdr = Vec::new();
    ihdr.extend(w.to_be_bytes());
    ihdr.extend(h.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    chunk(b"IHDR", &ihdr);
    chunk(b"IEND", &[]);
    std::fs::write(path, png).unwrap();
}

/// The base files every scenario starts with.
fn base(dir: &Path) {
    let g = SynthVideo::new(160, 120)
        .frames(40)
        .audio_tone(440.0)
        .cached();
    std::fs::copy(&g.path, dir.join("g.mp4")).unwrap();
    let seq = dir.join("seq");
    std::fs::create_dir(&seq).unwrap();
    let needle = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/needle");
    for e in std::fs::read_dir(&needle).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), seq.join(e.file_name())).unwrap();
    }
    std::fs::write(
        dir.join("boxes.csv"),
        "frame,track_id,label,x1,y1,x2,y2\n0,1,ball,10,10,60,60\n39,1,ball,80,40,120,100\n",
    )
    .unwrap();
}

fn manifest(dir: &Path, name: &str, lines: &[String]) {
    std::fs::write(dir.join(name), lines.join("\n") + "\n").unwrap();
}

fn run_case(c: &Case) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    (c.setup)(d);
    let before = snapshot(d);
    let mut cmd = vidprep();
    cmd.current_dir(d)
        .args(&c.args)
        .timeout(Duration::from_secs(90));
    for (k, v) in &c.env {
        cmd.env(k, v);
    }
    let out = cmd.output().map_err(|e| format!("cannot run: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let code = match out.status.code() {
        Some(code) => code,
        None => return Err(format!("killed by a signal or the timeout\n{stderr}")),
    };
    if code == 101 || code == 134 {
        return Err(format!("crashed with {code}\n{stderr}"));
    }
    if !c.codes.contains(&code) {
        return Err(format!("exit {code}, expected {:?}\n{stderr}", c.codes));
    }
    for needle in &c.stderr {
        if !stderr.contains(needle.as_str()) {
            return Err(format!("stderr lacks {needle:?}:\n{stderr}"));
        }
    }
    let after = snapshot(d);
    let may = |p: &Path| {
        c.outputs
            .iter()
            .any(|o| p.starts_with(o) || p == Path::new(o))
    };
    for (p, h) in &before {
        match after.get(p) {
            Some(h2) if h2 == h => {}
            _ if may(p) => {}
            Some(_) => return Err(format!("{p:?} was changed")),
            None => return Err(format!("{p:?} was removed")),
        }
    }
    for (p, kind) in &after {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.contains("vidprep-tmp") {
            return Err(format!("a temporary was left: {p:?}"));
        }
        if !before.contains_key(p) && !may(p) {
            return Err(format!("{p:?} appeared"));
        }
        if kind == "dir" && !before.contains_key(p) {
            let empty = std::fs::read_dir(d.join(p)).unwrap().next().is_none();
            if empty {
                return Err(format!("an empty folder was left: {p:?}"));
            }
        }
    }
    match &c.after {
        Some(check) => check(d),
        None => Ok(()),
    }
}

fn corpus() -> Vec<Case> {
    let mut cases = Vec::new();
    // --- Bad time syntax: bad usage.
    for bad in [
        "5x",
        "-1",
        "1e999",
        "99999999999999999999",
        "00:61:00",
        "1/0",
        "NaN",
        "",
        "--",
    ] {
        cases.push(case(
            &format!("start {bad:?}"),
            &["cut", "g.mp4", "--start", bad, "-o", "o.mp4"],
            &[2],
        ));
    }
    for bad in ["abc", "-5s", "150%", "1:2:3:4"] {
        cases.push(case(
            &format!("decision {bad:?}"),
            &["cut", "g.mp4", "--decision", bad, "-o", "o.mp4"],
            &[2],
        ));
    }
    cases.push(
        case(
            "percent start",
            &["cut", "g.mp4", "--start", "10%", "-o", "o.mp4"],
            &[2],
        )
        .says("percentage"),
    );
    cases.push(
        case(
            "percent end",
            &["cut", "g.mp4", "--end", "10%", "-o", "o.mp4"],
            &[2],
        )
        .says("percentage"),
    );
    // --- Spans that do not fit the video: a failed request, nothing written.
    for (start, end) in [
        ("100", "200"),
        ("20", "10"),
        ("5", "5"),
        ("0", "41"),
        ("2s", "1s"),
        ("9s", ""),
    ] {
        let mut a = vec!["cut", "g.mp4", "--start", start];
        if !end.is_empty() {
            a.extend(["--end", end]);
        }
        a.extend(["-o", "o.mp4"]);
        cases.push(case(&format!("span {start}..{end}"), &a, &[1]).says("g.mp4"));
    }
    for decision in ["0", "0%", "41", "2s"] {
        cases.push(
            case(
                &format!("decision {decision} outside"),
                &[
                    "cut",
                    "g.mp4",
                    "--start",
                    "10",
                    "--end",
                    "20",
                    "--decision",
                    decision,
                    "-o",
                    "o.mp4",
                ],
                &[1],
            )
            .says("g.mp4"),
        );
    }
    // --- Inputs that are missing, not files, or not videos.
    cases.push(
        case(
            "missing input",
            &["cut", "nothere.mp4", "-o", "o.mp4"],
            &[1],
        )
        .says("nothere.mp4"),
    );
    // A folder is an image sequence source (tests/sources.rs); one without images is refused.
    cases.push(
        case("folder as input", &["cut", "empty", "-o", "o.mp4"], &[1])
            .says("holds no images")
            .with(|d| std::fs::create_dir(d.join("empty")).unwrap()),
    );
    cases.push(
        case("fifo probe", &["probe", "f.mp4"], &[1])
            .says("not a regular file")
            .with(|d| mkfifo(&d.join("f.mp4"))),
    );
    cases.push(
        case("fifo cut", &["cut", "f.mp4", "-o", "o.mp4"], &[1])
            .says("not a regular file")
            .with(|d| mkfifo(&d.join("f.mp4"))),
    );
    cases.push(case("device input", &["probe", "/dev/zero"], &[1]).says("not a regular file"));
    cases.push(
        case("empty file", &["cut", "e.mp4", "-o", "o.mp4"], &[1])
            .says("e.mp4")
            .with(|d| std::fs::write(d.join("e.mp4"), b"").unwrap()),
    );
    cases.push(
        case("text as video", &["cut", "t.mp4", "-o", "o.mp4"], &[1])
            .says("t.mp4")
            .with(|d| std::fs::write(d.join("t.mp4"), b"hello, not a video\n").unwrap()),
    );
    cases.push(
        case(
            "truncated mp4",
            &["cut", "half.mp4", "-o", "o.mp4"],
            &[0, 1],
        )
        .writes("o.mp4")
        .writes("o.json")
        .with(|d| {
            let bytes = std::fs::read(d.join("g.mp4")).unwrap();
            std::fs::write(d.join("half.mp4"), &bytes[..bytes.len() / 3]).unwrap();
        }),
    );
    cases.push(
        case(
            "lying png host",
            &[
                "insert",
                "--host",
                "big.png",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "a.mp4",
            ],
            &[1],
        )
        .says("big.png")
        .with(|d| lying_png(&d.join("big.png"), 60000, 60000)),
    );
    cases.push(
        case("zero png", &["probe", "zero.png"], &[1])
            .says("zero.png")
            .with(|d| lying_png(&d.join("zero.png"), 0, 0)),
    );
    cases.push(
        case("1x1 video", &["cut", "tiny.mkv", "-o", "o.mp4"], &[1])
            .says("tiny.mkv: its pictures are 1x1")
            .with(|d| {
                common::cmd::run_ok(
                    "ffmpeg",
                    &[
                        "-v",
                        "error",
                        "-f",
                        "lavfi",
                        "-i",
                        "color=red:size=2x2:rate=5",
                        "-vf",
                        "scale=1:1",
                        "-frames:v",
                        "5",
                        "-c:v",
                        "ffv1",
                        "-pix_fmt",
                        "bgr0",
                        &d.join("tiny.mkv").display().to_string(),
                    ],
                );
            }),
    );
    // --- Outputs that would overwrite inputs or each other: bad usage, nothing touched.
    cases.push(
        case("output is input", &["cut", "g.mp4", "-o", "g.mp4"], &[2])
            .says("refusing to overwrite an input"),
    );
    cases.push(
        case(
            "output is input via ./",
            &["cut", "g.mp4", "-o", "./g.mp4"],
            &[2],
        )
        .says("input"),
    );
    cases.push(
        case(
            "sidecar is output",
            &["cut", "g.mp4", "-o", "out.json"],
            &[2],
        )
        .says(".json"),
    );
    cases.push(
        case(
            "base64 is output",
            &[
                "export", "video", "g.mp4", "-o", "o.mp4", "--base64", "o.mp4",
            ],
            &[2],
        )
        .says("both be"),
    );
    cases.push(
        case(
            "base64 is sidecar",
            &[
                "export", "video", "g.mp4", "-o", "o.mp4", "--base64", "o.json",
            ],
            &[2],
        )
        .says("both be"),
    );
    cases.push(
        case(
            "annotations is output",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "i.mp4",
                "--annotations",
                "i.mp4",
            ],
            &[2],
        )
        .says("both be"),
    );
    cases.push(
        case(
            "annotations is sidecar",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "i.mp4",
                "--annotations",
                "i.json",
            ],
            &[2],
        )
        .says("both be"),
    );
    cases.push(
        case(
            "output inside sequence",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "seq/x.mp4",
            ],
            &[2],
        )
        .says("input folder"),
    );
    cases.push(
        case(
            "annotations over groundtruth",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "i.mp4",
                "--annotations",
                "seq/groundtruth.txt",
            ],
            &[2],
        )
        .says("input"),
    );
    cases.push(
        case(
            "ratios collide",
            &["truncate", "g.mp4", "--ratios", "50%,50", "-o", "t.mp4"],
            &[2],
        )
        .says("twice"),
    );
    cases.push(
        case("output onto a fifo", &["cut", "g.mp4", "-o", "p.mp4"], &[2])
            .says("not a regular file")
            .with(|d| mkfifo(&d.join("p.mp4"))),
    );
    cases.push(
        case(
            "output onto a device",
            &["cut", "g.mp4", "-o", "/dev/null"],
            &[2],
        )
        .says("extension"),
    );
    cases.push(
        case(
            "output onto a folder",
            &["cut", "g.mp4", "-o", "seq2.mp4"],
            &[2],
        )
        .says("folder")
        .with(|d| std::fs::create_dir(d.join("seq2.mp4")).unwrap()),
    );
    cases.push(case("boxes-out onto the input annotations", &["overlay", "g.mp4", "--boxes", "out.vstar.json", "--format", "vstar", "-o", "out.mp4", "--boxes-out", "vstar"], &[2]).says("input").with(|d| {
        std::fs::write(d.join("out.vstar.json"), r#"[{"vid": "g", "fps": 25, "width": 160, "height": 120, "frame_count": 40, "bboxes": [{"timestamp": 0.0, "frame_index": 0, "xmin": 1, "ymin": 1, "xmax": 9, "ymax": 9}]}]"#).unwrap();
    }));
    cases.push(
        case(
            "boxes.json onto the input annotations",
            &[
                "cut",
                "g.mp4",
                "--boxes",
                "out.boxes.json",
                "-o",
                "out.mp4",
                "--boxes-out",
                "vidprep",
            ],
            &[2],
        )
        .says("input")
        .with(|d| {
            std::fs::write(
                d.join("out.boxes.json"),
                r#"{"coords": "pixels", "tracks": []}"#,
            )
            .unwrap();
        }),
    );
    cases.push(
        case(
            "frames into a folder of other files",
            &["export", "frames", "g.mp4", "--out-dir", "."],
            &[2],
        )
        .says("holds the input"),
    );
    cases.push(
        case(
            "frames into the sequence",
            &["export", "frames", "g.mp4", "--out-dir", "seq"],
            &[2],
        )
        .says("did not write"),
    );
    cases.push(case("container by name", &["cut", "g.mp4", "-o", "x.webm"], &[2]).says("WebM"));
    cases.push(case("unknown container", &["cut", "g.mp4", "-o", "x.avi"], &[2]).says(".avi"));
    cases.push(case("no extension", &["cut", "g.mp4", "-o", "x"], &[2]).says("extension"));
    // Outputs that work: long names, missing folders, earlier outputs replaced whole.
    let long = format!("{}.mp4", "n".repeat(240));
    cases.push(
        case(
            "240-character name",
            &["cut", "g.mp4", "--preset", "ultrafast", "-o", &long],
            &[0],
        )
        .writes(&long)
        .writes(&format!("{}.json", "n".repeat(240))),
    );
    cases.push(
        case(
            "missing folders are made",
            &["cut", "g.mp4", "--preset", "ultrafast", "-o", "a/b/c.mp4"],
            &[0],
        )
        .writes("a"),
    );
    cases.push(
        case(
            "earlier output replaced",
            &["cut", "g.mp4", "--preset", "ultrafast", "-o", "o.mp4"],
            &[0],
        )
        .writes("o.mp4")
        .writes("o.json")
        .with(|d| {
            std::fs::write(d.join("o.mp4"), b"old").unwrap();
            // An earlier run's sidecar (a file vidprep did not write is never replaced).
            std::fs::write(
                d.join("o.json"),
                br#"{"vidprep_version": "0.0.1", "output": {"path": "o.mp4"}}"#,
            )
            .unwrap();
        }),
    );
    cases.push(
        case(
            "earlier frames replaced whole",
            &[
                "export",
                "frames",
                "g.mp4",
                "--count",
                "4",
                "--out-dir",
                "f",
            ],
            &[0],
        )
        .writes("f")
        .with(|d| {
            std::fs::create_dir(d.join("f")).unwrap();
            std::fs::write(d.join("f/frames.json"), b"{}").unwrap();
            for i in 0..8 {
                std::fs::write(d.join(format!("f/{i:02}_old.jpg")), b"x").unwrap();
            }
        })
        .then(|d| {
            // The earlier export is replaced as a whole: four new images, no old one.
            let mut names: Vec<String> = std::fs::read_dir(d.join("f"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            let images = names.iter().filter(|n| n.ends_with(".jpg")).count();
            if images != 4 || names.iter().any(|n| n.contains("_old")) {
                return Err(format!("the folder holds {names:?}"));
            }
            Ok(())
        }),
    );
    cases.push(
        case(
            "sidecar path is a folder",
            &["cut", "g.mp4", "-o", "s.mp4"],
            &[2],
        )
        .says("folder")
        .with(|d| std::fs::create_dir(d.join("s.json")).unwrap()),
    );
    // --- Hostile annotations.
    cases.push(case("times at the i64 limits", &["overlay", "g.mp4", "--boxes", "huge.csv", "--preset", "ultrafast", "-o", "o.mp4"], &[0]).writes("o.mp4").writes("o.json").with(|d| {
        std::fs::write(d.join("huge.csv"), "time,track,x1,y1,x2,y2\n-9223372036854775807/1,1,1,1,5,5\n9223372036854775807/1,1,1,1,5,5\n").unwrap();
    }));
    for (name, body) in [
        ("nan boxes", "frame,track,x1,y1,x2,y2\n0,1,NaN,1,5,5\n"),
        ("inf boxes", "frame,track,x1,y1,x2,y2\n0,1,inf,1,5,5\n"),
        (
            "huge frame",
            "frame,track,x1,y1,x2,y2\n18446744073709551615,1,1,1,5,5\n",
        ),
        ("negative frame", "frame,track,x1,y1,x2,y2\n-1,1,1,1,5,5\n"),
        ("ragged rows", "frame,track,x1,y1,x2,y2\n0,1,1\n"),
        ("binary", "\u{0}\u{1}\u{2}\u{ff}garbage"),
        ("only a header", "frame,track,x1,y1,x2,y2\n"),
    ] {
        let body = body.to_string();
        cases.push(
            case(
                name,
                &[
                    "overlay",
                    "g.mp4",
                    "--boxes",
                    "b.csv",
                    "--preset",
                    "ultrafast",
                    "-o",
                    "o.mp4",
                ],
                &[0, 1],
            )
            .writes("o.mp4")
            .writes("o.json")
            .with(move |d| std::fs::write(d.join("b.csv"), &body).unwrap()),
        );
    }
    cases.push(
        case(
            "bom csv",
            &[
                "overlay",
                "g.mp4",
                "--boxes",
                "bom.csv",
                "--preset",
                "ultrafast",
                "-o",
                "o.mp4",
            ],
            &[0],
        )
        .writes("o.mp4")
        .writes("o.json")
        .with(|d| {
            std::fs::write(
                d.join("bom.csv"),
                "\u{feff}frame,track_id,x1,y1,x2,y2\n0,1,10,10,60,60\n",
            )
            .unwrap();
        }),
    );
    cases.push(
        case(
            "fifo annotations",
            &["overlay", "g.mp4", "--boxes", "b.csv", "-o", "o.mp4"],
            &[1],
        )
        .says("not a regular file")
        .with(|d| mkfifo(&d.join("b.csv"))),
    );
    for rate in [
        "0.0001Hz",
        "1/1000000000000Hz",
        "0Hz",
        "-5Hz",
        "NaNHz",
        "1e12Hz",
        "100000Hz",
    ] {
        let rate = rate.to_string();
        cases.push(
            case(
                &format!("anno_fps {rate}"),
                &[
                    "insert",
                    "--host",
                    "g.mp4",
                    "--sequence",
                    "seq",
                    "--at",
                    "0",
                    "--preset",
                    "ultrafast",
                    "-o",
                    "a.mp4",
                ],
                &[1],
            )
            .says("anno_fps")
            .with(move |d| {
                std::fs::write(
                    d.join("seq/meta_info.ini"),
                    format!("[METAINFO]\nanno_fps: {rate}\n"),
                )
                .unwrap();
            }),
        );
    }
    cases.push(
        case(
            "groundtruth too short",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "a.mp4",
            ],
            &[1],
        )
        .says("groundtruth.txt")
        .with(|d| std::fs::write(d.join("seq/groundtruth.txt"), "1,2,3,4\n").unwrap()),
    );
    cases.push(
        case(
            "broken jpeg in sequence",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "a.mp4",
            ],
            &[1],
        )
        .says("00000003.jpg")
        .with(|d| std::fs::write(d.join("seq/00000003.jpg"), b"\xff\xd8broken").unwrap()),
    );
    cases.push(
        case(
            "sequence without images",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "empty",
                "--at",
                "0",
                "-o",
                "a.mp4",
            ],
            &[1],
        )
        .says("empty")
        .with(|d| std::fs::create_dir(d.join("empty")).unwrap()),
    );
    // --- Command-line misuse.
    cases.push(case(
        "sequences with host",
        &[
            "insert",
            "--host",
            "g.mp4",
            "--sequences",
            "seq",
            "--at",
            "0",
            "-o",
            "a.mp4",
        ],
        &[2],
    ));
    cases.push(case(
        "unknown flag",
        &["cut", "g.mp4", "--frobnicate", "-o", "o.mp4"],
        &[2],
    ));
    cases.push(
        case(
            "crf out of range",
            &["cut", "g.mp4", "--crf", "99", "-o", "o.mp4"],
            &[2],
        )
        .says("crf"),
    );
    cases.push(
        case(
            "unknown preset",
            &["cut", "g.mp4", "--preset", "turbo", "-o", "o.mp4"],
            &[2],
        )
        .says("turbo"),
    );
    cases.push(
        case(
            "copy with decision",
            &["cut", "g.mp4", "--decision", "1s", "--copy", "-o", "o.mp4"],
            &[2],
        )
        .says("--copy"),
    );
    cases.push(
        case(
            "zero frames",
            &[
                "export",
                "frames",
                "g.mp4",
                "--out-dir",
                "f",
                "--count",
                "0",
            ],
            &[2],
        )
        .says("at least 1"),
    );
    cases.push(
        case(
            "too many frames",
            &[
                "export",
                "frames",
                "g.mp4",
                "--out-dir",
                "f",
                "--count",
                "100",
            ],
            &[1],
        )
        .says("--allow-repeats"),
    );
    cases.push(case(
        "unknown payload",
        &[
            "export",
            "frames",
            "g.mp4",
            "--out-dir",
            "f",
            "--payload",
            "claude",
        ],
        &[2],
    ));
    cases.push(case(
        "unknown sampler",
        &[
            "export",
            "frames",
            "g.mp4",
            "--out-dir",
            "f",
            "--sampler",
            "decord",
        ],
        &[2],
    ));
    cases.push(
        case(
            "tiny budget",
            &[
                "export",
                "video",
                "g.mp4",
                "-o",
                "v.mp4",
                "--max-base64-bytes",
                "10",
            ],
            &[2],
        )
        .says("too small"),
    );
    cases.push(
        case(
            "budget too small to encode",
            &[
                "export",
                "video",
                "g.mp4",
                "-o",
                "v.mp4",
                "--max-base64-bytes",
                "2000",
                "--reencode",
            ],
            &[1],
        )
        .says("g.mp4"),
    );
    cases.push(
        case(
            "overlay without boxes",
            &["overlay", "g.mp4", "-o", "o.mp4"],
            &[2],
        )
        .says("--boxes"),
    );
    cases.push(
        case(
            "box options without boxes",
            &["cut", "g.mp4", "--thickness", "4", "-o", "o.mp4"],
            &[2],
        )
        .says("--boxes"),
    );
    cases.push(
        case(
            "bad shard",
            &["run", "m.jsonl", "--out-dir", "out", "--shard", "5/2"],
            &[2],
        )
        .with(|d| manifest(d, "m.jsonl", &[])),
    );
    cases.push(
        case(
            "strict on a clean file",
            &[
                "cut",
                "g.mp4",
                "--strict",
                "--preset",
                "ultrafast",
                "-o",
                "o.mp4",
            ],
            &[0],
        )
        .writes("o.mp4")
        .writes("o.json"),
    );
    // --- Manifests and batches.
    let ok_line = |id: &str| {
        format!(
            r#"{{"id": "{id}", "source": "g.mp4", "end": 10, "exports": [{{"kind": "clip", "preset": "ultrafast"}}]}}"#
        )
    };
    let ok1 = ok_line("a");
    cases.push(
        case(
            "bom manifest",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[0],
        )
        .writes("out")
        .with(move |d| {
            std::fs::write(d.join("m.jsonl"), format!("\u{feff}{ok1}\n")).unwrap();
        }),
    );
    for (name, line) in [
        (
            "id report.jsonl",
            r#"{"id": "report.jsonl", "source": "g.mp4"}"#,
        ),
        (
            "id report shard",
            r#"{"id": "report.shard-0-of-2.jsonl", "source": "g.mp4"}"#,
        ),
        ("id with slash", r#"{"id": "../x", "source": "g.mp4"}"#),
        (
            "id starting with a dot",
            r#"{"id": ".x", "source": "g.mp4"}"#,
        ),
        (
            "export named item",
            r#"{"id": "a", "source": "g.mp4", "exports": [{"kind": "clip", "name": "item"}]}"#,
        ),
        (
            "unknown field",
            r#"{"id": "a", "source": "g.mp4", "colour": "red"}"#,
        ),
        (
            "unknown export",
            r#"{"id": "a", "source": "g.mp4", "exports": [{"kind": "gif"}]}"#,
        ),
        (
            "exports not a list",
            r#"{"id": "a", "source": "g.mp4", "exports": {"kind": "clip"}}"#,
        ),
        ("source is a number", r#"{"id": "a", "source": 5}"#),
        (
            "time is an object",
            r#"{"id": "a", "source": "g.mp4", "start": {"s": 1}}"#,
        ),
        (
            "huge frame number",
            r#"{"id": "a", "source": "g.mp4", "start": 18446744073709551616}"#,
        ),
        (
            "negative frame number",
            r#"{"id": "a", "source": "g.mp4", "start": -3}"#,
        ),
        ("not json", r#"{"id": "a", "source": "#),
        ("array line", "[1, 2, 3]"),
        ("missing source", r#"{"id": "a", "source": "nope.mp4"}"#),
        ("fifo source", r#"{"id": "a", "source": "f.mp4"}"#),
        (
            "two decisions forms",
            r#"{"id": "a", "source": "g.mp4", "span": {"start": 1}, "start": 2}"#,
        ),
        (
            "insert at and seed",
            r#"{"id": "a", "source": "g.mp4", "insert": {"sequence": "seq", "at": 0, "seed": 1}}"#,
        ),
        (
            "boxes_out without boxes",
            r#"{"id": "a", "source": "g.mp4", "exports": [{"kind": "clip", "boxes_out": "vstar"}]}"#,
        ),
        (
            "copy with insert",
            r#"{"id": "a", "source": "g.mp4", "insert": {"sequence": "seq", "at": 0}, "exports": [{"kind": "clip", "copy": true}]}"#,
        ),
    ] {
        let line = line.to_string();
        let is_fifo = name == "fifo source";
        cases.push(
            case(
                &format!("manifest: {name}"),
                &["run", "m.jsonl", "--out-dir", "out"],
                &[1],
            )
            .says("m.jsonl line 1")
            .writes("out")
            .with(move |d| {
                if is_fifo {
                    mkfifo(&d.join("f.mp4"));
                }
                manifest(d, "m.jsonl", std::slice::from_ref(&line));
            }),
        );
    }
    let (a, b) = (ok_line("a"), ok_line("a"));
    cases.push(
        case(
            "duplicate ids",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .says("duplicate id")
        .writes("out")
        .with(move |d| manifest(d, "m.jsonl", &[a.clone(), b.clone()])),
    );
    cases.push(
        case(
            "empty manifest",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[0],
        )
        .writes("out")
        .with(|d| manifest(d, "m.jsonl", &[])),
    );
    cases.push(
        case(
            "binary manifest",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .says("m.jsonl")
        .with(|d| std::fs::write(d.join("m.jsonl"), b"\xff\xfe\x00garbage").unwrap()),
    );
    cases.push(
        case(
            "fifo manifest",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1, 2],
        )
        .says("m.jsonl")
        .with(|d| mkfifo(&d.join("m.jsonl"))),
    );
    let l = ok_line("a");
    cases.push(
        case(
            "jobs 10000",
            &["run", "m.jsonl", "--out-dir", "out", "--jobs", "4096"],
            &[0],
        )
        .writes("out")
        .with(move |d| manifest(d, "m.jsonl", std::slice::from_ref(&l))),
    );
    cases.push(
        case(
            "source inside its item folder",
            &["run", "m.jsonl", "--out-dir", "."],
            &[2],
        )
        .says("holds its input")
        .with(|d| {
            std::fs::create_dir(d.join("a")).unwrap();
            std::fs::copy(d.join("g.mp4"), d.join("a/clip.mp4")).unwrap();
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "a/clip.mp4"}"#.to_string()],
            );
        }),
    );
    cases.push(
        case(
            "manifest inside an item folder",
            &["run", "a/item.json", "--out-dir", "."],
            &[2],
        )
        .says("holds its input")
        .with(|d| {
            std::fs::create_dir(d.join("a")).unwrap();
            manifest(
                d,
                "a/item.json",
                &[r#"{"id": "a", "source": "../g.mp4"}"#.to_string()],
            );
        }),
    );
    cases.push(
        case(
            "manifest where the report goes",
            &["run", "report.jsonl", "--out-dir", "."],
            &[2],
        )
        .says("report")
        .with(|d| {
            manifest(
                d,
                "report.jsonl",
                &[r#"{"id": "a", "source": "g.mp4"}"#.to_string()],
            )
        }),
    );
    cases.push(
        case(
            "foreign files in an item folder",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .says("did not write")
        .writes("out/report.jsonl")
        .with(|d| {
            std::fs::create_dir_all(d.join("out/a")).unwrap();
            std::fs::write(d.join("out/a/notes.txt"), b"mine").unwrap();
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g.mp4"}"#.to_string()],
            );
        }),
    );
    cases.push(
        case(
            "out-dir is a file",
            &["run", "m.jsonl", "--out-dir", "g.mp4"],
            &[1, 2],
        )
        .with(|d| {
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g.mp4"}"#.to_string()],
            )
        }),
    );
    let l = ok_line("b");
    cases.push(
        case(
            "a panic fails one item",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .says("panic")
        .writes("out")
        .env("VIDPREP_FAULT_PANIC", "a")
        .with(move |d| {
            manifest(
                d,
                "m.jsonl",
                &[
                    r#"{"id": "a", "source": "g.mp4", "end": 5}"#.to_string(),
                    l.clone(),
                ],
            );
        })
        .then(|d| {
            // The other item finished; the report says why the first failed.
            let report = std::fs::read_to_string(d.join("out/report.jsonl")).unwrap();
            let lines: Vec<serde_json::Value> = report
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let status = |id: &str| {
                lines.iter().find(|r| r["id"] == id).map(|r| {
                    (
                        r["status"].clone(),
                        r["error"].clone(),
                        r["error_kind"].clone(),
                    )
                })
            };
            let (a, b) = (status("a"), status("b"));
            match (&a, &b) {
                (Some((sa, ea, ka)), Some((sb, _, _)))
                    if sa == "failed"
                        && ea.as_str().is_some_and(|e| e.contains("panic"))
                        && ka == "internal"
                        && sb == "ok"
                        && d.join("out/b/clip.mp4").is_file() =>
                {
                    Ok(())
                }
                _ => Err(format!("report: {report}")),
            }
        }),
    );
    cases.push(
        case(
            "item with a 200 TB needle",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .says("anno_fps")
        .writes("out")
        .with(|d| {
            std::fs::write(
                d.join("seq/meta_info.ini"),
                "[METAINFO]\nanno_fps: 1/1000000000000Hz\n",
            )
            .unwrap();
            manifest(
                d,
                "m.jsonl",
                &[
                    r#"{"id": "a", "source": "g.mp4", "insert": {"sequence": "seq", "seed": 1}}"#
                        .to_string(),
                ],
            );
        })
        .then(|d| {
            let report = std::fs::read_to_string(d.join("out/report.jsonl")).unwrap();
            if report.contains("\"failed\"") && report.contains("anno_fps") {
                Ok(())
            } else {
                Err(format!("report: {report}"))
            }
        }),
    );
    cases.push(case("another run holds the folder", &["run", "m.jsonl", "--out-dir", "out"], &[2]).says("in use").writes("out").with(|d| {
        std::fs::create_dir(d.join("out")).unwrap();
        // A lock held by a live process (this test's parent, pid 1 is always alive).
        std::fs::write(d.join("out/.vidprep-lock"), r#"{"pid": 1, "host": "elsewhere", "manifest": null, "shard": null, "started_unix": 0}"#).unwrap();
        manifest(d, "m.jsonl", &[r#"{"id": "a", "source": "g.mp4"}"#.to_string()]);
    }));
    cases.push(
        case(
            "cut manifest",
            &["cut", "--manifest", "m.jsonl", "--out-dir", "out"],
            &[0],
        )
        .writes("out")
        .with(|d| {
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g.mp4", "start": 1, "end": 9}"#.to_string()],
            );
        }),
    );
    cases.push(
        case(
            "cut manifest with style flags",
            &[
                "cut",
                "--manifest",
                "m.jsonl",
                "--out-dir",
                "out",
                "--thickness",
                "3",
            ],
            &[2],
        )
        .says("manifest item")
        .with(|d| manifest(d, "m.jsonl", &[])),
    );
    cases.push(
        case(
            "insert hosts with no hosts",
            &[
                "insert",
                "--hosts",
                "nohosts",
                "--sequences",
                ".",
                "--count",
                "2",
                "--seed",
                "1",
                "--out-dir",
                "out",
            ],
            &[1],
        )
        .says("nohosts")
        .with(|d| std::fs::create_dir(d.join("nohosts")).unwrap()),
    );
    // --- detect: its outputs are claimed before anything is decoded.
    cases.push(
        case(
            "detect onto its source",
            &["detect", "g.mp4", "-o", "g.mp4"],
            &[2],
        )
        .says("input"),
    );
    cases.push(case(
        "detect manifest and stats collide",
        &["detect", "g.mp4", "-o", "p.jsonl", "--stats", "p.jsonl"],
        &[2],
    ));
    cases.push(
        case(
            "detect sheets onto the manifest",
            &["detect", "g.mp4", "-o", "p.jsonl", "--sheets", "p.jsonl"],
            &[2],
        )
        .says("another output"),
    );
    cases.push(
        case(
            "detect an empty folder",
            &["detect", "empty", "-o", "p.jsonl"],
            &[1],
        )
        .says("holds no images")
        .with(|d| std::fs::create_dir(d.join("empty")).unwrap()),
    );
    cases.push(
        case(
            "detect a bad scheme",
            &["detect", "ftp://x/y.mp4", "-o", "p.jsonl"],
            &[1, 2],
        )
        .says("ftp"),
    );
    cases.push(
        case(
            "detect a bad track",
            &[
                "detect",
                "g.mp4",
                "-o",
                "p.jsonl",
                "--by",
                "annotations",
                "--annotations",
                "b.csv",
                "--track",
                "9",
            ],
            &[1, 2],
        )
        .says("no track \"9\"")
        .with(|d| {
            std::fs::write(
                d.join("b.csv"),
                "frame,track_id,x1,y1,x2,y2\n0,1,0,0,10,10\n",
            )
            .unwrap()
        }),
    );
    cases.push(
        case(
            "detect writes its manifest and stats",
            &["detect", "g.mp4", "-o", "p.jsonl", "--stats", "s.csv"],
            &[0],
        )
        .writes("p.jsonl")
        .writes("s.csv"),
    );
    // --- smart encoding: contradictory requests are refused before anything is written.
    cases.push(
        case(
            "verify without smart",
            &[
                "cut", "g.mp4", "--start", "5", "--end", "30", "--verify", "-o", "c.mp4",
            ],
            &[2],
        )
        .says("--smart"),
    );
    cases.push(case(
        "smart and copy",
        &[
            "cut", "g.mp4", "--start", "5", "--end", "30", "--smart", "--copy", "-o", "c.mp4",
        ],
        &[2],
    ));
    cases.push(
        case(
            "smart and copy in a manifest",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1],
        )
        .says("not both")
        .writes("out")
        .with(|d| {
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g.mp4", "exports": [{"kind": "clip", "smart": true, "copy": true}]}"#.to_string()],
            )
        }),
    );
    cases.push(
        case(
            "smart onto its source",
            &[
                "cut", "g.mp4", "--start", "5", "--end", "30", "--smart", "-o", "g.mp4",
            ],
            &[2],
        )
        .says("input"),
    );
    // --- review: the page never lands on an item, a foreign folder or the run itself, and
    // review-apply never replaces a manifest.
    cases.push(
        case("review a folder that is no run", &["review", "empty"], &[2])
            .says("no items")
            .with(|d| std::fs::create_dir(d.join("empty")).unwrap()),
    );
    cases.push(case("review a file", &["review", "g.mp4"], &[2]).says("not a folder"));
    cases.push(
        case(
            "review page onto an item",
            &["review", "out", "-o", "out/a"],
            &[2],
        )
        .says("item's folder")
        .with(small_run),
    );
    cases.push(
        case(
            "review page into a foreign folder",
            &["review", "out", "-o", "mine"],
            &[2],
        )
        .says("did not write")
        .with(|d| {
            small_run(d);
            std::fs::create_dir(d.join("mine")).unwrap();
            std::fs::write(d.join("mine/notes.txt"), "mine").unwrap();
        }),
    );
    cases.push(
        case(
            "review page onto the run folder",
            &["review", "out", "-o", "out"],
            &[2],
        )
        .says("run folder")
        .with(small_run),
    );
    cases.push(
        case(
            "review page where a file is",
            &["review", "out", "-o", "g.mp4"],
            &[2],
        )
        .says("not a folder")
        .with(small_run),
    );
    cases.push(
        case(
            "review writes only its page",
            &["review", "out", "--manifest", "m.jsonl"],
            &[0],
        )
        .writes("out/review")
        .with(small_run)
        .then(|d| {
            let page = d.join("out/review");
            for f in [
                "index.html",
                "assets/review.js",
                "data/index.js",
                "data/items/00000.js",
                "media/a/preview.mp4",
            ] {
                if !page.join(f).is_file() {
                    return Err(format!("the page lacks {f}"));
                }
            }
            Ok(())
        }),
    );
    cases.push(
        case(
            "review twice replaces its page",
            &["review", "out", "--manifest", "m.jsonl", "--thumbs", "3"],
            &[0],
        )
        .writes("out/review")
        .with(|d| {
            small_run(d);
            vidprep()
                .current_dir(d)
                .args(["review", "out", "--manifest", "m.jsonl"])
                .assert()
                .success();
        })
        .then(|d| {
            let thumbs = std::fs::read_dir(d.join("out/review/media/a/thumbs"))
                .unwrap()
                .count();
            (thumbs == 4).then_some(()).ok_or(format!(
                "{thumbs} files in thumbs/, expected 3 images and frames.json"
            ))
        }),
    );
    cases.push(
        case(
            "review of a run whose source is gone",
            &["review", "out"],
            &[1],
        )
        .says("no preview")
        .writes("out/review")
        .with(|d| {
            small_run(d);
            std::fs::remove_file(d.join("g2.mp4")).unwrap();
        })
        .then(|d| {
            let index = std::fs::read_to_string(d.join("out/review/data/index.js"))
                .map_err(|e| format!("no page: {e}"))?;
            index
                .contains("\"id\":\"a\"")
                .then_some(())
                .ok_or("item a is not listed".into())
        }),
    );
    cases.push(
        case(
            "review-apply onto its manifest",
            &[
                "review-apply",
                "d.json",
                "--manifest",
                "m.jsonl",
                "-o",
                "m.jsonl",
            ],
            &[2],
        )
        .says("overwrite an input")
        .with(|d| {
            small_run(d);
            decisions(d, r#"{"id": "a", "verdict": "rejected"}"#);
        }),
    );
    cases.push(
        case(
            "review-apply elsewhere",
            &[
                "review-apply",
                "d.json",
                "--manifest",
                "m.jsonl",
                "-o",
                "sub/m.jsonl",
            ],
            &[2],
        )
        .says("must be written in the folder")
        .with(|d| {
            small_run(d);
            std::fs::create_dir(d.join("sub")).unwrap();
            decisions(d, r#"{"id": "a", "verdict": "rejected"}"#);
        }),
    );
    cases.push(
        case(
            "review-apply not decisions",
            &["review-apply", "g.mp4", "--manifest", "m.jsonl"],
            &[1],
        )
        .says("not a review decisions file")
        .with(small_run),
    );
    cases.push(
        case(
            "review-apply decisions of another run",
            &["review-apply", "d.json", "--manifest", "m.jsonl"],
            &[1],
        )
        .says("not in")
        .with(|d| {
            small_run(d);
            decisions(d, r#"{"id": "zz", "verdict": "rejected"}"#);
        }),
    );
    cases.push(
        case(
            "review-apply a frame past the span",
            &["review-apply", "d.json", "--manifest", "m.jsonl"],
            &[1],
        )
        .says("past the span")
        .with(|d| {
            small_run(d);
            decisions(
                d,
                r#"{"id": "a", "verdict": "accepted", "decision": {"frame": 21}, "reviewed": {"decision_frame": 15, "decision_requested": "75%", "span_frames": 20}}"#,
            );
        }),
    );
    cases.push(
        case(
            "review-apply writes the reviewed manifest",
            &["review-apply", "d.json", "--manifest", "m.jsonl"],
            &[0],
        )
        .writes("m.reviewed.jsonl")
        .with(|d| {
            small_run(d);
            decisions(
                d,
                r#"{"id": "a", "verdict": "accepted", "decision": {"frame": 5}, "reviewed": {"decision_frame": 15, "decision_requested": "75%", "span_frames": 20}}"#,
            );
        })
        .then(|d| {
            let text = std::fs::read_to_string(d.join("m.reviewed.jsonl")).unwrap();
            text.contains("\"decision\":5").then_some(()).ok_or(format!("decision not moved: {text}"))
        }),
    );
    cases
}

/// A one-item run of `g2.mp4` (a copy of the base video) into `out/`, from `m.jsonl`.
fn small_run(d: &Path) {
    std::fs::copy(d.join("g.mp4"), d.join("g2.mp4")).unwrap();
    manifest(
        d,
        "m.jsonl",
        &[r#"{"id": "a", "source": "g2.mp4", "start": 5, "end": 25, "decision": "75%", "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#.to_string()],
    );
    vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "out"])
        .assert()
        .success();
}

/// A decisions file `d.json` with these items.
fn decisions(d: &Path, items: &str) {
    std::fs::write(
        d.join("d.json"),
        format!("{{\"vidprep_review_decisions\": 1, \"items\": [{items}]}}"),
    )
    .unwrap();
}

#[test]
fn every_fault_ends_cleanly() {
    let cases = corpus();
    assert!(
        cases.len() >= 100,
        "the corpus has {} scenarios",
        cases.len()
    );
    let failures: Vec<String> = std::thread::scope(|scope| {
        let chunks: Vec<&[Case]> = cases.chunks(cases.len().div_ceil(4)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|c| {
                            run_case(c)
                                .err()
                                .map(|e| format!("{} ({:?}): {e}", c.name, c.args))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} scenarios failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// Interrupts `vidprep cut` after `delay` with `signal`; returns what the folder holds.
fn interrupted_cut(signal: &str, delay: Duration) -> (tempfile::TempDir, std::process::ExitStatus) {
    let dir = tempfile::tempdir().unwrap();
    let src = SynthVideo::new(640, 480)
        .frames(250)
        .audio_tone(440.0)
        .cached();
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    let mut child = std::process::Command::new(bin)
        .arg("cut")
        .arg(&src.path)
        .args(["--preset", "slow", "-o"])
        .arg(dir.path().join("out/o.mp4"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    (dir, status)
}

fn names_below(dir: &Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| {
            e.unwrap()
                .path()
                .strip_prefix(dir)
                .unwrap()
                .display()
                .to_string()
        })
        .collect()
}

#[test]
fn interrupting_a_single_command_leaves_nothing_half_written() {
    for signal in ["-INT", "-TERM"] {
        for ms in [150, 600, 1500] {
            let (dir, status) = interrupted_cut(signal, Duration::from_millis(ms));
            let left = names_below(dir.path());
            if status.success() {
                // It finished before the signal: the whole output is there.
                assert!(
                    left.iter().any(|n| n.ends_with("o.mp4"))
                        && left.iter().any(|n| n.ends_with("o.json")),
                    "{left:?}"
                );
                continue;
            }
            // Interrupted: exit 130, and not even the output folder it made is left. On a
            // loaded machine the signal can arrive before the handler is installed (the first
            // instructions of `main`): the default action ends the process before it has
            // written anything, which keeps the same guarantee.
            use std::os::unix::process::ExitStatusExt;
            let killed_before_start = status.code().is_none() && status.signal().is_some();
            assert!(
                status.code() == Some(130) || killed_before_start,
                "{signal} after {ms} ms: {status:?}"
            );
            assert!(left.is_empty(), "{signal} after {ms} ms left {left:?}");
        }
    }
}

#[test]
fn interrupting_a_batch_finishes_its_report_and_commits_nothing_half_done() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = SynthVideo::new(640, 480).frames(250).cached();
    let lines: Vec<String> = (0..6)
        .map(|i| {
            format!(
                r#"{{"id": "item{i}", "source": {:?}, "exports": [{{"kind": "clip", "preset": "slow"}}]}}"#,
                src.path
            )
        })
        .collect();
    std::fs::write(d.join("m.jsonl"), lines.join("\n") + "\n").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    let mut child = std::process::Command::new(bin)
        .args(["run", "m.jsonl", "--out-dir", "out", "--jobs", "2"])
        .current_dir(d)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let left = names_below(d);
    assert!(left.iter().all(|n| !n.contains("vidprep-tmp")), "{left:?}");
    // Every item folder that exists is complete; the report says what did not run.
    let report = std::fs::read_to_string(d.join("out/report.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = report
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6, "{report}");
    for r in &lines {
        let id = r["id"].as_str().unwrap();
        let folder = d.join("out").join(id);
        match r["status"].as_str().unwrap() {
            "ok" => {
                assert!(folder.join("clip.mp4").is_file() && folder.join("item.json").is_file())
            }
            _ => assert!(!folder.exists(), "{id}: {r}"),
        }
    }
    assert!(
        lines.iter().any(|r| r["status"] != "ok"),
        "the interrupt came after every item finished: {report}"
    );
}

#[test]
fn a_killed_command_leaves_only_temporaries_that_the_next_run_removes() {
    for ms in [150, 600] {
        let (dir, status) = interrupted_cut("-KILL", Duration::from_millis(ms));
        if status.success() {
            continue;
        }
        let left = names_below(dir.path());
        assert!(
            left.iter()
                .all(|n| !n.ends_with("o.mp4") && !n.ends_with("o.json")),
            "kill -9 after {ms} ms left a final name: {left:?}"
        );
        // The next run into the same folder removes the dead run's temporaries.
        let src = SynthVideo::new(160, 120).frames(20).cached();
        vidprep()
            .arg("cut")
            .arg(&src.path)
            .args(["--preset", "ultrafast", "-o"])
            .arg(dir.path().join("out/o.mp4"))
            .assert()
            .success();
        let left = names_below(dir.path());
        assert!(
            left.iter().all(|n| !n.contains("vidprep-tmp")),
            "after the next run: {left:?}"
        );
    }
}
