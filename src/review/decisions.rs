//! The reviewer's decisions (the `decisions.json` the review page exports) and applying them
//! to the run's manifest (`vidprep review-apply`): rejected items are dropped (commented out
//! in a JSONL manifest, with the reason), moved decision points are set as frame numbers of
//! the span, and every other entry is kept byte for byte, so `vidprep run --resume` on the
//! new manifest redoes exactly the items whose decision point moved.
//!
//! The new manifest is written beside the old one (never over it): relative paths in a
//! manifest are read from its folder, and the same paths keep the same plans. It never
//! replaces a file the manifest names (a source, boxes, a needle sequence's folder,
//! subtitles, a parity record), the decisions, or any other existing file but an earlier
//! reviewed manifest, proven by the record review-apply writes beside it
//! (`NAME.review-apply.json`: the MD5 of the manifest it wrote), so a
//! reviewed manifest edited since is not replaced either.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::output::group::OutputGroup;
use crate::error::{Error, Result};
use crate::vocab::time::TimeSpec;

/// The format version this vidprep reads and the page writes.
pub const DECISIONS_VERSION: u32 = 1;

/// A reviewer's verdict on an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Meets the criteria: kept.
    Accepted,
    /// Fails a criterion: dropped from the manifest.
    Rejected,
    /// Not looked at (yet): kept.
    Unreviewed,
}

/// A decision point moved on the page: the clip keeps span frames `0..frame`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MovedDecision {
    /// The first span frame the clip no longer shows (1..=span frames).
    pub frame: u64,
}

/// What the reviewer saw of an item (to notice a manifest changed since).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reviewed {
    /// The decision point's first dropped span frame then (`null`: none).
    #[serde(default)]
    pub decision_frame: Option<u64>,
    /// The decision point as the manifest spelled it then.
    #[serde(default)]
    pub decision_requested: Option<String>,
    /// Frames in the item's span then.
    #[serde(default)]
    pub span_frames: Option<u64>,
}

/// One item's review.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemDecision {
    /// The item's id in the manifest.
    pub id: String,
    /// Accepted, rejected or unreviewed.
    pub verdict: Verdict,
    /// The quality criteria by key (see `review::CRITERIA`): true when the item meets it.
    #[serde(default)]
    pub criteria: BTreeMap<String, bool>,
    /// The reviewer's note.
    #[serde(default)]
    pub note: String,
    /// The new decision point; `null` when unchanged.
    #[serde(default)]
    pub decision: Option<MovedDecision>,
    /// Boxes the reviewer drew on the page (kept with the decisions; the page's "Export
    /// boxes" writes them as an annotation file). `review-apply` does not change them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boxes: Vec<DrawnBox>,
    /// What the reviewer saw (to notice a manifest changed since).
    #[serde(default)]
    pub reviewed: Option<Reviewed>,
}

/// A box drawn on the review page: on a source frame, in the source's pixels (its upright
/// stored grid, the one annotation files are read on).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DrawnBox {
    /// The source's frame number (0-based, as sidecars name source frames).
    pub frame: u64,
    /// The track id (one track of the exported annotation file per id).
    pub track: String,
    /// The label, empty when none.
    #[serde(default)]
    pub label: String,
    /// `[x1, y1, x2, y2]` in pixels of the source's upright stored grid.
    #[serde(rename = "box")]
    pub bbox: [f64; 4],
}

/// The file the review page exports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decisions {
    /// The format version ([`DECISIONS_VERSION`]).
    pub vidprep_review_decisions: u32,
    /// The review page's id (one per run folder).
    #[serde(default)]
    pub review_id: Option<String>,
    /// The run folder reviewed.
    #[serde(default)]
    pub run_dir: Option<String>,
    /// The manifest the page was built with, if any.
    #[serde(default)]
    pub manifest: Option<String>,
    /// When the page exported the file (ISO 8601).
    #[serde(default)]
    pub exported: Option<String>,
    /// Every item of the page, in its order.
    pub items: Vec<ItemDecision>,
}

