//! `item.json`: the record a batch item's folder ends with (what was made from what), written
//! by the executor when the item commits and read back by `--resume` ([`ItemRecord::is_current`])
//! to redo exactly the items whose plan, inputs or outputs changed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::call::context::CallContext;
use crate::call::hash::fnv1a;
use crate::plan::{NormalPlan, Plan};
use crate::records::sidecar::VERSION;
use crate::vocab::EncodeSettings;

/// `item.json`: what a batch item made and from what, so a resumed run redoes exactly the
/// items whose plan, inputs or outputs changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct ItemRecord {
    /// The item's id (the folder's name).
    pub id: String,
    /// Hash of the plan (as run, paths resolved) and the encoding defaults: 16 hex digits
    /// of FNV-1a.
    pub plan_hash: String,
    /// The vidprep version that made the item; another version redoes it on resume.
    pub vidprep_version: String,
    /// Every output file below the item folder, with its size; paths relative to the item
    /// folder, sorted, `item.json` itself left out.
    pub outputs: Vec<FileFingerprint>,
    /// Every input file (a sequence folder's files too): the source's with size and
    /// modification time, every side input's (boxes, subtitles, a needle sequence, the label
    /// and info files read beside a `groundtruth.txt`) with size and content hash.
    pub inputs: Vec<FileFingerprint>,
    /// A URL source as its first request saw it (ETag, Last-Modified, size): a resumed run
    /// asks the server again and redoes the item when they differ, when the server cannot
    /// be asked, or when they do not identify a version (a size alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remote: Vec<RemoteFingerprint>,
}

/// A URL input as seen at one moment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct RemoteFingerprint {
    /// The URL as the plan gives it.
    pub url: String,
    #[serde(flatten)]
    pub validators: crate::call::net::remote::Validators,
}

/// A file as seen at one moment: path, size and, for inputs, modification time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct FileFingerprint {
    /// The file: relative to the item folder for outputs, as the plan resolved it for inputs.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Last modification, nanoseconds since the Unix epoch; absent for outputs (only their
    /// size is checked) and when the file system does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_ns: Option<u128>,
    /// FNV-1a of its bytes, 16 hex digits: side inputs only (a changed subtitle or boxes
    /// file redoes the item even with its size and time kept; a copy of the same bytes does
    /// not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

impl FileFingerprint {
    pub(crate) fn of(path: &Path, with_time: bool) -> Option<FileFingerprint> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileFingerprint {
            path: path.to_path_buf(),
            bytes: meta.len(),
            modified_ns: with_time
                .then(|| {
                    meta.modified()
                        .ok()?
                        .duration_since(std::time::UNIX_EPOCH)
                        .ok()
                        .map(|d| d.as_nanos())
                })
                .flatten(),
            content: None,
        })
    }

    /// A side input: size and content hash.
    pub(crate) fn of_content(path: &Path) -> Option<FileFingerprint> {
        let meta = std::fs::metadata(path).ok()?;
        let hash = crate::call::hash::fnv1a_file(path).ok()?;
        Some(FileFingerprint {
            path: path.to_path_buf(),
            bytes: meta.len(),
            modified_ns: None,
            content: Some(format!("{hash:016x}")),
        })
    }
}

/// The hash that says whether an item must be redone: its plan, normalised with `defaults`,
/// and the run's defaults.
fn normalized_plan_hash(mut normalized: Plan, defaults: &EncodeSettings) -> String {
    // The evidence is carried, not acted on: new scores for the same span redo nothing.
    normalized.evidence = None;
    let text = format!(
        "{}\n{}|{}|{}\n{VERSION}",
        serde_json::to_string(&normalized).expect("a plan serialises"),
        defaults.crf,
        defaults.preset,
        defaults.audio
    );
    format!("{:016x}", fnv1a(text.as_bytes()))
}

/// The fingerprints of a plan's inputs (a folder's files one level down): the source's by
/// size and time (a video is not read whole to be checked), the side inputs' by size and
/// content.
pub(crate) fn input_fingerprints(plan: &Plan) -> Vec<FileFingerprint> {
    input_fingerprints_with(plan, true)
}

