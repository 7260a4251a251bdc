//! Human review (`vidprep review`): a run's output folder turned into a static page where a
//! person checks every item and moves decision points frame-exactly, and the page's decisions
//! applied back to the manifest (`decisions.rs`).
//!
//! The page checks against the ViSTR quality criteria; after the decisions are applied,
//! `vidprep run --resume` redoes exactly the changed items.
//!
//! The entries (public: a library feature, not the command line's alone): [`build_review`]
//! makes the page of a run as [`ReviewOptions`] say and sums it up ([`ReviewSummary`]);
//! [`apply_decisions`] applies a page's exported decisions to the manifest ([`Applied`]).
//! `vidprep review` and `vidprep review-apply` are thin doors over them.
//!
//! The page needs media the run did not make: a small every-frame preview of each item's
//! whole span (before its decision point cut it) to show the frame at any point, and
//! thumbnails for its timeline. Those are plans like any other (the item's source, span and
//! boxes; a `preview` and a `frames` export) run by the one batch runner into
//! `PAGE_DIR/media/`, resumable, so building the page again only redoes changed items.
//! Everything else is read from the run's sidecars. The page itself is static files
//! (`page.rs`): `index.html`, `assets/`, and `data/` (scripts, since a page opened from
//! `file://` may not fetch files), one small index and one lazily loaded file per item.

pub(crate) mod decisions;
mod page;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::batch::manifest::ManifestItem;
use crate::batch::{run_batch, BatchOptions, Observer, Status};
use crate::call::context::CallContext;
use crate::call::output::group::OutputGroup;
use crate::error::{Error, Result};
use crate::exec::ExecOptions;
use crate::plan::{BoxOptions, ExportSpec, FramesExport, Plan, PreviewExport, Size};

pub use decisions::{apply_decisions, Applied};
pub(crate) use page::CRITERIA;

/// What `vidprep review` is asked to do.
#[derive(Clone, Debug)]
pub struct ReviewOptions {
    /// The run's output folder (`vidprep run --out-dir`).
    pub run_dir: PathBuf,
    /// Where the page goes (default `RUN_DIR/review/`).
    pub page_dir: Option<PathBuf>,
    /// The manifest of the run: its plans are used for the previews (its relative paths are
    /// read from its folder) and its items not in the run are listed as missing.
    pub manifest: Option<PathBuf>,
    /// Preview items made at a time (0: one per core).
    pub jobs: usize,
    /// Thumbnails on each item's timeline.
    pub thumbs: usize,
    /// Largest preview size.
    pub preview_size: Size,
    /// Without a manifest, use the plans the sidecars record even where they name a URL or a
    /// file outside the run folder (`--trust-sidecars`). Off: a folder someone sent you is
    /// reviewed without fetching, or reading outside it, what only its sidecars name; those
    /// items get no preview (a warning says why).
    pub trust_sidecars: bool,
}

/// What a review build made.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ReviewSummary {
    /// The page to open.
    pub page: PathBuf,
    /// Items on the page.
    pub items: usize,
    /// Items whose run outputs are there.
    pub ok: usize,
    /// Items that failed in the run or are missing from it.
    pub failed: usize,
    /// Previews made now.
    pub previews_made: usize,
    /// Previews kept from an earlier build (the item had not changed).
    pub previews_kept: usize,
    /// Previews that could not be made (the page shows why).
    pub previews_failed: usize,
    /// Things worth a look (a preview that failed, an item folder without sidecars).
    pub warnings: Vec<String>,
}

/// One item as the page will list it, before its media are read.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    pub id: String,
    pub line: usize,
    /// The item's folder in the run, when it has one.
    pub dir: Option<PathBuf>,
    /// The last report's error, when the run failed it.
    pub error: Option<String>,
    /// The plan: from the manifest, else from a sidecar's `request`.
    pub plan: Option<Plan>,
    /// Whether `plan` came from the item's sidecars (not from a manifest).
    pub from_sidecars: bool,
}

/// Why a plan read from a run folder's sidecars may not be run as it is: it names a URL, or
/// a local file outside `run_dir` (its source, boxes or needle), which only the sidecars
/// vouch for. `None` when everything it reads lies inside the folder.
fn outside_reason(plan: &Plan, run_dir: &Path) -> Option<String> {
    let root = std::fs::canonicalize(run_dir).unwrap_or_else(|_| run_dir.to_path_buf());
    if crate::media::source::has_scheme(&plan.source) {
        return Some(format!(
            "its sidecars name the URL {}",
            plan.source.display()
        ));
    }
    for path in plan.inputs() {
        let absolute = if path.is_absolute() {
            path.clone()
        } else {
            std::env::current_dir().unwrap_or_default().join(&path)
        };
        let resolved = std::fs::canonicalize(&absolute).unwrap_or(absolute);
        if !resolved.starts_with(&root) {
            return Some(format!(
                "its sidecars name {}, outside the run folder {}",
                path.display(),
                run_dir.display()
            ));
        }
    }
    None
}

