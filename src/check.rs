//! `vidprep check`: proves, source by source, that vidprep reads a video exactly as a plain
//! FFmpeg decode does. The reference is `crate::media::reference` (every frame decoded in
//! order, no frame table, no seek); against it each way vidprep reads is compared: the frame
//! table (frame count, each frame's timestamp and time, the time origin), the time-to-frame
//! mapping (`shown_at`, `first_at_or_after`, and a reader's seek to a time), a sequential read
//! (every frame with `full`, or on a short video), seeks to sampled frames (evenly spread, the
//! ends, keyframes and the frames before them), a cut's span read from a seek, and the sparse
//! reader over the sample (over every frame with `full`). Pixels are compared by the MD5 of
//! each frame's YUV 4:2:0 planes, so only the MD5s of the reference are kept.
//!
//! A frame table that the decoder proves wrong is rebuilt by decoding, as every request does
//! (the executor's rerun), and the check goes on with the rebuilt one, saying so.
//!
//! It reads its sources with readers of its own, not through the executor's stream
//! (`crate::exec::read_stream`) as every other command does, on purpose: it is the
//! independent oracle of that reading, so it must not share the machinery it checks.
//!
//! Each source is checked on a thread of its own under a cancellation token of its own and a
//! time limit: at the limit its token is cancelled (every frame loop and FFmpeg's I/O stop at
//! their next check); a source whose work does not stop within `GRACE` is reported as timed
//! out and left behind, so a hostile file always gets an answer. Sources run `jobs` at a time.

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::media::frame::SizeChange;
pub use crate::profiles::mirrored_package;
pub use crate::records::check_report::{
    CheckReport, Compared, DamageFacts, Difference, MendedTimestamps, ReferenceFrame, SourceCheck,
    TableFacts, Verdict,
};

use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::frames::pipeline::{FrameSource, Progress};
use crate::media::decode::{DecodeOptions, FrameReader};
use crate::media::reference::{self, yuv420_md5, Reference};
use crate::media::source::Source;
use crate::media::table::{FrameTable, TableCache};
use crate::vocab::time::Time;

/// The default time limit of one source.
pub const DEFAULT_CHECK_TIME_LIMIT: Duration = Duration::from_secs(900);

/// How long a source's work may take to stop after its time limit before it is left behind.
const GRACE: Duration = Duration::from_secs(5);

/// A video of at most this many frames is read sequentially in whole even without `full`.
const SHORT_VIDEO_FRAMES: usize = 1000;

/// Differences listed in detail per source (the rest are counted).
const MAX_LISTED: usize = 50;

/// How [`check_sources`] checks.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CheckOptions {
    /// Compare every frame's pixels in a sequential read and in the sparse reader (default:
    /// a sample, and a sequential read of short videos only).
    pub full: bool,
    /// Evenly spread frames that seeks and the sparse reader go to (besides the ends,
    /// keyframes and the frames before them). Default 32.
    pub samples: usize,
    /// Time limit of one source (default [`DEFAULT_CHECK_TIME_LIMIT`]).
    pub time_limit: Duration,
    /// Sources checked at a time (default 1).
    pub jobs: usize,
    /// Decoder threads of one source's reads (0: as a request: FFmpeg's own count with one
    /// job, the cores divided among the jobs with more).
    pub threads: usize,
    /// Add the reference's frames (timestamp, MD5, damage) to each source's report.
    pub list_frames: bool,
    /// What stops the whole check (the CLI's Ctrl-C); each source is read under a token of
    /// its own besides (its time limit). Default: a fresh token.
    pub cancel: crate::call::CancelToken,
    /// Network timeouts and the download limit of the reads (see [`crate::call::Settings`]).
    pub settings: crate::call::Settings,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            full: false,
            samples: 32,
            time_limit: DEFAULT_CHECK_TIME_LIMIT,
            jobs: 1,
            threads: 0,
            list_frames: false,
            cancel: crate::call::CancelToken::new(),
            settings: crate::call::Settings::default(),
        }
    }
}

impl DamageFacts {
    fn is_empty(&self) -> bool {
        self.reference_frames.is_empty()
            && self.reported_frames.is_empty()
            && self.rejected_packets == 0
            && self.read_error.is_none()
            && self.table.is_none()
    }
}

