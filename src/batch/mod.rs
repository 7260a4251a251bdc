//! The one batch runner, for every door that runs many plans (`run`, `cut --manifest`,
//! `insert --hosts`): manifests read line by line ([`manifest`]), a bounded pool of isolated
//! items, resume, shards for cluster job arrays, one report, and a lock on the output folder.
//!
//! An error or even a panic fails that item and never the batch; resume checks outputs and
//! inputs; two runs never share an output folder.
//!
//! Layout: `OUT_DIR/<id>/...` per item (replaced as a whole when the item is made), with
//! `OUT_DIR/<id>/item.json` saying what was made from what; `OUT_DIR/report.jsonl`
//! (`report.shard-I-of-N.jsonl` for a shard), one line per item.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::batch::manifest::{BadItem, Manifest, ManifestItem};
use crate::call::context::CallContext;
use crate::call::output::group::canonical;
use crate::error::{Error, Result};
use crate::exec::{execute_normal, Destination, ExecOptions};
use crate::frames::pipeline::Progress;
use crate::records::item_json::ItemRecord;

mod lock;
pub mod manifest;
pub(crate) use lock::OutDirLock;

/// How a batch runs.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BatchOptions {
    /// The output folder: `OUT_DIR/<id>/` per item, the report at its top. Created when
    /// missing; locked for the run.
    pub out_dir: PathBuf,
    /// Items at a time (0: one per core). Capped at the item count and 64.
    pub jobs: usize,
    /// Run only shard `I` of `N` (0-based): the items whose id hashes to `I` modulo `N`.
    pub shard: Option<(usize, usize)>,
    /// Skip items whose `item.json` says they are complete and current.
    pub resume: bool,
    /// Start no new item after the first failure.
    pub fail_fast: bool,
    /// Codec threads per item (default: the cores divided among the jobs).
    pub codec_threads: Option<usize>,
    /// Encoding defaults.
    pub exec: ExecOptions,
    /// The manifest (or what the items came from), for error messages and layout checks.
    pub origin: Option<PathBuf>,
}

impl BatchOptions {
    /// A batch into `out_dir` with the defaults: a worker per core (`jobs` 0), every item (no
    /// shard), nothing resumed, no stop at the first failure, decoder threads divided among
    /// the jobs, [`ExecOptions::default`], no manifest named. Set the other fields after.
    pub fn new(out_dir: impl Into<PathBuf>) -> BatchOptions {
        BatchOptions {
            out_dir: out_dir.into(),
            jobs: 0,
            shard: None,
            resume: false,
            fail_fast: false,
            codec_threads: None,
            exec: ExecOptions::default(),
            origin: None,
        }
    }
}

/// What a batch did.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Summary {
    /// Report lines written: items of this shard plus manifest entries that could not be
    /// read.
    pub items: usize,
    /// Items made.
    pub ok: usize,
    /// Items that failed, manifest errors included.
    pub failed: usize,
    /// Items left as they were because they were complete and current (`resume`).
    pub skipped: usize,
    /// Items not started because `fail_fast` stopped the run.
    pub not_run: usize,
    /// Frames of the processed streams over all items, each counted once (a re-encode of a
    /// capped video decodes them again but does not count them again).
    pub frames: u64,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// The report file written (`OUT_DIR/report.jsonl` or its shard's name).
    pub report: PathBuf,
    /// The shard run, as `I/N`; `None` (JSON `null`) for a whole run.
    pub shard: Option<String>,
}

/// Watches a batch (the command line draws progress from these; the library draws nothing).
pub trait Observer: Sync {
    /// Called once, before work starts, with the item count and the manifest's problems.
    fn planned(&self, _items: usize, _bad: &[ItemReport]) {}
    /// Called from a worker thread when an item starts being made (not for skipped items).
    fn item_started(&self, _id: &str) {}
    /// Called from worker threads as items decode: `n` more frames (of any item) are done.
    fn frames(&self, _n: u64) {}
    /// Called from a worker thread once per item of the shard, whatever its status, with its
    /// report line (manifest errors come through [`Observer::planned`] instead).
    fn item_done(&self, _report: &ItemReport) {}
    /// Called before work starts when the run waits for something (another host's lock
    /// whose lease is not over), with what and for how long at most.
    fn notice(&self, _message: &str) {}
}

/// An observer that ignores everything.
pub struct Quiet;

impl Observer for Quiet {}

