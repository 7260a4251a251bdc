//! The `vidprep run` manifest: JSONL (one item per line) or a JSON array of items, each a
//! source video with an optional span, decision point, boxes and needle insertion, and a list
//! of exports (`clip`, `video`, `frames`). Everything is validated before any work starts;
//! every bad item is reported with its line number and what was expected. See
//! `docs/manifest.md`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::annotations::{Fill, Format};
use crate::error::{Error, Result};
use crate::fit::{parse_size, Fit};
use crate::jobs::clip::ClipSpec;
use crate::jobs::cut_manifest::validate_id;
use crate::jobs::export_frames::{ImageFormat, Payload};
use crate::jobs::insert::Position;
use crate::overlay::{BoxesRequest, Style};
use crate::sampling::{Order, Request, Sampler};
use crate::time::TimeSpec;

/// Where and how a GOT-10k sequence is inserted into the item's clip.
#[derive(Clone, Debug, PartialEq)]
pub struct InsertSpec {
    pub sequence: PathBuf,
    /// Relative to the clip (after span and decision).
    pub position: Position,
    pub fit: Fit,
    /// Draw the needle's boxes.
    pub overlay: bool,
}

/// One output of an item.
#[derive(Clone, Debug, PartialEq)]
pub enum ExportSpec {
    /// The processed clip as H.264/AAC MP4 (`NAME.mp4`).
    Clip {
        name: String,
        crf: Option<f32>,
        preset: Option<String>,
        audio: bool,
    },
    /// The clip re-encoded within a resolution box and a Base64 budget (`NAME.mp4`).
    Video {
        name: String,
        max_size: (u32, u32),
        max_base64_bytes: u64,
        base64: bool,
        preset: Option<String>,
        audio: bool,
    },
    /// Sampled frames (`NAME/`).
    Frames(Box<FramesExportSpec>),
}

/// A `frames` export.
#[derive(Clone, Debug, PartialEq)]
pub struct FramesExportSpec {
    pub name: String,
    pub request: Request,
    pub sampler: Sampler,
    pub allow_repeats: bool,
    pub order: Order,
    pub seed: u64,
    pub format: ImageFormat,
    pub quality: u8,
    pub max_size: Option<(u32, u32)>,
    pub strip: Option<usize>,
    pub payload: Option<Payload>,
    pub jsonl: bool,
}

impl ExportSpec {
    pub fn name(&self) -> &str {
        match self {
            ExportSpec::Clip { name, .. } | ExportSpec::Video { name, .. } => name,
            ExportSpec::Frames(f) => &f.name,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            ExportSpec::Clip { .. } => "clip",
            ExportSpec::Video { .. } => "video",
            ExportSpec::Frames(_) => "frames",
        }
    }
}

/// One valid manifest item.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub id: String,
    /// 1-based line of the manifest where the item starts.
    pub line: usize,
    pub source: PathBuf,
    pub spec: ClipSpec,
    pub boxes: Option<BoxesRequest>,
    pub insert: Option<InsertSpec>,
    pub exports: Vec<ExportSpec>,
    /// The item's text as written (for `--resume`: a changed entry is redone).
    pub text: String,
}

/// A manifest line that cannot run.
#[derive(Debug)]
pub struct BadItem {
    pub line: usize,
    pub id: Option<String>,
    pub error: Error,
}

/// A parsed manifest: the valid items and the bad ones, both in file order.
#[derive(Debug, Default)]
pub struct Manifest {
    pub items: Vec<Item>,
    pub bad: Vec<BadItem>,
}

const ITEM_FIELDS: [&str; 10] = [
    "id",
    "source",
    "span",
    "start",
    "end",
    "decision",
    "boxes",
    "insert",
    "exports",
    "annotations",
];