impl SourceCheck {
    fn new(source: &Source) -> SourceCheck {
        SourceCheck {
            source: source.path().display().to_string(),
            verdict: Verdict::Exact,
            action: String::new(),
            seconds: 0.0,
            reference_frames: None,
            table: None,
            compared: Compared::default(),
            damage: DamageFacts::default(),
            differences: Vec::new(),
            differences_total: 0,
            timestamps: None,
            error: None,
            size_changes: Vec::new(),
            frames: None,
        }
    }

    fn differ(
        &mut self,
        read: &str,
        what: &str,
        frame: Option<usize>,
        expected: String,
        found: String,
    ) {
        self.differences_total += 1;
        if self.differences.len() < MAX_LISTED {
            self.differences.push(Difference {
                read: read.into(),
                what: what.into(),
                frame,
                expected,
                found,
            });
        }
    }

    /// The verdict and the action, from what was found.
    fn conclude(&mut self) {
        let path = &self.source;
        if let Some(e) = &self.error {
            if self.verdict != Verdict::TimedOut {
                self.verdict = Verdict::Failed;
            }
            self.action = match self.verdict {
                Verdict::TimedOut => format!(
                    "not checked within the time limit: give a longer one (--time-limit), or check {path} with `vidprep probe --count-frames` first"
                ),
                _ => format!("vidprep refuses this source: {e}"),
            };
            return;
        }
        if self.differences_total > 0 {
            self.verdict = Verdict::Differs;
            self.action = "vidprep's outputs from this source could hold frames other than a plain decode's: check the differences (a bug to report with this report)".into();
        } else if !self.damage.is_empty() {
            self.verdict = Verdict::Damaged;
            let frames = &self.damage.reported_frames;
            self.action = if frames.is_empty() {
                "vidprep reads the frames a plain decode gives and reports the damage in every sidecar; --strict refuses the source".into()
            } else {
                format!(
                    "vidprep lists {} damaged frame{} (first: frame {}) in every sidecar and warns; --strict refuses the source",
                    frames.len(),
                    if frames.len() == 1 { "" } else { "s" },
                    frames[0]
                )
            };
        } else if let Some(m) = &self.timestamps {
            self.verdict = Verdict::Mended;
            self.action = format!(
                "vidprep reads the frames and pixels a plain decode gives; the stream's timestamps are out of order from frame {} (its time {:.3}s), where vidprep keeps one increasing clock ({:.3}s): {} frame{}' times in every output and sidecar are vidprep's, not the stream's",
                m.first_frame,
                m.stream_time_s,
                m.vidprep_time_s,
                m.frames,
                if m.frames == 1 { "'s" } else { "s" }
            );
        } else {
            self.verdict = Verdict::Exact;
            self.action = "vidprep reads this source exactly".into();
        }
    }
}

/// What a source's thread tells the caller's.
enum Message {
    Length(u64),
    Advance(u64),
    Done(usize, Box<SourceCheck>),
}

