//! `vidprep._vidprep`: the native part of the `vidprep` Python package.
//!
//! A thin door: every function takes or builds a [`vidprep::Plan`] (as the JSON of a manifest
//! line) and hands it to the library's one executor or batch runner. Python-side conveniences
//! (keyword arguments, dicts, NumPy shapes) live in `python/vidprep/__init__.py`.
//!
//! - The GIL is released while the library works ([`detach`]), so other Python
//!   threads run while frames decode. The work runs on a thread of its own with a
//!   [`vidprep::call::CancelToken`] of its own; the calling thread checks for signals every 100 ms,
//!   so Ctrl-C raises `KeyboardInterrupt` within about that (after the work has stopped and
//!   removed its temporaries), and the next call is not affected.
//! - Library errors become `vidprep.VidprepError` subclasses named after [`vidprep::ErrorKind`],
//!   with the library's message unchanged.
//! - No panic crosses into Python: every call into the library runs under `catch_unwind`,
//!   and a panic becomes `vidprep.InternalError` (PyO3 would otherwise raise its own
//!   `PanicException`, which is not an `Exception`).
//! - A call still running when the interpreter exits (a daemon thread: a prefetching data
//!   loader's) never takes the process down: CPython before 3.14 ends a thread that wants the
//!   GIL back during finalisation with `pthread_exit`, whose forced unwind would reach a
//!   `catch_unwind` (PyO3's, `std::thread::scope`'s) and abort the process ("FATAL: exception
//!   not rethrown"). Every release of the GIL goes through [`detach`], which stops that unwind
//!   and parks the thread for good instead, as CPython 3.14 itself does; the process exits
//!   with the script's exit code.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use numpy::PyArray1;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyMemoryError};
use pyo3::prelude::*;
use vidprep::batch::{ItemReport, Observer};
use vidprep::call::{CallContext, CancelToken, Settings};
use vidprep::plan::CheckedPlan;
use vidprep::BatchOptions;
use vidprep::{Destination, ErrorKind, ExecOptions, NoProgress, Plan};

create_exception!(
    _vidprep,
    VidprepError,
    PyException,
    "Base of every vidprep error."
);
create_exception!(
    _vidprep,
    UsageError,
    VidprepError,
    "The request itself is wrong."
);
create_exception!(
    _vidprep,
    InputError,
    VidprepError,
    "An input is missing, unreadable, damaged or does not fit the request."
);
create_exception!(
    _vidprep,
    OutputError,
    VidprepError,
    "Writing an output failed."
);
create_exception!(
    _vidprep,
    EncodeError,
    VidprepError,
    "The encoder or muxer refused the frames or settings."
);
create_exception!(
    _vidprep,
    TrackerError,
    VidprepError,
    "OpenCV's tracker failed while it ran (a tracking fill, vidprep track)."
);
create_exception!(
    _vidprep,
    InternalError,
    VidprepError,
    "A fault in vidprep (a bug)."
);
create_exception!(
    _vidprep,
    CancelledError,
    VidprepError,
    "The work was stopped."
);

/// The Python exception of a library error: the class follows its kind, the text is the
/// library's message (which names the file).
fn to_py(e: vidprep::Error) -> PyErr {
    let message = e.to_string();
    if matches!(
        e,
        vidprep::Error::OverBudget { .. } | vidprep::Error::OutOfMemory { .. }
    ) {
        return PyMemoryError::new_err(message);
    }
    class_of(e.kind()).into_py_err(message)
}

/// The exception class of an error kind (a kind added later: the base class).
fn class_of(kind: ErrorKind) -> ErrorClass {
    match kind {
        ErrorKind::Usage => ErrorClass::Usage,
        ErrorKind::Input => ErrorClass::Input,
        ErrorKind::Output => ErrorClass::Output,
        ErrorKind::Encode => ErrorClass::Encode,
        ErrorKind::Tracker => ErrorClass::Tracker,
        ErrorKind::Internal => ErrorClass::Internal,
        ErrorKind::Cancelled => ErrorClass::Cancelled,
        _ => ErrorClass::Base,
    }
}

