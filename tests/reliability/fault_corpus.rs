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
//!
//! Each scenario is its own `#[test]`, in a module of `tests/reliability/fault_corpus/` by theme, so a
//! failure names its case (`cargo test --test integration reliability::fault_corpus::outputs::` runs one theme). A new
//! scenario is a function there calling [`check`] with a [`case`]; a family of scenarios that
//! differ by a value is one maker function and a [`cases!`] line per value.

use crate::common;
use crate::support;

/// One `#[test]` per value of a parametrised scenario:
/// `cases!(maker: test_name => (args of maker), ...);`.
macro_rules! cases {
    ($maker:ident: $($name:ident => ($($arg:expr),* $(,)?)),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                $crate::reliability::fault_corpus::check($maker($($arg),*));
            }
        )*
    };
}

mod annotations;
mod batches;
mod cli;
mod cluster;
mod commit_signals;
mod detect;
mod doors;
mod fleet;
mod inputs;
mod interleave;
mod interrupts;
mod outputs;
mod ownership;
mod repeat_runs;
mod review;
mod smart;
mod spans;

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
    let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    let mut chunk = |kind: &[u8], data: &[u8]| {
        png.extend((data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend(data);
        png.extend(&body);
        png.extend(crc32fast::hash(&body).to_be_bytes());
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
    let needle = crate::repo_root().join("fixtures/example/needle");
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

/// Runs one scenario; a failure names it.
fn check(c: Case) {
    if let Err(e) = run_case(&c) {
        panic!("{} ({:?}): {e}", c.name, c.args);
    }
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
