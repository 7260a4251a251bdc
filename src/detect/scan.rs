//! The analysis pass of `detect`: every frame of the source decoded once (deblocking filter
//! skipped, the picture shrunk to a thumbnail right away) and reduced to a few numbers per
//! frame ([`FrameStats`]). Long videos are split at keyframes into chunks that decode on
//! several threads at once; a chunk decodes a little past its end so that the next chunk's
//! first frames have the history their statistics need. Memory holds one thumbnail history
//! per worker and the statistics (a few dozen bytes a frame), never the video.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::frames::pipeline::FrameSource;
use crate::frames::pipeline::Progress;
use crate::frames::stages::stream::ProcessedStream;
use crate::media::table::{FrameTable, Identity, UsedInput};
use crate::media::{Converter, Picture, PixelFormat, Scaling};
use crate::vocab::time::Time;

/// The lags (in frames) at which a frame is compared with an earlier one to find dissolves:
/// a dissolve of `L` frames shows best at the smallest lag at or above `L`.
pub const LAGS: [usize; 4] = [6, 12, 24, 48];

/// History a frame's statistics need: the largest lag.
const HISTORY: usize = LAGS[LAGS.len() - 1];

/// Width of the thumbnails the statistics are computed on (height keeps the aspect).
pub const THUMB_WIDTH: u32 = 128;

/// A pixel whose luma changes by more than this (0-255) between frames counts as moving.
pub const MOTION_NOISE: u8 = 12;

/// What the analysis pass keeps of one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameStats {
    /// 0-based frame index.
    pub index: usize,
    /// Presentation time from the source's time origin.
    pub time: Time,
    /// Mean brightness, 0 (black) to 255 (white), in full range whatever the source's range.
    pub luma: f32,
    /// Fraction of the picture at or below the black level (0-1): a black frame has nearly
    /// all of it (ffmpeg's `blackdetect` rule).
    pub dark: f32,
    /// Change from the previous frame: mean absolute difference of the thumbnails, luma
    /// weighted twice the two chroma planes, 0-255 (0 for frame 0).
    pub content: f32,
    /// Change of the luma histogram (32 bins) from the previous frame: half the L1 distance
    /// of the normalised histograms, 0 (same) to 1 (disjoint).
    pub histogram: f32,
    /// Fraction of the thumbnail (or of the region) whose luma changed by more than
    /// `MOTION_NOISE` since the previous frame, 0-1.
    pub motion: f32,
    /// For each lag `k` of `LAGS`: mean absolute luma difference from frame `index - k`.
    pub far: [f32; LAGS.len()],
    /// For each lag `k`: how far the frame `k/2` back is from the average of this frame and
    /// the frame `k` back (mean absolute luma difference): small when the stretch is a
    /// cross-fade between its ends, large when it is motion.
    pub blend: [f32; LAGS.len()],
    /// For each lag `k`: how far this frame's picture is from the frame `k` back once both
    /// are brought to the same brightness and contrast (each luma thumbnail minus its mean,
    /// divided by its standard deviation; the mean absolute difference of those, times the
    /// two standard deviations' mean, so it reads on the 0-255 scale of `far`). Near 0 for
    /// the same picture at another brightness (a brightening or darkening of one shot),
    /// about `far` for a change of picture at the same brightness.
    pub shape: [f32; LAGS.len()],
    /// For each lag `k`: the change from the frame `k` back that most of the picture has:
    /// the active picture (the union of both frames' boxes inside black bars) is cut into an
    /// 8 x 8 grid of cells, each cell's mean absolute luma difference is taken, and this is
    /// the 30th percentile of those (70% of the cells changed at least this much). About
    /// `far` when the whole picture is replaced (a cross-fade); near what motion gives when
    /// only a part changes (a caption or logo fading in over a tenth of the picture).
    pub wide: [f32; LAGS.len()],
    /// Share of the active picture (inside black bars) whose luma or colour changed by more
    /// than `MOTION_NOISE` since the previous frame, 0-1 (whole frame, whatever the
    /// region).
    pub changed: f32,
}