/// One exception class per error kind.
#[derive(Clone, Copy)]
enum ErrorClass {
    Base,
    Usage,
    Input,
    Output,
    Encode,
    Tracker,
    Internal,
    Cancelled,
}

impl ErrorClass {
    fn into_py_err(self, message: String) -> PyErr {
        match self {
            ErrorClass::Base => VidprepError::new_err(message),
            ErrorClass::Usage => UsageError::new_err(message),
            ErrorClass::Input => InputError::new_err(message),
            ErrorClass::Output => OutputError::new_err(message),
            ErrorClass::Encode => EncodeError::new_err(message),
            ErrorClass::Tracker => TrackerError::new_err(message),
            ErrorClass::Internal => InternalError::new_err(message),
            ErrorClass::Cancelled => CancelledError::new_err(message),
        }
    }

    fn type_object(self, py: Python<'_>) -> Bound<'_, pyo3::types::PyType> {
        match self {
            ErrorClass::Base => py.get_type::<VidprepError>(),
            ErrorClass::Usage => py.get_type::<UsageError>(),
            ErrorClass::Input => py.get_type::<InputError>(),
            ErrorClass::Output => py.get_type::<OutputError>(),
            ErrorClass::Encode => py.get_type::<EncodeError>(),
            ErrorClass::Tracker => py.get_type::<TrackerError>(),
            ErrorClass::Internal => py.get_type::<InternalError>(),
            ErrorClass::Cancelled => py.get_type::<CancelledError>(),
        }
    }
}

/// Every error kind of the library, by its report name (`error_kind` in a batch report), with
/// the exception class a call raises for it.
#[pyfunction]
fn error_classes(py: Python<'_>) -> PyResult<Vec<(String, Bound<'_, pyo3::types::PyType>)>> {
    [
        ErrorKind::Usage,
        ErrorKind::Input,
        ErrorKind::Output,
        ErrorKind::Encode,
        ErrorKind::Tracker,
        ErrorKind::Internal,
        ErrorKind::Cancelled,
    ]
    .into_iter()
    .map(|kind| {
        let name = serde_json::to_value(kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        Ok((name, class_of(kind).type_object(py)))
    })
    .collect()
}

/// How often a waiting call looks for a signal (Ctrl-C) while the work runs.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Parks its thread for good when dropped by an unwind that is not a Rust panic: the forced
/// unwind of `pthread_exit`, which CPython before 3.14 calls when a thread asks for the GIL
/// back after the interpreter began to finalise (`PyEval_RestoreThread`; cpython#87135). That
/// unwind must never reach a `catch_unwind` (PyO3's trampoline, `std::thread::scope`): catching
/// it aborts the process ("FATAL: exception not rethrown", SIGABRT). Parked here, the thread
/// is dropped when the process exits, which is what the interpreter meant by ending it; the
/// call's work, if any, is cancelled first so that it stops at its next frame. (PyO3 0.25
/// guards `PyGILState_Ensure` the same way, `pyo3_ffi::pystate::HangThread` (PyO3#4874), but
/// not the `PyEval_RestoreThread` of `allow_threads`, PyO3#6085.)
struct ParkOnForcedUnwind<'a> {
    /// The call's work to stop before parking (none: the work ran on this thread).
    cancel: Option<&'a CancelToken>,
}

impl Drop for ParkOnForcedUnwind<'_> {
    fn drop(&mut self) {
        // Only reached by an unwind (`detach` forgets the guard on return). A Rust panic goes on
        // unwinding: the caller's `catch_unwind` turns it into `InternalError`.
        if std::thread::panicking() {
            return;
        }
        if let Some(token) = self.cancel {
            token.cancel();
        }
        loop {
            std::thread::park();
        }
    }
}