impl Decisions {
    /// Reads and checks a decisions file.
    pub fn read(path: &Path) -> Result<Decisions> {
        crate::media::source::check_input_file(path).map_err(|e| match e {
            Error::Request { path, message } => {
                Error::bad_file(&path, None, message.replace("video file", "decisions file"))
            }
            other => other,
        })?;
        let size = std::fs::metadata(path)
            .map_err(|e| Error::read(path, e))?
            .len();
        if size > 256 << 20 {
            return Err(Error::bad_file(
                path,
                None,
                format!(
                    "is {size} bytes; not a review decisions file (those are small JSON files)"
                ),
            ));
        }
        let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::bad_file(
                path,
                None,
                "is not a review decisions file (not UTF-8 text; expected the decisions.json the review page exports)",
            )
        })?;
        let d: Decisions = serde_json::from_str(&text).map_err(|e| {
            Error::bad_file(
                path,
                Some(e.line()),
                format!("not a review decisions file (as the review page exports): {e}"),
            )
        })?;
        if d.vidprep_review_decisions != DECISIONS_VERSION {
            return Err(Error::bad_file(
                path,
                None,
                format!(
                    "is version {} of the decisions format; this vidprep reads version {DECISIONS_VERSION}",
                    d.vidprep_review_decisions
                ),
            ));
        }
        let mut seen = HashSet::new();
        for item in &d.items {
            if !seen.insert(item.id.as_str()) {
                return Err(Error::bad_file(
                    path,
                    None,
                    format!("item {:?} appears twice", item.id),
                ));
            }
            if let Some(m) = item.decision {
                if m.frame == 0 {
                    return Err(Error::bad_file(
                        path,
                        None,
                        format!(
                            "item {:?}: decision frame 0 would keep no frame; expected 1 or more",
                            item.id
                        ),
                    ));
                }
                if let Some(n) = item.reviewed.as_ref().and_then(|r| r.span_frames) {
                    if m.frame > n {
                        return Err(Error::bad_file(
                            path,
                            None,
                            format!(
                                "item {:?}: decision frame {} is past the span's {n} frames",
                                item.id, m.frame
                            ),
                        ));
                    }
                }
            }
        }
        Ok(d)
    }
}

/// What applying decisions did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Applied {
    /// The manifest written.
    pub manifest: PathBuf,
    /// Items kept (accepted or not reviewed).
    pub kept: usize,
    /// Items dropped because they were rejected.
    pub rejected: Vec<String>,
    /// Items whose decision point moved (`run --resume` redoes these).
    pub moved: Vec<String>,
    /// Items kept without a review.
    pub unreviewed: Vec<String>,
    /// Manifest items the decisions do not mention (kept as they are).
    pub not_in_review: Vec<String>,
}

/// The default name of the reviewed manifest: `NAME.reviewed.EXT` beside `manifest`.
pub fn default_output(manifest: &Path) -> PathBuf {
    let stem = manifest
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "manifest".into());
    let ext = manifest
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "jsonl".into());
    manifest.with_file_name(format!("{stem}.reviewed.{ext}"))
}

/// What the record of a reviewed manifest `NAME` is called: `NAME.review-apply.json` beside it.
const RECORD_SUFFIX: &str = ".review-apply.json";

/// What `vidprep review-apply` writes beside a reviewed manifest: the proof that it wrote it
/// (the manifest's name and the MD5 of its bytes), and what it was made from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct ReviewApplyRecord {
    /// The vidprep version that wrote it.
    vidprep_review_apply: String,
    /// The reviewed manifest's file name.
    manifest: String,
    /// The MD5 of the reviewed manifest's bytes, in hex.
    md5: String,
    /// The file name of the manifest it was made from.
    reviewed_from: String,
    /// The file name of the decisions applied.
    decisions: String,
}

/// The record of the reviewed manifest `output` ([`RECORD_SUFFIX`]).
fn record_path(output: &Path) -> PathBuf {
    let mut name = output
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(RECORD_SUFFIX);
    output.with_file_name(name)
}