/// Checks every source (see the module's documentation), `options.jobs` at a time, each
/// within `options.time_limit`. `progress` counts frames (its length grows as each source's
/// table is known). Fails only when the call is cancelled (the caller's token, or `progress`
/// returning false); a source that cannot be read is a `failed` check in the report.
pub fn check_sources(
    sources: &[Source],
    options: &CheckOptions,
    progress: &mut dyn Progress,
) -> Result<CheckReport> {
    let caller = &options.cancel;
    let jobs = options.jobs.clamp(1, sources.len().max(1));
    // The reads decode as a request does: one source alone with FFmpeg's own thread count
    // (`ExecOptions::default()`), several at a time with the cores divided among them (a
    // batch of as many jobs). The count matters: a damaged stream's concealment depends on it.
    let threads = match (options.threads, jobs) {
        (0, 1) => 0,
        (0, _) => (crate::call::host::worker_count(0) / jobs).max(1),
        (t, _) => t,
    };
    let (tx, rx) = mpsc::channel::<Message>();
    let mut results: Vec<Option<SourceCheck>> = vec![None; sources.len()];
    // Running: (source index, its token, when it started, when it was cancelled).
    let mut running: Vec<(usize, crate::call::CancelToken, Instant, Option<Instant>)> = Vec::new();
    let mut next = 0;
    let mut length = 0u64;
    let outcome = loop {
        while running.len() < jobs && next < sources.len() {
            let i = next;
            next += 1;
            let token = crate::call::CancelToken::new();
            // The source's reads work for a call of their own: its token (the time limit's),
            // the check's settings.
            let call = CallContext {
                cancel: token.clone(),
                settings: options.settings.clone(),
                tally: None,
                held: None,
            };
            let (source, options, tx) = (sources[i].clone(), options.clone(), tx.clone());
            std::thread::spawn(move || {
                let thread_token = call.cancel.clone();
                let report = |m: Message| {
                    let _ = tx.send(m);
                };
                let started = Instant::now();
                let mut check = catch_unwind(AssertUnwindSafe(|| {
                    check_one(&source, &options, threads, &mut |m| report(m), &call)
                }))
                .unwrap_or_else(|panic| {
                    let mut c = SourceCheck::new(&source);
                    let text = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    c.error = Some(format!(
                        "{}: vidprep panicked while checking it (a bug; please report it): {text}",
                        source.path().display()
                    ));
                    c
                });
                check.seconds = started.elapsed().as_secs_f64();
                // Stopped by its limit, wherever it was (a read cut short looks like a
                // difference, and must never be called one): the check did not finish.
                if thread_token.is_cancelled() {
                    check.verdict = Verdict::TimedOut;
                    check.error.get_or_insert_with(String::new);
                }
                check.conclude();
                report(Message::Done(i, Box::new(check)));
            });
            running.push((i, token, Instant::now(), None));
        }
        if running.is_empty() {
            break Ok(());
        }
        if caller.is_cancelled() {
            break Err(Error::Cancelled);
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Message::Length(n)) => {
                length += n;
                progress.set_length(length);
            }
            Ok(Message::Advance(n)) => {
                if !progress.advance(n) {
                    break Err(Error::Cancelled);
                }
            }
            Ok(Message::Done(i, check)) => {
                running.retain(|r| r.0 != i);
                let mut check = *check;
                if check.verdict == Verdict::TimedOut {
                    check.error = Some(time_limit_text(&sources[i], options.time_limit));
                    check.conclude();
                }
                results[i] = Some(check);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break Ok(()),
        }
        let now = Instant::now();
        let mut abandoned = Vec::new();
        for (i, token, started, cancelled_at) in running.iter_mut() {
            match cancelled_at {
                None if now.duration_since(*started) >= options.time_limit => {
                    token.cancel();
                    *cancelled_at = Some(now);
                }
                Some(at) if now.duration_since(*at) >= GRACE => {
                    // The work did not stop: answer without it (its thread ends on its own).
                    let mut c = SourceCheck::new(&sources[*i]);
                    c.verdict = Verdict::TimedOut;
                    c.seconds = now.duration_since(*started).as_secs_f64();
                    c.error = Some(time_limit_text(&sources[*i], options.time_limit));
                    c.conclude();
                    results[*i] = Some(c);
                    abandoned.push(*i);
                }
                _ => {}
            }
        }
        running.retain(|r| !abandoned.contains(&r.0));
    };
    if outcome.is_err() {
        for (_, token, _, _) in &running {
            token.cancel();
        }
    }
    outcome?;
    let sources: Vec<SourceCheck> = results.into_iter().flatten().collect();
    Ok(CheckReport {
        exact: sources.iter().all(|s| s.verdict == Verdict::Exact),
        sources,
    })
}

fn time_limit_text(source: &Source, limit: Duration) -> String {
    format!(
        "{}: the check did not finish within its time limit of {} s",
        source.path().display(),
        limit.as_secs_f64()
    )
}

/// The sources of a manifest's items (each once, in order; with its `source_fps`), an item's
/// GOT-10k needle sequence among them (its frames are read too), and its bad lines.
pub fn manifest_sources(
    manifest: &std::path::Path,
) -> Result<(Vec<Source>, Vec<crate::batch::manifest::BadItem>)> {
    let read = crate::batch::manifest::read_manifest(manifest)?;
    let mut seen = std::collections::HashSet::new();
    let mut sources = Vec::new();
    for item in &read.items {
        let plan: &crate::Plan = &item.plan;
        let source = Source::new(plan.source.clone(), plan.source_fps);
        if seen.insert((plan.source.clone(), plan.source_fps.map(|r| r.to_string()))) {
            sources.push(source);
        }
        // The needle's frames are read as well (a sequence brings its own rate).
        if let Some(insert) = &plan.insert {
            if seen.insert((insert.sequence.clone(), None)) {
                sources.push(Source::new(insert.sequence.clone(), None));
            }
        }
    }
    Ok((sources, read.bad))
}