pub use crate::batch::manifest::shard_of;
pub use crate::records::report::{ItemReport, Status};

/// Parses `I/N` (0-based shard `I` of `N`).
pub fn parse_shard(text: &str) -> std::result::Result<(usize, usize), String> {
    let (i, n) = text
        .split_once('/')
        .ok_or_else(|| format!("expected I/N such as 3/8, found {text:?}"))?;
    let i: usize = i
        .trim()
        .parse()
        .map_err(|_| format!("bad shard index in {text:?}"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("bad shard count in {text:?}"))?;
    if n == 0 || i >= n {
        return Err(format!(
            "shard {i}/{n}: the index must be below the count (0-based: 0/{n} .. {}/{n})",
            n.max(1) - 1
        ));
    }
    Ok((i, n))
}

/// The report file of a run.
pub(crate) fn report_name(shard: Option<(usize, usize)>) -> String {
    match shard {
        None => "report.jsonl".to_string(),
        Some((i, n)) => format!("report.shard-{i}-of-{n}.jsonl"),
    }
}

/// Runs `items` (with `bad` entries reported as failed). Fails as a whole only for bad usage:
/// an output folder layout that would overwrite inputs, or a folder another run holds.
pub fn run_batch(
    items: &[ManifestItem],
    bad: &[BadItem],
    options: &BatchOptions,
    observer: &dyn Observer,
) -> Result<(Summary, Vec<ItemReport>)> {
    run_batch_beside(items, bad, &|_| false, options, observer)
}

/// Runs a manifest read with [`read_manifest_shard_in`](crate::batch::manifest::read_manifest_shard_in)
/// as [`run_batch`] runs the whole manifest's items: the same items, report and checks (the
/// other shards' items count as writing their folders,
/// [`Elsewhere::writes`](crate::batch::manifest::Elsewhere::writes)). A manifest read
/// for one shard runs as that shard only (`options.shard` must be it or `None`).
pub fn run_manifest(
    manifest: &Manifest,
    options: &BatchOptions,
    observer: &dyn Observer,
) -> Result<(Summary, Vec<ItemReport>)> {
    let mut options = options.clone();
    match (manifest.shard, options.shard) {
        (Some(read), Some(run)) if read != run => {
            return Err(Error::internal(format!(
                "the manifest was read for shard {}/{} but is run as shard {}/{}",
                read.0, read.1, run.0, run.1
            )))
        }
        (Some(read), _) => options.shard = Some(read),
        (None, _) => {}
    }
    run_batch_beside(
        &manifest.items,
        &manifest.bad,
        &|id| manifest.elsewhere.writes(id),
        &options,
        observer,
    )
}

/// [`run_batch`] with the items of other shards, read as ids only: `elsewhere(id)` says
/// whether such an item writes `OUT_DIR/<id>/`.
fn run_batch_beside(
    items: &[ManifestItem],
    bad: &[BadItem],
    elsewhere: &dyn Fn(&str) -> bool,
    options: &BatchOptions,
    observer: &dyn Observer,
) -> Result<(Summary, Vec<ItemReport>)> {
    let started = Instant::now();
    options.exec.defaults.validate()?;
    crate::error::require_utf8(&options.out_dir, "the output folder (--out-dir)")?;
    let in_shard = |id: Option<&str>, line: usize| match options.shard {
        None => true,
        Some((i, n)) => match id {
            Some(id) => shard_of(id, n) == i,
            None => line % n == i,
        },
    };
    let mut reports: Vec<ItemReport> = bad
        .iter()
        .filter(|b| in_shard(b.id.as_deref(), b.line))
        .map(bad_report)
        .collect();
    // Every item of the manifest writes its folder, this shard's or another's.
    let ids: HashSet<&str> = items.iter().map(|i| i.plan.id.as_str()).collect();
    let written = |id: &str| ids.contains(id) || elsewhere(id);
    let items: Vec<&ManifestItem> = items
        .iter()
        .filter(|i| in_shard(Some(&i.plan.id), i.line))
        .collect();
    // The run's one context: every item, worker and commit of it works for this call.
    let mut call = options.exec.context();
    check_layout(&items, &written, options)?;
    make_out_dir(&options.out_dir, observer)?;
    let lock = OutDirLock::acquire(
        &options.out_dir,
        options.shard,
        options.origin.as_deref(),
        &|m: &str| observer.notice(m),
        &call,
    )?;
    // Every commit of the run (each item's, the report's) first checks the lock is its own.
    call.held = Some(lock.held());
    clean_stale_temporaries(&options.out_dir, &items);
    observer.planned(items.len(), &reports);

    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let jobs = if options.jobs == 0 {
        cores
    } else {
        options.jobs
    }
    .clamp(1, items.len().clamp(1, 64));
    let threads = options
        .codec_threads
        .unwrap_or((cores / jobs).max(1))
        .clamp(1, 256);
    let exec = ExecOptions {
        threads,
        ..options.exec.clone()
    };
    let stop = AtomicBool::new(false);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| Error::internal(format!("cannot start {jobs} workers: {e}")))?;
    let origin = options
        .origin
        .as_ref()
        .map(|p| format!("{} ", p.display()))
        .unwrap_or_default();
    let done: Vec<ItemReport> = pool.install(|| {
        items
            .par_iter()
            .map(|item| {
                let ctx = ItemContext {
                    options,
                    exec: &exec,
                    call: &call,
                    lost: &|| lock.lost(),
                    stop: &stop,
                    origin: &origin,
                    observer,
                };
                make_item(item, &ctx)
            })
            .collect()
    });
    reports.extend(done);
    let report_path = write_report_in(&options.out_dir, options.shard, &mut reports, &call)?;
    let count = |s: Status| reports.iter().filter(|r| r.status == s).count();
    let summary = Summary {
        items: reports.len(),
        ok: count(Status::Ok),
        failed: count(Status::Failed),
        skipped: count(Status::Skipped),
        not_run: count(Status::NotRun),
        // The items' own counts: a capped video that re-encodes decodes its frames again, but
        // they are the same frames of the same item.
        frames: reports.iter().map(|r| r.frames as u64).sum(),
        seconds: started.elapsed().as_secs_f64(),
        report: report_path,
        shard: options.shard.map(|(i, n)| format!("{i}/{n}")),
    };
    Ok((summary, reports))
}