/// A file's name as text (for the record).
fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The MD5 of `bytes`, in hex.
fn md5_hex(bytes: &[u8]) -> String {
    Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The MD5 of the file at `path`, in hex, read in pieces (a manifest may be large).
fn file_md5_hex(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = Md5::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Some(
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// The record at `path`, when it is one (a small JSON file of that shape).
fn read_record(path: &Path) -> Option<ReviewApplyRecord> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 1 << 20 {
        return None;
    }
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Whether `vidprep review-apply` wrote the file at `path` and nobody changed it since: its
/// record names it and holds the MD5 of its bytes.
fn written_by_review_apply(path: &Path) -> bool {
    let Some(record) = read_record(&record_path(path)) else {
        return false;
    };
    record.manifest == name_of(path) && file_md5_hex(path).is_some_and(|m| m == record.md5)
}

fn canonical_dir(p: &Path) -> PathBuf {
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

/// Applies `decisions` (read from `decisions_path`) to `manifest`, writing `output` (default
/// `default_output`).
pub fn apply_decisions(
    decisions_path: &Path,
    manifest: &Path,
    output: Option<&Path>,
    ctx: &crate::call::context::CallContext,
) -> Result<Applied> {
    let decisions = Decisions::read(decisions_path)?;
    let output = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| default_output(manifest));
    if canonical_dir(&output) != canonical_dir(manifest) {
        return Err(Error::Usage(format!(
            "{}: the reviewed manifest must be written in the folder of {} (its relative paths are read from its own folder, and other paths would make `run --resume` redo every item)",
            output.display(),
            manifest.display()
        )));
    }
    // Read (and check) the manifest as `run` would, then rewrite its text.
    let read = crate::batch::manifest::read_manifest(manifest)?;
    let text = std::fs::read_to_string(manifest).map_err(|e| Error::read(manifest, e))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text).to_string();
    // The outputs are claimed before any work. Everything the manifest's items read is an
    // input (never replaced, never written into); an existing file is replaced only when it is
    // a reviewed manifest review-apply wrote, unchanged since, and its record only when it is
    // one.
    let mut inputs = vec![manifest.to_path_buf(), decisions_path.to_path_buf()];
    for item in &read.items {
        for path in item.plan.inputs() {
            if !inputs.contains(&path) {
                inputs.push(path);
            }
        }
    }
    let mut group = OutputGroup::new(&inputs, ctx);
    let temp = group.owned_file(
        &output,
        &written_by_review_apply,
        &format!(
            "`vidprep review-apply`, or was changed since (an earlier reviewed manifest is replaced only while {} records its MD5)",
            record_path(&output).display()
        ),
    )?;
    let record_file = record_path(&output);
    let record_temp = group.owned_file(
        &record_file,
        &|p: &Path| read_record(p).is_some(),
        "`vidprep review-apply` (it is the name of the record of a reviewed manifest)",
    )?;
    let by_id: HashMap<&str, &ItemDecision> =
        decisions.items.iter().map(|d| (d.id.as_str(), d)).collect();
    let line_of_id: HashMap<usize, String> = read
        .items
        .iter()
        .map(|i| (i.line, i.plan.id.clone()))
        .collect();
    let item_at: HashMap<usize, &crate::batch::manifest::ManifestItem> =
        read.items.iter().map(|i| (i.line, i)).collect();
    let tables = crate::media::table::TableCache::new();
    let mut applied = Applied {
        manifest: output.clone(),
        ..Applied::default()
    };
    let mut in_manifest = HashSet::new();
    let mut replacements: Vec<(usize, Option<String>)> = Vec::new();
    let entries = crate::batch::manifest::split_entries(manifest, &text)?;
    for (line, entry) in &entries {
        let Some(id) = line_of_id.get(line) else {
            continue; // a bad entry: kept as it is (run reports it)
        };
        in_manifest.insert(id.clone());
        let Some(d) = by_id.get(id.as_str()) else {
            applied.not_in_review.push(id.clone());
            applied.kept += 1;
            replacements.push((*line, Some(entry.to_string())));
            continue;
        };
        if d.verdict == Verdict::Rejected {
            applied.rejected.push(id.clone());
            replacements.push((*line, None));
            continue;
        }
        applied.kept += 1;
        if d.verdict == Verdict::Unreviewed {
            applied.unreviewed.push(id.clone());
        }
        let Some(moved) = d.decision else {
            replacements.push((*line, Some(entry.to_string())));
            continue;
        };
        let mut value: Value = serde_json::from_str(entry)
            .map_err(|e| Error::bad_file(manifest, Some(*line), format!("not valid JSON: {e}")))?;
        let current = value
            .get("decision")
            .map(|v| serde_json::from_value::<TimeSpec>(v.clone()).map(|t| t.to_text()))
            .transpose()
            .map_err(|e| Error::bad_file(manifest, Some(*line), e.to_string()))?;
        if let Some(r) = &d.reviewed {
            let seen = r.decision_requested.as_deref().map(|t| {
                TimeSpec::parse(t)
                    .map(|t| t.to_text())
                    .unwrap_or(t.to_string())
            });
            if seen != current {
                return Err(Error::bad_file(
                    manifest,
                    Some(*line),
                    format!(
                        "item {id:?}: its decision point is now {} but the review saw {}; the manifest changed after the review, so review this item again",
                        current.as_deref().unwrap_or("none"),
                        seen.as_deref().unwrap_or("none")
                    ),
                ));
            }
        }
        if d.reviewed.as_ref().and_then(|r| r.span_frames).is_none() {
            // Nothing says what span the reviewer saw: the item's own span bounds the point.
            let frames = span_frames(item_at[line], &tables, ctx)?;
            if moved.frame > frames {
                return Err(Error::bad_file(
                    decisions_path,
                    None,
                    format!(
                        "item {id:?}: decision frame {} is past its span in {} (line {line}): \
                         the span has {frames} frames, so the decision frame must be 1 to \
                         {frames}",
                        moved.frame,
                        manifest.display()
                    ),
                ));
            }
        }
        value["decision"] = Value::from(moved.frame);
        applied.moved.push(id.clone());
        replacements.push((
            *line,
            Some(serde_json::to_string(&value).expect("JSON serialises")),
        ));
    }
    let unknown: Vec<&str> = decisions
        .items
        .iter()
        .map(|d| d.id.as_str())
        .filter(|id| !in_manifest.contains(*id))
        .collect();
    if !unknown.is_empty() {
        return Err(Error::bad_file(
            decisions_path,
            None,
            format!(
                "names items that are not in {}: {}; was it exported from the review of another run?",
                manifest.display(),
                unknown.join(", ")
            ),
        ));
    }
    let new_text = rewrite(&text, &entries, &replacements, &by_id);
    std::fs::write(&temp, &new_text).map_err(|e| Error::io(&output, e))?;
    let record = ReviewApplyRecord {
        vidprep_review_apply: env!("CARGO_PKG_VERSION").to_string(),
        manifest: name_of(&output),
        md5: md5_hex(new_text.as_bytes()),
        reviewed_from: name_of(manifest),
        decisions: name_of(decisions_path),
    };
    crate::call::output::write_json(&record_temp, &record)?;
    // The new manifest must read back with the same items, less the rejected ones.
    let check = crate::batch::manifest::read_manifest(&temp)?;
    if check.items.len() != read.items.len() - applied.rejected.len() {
        return Err(Error::internal(format!(
            "{}: the rewritten manifest has {} items, expected {}",
            output.display(),
            check.items.len(),
            read.items.len() - applied.rejected.len()
        )));
    }
    group.commit()?;
    Ok(applied)
}

/// The frames in `item`'s span (before any decision point), read from its source as `run`
/// resolves it.
fn span_frames(
    item: &crate::batch::manifest::ManifestItem,
    tables: &crate::media::table::TableCache,
    ctx: &crate::call::context::CallContext,
) -> Result<u64> {
    let mut plan = crate::plan::Plan::clone(&item.plan);
    plan.decision = None;
    plan.boxes = None;
    plan.insert = None;
    let stream = crate::frames::stages::stream::ProcessedStream::open(&plan, 1, tables, ctx)?;
    Ok(stream.resolved.cut.len() as u64)
}

/// The manifest's text with entries replaced or dropped: a JSONL manifest keeps every other
/// line as it was and comments out rejected entries with the reason; a JSON array is written
/// again from its (kept or replaced) entries.
fn rewrite(
    text: &str,
    entries: &[(usize, &str)],
    replacements: &[(usize, Option<String>)],
    decisions: &HashMap<&str, &ItemDecision>,
) -> String {
    let by_line: HashMap<usize, &Option<String>> =
        replacements.iter().map(|(l, r)| (*l, r)).collect();
    if text.trim_start().starts_with('[') {
        let kept: Vec<String> = entries
            .iter()
            .filter_map(|(line, entry)| match by_line.get(line) {
                Some(Some(new)) => Some(new.clone()),
                Some(None) => None,
                None => Some(entry.to_string()),
            })
            .collect();
        return format!("[\n{}\n]\n", kept.join(",\n"));
    }
    let mut out = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        match by_line.get(&line) {
            Some(Some(new)) => out.push_str(new),
            Some(None) => {
                let id = serde_json::from_str::<Value>(raw)
                    .ok()
                    .and_then(|v| v["id"].as_str().map(str::to_string))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "# rejected in review{}: ",
                    reason(decisions.get(id.as_str()).copied())
                ));
                out.push_str(raw);
            }
            None => out.push_str(raw),
        }
        out.push('\n');
    }
    out
}