/// One source's check, on its own thread, for the call `ctx` (under its own token).
fn check_one(
    source: &Source,
    options: &CheckOptions,
    threads: usize,
    tell: &mut dyn FnMut(Message),
    ctx: &CallContext,
) -> SourceCheck {
    let mut check = SourceCheck::new(source);
    if let Err(e) = check_into(source, options, threads, tell, &mut check, ctx) {
        check.error = Some(e.to_string());
    }
    check
}

/// The frames to seek to: evenly spread, the ends, keyframes and the frames before them.
fn sample_positions(table: &FrameTable, n: usize, samples: usize) -> Vec<usize> {
    let mut at = BTreeSet::new();
    if n == 0 {
        return Vec::new();
    }
    at.insert(0);
    at.insert(n - 1);
    for k in 0..samples {
        at.insert(k * (n - 1) / samples.max(1));
    }
    let mut keyframes = 0;
    for i in 1..n.min(table.len()) {
        if table.entry(i).key {
            at.insert(i);
            at.insert(i - 1);
            keyframes += 1;
            if keyframes >= samples / 2 + 1 {
                break;
            }
        }
    }
    at.into_iter().collect()
}

fn hex(md5: &[u8; 16]) -> String {
    md5.iter().map(|b| format!("{b:02x}")).collect()
}

fn secs(t: Time) -> String {
    format!("{} s", crate::vocab::time::decimal_text(t))
}

/// The time of reference frame `i` relative to the reference's origin.
fn ref_time(reference: &Reference, origin: Time, i: usize) -> Option<Time> {
    let tb = reference.time_base;
    reference.frames[i]
        .pts
        .map(|p| Time::from_pts(p, tb.num, tb.den) - origin)
}

fn check_into(
    source: &Source,
    options: &CheckOptions,
    threads: usize,
    tell: &mut dyn FnMut(Message),
    check: &mut SourceCheck,
    ctx: &CallContext,
) -> Result<()> {
    let tables = TableCache::new();
    let mut table = tables.table_in(source, ctx)?;
    let estimate = table.len() as u64;
    tell(Message::Length(estimate));
    let reference = reference::decode(
        source,
        |_| {
            if ctx.cancelled() {
                return Err(Error::Cancelled);
            }
            tell(Message::Advance(1));
            Ok(())
        },
        ctx,
    )?;
    let n = reference.frames.len();
    check.reference_frames = Some(n);
    if options.list_frames {
        check.frames = Some(
            reference
                .frames
                .iter()
                .map(|f| ReferenceFrame {
                    pts: f.pts,
                    md5: hex(&f.md5),
                    damaged: f.damaged,
                })
                .collect(),
        );
    }
    check.damage.reference_frames = (0..n).filter(|&i| reference.frames[i].damaged).collect();
    check.damage.rejected_packets = reference.rejected_packets;
    check.damage.read_error = reference.read_error.clone();
    check.size_changes = reference
        .size_changes
        .iter()
        .map(|&(frame, from, to)| SizeChange::new(frame, from, to))
        .collect();
    // The reference's time 0: the container's start (ffmpeg's `-ss 0`), or its first frame.
    let tb = reference.time_base;
    let first_pts = reference.frames.iter().find_map(|f| f.pts);
    let ref_origin = reference
        .start
        .or_else(|| first_pts.map(|p| Time::from_pts(p, tb.num, tb.den)));
    let mut rebuilt_at = None;
    let mut reported: BTreeSet<usize> = BTreeSet::new();
    // The reads, again with a table rebuilt by decoding when the decoder proves it wrong.
    for attempt in 0..2 {
        let mut round = SourceCheck::new(source);
        let sample = sample_positions(&table, n.min(table.len()), options.samples);
        let sequential = options.full || n <= SHORT_VIDEO_FRAMES;
        let sparse_targets: Vec<usize> = if options.full {
            (0..n.min(table.len())).collect()
        } else {
            sample.clone()
        };
        let more =
            (if sequential { n } else { 0 } + 3 * sample.len() + sparse_targets.len()) as u64;
        tell(Message::Length(more));
        let result = read_all(
            source,
            &table,
            &reference,
            ref_origin,
            threads,
            &sample,
            sequential,
            &sparse_targets,
            tell,
            &mut round,
            &mut reported,
            ctx,
        );
        match result {
            Err(Error::TableMismatch { frame, .. }) if attempt == 0 => {
                // As every request does: the table is rebuilt by decoding and the work redone.
                tables.distrust_in(source, ctx);
                table = tables.table_in(source, ctx)?;
                rebuilt_at = Some(frame);
                reported.clear();
                continue;
            }
            Err(Error::Cancelled) => return Err(Error::Cancelled),
            Err(e) => {
                round.differ("read", "error", None, "the frames".into(), e.to_string());
            }
            Ok(()) => {}
        }
        check.compared = round.compared;
        let mut listed = round.damage.listed_differing_frames;
        listed.sort_unstable();
        listed.dedup();
        check.damage.listed_differing_frames = listed;
        check.differences = round.differences;
        check.differences_total = round.differences_total;
        check.timestamps = round.timestamps;
        break;
    }
    check.table = Some(TableFacts {
        frames: table.len(),
        times_from: table.times_from,
        rebuilt_at_frame: rebuilt_at,
    });
    if !table.damage.is_empty() {
        check.damage.table = Some(table.damage.summary());
    }
    // Damage the reference found that vidprep's reads did not report.
    let missed: Vec<usize> = check
        .damage
        .reference_frames
        .iter()
        .copied()
        .filter(|i| !reported.contains(i) && !table.damage.suspect(*i))
        .collect();
    check.damage.reported_frames = reported.into_iter().collect();
    // (Only frames that were read can be reported: a sampled check reads some.)
    let read_all_frames = check.compared.sequential == n;
    for i in missed {
        if read_all_frames {
            check.differ(
                "sequential",
                "damage",
                Some(i),
                "damaged (the decoder concealed errors)".into(),
                "not listed as damaged".into(),
            );
        }
    }
    Ok(())
}

