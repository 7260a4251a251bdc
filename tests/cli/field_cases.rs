//! What a newcomer trips over on the command line: the flag names they guess (`truncate
//! --decision`, `cut --begin`, `--boxes-format` on every command), `cut --ratios` straight from
//! the source, defaults in the docs that match the binary's, help and report lines that say
//! what the output is (containers, frame counts, decimal seconds), host folders of symbolic
//! links, and the Python package's dependencies. Outputs are checked with ffprobe and the
//! frame codes ffmpeg reads back from the pixels.

use crate::common;
use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::oracle::{self, PixFmt};
use common::synth::{SynthInfo, SynthVideo};
use support::vidprep;

fn root() -> PathBuf {
    crate::repo_root().to_path_buf()
}

fn small() -> SynthInfo {
    SynthVideo::new(160, 120)
        .frames(40)
        .gop(10)
        .bframes(2)
        .cached()
}

fn stdout_of(args: &[&str]) -> String {
    let out = vidprep().args(args).assert().success();
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

/// The output holds the source frames `expected` (codes read back by ffmpeg), each close to
/// its source frame: decoded once from the source, encoded once.
fn assert_source_frames(source: &SynthInfo, output: &Path, expected: std::ops::Range<u32>) {
    let codes = oracle::frame_codes(output);
    assert_eq!(codes, expected.clone().collect::<Vec<_>>(), "{output:?}");
    let src = oracle::decode_frames(&source.path, PixFmt::Yuv420p, None);
    let out = oracle::decode_frames(output, PixFmt::Yuv420p, None);
    for (k, i) in expected.enumerate() {
        let p = oracle::psnr(&out[k], &src[i as usize]);
        assert!(p >= 40.0, "{output:?} frame {k}: PSNR {p:.2} dB");
    }
}

#[test]
fn natural_flag_names_are_accepted() {
    let v = small();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = v.path.to_str().unwrap();
    // truncate --decision is --at.
    let out = d.join("t.mp4");
    vidprep()
        .args(["truncate", src, "--decision", "50%", "-o"])
        .arg(&out)
        .assert()
        .success();
    assert_source_frames(&v, &out, 0..20);
    // cut --begin is --start.
    let out = d.join("c.mp4");
    vidprep()
        .args(["cut", src, "--begin", "10", "--end", "30", "-o"])
        .arg(&out)
        .assert()
        .success();
    assert_source_frames(&v, &out, 10..30);
    // --boxes-format (export frames' name, where --format is the image format) works on
    // cut and overlay too, and export frames takes --image-format.
    let boxes = d.join("boxes.csv");
    std::fs::write(&boxes, "frame,x1,y1,x2,y2\n0,10,10,50,50\n5,20,20,60,60\n").unwrap();
    for cmd in ["cut", "overlay"] {
        let out = d.join(format!("{cmd}_boxes.mp4"));
        vidprep()
            .args([cmd, src, "--boxes"])
            .arg(&boxes)
            .args(["--boxes-format", "csv", "-o"])
            .arg(&out)
            .assert()
            .success();
    }
    vidprep()
        .args([
            "export",
            "frames",
            src,
            "--count",
            "2",
            "--image-format",
            "png",
        ])
        .args(["--boxes"])
        .arg(&boxes)
        .args(["--boxes-format", "csv", "--out-dir"])
        .arg(d.join("frames"))
        .assert()
        .success();
    assert!(d.join("frames").join("frames.json").is_file());
}

#[test]
fn cut_ratios_cut_each_decision_point_from_the_source() {
    let v = small();
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("clip.mp4");
    vidprep()
        .args([
            "cut",
            v.path.to_str().unwrap(),
            "--start",
            "4",
            "--end",
            "36",
        ])
        .args(["--ratios", "50%,75%,100%", "-o"])
        .arg(&base)
        .assert()
        .success();
    // 32 frames from source frame 4: 16, 24 and 32 of them.
    for (name, n) in [
        ("clip_50.mp4", 16),
        ("clip_75.mp4", 24),
        ("clip_100.mp4", 32),
    ] {
        let out = dir.path().join(name);
        assert_eq!(oracle::count_frames(&out), n, "{name}");
        assert_source_frames(&v, &out, 4..4 + n as u32);
    }
    // --ratios and --decision are one or the other.
    vidprep()
        .args([
            "cut",
            v.path.to_str().unwrap(),
            "--decision",
            "50%",
            "--ratios",
            "75%",
        ])
        .arg("-o")
        .arg(dir.path().join("x.mp4"))
        .assert()
        .code(2);
}

/// `[default: X]` of every flag in every command's `--help`, by flag name.
fn help_defaults() -> BTreeMap<String, BTreeSet<String>> {
    let commands: [&[&str]; 11] = [
        &["probe"],
        &["cut"],
        &["truncate"],
        &["overlay"],
        &["insert"],
        &["export", "video"],
        &["export", "frames"],
        &["detect"],
        &["run"],
        &["review"],
        &["review-apply"],
    ];
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in commands {
        let mut args = c.to_vec();
        args.push("--help");
        let text = stdout_of(&args);
        let mut flag: Option<String> = None;
        for line in text.lines() {
            let t = line.trim_start();
            if t.starts_with('-') {
                flag = t
                    .split([' ', ',', '<', '='])
                    .find(|w| w.starts_with("--"))
                    .map(str::to_string);
            }
            if let (Some(f), Some(at)) = (&flag, line.find("[default: ")) {
                let v = &line[at + 10..];
                let v = &v[..v.find(']').unwrap_or(v.len())];
                out.entry(f.clone()).or_default().insert(v.to_string());
            }
        }
    }
    out
}

/// Numbers: `1 s` and `1s` are the same default.
fn same_default(doc: &str, code: &str) -> bool {
    let norm = |s: &str| s.replace(' ', "").trim_end_matches('s').to_string();
    match (norm(doc).parse::<f64>(), norm(code).parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => norm(doc) == norm(code),
    }
}

#[test]
fn defaults_in_the_docs_are_the_binarys() {
    let code = help_defaults();
    assert!(
        code.get("--cut-threshold").is_some_and(|d| !d.is_empty()),
        "the help lists detect's defaults: {code:?}"
    );
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.push(root().join("README.md"));
    let mut checked = 0;
    let mut wrong = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(&doc).unwrap();
        // "`--flag` (default 8", "`--flag`, default 26", "`--flag` seconds (default 0.5)".
        for (at, _) in text.match_indices("`--") {
            let rest = &text[at + 1..];
            let Some(end) = rest.find('`') else { continue };
            let flag = &rest[..end];
            let after = &rest[end + 1..];
            let window: String = after.chars().take(24).collect();
            let Some(d) = window.find("default ") else {
                continue;
            };
            if window[..d].contains('`') || window[..d].contains('.') {
                continue;
            }
            let value: String = after[d + 8..]
                .trim_start_matches('`')
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let value = value.trim_end_matches('.');
            if value.is_empty() {
                continue;
            }
            let Some(defaults) = code.get(flag) else {
                continue;
            };
            checked += 1;
            if !defaults.iter().any(|c| same_default(value, c)) {
                wrong.push(format!(
                    "{}: `{flag}` default {value}, the binary says {defaults:?}",
                    doc.display()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 5, "only {checked} documented defaults found");
}

#[test]
fn help_and_report_lines_say_what_was_made() {
    // export video writes .mp4, .mov and .mkv; its help says so.
    let help = stdout_of(&["export", "video", "--help"]);
    assert!(
        help.contains(".mkv") && help.contains(".mov"),
        "export video --help:\n{help}"
    );
    // A smart clip of a whole file copies every GOP: the line counts every output frame.
    let v = SynthVideo::new(160, 120).frames(50).gop(10).cached();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("smart.mp4");
    let line = stdout_of(&[
        "cut",
        v.path.to_str().unwrap(),
        "--smart",
        "-o",
        out.to_str().unwrap(),
    ]);
    let n = oracle::count_frames(&out);
    assert_eq!(n, 50);
    assert!(
        line.contains(&format!(": {n} frames (")),
        "report line {line:?}, ffprobe counts {n} frames"
    );
    // Durations for people are decimal seconds: frame 37 at 24 fps is 1.542 s, not 37/24.
    let v24 = SynthVideo::new(160, 120).fps(24, 1).frames(48).cached();
    let out = dir.path().join("t24.mp4");
    let line = stdout_of(&[
        "truncate",
        v24.path.to_str().unwrap(),
        "--at",
        "37",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(oracle::count_frames(&out), 37);
    assert!(
        line.contains("decision point: 1.542s into the output") && !line.contains("37/24"),
        "{line}"
    );
}

#[cfg(unix)]
#[test]
fn a_host_folder_of_symbolic_links_holds_videos() {
    let v = SynthVideo::new(320, 240).frames(60).cached();
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::create_dir(&hosts).unwrap();
    std::os::unix::fs::symlink(&v.path, hosts.join("host.mp4")).unwrap();
    let out = dir.path().join("out");
    vidprep()
        .args(["insert", "--hosts"])
        .arg(&hosts)
        .arg("--sequences")
        .arg(root().join("fixtures/example"))
        .args(["--count", "1", "--seed", "1", "--no-audio", "--out-dir"])
        .arg(&out)
        .assert()
        .success();
    let clips: Vec<PathBuf> = walk(&out)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "mp4"))
        .collect();
    assert_eq!(clips.len(), 1, "{clips:?}");
    // The host's 60 frames and the needle's.
    assert!(oracle::count_frames(&clips[0]) > 60);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_python_package_depends_on_pillow_for_the_vlmevalkit_loader() {
    let loaders = std::fs::read_to_string(root().join("python/vidprep/loaders.py")).unwrap();
    assert!(loaders.contains("from PIL import Image"));
    let toml = std::fs::read_to_string(root().join("python/pyproject.toml")).unwrap();
    let deps = toml
        .lines()
        .find(|l| l.starts_with("dependencies"))
        .expect("a dependencies line");
    assert!(deps.contains("\"Pillow"), "{deps}");
}