impl Default for FrameStats {
    fn default() -> Self {
        FrameStats {
            index: 0,
            time: Time::ZERO,
            luma: 0.0,
            dark: 0.0,
            content: 0.0,
            histogram: 0.0,
            motion: 0.0,
            far: [0.0; LAGS.len()],
            blend: [0.0; LAGS.len()],
            shape: [0.0; LAGS.len()],
            wide: [0.0; LAGS.len()],
            changed: 0.0,
        }
    }
}

/// A region of the frame (displayed pixels, `x1,y1,x2,y2`) that motion is measured in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    /// Left edge.
    pub x1: f64,
    /// Top edge.
    pub y1: f64,
    /// Right edge (excluded).
    pub x2: f64,
    /// Bottom edge (excluded).
    pub y2: f64,
}

/// One shrunk picture: luma at `w x h`, chroma at half that.
#[derive(Clone)]
struct Thumb {
    w: usize,
    h: usize,
    y: Vec<u8>,
    u: Vec<u8>,
    v: Vec<u8>,
    /// The source is limited range (16-235): luma is stretched for [`FrameStats::luma`].
    limited: bool,
    /// The active picture inside black bars (letterbox, pillarbox), `[x0, y0, x1, y1)` in
    /// luma pixels; `None` when the whole frame is black.
    active: Option<[usize; 4]>,
    /// Mean of `y`.
    mean: f32,
    /// Standard deviation of `y`, at least [`MIN_SPREAD`] (a flat picture's differences
    /// are not amplified into noise).
    spread: f32,
}

/// The least standard deviation a thumbnail's luma is normalised by.
const MIN_SPREAD: f32 = 4.0;

/// Mean and standard deviation (at least [`MIN_SPREAD`]) of a luma plane.
fn spread_of(y: &[u8]) -> (f32, f32) {
    let n = y.len().max(1) as f64;
    let (sum, squares) = y.iter().fold((0u64, 0u64), |(s, q), &v| {
        (s + u64::from(v), q + u64::from(v) * u64::from(v))
    });
    let mean = sum as f64 / n;
    let var = (squares as f64 / n - mean * mean).max(0.0);
    (mean as f32, (var.sqrt() as f32).max(MIN_SPREAD))
}

/// Mean absolute difference of two luma planes after each is brought to zero mean and unit
/// standard deviation (the change of the picture's structure, blind to brightness and
/// contrast), scaled back to luma levels by the mean of the two standard deviations.
fn shape_diff(a: &Thumb, b: &Thumb) -> f32 {
    if a.y.is_empty() || a.y.len() != b.y.len() {
        return 0.0;
    }
    let (sa, sb) = (1.0 / a.spread, 1.0 / b.spread);
    let sum: f32 =
        a.y.iter()
            .zip(&b.y)
            .map(|(&x, &y)| ((f32::from(x) - a.mean) * sa - (f32::from(y) - b.mean) * sb).abs())
            .sum();
    sum / a.y.len() as f32 * (a.spread + b.spread) / 2.0
}

/// A row or column of the thumbnail is a black bar when its mean luma (stored value) is at
/// most this, as ffmpeg's `cropdetect` (its `limit`, 24 of 255) ...
const BAR_MEAN: u32 = 24;
/// ... and no pixel of it is brighter than this (dark picture content has bright pixels).
const BAR_MAX: u8 = 48;

/// The box inside the black bars of a `w x h` luma plane, scanning in from each edge as
/// `cropdetect` does; `None` when every row is black. `limited`: black is 16, not 0.
fn active_box(y: &[u8], w: usize, h: usize, limited: bool) -> Option<[usize; 4]> {
    let floor = if limited { 0 } else { 16 };
    let bar = |values: &mut dyn Iterator<Item = u8>, len: usize| {
        let (mut sum, mut max) = (0u32, 0u8);
        for v in values {
            sum += u32::from(v);
            max = max.max(v);
        }
        // Full range: black is 0, so the limits are 16 lower.
        sum + floor * len as u32 <= BAR_MEAN * len as u32 && max <= BAR_MAX - floor as u8
    };
    let row = |r: usize| bar(&mut y[r * w..(r + 1) * w].iter().copied(), w);
    let top = (0..h).find(|&r| !row(r))?;
    let bottom = (0..h).rev().find(|&r| !row(r)).map_or(h, |r| r + 1);
    let col = |c: usize| bar(&mut (top..bottom).map(|r| y[r * w + c]), bottom - top);
    let left = (0..w).find(|&c| !col(c)).unwrap_or(0);
    let right = (0..w).rev().find(|&c| !col(c)).map_or(w, |c| c + 1);
    Some([left, top, right, bottom])
}