/// [`input_fingerprints`]; with `side_by_content` false, every input by size and time (no
/// file is read: what `unchanged` compares within one request).
pub(crate) fn input_fingerprints_with(plan: &Plan, side_by_content: bool) -> Vec<FileFingerprint> {
    let source = crate::media::source::input_paths(&plan.source);
    let mut out = Vec::new();
    for input in plan.inputs() {
        let side = side_by_content && !source.contains(&input);
        let of = |p: &Path| {
            if side {
                FileFingerprint::of_content(p)
            } else {
                FileFingerprint::of(p, true)
            }
        };
        if input.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&input)
                .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
                .unwrap_or_default();
            files.sort();
            out.extend(files.iter().filter(|p| p.is_file()).filter_map(|p| of(p)));
        } else {
            out.extend(of(&input));
            // A GOT-10k groundtruth.txt brings the files read beside it.
            if side && input.file_name().is_some_and(|n| n == "groundtruth.txt") {
                for beside in ["absence.label", "cover.label", "meta_info.ini"] {
                    out.extend(input.parent().and_then(|d| of(&d.join(beside))));
                }
            }
        }
    }
    out
}

impl ItemRecord {
    /// The record of an item whose files are in `folder` (its temporary folder, about to be
    /// renamed to the item folder): every file below it with its size, and the inputs as
    /// they were when the item started (`inputs`). `plan` is normalised with `defaults` (as
    /// [`execute`](crate::execute) runs it).
    pub(crate) fn new(
        plan: &Plan,
        defaults: &EncodeSettings,
        folder: &Path,
        remote: Vec<RemoteFingerprint>,
        inputs: Vec<FileFingerprint>,
    ) -> ItemRecord {
        let mut outputs: Vec<FileFingerprint> = walkdir::WalkDir::new(folder)
            .min_depth(1)
            .into_iter()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_file())
            .filter_map(|e| {
                let rel = e.path().strip_prefix(folder).ok()?.to_path_buf();
                // vidprep's own temporaries (an attempt's scratch file) are never outputs.
                let temporary = e
                    .file_name()
                    .to_string_lossy()
                    .starts_with(crate::call::output::temporaries::TEMP_PREFIX);
                (rel != Path::new("item.json") && !temporary).then(|| FileFingerprint {
                    path: rel,
                    bytes: e.metadata().map(|m| m.len()).unwrap_or(0),
                    modified_ns: None,
                    content: None,
                })
            })
            .collect();
        outputs.sort_by(|a, b| a.path.cmp(&b.path));
        ItemRecord {
            id: plan.id.clone(),
            plan_hash: normalized_plan_hash(plan.clone(), defaults),
            vidprep_version: VERSION.to_string(),
            outputs,
            inputs,
            remote,
        }
    }

    /// Whether the item in `dir`, made from `plan` (normalised with `defaults`), is complete
    /// and current: the same plan, every output present with its recorded size, every input
    /// unchanged (a URL source asked with the call's settings).
    pub(crate) fn is_current(
        dir: &Path,
        plan: &NormalPlan,
        defaults: &EncodeSettings,
        ctx: &CallContext,
    ) -> Option<ItemRecord> {
        let text = std::fs::read_to_string(dir.join("item.json")).ok()?;
        let record: ItemRecord = serde_json::from_str(&text).ok()?;
        if record.id != plan.id
            || record.plan_hash != normalized_plan_hash(Plan::clone(plan), defaults)
            || record.vidprep_version != VERSION
        {
            return None;
        }
        for o in &record.outputs {
            let meta = std::fs::metadata(dir.join(&o.path)).ok()?;
            if !meta.is_file() || meta.len() != o.bytes {
                return None;
            }
        }
        if input_fingerprints(plan) != record.inputs {
            return None;
        }
        if crate::media::source::is_url(&plan.source) {
            // Asked last: the checks above cost no request.
            let [seen] = record.remote.as_slice() else {
                return None;
            };
            if seen.url != plan.source.to_string_lossy() || !seen.validators.identify_a_version() {
                return None;
            }
            let now = crate::call::net::remote::current_validators(&plan.source, ctx).ok()?;
            if now != seen.validators {
                return None;
            }
        }
        Some(record)
    }
}