/// Builds the review page of `options.run_dir`.
pub fn build_review(
    options: &ReviewOptions,
    observer: &dyn Observer,
    ctx: &CallContext,
) -> Result<ReviewSummary> {
    let run_dir = &options.run_dir;
    if !run_dir.is_dir() {
        return Err(Error::Usage(format!(
            "{}: not a folder (expected the --out-dir of a `vidprep run`)",
            run_dir.display()
        )));
    }
    if options.thumbs == 0 || options.thumbs > 200 {
        return Err(Error::Usage(format!(
            "{} thumbnails per item: expected 1..200",
            options.thumbs
        )));
    }
    // A run writing into the folder would leave half-made items on the page: refuse while
    // one holds the folder's lock (and keep a run from starting while the page is made).
    // A folder that cannot take the lock file (read-only: a run could not write it either)
    // is reviewed without one.
    let _lock = match crate::batch::OutDirLock::acquire(run_dir, None, None, &|_| {}, ctx) {
        Ok(lock) => Some(lock),
        Err(Error::Usage(m)) => {
            return Err(Error::Usage(format!(
                "cannot review it now: {m} (review it once the run has finished)"
            )))
        }
        Err(_) => None,
    };
    let page_dir = options
        .page_dir
        .clone()
        .unwrap_or_else(|| run_dir.join("review"));
    check_page_dir(&page_dir, run_dir)?;
    let manifest = match &options.manifest {
        Some(m) => {
            let read = crate::batch::manifest::read_manifest(m)?;
            Some(read)
        }
        None => None,
    };
    let mut found = find_items(run_dir, &page_dir, manifest.as_ref().map(|m| &m.items[..]))?;
    let mut untrusted = HashMap::new();
    if !options.trust_sidecars {
        for f in found.iter_mut().filter(|f| f.from_sidecars) {
            if let Some(why) = f.plan.as_ref().and_then(|p| outside_reason(p, run_dir)) {
                f.plan = None;
                untrusted.insert(f.id.clone(), why);
            }
        }
    }
    if found.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no items (no item folders with item.json, no report.jsonl); expected the --out-dir of a `vidprep run`",
            run_dir.display()
        )));
    }
    // Claim the page's own files first: nothing is made when the page could not be written.
    let mut inputs: Vec<PathBuf> = found.iter().filter_map(|f| f.dir.clone()).collect();
    inputs.extend(options.manifest.clone());
    let mut group = OutputGroup::new(&inputs, ctx);
    let index_html = group.file(&page_dir.join("index.html"))?;
    let assets = group.folder(&page_dir.join("assets"))?;
    let data = group.folder(&page_dir.join("data"))?;

    let media_dir = page_dir.join("media");
    let mut warnings = Vec::new();
    let mut previews = make_previews(
        &mut found,
        options,
        &media_dir,
        observer,
        &mut warnings,
        ctx,
    )?;
    let mut untrusted: Vec<(String, String)> = untrusted.into_iter().collect();
    untrusted.sort();
    for (id, why) in untrusted {
        let why = format!(
            "{why}; nothing was read there (a run folder's sidecars are not trusted): review \
             with --manifest M, or pass --trust-sidecars if you trust this folder"
        );
        warnings.push(format!("{id}: no preview: {why}"));
        previews.errors.insert(id, why);
    }
    let built = page::assemble(
        &found,
        &page_dir,
        &media_dir,
        &previews,
        options,
        &mut warnings,
    )?;
    page::write_assets(&index_html, &assets)?;
    page::write_data(&data, &built)?;
    group.commit()?;
    // The new page is in place: the previews no page names go.
    let keep: HashSet<String> = previews.folders.values().cloned().collect();
    remove_unused_media(&media_dir, &keep, &mut warnings);
    let failed = found.iter().filter(|f| f.dir.is_none()).count();
    Ok(ReviewSummary {
        page: page_dir.join("index.html"),
        items: found.len(),
        ok: found.len() - failed,
        failed,
        previews_made: previews.made,
        previews_kept: previews.kept,
        previews_failed: previews.errors.len(),
        warnings,
    })
}

