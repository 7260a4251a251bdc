//! The executor: runs one [`Plan`]. Every manifest line and every command that makes files
//! from a source comes here.
//!
//! 1. The plan is checked (no media needed) and every output is claimed in one output group
//!    (`group::OutputGroup`): nothing may overwrite an input, collide with another output or
//!    replace a device.
//! 2. The source is opened once and the stages are applied (`stream::ProcessedStream`).
//! 3. Each export says which frames it needs; the stream is decoded once (all frames in
//!    order, or only the sampled ones by seeking) and every export is fed from that pass.
//! 4. Each export writes its files at temporary paths; then the group puts them all in place.
//!    In a batch the item's folder is replaced as a whole, with `item.json` (what was made
//!    from what, `crate::records::item_json`) written last inside it.
//!
//! If a decoder disagrees with the frame table built from packets (damage, lying timestamps),
//! the executor tells the call's table cache ([`ExecOptions::tables`]) and runs the plan once
//! more with a table built by decoding; outputs are only committed at the end, so that is
//! safe. It runs again rather than carrying on because every export planned its frames,
//! times and sizes from the table that turned out wrong.

use crate::call::cancel::CancelToken;
use crate::call::context::CallContext;
pub(crate) use crate::call::host::worker_count;
use crate::call::output::group;
pub use crate::call::output::group::{Committed, OutputGroup};
pub use crate::exports::frames::memory::MemoryFrames;
pub use crate::exports::{ExportReport, ExportTarget};
pub use crate::frames::pipeline::{NoProgress, Progress};
use crate::frames::stages::stream;

pub(crate) mod track;
mod unchanged;

use std::path::PathBuf;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::exports::{self, ExportContext, Wants};
use crate::frames::pipeline::{self, FrameSink};
use crate::plan::{CheckedPlan, NormalPlan, Plan};
use crate::records::item_json::{ItemRecord, RemoteFingerprint};
use crate::vocab::EncodeSettings;

/// How plans run: encoding defaults and resources.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ExecOptions {
    /// CRF, preset and audio for exports that do not set their own.
    pub defaults: EncodeSettings,
    /// The call's decoder thread budget (0: one per core; a batch gives each item the cores
    /// divided among its jobs). A full decode runs one decoder with this many threads (0:
    /// FFmpeg's automatic count); sparse reading's workers share it. The encoder's threads are
    /// fixed: see `ENCODER_THREADS`.
    pub threads: usize,
    /// Parallel decoders when only sampled frames are read (0: as many as the thread budget
    /// allows, one thread each at least). More than the budget runs more threads than it.
    pub workers: usize,
    /// What stops this call (see `crate::call::cancel`). The default is a fresh token: a caller
    /// that cancels (the CLI's Ctrl-C) sets its own.
    pub cancel: CancelToken,
    /// The most bytes the frames of one export kept in memory ([`Destination::Memory`]) may
    /// take: a request for more (`n * height * width * 3`) fails with
    /// [`Error::OverBudget`] before a frame is decoded. Default
    /// [`DEFAULT_MEMORY_BUDGET`].
    pub memory_budget: u64,
    /// The frame tables of the call's sources, built once per file version: a batch's items
    /// share the batch's (see [`TableCache`](crate::media::table::TableCache)); the default is
    /// an empty one of the call's own.
    pub tables: crate::media::table::TableCache,
    /// Counts the work the call does (see `crate::call::tally`); `None` counts nothing.
    pub tally: Option<crate::call::tally::Tally>,
    /// Network timeouts, the download limit, the lock lease (see [`crate::call::Settings`]). The
    /// default is the documented defaults: a door sets the ones it read
    /// ([`Settings::from_vars`](crate::call::Settings::from_vars)).
    pub settings: crate::call::Settings,
}