/// The share of the frame that the active pictures of `thumbs` cover together (their union
/// box): differences summed over the frame are divided by it, so black bars do not dilute
/// them. 1 when every thumbnail is black.
fn active_share(thumbs: &[&Thumb]) -> f32 {
    let mut union: Option<[usize; 4]> = None;
    for t in thumbs {
        if let Some(b) = t.active {
            union = Some(match union {
                None => b,
                Some(u) => [
                    u[0].min(b[0]),
                    u[1].min(b[1]),
                    u[2].max(b[2]),
                    u[3].max(b[3]),
                ],
            });
        }
    }
    let (w, h) = (thumbs[0].w, thumbs[0].h);
    match union {
        Some([x0, y0, x1, y1]) if w > 0 && h > 0 => {
            (((x1 - x0) * (y1 - y0)) as f32 / (w * h) as f32).clamp(0.05, 1.0)
        }
        _ => 1.0,
    }
}

/// Cells per side of the grid that [`FrameStats::wide`] reads.
const WIDE_GRID: usize = 8;

/// [`FrameStats::wide`]: the 30th percentile of the mean absolute luma differences of the
/// cells of an 8 x 8 grid over the union of the two frames' active pictures.
fn wide_diff(a: &Thumb, b: &Thumb) -> f32 {
    if a.y.is_empty() || a.y.len() != b.y.len() || a.w == 0 {
        return 0.0;
    }
    let [x0, y0, x1, y1] = match (a.active, b.active) {
        (Some(p), Some(q)) => [
            p[0].min(q[0]),
            p[1].min(q[1]),
            p[2].max(q[2]),
            p[3].max(q[3]),
        ],
        (Some(p), None) | (None, Some(p)) => p,
        (None, None) => [0, 0, a.w, a.h],
    };
    let (cw, ch) = (x1.saturating_sub(x0), y1.saturating_sub(y0));
    if cw == 0 || ch == 0 {
        return 0.0;
    }
    let (gx, gy) = (WIDE_GRID.min(cw), WIDE_GRID.min(ch));
    let mut cells = Vec::with_capacity(gx * gy);
    for r in 0..gy {
        let (ra, rb) = (y0 + r * ch / gy, y0 + (r + 1) * ch / gy);
        for c in 0..gx {
            let (ca, cb) = (x0 + c * cw / gx, x0 + (c + 1) * cw / gx);
            let mut sum = 0u64;
            for row in ra..rb {
                let k = row * a.w;
                sum += a.y[k + ca..k + cb]
                    .iter()
                    .zip(&b.y[k + ca..k + cb])
                    .map(|(&p, &q)| u64::from(p.abs_diff(q)))
                    .sum::<u64>();
            }
            cells.push(sum as f32 / ((rb - ra) * (cb - ca)).max(1) as f32);
        }
    }
    cells.sort_by(f32::total_cmp);
    cells[cells.len() * 3 / 10]
}

/// Options of the pass.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Parallel chunk decoders (0: one per core).
    pub workers: usize,
    /// Pixels at or below this brightness (0-255, full range) are dark.
    pub black_level: f32,
    /// Where motion is measured, as fractions of the frame's width and height (whole
    /// frame when `None`).
    pub region: Option<Region>,
}