/// Reads and checks a manifest. Fails as a whole only when the file cannot be read or is not
/// JSONL or a JSON array at all.
pub fn read_manifest(path: &Path) -> Result<Manifest> {
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound {
            path: path.to_path_buf(),
        },
        _ => Error::io(path, e),
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let entries = split_entries(path, &text)?;
    let mut manifest = Manifest::default();
    let mut seen = HashSet::new();
    for (line, entry) in entries {
        let parsed = serde_json::from_str::<Value>(entry)
            .map_err(|e| (None, format!("not valid JSON: {e}")))
            .and_then(|v| parse_item(&v, base));
        match parsed {
            Ok(mut item) => {
                if !seen.insert(item.id.clone()) {
                    let id = item.id.clone();
                    manifest.bad.push(BadItem {
                        line,
                        id: Some(id.clone()),
                        error: Error::bad_file(path, Some(line), format!("duplicate id {id:?}")),
                    });
                    continue;
                }
                item.line = line;
                item.text = entry.trim().to_string();
                manifest.items.push(item);
            }
            Err((id, message)) => manifest.bad.push(BadItem {
                line,
                id,
                error: Error::bad_file(path, Some(line), message),
            }),
        }
    }
    Ok(manifest)
}

/// The items' texts with their 1-based line numbers: JSONL lines, or the elements of a JSON
/// array.
fn split_entries<'a>(path: &Path, text: &'a str) -> Result<Vec<(usize, &'a str)>> {
    let line_of = |offset: usize| text[..offset].bytes().filter(|&b| b == b'\n').count() + 1;
    if text.trim_start().starts_with('[') {
        let raw: Vec<&serde_json::value::RawValue> = serde_json::from_str(text).map_err(|e| {
            Error::bad_file(
                path,
                Some(e.line()),
                format!("not a JSON array of items: {e}"),
            )
        })?;
        return Ok(raw
            .into_iter()
            .map(|r| {
                let s = r.get();
                let offset = s.as_ptr() as usize - text.as_ptr() as usize;
                (line_of(offset), s)
            })
            .collect());
    }
    Ok(text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#') && !t.starts_with("//")
        })
        .map(|(i, l)| (i + 1, l))
        .collect())
}

type Fail = (Option<String>, String);

fn check_fields(
    obj: &Map<String, Value>,
    allowed: &[&str],
    what: &str,
    fail: &dyn Fn(String) -> Fail,
) -> std::result::Result<(), Fail> {
    if let Some(unknown) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(fail(format!(
            "unknown field {unknown:?} in {what}; expected only {}",
            allowed.join(", ")
        )));
    }
    Ok(())
}

fn get_str<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    fail: &dyn Fn(String) -> Fail,
) -> std::result::Result<Option<&'a str>, Fail> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(fail(format!("\"{key}\" must be a string, found {other}"))),
    }
}

fn get_bool(
    obj: &Map<String, Value>,
    key: &str,
    default: bool,
    fail: &dyn Fn(String) -> Fail,
) -> std::result::Result<bool, Fail> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(fail(format!(
            "\"{key}\" must be true or false, found {other}"
        ))),
    }
}

fn get_u64(
    obj: &Map<String, Value>,
    key: &str,
    fail: &dyn Fn(String) -> Fail,
) -> std::result::Result<Option<u64>, Fail> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| fail(format!("\"{key}\" must be a whole number, found {v}"))),
    }
}

fn get_time(
    obj: &Map<String, Value>,
    key: &str,
    fail: &dyn Fn(String) -> Fail,
) -> std::result::Result<Option<TimeSpec>, Fail> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => TimeSpec::from_json(v)
            .map(Some)
            .map_err(|e| fail(format!("\"{key}\": {e}"))),
    }
}

fn get_object<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    fail: &dyn Fn(String) -> Fail,
) -> std::result::Result<Option<&'a Map<String, Value>>, Fail> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(other) => Err(fail(format!("\"{key}\" must be an object, found {other}"))),
    }
}

