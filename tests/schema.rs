//! The JSON Schemas vidprep generates (`vidprep schema KIND`, `docs/schema/*.schema.json`),
//! checked with an independent validator (the `jsonschema` crate): the committed files are
//! what the code generates; every plan in `fixtures/` and in the README and docs validates;
//! sidecars, `frames.json`, `item.json` and report lines written by real runs on small
//! synthetic videos validate; and malformed plans are refused by both the schema and
//! vidprep's manifest reader (the schema is neither looser nor stricter on them), while
//! unusual but valid spellings are accepted by both.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::synth::{Corruption, SynthVideo};
use serde_json::Value;
use support::vidprep;
use vidprep::records::SchemaKind;

fn repo() -> PathBuf {
    crate::repo_root().to_path_buf()
}

pub(crate) fn validator(kind: SchemaKind) -> jsonschema::Validator {
    let schema = vidprep::records::json_schema(kind);
    jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("the {kind} schema is not a valid JSON Schema: {e}"))
}

/// The validator's complaints about `instance` (empty: valid).
fn errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

pub(crate) fn assert_valid(v: &jsonschema::Validator, instance: &Value, what: &str) {
    let errs = errors(v, instance);
    assert!(
        errs.is_empty(),
        "{what} does not validate:\n  {}\n{}",
        errs.join("\n  "),
        serde_json::to_string_pretty(instance).unwrap()
    );
}

#[test]
fn committed_schemas_are_what_the_code_generates() {
    let dir = repo().join("docs/schema");
    let regenerate = "for k in plan sidecar frames item report check parity; do cargo run -q -- schema $k > docs/schema/$k.schema.json; done";
    for kind in SchemaKind::ALL {
        let path = dir.join(kind.file_name());
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        let generated = vidprep::records::json_schema_text(kind);
        assert!(
            committed == generated,
            "{} differs from what the code generates (a type changed): regenerate the \
             schemas with\n  {regenerate}\nand commit them",
            path.display()
        );
        // Each is a valid schema, and the CLI prints exactly that text.
        validator(kind);
        let out = vidprep().args(["schema", kind.name()]).assert().success();
        assert_eq!(
            String::from_utf8_lossy(&out.get_output().stdout),
            generated,
            "vidprep schema {kind}"
        );
    }
    // An unknown kind is bad usage, with the kinds listed.
    let out = vidprep().args(["schema", "manifest"]).assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("plan") && stderr.contains("report"),
        "{stderr}"
    );
}