/// "(not answerable from one frame; note: ...)": the criteria an item failed and the note.
fn reason(d: Option<&ItemDecision>) -> String {
    let Some(d) = d else {
        return String::new();
    };
    let mut parts: Vec<String> = super::CRITERIA
        .iter()
        .filter(|c| d.criteria.get(c.key) == Some(&false))
        .map(|c| format!("fails \"{}\"", c.label))
        .collect();
    let note = d.note.replace(['\n', '\r'], " ");
    if !note.trim().is_empty() {
        parts.push(format!("note: {}", note.trim()));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(manifest: &str, decisions: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("v.mp4"), "x").unwrap();
        let m = dir.path().join("m.jsonl");
        std::fs::write(&m, manifest).unwrap();
        let d = dir.path().join("decisions.json");
        std::fs::write(&d, decisions).unwrap();
        (dir, m, d)
    }

    const MANIFEST: &str = concat!(
        "# my benchmark\n",
        "{\"id\": \"a\", \"source\": \"v.mp4\", \"end\": 100, \"decision\": \"75%\"}\n",
        "{\"id\": \"b\",   \"source\": \"v.mp4\", \"end\": 100}\n",
        "{\"id\": \"c\", \"source\": \"v.mp4\", \"end\": 100, \"decision\": 40}\n",
    );

    #[test]
    fn rejected_items_are_commented_out_moved_points_set_and_the_rest_kept_byte_for_byte() {
        let (_dir, m, d) = setup(
            MANIFEST,
            r#"{"vidprep_review_decisions": 1, "items": [
                {"id": "a", "verdict": "accepted", "decision": {"frame": 60},
                 "reviewed": {"decision_frame": 75, "decision_requested": "75%", "span_frames": 100}},
                {"id": "b", "verdict": "unreviewed", "decision": null,
                 "boxes": [{"frame": 17, "track": "1", "label": "ball", "box": [1, 2, 30.5, 40]}]},
                {"id": "c", "verdict": "rejected", "note": "ball hidden",
                 "criteria": {"target_visible": false, "temporal_evidence": true}}]}"#,
        );
        let applied = apply_decisions(&d, &m, None, &Default::default()).unwrap();
        assert_eq!(applied.moved, vec!["a"]);
        assert_eq!(applied.rejected, vec!["c"]);
        assert_eq!(applied.unreviewed, vec!["b"]);
        let text = std::fs::read_to_string(m.with_file_name("m.reviewed.jsonl")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "# my benchmark");
        assert_eq!(
            lines[1],
            r#"{"id":"a","source":"v.mp4","end":100,"decision":60}"#
        );
        assert_eq!(
            lines[2],
            "{\"id\": \"b\",   \"source\": \"v.mp4\", \"end\": 100}"
        );
        assert!(
            lines[3].starts_with("# rejected in review (fails \"Target visible\"; note: ball hidden): {\"id\": \"c\""),
            "{}",
            lines[3]
        );
        // The original is untouched.
        assert_eq!(std::fs::read_to_string(&m).unwrap(), MANIFEST);
    }

    #[test]
    fn a_json_array_manifest_stays_an_array() {
        let (_dir, m, d) = setup(
            "[{\"id\": \"a\", \"source\": \"v.mp4\"},\n {\"id\": \"b\", \"source\": \"v.mp4\"}]\n",
            r#"{"vidprep_review_decisions": 1, "items": [
                {"id": "a", "verdict": "rejected"},
                {"id": "b", "verdict": "accepted", "decision": {"frame": 7},
                 "reviewed": {"span_frames": 10}}]}"#,
        );
        let m2 = m.with_file_name("m2.json");
        apply_decisions(&d, &m, Some(&m2), &Default::default()).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&m2).unwrap()).unwrap();
        assert_eq!(
            v,
            serde_json::json!([{"id": "b", "source": "v.mp4", "decision": 7}])
        );
    }

    #[test]
    fn bad_decisions_are_refused_with_the_reason() {
        let cases = [
            (
                r#"{"vidprep_review_decisions": 2, "items": []}"#,
                "version 2",
            ),
            (
                r#"{"vidprep_review_decisions": 1, "items": [{"id": "zz", "verdict": "accepted"}]}"#,
                "not in",
            ),
            (
                r#"{"vidprep_review_decisions": 1, "items": [{"id": "a", "verdict": "maybe"}]}"#,
                "unknown variant",
            ),
            (
                r#"{"vidprep_review_decisions": 1, "items": [{"id": "a", "verdict": "accepted", "decision": {"frame": 0}}]}"#,
                "keep no frame",
            ),
            (
                r#"{"vidprep_review_decisions": 1, "items": [{"id": "a", "verdict": "accepted", "decision": {"frame": 101}, "reviewed": {"span_frames": 100}}]}"#,
                "past the span",
            ),
            (
                r#"{"vidprep_review_decisions": 1, "items": [{"id": "a", "verdict": "accepted", "decision": {"frame": 50}, "reviewed": {"decision_requested": "50%"}}]}"#,
                "manifest changed",
            ),
            (
                r#"{"vidprep_review_decisions": 1, "items": [{"id": "a", "verdict": "accepted"}, {"id": "a", "verdict": "rejected"}]}"#,
                "twice",
            ),
            (
                r#"{"vidprep_review_decisions": 1, "items": [{"id": "a", "verdict": "accepted", "boxes": [{"frame": 3, "track": "1", "box": [1, 2, 3]}]}]}"#,
                "invalid length 3",
            ),
            ("not json", "not a review decisions file"),
        ];
        for (decisions, expected) in cases {
            let (_dir, m, d) = setup(MANIFEST, decisions);
            let err = apply_decisions(&d, &m, None, &Default::default())
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{decisions}: {err}");
            assert!(!m.with_file_name("m.reviewed.jsonl").exists());
        }
    }

    #[test]
    fn an_earlier_reviewed_manifest_is_replaced_only_while_its_record_proves_it() {
        let (dir, m, d) = setup(
            MANIFEST,
            r#"{"vidprep_review_decisions": 1, "items": [{"id": "c", "verdict": "rejected"}]}"#,
        );
        let out = dir.path().join("m.reviewed.jsonl");
        apply_decisions(&d, &m, None, &Default::default()).unwrap();
        let record = read_record(&dir.path().join("m.reviewed.jsonl.review-apply.json")).unwrap();
        assert_eq!(record.manifest, "m.reviewed.jsonl");
        assert_eq!(record.reviewed_from, "m.jsonl");
        assert_eq!(record.decisions, "decisions.json");
        // The MD5 as md5sum(1) computes it.
        let md5sum = std::process::Command::new("md5sum")
            .arg(&out)
            .output()
            .unwrap();
        let md5sum = String::from_utf8(md5sum.stdout).unwrap();
        assert_eq!(md5sum.split_whitespace().next(), Some(record.md5.as_str()));
        assert!(written_by_review_apply(&out));
        // Applied again: the earlier output is replaced.
        apply_decisions(&d, &m, None, &Default::default()).unwrap();
        // Edited since: it is someone's now, refused and left as it is.
        let edited = format!("{}# my note\n", std::fs::read_to_string(&out).unwrap());
        std::fs::write(&out, &edited).unwrap();
        let err = apply_decisions(&d, &m, None, &Default::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("was not written by `vidprep review-apply`"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&out).unwrap(), edited);
        // A record of another file proves nothing about this one.
        let other = dir.path().join("other.jsonl");
        std::fs::write(&other, &edited).unwrap();
        std::fs::copy(
            dir.path().join("m.reviewed.jsonl.review-apply.json"),
            dir.path().join("other.jsonl.review-apply.json"),
        )
        .unwrap();
        assert!(!written_by_review_apply(&other));
        // A file at the record's name that is no record is not replaced either.
        std::fs::remove_file(&out).unwrap();
        std::fs::write(
            dir.path().join("m.reviewed.jsonl.review-apply.json"),
            "mine\n",
        )
        .unwrap();
        let err = apply_decisions(&d, &m, None, &Default::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("record of a reviewed manifest"), "{err}");
        assert!(!out.exists());
    }

    #[test]
    fn the_output_stays_beside_the_manifest_and_never_replaces_it() {
        let (dir, m, d) = setup(MANIFEST, r#"{"vidprep_review_decisions": 1, "items": []}"#);
        let err = apply_decisions(&d, &m, Some(&m), &Default::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("refusing to overwrite an input"), "{err}");
        let elsewhere = dir.path().join("sub");
        std::fs::create_dir(&elsewhere).unwrap();
        let err = apply_decisions(
            &d,
            &m,
            Some(&elsewhere.join("m.jsonl")),
            &Default::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("must be written in the folder"), "{err}");
        assert_eq!(std::fs::read_to_string(&m).unwrap(), MANIFEST);
    }
}