/// The page folder must be new, empty, or an earlier review page; never an item's folder.
fn check_page_dir(page_dir: &Path, run_dir: &Path) -> Result<()> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if canon(page_dir) == canon(run_dir) {
        return Err(Error::Usage(format!(
            "the review page cannot be the run folder {} itself; give -o a folder inside or beside it",
            run_dir.display()
        )));
    }
    if page_dir.join("item.json").exists() {
        return Err(Error::Usage(format!(
            "{} is an item's folder of the run (it holds item.json); give the page another folder with -o",
            page_dir.display()
        )));
    }
    if page_dir.is_dir() {
        let foreign = foreign_page_files(page_dir);
        if !foreign.is_empty() {
            return Err(Error::Usage(format!(
                "{} holds files vidprep did not write ({}; it is not an earlier review page); give an empty or new folder with -o",
                page_dir.display(),
                crate::call::output::ownership::some_of(&foreign)
            )));
        }
    } else if page_dir.exists() {
        return Err(Error::Usage(format!(
            "{} exists and is not a folder",
            page_dir.display()
        )));
    }
    Ok(())
}

/// What in a page folder vidprep did not write: anything but `index.html`, `assets/` and
/// `data/` (each checked by content when it is replaced), vidprep's temporaries, and
/// `media/` as a batch writes it (reports, locks, temporaries, item folders that their
/// `item.json` proves). A review interrupted before its page was written (only `media/`
/// there) is taken up again.
fn foreign_page_files(page_dir: &Path) -> Vec<PathBuf> {
    use crate::call::output::temporaries::TEMP_PREFIX;
    let names = |dir: &Path| -> Vec<(String, PathBuf)> {
        std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut foreign = Vec::new();
    for (name, path) in names(page_dir) {
        match name.as_str() {
            "index.html" | "assets" | "data" => {}
            "media" if path.is_dir() => {
                for (n, p) in names(&path) {
                    let ours = n.starts_with(TEMP_PREFIX)
                        || n.starts_with(".vidprep-lock")
                        || (n.starts_with("report") && n.ends_with(".jsonl") && p.is_file())
                        || (p.join("item.json").is_file()
                            && crate::call::output::ownership::foreign_files(&p).is_empty());
                    if !ours {
                        foreign.push(PathBuf::from("media").join(n));
                    }
                }
            }
            n if n.starts_with(TEMP_PREFIX) => {}
            _ => foreign.push(PathBuf::from(name)),
        }
    }
    foreign.sort();
    foreign
}

/// One report line, as much as the page needs.
#[derive(serde::Deserialize)]
struct ReportLine {
    id: Option<String>,
    #[serde(default)]
    line: usize,
    status: Status,
    #[serde(default)]
    error: Option<String>,
}

/// The items of a run: its item folders, the items its reports name, and (with a manifest)
/// the manifest's items, in manifest order (then report order, then by id).
fn find_items(
    run_dir: &Path,
    page_dir: &Path,
    manifest: Option<&[ManifestItem]>,
) -> Result<Vec<Found>> {
    let mut by_id: HashMap<String, Found> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let note = |id: &str, order: &mut Vec<String>, by_id: &mut HashMap<String, Found>| {
        if !by_id.contains_key(id) {
            order.push(id.to_string());
            by_id.insert(
                id.to_string(),
                Found {
                    id: id.to_string(),
                    line: 0,
                    dir: None,
                    error: None,
                    plan: None,
                    from_sidecars: false,
                },
            );
        }
    };
    if let Some(items) = manifest {
        for item in items {
            note(&item.plan.id, &mut order, &mut by_id);
            let f = by_id.get_mut(&item.plan.id).expect("noted");
            f.line = item.line;
            f.plan = Some(item.plan.plan().clone());
        }
    }
    // Reports: report.jsonl and shard reports, in name order.
    let mut reports: Vec<PathBuf> = std::fs::read_dir(run_dir)
        .map_err(|e| Error::read(run_dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    n.starts_with("report") && n.ends_with(".jsonl")
                })
        })
        .collect();
    reports.sort();
    for report in &reports {
        let text = std::fs::read_to_string(report).map_err(|e| Error::read(report, e))?;
        for (i, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let r: ReportLine = serde_json::from_str(raw).map_err(|e| {
                Error::bad_file(
                    report,
                    Some(i + 1),
                    format!("not a vidprep report line: {e}"),
                )
            })?;
            let Some(id) = r.id else { continue };
            note(&id, &mut order, &mut by_id);
            let f = by_id.get_mut(&id).expect("noted");
            if f.line == 0 {
                f.line = r.line;
            }
            f.error = match r.status {
                Status::Failed => r.error.or(Some("failed".into())),
                Status::NotRun => Some("not run (the run stopped before it)".into()),
                Status::Ok | Status::Skipped => None,
            };
        }
    }
    // Item folders.
    let page_key = std::fs::canonicalize(page_dir).ok();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(run_dir)
        .map_err(|e| Error::read(run_dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("item.json").is_file())
        .filter(|p| page_key.is_none() || std::fs::canonicalize(p).ok() != page_key)
        .collect();
    dirs.sort();
    for dir in dirs {
        let id = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        note(&id, &mut order, &mut by_id);
        let f = by_id.get_mut(&id).expect("noted");
        f.dir = Some(dir);
    }
    let mut found: Vec<Found> = order
        .into_iter()
        .map(|id| by_id.remove(&id).expect("noted"))
        .collect();
    for f in &mut found {
        if f.dir.is_none() && f.error.is_none() {
            f.error = Some(format!(
                "no outputs in {} (not run yet?)",
                run_dir.display()
            ));
        }
        if f.plan.is_none() {
            if let Some(dir) = &f.dir {
                f.plan = plan_from_sidecars(dir);
                f.from_sidecars = f.plan.is_some();
            }
        }
    }
    found.sort_by_key(|f| (f.line == 0, f.line));
    Ok(found)
}

