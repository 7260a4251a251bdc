//! `cut --manifest`: many clips from a JSONL manifest, in parallel. Each line is
//! `{"id": ..., "source": ..., "start": ..., "end": ..., "decision": ...}` (`start`, `end`,
//! `decision` optional; times in the usual syntax, or JSON numbers: integers are frames, other
//! numbers seconds). Relative sources are relative to the manifest's folder. A bad line or a
//! failing item is reported with its line and id and never stops the others.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::jobs::clip::{make_clip, ClipOptions, ClipSpec};
use crate::output::PendingFile;
use crate::overlay::{BoxesRequest, Style};
use crate::pipeline::NoProgress;
use crate::time::TimeSpec;

/// One valid manifest line.
#[derive(Clone, Debug, PartialEq)]
pub struct CutItem {
    pub id: String,
    pub source: PathBuf,
    pub spec: ClipSpec,
    /// Annotations of the source (drawn unless the item says `"draw": false`).
    pub boxes: Option<BoxesRequest>,
    /// 1-based line number in the manifest.
    pub line: usize,
}

/// What became of one manifest line.
#[derive(Clone, Debug, Serialize)]
pub struct ItemOutcome {
    pub id: Option<String>,
    pub line: usize,
    pub ok: bool,
    pub output: Option<PathBuf>,
    pub sidecar: Option<PathBuf>,
    pub frames: Option<usize>,
    pub error: Option<String>,
    pub seconds: f64,
}

const FIELDS: [&str; 9] = [
    "id", "source", "start", "end", "decision", "boxes", "format", "fill", "draw",
];

/// Checks that an id can name an output file.
pub fn validate_id(id: &str) -> std::result::Result<(), String> {
    if id.is_empty() {
        return Err("id is empty".into());
    }
    if id == "." || id == ".." || id.starts_with('.') {
        return Err(format!(
            "id {id:?} must be usable as a file name and may not start with '.'"
        ));
    }
    if id.chars().any(|c| c == '/' || c == '\\' || c.is_control()) {
        return Err(format!(
            "id {id:?} must be usable as a file name (no slashes or control characters)"
        ));
    }
    Ok(())
}

/// Parses one manifest line (already known to be non-blank).
fn parse_line(text: &str, base: &Path) -> std::result::Result<CutItem, (Option<String>, String)> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| (None, format!("not valid JSON: {e}")))?;
    let obj = value.as_object().ok_or((
        None,
        "expected a JSON object like {\"id\": ..., \"source\": ...}".to_string(),
    ))?;
    let id = match obj.get("id") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        Some(other) => return Err((None, format!("\"id\" must be a string, found {other}"))),
        None => return Err((None, "missing \"id\"".into())),
    };
    let fail = |msg: String| (Some(id.clone()), msg);
    validate_id(&id).map_err(fail)?;
    if let Some(unknown) = obj.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(fail(format!(
            "unknown field {unknown:?}; expected only {}",
            FIELDS.join(", ")
        )));
    }
    let source = match obj.get("source") {
        Some(serde_json::Value::String(s)) if !s.is_empty() => base.join(s),
        Some(_) => {
            return Err(fail(
                "\"source\" must be a non-empty string (a video path)".into(),
            ))
        }
        None => return Err(fail("missing \"source\"".into())),
    };
    let time = |key: &str| -> std::result::Result<Option<TimeSpec>, (Option<String>, String)> {
        match obj.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => TimeSpec::from_json(v)
                .map(Some)
                .map_err(|e| fail(format!("\"{key}\": {e}"))),
        }
    };
    let spec = ClipSpec {
        start: time("start")?,
        end: time("end")?,
        decision: time("decision")?,
    };
    for (key, t) in [("start", spec.start), ("end", spec.end)] {
        if matches!(t, Some(TimeSpec::Percent(_))) {
            return Err(fail(format!(
                "\"{key}\": a percentage is only allowed for \"decision\""
            )));
        }
    }
    let text_field = |key: &str| -> std::result::Result<Option<&str>, (Option<String>, String)> {
        match obj.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(fail(format!("\"{key}\" must be a string, found {other}"))),
        }
    };
    let boxes = match text_field("boxes")? {
        None => {
            if let Some(key) = ["format", "fill", "draw"]
                .into_iter()
                .find(|k| obj.contains_key(*k))
            {
                return Err(fail(format!(
                    "\"{key}\" needs \"boxes\" (an annotation file)"
                )));
            }
            None
        }
        Some(path) => {
            let mut request = BoxesRequest::new(base.join(path));
            if let Some(f) = text_field("format")? {
                request.format = f
                    .parse()
                    .map_err(|e: String| fail(format!("\"format\": {e}")))?;
            }
            if let Some(f) = text_field("fill")? {
                request.fill = f
                    .parse()
                    .map_err(|e: String| fail(format!("\"fill\": {e}")))?;
            }
            let draw = match obj.get("draw") {
                None | Some(serde_json::Value::Null) => true,
                Some(serde_json::Value::Bool(b)) => *b,
                Some(other) => {
                    return Err(fail(format!(
                        "\"draw\" must be true or false, found {other}"
                    )))
                }
            };
            request.draw = draw.then(Style::default);
            Some(request)
        }
    };
    Ok(CutItem {
        id,
        source,
        spec,
        boxes,
        line: 0,
    })
}