/// Makes the run's output folder. The folder itself is what `--out-dir` asks for; folders
/// above it that are missing too are made as well (as every output's are), never silently.
/// A warning is kept for what looks like a mistyped parent (`/mnt/shraed/out` beside
/// `/mnt/shared`, or several missing levels), which would otherwise put a whole run where
/// nobody looks; one new folder above (`out` of `out/example`) is only named.
fn make_out_dir(out_dir: &Path, observer: &dyn Observer) -> Result<()> {
    if out_dir.is_dir() {
        return Ok(());
    }
    let mut missing_above = Vec::new();
    let mut d = out_dir.parent();
    while let Some(p) = d.filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
        missing_above.push(p.to_path_buf());
        d = p.parent();
    }
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    missing_above.reverse();
    let Some(top) = missing_above.first() else {
        return Ok(());
    };
    let names = missing_above
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let near = near_sibling(top);
    if missing_above.len() == 1 && near.is_none() {
        observer.notice(&format!(
            "created the folder {names} for the output folder {}",
            out_dir.display()
        ));
        return Ok(());
    }
    observer.notice(&format!(
        "warning: created the missing folder{} {names} above the output folder {}{} (check the \
         path if that was not meant)",
        if missing_above.len() == 1 { "" } else { "s" },
        out_dir.display(),
        near.map(|n| format!("; {} exists", n.display()))
            .unwrap_or_default()
    ));
    Ok(())
}

/// A folder beside `dir` (which did not exist) whose name is one or two typing slips from
/// its name (a letter changed, added, dropped or two swapped; one slip for names of up to 4
/// characters, case ignored): what a mistyped path was probably meant to be.
fn near_sibling(dir: &Path) -> Option<PathBuf> {
    let name = dir.file_name()?.to_str()?.to_lowercase();
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let allowed = if name.chars().count() <= 4 { 1 } else { 2 };
    let mut found: Vec<PathBuf> = std::fs::read_dir(&parent)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            e.file_name().to_str().is_some_and(|other| {
                let other = other.to_lowercase();
                other != name
                    && other.chars().count().abs_diff(name.chars().count()) <= allowed
                    && typing_distance(&name, &other) <= allowed
            })
        })
        .map(|e| dir.with_file_name(e.file_name()))
        .collect();
    found.sort();
    found.into_iter().next()
}