/// One frame a read gave (`index`, marked `damaged`, pixels hashing to `md5`) where frame
/// `want` was asked for, compared with the reference's frame `want`.
#[allow(clippy::too_many_arguments)]
fn compare_frame(
    check: &mut SourceCheck,
    reported: &mut BTreeSet<usize>,
    reference: &Reference,
    read: &str,
    want: usize,
    index: usize,
    damaged: bool,
    md5: [u8; 16],
) {
    if damaged {
        reported.insert(index);
    }
    if index != want {
        check.differ(
            read,
            "frame",
            Some(want),
            format!("frame {want}"),
            format!("frame {index}"),
        );
        return;
    }
    let Some(expected) = reference.frames.get(want) else {
        return;
    };
    if md5 != expected.md5 {
        if damaged {
            // Listed in the output's sidecar as damaged: what vidprep promises. (Sorted and
            // made unique once, at the end of the reads.)
            check.damage.listed_differing_frames.push(want);
        } else {
            check.differ(read, "pixels", Some(want), hex(&expected.md5), hex(&md5));
        }
    }
}

/// Every read of vidprep's, compared with the reference; `reported` gathers the frames the
/// reads marked damaged.
#[allow(clippy::too_many_arguments)]
fn read_all(
    source: &Source,
    table: &Arc<FrameTable>,
    reference: &Reference,
    ref_origin: Option<Time>,
    threads: usize,
    sample: &[usize],
    sequential: bool,
    sparse_targets: &[usize],
    tell: &mut dyn FnMut(Message),
    check: &mut SourceCheck,
    reported: &mut BTreeSet<usize>,
    ctx: &CallContext,
) -> Result<()> {
    let n = reference.frames.len();
    // The table: count, timestamps, times.
    if table.len() != n {
        check.differ(
            "table",
            "count",
            None,
            format!("{n} frames"),
            format!("{} frames", table.len()),
        );
    }
    let common = n.min(table.len());
    if let Some(origin) = ref_origin {
        // The container's start is stated in microseconds (AV_TIME_BASE); the table places it
        // exactly on the stream's own ticks, so origins within a microsecond are the same.
        let apart = if table.origin() > origin {
            table.origin() - origin
        } else {
            origin - table.origin()
        };
        if apart >= Time::new(1, 1_000_000) {
            check.differ(
                "table",
                "origin",
                None,
                format!("time 0 at {}", secs(origin)),
                format!("time 0 at {}", secs(table.origin())),
            );
        }
    }
    let out_of_order = timestamps_out_of_order(reference);
    for i in 0..common {
        check.compared.times += 1;
        if let Some(p) = reference.frames[i].pts {
            if table.pts(i) != p && out_of_order[i] {
                let stream_time = ref_origin
                    .and_then(|o| ref_time(reference, o, i))
                    .map_or(f64::NAN, |t| t.as_secs_f64());
                let mended = check.timestamps.get_or_insert(MendedTimestamps {
                    first_frame: i,
                    stream_time_s: stream_time,
                    vidprep_time_s: table.time(i).as_secs_f64(),
                    frames: 0,
                });
                mended.frames += 1;
            } else if table.pts(i) != p {
                let tb = reference.time_base;
                check.differ(
                    "table",
                    "time",
                    Some(i),
                    format!("pts {p} ({})", secs(Time::from_pts(p, tb.num, tb.den))),
                    format!(
                        "pts {} ({})",
                        table.pts(i),
                        secs(Time::from_pts(table.pts(i), tb.num, tb.den))
                    ),
                );
            }
        }
    }
    // The time-to-frame mapping, at the reference's times of the sample.
    if let Some(origin) = ref_origin {
        for &i in sample {
            // (A mended time is the stream's no longer: looked up by vidprep's below.)
            if out_of_order.get(i).copied().unwrap_or(false) && check.timestamps.is_some() {
                continue;
            }
            let Some(t) = ref_time(reference, origin, i) else {
                continue;
            };
            // (Relative to the table's own origin: a different origin is reported above.)
            let t = t + origin - table.origin();
            check.compared.time_lookups += 1;
            let shown = table.shown_at(t);
            let first = table.first_at_or_after(t);
            if shown != Some(i) || first != i {
                check.differ(
                    "time_to_frame",
                    "frame",
                    Some(i),
                    format!("frame {i} at {}", secs(t)),
                    format!(
                        "shown: {}, first at or after: frame {first}",
                        shown.map_or("none".into(), |s| format!("frame {s}"))
                    ),
                );
            }
        }
    }
    let options = DecodeOptions {
        upright: false,
        threads,
        strict: false,
        skip_loop_filter: false,
    };
    let mut compare =
        |check: &mut SourceCheck, read: &str, want: usize, frame: &crate::media::Frame| {
            let md5 = yuv420_md5(&frame.image);
            compare_frame(
                check,
                reported,
                reference,
                read,
                want,
                frame.index,
                frame.damaged,
                md5,
            );
        };
    // A sequential read from the start.
    if sequential {
        let mut reader =
            FrameReader::open_with_table_in(source, options.clone(), table.clone(), ctx)?;
        let mut i = 0;
        while let Some(frame) = reader.next_frame()? {
            if ctx.cancelled() {
                return Err(Error::Cancelled);
            }
            compare(check, "sequential", i, &frame);
            check.compared.sequential += 1;
            tell(Message::Advance(1));
            i += 1;
        }
        if i != n {
            check.differ(
                "sequential",
                "count",
                None,
                format!("{n} frames"),
                format!("{i} frames"),
            );
        }
    }
    let common = n.min(table.len());
    // Seeks to the sample, last first (so most seeks go backwards), then forwards.
    let mut reader = FrameReader::open_with_table_in(source, options.clone(), table.clone(), ctx)?;
    let mut order: Vec<usize> = sample
        .iter()
        .copied()
        .filter(|&i| i < common)
        .rev()
        .collect();
    let half = order.len() / 2;
    order[half..].reverse();
    for &i in &order {
        reader.seek_to_index(i)?;
        match reader.next_frame()? {
            Some(frame) => compare(check, "seek", i, &frame),
            None => check.differ(
                "seek",
                "frame",
                Some(i),
                format!("frame {i}"),
                "the end of the video".into(),
            ),
        }
        check.compared.seeks += 1;
        tell(Message::Advance(1));
    }
    // Seeks to the sample's times.
    if let Some(origin) = ref_origin {
        for &i in &order {
            // (On vidprep's mended clock a frame is sought at vidprep's time of it.)
            let mended = check.timestamps.is_some() && out_of_order.get(i) == Some(&true);
            let t = if mended {
                table.time(i)
            } else {
                let Some(t) = ref_time(reference, origin, i) else {
                    continue;
                };
                t + origin - table.origin()
            };
            let landed = reader.seek_to_time(t)?;
            check.compared.seek_times += 1;
            tell(Message::Advance(1));
            if landed != i {
                check.differ(
                    "seek_time",
                    "frame",
                    Some(i),
                    format!("frame {i} at {}", secs(t)),
                    format!("frame {landed}"),
                );
                continue;
            }
            match reader.next_frame()? {
                Some(frame) => compare(check, "seek_time", i, &frame),
                None => check.differ(
                    "seek_time",
                    "frame",
                    Some(i),
                    format!("frame {i}"),
                    "the end of the video".into(),
                ),
            }
        }
    }
    // A cut's span: from a frame that is not a keyframe, about two GOPs long.
    if common > 1 {
        let start = (common / 3..common)
            .find(|&i| !table.entry(i).key)
            .unwrap_or(common / 3);
        let len = sample.len().clamp(2, 64).min(common - start);
        reader.seek_to_index(start)?;
        for want in start..start + len {
            match reader.next_frame()? {
                Some(frame) => compare(check, "span", want, &frame),
                None => {
                    check.differ(
                        "span",
                        "frame",
                        Some(want),
                        format!("frame {want}"),
                        "the end of the video".into(),
                    );
                    break;
                }
            }
            check.compared.span += 1;
            tell(Message::Advance(1));
        }
    }
    drop(reader);
    // The sparse reader, on two workers where the table allows.
    let targets: Vec<usize> = sparse_targets
        .iter()
        .copied()
        .filter(|&i| i < common)
        .collect();
    if !targets.is_empty() {
        let mut sparse = crate::frames::sparse::SparseSource::start_with(
            source,
            table.clone(),
            &targets,
            2,
            options,
            None,
            ctx,
        )?;
        let mut seen = 0;
        while let Some(frame) = sparse.next_frame()? {
            if ctx.cancelled() {
                return Err(Error::Cancelled);
            }
            let want = frame.origin.index;
            let as_frame = crate::media::Frame {
                index: frame.index,
                pts: frame.origin.pts,
                time: frame.time,
                image: frame.image,
                damaged: frame.damaged,
                rgb: None,
            };
            compare(check, "sparse", want, &as_frame);
            seen += 1;
            check.compared.sparse += 1;
            tell(Message::Advance(1));
        }
        if seen != targets.len() {
            check.differ(
                "sparse",
                "count",
                None,
                format!("{} frames", targets.len()),
                format!("{seen} frames"),
            );
        }
    }
    Ok(())
}