/// [`Python::allow_threads`]: runs `f` without the GIL, and takes the GIL back after it, unless
/// the interpreter is finalising, where the thread is parked for good instead (see
/// [`ParkOnForcedUnwind`]) after cancelling `cancel`. Every release of the GIL in this module goes
/// through here.
fn detach<T, F>(py: Python<'_>, cancel: Option<&CancelToken>, f: F) -> T
where
    F: pyo3::marker::Ungil + FnOnce() -> T,
    T: pyo3::marker::Ungil,
{
    let guard = ParkOnForcedUnwind { cancel };
    let out = py.allow_threads(f);
    std::mem::forget(guard);
    out
}

/// Runs `work` without the GIL and without letting a panic escape, for a call of its own: the
/// work runs on a thread of its own, given the call's context (a fresh cancellation token,
/// the settings read from the environment now), while this thread waits without the GIL and checks for signals every [`SIGNAL_POLL`]. On Ctrl-C
/// (`KeyboardInterrupt`, or whatever a signal handler raised) the token is cancelled, the work
/// is waited for (it stops at its next frame or network wait, removing its temporaries) and
/// the signal's exception is raised. Each call has a fresh token, so an interrupted call never
/// affects the next one.
fn guarded<T: Send>(
    py: Python<'_>,
    what: &str,
    work: impl FnOnce(&CallContext) -> Result<T, PyErrText> + Send,
) -> PyResult<T> {
    let token = CancelToken::new();
    // The library reads no environment; this door does, at each call (so a variable set
    // between two calls counts): network timeouts, the download limit, the lock lease.
    let settings = Settings::from_vars(|k| std::env::var(k).ok()).map_err(UsageError::new_err)?;
    let mut ctx = CallContext::new();
    ctx.cancel = token.clone();
    ctx.settings = settings;
    let outcome = std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let handle = scope.spawn(move || {
            let result = catch_unwind(AssertUnwindSafe(|| work(&ctx)));
            let _ = done_tx.send(());
            result
        });
        let mut waiting = Some(done_rx);
        loop {
            let rx = waiting.take().expect("the receiver is put back each round");
            let (finished, rx) = detach(py, Some(&token), move || {
                let r = rx.recv_timeout(SIGNAL_POLL);
                (!matches!(r, Err(mpsc::RecvTimeoutError::Timeout)), rx)
            });
            if finished {
                break;
            }
            waiting = Some(rx);
            if let Err(signal) = py.check_signals() {
                token.cancel();
                // The work ends with `Cancelled` (or whatever it was finishing); the
                // signal's exception is what the caller sees.
                let _ = detach(py, Some(&token), move || handle.join());
                return Err(signal);
            }
        }
        Ok(detach(py, Some(&token), move || handle.join()))
    })?;
    let outcome = match outcome {
        Ok(caught) => caught,
        // The worker's panic was caught inside it; a join error cannot happen.
        Err(panic) => Err(panic),
    };
    match outcome {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(PyErrText::Lib(e))) => Err(to_py(e)),
        Ok(Err(PyErrText::Usage(m))) => Err(UsageError::new_err(m)),
        Err(panic) => {
            let text = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(InternalError::new_err(format!(
                "vidprep panicked while {what} (a bug; please report it): {text}"
            )))
        }
    }
}

/// Execution options with the call's token and settings (everything else the defaults).
fn exec_options(ctx: &CallContext) -> ExecOptions {
    let mut options = ExecOptions::default();
    options.cancel = ctx.cancel.clone();
    options.settings = ctx.settings.clone();
    options
}

/// Batch options into `out_dir` for the call `ctx` (see [`exec_options`]).
fn batch_options(out_dir: PathBuf, ctx: &CallContext) -> BatchOptions {
    let mut options = BatchOptions::new(out_dir);
    options.exec = exec_options(ctx);
    options
}

/// An error made without the GIL (a `PyErr` is made once it is held again).
enum PyErrText {
    Lib(vidprep::Error),
    Usage(String),
}

impl From<vidprep::Error> for PyErrText {
    fn from(e: vidprep::Error) -> Self {
        PyErrText::Lib(e)
    }
}

/// A plan from the JSON of a manifest line, checked.
fn plan_of(json: &str) -> Result<CheckedPlan, PyErrText> {
    let plan: Plan =
        serde_json::from_str(json).map_err(|e| PyErrText::Usage(format!("bad plan: {e}")))?;
    let id = plan.id.clone();
    CheckedPlan::new(plan).map_err(|m| PyErrText::Usage(format!("item {id:?}: {m}")))
}