/// The plan an item was made from, as its sidecars record it (the normalised plan; relative
/// paths are as the run saw them, from its working folder).
fn plan_from_sidecars(dir: &Path) -> Option<Plan> {
    for sidecar in page::sidecars_of(dir) {
        let Ok(text) = std::fs::read_to_string(&sidecar) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if let Some(request) = v.get("request") {
            if let Ok(plan) = serde_json::from_value::<Plan>(request.clone()) {
                return Some(plan);
            }
        }
    }
    None
}

/// How the previews went.
#[derive(Debug, Default)]
pub(crate) struct Previews {
    pub made: usize,
    pub kept: usize,
    /// Why an item's preview could not be made.
    pub errors: HashMap<String, String>,
    /// Each item's folder in `media/` ([`media_folder`]), by item id.
    pub folders: HashMap<String, String>,
}

impl Previews {
    /// The folder in `media/` that holds the preview of item `id`.
    pub(crate) fn folder<'a>(&'a self, id: &'a str) -> &'a str {
        self.folders.get(id).map(String::as_str).unwrap_or(id)
    }
}

/// The folder in `media/` of a preview plan: the item's id and a hash of the plan (its
/// source, span, boxes, sizes), so a page's media are never changed in place. A build that
/// makes new previews writes them beside the ones the current page shows, and only once the
/// new page is in place are the folders no page names removed: a build interrupted at any
/// point leaves the earlier page whole, with its own previews and thumbnails.
pub(crate) fn media_folder(id: &str, preview: &Plan) -> String {
    let text = serde_json::to_string(preview).expect("a plan serialises");
    let hash = crate::call::hash::fnv1a(text.as_bytes());
    // An id may be 200 bytes; the folder's name keeps room for the hash.
    let mut end = id.len().min(160);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}.{hash:016x}", &id[..end])
}

/// Removes the folders of `media_dir` that the page just written does not name (`keep`):
/// earlier builds' previews, each removed by its own record only (a folder holding a file
/// vidprep did not write stays, and a warning says so).
fn remove_unused_media(media_dir: &Path, keep: &HashSet<String>, warnings: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(media_dir) else {
        return;
    };
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        if keep.contains(&name)
            || name.starts_with(crate::call::output::temporaries::TEMP_PREFIX)
            || !path.is_dir()
            || !path.join("item.json").is_file()
        {
            continue;
        }
        if let Err(err) = crate::call::output::ownership::remove_owned(&path) {
            warnings.push(format!(
                "{}: an earlier build's preview was left in place: {err}",
                path.display()
            ));
        }
    }
}

