//! The review page's files: the static assets (embedded here, written verbatim), and the
//! data the page shows, read from the run's sidecars and the previews: `data/index.js` (one
//! short entry per item, so a run of thousands opens at once) and `data/items/NNNNN.js` (an
//! item's details, loaded when it is shown). Both are scripts calling into the page, because
//! a page opened from `file://` may not fetch files. Every path in them is relative to
//! `index.html` and percent-encoded.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::review::{Found, Previews, ReviewOptions};

const INDEX_HTML: &str = include_str!("assets/index.html");
/// `assets/review.js`, all the page's behaviour: the modules of `assets/js/` (one job each; see
/// `core.js` for their pattern) concatenated inside one function that creates their namespace
/// `R`, so the page stays one self-contained script that works from `file://` (where module
/// scripts may not load). `core.js` comes first, `main.js` (which starts the page) last.
const REVIEW_JS: &str = concat!(
    "/* vidprep review page: all behaviour, the modules of src/review/assets/js/ in this\n",
    " * order (each one job): core (page data, DOM helpers), state (QC state, localStorage,\n",
    " * decisions.json), list, load (detail files, select), media (frame-exact seeks), detail,\n",
    " * timeline (decision point), samples, facts, model (what the model sees), boxes (drawn\n",
    " * boxes and their export), verdict, overlays, keyboard, controls, main.\n",
    " * Plain ES5-ish JavaScript, no dependencies, nothing fetched: data arrives through\n",
    " * <script> files (works from file://). */\n",
    "(function () {\n'use strict';\nvar R = {};\n\n",
    include_str!("assets/js/core.js"),
    include_str!("assets/js/state.js"),
    include_str!("assets/js/list.js"),
    include_str!("assets/js/load.js"),
    include_str!("assets/js/media.js"),
    include_str!("assets/js/detail.js"),
    include_str!("assets/js/timeline.js"),
    include_str!("assets/js/samples.js"),
    include_str!("assets/js/facts.js"),
    include_str!("assets/js/model.js"),
    include_str!("assets/js/boxes.js"),
    include_str!("assets/js/verdict.js"),
    include_str!("assets/js/overlays.js"),
    include_str!("assets/js/keyboard.js"),
    include_str!("assets/js/controls.js"),
    include_str!("assets/js/main.js"),
    "})();\n",
);
const REVIEW_CSS: &str = include_str!("assets/review.css");

/// A quality criterion a reviewer checks.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Criterion {
    /// The key in the decisions file.
    pub key: &'static str,
    /// The checkbox's label.
    pub label: &'static str,
    /// What it asks.
    pub help: &'static str,
}

/// ViSTR-Bench's four quality criteria, in the order of the page's keys 1-4.
pub const CRITERIA: [Criterion; 4] = [
    Criterion {
        key: "target_visible",
        label: "Target visible",
        help: "the object or event the question is about can be seen",
    },
    Criterion {
        key: "temporal_evidence",
        label: "Enough temporal evidence",
        help: "the clip shows enough of the process before the decision point",
    },
    Criterion {
        key: "definite_answer",
        label: "Definite answer",
        help: "the outcome after the decision point is unambiguous",
    },
    Criterion {
        key: "not_single_frame",
        label: "Not answerable from one frame",
        help: "no single frame gives the answer away",
    },
];

/// The JSON files of an item folder that may be sidecars: the item's outputs' sidecars
/// (`NAME.json` beside videos) and frames exports' `frames.json`, in name order.
pub(crate) fn sidecars_of(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            let frames = p.join("frames.json");
            if frames.is_file() {
                out.push(frames);
            }
        } else if p.extension().is_some_and(|e| e == "json")
            && p.file_name().is_some_and(|n| n != "item.json")
            && !p.to_string_lossy().ends_with(".vstar.json")
            && !p.to_string_lossy().ends_with(".boxes.json")
        {
            out.push(p);
        }
    }
    out
}

fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    serde_json::from_str(&text)
        .map_err(|e| Error::bad_file(path, Some(e.line()), format!("not a vidprep sidecar: {e}")))
}