/// Computes the statistics of every frame of `stream` (the executor's processed stream of the
/// whole source: see `crate::exec::read_stream`), in index order, for the call `ctx`. Each
/// chunk is read as the executor reads a range of a stream ([`ProcessedStream::analysis_reader`],
/// the stream's readers counting on the call's tally): the first chunk a worker reads decodes
/// from the input the stream was opened with (the table's scan), and each worker reads its next
/// chunk from the input of its last, positioned by a seek; so the source is opened once, plus at
/// most once per further worker.
pub(crate) fn scan(
    stream: &ProcessedStream,
    options: &ScanOptions,
    progress: &mut dyn Progress,
    ctx: &CallContext,
) -> Result<Vec<FrameStats>> {
    let table = stream.table.clone();
    let n = table.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let workers = crate::call::host::worker_count(options.workers);
    let chunks = plan_chunks(&table, workers);
    let single = chunks.len() == 1;
    let stop = Arc::new(AtomicBool::new(false));
    let mut out: Vec<FrameStats> = Vec::with_capacity(n);
    let mut failure = None;
    std::thread::scope(|scope| {
        // Chunks finish in any order; the statistics are sorted by index at the end.
        let (sender, receiver) = mpsc::channel::<Result<Vec<FrameStats>>>();
        let queue = Arc::new(std::sync::Mutex::new(
            chunks
                .iter()
                .copied()
                .collect::<std::collections::VecDeque<_>>(),
        ));
        for _ in 0..workers.min(chunks.len()) {
            let queue = queue.clone();
            let stop = stop.clone();
            let sender = sender.clone();
            let options = options.clone();
            scope.spawn(move || {
                // The input this worker read its last chunk from: its next chunk seeks in it.
                let mut input: Option<UsedInput> = None;
                loop {
                    let next = queue.lock().ok().and_then(|mut q| q.pop_front());
                    let Some(chunk) = next else { break };
                    let threads = if single { 0 } else { 1 };
                    // The first chunk read decodes from the stream's own input.
                    let given = input.take().or_else(|| stream.take_used_input());
                    match scan_chunk(stream, chunk, threads, given, &options, &stop, &sender) {
                        Ok(left) => input = left,
                        Err(e) => {
                            stop.store(true, Ordering::SeqCst);
                            let _ = sender.send(Err(e));
                            break;
                        }
                    }
                }
            });
        }
        drop(sender);
        for batch in receiver.iter() {
            match batch {
                Ok(stats) => {
                    let k = stats.len() as u64;
                    out.extend(stats);
                    if !progress.advance(k) || ctx.cancelled() {
                        stop.store(true, Ordering::SeqCst);
                        failure = Some(Error::Cancelled);
                        break;
                    }
                }
                Err(e) => {
                    stop.store(true, Ordering::SeqCst);
                    failure.get_or_insert(e);
                    break;
                }
            }
        }
        stop.store(true, Ordering::SeqCst);
    });
    out.sort_by_key(|s| s.index);
    if let Some(e) = failure {
        return Err(e);
    }
    if out.len() != n || out.iter().enumerate().any(|(i, s)| s.index != i) {
        return Err(Error::internal(format!(
            "{}: the analysis pass returned {} frames of {n}",
            stream.source.display(),
            out.len()
        )));
    }
    Ok(out)
}

/// A stretch of frames one worker computes: `[start, end)`, decoded from `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chunk {
    start: usize,
    end: usize,
}

/// Splits the video at keyframes into about `4 x workers` chunks (at least 600 frames each),
/// or one chunk when frames cannot be found by seeking.
fn plan_chunks(table: &FrameTable, workers: usize) -> Vec<Chunk> {
    let n = table.len();
    if workers <= 1 || table.identity == Identity::Sequential || n < 1200 {
        return vec![Chunk { start: 0, end: n }];
    }
    let target = (n / (workers * 4)).max(600);
    let mut starts = vec![0];
    let mut at = target;
    while at < n {
        let k = table.clean_keyframe_at_or_before(at);
        let last = *starts.last().expect("one start");
        if k > last + HISTORY && n - k > HISTORY {
            starts.push(k);
            at = k + target;
        } else {
            at += target;
        }
    }
    let mut chunks = Vec::new();
    for (i, &s) in starts.iter().enumerate() {
        let e = starts.get(i + 1).copied().unwrap_or(n);
        chunks.push(Chunk { start: s, end: e });
    }
    chunks
}