fn parse_item(value: &Value, base: &Path) -> std::result::Result<Item, Fail> {
    let obj = value.as_object().ok_or((
        None,
        "expected a JSON object like {\"id\": ..., \"source\": ..., \"exports\": [...]}"
            .to_string(),
    ))?;
    let id = match obj.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(other) => return Err((None, format!("\"id\" must be a string, found {other}"))),
        None => return Err((None, "missing \"id\"".into())),
    };
    let fail = |msg: String| (Some(id.clone()), msg);
    validate_id(&id).map_err(fail)?;
    check_fields(obj, &ITEM_FIELDS, "the item", &fail)?;
    let source = match get_str(obj, "source", &fail)? {
        Some(s) if !s.is_empty() => base.join(s),
        _ => return Err(fail("missing \"source\" (a video path)".into())),
    };
    if !source.exists() {
        return Err(fail(format!("{}: file not found", source.display())));
    }
    // The span: {"span": {"start", "end"}} or top-level "start"/"end".
    let (start, end) = match get_object(obj, "span", &fail)? {
        Some(span) => {
            check_fields(span, &["start", "end"], "\"span\"", &fail)?;
            if obj.contains_key("start") || obj.contains_key("end") {
                return Err(fail("give the span either as \"span\": {\"start\", \"end\"} or as \"start\"/\"end\", not both".into()));
            }
            (
                get_time(span, "start", &fail)?,
                get_time(span, "end", &fail)?,
            )
        }
        None => (get_time(obj, "start", &fail)?, get_time(obj, "end", &fail)?),
    };
    for (key, t) in [("start", start), ("end", end)] {
        if matches!(t, Some(TimeSpec::Percent(_))) {
            return Err(fail(format!(
                "\"{key}\": a percentage is only allowed for \"decision\""
            )));
        }
    }
    let spec = ClipSpec {
        start,
        end,
        decision: get_time(obj, "decision", &fail)?,
    };
    let boxes = parse_boxes(obj, base, &fail)?;
    let insert = match get_object(obj, "insert", &fail)? {
        None => None,
        Some(ins) => {
            check_fields(
                ins,
                &["sequence", "at", "seed", "fit", "overlay"],
                "\"insert\"",
                &fail,
            )?;
            let sequence = match get_str(ins, "sequence", &fail)? {
                Some(s) => base.join(s),
                None => {
                    return Err(fail(
                        "\"insert\" needs \"sequence\" (a GOT-10k sequence folder)".into(),
                    ))
                }
            };
            if !sequence.is_dir() {
                return Err(fail(format!(
                    "{}: not a folder (expected a GOT-10k sequence folder)",
                    sequence.display()
                )));
            }
            let position =
                match (get_time(ins, "at", &fail)?, get_u64(ins, "seed", &fail)?) {
                    (Some(at), None) => Position::At(at),
                    (None, Some(seed)) => Position::Seed(seed),
                    _ => return Err(fail(
                        "\"insert\" needs exactly one of \"at\" (a time) or \"seed\" (a number)"
                            .into(),
                    )),
                };
            let fit = match get_str(ins, "fit", &fail)? {
                Some(f) => f
                    .parse::<Fit>()
                    .map_err(|e| fail(format!("\"insert\".\"fit\": {e}")))?,
                None => Fit::Letterbox,
            };
            Some(InsertSpec {
                sequence,
                position,
                fit,
                overlay: get_bool(ins, "overlay", false, &fail)?,
            })
        }
    };
    let exports = match obj.get("exports") {
        None | Some(Value::Null) => vec![ExportSpec::Clip {
            name: "clip".into(),
            crf: None,
            preset: None,
            audio: true,
        }],
        Some(Value::Array(list)) if !list.is_empty() => {
            let mut out = Vec::new();
            let mut names = HashSet::new();
            for (i, e) in list.iter().enumerate() {
                let spec = parse_export(e, i, &fail)?;
                if !names.insert(spec.name().to_string()) {
                    return Err(fail(format!("exports[{i}]: the name {:?} is used twice; give each export its own \"name\"", spec.name())));
                }
                out.push(spec);
            }
            out
        }
        Some(other) => {
            return Err(fail(format!(
                "\"exports\" must be a non-empty list of exports, found {other}"
            )))
        }
    };
    Ok(Item {
        id,
        line: 0,
        source,
        spec,
        boxes,
        insert,
        exports,
        text: String::new(),
    })
}