/// Edits (a character changed, added or dropped, or two neighbours swapped) from `a` to `b`
/// (optimal string alignment distance).
fn typing_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// What [`make_item`] needs of the run it belongs to.
struct ItemContext<'a> {
    options: &'a BatchOptions,
    /// The options every item runs with (codec threads set).
    exec: &'a ExecOptions,
    /// The run's context (made from `exec`): every item works for this call.
    call: &'a CallContext,
    /// Whether the run's lock was taken over (start nothing then).
    lost: &'a dyn Fn() -> bool,
    /// Set after a failure (for `fail_fast`).
    stop: &'a AtomicBool,
    /// The manifest's name and a space, or nothing: the start of error messages.
    origin: &'a str,
    observer: &'a dyn Observer,
}

/// Makes one item into `OUT_DIR/<id>/` (or skips it when resuming finds it current) and
/// says how it ended: the body of every batch, and of [`run_item`].
fn make_item(item: &ManifestItem, ctx: &ItemContext<'_>) -> ItemReport {
    let plan = &item.plan;
    let dir = ctx.options.out_dir.join(&plan.id);
    let mut report = ItemReport {
        id: Some(plan.id.clone()),
        line: item.line,
        status: Status::NotRun,
        outputs: Vec::new(),
        error: None,
        error_kind: None,
        seconds: 0.0,
        frames: 0,
        damage: None,
        warnings: Vec::new(),
    };
    if ctx.call.cancelled() {
        report.error = Some("not started: the run was interrupted".into());
        ctx.observer.item_done(&report);
        return report;
    }
    if ctx.options.fail_fast && ctx.stop.load(Ordering::SeqCst) {
        report.error = Some("not started: the run stopped after a failure (fail-fast)".into());
        ctx.observer.item_done(&report);
        return report;
    }
    if (ctx.lost)() {
        report.error = Some(format!(
            "not started: another run took over {} (this run did not renew its lease in time)",
            ctx.options.out_dir.display()
        ));
        ctx.observer.item_done(&report);
        return report;
    }
    let t0 = Instant::now();
    // Checked when the item was made (`ManifestItem`); normalised here, once, for the resume
    // check and the run.
    let normal = item.plan.normal(&ctx.exec.defaults, ctx.call);
    if ctx.options.resume {
        if let Some(record) = ItemRecord::is_current(&dir, &normal, &ctx.exec.defaults, ctx.call) {
            report.status = Status::Skipped;
            report.outputs = record
                .outputs
                .iter()
                .map(|o| dir.join(&o.path).display().to_string())
                .collect();
            ctx.observer.item_done(&report);
            return report;
        }
    }
    ctx.observer.item_started(&plan.id);
    let mut counter = FrameCounter {
        observer: ctx.observer,
        count: 0,
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        #[cfg(feature = "fault-injection")]
        inject_fault(&plan.id, &ctx.exec.settings);
        execute_normal(
            &normal,
            &Destination::Folder(dir.clone()),
            ctx.exec,
            &mut counter,
            ctx.call,
        )
    }))
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        Err(Error::internal(format!(
            "a panic while making this item: {what}"
        )))
    });
    match result {
        Ok(outcome) => {
            report.status = Status::Ok;
            report.outputs = outcome
                .files
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            report.frames = outcome.frames;
            report.damage = outcome.damage;
            report.warnings = outcome.warnings;
        }
        Err(e) => {
            report.status = Status::Failed;
            report.error_kind = Some(e.kind());
            report.error = Some(format!(
                "{}line {} (id {}): {e}",
                ctx.origin, item.line, plan.id
            ));
            report.frames = counter.count as usize;
            ctx.stop.store(true, Ordering::SeqCst);
        }
    }
    report.seconds = t0.elapsed().as_secs_f64();
    ctx.observer.item_done(&report);
    report
}

/// The report line of a manifest entry that cannot run.
fn bad_report(b: &BadItem) -> ItemReport {
    ItemReport {
        id: b.id.clone(),
        line: b.line,
        status: Status::Failed,
        outputs: Vec::new(),
        error: Some(b.error.to_string()),
        error_kind: Some(b.error.kind()),
        seconds: 0.0,
        frames: 0,
        damage: None,
        warnings: Vec::new(),
    }
}

/// The report lines of the manifest entries that cannot run (for a driver that runs the
/// others with [`run_item`] and writes the report itself with [`write_report`]).
pub fn bad_reports(bad: &[BadItem]) -> Vec<ItemReport> {
    bad.iter().map(bad_report).collect()
}