/// Every JSON object in `text` that starts `{"id"` and parses (`{...}`, "anything", is read
/// as `{}`; examples with other `...` or comments in them do not parse, and are left out).
fn plans_in_text(text: &str) -> Vec<Value> {
    let text = &text.replace("{...}", "{}");
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = text[i..].find('{') {
        let start = i + off;
        i = start + 1;
        if !text[start + 1..].trim_start().starts_with("\"id\"") {
            continue;
        }
        // The balanced end, outside strings.
        let (mut depth, mut in_str, mut esc) = (0usize, false, false);
        let mut end = None;
        for (k, &b) in bytes[start..].iter().enumerate() {
            if in_str {
                match (esc, b) {
                    (true, _) => esc = false,
                    (false, b'\\') => esc = true,
                    (false, b'"') => in_str = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_str = true,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(start + k + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { continue };
        if let Ok(v) = serde_json::from_str::<Value>(&text[start..end]) {
            if v.get("source").is_some() {
                out.push(v);
                i = end;
            }
        }
    }
    out
}

fn fixture_plans() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut stack = vec![repo().join("fixtures")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (n, line) in text.lines().enumerate() {
                    let t = line.trim();
                    if t.is_empty() || t.starts_with('#') || t.starts_with("//") {
                        continue;
                    }
                    let v: Value = serde_json::from_str(t).unwrap();
                    out.push((format!("{} line {}", path.display(), n + 1), v));
                }
            }
        }
    }
    out
}

#[test]
fn every_plan_in_the_fixtures_and_docs_validates() {
    let v = validator(SchemaKind::Plan);
    let mut plans = fixture_plans();
    let fixtures = plans.len();
    assert!(
        fixtures >= 6,
        "fixtures/example has its manifests: {fixtures}"
    );
    let mut docs = vec![repo().join("README.md")];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    docs.sort();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for plan in plans_in_text(&text) {
            plans.push((doc.display().to_string(), plan));
        }
    }
    let from_docs = plans.len() - fixtures;
    // The README's and manifest.md's examples at least (the complete one among them).
    assert!(from_docs >= 6, "examples found in the docs: {from_docs}");
    for (whence, plan) in &plans[fixtures..] {
        eprintln!("{whence}: {}", plan["id"]);
    }
    assert!(
        plans.iter().any(|(_, p)| p["id"] == "q0001"),
        "docs/manifest.md's complete example was found"
    );
    for (whence, plan) in &plans {
        assert_valid(&v, plan, &format!("the plan in {whence}"));
        // And vidprep reads it (serde: the part the schema describes).
        serde_json::from_value::<vidprep::Plan>(plan.clone())
            .unwrap_or_else(|e| panic!("vidprep refuses the plan in {whence}: {e}"));
    }
    eprintln!(
        "{} plans validated ({fixtures} in fixtures/, {from_docs} in the docs)",
        plans.len()
    );
}

/// A small video with audio, H.264 with short GOPs (for copy and smart clips).
fn source() -> PathBuf {
    SynthVideo::new(160, 120)
        .frames(50)
        .gop(10)
        .audio_tone(440.0)
        .code_block(8)
        .cached()
        .path
}