/// Decodes `chunk` (and up to [`HISTORY`] frames past it, for the next chunk's statistics)
/// from `input` (an input of the source, or `None`: the source is opened) and sends the
/// statistics of the frames this chunk owns: `[start + HISTORY, end + HISTORY)` for every
/// chunk but the first, which owns its frames from 0. Gives back the input it read, for the
/// worker's next chunk.
fn scan_chunk(
    stream: &ProcessedStream,
    chunk: Chunk,
    threads: usize,
    input: Option<UsedInput>,
    options: &ScanOptions,
    stop: &AtomicBool,
    sender: &mpsc::Sender<Result<Vec<FrameStats>>>,
) -> Result<Option<UsedInput>> {
    let table = &stream.table;
    let n = table.len();
    let owns_from = if chunk.start == 0 {
        0
    } else {
        chunk.start + HISTORY
    };
    let owns_to = if chunk.end >= n {
        n
    } else {
        (chunk.end + HISTORY).min(n)
    };
    if owns_from >= owns_to {
        return Ok(input);
    }
    let path = stream.source.as_path();
    let mut reader = stream.analysis_reader(chunk.start..owns_to, threads, input)?;
    let mut shrink: Option<Converter> = None;
    let mut history: std::collections::VecDeque<Thumb> =
        std::collections::VecDeque::with_capacity(HISTORY + 1);
    let mut batch = Vec::with_capacity(64);
    let mut index = chunk.start;
    while index < owns_to {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let Some(frame) = reader.next_frame()? else {
            break;
        };
        if frame.index != index {
            return Err(Error::internal(format!(
                "{}: the analysis pass expected frame {index}, decoded {}",
                path.display(),
                frame.index
            )));
        }
        let thumb = {
            let (w, h) = (frame.image.width(), frame.image.height());
            let tw = THUMB_WIDTH.min(w).max(2) & !1;
            let th = ((u64::from(h) * u64::from(tw) / u64::from(w.max(1))) as u32).max(2) & !1;
            let converter = shrink.get_or_insert_with(|| {
                Converter::new(PixelFormat::YUV420P, Some((tw, th)), Scaling::AREA)
            });
            let small = converter
                .convert(&frame.image)
                .map_err(|e| Error::ffmpeg(path, "shrinking a frame for analysis", e))?;
            let limited = !frame.image.has_full_range_levels();
            thumb_of(&small, limited)
        };
        if index >= owns_from {
            // The region arrives as fractions of the frame.
            let full = (1.0, 1.0);
            batch.push(stats_of(
                index,
                table.time(index),
                &thumb,
                &history,
                options.region,
                full,
                options.black_level,
            ));
            if batch.len() == 64 && sender.send(Ok(std::mem::take(&mut batch))).is_err() {
                return Ok(None);
            }
        }
        if history.len() == HISTORY {
            history.pop_front();
        }
        history.push_back(thumb);
        index += 1;
    }
    if index < owns_to {
        return Err(Error::corrupt(
            path,
            format!("at frame {index}"),
            format!("the video ended after {index} frames; its frame table lists {n}"),
        ));
    }
    if !batch.is_empty() {
        let _ = sender.send(Ok(batch));
    }
    Ok(reader.into_input())
}

fn thumb_of(frame: &Picture, limited: bool) -> Thumb {
    let (w, h) = (frame.width() as usize, frame.height() as usize);
    let plane = |p: usize, pw: usize, ph: usize| {
        let stride = frame.stride(p);
        let data = frame.data(p);
        let mut out = Vec::with_capacity(pw * ph);
        for row in 0..ph {
            out.extend_from_slice(&data[row * stride..row * stride + pw]);
        }
        out
    };
    let y = plane(0, w, h);
    let (mean, spread) = spread_of(&y);
    Thumb {
        w,
        h,
        active: active_box(&y, w, h, limited),
        mean,
        spread,
        y,
        u: plane(1, w / 2, h / 2),
        v: plane(2, w / 2, h / 2),
        limited,
    }
}