/// The default [`ExecOptions::memory_budget`]: 4 GiB.
pub const DEFAULT_MEMORY_BUDGET: u64 = 4 << 30;

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            defaults: EncodeSettings::default(),
            threads: 0,
            workers: 0,
            cancel: CancelToken::new(),
            memory_budget: DEFAULT_MEMORY_BUDGET,
            tables: crate::media::table::TableCache::new(),
            tally: None,
            settings: crate::call::Settings::default(),
        }
    }
}

impl ExecOptions {
    /// These options with the token, settings and tally of `ctx` (a door's call: the command
    /// line makes one context per command and hands it to every call it makes).
    pub fn in_context(mut self, ctx: &CallContext) -> ExecOptions {
        self.cancel = ctx.cancel.clone();
        self.settings = ctx.settings.clone();
        self.tally = ctx.tally.clone();
        self
    }

    /// The context a call with these options hands down: its token, settings and tally.
    pub(crate) fn context(&self) -> CallContext {
        CallContext {
            cancel: self.cancel.clone(),
            settings: self.settings.clone(),
            tally: self.tally.clone(),
            held: None,
        }
    }
}

/// Where a plan's outputs go.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Destination {
    /// A batch item's folder: `DIR/NAME.mp4`, `DIR/NAME/`, ..., and `DIR/item.json`. The
    /// folder is replaced as a whole.
    Folder(PathBuf),
    /// One target per export, in the plan's order (the single commands).
    Targets(Vec<ExportTarget>),
    /// Nothing is written: the plan's exports must all be `frames` exports (without a strip,
    /// payload or JSONL), and each one's images come back as RGB pixels in
    /// [`Outcome::memory`] with the `frames.json` it would have written. The Python package's
    /// `vidprep.sample` runs plans this way.
    Memory,
}

/// What a plan made.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Outcome {
    /// The plan's id.
    pub id: String,
    /// One report per export, in the plan's order.
    pub exports: Vec<ExportReport>,
    /// Every file and folder written (final paths).
    pub files: Vec<PathBuf>,
    /// Frames of the processed stream decoded in the item's pass.
    pub frames: usize,
    /// Damage found in the source, if any ("3 damaged packets near 12.4 s").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub damage: Option<String>,
    /// Things that did not stop the plan but deserve a look, from the source and every
    /// export, each once (absent from the JSON when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// With [`Destination::Memory`]: each frames export's images, in the plan's order
    /// (empty otherwise).
    #[serde(skip)]
    pub memory: Vec<MemoryFrames>,
}

/// Runs `plan`, writing to `destination`; the plan is checked first ([`Plan::check`]: a
/// failed check is [`Error::Usage`]). A plan checked already runs with [`execute_checked`].
pub fn execute(
    plan: &Plan,
    destination: &Destination,
    options: &ExecOptions,
    progress: &mut dyn Progress,
) -> Result<Outcome> {
    let ctx = options.context();
    let checked = CheckedPlan::new_in(plan.clone(), &ctx)
        .map_err(|m| Error::Usage(format!("item {:?}: {m}", plan.id)))?;
    execute_checked(&checked, destination, options, progress)
}

/// Runs a checked plan (as [`execute`] does, without checking it again).
pub fn execute_checked(
    plan: &CheckedPlan,
    destination: &Destination,
    options: &ExecOptions,
    progress: &mut dyn Progress,
) -> Result<Outcome> {
    let ctx = options.context();
    let normal = plan.normal(&options.defaults, &ctx);
    execute_normal(&normal, destination, options, progress, &ctx)
}