/// Reads a manifest: the valid items, and one error per bad line (naming the file and line).
/// Fails as a whole only when the file cannot be read.
pub fn read_cut_manifest(
    path: &Path,
) -> Result<(Vec<CutItem>, Vec<(usize, Option<String>, Error)>)> {
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound {
            path: path.to_path_buf(),
        },
        _ => Error::io(path, e),
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut items = Vec::new();
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        match parse_line(trimmed, base) {
            Ok(mut item) => {
                if !seen.insert(item.id.clone()) {
                    errors.push((
                        number,
                        Some(item.id.clone()),
                        Error::bad_file(path, Some(number), format!("duplicate id {:?}", item.id)),
                    ));
                    continue;
                }
                item.line = number;
                items.push(item);
            }
            Err((id, message)) => {
                errors.push((number, id, Error::bad_file(path, Some(number), message)))
            }
        }
    }
    Ok((items, errors))
}

/// Runs every item of `manifest` into `out_dir` (`ID.mp4` + `ID.json`) with `jobs` items at a
/// time, calling `on_done` as each item finishes; writes `out_dir/report.jsonl` at the end.
/// Items that name boxes draw them in `style`.
pub fn run_cut_manifest(
    manifest: &Path,
    out_dir: &Path,
    options: &ClipOptions,
    style: &Style,
    jobs: usize,
    on_done: &(dyn Fn(&ItemOutcome) + Sync),
) -> Result<Vec<ItemOutcome>> {
    let (items, errors) = read_cut_manifest(manifest)?;
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let mut outcomes: Vec<ItemOutcome> = errors
        .into_iter()
        .map(|(line, id, e)| ItemOutcome {
            id,
            line,
            ok: false,
            output: None,
            sidecar: None,
            frames: None,
            error: Some(e.to_string()),
            seconds: 0.0,
        })
        .collect();
    for o in &outcomes {
        on_done(o);
    }
    let jobs = jobs.max(1);
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut base = options.clone();
    base.encode.threads = (cores / jobs).max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| Error::Usage(format!("cannot start {jobs} workers: {e}")))?;
    let done: Vec<ItemOutcome> = pool.install(|| {
        items
            .par_iter()
            .map(|item| {
                let started = Instant::now();
                let output = out_dir.join(format!("{}.mp4", item.id));
                let mut item_options = base.clone();
                item_options.boxes = item.boxes.clone().map(|mut b| {
                    if b.draw.is_some() {
                        b.draw = Some(style.clone());
                    }
                    b
                });
                let result = make_clip(
                    &item.source,
                    &item.spec,
                    &output,
                    &item_options,
                    &mut NoProgress,
                );
                let outcome = match result {
                    Ok(out) => ItemOutcome {
                        id: Some(item.id.clone()),
                        line: item.line,
                        ok: true,
                        output: Some(out.output),
                        sidecar: Some(out.sidecar),
                        frames: Some(out.frames),
                        error: None,
                        seconds: started.elapsed().as_secs_f64(),
                    },
                    Err(e) => ItemOutcome {
                        id: Some(item.id.clone()),
                        line: item.line,
                        ok: false,
                        output: None,
                        sidecar: None,
                        frames: None,
                        error: Some(format!(
                            "{} line {} (id {}): {e}",
                            manifest.display(),
                            item.line,
                            item.id
                        )),
                        seconds: started.elapsed().as_secs_f64(),
                    },
                };
                on_done(&outcome);
                outcome
            })
            .collect()
    });
    outcomes.extend(done);
    outcomes.sort_by_key(|o| o.line);
    let mut report = String::new();
    for o in &outcomes {
        report.push_str(&serde_json::to_string(o).expect("outcome serializes"));
        report.push('\n');
    }
    PendingFile::write_all(&out_dir.join("report.jsonl"), report.as_bytes())?;
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_lines_are_checked_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("events.jsonl");
        std::fs::write(
            &m,
            concat!(
                "{\"id\": \"a\", \"source\": \"v.mp4\", \"start\": \"1s\", \"end\": 50, \"decision\": \"75%\"}\n",
                "\n",
                "{\"id\": \"b\", \"source\": \"v.mp4\", \"start\": 2.5}\n",
                "not json\n",
                "{\"id\": \"a\", \"source\": \"v.mp4\"}\n",
                "{\"id\": \"c\", \"source\": \"v.mp4\", \"decison\": \"1s\"}\n",
                "{\"id\": \"../d\", \"source\": \"v.mp4\"}\n",
                "{\"id\": \"e\", \"source\": \"v.mp4\", \"start\": \"5x\"}\n",
            ),
        )
        .unwrap();
        let (items, errors) = read_cut_manifest(&m).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].line, 1);
        assert_eq!(items[0].spec.end, Some(TimeSpec::Frame(50)));
        assert_eq!(items[1].line, 3);
        assert_eq!(items[1].source, dir.path().join("v.mp4"));
        let lines: Vec<usize> = errors.iter().map(|e| e.0).collect();
        assert_eq!(lines, vec![4, 5, 6, 7, 8]);
        let text: Vec<String> = errors.iter().map(|e| e.2.to_string()).collect();
        assert!(
            text[0].contains("line 4") && text[0].contains("not valid JSON"),
            "{}",
            text[0]
        );
        assert!(text[1].contains("duplicate id"));
        assert!(text[2].contains("unknown field \"decison\""));
        assert!(text[3].contains("file name"));
        assert!(text[4].contains("\"start\"") && text[4].contains("expected a frame number"));
    }
}