/// The span's frame count of an item, from any of its sidecars.
pub(crate) fn span_frames(dir: &Path) -> Option<usize> {
    for s in sidecars_of(dir) {
        if let Ok(v) = read_json(&s) {
            let cut = &v["resolved"]["cut"];
            if let (Some(a), Some(b)) = (cut["start"].as_u64(), cut["end"].as_u64()) {
                return Some((b - a) as usize);
            }
        }
    }
    None
}

/// `path` relative to `base` (both made absolute), as a percent-encoded URL path.
pub(crate) fn href(path: &Path, base: &Path) -> String {
    let abs = |p: &Path| {
        let p = std::fs::canonicalize(p).unwrap_or_else(|_| {
            std::env::current_dir()
                .map(|d| d.join(p))
                .unwrap_or_else(|_| p.to_path_buf())
        });
        p.components()
            .filter(|c| !matches!(c, Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
    };
    let (p, b) = (abs(path), abs(base));
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".into(); b.len() - common];
    parts.extend(p[common..].iter().map(|s| percent_encode(s)));
    parts.join("/")
}

/// Percent-encodes one path segment (everything but unreserved characters).
fn percent_encode(segment: &str) -> String {
    let mut out = String::new();
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The page's data: the index, and each item's details.
pub(crate) struct Built {
    pub index: Value,
    pub details: Vec<Value>,
}

fn secs(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// Gathers what the page shows of every item.
pub(crate) fn assemble(
    found: &[Found],
    page_dir: &Path,
    media_dir: &Path,
    previews: &Previews,
    options: &ReviewOptions,
    warnings: &mut Vec<String>,
) -> Result<Built> {
    std::fs::create_dir_all(page_dir).map_err(|e| Error::io(page_dir, e))?;
    let mut entries = Vec::new();
    let mut details = Vec::new();
    for (n, f) in found.iter().enumerate() {
        let (entry, detail) = match &f.dir {
            Some(dir) => item_data(n, f, dir, page_dir, media_dir, previews, warnings)?,
            None => failed_item(n, f),
        };
        entries.push(entry);
        details.push(detail);
    }
    let run_dir = std::fs::canonicalize(&options.run_dir).unwrap_or(options.run_dir.clone());
    let manifest = options
        .manifest
        .as_ref()
        .map(|m| std::fs::canonicalize(m).unwrap_or(m.clone()));
    // The page's saved state (the browser's localStorage) is keyed by the run, not by its
    // folder: a new run at the same path (other item.json records) starts a fresh review,
    // and a run moved elsewhere keeps its verdicts.
    let mut identity = Vec::new();
    for f in found {
        identity.extend_from_slice(f.id.as_bytes());
        identity.push(0);
        if let Some(dir) = &f.dir {
            identity.extend(std::fs::read(dir.join("item.json")).unwrap_or_default());
        }
        identity.push(0);
    }
    let review_id = format!("{:016x}", crate::call::hash::fnv1a(&identity));
    let index = json!({
        "vidprep_review": 1,
        "vidprep_version": crate::records::sidecar::VERSION,
        "review_id": review_id,
        "run_dir": run_dir.display().to_string(),
        "manifest": manifest.map(|m| m.display().to_string()),
        "criteria": CRITERIA,
        "items": entries,
    });
    Ok(Built { index, details })
}

fn detail_path(n: usize) -> String {
    format!("data/items/{n:05}.js")
}

fn failed_item(n: usize, f: &Found) -> (Value, Value) {
    let decision_requested = f
        .plan
        .as_ref()
        .and_then(|p| p.decision)
        .map(|d| d.to_text());
    let entry = json!({
        "n": n, "id": f.id, "line": f.line,
        "status": "failed",
        "error": f.error,
        "frames": null, "duration_s": null, "span_frames": null,
        "decision_frame": null, "decision_requested": decision_requested,
        "warnings": 0, "damaged": 0,
        "detail": detail_path(n),
    });
    let detail = json!({
        "n": n, "id": f.id,
        "error": f.error,
        "videos": [], "preview": null, "thumbs": [], "decision": null,
        "span": null, "kept": null, "needle": null, "samples": [],
        "facts": [["Status", f.error.clone().unwrap_or_default()]],
        "base64": null, "damaged_frames": [], "annotations": null,
        "warnings": [], "sidecars": [],
    });
    (entry, detail)
}

/// The index entry and details of an item the run made.
fn item_data(
    n: usize,
    f: &Found,
    dir: &Path,
    page_dir: &Path,
    media_dir: &Path,
    previews: &Previews,
    warnings: &mut Vec<String>,
) -> Result<(Value, Value)> {
    let mut videos = Vec::new();
    let mut samples = Vec::new();
    let mut sidecar_links = Vec::new();
    let mut main: Option<Value> = None;
    let mut base64 = Value::Null;
    let mut item_warnings: Vec<String> = Vec::new();
    for path in sidecars_of(dir) {
        let v = match read_json(&path) {
            Ok(v) => v,
            Err(e) => {
                item_warnings.push(e.to_string());
                continue;
            }
        };
        sidecar_links.push(href(&path, page_dir));
        for w in v["warnings"].as_array().into_iter().flatten() {
            if let Some(w) = w.as_str() {
                if !item_warnings.iter().any(|x| x == w) {
                    item_warnings.push(w.to_string());
                }
            }
        }
        if path.file_name().is_some_and(|n| n == "frames.json") {
            samples.push(sample_data(&v, &path, page_dir));
            continue;
        }
        let kind = v["kind"].as_str().unwrap_or("");
        if !["clip", "video"].contains(&kind) {
            continue;
        }
        let out = &v["output"];
        let file = out["path"]
            .as_str()
            .and_then(|p| Path::new(p).file_name().map(|n| dir.join(n)))
            .unwrap_or_else(|| path.with_extension("mp4"));
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        videos.push(json!({
            "name": name, "kind": kind,
            "path": href(&file, page_dir),
            "sidecar": href(&path, page_dir),
            "frames": out["frames"], "width": out["width"], "height": out["height"],
            "duration_s": out["duration_s"],
        }));
        if kind == "video" && base64.is_null() {
            let b = &v["budget"];
            if !b.is_null() {
                base64 = json!({
                    "bytes": b["base64_bytes"], "budget": b["max_base64_bytes"],
                    "used": b["base64_bytes"].as_f64().zip(b["max_base64_bytes"].as_f64()).map(|(a, c)| a / c),
                });
            }
        }
        // The main output: the first clip, else the first video.
        let better = match &main {
            None => true,
            Some(m) => m["kind"] != "clip" && kind == "clip",
        };
        if better {
            main = Some(v);
        }
    }
    videos.sort_by_key(|v| v["kind"] != "clip");
    let Some(main) = main.or_else(|| {
        // A frames-only item: its facts come from frames.json.
        sidecars_of(dir)
            .into_iter()
            .find_map(|p| read_json(&p).ok())
    }) else {
        warnings.push(format!(
            "{}: no sidecars in {}; listed without media",
            f.id,
            dir.display()
        ));
        let (mut entry, detail) = failed_item(n, f);
        entry["status"] = "failed".into();
        return Ok((entry, detail));
    };
    let resolved = &main["resolved"];
    let cut = (
        resolved["cut"]["start"].as_u64().unwrap_or(0) as usize,
        resolved["cut"]["end"].as_u64().unwrap_or(0) as usize,
    );
    let kept = (
        resolved["kept"]["start"].as_u64().unwrap_or(0) as usize,
        resolved["kept"]["end"].as_u64().unwrap_or(0) as usize,
    );
    let span_frames = cut.1.saturating_sub(cut.0);
    let decision = &resolved["decision"];
    let decision_frame = (!decision.is_null()).then(|| kept.1 - cut.0);
    let decision_requested = decision["requested"].as_str().map(str::to_string);

    // The preview and thumbnails.
    let media = media_dir.join(previews.folder(&f.id));
    let preview_sidecar = media.join("preview.json");
    let (preview, thumbs, annotated) = match (
        previews.errors.get(&f.id),
        read_json(&preview_sidecar),
    ) {
        (None, Ok(p)) => {
            let facts = &p["preview"];
            let frames = p["output"]["frames"].as_u64().unwrap_or(0) as usize;
            if frames != span_frames {
                warnings.push(format!(
                    "{}: the preview has {frames} frames but the item's span has {span_frames}; the item changed since its run?",
                    f.id
                ));
            }
            let preview = json!({
                "path": href(&media.join("preview.mp4"), page_dir),
                "frames": frames,
                "width": p["output"]["width"], "height": p["output"]["height"],
                "times": facts["times"],
                "end_s": facts["end_s"],
                "source_start_frame": facts["source_start_frame"],
                "clip_start_s": resolved["start"]["seconds"],
                "error": null,
            });
            let thumbs = read_json(&media.join("thumbs").join("frames.json"))
                .map(|t| thumbs_data(&t, &media.join("thumbs"), page_dir))
                .unwrap_or_default();
            (
                preview,
                thumbs,
                Some((
                    facts["annotated_source_frames"].clone(),
                    facts["annotation_keys_outside_video"].clone(),
                )),
            )
        }
        (err, read) => {
            let why = err
                .cloned()
                .or_else(|| read.err().map(|e| e.to_string()))
                .unwrap_or_default();
            (
                json!({"path": null, "frames": span_frames, "times": [], "error": why}),
                Vec::new(),
                None,
            )
        }
    };
    let plan_has_boxes = f.plan.as_ref().is_some_and(|p| p.boxes.is_some());
    let annotations = match annotated {
        Some((runs, outside)) if plan_has_boxes => {
            let mut counts = [0usize; 4];
            for run in runs.as_array().into_iter().flatten() {
                let (a, b) = (
                    run[0].as_u64().unwrap_or(0) as usize,
                    run[1].as_u64().unwrap_or(0) as usize,
                );
                let overlap = |lo: usize, hi: usize| b.min(hi).saturating_sub(a.max(lo));
                counts[0] += overlap(kept.0, kept.1);
                counts[1] += overlap(0, cut.0);
                counts[2] += overlap(kept.1, cut.1);
                counts[3] += overlap(cut.1, usize::MAX);
            }
            json!({
                "frames_in_clip": counts[0], "before_span": counts[1],
                "in_truncated_part": counts[2], "after_span": counts[3],
                "keys_outside_video": outside,
            })
        }
        _ => Value::Null,
    };
    let damaged: Vec<Value> = main["damaged_frames"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let needle = if resolved["insert"].is_object() {
        json!({"start": resolved["insert"]["needle_start"], "end": resolved["insert"]["needle_end"]})
    } else {
        Value::Null
    };
    let facts = facts_of(
        &main,
        cut,
        kept,
        &needle,
        &base64,
        &annotations,
        damaged.len(),
    );
    let out = &main["output"];
    let entry = json!({
        "n": n, "id": f.id, "line": f.line,
        "status": "ok",
        "error": f.error.as_ref().map(|e| format!("the last run failed this item ({e}); these are the outputs of an earlier run")),
        "frames": out["frames"], "duration_s": out["duration_s"],
        "span_frames": span_frames,
        "decision_frame": decision_frame,
        "decision_requested": decision_requested,
        "warnings": item_warnings.len(),
        "damaged": damaged.len(),
        "detail": detail_path(n),
    });
    let detail = json!({
        "n": n, "id": f.id,
        "videos": videos,
        "preview": preview,
        "thumbs": thumbs,
        "decision": decision_frame.map(|k| json!({
            "requested": decision_requested,
            "frame": k,
            "clip_time_s": decision["clip_time"]["seconds"],
        })),
        "span": {"start_frame": cut.0, "end_frame": cut.1,
                 "start_s": resolved["start"]["seconds"],
                 "end_s": secs(&resolved["start"]["seconds"]).zip(secs(&preview["end_s"])).map(|(a, b)| a + b)},
        "kept": {"start_frame": kept.0, "end_frame": kept.1},
        "needle": needle,
        "samples": samples,
        "facts": facts,
        "base64": base64,
        "damaged_frames": damaged.iter().map(|d| d.get("output_frame").cloned().unwrap_or(d.clone())).collect::<Vec<_>>(),
        "annotations": annotations,
        // The coordinates of boxes drawn on the page: the source's upright stored grid (its
        // record's size), as annotation files and `overlay` take them; `source` names it in
        // exported files.
        "frame_size": [main["sources"][0]["width"], main["sources"][0]["height"]],
        "source": main["request"]["source"],
        "warnings": item_warnings,
        "sidecars": sidecar_links,
    });
    Ok((entry, detail))
}

/// The images a `frames.json` (of a frames export in `dir`) lists, in its order: each one's
/// link from the page and the fields `keys` names (`(field in frames.json, name on the page)`).
fn images_of(v: &Value, dir: &Path, page_dir: &Path, keys: &[(&str, &str)]) -> Vec<Value> {
    v["frames"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|fr| {
            let mut image = serde_json::Map::new();
            image.insert(
                "path".into(),
                href(&dir.join(fr["file"].as_str().unwrap_or("")), page_dir).into(),
            );
            for (field, name) in keys {
                image.insert(name.to_string(), fr[*field].clone());
            }
            Value::Object(image)
        })
        .collect()
}

/// A frames export: its images in the order the model receives them.
fn sample_data(v: &Value, path: &Path, page_dir: &Path) -> Value {
    let dir = path.parent().unwrap_or(Path::new("."));
    let keys = [
        ("stream_frame", "stream_frame"),
        ("source", "source"),
        ("source_frame", "source_frame"),
        ("time_s", "time_s"),
        ("width", "width"),
        ("height", "height"),
    ];
    let strip = v["strip"]
        .as_str()
        .map(|s| Value::from(href(&dir.join(s), page_dir)))
        .unwrap_or(Value::Null);
    json!({
        "name": dir.file_name().map(|n| n.to_string_lossy().into_owned()),
        "order": v["sampled"]["order"].as_str().or(v["order"].as_str()),
        "sampler": v["sampled"]["sampler"],
        "strip": strip,
        "images": images_of(v, dir, page_dir, &keys),
        "profile": profile_data(&v["profile"]),
    })
}

/// What the page shows of a frames export's model profile (`frames.json`'s `profile` block):
/// the profile, the package it mirrors, the size every frame has, the resampling, the
/// `<t seconds>` strings (one per group of frames) and the visual tokens; `null` without one.
fn profile_data(p: &Value) -> Value {
    if !p.is_object() {
        return Value::Null;
    }
    let m = &p["mirrors"];
    let mirrors = [&m["package"], &m["version"], &m["function"]]
        .iter()
        .filter_map(|v| v.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    json!({
        "profile": p["profile"], "mirrors": mirrors,
        "width": p["width"], "height": p["height"],
        "resample": p["resample"], "timestamps": p["timestamps"], "tokens": p["tokens"],
    })
}

/// The timeline thumbnails, in time order.
fn thumbs_data(v: &Value, dir: &Path, page_dir: &Path) -> Vec<Value> {
    // Placed on the item's own timeline: the time in the processed stream.
    let keys = [("stream_frame", "frame"), ("stream_time_s", "time_s")];
    let mut thumbs = images_of(v, dir, page_dir, &keys);
    thumbs.sort_by_key(|t| t["frame"].as_u64());
    thumbs
}

fn fmt_s(v: &Value) -> String {
    v.as_f64()
        .map(|s| format!("{s:.3} s"))
        .unwrap_or_else(|| "?".into())
}

/// The sidecar facts a reviewer needs, as label/value pairs.
fn facts_of(
    main: &Value,
    cut: (usize, usize),
    kept: (usize, usize),
    needle: &Value,
    base64: &Value,
    annotations: &Value,
    damaged: usize,
) -> Vec<[String; 2]> {
    let mut facts = Vec::new();
    let mut add = |k: &str, v: String| facts.push([k.to_string(), v]);
    let src = &main["sources"][0];
    let request_source = main["request"]["source"].as_str().unwrap_or("?");
    add(
        "Source",
        format!(
            "{request_source} · {}x{} · {} fps · {} frames · {}",
            src["width"],
            src["height"],
            src["avg_frame_rate"].as_str().unwrap_or("?"),
            src["frames"],
            fmt_s(&src["duration_s"])
        ),
    );
    let r = &main["resolved"];
    add(
        "Span",
        format!(
            "source frames {}..{} ({} frames) · from {}",
            cut.0,
            cut.1,
            cut.1 - cut.0,
            fmt_s(&r["start"]["seconds"]),
        ),
    );
    add(
        "Kept",
        format!(
            "source frames {}..{} ({} frames)",
            kept.0,
            kept.1,
            kept.1 - kept.0
        ),
    );
    let d = &r["decision"];
    add(
        "Decision point",
        if d.is_null() {
            "none (the whole span is kept)".into()
        } else {
            format!(
                "{} → clip time {} · last kept source frame {} · first dropped {}",
                d["requested"].as_str().unwrap_or("?"),
                fmt_s(&d["clip_time"]["seconds"]),
                d["last_kept_frame"],
                d["first_dropped_frame"]
            )
        },
    );
    let out = &main["output"];
    add(
        "Output",
        format!(
            "{} frames · {}x{} · {}",
            out["frames"],
            out["width"],
            out["height"],
            fmt_s(&out["duration_s"])
        ),
    );
    if !needle.is_null() {
        add(
            "Needle",
            format!(
                "output frames {}..{} ({})",
                needle["start"],
                needle["end"],
                r["insert"]["sequence"].as_str().unwrap_or("?")
            ),
        );
    }
    if !base64.is_null() {
        add(
            "Base64",
            format!(
                "{} of {} bytes ({:.1}%)",
                base64["bytes"],
                base64["budget"],
                base64["used"].as_f64().unwrap_or(0.0) * 100.0
            ),
        );
    }
    add("Damaged frames", damaged.to_string());
    if !annotations.is_null() {
        add(
            "Annotated frames",
            format!(
                "{} in the clip · {} before the span · {} in the truncated part · {} after the span · {} keys outside the video",
                annotations["frames_in_clip"],
                annotations["before_span"],
                annotations["in_truncated_part"],
                annotations["after_span"],
                annotations["keys_outside_video"]
            ),
        );
    }
    facts
}

/// Writes `index.html` and the assets at their temporary paths.
pub(crate) fn write_assets(index_html: &Path, assets: &Path) -> Result<()> {
    let write = |p: &Path, text: &str| std::fs::write(p, text).map_err(|e| Error::io(p, e));
    write(index_html, INDEX_HTML)?;
    write(&assets.join("review.js"), REVIEW_JS)?;
    write(&assets.join("review.css"), REVIEW_CSS)?;
    crate::call::output::ownership::write_review_marker(assets)?;
    Ok(())
}

/// A JSON value as a script-safe literal (no `</script>`, no line separators that end a
/// JavaScript string).
fn script_json(v: &Value) -> String {
    serde_json::to_string(v)
        .expect("JSON serialises")
        .replace('<', "\\u003c")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// Writes `data/index.js` and `data/items/*.js` in the temporary data folder.
pub(crate) fn write_data(data: &Path, built: &Built) -> Result<()> {
    let items = data.join("items");
    std::fs::create_dir_all(&items).map_err(|e| Error::io(&items, e))?;
    let write = |p: &Path, text: String| std::fs::write(p, text).map_err(|e| Error::io(p, e));
    write(
        &data.join("index.js"),
        format!(
            "window.VIDPREP_REVIEW_INDEX = {};\n",
            script_json(&built.index)
        ),
    )?;
    for (n, d) in built.details.iter().enumerate() {
        write(
            &items.join(format!("{n:05}.js")),
            format!("vidprepReviewReceive({n}, {});\n", script_json(d)),
        )?;
    }
    crate::call::output::ownership::write_review_marker(data)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_are_relative_and_percent_encoded() {
        let base = Path::new("/r/out/review");
        assert_eq!(
            href(Path::new("/r/out/a b/clip.mp4"), base),
            "../a%20b/clip.mp4"
        );
        assert_eq!(
            href(Path::new("/r/out/review/media/x#1/preview.mp4"), base),
            "media/x%231/preview.mp4"
        );
        assert_eq!(href(Path::new("/r/out/é/c.mp4"), base), "../%C3%A9/c.mp4");
    }

    #[test]
    fn script_data_cannot_close_its_script_or_break_a_string() {
        let v = json!({"note": "</script><b>\u{2028}"});
        let s = script_json(&v);
        assert!(!s.contains("</script>") && !s.contains('\u{2028}'));
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }
}