/// `probe(path, count_frames)`: the JSON `vidprep probe --json` prints.
#[pyfunction]
#[pyo3(signature = (path, count_frames=false, source_fps=None))]
fn probe(
    py: Python<'_>,
    path: PathBuf,
    count_frames: bool,
    source_fps: Option<String>,
) -> PyResult<String> {
    guarded(py, "probing", move |ctx| {
        let fps = source_fps
            .map(|rate| rate.parse::<vidprep::plan::FrameRate>())
            .transpose()
            .map_err(|e| PyErrText::Usage(format!("source_fps: {e}")))?;
        let source = vidprep::media::Source::new(path, fps);
        let info = vidprep::media::probe_source_in(&source, count_frames, ctx)?;
        Ok(serde_json::to_string(&info).expect("probe info serialises"))
    })
}

/// `check(sources, manifest, source_fps, full, samples, time_limit, jobs, list_frames)`: the
/// JSON `vidprep check --json` prints, and the manifest's bad lines (their errors' words).
#[pyfunction]
#[pyo3(signature = (sources, manifest=None, source_fps=None, full=false, samples=32, time_limit=None, jobs=1, list_frames=false))]
#[allow(clippy::too_many_arguments)]
fn check(
    py: Python<'_>,
    sources: Vec<PathBuf>,
    manifest: Option<PathBuf>,
    source_fps: Option<String>,
    full: bool,
    samples: usize,
    time_limit: Option<f64>,
    jobs: usize,
    list_frames: bool,
) -> PyResult<(String, Vec<String>)> {
    guarded(py, "checking", move |ctx| {
        let fps = source_fps
            .map(|rate| rate.parse::<vidprep::plan::FrameRate>())
            .transpose()
            .map_err(|e| PyErrText::Usage(format!("source_fps: {e}")))?;
        let mut all: Vec<vidprep::media::Source> = sources
            .into_iter()
            .map(|p| vidprep::media::Source::new(p, fps))
            .collect();
        let mut bad = Vec::new();
        if let Some(m) = manifest {
            let (more, bad_items) = vidprep::check::manifest_sources(&m)?;
            all.extend(more);
            bad = bad_items.into_iter().map(|b| b.error.to_string()).collect();
        }
        if all.is_empty() && bad.is_empty() {
            return Err(PyErrText::Usage(
                "check: give at least one source (or a manifest)".into(),
            ));
        }
        let mut options = vidprep::check::CheckOptions::default();
        options.full = full;
        options.samples = samples.max(1);
        if let Some(t) = time_limit {
            if !(t.is_finite() && t > 0.0) {
                return Err(PyErrText::Usage(format!(
                    "time_limit: {t} is not a number of seconds more than 0"
                )));
            }
            options.time_limit = std::time::Duration::from_secs_f64(t);
        }
        options.jobs = jobs.max(1);
        options.list_frames = list_frames;
        options.cancel = ctx.cancel.clone();
        options.settings = ctx.settings.clone();
        let report = vidprep::check::check_sources(&all, &options, &mut vidprep::NoProgress)?;
        Ok((
            serde_json::to_string(&report).expect("a check report serialises"),
            bad,
        ))
    })
}

/// One frames export kept in memory: its name, its pixels (flat), `(count, height, width)` and
/// its `frames.json`.
type SampledExport<'py> = (String, Bound<'py, PyArray1<u8>>, (usize, u32, u32), String);