fn parse_boxes(
    obj: &Map<String, Value>,
    base: &Path,
    fail: &dyn Fn(String) -> Fail,
) -> std::result::Result<Option<BoxesRequest>, Fail> {
    // "boxes": "file" with "annotations": {"format", "fill", "draw", ...}, or "boxes": {...}.
    let (path, opts) = match obj.get("boxes") {
        None | Some(Value::Null) => {
            if obj.contains_key("annotations") {
                return Err(fail(
                    "\"annotations\" options need \"boxes\" (an annotation file)".into(),
                ));
            }
            return Ok(None);
        }
        Some(Value::String(p)) => (
            p.clone(),
            get_object(obj, "annotations", fail)?
                .cloned()
                .unwrap_or_default(),
        ),
        Some(Value::Object(o)) => {
            let p = get_str(o, "path", fail)?
                .ok_or_else(|| fail("\"boxes\" needs \"path\" (an annotation file)".into()))?
                .to_string();
            (p, o.clone())
        }
        Some(other) => {
            return Err(fail(format!(
                "\"boxes\" must be a path or an object, found {other}"
            )))
        }
    };
    check_fields(
        &opts,
        &[
            "path",
            "format",
            "fill",
            "draw",
            "min_confidence",
            "item",
            "labels",
            "thickness",
        ],
        "\"boxes\"",
        fail,
    )?;
    let path = base.join(path);
    if !path.exists() {
        return Err(fail(format!(
            "{}: file not found (the item's boxes)",
            path.display()
        )));
    }
    let mut request = BoxesRequest::new(path);
    if let Some(f) = get_str(&opts, "format", fail)? {
        request.format = f
            .parse::<Format>()
            .map_err(|e| fail(format!("\"format\": {e}")))?;
    }
    if let Some(f) = get_str(&opts, "fill", fail)? {
        request.fill = f
            .parse::<Fill>()
            .map_err(|e| fail(format!("\"fill\": {e}")))?;
    }
    request.read.min_confidence = match opts.get("min_confidence") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .ok_or_else(|| fail(format!("\"min_confidence\" must be a number, found {v}")))?,
        ),
    };
    request.read.item = get_str(&opts, "item", fail)?.map(str::to_string);
    if get_bool(&opts, "draw", true, fail)? {
        let thickness = get_u64(&opts, "thickness", fail)?.map(|t| t as u32);
        request.draw = Some(Style {
            thickness,
            color: None,
            labels: get_bool(&opts, "labels", true, fail)?,
        });
    }
    Ok(Some(request))
}