/// Runs a checked plan in its canonical form (the batch runner normalises an item once for
/// its `--resume` check and its run).
pub(crate) fn execute_normal(
    plan: &NormalPlan,
    destination: &Destination,
    options: &ExecOptions,
    progress: &mut dyn Progress,
    ctx: &CallContext,
) -> Result<Outcome> {
    let plan: &Plan = plan;
    match destination {
        Destination::Folder(dir) => crate::error::require_utf8(dir, "the item folder")?,
        Destination::Targets(targets) => {
            for t in targets {
                let paths = [
                    Some(&t.main),
                    t.sidecar.as_ref(),
                    t.base64.as_ref(),
                    t.boxes.as_ref(),
                ];
                for p in paths.into_iter().flatten() {
                    crate::error::require_utf8(p, "the output")?;
                }
            }
        }
        Destination::Memory => {}
    }
    if let Destination::Targets(t) = destination {
        if t.len() != plan.exports.len() {
            return Err(Error::internal(format!(
                "{} output targets for {} exports",
                t.len(),
                plan.exports.len()
            )));
        }
    }
    if *destination == Destination::Memory {
        if let Some(e) = plan.exports.iter().find(|e| e.kind() != "frames") {
            return Err(Error::Usage(format!(
                "item {:?}: export {:?} is a {} export; only frames exports can be kept in \
                 memory",
                plan.id,
                e.name(),
                e.kind()
            )));
        }
    }
    retry_on_table_mismatch(plan, options, ctx, || {
        execute_once(plan, destination, options, progress, ctx)
    })
}

/// Runs `job` (a reading of `plan`'s source), and once more when a decoder disagreed with the
/// source's frame table: the table is distrusted in the call's cache
/// ([`ExecOptions::tables`]), which then builds it by decoding. The one place that decides
/// it, for the executor and for the passes that read a stream of their own
/// ([`read_stream`]).
fn retry_on_table_mismatch<T>(
    plan: &Plan,
    options: &ExecOptions,
    ctx: &CallContext,
    job: impl FnMut() -> Result<T>,
) -> Result<T> {
    let source = crate::media::source::Source::new(plan.source.clone(), plan.source_fps);
    crate::media::table::retry_on_table_mismatch(&options.tables, &source, ctx, job)
}

/// Reads `plan`'s processed stream with a pass of the caller's own (`read`) instead of
/// exports: detect's analysis pass. The stream is the executor's
/// ([`stream::ProcessedStream::open`]: the source opened once for its description and its
/// table, the table from [`ExecOptions::tables`], the plan's stages applied), its readers
/// count on the call's tally, and a decoder's disagreement with the table runs `read` again on
/// a table built by decoding, as [`execute`] does. `read` writes nothing (it may run twice).
pub(crate) fn read_stream<T>(
    plan: &Plan,
    options: &ExecOptions,
    ctx: &CallContext,
    mut read: impl FnMut(&stream::ProcessedStream) -> Result<T>,
) -> Result<T> {
    retry_on_table_mismatch(plan, options, ctx, || {
        let stream = stream::ProcessedStream::open(plan, options.threads, &options.tables, ctx)?;
        read(&stream)
    })
}