/// `sample_plan(plan_json, workers, threads, memory_budget)`: runs a plan whose exports are
/// all frames exports with nothing written; returns, per export, `(name, pixels, (n, h, w),
/// frames_json)` where `pixels` is a flat `uint8` array. An export whose array would take more
/// than `memory_budget` bytes (default: the library's, 4 GiB) raises `MemoryError` before a
/// frame is decoded.
#[pyfunction]
#[pyo3(signature = (plan_json, workers=0, threads=0, memory_budget=None))]
fn sample_plan<'py>(
    py: Python<'py>,
    plan_json: String,
    workers: usize,
    threads: usize,
    memory_budget: Option<u64>,
) -> PyResult<Vec<SampledExport<'py>>> {
    let outcome = guarded(py, "sampling frames", move |ctx| {
        let plan = plan_of(&plan_json)?;
        let mut options = exec_options(ctx);
        options.workers = workers;
        options.threads = threads;
        options.memory_budget = memory_budget.unwrap_or(vidprep::exec::DEFAULT_MEMORY_BUDGET);
        Ok(vidprep::exec::execute_checked(
            &plan,
            &Destination::Memory,
            &options,
            &mut NoProgress,
        )?)
    })?;
    let mut out = Vec::with_capacity(outcome.memory.len());
    for m in outcome.memory {
        let json = serde_json::to_string(&m.frames_json).expect("frames.json serialises");
        // The pixels move into the array without a copy.
        let array = PyArray1::from_vec(py, m.pixels);
        out.push((m.name, array, (m.count, m.height, m.width), json));
    }
    Ok(out)
}

/// `execute_plan(plan_json, out_dir)`: runs a plan into the item folder `out_dir` (as one
/// line of `vidprep run`); returns the outcome as JSON.
#[pyfunction]
fn execute_plan(py: Python<'_>, plan_json: String, out_dir: PathBuf) -> PyResult<String> {
    guarded(py, "running a plan", move |ctx| {
        let plan = plan_of(&plan_json)?;
        let outcome = vidprep::exec::execute_checked(
            &plan,
            &Destination::Folder(out_dir),
            &exec_options(ctx),
            &mut NoProgress,
        )?;
        Ok(serde_json::to_string(&outcome).expect("an outcome serialises"))
    })
}

/// What a run tells its caller before and around the work (a folder it had to make, a lock
/// it waited for), kept to be raised as Python `RuntimeWarning`s once the call is back (the
/// run itself happens without the interpreter).
#[derive(Default)]
struct Notices(std::sync::Mutex<Vec<String>>);

impl Observer for Notices {
    fn notice(&self, message: &str) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(message.to_string());
    }
}