fn mean_abs_diff(a: &[u8], b: &[u8]) -> f32 {
    if a.is_empty() || a.len() != b.len() {
        return 0.0;
    }
    let sum: u64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| u64::from(x.abs_diff(y)))
        .sum();
    sum as f32 / a.len() as f32
}

fn histogram(y: &[u8]) -> [u32; 32] {
    let mut h = [0u32; 32];
    for &v in y {
        h[usize::from(v >> 3)] += 1;
    }
    h
}

/// The statistics of `thumb` given the thumbnails before it (`history`, oldest first).
fn stats_of(
    index: usize,
    time: Time,
    thumb: &Thumb,
    history: &std::collections::VecDeque<Thumb>,
    region: Option<Region>,
    full: (f64, f64),
    black_level: f32,
) -> FrameStats {
    let mean_y =
        thumb.y.iter().map(|&v| u64::from(v)).sum::<u64>() as f32 / thumb.y.len().max(1) as f32;
    let luma = if thumb.limited {
        ((mean_y - 16.0) * 255.0 / 219.0).clamp(0.0, 255.0)
    } else {
        mean_y
    };
    // The dark share, counted on the stored values (limited range: 16 is black).
    let level = if thumb.limited {
        16.0 + black_level * 219.0 / 255.0
    } else {
        black_level
    };
    let dark = thumb.y.iter().filter(|&&v| f32::from(v) <= level).count() as f32
        / thumb.y.len().max(1) as f32;
    let mut s = FrameStats {
        index,
        time,
        luma,
        dark,
        ..FrameStats::default()
    };
    let same_size = |t: &Thumb| t.w == thumb.w && t.h == thumb.h;
    if let Some(prev) = history.back().filter(|p| same_size(p)) {
        let dy = mean_abs_diff(&thumb.y, &prev.y);
        let du = mean_abs_diff(&thumb.u, &prev.u);
        let dv = mean_abs_diff(&thumb.v, &prev.v);
        // Measured on the active picture: black bars would dilute the change.
        s.content = (2.0 * dy + du + dv) / 4.0 / active_share(&[thumb, prev]);
        let (ha, hb) = (histogram(&thumb.y), histogram(&prev.y));
        let total = thumb.y.len().max(1) as f32;
        let l1: u32 = ha.iter().zip(&hb).map(|(a, b)| a.abs_diff(*b)).sum();
        s.histogram = l1 as f32 / (2.0 * total);
        // Motion inside the region (thumbnail pixels).
        let (x0, y0, x1, y1) = match region {
            Some(r) => {
                let sx = thumb.w as f64 / full.0;
                let sy = thumb.h as f64 / full.1;
                let c = |v: f64, max: usize| (v.max(0.0) as usize).min(max);
                (
                    c((r.x1 * sx).floor(), thumb.w),
                    c((r.y1 * sy).floor(), thumb.h),
                    c((r.x2 * sx).ceil(), thumb.w),
                    c((r.y2 * sy).ceil(), thumb.h),
                )
            }
            None => (0, 0, thumb.w, thumb.h),
        };
        let mut moving = 0usize;
        let mut area = 0usize;
        for row in y0..y1 {
            let a = &thumb.y[row * thumb.w + x0..row * thumb.w + x1];
            let b = &prev.y[row * thumb.w + x0..row * thumb.w + x1];
            area += a.len();
            moving += a
                .iter()
                .zip(b)
                .filter(|(x, y)| x.abs_diff(**y) > MOTION_NOISE)
                .count();
        }
        s.motion = if area == 0 {
            0.0
        } else {
            moving as f32 / area as f32
        };
        // The changed share of the active picture (luma or colour; the bars never change).
        let cw = thumb.w / 2;
        let mut changed = 0usize;
        for row in 0..thumb.h {
            for x in 0..thumb.w {
                let k = row * thumb.w + x;
                let c = (row / 2) * cw + (x / 2).min(cw.saturating_sub(1));
                let differs = |a: &[u8], b: &[u8], k: usize| {
                    a.get(k)
                        .zip(b.get(k))
                        .is_some_and(|(p, q)| p.abs_diff(*q) > MOTION_NOISE)
                };
                if differs(&thumb.y, &prev.y, k)
                    || differs(&thumb.u, &prev.u, c)
                    || differs(&thumb.v, &prev.v, c)
                {
                    changed += 1;
                }
            }
        }
        s.changed =
            (changed as f32 / thumb.y.len().max(1) as f32 / active_share(&[thumb, prev])).min(1.0);
    }
    for (li, &lag) in LAGS.iter().enumerate() {
        if history.len() < lag {
            continue;
        }
        let far = &history[history.len() - lag];
        let mid = &history[history.len() - lag / 2];
        if !same_size(far) || !same_size(mid) {
            continue;
        }
        let share = active_share(&[thumb, far, mid]);
        s.far[li] = mean_abs_diff(&thumb.y, &far.y) / active_share(&[thumb, far]);
        let sum: u64 = thumb
            .y
            .iter()
            .zip(&far.y)
            .zip(&mid.y)
            .map(|((&a, &b), &m)| {
                let avg2 = u64::from(a) + u64::from(b);
                (2 * u64::from(m)).abs_diff(avg2)
            })
            .sum();
        s.blend[li] = sum as f32 / (2.0 * thumb.y.len().max(1) as f32) / share;
        s.shape[li] = shape_diff(thumb, far);
        s.wide[li] = wide_diff(thumb, far);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thumb(value: u8, w: usize, h: usize) -> Thumb {
        Thumb {
            w,
            h,
            y: vec![value; w * h],
            u: vec![128; w * h / 4],
            v: vec![128; w * h / 4],
            limited: false,
            active: Some([0, 0, w, h]),
            mean: f32::from(value),
            spread: MIN_SPREAD,
        }
    }

    /// The scan's chunk workers count their work in the call's tally (each gets a clone of the
    /// call's context; once they entered the cancel token and the settings but not the tally,
    /// so a detect's decoding went uncounted).
    #[test]
    fn every_chunk_worker_counts_in_the_calls_tally() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.mp4");
        let made = std::process::Command::new("ffmpeg")
            .args([
                "-v",
                "error",
                "-f",
                "lavfi",
                "-i",
                "testsrc2=size=64x48:rate=25",
            ])
            .args(["-t", "4", "-c:v", "libx264", "-g", "10", "-bf", "2"])
            .arg(&path)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !made {
            eprintln!("skipping: the ffmpeg CLI with libx264 is not installed");
            return;
        }
        let n = FrameTable::for_file(&path).unwrap().len();
        let tally = crate::call::tally::Tally::new();
        let counted = {
            let options = ScanOptions {
                workers: 2,
                black_level: 24.0,
                region: None,
            };
            let ctx = CallContext::new().with_tally(tally.clone());
            let plan = crate::plan::Plan::new("t", &path, Vec::new());
            let exec = crate::exec::ExecOptions::default().in_context(&ctx);
            crate::exec::read_stream(&plan, &exec, &ctx, |stream| {
                scan(stream, &options, &mut crate::NoProgress, &ctx)
            })
            .unwrap()
        };
        assert_eq!(counted.len(), n);
        let counts = tally.counts();
        assert!(
            counts.frames_decoded >= n && counts.peak_decoders >= 1,
            "{n} frames scanned, the tally counted {counts:?}"
        );
    }

    #[test]
    fn a_cross_fade_is_a_blend_and_motion_is_not() {
        // Frames 0..=24 fade linearly from 0 to 240: the middle is the average of the ends.
        let mut history = std::collections::VecDeque::new();
        for i in 0..24u32 {
            history.push_back(thumb((i * 10) as u8, 16, 8));
        }
        let s = stats_of(
            24,
            Time::ZERO,
            &thumb(240, 16, 8),
            &history,
            None,
            (16.0, 8.0),
            26.0,
        );
        assert!((s.far[2] - 240.0).abs() < 1e-3, "{s:?}");
        assert!(s.blend[2] < 1.0, "{s:?}");
        assert!((s.content - 5.0).abs() < 1e-3, "luma weighted twice: {s:?}");
        // A bar moving across: ends differ, the middle is not their average.
        let bar = |x0: usize| {
            let mut t = thumb(0, 16, 8);
            for row in 0..8 {
                for x in x0..x0 + 4 {
                    t.y[row * 16 + x] = 255;
                }
            }
            t
        };
        let mut history = std::collections::VecDeque::new();
        for i in 0..24usize {
            history.push_back(bar(i % 12));
        }
        let s = stats_of(24, Time::ZERO, &bar(12), &history, None, (16.0, 8.0), 26.0);
        assert!(s.blend[2] > 0.4 * s.far[2], "{s:?}");
    }

    /// A thumbnail of a pattern (`f(x, y)`), its mean and spread computed.
    fn pattern(w: usize, h: usize, f: impl Fn(usize, usize) -> u8) -> Thumb {
        let mut t = thumb(0, w, h);
        for row in 0..h {
            for x in 0..w {
                t.y[row * w + x] = f(x, row);
            }
        }
        (t.mean, t.spread) = spread_of(&t.y);
        t
    }

    #[test]
    fn a_change_over_a_part_of_the_picture_is_not_wide() {
        // 32 x 16: a 8 x 8 grid of 4 x 2 cells. A white box over a tenth of the picture (10 x 5
        // in a corner) appears: the mean change is a tenth of the box's, the change most of
        // the picture has is none. The whole picture replaced: both are the change.
        let history = std::collections::VecDeque::from(vec![thumb(40, 32, 16); 6]);
        let mut caption = thumb(40, 32, 16);
        for row in 11..16 {
            for x in 22..32 {
                caption.y[row * 32 + x] = 240;
            }
        }
        let s = stats_of(6, Time::ZERO, &caption, &history, None, (32.0, 16.0), 26.0);
        assert!(s.far[0] > 15.0 && s.wide[0] == 0.0, "{s:?}");
        let s = stats_of(
            6,
            Time::ZERO,
            &thumb(140, 32, 16),
            &history,
            None,
            (32.0, 16.0),
            26.0,
        );
        assert!(
            (s.far[0] - 100.0).abs() < 1e-3 && (s.wide[0] - 100.0).abs() < 1e-3,
            "{s:?}"
        );
    }

    #[test]
    fn a_brightening_changes_far_but_not_shape() {
        let dark = |x: usize, y: usize| (40 + (x * 7 + y * 13) % 60) as u8;
        let history = std::collections::VecDeque::from(vec![pattern(16, 8, dark); 6]);
        // The same picture 50 levels brighter: far 50, shape 0.
        let bright = pattern(16, 8, |x, y| dark(x, y) + 50);
        let s = stats_of(6, Time::ZERO, &bright, &history, None, (16.0, 8.0), 26.0);
        assert!((s.far[0] - 50.0).abs() < 1e-3, "{s:?}");
        assert!(s.shape[0] < 0.01, "{s:?}");
        // Every pixel's luma changed by more than the noise: the whole picture changed.
        assert_eq!(s.changed, 1.0, "{s:?}");
        // Another picture at the same brightness: shape about far.
        let other = pattern(16, 8, |x, y| (40 + (x * 11 + y * 5 + 30) % 60) as u8);
        let s = stats_of(6, Time::ZERO, &other, &history, None, (16.0, 8.0), 26.0);
        assert!(s.far[0] > 5.0 && s.shape[0] > 0.6 * s.far[0], "{s:?}");
    }

    #[test]
    fn motion_counts_changed_pixels_inside_the_region() {
        let a = thumb(10, 16, 8);
        let mut b = thumb(10, 16, 8);
        for x in 0..8 {
            b.y[x] = 200; // top row, left half
        }
        let history = std::collections::VecDeque::from(vec![a]);
        let all = stats_of(1, Time::ZERO, &b, &history, None, (160.0, 80.0), 26.0);
        assert!((all.motion - 8.0 / 128.0).abs() < 1e-6);
        let right = Region {
            x1: 80.0,
            y1: 0.0,
            x2: 160.0,
            y2: 80.0,
        };
        let none = stats_of(
            1,
            Time::ZERO,
            &b,
            &history,
            Some(right),
            (160.0, 80.0),
            26.0,
        );
        assert_eq!(none.motion, 0.0);
    }
}