/// For each reference frame: whether it is on vidprep's mended clock, that is at or after the
/// first frame where the stream's timestamps are out of order (no later than a frame before
/// it, or no earlier than one after it): once the stream's clock went back, vidprep's runs on
/// from its own (a third segment whose times pass the first's again is still behind it).
/// Frames without a timestamp are in order.
fn timestamps_out_of_order(reference: &Reference) -> Vec<bool> {
    let pts: Vec<Option<i64>> = reference.frames.iter().map(|f| f.pts).collect();
    let mut out = vec![false; pts.len()];
    let mut max_before: Option<i64> = None;
    for (i, p) in pts.iter().enumerate() {
        if let (Some(p), Some(m)) = (p, max_before) {
            out[i] |= *p <= m;
        }
        max_before = max_before.max(*p);
    }
    let mut min_after: Option<i64> = None;
    for (i, p) in pts.iter().enumerate().rev() {
        if let (Some(p), Some(m)) = (p, min_after) {
            out[i] |= *p >= m;
        }
        if let Some(p) = p {
            min_after = Some(min_after.map_or(*p, |m| m.min(*p)));
        }
    }
    if let Some(first) = out.iter().position(|&o| o) {
        out[first..].fill(true);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::table::FrameEntry;

    fn reference_of(md5s: &[[u8; 16]]) -> Reference {
        Reference {
            frames: md5s
                .iter()
                .enumerate()
                .map(|(i, m)| reference::RefFrame {
                    pts: Some(i as i64),
                    md5: *m,
                    damaged: false,
                })
                .collect(),
            time_base: crate::vocab::Ratio::new(1, 25),
            start: Some(Time::new(0, 1)),
            rejected_packets: 0,
            demuxer_errors: 0,
            read_error: None,
            size_changes: Vec::new(),
        }
    }

    #[test]
    fn timestamps_out_of_order_from_the_first_that_goes_back_or_jumps_ahead() {
        let of = |pts: &[i64]| {
            let mut r = reference_of(&vec![[0u8; 16]; pts.len()]);
            for (f, &p) in r.frames.iter_mut().zip(pts) {
                f.pts = Some(p);
            }
            timestamps_out_of_order(&r)
        };
        assert_eq!(of(&[0, 1, 2, 3]), [false; 4]);
        // A lone jump ahead: from it on.
        assert_eq!(of(&[0, 1, 9, 3, 4]), [false, false, true, true, true]);
        // A restart at 0: from the first frame a later one is not after (frame 0 itself, whose
        // time comes again).
        assert_eq!(of(&[0, 1, 2, 0, 1]), [true; 5]);
        assert_eq!(
            of(&[0, 1, 2, 3, 1, 2]),
            [false, true, true, true, true, true]
        );
        // A repeat.
        assert_eq!(of(&[0, 1, 1, 2]), [false, true, true, true]);
    }

    #[test]
    fn a_wrong_frame_fed_to_the_comparer_is_found() {
        let reference = reference_of(&[[1; 16], [2; 16], [3; 16]]);
        let mut check = SourceCheck::new(&Source::from("x.mp4"));
        let mut reported = BTreeSet::new();
        // The right frames: nothing differs.
        for i in 0..3 {
            let md5 = reference.frames[i].md5;
            compare_frame(
                &mut check,
                &mut reported,
                &reference,
                "seek",
                i,
                i,
                false,
                md5,
            );
        }
        assert_eq!(check.differences_total, 0);
        // Frame 2's pixels given for frame 1, and frame 0 given where frame 2 was asked.
        compare_frame(
            &mut check,
            &mut reported,
            &reference,
            "seek",
            1,
            1,
            false,
            [3; 16],
        );
        compare_frame(
            &mut check,
            &mut reported,
            &reference,
            "sparse",
            2,
            0,
            true,
            [1; 16],
        );
        assert_eq!(check.differences_total, 2);
        let d = &check.differences;
        assert_eq!(
            (d[0].read.as_str(), d[0].what.as_str(), d[0].frame),
            ("seek", "pixels", Some(1))
        );
        assert_eq!(d[0].expected, "02".repeat(16));
        assert_eq!(d[0].found, "03".repeat(16));
        assert_eq!(
            (d[1].read.as_str(), d[1].what.as_str(), d[1].frame),
            ("sparse", "frame", Some(2))
        );
        assert_eq!(d[1].found, "frame 0");
        assert!(reported.contains(&0));
        check.conclude();
        assert_eq!(check.verdict, Verdict::Differs);
    }

    #[test]
    fn a_report_names_every_difference_and_counts_past_the_list() {
        let mut c = SourceCheck::new(&Source::from("x.mp4"));
        for i in 0..(MAX_LISTED + 7) {
            c.differ("seek", "pixels", Some(i), "a".into(), "b".into());
        }
        c.conclude();
        assert_eq!(c.verdict, Verdict::Differs);
        assert_eq!(c.differences.len(), MAX_LISTED);
        assert_eq!(c.differences_total, MAX_LISTED + 7);
        let mut clean = SourceCheck::new(&Source::from("x.mp4"));
        clean.conclude();
        assert_eq!(clean.verdict, Verdict::Exact);
        clean.damage.reported_frames = vec![4];
        clean.conclude();
        assert_eq!(clean.verdict, Verdict::Damaged);
        assert!(clean.action.contains("frame 4"), "{}", clean.action);
    }

    #[test]
    fn samples_cover_the_ends_and_keyframe_edges() {
        let entries = (0..100)
            .map(|i| FrameEntry {
                pts: i,
                dts: Some(i),
                duration: 1,
                key: i % 25 == 0,
                pos: -1,
            })
            .collect();
        let table =
            FrameTable::from_entries(crate::vocab::Ratio::new(1, 25), entries, 0, None, None);
        let s = sample_positions(&table, 100, 4);
        for want in [0, 24, 25, 49, 50, 99] {
            assert!(s.contains(&want), "{s:?}");
        }
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }
}