impl Notices {
    fn into_vec(self) -> Vec<String> {
        self.0.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

/// Raises each of `notices` as a `RuntimeWarning` (the "warning: " the command line puts
/// before some of them is Python's category here).
fn warn_all(py: Python<'_>, notices: Vec<String>) -> PyResult<()> {
    for n in notices {
        let text = n.strip_prefix("warning: ").unwrap_or(&n).to_string();
        let text = std::ffi::CString::new(text).unwrap_or_default();
        PyErr::warn(
            py,
            py.get_type::<pyo3::exceptions::PyRuntimeWarning>().as_any(),
            &text,
            1,
        )?;
    }
    Ok(())
}

/// `run_manifest(manifest, out_dir, jobs, resume, fail_fast, shard)`: `vidprep run`; returns
/// `(summary_json, [report_line_json])`.
#[pyfunction]
#[pyo3(signature = (manifest, out_dir, jobs=0, resume=false, fail_fast=false, shard=None, strict=false))]
#[allow(clippy::too_many_arguments)]
fn run_manifest(
    py: Python<'_>,
    manifest: PathBuf,
    out_dir: PathBuf,
    jobs: usize,
    resume: bool,
    fail_fast: bool,
    shard: Option<(usize, usize)>,
    strict: bool,
) -> PyResult<(String, Vec<String>)> {
    guarded(py, "running a manifest", move |ctx| {
        if let Some((i, n)) = shard {
            vidprep::batch::parse_shard(&format!("{i}/{n}")).map_err(PyErrText::Usage)?;
        }
        // A shard's run reads its own entries only (and the others' ids).
        let mut read =
            vidprep::manifest::read_manifest_shard_in(&manifest, shard, &CallContext::new())?;
        if strict {
            for item in &mut read.items {
                item.plan.set_strict(true);
            }
        }
        let mut options = batch_options(out_dir, ctx);
        options.jobs = jobs;
        options.shard = shard;
        options.resume = resume;
        options.fail_fast = fail_fast;
        options.origin = Some(manifest);
        let notices = Notices::default();
        let (summary, reports) = vidprep::batch::run_manifest(&read, &options, &notices)?;
        Ok((
            serde_json::to_string(&summary).expect("a summary serialises"),
            reports
                .iter()
                .map(|r| serde_json::to_string(r).expect("a report serialises"))
                .collect(),
            notices.into_vec(),
        ))
    })
    .and_then(|(summary, reports, notices)| {
        warn_all(py, notices)?;
        Ok((summary, reports))
    })
}

/// `read_manifest_items(manifest, strict)`: a manifest read as `vidprep run` reads it, for a
/// driver that runs its items elsewhere (`vidprep.ray`): `([(line, id, plan_json)],
/// [bad_report_line_json])`, each plan checked with its relative paths resolved against the
/// manifest's folder, each entry that cannot run as its (failed) report line.
#[pyfunction]
#[pyo3(signature = (manifest, strict=false))]
#[allow(clippy::type_complexity)]
fn read_manifest_items(
    py: Python<'_>,
    manifest: PathBuf,
    strict: bool,
) -> PyResult<(Vec<(usize, String, String)>, Vec<String>)> {
    guarded(py, "reading a manifest", move |_| {
        let mut read = vidprep::manifest::read_manifest(&manifest)?;
        if strict {
            for item in &mut read.items {
                item.plan.set_strict(true);
            }
        }
        let items = read
            .items
            .iter()
            .map(|i| {
                let json = serde_json::to_string(&i.plan).expect("a plan serialises");
                (i.line, i.plan.id.clone(), json)
            })
            .collect();
        let bad = vidprep::batch::bad_reports(&read.bad)
            .iter()
            .map(|r| serde_json::to_string(r).expect("a report serialises"))
            .collect();
        Ok((items, bad))
    })
}

/// `run_item(plan_json, line, out_dir, manifest, resume, codec_threads)`: ONE manifest item
/// (from `read_manifest_items`) into `out_dir/<id>/`, as `vidprep run` makes it, under that
/// item's own lock; returns its report line (JSON). Raises `UsageError` when the item is
/// held by a live run ("is in use by another vidprep run") or the layout is refused.
#[pyfunction]
#[pyo3(signature = (plan_json, line, out_dir, manifest=None, resume=false, codec_threads=None))]
fn run_item(
    py: Python<'_>,
    plan_json: String,
    line: usize,
    out_dir: PathBuf,
    manifest: Option<PathBuf>,
    resume: bool,
    codec_threads: Option<usize>,
) -> PyResult<String> {
    guarded(py, "running an item", move |ctx| {
        let plan = plan_of(&plan_json)?;
        let item = vidprep::manifest::ManifestItem { line, plan };
        let mut options = batch_options(out_dir, ctx);
        options.resume = resume;
        options.codec_threads = codec_threads;
        options.origin = manifest;
        let notices = Notices::default();
        let report = vidprep::batch::run_item(&item, &options, &notices)?;
        Ok((
            serde_json::to_string(&report).expect("a report serialises"),
            notices.into_vec(),
        ))
    })
    .and_then(|(report, notices)| {
        warn_all(py, notices)?;
        Ok(report)
    })
}

/// `clean_item(out_dir, id, manifest)`: removes what a stopped (killed) holder of item `id`
/// left (its lock and temporaries), as the next run of the item would.
#[pyfunction]
#[pyo3(signature = (out_dir, id, manifest=None))]
fn clean_item(
    py: Python<'_>,
    out_dir: PathBuf,
    id: String,
    manifest: Option<PathBuf>,
) -> PyResult<()> {
    guarded(py, "cleaning an item", move |ctx| {
        Ok(vidprep::batch::clean_item(
            &out_dir,
            &id,
            manifest.as_deref(),
            &ctx.settings,
        )?)
    })
}

/// `write_report(out_dir, report_lines)`: merges the report lines (JSON, as `run_item`
/// returns them) into `out_dir/report.jsonl` under its advisory lock (a line for the same item
/// replaced, other drivers' lines kept), sorted by manifest line, written atomically; returns
/// its path. A torn final line found there is left out with a `RuntimeWarning`.
#[pyfunction]
fn write_report(py: Python<'_>, out_dir: PathBuf, report_lines: Vec<String>) -> PyResult<String> {
    let (path, notices) = guarded(py, "writing a report", move |_| {
        let reports = report_lines
            .iter()
            .map(|l| serde_json::from_str::<ItemReport>(l))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| PyErrText::Usage(format!("bad report line: {e}")))?;
        let notices = std::sync::Mutex::new(Vec::new());
        let path = vidprep::batch::merge_report(&out_dir, None, &reports, &|m: &str| {
            notices
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(m.to_string())
        })?;
        let notices = notices.into_inner().unwrap_or_else(|e| e.into_inner());
        Ok((path.display().to_string(), notices))
    })?;
    warn_all(py, notices)?;
    Ok(path)
}

/// `normalize_plan(plan_json)`: the plan checked and in its canonical form (what sidecars
/// record), as JSON.
#[pyfunction]
fn normalize_plan(py: Python<'_>, plan_json: String) -> PyResult<String> {
    guarded(py, "checking a plan", move |_| {
        let plan = plan_of(&plan_json)?;
        let normalized = plan.normalized(&ExecOptions::default().defaults);
        Ok(serde_json::to_string(&normalized).expect("a plan serialises"))
    })
}

/// `check_plan(plan_json)`: the plan as the library reads it (defaults filled in only where
/// serde fills them), as JSON; raises `UsageError` when it is not a valid manifest line.
#[pyfunction]
fn check_plan(py: Python<'_>, plan_json: String) -> PyResult<String> {
    guarded(py, "checking a plan", move |_| {
        let plan = plan_of(&plan_json)?;
        Ok(serde_json::to_string(&plan).expect("a plan serialises"))
    })
}

/// The sampler names the library knows (`uniform`, `lmms-eval`, `qwen`, ...).
#[pyfunction]
fn samplers() -> Vec<&'static str> {
    vidprep::plan::Sampler::names().to_vec()
}