/// The advisory lock file beside a run's report, under which every writer of the report
/// updates it (see [`crate::call::output::FileLock`]).
fn report_lock_name(shard: Option<(usize, usize)>) -> String {
    format!(".vidprep-{}.lock", report_name(shard))
}

/// Writes `reports`, sorted by manifest line, as the report of a run into `out_dir`
/// (`report.jsonl`, or the shard's name), whole and atomically, replacing the one there (the
/// run held the whole folder or shard); returns its path. Writers of one report take turns
/// under its advisory lock.
pub fn write_report(
    out_dir: &Path,
    shard: Option<(usize, usize)>,
    reports: &mut [ItemReport],
) -> Result<PathBuf> {
    write_report_in(out_dir, shard, reports, &CallContext::new())
}

/// [`write_report`] for the call `call` (a run's report: its temporary is the run's).
fn write_report_in(
    out_dir: &Path,
    shard: Option<(usize, usize)>,
    reports: &mut [ItemReport],
    call: &CallContext,
) -> Result<PathBuf> {
    let _lock = crate::call::output::FileLock::exclusive(&out_dir.join(report_lock_name(shard)))?;
    reports.sort_by_key(|r| r.line);
    write_report_lines(out_dir, shard, reports.iter(), call)
}

fn write_report_lines<'a>(
    out_dir: &Path,
    shard: Option<(usize, usize)>,
    reports: impl Iterator<Item = &'a ItemReport>,
    call: &CallContext,
) -> Result<PathBuf> {
    let report_path = out_dir.join(report_name(shard));
    let mut text = String::new();
    for r in reports {
        text.push_str(&serde_json::to_string(r).expect("report serializes"));
        text.push('\n');
    }
    crate::call::output::group::write_file_atomically(&report_path, text.as_bytes(), call)?;
    Ok(report_path)
}

/// Merges `reports` into the report of `out_dir` (`report.jsonl`, or the shard's name), for
/// a driver that ran some items of a folder other drivers may be writing to at the same time
/// (`vidprep.ray`): under the report's advisory lock, the report there is read, each of its
/// lines for an item of `reports` (same id; same manifest line for an entry without one) is
/// replaced by the new line, the others are kept, and the whole is written back sorted by
/// manifest line, atomically. So two drivers finishing at once both keep their lines. A final
/// line cut short (a writer that died mid-line, before reports were written atomically) is
/// left out, with a `notice`; any other line that is not a report line is an error naming
/// the file and line (the file is then left alone). Returns the report's path.
pub fn merge_report(
    out_dir: &Path,
    shard: Option<(usize, usize)>,
    reports: &[ItemReport],
    notice: &dyn Fn(&str),
) -> Result<PathBuf> {
    let _lock = crate::call::output::FileLock::exclusive(&out_dir.join(report_lock_name(shard)))?;
    let path = out_dir.join(report_name(shard));
    let old = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let mut kept = read_report_lines(&path, &old, notice)?;
    let key = |r: &ItemReport| match &r.id {
        Some(id) => (Some(id.clone()), 0),
        None => (None, r.line),
    };
    let new: std::collections::HashSet<_> = reports.iter().map(key).collect();
    kept.retain(|r| !new.contains(&key(r)));
    kept.extend(reports.iter().cloned());
    kept.sort_by_key(|r| r.line);
    write_report_lines(out_dir, shard, kept.iter(), &CallContext::new())
}

/// The report lines of `bytes` (the report at `path`): a final line without its newline that
/// does not parse is left out with a `notice` (a torn write); any other bad line is an error.
fn read_report_lines(path: &Path, bytes: &[u8], notice: &dyn Fn(&str)) -> Result<Vec<ItemReport>> {
    let mut out = Vec::new();
    let complete = bytes.ends_with(b"\n");
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let last = lines.len().saturating_sub(1);
    for (n, line) in lines.iter().enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<ItemReport>(line) {
            Ok(r) => out.push(r),
            Err(_) if n == last && !complete => notice(&format!(
                "{} line {}: the last line is cut short (a writer stopped mid-line?); left out",
                path.display(),
                n + 1
            )),
            Err(e) => {
                return Err(Error::Usage(format!(
                    "{} line {}: not a report line ({e}); it was not written by vidprep, or is \
                     damaged: move it away and rerun",
                    path.display(),
                    n + 1
                )))
            }
        }
    }
    Ok(out)
}