/// A manifest whose every line is given, the source file and a MOT box file beside it.
fn manifest(dir: &Path, lines: &[String]) -> PathBuf {
    std::fs::write(
        dir.join("gt.txt"),
        "1,1,10,10,40,30,1,1,1\n20,1,30,20,40,30,1,1,1\n40,1,50,40,40,30,1,1,1\n",
    )
    .unwrap();
    let path = dir.join("m.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn sidecars_and_reports_of_real_runs_validate() {
    let dir = tempfile::tempdir().unwrap();
    let src = source();
    let damaged = SynthVideo::new(160, 120)
        .frames(40)
        .code_block(8)
        .corrupt(Corruption::Garbage {
            at_fraction: 0.4,
            len_fraction: 0.3,
            seed: 9,
        })
        .cached()
        .path;
    // An image sequence (its sidecar records the images).
    let seq = dir.path().join("seq");
    std::fs::create_dir(&seq).unwrap();
    let pattern = format!("{}/%06d.png", seq.display());
    common::cmd::run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=64x48:rate=10",
            "-frames:v",
            "8",
            pattern.as_str(),
        ],
    );
    let s = src.display().to_string();
    let lines = vec![
        format!(
            r#"{{"id": "full", "source": "{s}", "start": "0.2s", "end": 45, "decision": "75%",
               "boxes": {{"path": "gt.txt", "format": "mot", "fill": "hold"}},
               "exports": [{{"kind": "clip", "boxes_out": "vidprep"}},
                           {{"kind": "video", "max_base64_bytes": 2000000, "base64": true}},
                           {{"kind": "frames", "count": 6, "strip": true, "payload": "openai", "jsonl": true, "label": "frame", "max_size": "96x96"}},
                           {{"kind": "preview"}}]}}"#
        )
        .replace('\n', " "),
        format!(r#"{{"id": "copy", "source": "{s}", "start": 10, "end": 40, "exports": [{{"kind": "clip", "copy": true}}]}}"#),
        format!(r#"{{"id": "smart", "source": "{s}", "start": 5, "end": 42, "exports": [{{"kind": "clip", "smart": true, "verify": true}}]}}"#),
        format!(
            r#"{{"id": "images", "source": "{}/%06d.png", "source_fps": 10, "exports": [{{"kind": "clip"}}, {{"kind": "frames", "fps": 2, "sampler": "qwen", "order": "shuffled", "seed": 3}}]}}"#,
            seq.display()
        ),
        format!(
            r#"{{"id": "damaged", "source": "{}", "exports": [{{"kind": "clip"}}]}}"#,
            damaged.display()
        ),
        r#"{"id": "missing", "source": "missing.mp4"}"#.to_string(),
        r#"{"id": 5, "source": "x.mp4"}"#.to_string(),
    ];
    let m = manifest(dir.path(), &lines);
    let out = dir.path().join("out");
    let run = vidprep()
        .args(["run"])
        .arg(&m)
        .arg("--out-dir")
        .arg(&out)
        .args(["--jobs", "2", "--preset", "ultrafast"])
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(1),
        "two items fail: {}",
        String::from_utf8_lossy(&run.stderr)
    );

    let (plan, sidecar, frames, item, report) = (
        validator(SchemaKind::Plan),
        validator(SchemaKind::Sidecar),
        validator(SchemaKind::Frames),
        validator(SchemaKind::Item),
        validator(SchemaKind::Report),
    );
    let read = |p: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };

    // The report: one row per line, each valid; the statuses as the items went.
    let rows: Vec<Value> = std::fs::read_to_string(out.join("report.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), lines.len());
    for row in &rows {
        assert_valid(&report, row, &format!("report row {row}"));
    }
    let status = |id: &str| {
        rows.iter()
            .find(|r| r["id"] == id)
            .map(|r| r["status"].as_str().unwrap().to_string())
    };
    for id in ["full", "copy", "smart", "images"] {
        assert_eq!(status(id).as_deref(), Some("ok"), "{id}: {rows:?}");
    }
    assert_eq!(status("missing").as_deref(), Some("failed"));
    assert!(
        rows.iter().any(|r| r["id"].is_null()),
        "a line without an id"
    );

    // Every file each item folder holds.
    let (mut sidecars, mut frames_files, mut items, mut kinds) = (0, 0, 0, Vec::new());
    for entry in walkdir::WalkDir::new(&out) {
        let entry = entry.unwrap();
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if !entry.file_type().is_file() || !name.ends_with(".json") {
            continue;
        }
        let value = read(path);
        if name == "item.json" {
            items += 1;
            assert_valid(&item, &value, &path.display().to_string());
        } else if name == "frames.json" {
            frames_files += 1;
            assert_valid(&frames, &value, &path.display().to_string());
            assert_valid(&plan, &value["request"], "frames.json's request");
        } else if ["mp4", "mov", "mkv"]
            .iter()
            .any(|ext| path.with_extension(ext).is_file())
        {
            sidecars += 1;
            assert_valid(&sidecar, &value, &path.display().to_string());
            assert_valid(&plan, &value["request"], "a sidecar's request");
            kinds.push(value["kind"].as_str().unwrap().to_string());
            if value.get("copy").is_some() || value.get("smart").is_some() {
                kinds.push("copy-or-smart".into());
            }
        }
    }
    kinds.sort();
    kinds.dedup();
    assert!(items >= 4, "item.json files: {items}");
    assert!(frames_files >= 2, "frames.json files: {frames_files}");
    assert!(sidecars >= 6, "sidecars: {sidecars} ({kinds:?})");
    for kind in ["clip", "video", "preview", "copy-or-smart"] {
        assert!(
            kinds.iter().any(|k| k == kind),
            "a {kind} sidecar: {kinds:?}"
        );
    }
    // The image sequence's and the damaged source's records are among them.
    let images = read(&out.join("images/clip.json"));
    assert!(images["sources"][0]["images"].is_object(), "{images}");
}

/// A manifest of `lines` (with a real source and box file), as vidprep reads it: for each
/// line, the reader's complaint (`None`: accepted).
fn reader_verdicts(dir: &Path, lines: &[String]) -> Vec<Option<String>> {
    let m = manifest(dir, lines);
    let read = vidprep::manifest::read_manifest(&m).unwrap();
    (1..=lines.len())
        .map(|line| {
            read.bad
                .iter()
                .find(|b| b.line == line)
                .map(|b| b.error.to_string())
        })
        .collect()
}

#[test]
fn bad_plans_are_refused_by_the_schema_and_the_reader_alike() {
    let dir = tempfile::tempdir().unwrap();
    let src = source().display().to_string();
    let base = format!(r#""source": "{src}""#);
    // (a plan's fields after id and source, what the reader says)
    let bad: &[(&str, &str)] = &[
        (r#""exprots": [{"kind": "clip"}]"#, "unknown field"),
        (
            r#""exports": [{"kind": "clip", "crff": 18}]"#,
            "unknown field",
        ),
        (
            r#""span": {"start": 1, "end": 20}"#,
            "\"span\" is not a plan field",
        ),
        (
            r#""boxes": "gt.txt", "annotations": {"format": "mot"}"#,
            "\"annotations\" is not a plan field",
        ),
        (
            r#""boxes": {"path": "gt.txt", "colour": "red"}"#,
            "unknown field",
        ),
        (r#""strict": "yes""#, "invalid type"),
        (
            r#""exports": [{"kind": "frames", "count": "16"}]"#,
            "invalid type",
        ),
        (
            r#""exports": [{"kind": "video", "max_base64_bytes": -1}]"#,
            "invalid value",
        ),
        (r#""exports": [{"kind": "gif"}]"#, "unknown variant"),
        (
            r#""exports": [{"kind": "frames", "sampler": "qwen9"}]"#,
            "qwen9",
        ),
        (
            r#""exports": [{"kind": "frames", "order": "sideways"}]"#,
            "unknown variant",
        ),
        (
            r#""exports": [{"kind": "frames", "format": "gif"}]"#,
            "unknown image format",
        ),
        (
            r#""exports": [{"kind": "frames", "payload": "claude"}]"#,
            "unknown payload",
        ),
        (
            r#""exports": [{"kind": "frames", "label": "both"}]"#,
            "unknown label",
        ),
        (
            r#""exports": [{"kind": "frames", "strip": 65}]"#,
            "too wide",
        ),
        (
            r#""exports": [{"kind": "frames", "strip": "yes"}]"#,
            "invalid type",
        ),
        (
            r#""exports": [{"kind": "video", "max_size": "1920x1"}]"#,
            "cannot read size",
        ),
        (
            r#""exports": [{"kind": "clip", "boxes_out": "coco"}]"#,
            "unknown variant",
        ),
        (
            r#""insert": {"sequence": "seq", "seed": 1, "fit": "zoom"}"#,
            "unknown fit",
        ),
        (r#""decision": "-5s""#, "negative time"),
        (r#""decision": "150%""#, "above 100%"),
        (r#""decision": "1:75""#, "bad timecode"),
        (r#""decision": -3"#, "negative time"),
        (r#""boxes": """#, "empty"),
        (
            r#""boxes": {"path": "gt.txt", "fill": "spline"}"#,
            "unknown fill",
        ),
        (
            r#""boxes": {"path": "gt.txt", "units": "inches"}"#,
            "unknown units",
        ),
        (
            r#""boxes": {"path": "gt.txt", "color": "ff88"}"#,
            "cannot read colour",
        ),
        (
            r#""boxes": {"path": "gt.txt", "format": "coco"}"#,
            "unknown annotation format",
        ),
        (r#""source_fps": 0.01"#, "outside 0.1..1000"),
    ];
    let mut lines: Vec<String> = bad
        .iter()
        .enumerate()
        .map(|(i, (fields, _))| format!(r#"{{"id": "bad{i}", {base}, {fields}}}"#))
        .collect();
    lines.push(r#"{"id": "nosource"}"#.to_string());
    let verdicts = reader_verdicts(dir.path(), &lines);
    let v = validator(SchemaKind::Plan);
    for (i, line) in lines.iter().enumerate() {
        let value: Value = serde_json::from_str(line).unwrap();
        let expected = bad.get(i).map_or("missing field", |b| b.1);
        let said = verdicts[i]
            .as_deref()
            .unwrap_or_else(|| panic!("vidprep's reader accepts {line}"));
        assert!(
            said.contains(expected),
            "the reader refuses {line} for another reason than {expected:?}: {said}"
        );
        assert!(
            !errors(&v, &value).is_empty(),
            "the schema accepts {line}, which vidprep refuses: {said}"
        );
    }
}

#[test]
fn unusual_valid_spellings_are_accepted_by_both() {
    let dir = tempfile::tempdir().unwrap();
    let src = source().display().to_string();
    let base = format!(r#""source": "{src}""#);
    let good: &[&str] = &[
        r#""exports": [{"kind": "frames", "format": "jpeg", "max_size": "96X64", "strip": 3, "order": "last"}]"#,
        r#""exports": [{"kind": "frames", "strip": false, "fps": 1.5, "max_frames": 4, "sampler": "qwen"}]"#,
        r#""exports": [{"kind": "video", "max_size": " 640 x 480 "}]"#,
        r#""decision": "00:00:01.5""#,
        r#""decision": "1:05""#,
        r#""decision": 0.5"#,
        r#""decision": "12.5 %""#,
        r#""start": 3, "end": "1.5s""#,
        r#""start": ".5", "end": "1.8s""#,
        r##""boxes": {"path": "gt.txt", "format": "MOT17", "fill": "Cubic", "color": "#FF8800"}"##,
        r#""boxes": {"path": "gt.txt", "units": "normalised", "keys": "frame", "color": "Orange"}"#,
        r#""boxes": {"path": "gt.txt", "fill": "interpolate", "thickness": 3, "draw": false}"#,
        r#""exports": [{"kind": "clip", "crf": 20, "container": "mkv", "audio": false}, {"kind": "preview", "gop": 5}]"#,
        r#""evidence": {"anything": [1, "two", null]}, "strict": true"#,
    ];
    let lines: Vec<String> = good
        .iter()
        .enumerate()
        .map(|(i, fields)| format!(r#"{{"id": "good{i}", {base}, {fields}}}"#))
        .collect();
    let verdicts = reader_verdicts(dir.path(), &lines);
    let v = validator(SchemaKind::Plan);
    for (line, verdict) in lines.iter().zip(&verdicts) {
        assert!(verdict.is_none(), "vidprep refuses {line}: {verdict:?}");
        let value: Value = serde_json::from_str(line).unwrap();
        let errs = errors(&v, &value);
        assert!(errs.is_empty(), "the schema refuses {line}: {errs:?}");
    }
}

/// Every string of up to `len` pieces of `alphabet`, joined.
fn spellings(alphabet: &[&str], len: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut frontier = vec![String::new()];
    for _ in 0..len {
        let mut next = Vec::new();
        for s in &frontier {
            for piece in alphabet {
                next.push(format!("{s}{piece}"));
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}

/// For each value put at `field` (a JSON pointer into a plan), the schema and vidprep's serde
/// agree on whether the plan is well formed; `looser` names the refusals (by their message)
/// the schema leaves to the reader, as its description says.
fn agree(field: &str, values: Vec<Value>, looser: &[&str]) -> usize {
    let v = validator(SchemaKind::Plan);
    let template = serde_json::json!({
        "id": "a", "source": "v.mp4",
        "boxes": {"path": "gt.txt"},
        "exports": [{"kind": "video"}],
    });
    let mut disagreements = Vec::new();
    for value in &values {
        let mut plan = template.clone();
        let (parent, key) = field.rsplit_once('/').unwrap();
        match plan.pointer_mut(parent).unwrap() {
            Value::Object(map) => {
                map.insert(key.to_string(), value.clone());
            }
            Value::Array(items) => items[key.parse::<usize>().unwrap()] = value.clone(),
            other => panic!("{parent} is {other}"),
        }
        let schema_ok = errors(&v, &plan).is_empty();
        let serde = serde_json::from_value::<vidprep::Plan>(plan.clone());
        let excused = |e: &serde_json::Error| looser.iter().any(|l| e.to_string().contains(l));
        match (&serde, schema_ok) {
            (Ok(_), false) => disagreements.push(format!("{value}: the schema refuses it")),
            (Err(e), true) if !excused(e) => {
                disagreements.push(format!("{value}: the schema accepts it; serde says {e}"))
            }
            _ => {}
        }
    }
    assert!(
        disagreements.is_empty(),
        "{field}: {} of {} values:\n  {}",
        disagreements.len(),
        values.len(),
        disagreements.join("\n  ")
    );
    values.len()
}

fn strings(alphabet: &[&str], len: usize) -> Vec<Value> {
    spellings(alphabet, len)
        .into_iter()
        .map(Value::from)
        .collect()
}

#[test]
fn the_text_forms_accept_what_serde_accepts() {
    let mut n = 0;
    // Times: frames, seconds, timecodes, percentages, and what is none of them.
    let mut times = strings(
        &[
            "0", "5", "59", "60", "100", "101", ".", ":", "s", "%", " ", "-", "x", "1.5",
        ],
        3,
    );
    times.extend(
        [0.0, 0.5, 3.0, -1.0, -0.5, 150.0, 1e6]
            .map(|f| serde_json::json!(f))
            .into_iter()
            .chain([serde_json::json!(150), serde_json::json!(-3)]),
    );
    n += agree("/decision", times, &[]);
    n += agree(
        "/exports/0/max_size",
        strings(&["1", "2", "10", "x", "X", " ", "+", "0", "a"], 4),
        &[],
    );
    n += agree(
        "/boxes/color",
        strings(
            &[
                "#", "ff8800", "FF88", "00", "red", "Red", "ORANGE", " ", "x",
            ],
            3,
        ),
        &[],
    );
    n += agree(
        "/boxes/fill",
        strings(
            &[
                "track", "-", ":", "kcf", "CSRT", "linear", "Hold", "none", " ", "x",
            ],
            3,
        ),
        &[],
    );
    n += agree(
        "/boxes/format",
        strings(
            &[
                "mot", "MOT17", "auto", "v-star", "vstar", "csv", "got", "-10k", " ",
            ],
            2,
        ),
        &[],
    );
    n += agree(
        "/boxes/units",
        strings(&["auto", "pixels", "normalized", "normalised", " ", "x"], 2),
        &[],
    );
    // Frame rates: the range of a rate given as text is the reader's to check.
    let mut rates = strings(
        &["25", "0", "1001", "/", ".", "fps", "Hz", " ", "-", "x"],
        3,
    );
    rates.extend([0.05, 0.1, 25.0, 29.97, 1000.0, 1000.5, -1.0].map(|f| serde_json::json!(f)));
    n += agree(
        "/source_fps",
        rates,
        &["outside 0.1..1000", "zero denominator"],
    );
    let strips = [
        serde_json::json!(true),
        serde_json::json!(false),
        serde_json::json!(0),
        serde_json::json!(64),
        serde_json::json!(65),
        serde_json::json!(-1),
        serde_json::json!("3"),
        serde_json::json!(null),
    ];
    let mut frames = serde_json::json!({"kind": "frames"});
    let mut values = Vec::new();
    for s in strips {
        frames["strip"] = s;
        values.push(frames.clone());
    }
    n += agree("/exports/0", values, &[]);
    eprintln!("{n} spellings: the schema and serde agree");
}