fn execute_once(
    plan: &Plan,
    destination: &Destination,
    options: &ExecOptions,
    progress: &mut dyn Progress,
    ctx: &CallContext,
) -> Result<Outcome> {
    let mut group = group::OutputGroup::new(&plan.inputs(), ctx);
    let mut makers: Vec<Box<dyn exports::Export>> =
        plan.exports.iter().map(exports::maker).collect();
    let (targets, item_temp) = match destination {
        Destination::Folder(dir) => {
            let temp = group.container(dir)?;
            let targets = makers.iter().map(|m| m.target_in(dir)).collect();
            (targets, Some((dir.clone(), temp)))
        }
        Destination::Targets(t) => (t.clone(), None),
        Destination::Memory => (Vec::new(), None),
    };
    if *destination == Destination::Memory {
        for m in makers.iter_mut() {
            m.keep_in_memory()?;
        }
    }
    for (m, t) in makers.iter_mut().zip(&targets) {
        m.claim(t, plan, &mut group)?;
    }
    if let Some((dir, _)) = &item_temp {
        // item.json is claimed last: no export may take its name.
        group.file(&dir.join("item.json"))?;
    }

    // The inputs as found now: checked again before anything made from them is committed.
    let inputs_seen =
        unchanged::InputsSeen::take(plan, matches!(destination, Destination::Folder(_)));
    let stream = stream::ProcessedStream::open(plan, options.threads, &options.tables, ctx)?;
    let export_ctx = ExportContext {
        defaults: options.defaults.clone(),
        memory_budget: options.memory_budget,
    };
    let mut wants = Vec::with_capacity(makers.len());
    for m in makers.iter_mut() {
        wants.push(m.start(&stream, &export_ctx, &mut group)?);
    }

    // The one pass: every export fed from the same decode.
    let frames = if wants.iter().all(|w| *w == Wants::Nothing) {
        0
    } else {
        let mut source = if wants.contains(&Wants::All) {
            stream.full_source()?
        } else {
            let mut wanted: Vec<usize> = wants
                .iter()
                .filter_map(|w| match w {
                    Wants::Frames(f) => Some(f.iter().copied()),
                    _ => None,
                })
                .flatten()
                .collect();
            wanted.sort_unstable();
            wanted.dedup();
            // The workers share the item's thread budget (a batch's jobs share the cores).
            let workers = match options.workers {
                0 => worker_count(options.threads),
                w => w,
            };
            stream.sparse_source(&wanted, workers)?
        };
        let mut sinks: Vec<&mut dyn FrameSink> = makers
            .iter_mut()
            .zip(&wants)
            .filter(|(_, w)| **w != Wants::Nothing)
            .filter_map(|(m, _)| m.sink())
            .collect();
        pipeline::run(source.as_mut(), &mut sinks, progress, &ctx.cancel)?
    };

    let mut reports = Vec::with_capacity(makers.len());
    for m in makers.iter_mut() {
        reports.push(m.finish(&stream, &export_ctx, &mut group, progress)?);
    }
    let damage = (!stream.table.damage.is_empty()).then(|| stream.table.damage.summary());
    let mut warnings = stream.warnings.clone();
    for r in &reports {
        for w in &r.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    let mut files: Vec<PathBuf> = reports.iter().flat_map(|r| r.files.clone()).collect();
    if let Some((dir, temp)) = &item_temp {
        let remote = stream
            .input
            .seen_validators()
            .map(|validators| RemoteFingerprint {
                url: plan.source.to_string_lossy().into_owned(),
                validators,
            })
            .into_iter()
            .collect();
        let record = ItemRecord::new(plan, &options.defaults, temp, remote, inputs_seen.record());
        crate::records::sidecar::write_json(&temp.join("item.json"), &record)?;
        files.push(dir.join("item.json"));
    }
    // A URL read in several requests must still be the file the first one saw; a local
    // input must still be the file found at the start (a recording still being written).
    stream.input.check_unchanged_in(ctx)?;
    read_gate(ctx);
    inputs_seen.check_unchanged(plan)?;
    if let Some(w) = group.created_warning() {
        warnings.push(w);
    }
    let committed = group.commit()?;
    warnings.extend(committed.warnings);
    let memory = makers.iter_mut().filter_map(|m| m.take_memory()).collect();
    Ok(Outcome {
        id: plan.id.clone(),
        exports: reports,
        files,
        frames,
        damage,
        warnings,
        memory,
    })
}

/// Test-only fault injection: with `VIDPREP_FAULT_READ_GATE=DIR`, a plan whose inputs were
/// read writes `DIR/read` and waits (at most a minute) for `DIR/go` before it checks them
/// again (a test changes a source in between).
fn read_gate(ctx: &CallContext) {
    #[cfg(feature = "fault-injection")]
    if let Some(dir) = &ctx.settings.fault_read_gate {
        let _ = std::fs::write(dir.join("read"), b"");
        let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !dir.join("go").exists() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    #[cfg(not(feature = "fault-injection"))]
    let _ = ctx;
}