/// Runs ONE item into `options.out_dir` exactly as [`run_batch`] makes it (the same item
/// folder, `item.json`, `resume` check and report line), for a driver that spreads a
/// manifest over many processes or hosts (`vidprep.ray`): under a lock of that item alone
/// (`.vidprep-lock.item-<id>`), which other items' locks share the folder with, but no whole
/// run or shard, and no second holder of the same item. Temporaries of dead holders are
/// removed first. Writes no report (the driver does, with [`write_report`]); `jobs`,
/// `shard` and `fail_fast` of `options` are ignored. Fails as a whole only for bad usage
/// (a layout that would overwrite inputs, the item held by a live run: the message says
/// "is in use by another vidprep run").
pub fn run_item(
    item: &ManifestItem,
    options: &BatchOptions,
    observer: &dyn Observer,
) -> Result<ItemReport> {
    options.exec.defaults.validate()?;
    crate::error::require_utf8(&options.out_dir, "the output folder (--out-dir)")?;
    let mut call = options.exec.context();
    check_layout(&[item], &|id| id == item.plan.id, options)?;
    make_out_dir(&options.out_dir, observer)?;
    let lock = OutDirLock::acquire_item(
        &options.out_dir,
        &item.plan.id,
        options.origin.as_deref(),
        &|m: &str| observer.notice(m),
        &call,
    )?;
    call.held = Some(lock.held());
    // A dead holder's temporaries at the top were removed as its lock was taken over; only
    // this item's folder is left to clean (reading the whole folder for each item would
    // cost a scan of every item's entry per item).
    crate::call::output::temporaries::remove_stale_temporaries(
        &options.out_dir.join(&item.plan.id),
    );
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let exec = ExecOptions {
        threads: options.codec_threads.unwrap_or(cores).clamp(1, 256),
        ..options.exec.clone()
    };
    let origin = options
        .origin
        .as_ref()
        .map(|p| format!("{} ", p.display()))
        .unwrap_or_default();
    let stop = AtomicBool::new(false);
    let ctx = ItemContext {
        options,
        exec: &exec,
        call: &call,
        lost: &|| lock.lost(),
        stop: &stop,
        origin: &origin,
        observer,
    };
    Ok(make_item(item, &ctx))
}

/// Removes what a dead holder of item `id` left in `out_dir` (its lock, its temporaries at
/// the top of the folder and inside the item's folder), as the next run of that item would:
/// for a driver that stopped a worker (a time limit) and will not run the item again.
/// Waits, as [`run_item`] does, for a lock of another host whose lease is not over; refused
/// while a live run holds the item. `settings` give the lease of the lock it takes
/// ([`Settings::lock_lease`](crate::call::Settings::lock_lease)).
pub fn clean_item(
    out_dir: &Path,
    id: &str,
    origin: Option<&Path>,
    settings: &crate::call::Settings,
) -> Result<()> {
    let call = CallContext {
        settings: settings.clone(),
        ..CallContext::new()
    };
    let lock = OutDirLock::acquire_item(out_dir, id, origin, &|_: &str| {}, &call)?;
    crate::call::output::temporaries::remove_dead_temporaries(out_dir);
    crate::call::output::temporaries::remove_stale_temporaries(&out_dir.join(id));
    drop(lock);
    Ok(())
}

/// Fault injection for tests of item isolation: the item whose id is
/// [`Settings::fault_panic`](crate::call::Settings) (the doors read `VIDPREP_FAULT_PANIC`) panics.
/// Only a build with the test-only `fault-injection` feature has this function and that field
/// (`cargo test` turns it on through the crate's dev-dependency on itself; `cargo build`,
/// `cargo install` and the Python package never do).
#[cfg(feature = "fault-injection")]
fn inject_fault(id: &str, settings: &crate::call::Settings) {
    if settings.fault_panic.as_deref() == Some(id) {
        panic!("fault injected into item {id} (VIDPREP_FAULT_PANIC)");
    }
}