fn parse_export(
    value: &Value,
    i: usize,
    fail: &dyn Fn(String) -> Fail,
) -> std::result::Result<ExportSpec, Fail> {
    let f = |m: String| fail(format!("exports[{i}]: {m}"));
    let obj = value.as_object().ok_or_else(|| {
        f(format!(
            "expected an object like {{\"kind\": \"clip\"}}, found {value}"
        ))
    })?;
    let kind = get_str(obj, "kind", &f)?
        .ok_or_else(|| f("missing \"kind\" (clip, video or frames)".into()))?;
    let name = get_str(obj, "name", &f)?.unwrap_or(kind).to_string();
    validate_id(&name).map_err(|e| f(format!("\"name\": {e}")))?;
    let preset = get_str(obj, "preset", &f)?.map(str::to_string);
    if let Some(p) = &preset {
        if !crate::media::encode::X264_PRESETS.contains(&p.as_str()) {
            return Err(f(format!(
                "unknown x264 preset {p:?}; expected one of {}",
                crate::media::encode::X264_PRESETS.join(", ")
            )));
        }
    }
    match kind {
        "clip" => {
            check_fields(
                obj,
                &["kind", "name", "crf", "preset", "audio"],
                "a clip export",
                &f,
            )?;
            let crf = match obj.get("crf") {
                None | Some(Value::Null) => None,
                Some(v) => Some(
                    v.as_f64()
                        .filter(|c| (0.0..=51.0).contains(c))
                        .ok_or_else(|| f(format!("\"crf\" must be a number in 0..51, found {v}")))?
                        as f32,
                ),
            };
            Ok(ExportSpec::Clip {
                name,
                crf,
                preset,
                audio: get_bool(obj, "audio", true, &f)?,
            })
        }
        "video" => {
            check_fields(
                obj,
                &[
                    "kind",
                    "name",
                    "max_size",
                    "max_base64_bytes",
                    "base64",
                    "preset",
                    "audio",
                ],
                "a video export",
                &f,
            )?;
            let max_size = match get_str(obj, "max_size", &f)? {
                Some(s) => parse_size(s).map_err(|e| f(format!("\"max_size\": {e}")))?,
                None => (1920, 1280),
            };
            Ok(ExportSpec::Video {
                name,
                max_size,
                max_base64_bytes: get_u64(obj, "max_base64_bytes", &f)?.unwrap_or(10_000_000),
                base64: get_bool(obj, "base64", false, &f)?,
                preset,
                audio: get_bool(obj, "audio", true, &f)?,
            })
        }
        "frames" => {
            check_fields(
                obj,
                &[
                    "kind",
                    "name",
                    "count",
                    "fps",
                    "max_frames",
                    "sampler",
                    "allow_repeats",
                    "order",
                    "seed",
                    "format",
                    "quality",
                    "max_size",
                    "strip",
                    "payload",
                    "jsonl",
                ],
                "a frames export",
                &f,
            )?;
            let request = match (get_u64(obj, "count", &f)?, obj.get("fps")) {
                (Some(_), Some(_)) => return Err(f("give \"count\" or \"fps\", not both".into())),
                (_, Some(v)) => Request::Fps {
                    fps: v
                        .as_f64()
                        .ok_or_else(|| f(format!("\"fps\" must be a number, found {v}")))?,
                    max_frames: get_u64(obj, "max_frames", &f)?.map(|m| m as usize),
                },
                (Some(n), None) => Request::Count(n as usize),
                (None, None) => Request::Count(16),
            };
            let parse = |key: &str| get_str(obj, key, &f);
            let sampler = match parse("sampler")? {
                Some(s) => s
                    .parse::<Sampler>()
                    .map_err(|e| f(format!("\"sampler\": {e}")))?,
                None => Sampler::Uniform,
            };
            let order = match parse("order")? {
                Some(s) => s
                    .parse::<Order>()
                    .map_err(|e| f(format!("\"order\": {e}")))?,
                None => Order::Ordered,
            };
            let format = match parse("format")? {
                Some(s) => s
                    .parse::<ImageFormat>()
                    .map_err(|e| f(format!("\"format\": {e}")))?,
                None => ImageFormat::Jpg,
            };
            let payload = parse("payload")?
                .map(|p| p.parse::<Payload>())
                .transpose()
                .map_err(|e| f(format!("\"payload\": {e}")))?;
            let max_size = parse("max_size")?
                .map(parse_size)
                .transpose()
                .map_err(|e| f(format!("\"max_size\": {e}")))?;
            let quality = get_u64(obj, "quality", &f)?.unwrap_or(90);
            if !(1..=100).contains(&quality) {
                return Err(f(format!("\"quality\" must be 1..100, found {quality}")));
            }
            let strip = match obj.get("strip") {
                None | Some(Value::Null) | Some(Value::Bool(false)) => None,
                Some(Value::Bool(true)) => Some(0),
                Some(v) => Some(v.as_u64().ok_or_else(|| {
                    f(format!(
                        "\"strip\" must be true, false or a column count, found {v}"
                    ))
                })? as usize),
            };
            Ok(ExportSpec::Frames(Box::new(FramesExportSpec {
                name,
                request,
                sampler,
                allow_repeats: get_bool(obj, "allow_repeats", false, &f)?,
                order,
                seed: get_u64(obj, "seed", &f)?.unwrap_or(0),
                format,
                quality: quality as u8,
                max_size,
                strip,
                payload,
                jsonl: get_bool(obj, "jsonl", false, &f)?,
            })))
        }
        other => Err(f(format!(
            "unknown export kind {other:?}; expected clip, video or frames"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn jsonl_items_are_checked_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "v.mp4", "x");
        write(dir.path(), "gt.txt", "1,-1,1,2,3,4,1,-1,-1,-1\n");
        let m = write(
            dir.path(),
            "m.jsonl",
            concat!(
                "{\"id\": \"a\", \"source\": \"v.mp4\", \"span\": {\"start\": \"1s\", \"end\": 50}, \"decision\": \"75%\", \"boxes\": \"gt.txt\", \"annotations\": {\"format\": \"mot\"}, \"exports\": [{\"kind\": \"clip\"}, {\"kind\": \"video\", \"max_base64_bytes\": 5000000}, {\"kind\": \"frames\", \"count\": 8, \"sampler\": \"qwen\", \"payload\": \"gemini\"}]}\n",
                "# a comment\n",
                "{\"id\": \"b\", \"source\": \"missing.mp4\"}\n",
                "{\"id\": \"c\", \"source\": \"v.mp4\", \"exports\": [{\"kind\": \"gif\"}]}\n",
                "{\"id\": \"d\", \"source\": \"v.mp4\", \"exports\": [{\"kind\": \"frames\", \"sampler\": \"decord\"}]}\n",
                "{\"id\": \"e\", \"source\": \"v.mp4\", \"boxes\": \"nope.txt\"}\n",
                "{\"id\": \"f\", \"source\": \"v.mp4\", \"exports\": [{\"kind\": \"clip\"}, {\"kind\": \"clip\"}]}\n",
                "{\"id\": \"g\", \"source\": \"v.mp4\", \"insert\": {\"sequence\": \".\", \"at\": \"1s\", \"seed\": 3}}\n",
                "{\"id\": \"h\", \"source\": \"v.mp4\", \"colour\": \"red\"}\n",
                "[1, 2]\n",
            ),
        );
        let parsed = read_manifest(&m).unwrap();
        assert_eq!(parsed.items.len(), 1);
        let a = &parsed.items[0];
        assert_eq!(a.line, 1);
        assert_eq!(a.exports.len(), 3);
        assert_eq!(a.spec.end, Some(TimeSpec::Frame(50)));
        assert_eq!(a.boxes.as_ref().unwrap().format, Format::Mot);
        let lines: Vec<usize> = parsed.bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 7, 8, 9, 10]);
        let text: Vec<String> = parsed.bad.iter().map(|b| b.error.to_string()).collect();
        assert!(
            text[0].contains("missing.mp4: file not found"),
            "{}",
            text[0]
        );
        assert!(
            text[1].contains("unknown export kind \"gif\""),
            "{}",
            text[1]
        );
        assert!(
            text[2].contains("\"sampler\"") && text[2].contains("uniform"),
            "{}",
            text[2]
        );
        assert!(text[3].contains("nope.txt: file not found"), "{}", text[3]);
        assert!(text[4].contains("used twice"), "{}", text[4]);
        assert!(text[5].contains("exactly one of"), "{}", text[5]);
        assert!(text[6].contains("unknown field \"colour\""), "{}", text[6]);
        assert!(text[7].contains("expected a JSON object"), "{}", text[7]);
        assert!(text.iter().all(|t| t.contains("m.jsonl line ")), "{text:?}");
    }

    #[test]
    fn json_arrays_keep_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "v.mp4", "x");
        let m = write(
            dir.path(),
            "m.json",
            "[\n  {\"id\": \"a\", \"source\": \"v.mp4\"},\n\n  {\"id\": \"b\",\n   \"source\": \"v.mp4\", \"exports\": []}\n]\n",
        );
        let parsed = read_manifest(&m).unwrap();
        assert_eq!(parsed.items.len(), 1);
        assert_eq!(parsed.items[0].line, 2);
        assert_eq!(
            parsed.items[0].exports,
            vec![ExportSpec::Clip {
                name: "clip".into(),
                crf: None,
                preset: None,
                audio: true
            }]
        );
        assert_eq!(parsed.bad[0].line, 4);
        assert!(parsed.bad[0].error.to_string().contains("non-empty list"));
    }
}