/// The preview plan of an item: its source, span and boxes (always drawn), no decision point
/// and no needle, exported as a preview and timeline thumbnails.
pub(crate) fn preview_plan(plan: &Plan, thumbs: usize, size: Size) -> Plan {
    let mut p = plan.normalized(&crate::vocab::EncodeSettings::default());
    p.decision = None;
    p.insert = None;
    p.evidence = None;
    p.strict = false;
    if let Some(b) = p.boxes.as_mut() {
        let mut o = b.options.clone().unwrap_or_else(BoxOptions::default);
        o.draw = true;
        b.options = Some(o);
    }
    p.exports = vec![
        ExportSpec::Preview(PreviewExport {
            max_size: size,
            ..PreviewExport::default()
        }),
        ExportSpec::Frames(FramesExport {
            name: Some("thumbs".into()),
            count: Some(thumbs),
            max_size: Some(Size(160, 90)),
            quality: 75,
            ..FramesExport::default()
        }),
    ];
    p
}

/// Runs the preview plans of every item with a folder through the batch runner.
fn make_previews(
    found: &mut [Found],
    options: &ReviewOptions,
    media_dir: &Path,
    observer: &dyn Observer,
    warnings: &mut Vec<String>,
    ctx: &CallContext,
) -> Result<Previews> {
    let mut plans = Vec::new();
    let mut by_folder = HashMap::new();
    for f in found.iter() {
        let (Some(dir), Some(plan)) = (&f.dir, &f.plan) else {
            continue;
        };
        let span_frames = page::span_frames(dir).unwrap_or(options.thumbs);
        let thumbs = options.thumbs.min(span_frames.max(1));
        let mut preview = preview_plan(plan, thumbs, options.preview_size);
        let folder = media_folder(&f.id, &preview);
        by_folder.insert(folder.clone(), f.id.clone());
        preview.id = folder;
        plans.push((f.line, preview));
    }
    let mut previews = Previews {
        folders: by_folder
            .iter()
            .map(|(folder, id)| (id.clone(), folder.clone()))
            .collect(),
        ..Previews::default()
    };
    if plans.is_empty() {
        return Ok(previews);
    }
    let (items, bad) = ManifestItem::check_all_in(plans, ctx);
    let exec = ExecOptions {
        cancel: ctx.cancel.clone(),
        settings: ctx.settings.clone(),
        tally: ctx.tally.clone(),
        ..ExecOptions::default()
    };
    let batch = BatchOptions {
        out_dir: media_dir.to_path_buf(),
        jobs: options.jobs,
        shard: None,
        resume: true,
        fail_fast: false,
        codec_threads: None,
        exec,
        origin: options.manifest.clone(),
    };
    let (_, reports) = run_batch(&items, &bad, &batch, observer)?;
    for r in reports {
        let folder = r.id.clone().unwrap_or_default();
        let id = by_folder.get(&folder).cloned().unwrap_or(folder);
        match r.status {
            Status::Ok => previews.made += 1,
            Status::Skipped => previews.kept += 1,
            Status::Failed | Status::NotRun => {
                let why = r.error.unwrap_or_else(|| "not made".into());
                warnings.push(format!("{id}: no preview: {why}"));
                previews.errors.insert(id, why);
            }
        }
    }
    Ok(previews)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preview_plan_keeps_the_span_and_boxes_and_drops_the_decision_and_needle() {
        let plan: Plan = serde_json::from_str(
            r#"{"id": "q1", "source": "v.mp4", "start": "1s", "end": 90,
                "decision": "75%", "boxes": {"path": "gt.txt", "draw": false},
                "insert": {"sequence": "seq", "seed": 3},
                "exports": [{"kind": "clip"}, {"kind": "video"}]}"#,
        )
        .unwrap();
        let p = preview_plan(&plan, 12, Size(480, 270));
        assert_eq!(p.id, "q1");
        // Its media folder changes with the span and the thumbnails, never in place.
        let folder = media_folder("q1", &p);
        assert!(
            folder.starts_with("q1.") && folder.len() == 3 + 16,
            "{folder}"
        );
        assert_eq!(folder, media_folder("q1", &p.clone()));
        assert_ne!(
            folder,
            media_folder("q1", &preview_plan(&plan, 11, Size(480, 270)))
        );
        let long = "é".repeat(100);
        assert!(media_folder(&long, &p).len() <= 160 + 17);
        assert_eq!(p.span(), plan.span());
        assert!(p.decision.is_none() && p.insert.is_none());
        assert!(p.boxes.is_some() && p.box_options().draw, "boxes are drawn");
        assert_eq!(p.exports.len(), 2);
        assert_eq!(p.exports[0].kind(), "preview");
        assert_eq!(p.exports[1].name(), "thumbs");
        p.check().unwrap();
    }
}