/// Refuses a layout where writing the items would touch their inputs or the batch's files:
/// an item folder that holds (or is) an input, the manifest, or the report; an input inside
/// the folder of an item that `written` names (the manifest's items: another item's output, replaced
/// while it is read); an item folder that is a symbolic link.
fn check_layout(
    items: &[&ManifestItem],
    written: &dyn Fn(&str) -> bool,
    options: &BatchOptions,
) -> Result<()> {
    let out = canonical(&options.out_dir);
    let report = out.join(report_name(options.shard));
    let manifest = options.origin.as_ref().map(|m| canonical(m));
    if let Some(m) = &manifest {
        if *m == report {
            return Err(Error::Usage(format!(
                "the manifest {} is where the report would be written; move it or choose another output folder",
                m.display()
            )));
        }
    }
    // An input inside an item folder of the manifest is read while that item replaces it
    // (another item's output), and is refused like an item's own.
    for item in items {
        let dir = out.join(&item.plan.id);
        // Before anything runs or is cleaned: a link is followed by every later step (the
        // removal of temporaries included), so it is refused, never written through.
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error::Usage(format!(
                "{} is a symbolic link (to {}); item {:?} needs a folder of its own there, and \
                 vidprep never writes or deletes through a link: remove the link or choose \
                 another output folder",
                dir.display(),
                std::fs::read_link(&dir)
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "?".into()),
                item.plan.id
            )));
        }
        let mut protected: Vec<PathBuf> = item.plan.inputs().iter().map(|p| canonical(p)).collect();
        protected.extend(manifest.clone());
        for p in protected {
            if p.starts_with(&dir) || dir.starts_with(&p) && p.is_dir() {
                return Err(Error::Usage(format!(
                    "item {:?} would be written to {}, which holds its input {}; choose another output folder",
                    item.plan.id,
                    dir.display(),
                    p.display()
                )));
            }
            let other = p
                .strip_prefix(&out)
                .ok()
                .and_then(|rel| rel.components().next())
                .and_then(|c| c.as_os_str().to_str())
                .filter(|id| written(id));
            if let Some(other) = other {
                return Err(Error::Usage(format!(
                    "item {:?} reads {}, inside the folder {} that item {other:?} of this run \
                     writes: it would read that item's output while it is being replaced; run \
                     {other:?} first (another manifest or output folder), then the items that \
                     read it",
                    item.plan.id,
                    p.display(),
                    out.join(other).display(),
                )));
            }
        }
        if !dir.exists() {
            continue;
        }
        if !dir.is_dir() {
            return Err(Error::Usage(format!(
                "{} exists and is not a folder; item {:?} needs it as its output folder",
                dir.display(),
                item.plan.id
            )));
        }
        // An item folder is replaced as a whole: only when its item.json lists every file.
        let foreign = crate::call::output::ownership::foreign_files(&dir);
        if !foreign.is_empty() {
            return Err(crate::call::output::ownership::refusal(&dir, &foreign));
        }
    }
    Ok(())
}

/// Removes temporary files and folders left by killed runs: at the top of the output folder
/// only what is provably dead (a dead process of this host, or untouched for
/// [`crate::call::host::STALE_TEMPORARY`]; a dead lock holder's were removed as its lock was
/// taken over), never a live run's on another host; inside this run's item folders, every
/// temporary (only this run writes there).
fn clean_stale_temporaries(out_dir: &Path, items: &[&ManifestItem]) {
    crate::call::output::temporaries::remove_dead_temporaries(out_dir);
    for item in items {
        crate::call::output::temporaries::remove_stale_temporaries(&out_dir.join(&item.plan.id));
    }
}

/// Counts an item's frames for the observer.
struct FrameCounter<'a> {
    observer: &'a dyn Observer,
    count: u64,
}

impl Progress for FrameCounter<'_> {
    fn advance(&mut self, frames: u64) -> bool {
        self.count += frames;
        self.observer.frames(frames);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_slips_are_counted() {
        assert_eq!(typing_distance("shraed", "shared"), 1);
        assert_eq!(typing_distance("shard", "shared"), 1);
        assert_eq!(typing_distance("out", "out"), 0);
        assert_eq!(typing_distance("out", "src"), 3);
        assert_eq!(typing_distance("results", "reslts2"), 2);
    }

    #[test]
    fn shards_split_ids_disjointly() {
        let ids: Vec<String> = (0..500).map(|i| format!("item-{i}")).collect();
        let mut seen = std::collections::HashSet::new();
        for shard in 0..7 {
            for id in ids.iter().filter(|id| shard_of(id, 7) == shard) {
                assert!(seen.insert(id.clone()), "{id} in two shards");
            }
        }
        assert_eq!(seen.len(), 500);
        // Stable across runs and machines: FNV-1a test vector.
        assert_eq!(crate::call::hash::fnv1a(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(parse_shard("2/8"), Ok((2, 8)));
        assert!(parse_shard("8/8").is_err() && parse_shard("1").is_err());
    }
}