/// The `vidprep` command line run in this process on `argv` (the program name first), its
/// exit code returned: the `vidprep` command of a package built without the bundled binary
/// (`pip install ./python`). The GIL is released while it runs; Ctrl-C and SIGTERM are the
/// command line's own (its handler replaces Python's, as the process is the command).
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    let args: Vec<std::ffi::OsString> = argv.into_iter().map(Into::into).collect();
    detach(py, None, move || vidprep_cli::main_with(args))
}

#[pymodule]
fn _vidprep(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // FFmpeg's log level is FFmpeg's own process-wide state: set once, at import.
    vidprep::media::set_ffmpeg_log(vidprep::call::FfmpegLog::from_text(
        std::env::var("VIDPREP_FFMPEG_LOG").ok().as_deref(),
    ));
    m.add("VidprepError", py.get_type::<VidprepError>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("OutputError", py.get_type::<OutputError>())?;
    m.add("EncodeError", py.get_type::<EncodeError>())?;
    m.add("TrackerError", py.get_type::<TrackerError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("CancelledError", py.get_type::<CancelledError>())?;
    m.add_function(wrap_pyfunction!(probe, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(sample_plan, m)?)?;
    m.add_function(wrap_pyfunction!(execute_plan, m)?)?;
    m.add_function(wrap_pyfunction!(run_manifest, m)?)?;
    m.add_function(wrap_pyfunction!(read_manifest_items, m)?)?;
    m.add_function(wrap_pyfunction!(run_item, m)?)?;
    m.add_function(wrap_pyfunction!(clean_item, m)?)?;
    m.add_function(wrap_pyfunction!(write_report, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_plan, m)?)?;
    m.add_function(wrap_pyfunction!(check_plan, m)?)?;
    m.add_function(wrap_pyfunction!(samplers, m)?)?;
    m.add_function(wrap_pyfunction!(error_classes, m)?)?;
    Ok(())
}
