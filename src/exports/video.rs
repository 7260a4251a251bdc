//! The `video` export: a capped video for video-native models: at most `max_size` (1920x1280
//! by default, aspect kept, even sides, never upscaled) and a Base64-encoded file of at most
//! `max_base64_bytes` (10 MB by default; Base64 of `n` bytes is `4 * ceil(n / 3)` characters).
//!
//! The size cap is reached by a solver, not by trial and error: from the duration and the byte
//! budget it picks a video bit rate (after audio and container overhead) aiming at 93% of the
//! budget, encodes once with x264's average-bit-rate control, measures, and corrects the rate
//! by the ratio of wanted to measured video bytes. Typical inputs fit (85-100% of the budget)
//! in one or two encodes. Frame rate, then resolution, are lowered only when the bit rate per
//! pixel would fall below what x264 can produce. Every attempt is recorded in the sidecar.
//!
//! A file that already is a standard model input (H.264 4:2:0 with AAC or no audio, in an MP4,
//! upright with no rotation flag, square pixels, undamaged) and fits both caps is copied byte
//! for byte; anything else is re-encoded, scaled to square pixels.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::call::output::group::OutputGroup;
use crate::error::{Error, Result};
use crate::exports::claimed::{
    check_side_file_owner, clip_summary, video_sidecar, write_boxes_file, written_in_place,
    Claimed, SideFile,
};
use crate::exports::{encode_settings, Export, ExportContext, ExportReport, ExportTarget, Wants};
use crate::frames::fit::fit_within;
use crate::frames::pipeline::{self, FrameSink, FrameStage, Progress};
use crate::frames::sinks::{EncodedOutput, StagedSink, VideoSink};
use crate::frames::stages::resize::{DecimateStage, ScaleStage};
use crate::frames::stages::stream::ProcessedStream;
use crate::media::audio::audio_stream_format;
use crate::media::input::VideoInput;
use crate::media::table::FrameTable;
use crate::plan::{ExportSpec, Plan, VideoExport};
use crate::records::sidecar::{write_json, SourceRecord, VERSION};
use crate::vocab::EncodeSettings;
use crate::vocab::Ratio;

/// The size of the Base64 text of `bytes` bytes.
pub fn base64_len(bytes: u64) -> u64 {
    bytes.div_ceil(3) * 4
}

/// The largest file whose Base64 text fits in `max_base64_bytes`.
pub fn budget_bytes(max_base64_bytes: u64) -> u64 {
    max_base64_bytes / 4 * 3
}

/// The fraction of the budget the first encode aims at.
const AIM: f64 = 0.93;
/// The least acceptable use of the budget.
const MIN_USE: f64 = 0.85;
/// Below this many bits per pixel per frame x264 cannot follow the rate: lower fps/resolution.
const MIN_BITS_PER_PIXEL: f64 = 0.006;
/// No video is encoded below this rate.
const MIN_VIDEO_RATE: f64 = 16_000.0;
const MAX_ATTEMPTS: usize = 4;
/// A rate raised at least this many times over the last attempt's ...
const CEILING_RATE_RISE: f64 = 1.25;
/// ... that grew the video by less than this power of the rise (in the logarithm: a quarter
/// of it) shows the encoder at its quality ceiling for this picture: a static screen takes
/// no more bits at any rate (x264's average-bit-rate control spends what the picture needs).
const CEILING_ELASTICITY: f64 = 0.25;
/// Above this many bits per pixel per frame the budget exceeds what good quality needs: the
/// first encode is then a constant-quality one (CRF), kept if it fits.
const QUALITY_CEILING_BPP: f64 = 0.25;
/// The highest rate the solver asks for (x264's own limits are near).
const MAX_VIDEO_RATE: f64 = 1.0e9;

/// One encode the solver tried.
#[derive(Clone, Debug, Serialize)]
pub struct Attempt {
    /// The rate asked of the encoder (for a constant-quality attempt: the rate it produced).
    pub video_bit_rate: u64,
    /// Set when the attempt encoded at constant quality (CRF) instead of a rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constant_quality: Option<f32>,
    pub audio_bit_rate: Option<u64>,
    pub width: u32,
    pub height: u32,
    /// Kept one frame in this many.
    pub frame_step: usize,
    pub bytes: u64,
    pub base64_bytes: u64,
    /// `base64_bytes / max_base64_bytes`.
    pub budget_used: f64,
    pub fits: bool,
    /// Wall-clock time of the attempt's encode (the one field that differs between runs).
    pub encode_seconds: f64,
}

/// The plan the solver starts from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatePlan {
    pub size: (u32, u32),
    pub frame_step: usize,
    pub video_bit_rate: f64,
    pub audio_bit_rate: Option<u64>,
}

/// Picks size, frame step and rates for `duration_s` seconds of `frames` frames of a
/// `width x height` video within `budget` bytes.
pub fn plan_rates(
    width: u32,
    height: u32,
    frames: usize,
    duration_s: f64,
    has_audio: bool,
    max_size: (u32, u32),
    budget: u64,
) -> std::result::Result<RatePlan, String> {
    let audio_bit_rate = audio_rate_for(budget, duration_s, has_audio);
    let video_bit_rate = video_rate_for(budget, frames, duration_s, audio_bit_rate);
    let fits = Fits {
        frames,
        duration_s,
        has_audio,
        budget,
    };
    if video_bit_rate < MIN_VIDEO_RATE {
        return Err(format!(
            "a budget of {budget} bytes leaves {:.0} bit/s of video for {duration_s:.2} s; at least {MIN_VIDEO_RATE:.0} bit/s is needed. {}",
            video_bit_rate.max(0.0),
            fits.suggestions(MIN_VIDEO_RATE)
        ));
    }
    let mut size = fit_within(width, height, max_size.0, max_size.1);
    let fps = frames as f64 / duration_s;
    let bpp = |size: (u32, u32), step: usize| {
        video_bit_rate / (size.0 as f64 * size.1 as f64 * fps / step as f64)
    };
    let mut frame_step = 1;
    // First fewer frames (down to about 12 fps), then fewer pixels (down to 144 lines).
    while bpp(size, frame_step) < MIN_BITS_PER_PIXEL && fps / (frame_step * 2) as f64 >= 12.0 {
        frame_step *= 2;
    }
    while bpp(size, frame_step) < MIN_BITS_PER_PIXEL && size.0.min(size.1) > 144 {
        size = (
            ((size.0 as f64 * 0.75) as u32 & !1).max(2),
            ((size.1 as f64 * 0.75) as u32 & !1).max(2),
        );
    }
    if bpp(size, frame_step) < MIN_BITS_PER_PIXEL / 2.0 {
        let needed =
            MIN_BITS_PER_PIXEL / 2.0 * size.0 as f64 * size.1 as f64 * fps / frame_step as f64;
        return Err(format!(
            "a budget of {budget} bytes is too small for {duration_s:.2} s of video even at {}x{} and {:.1} fps (the lowest size and frame rate it goes down to): {:.0} bit/s of video where {needed:.0} are needed. {}",
            size.0,
            size.1,
            fps / frame_step as f64,
            video_bit_rate,
            fits.suggestions(needed)
        ));
    }
    Ok(RatePlan {
        size,
        frame_step,
        video_bit_rate,
        audio_bit_rate,
    })
}

/// The audio rate of a capped video: a tenth of the budget's rate, 32 to 128 kbit/s.
fn audio_rate_for(budget: u64, duration_s: f64, has_audio: bool) -> Option<u64> {
    let total_rate = budget as f64 * 8.0 / duration_s;
    has_audio.then(|| (total_rate * 0.1).clamp(32_000.0, 128_000.0) as u64)
}

/// The video rate left by `budget` bytes for `frames` frames over `duration_s` seconds, after
/// the container's overhead and the audio.
fn video_rate_for(budget: u64, frames: usize, duration_s: f64, audio: Option<u64>) -> f64 {
    let overhead = 2048.0
        + 24.0 * frames as f64
        + if audio.is_some() {
            12.0 * duration_s * 48_000.0 / 1024.0
        } else {
            0.0
        };
    ((budget as f64 * AIM - overhead) * 8.0 - audio.unwrap_or(0) as f64 * duration_s) / duration_s
}

/// A capped export that does not fit, and what would.
struct Fits {
    frames: usize,
    duration_s: f64,
    has_audio: bool,
    budget: u64,
}

impl Fits {
    /// The least budget (file bytes) that leaves `rate` bit/s of video.
    fn least_budget(&self, rate: f64, audio: bool) -> u64 {
        let (mut lo, mut hi) = (1u64, 1u64 << 50);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let a = audio_rate_for(mid, self.duration_s, audio);
            if video_rate_for(mid, self.frames, self.duration_s, a) >= rate {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    /// The longest span (seconds, at the same frame rate, with audio as asked) this budget
    /// leaves `rate` bit/s of video for.
    fn longest_span(&self, rate: f64) -> f64 {
        let fps = self.frames as f64 / self.duration_s;
        let (mut lo, mut hi) = (0.0f64, self.duration_s);
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            let frames = (fps * mid).ceil().max(1.0) as usize;
            let audio = audio_rate_for(self.budget, mid, self.has_audio);
            if mid > 0.0 && video_rate_for(self.budget, frames, mid, audio) >= rate {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// "What would fit: ..." for `rate` bit/s of video.
    fn suggestions(&self, rate: f64) -> String {
        let mut options = Vec::new();
        let b64 = |bytes: u64| base64_len(bytes).div_ceil(1000) * 1000;
        if self.has_audio {
            let without = video_rate_for(self.budget, self.frames, self.duration_s, None);
            if without >= rate {
                options.push(format!("--no-audio (leaves {without:.0} bit/s of video)"));
            }
            options.push(format!(
                "--max-base64-bytes {} with audio, {} with --no-audio",
                b64(self.least_budget(rate, true)),
                b64(self.least_budget(rate, false))
            ));
        } else {
            options.push(format!(
                "--max-base64-bytes {}",
                b64(self.least_budget(rate, false))
            ));
        }
        // Rounded down to the hundredth, so that the span named fits.
        let span = (self.longest_span(rate) * 100.0).floor() / 100.0;
        if span >= 0.01 && span < self.duration_s {
            options.push(format!("a span of at most {span:.2} s (--start/--end)"));
        }
        format!("What would fit: {}", options.join("; or "))
    }
}

/// Frames per second, to the millisecond.
fn fps_text(fps: f64) -> String {
    let t = format!("{:.3}", fps);
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The frame rate a plan keeps: the stream's, the output's and the step between them.
fn frame_rate_record(plan: &RatePlan, frames: usize, duration_s: f64) -> serde_json::Value {
    let fps = frames as f64 / duration_s.max(1e-9);
    serde_json::json!({
        "source_fps": fps_text(fps).parse::<f64>().unwrap_or(fps),
        "output_fps": fps_text(fps / plan.frame_step as f64).parse::<f64>().unwrap_or(fps),
        "frame_step": plan.frame_step,
        "lowered": plan.frame_step > 1,
    })
}

/// Warnings for a plan that lowers the frame rate or the size below what the caps allow.
fn lowered(
    plan: &RatePlan,
    (width, height): (u32, u32),
    max: (u32, u32),
    frames: usize,
    duration_s: f64,
) -> Vec<String> {
    let mut out = Vec::new();
    let fps = frames as f64 / duration_s.max(1e-9);
    if plan.frame_step > 1 {
        out.push(format!(
            "lowered the frame rate from {} to {} fps (one frame in {} kept) to fit the budget; a larger --max-base64-bytes{} or a shorter span keeps every frame",
            fps_text(fps),
            fps_text(fps / plan.frame_step as f64),
            plan.frame_step,
            if plan.audio_bit_rate.is_some() { ", --no-audio" } else { "" }
        ));
    }
    let fitted = fit_within(width, height, max.0, max.1);
    if plan.size != fitted {
        out.push(format!(
            "lowered the size from {}x{} to {}x{} to fit the budget",
            fitted.0, fitted.1, plan.size.0, plan.size.1
        ));
    }
    out
}

/// What the solver makes of an attempt.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Keep this attempt.
    Accept,
    /// Encode again with [`RateSolver::settings`].
    Retry,
    /// Stop: no further attempt can help (the reason says why).
    GiveUp(String),
}

/// The rate solver: which settings to encode with next, and whether an attempt is good.
#[derive(Clone, Debug)]
pub struct RateSolver {
    pub plan: RatePlan,
    budget: u64,
    max_base64_bytes: u64,
    duration_s: f64,
    crf: f32,
    rate: f64,
    quality_first: bool,
    pub attempts: Vec<Attempt>,
    pub warnings: Vec<String>,
    accepted: Option<usize>,
    /// The last average-bit-rate attempt's rate and video bytes.
    last_rate_attempt: Option<(f64, f64)>,
}

impl RateSolver {
    /// `frames` frames over `duration_s` seconds, planned as `plan`; `crf` is the constant
    /// quality tried first when the budget is far above what the picture needs.
    pub fn new(
        plan: RatePlan,
        max_base64_bytes: u64,
        frames: usize,
        duration_s: f64,
        crf: f32,
    ) -> RateSolver {
        let rate = plan.video_bit_rate.min(MAX_VIDEO_RATE);
        let fps = frames as f64 / duration_s.max(1e-9) / plan.frame_step as f64;
        let bpp = rate / (plan.size.0 as f64 * plan.size.1 as f64 * fps);
        RateSolver {
            plan,
            budget: budget_bytes(max_base64_bytes),
            max_base64_bytes,
            duration_s,
            crf,
            rate,
            quality_first: bpp > QUALITY_CEILING_BPP,
            attempts: Vec::new(),
            warnings: Vec::new(),
            accepted: None,
            last_rate_attempt: None,
        }
    }

    /// The encode settings of the next attempt (from `base`: preset, audio, threads).
    pub fn settings(&self, base: &EncodeSettings) -> EncodeSettings {
        let mut encode = base.clone();
        encode.bit_rate = (!self.quality_first).then_some(self.rate.round() as u64);
        if let Some(a) = self.plan.audio_bit_rate {
            encode.audio_bit_rate = a;
        }
        encode
    }

    /// Judges an attempt made with [`RateSolver::settings`]: `bytes` in the file, of which
    /// `video_bytes` are video.
    pub fn record(
        &mut self,
        report: &crate::media::encode::WriteReport,
        bytes: u64,
        seconds: f64,
    ) -> Verdict {
        let constant_quality = self.quality_first;
        let b64 = base64_len(bytes);
        let used = b64 as f64 / self.max_base64_bytes as f64;
        let fits = b64 <= self.max_base64_bytes;
        let video = report.video_bytes.max(1) as f64;
        self.attempts.push(Attempt {
            video_bit_rate: if constant_quality {
                (video * 8.0 / self.duration_s) as u64
            } else {
                self.rate.round() as u64
            },
            constant_quality: constant_quality.then_some(self.crf),
            audio_bit_rate: self.plan.audio_bit_rate.filter(|_| report.audio.is_some()),
            width: report.width,
            height: report.height,
            frame_step: self.plan.frame_step,
            bytes,
            base64_bytes: b64,
            budget_used: used,
            fits,
            encode_seconds: seconds,
        });
        if fits && (used >= MIN_USE || constant_quality) {
            if constant_quality && used < MIN_USE {
                self.warnings.push(format!(
                    "the budget is larger than this video needs: at CRF {} it takes {:.1}% of it",
                    self.crf,
                    used * 100.0
                ));
            }
            self.accepted = Some(self.attempts.len() - 1);
            return Verdict::Accept;
        }
        // At the quality ceiling: the rate was raised well above the last attempt's and the
        // video barely grew. More rate would not change the picture: keep this attempt.
        if let (true, false, Some((last_rate, last_video))) =
            (fits, constant_quality, self.last_rate_attempt)
        {
            let rise = self.rate / last_rate;
            let growth = video / last_video;
            if rise >= CEILING_RATE_RISE && growth.ln() < CEILING_ELASTICITY * rise.ln() {
                // (The fuller of the fitting attempts: at the ceiling they show the same.)
                let (kept, fullest) = self
                    .attempts
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| a.fits)
                    .max_by_key(|(_, a)| a.bytes)
                    .map(|(n, a)| (n, a.budget_used))
                    .unwrap_or((self.attempts.len() - 1, used));
                self.warnings.push(format!(
                    "the picture takes no more bits: raising the video rate {rise:.1}x (to \
                     {:.0} bit/s) changed its size by {:+.0}%, so the encoder is at its quality \
                     ceiling; kept at {:.1}% of the budget after {} encodes",
                    self.rate,
                    (growth - 1.0) * 100.0,
                    fullest * 100.0,
                    self.attempts.len()
                ));
                self.accepted = Some(kept);
                return Verdict::Accept;
            }
        }
        if !constant_quality {
            self.last_rate_attempt = Some((self.rate, video));
        }
        if constant_quality {
            // Too big even at constant quality: solve for the rate from what it produced.
            self.rate = video * 8.0 / self.duration_s;
            self.quality_first = false;
        }
        if self.attempts.len() >= MAX_ATTEMPTS {
            return Verdict::GiveUp(format!(
                "{MAX_ATTEMPTS} encodes did not land within 85-100% of the budget"
            ));
        }
        // Correct the rate by how far the video bytes landed from the wanted ones.
        let other = bytes as f64 - video;
        let wanted = self.budget as f64 * AIM - other;
        if wanted <= 0.0 {
            return Verdict::GiveUp(format!(
                "audio and container alone take {other:.0} of the {} bytes",
                self.budget
            ));
        }
        self.rate = (self.rate * wanted / video).min(MAX_VIDEO_RATE);
        if self.rate < MIN_VIDEO_RATE {
            return Verdict::GiveUp(format!(
                "the corrected video rate {:.0} bit/s is below {MIN_VIDEO_RATE:.0} bit/s",
                self.rate
            ));
        }
        Verdict::Retry
    }

    /// The attempt to keep: the accepted one, else the fullest that fits (with a warning).
    pub fn chosen(&mut self) -> Option<usize> {
        if self.accepted.is_none() {
            if let Some((n, a)) = self
                .attempts
                .iter()
                .enumerate()
                .filter(|(_, a)| a.fits)
                .max_by_key(|(_, a)| a.bytes)
            {
                self.warnings.push(format!(
                    "used {:.1}% of the budget after {} encodes (aimed at 85-100%)",
                    a.budget_used * 100.0,
                    self.attempts.len()
                ));
                self.accepted = Some(n);
            }
        }
        self.accepted
    }

    /// Why nothing could be kept.
    pub fn failure(&self, why: Option<String>) -> String {
        let tried: Vec<String> = self
            .attempts
            .iter()
            .map(|a| format!("{} bytes ({:.1}%)", a.bytes, a.budget_used * 100.0))
            .collect();
        format!(
            "no encode fits {} Base64 bytes ({} file bytes){}{}",
            self.max_base64_bytes,
            self.budget,
            if tried.is_empty() {
                String::new()
            } else {
                format!("; tried {}", tried.join(", "))
            },
            why.map(|e| format!("; {e}")).unwrap_or_default()
        )
    }
}

/// Why `input` cannot be handed to a model byte for byte as `output`, or `None` when it can:
/// it must already be the standard model input, H.264 4:2:0 (with AAC audio or none) in an
/// MP4 written to an MP4 name, stored upright with no rotation flag (loaders that ignore the
/// flag would see it sideways), with square pixels and no known damage.
/// What the source's open read in its header is used (`v`: the stream's description, the
/// container's name and audio codecs from the source); a source never opened is opened now.
fn passthrough_blocker(
    ctx: &crate::call::context::CallContext,
    source: &crate::media::source::Source,
    v: &crate::media::input::VideoStreamInfo,
    output: &Path,
    table: &FrameTable,
) -> Result<Option<String>> {
    let input = source.path();
    let is_mp4_name = |p: &Path| {
        matches!(
            p.extension()
                .map(|e| e.to_string_lossy().to_lowercase())
                .as_deref(),
            Some("mp4" | "m4v")
        )
    };
    if !is_mp4_name(output) {
        return Ok(Some("the output is not an .mp4".into()));
    }
    let header = match source.header() {
        Some(h) => h.clone(),
        None => {
            VideoInput::open(source, ctx)?;
            source
                .header()
                .cloned()
                .ok_or_else(|| Error::internal("a file's open reads its header"))?
        }
    };
    if !is_mp4_name(input) || !header.format_name.contains("mp4") {
        return Ok(Some(format!(
            "the input is {} in a {} file, not an MP4",
            v.codec, header.format_name
        )));
    }
    if v.codec != "h264" || v.pixel_format != "yuv420p" {
        return Ok(Some(format!(
            "the video is {} {}, not H.264 yuv420p",
            v.codec, v.pixel_format
        )));
    }
    if v.rotation != crate::vocab::Rotation::None {
        return Ok(Some(format!(
            "the video is stored sideways with a rotation flag ({} degrees)",
            v.rotation.degrees_cw()
        )));
    }
    if v.has_non_square_pixels() {
        return Ok(Some(format!(
            "the pixels are not square (SAR {})",
            v.sample_aspect_ratio
        )));
    }
    if let Some(codec) = header.audio_other_than_aac() {
        return Ok(Some(format!("the audio is {codec}, not AAC")));
    }
    if !table.damage.is_empty() {
        return Ok(Some(format!(
            "the video is damaged: {}",
            table.damage.summary()
        )));
    }
    Ok(None)
}

/// The `video` export.
pub(crate) struct VideoMaker {
    spec: ExportSpec,
    video: VideoExport,
    claimed: Option<Claimed>,
    base64: Option<(PathBuf, PathBuf)>,
    /// The request body beside the clip (path, temporary file) and its envelope.
    request: Option<(PathBuf, PathBuf)>,
    envelope: Option<super::request::Envelope>,
    /// The largest Base64 text of the clip: asked, or the preset's, less the request's
    /// envelope and prompt where the preset limits the whole request.
    cap: u64,
    encode: EncodeSettings,
    passthrough: Option<(u64, (u32, u32))>,
    solver: Option<RateSolver>,
    attempt: Option<(StagedSink<VideoSink>, PathBuf, Instant)>,
    pass_warnings: Vec<String>,
}

impl VideoMaker {
    pub fn new(spec: &ExportSpec, video: &VideoExport) -> VideoMaker {
        VideoMaker {
            spec: spec.clone(),
            video: video.clone(),
            claimed: None,
            base64: None,
            request: None,
            envelope: None,
            cap: 0,
            encode: EncodeSettings::default(),
            passthrough: None,
            solver: None,
            attempt: None,
            pass_warnings: Vec::new(),
        }
    }

    /// A sink for one encode attempt at `path` (a scratch file): the stream decimated, scaled
    /// to the planned size with square pixels, boxes drawn on the result.
    fn attempt_sink(
        &self,
        stream: &ProcessedStream,
        path: &Path,
        final_path: &Path,
    ) -> Result<StagedSink<VideoSink>> {
        let solver = self.solver.as_ref().expect("planned");
        let plan = solver.plan;
        let mut stages: Vec<Box<dyn FrameStage + Send>> = Vec::new();
        if plan.frame_step > 1 {
            stages.push(Box::new(DecimateStage::new(plan.frame_step)));
        }
        if plan.size != stream.size {
            stages.push(Box::new(ScaleStage::new(plan.size)));
        }
        stages.extend(stream.draw_stages());
        let mut timing = stream.timing();
        timing.sample_aspect_ratio = Ratio::new(1, 1);
        let sink = VideoSink::new(
            path,
            final_path,
            timing,
            &solver.settings(&self.encode),
            Some(stream.audio()),
            stream.provenance(),
        )?
        .with_source(&stream.source)
        .with_end_time(stream.duration())
        .with_boxes(stream.box_recorder());
        Ok(StagedSink::new(stages, sink))
    }
}

impl Export for VideoMaker {
    fn target_in(&self, dir: &Path) -> ExportTarget {
        ExportTarget::at(dir.join(format!("{}.mp4", self.spec.name())))
    }

    fn claim(&mut self, target: &ExportTarget, plan: &Plan, group: &mut OutputGroup) -> Result<()> {
        self.claimed = Some(Claimed::claim(
            target,
            crate::exports::claimed::boxes_out_of(self.video.boxes_out, plan),
            group,
        )?);
        if self.video.base64 {
            let path = target
                .base64
                .clone()
                .unwrap_or_else(|| target.main.with_extension("b64"));
            let temp = group.file(&path)?;
            // Written in place (not inside an item folder replaced as a whole): a file there
            // must be the Base64 this output's sidecar records, never a person's file.
            if written_in_place(&temp, &path) {
                check_side_file_owner(
                    &path,
                    &target.sidecar_path(),
                    &target.main,
                    SideFile::Base64,
                )?;
            }
            self.base64 = Some((path, temp));
        }
        if self.video.payload.is_some() {
            let path = target.main.with_extension("payload.json");
            let temp = group.file(&path)?;
            // Written in place (not inside an item folder replaced as a whole): a file there
            // must be the payload this output's sidecar records, never a person's file.
            if written_in_place(&temp, &path) {
                check_side_file_owner(
                    &path,
                    &target.sidecar_path(),
                    &target.main,
                    SideFile::Payload,
                )?;
            }
            self.request = Some((path, temp));
        }
        Ok(())
    }

    fn start(
        &mut self,
        stream: &ProcessedStream,
        ctx: &ExportContext,
        group: &mut OutputGroup,
    ) -> Result<Wants> {
        super::check_encodable(stream)?;
        let claimed = self.claimed.as_ref().expect("claimed before start");
        self.encode = encode_settings(ctx, None, self.video.preset.as_deref(), self.video.audio);
        self.encode.validate()?;
        let (width, height) = stream.display_size();
        let max = (self.video.max_size.0, self.video.max_size.1);
        // The budget counts the whole request: its envelope, and room for the prompt.
        let preset = self.preset();
        if let Some(payload) = self.video.payload {
            let ext = claimed
                .main
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("");
            if !ext.eq_ignore_ascii_case("mp4") {
                return Err(Error::request(
                    &claimed.main,
                    format!(
                        "the {payload} payload sends the clip as video/mp4: name the output .mp4"
                    ),
                ));
            }
            let envelope = super::request::Envelope::new(
                payload,
                &preset,
                preset.sampling_for(Some(payload)).as_ref(),
                stream.duration().as_secs_f64(),
            );
            self.cap = preset.base64_cap(self.video.max_base64_bytes, envelope.len());
            self.envelope = Some(envelope);
        } else {
            self.cap = preset.base64_cap(self.video.max_base64_bytes, 0);
        }
        let budget = budget_bytes(self.cap);
        let plan = &stream.plan;
        let whole = plan.span() == (None, None)
            && plan.decision.is_none()
            && plan.insert.is_none()
            && stream.draws.is_empty();
        // Only a local video file can be handed over byte for byte (an image sequence has no
        // file to hand over; a URL is re-encoded rather than downloaded whole).
        let local_file = stream.kind == crate::media::source::SourceKind::File;
        let input_bytes = if local_file {
            std::fs::metadata(&stream.source)
                .map_err(|e| Error::read(&stream.source, e))?
                .len()
        } else {
            0
        };
        if local_file
            && !self.video.reencode
            && whole
            && width <= max.0
            && height <= max.1
            && base64_len(input_bytes) <= self.cap
        {
            match passthrough_blocker(
                stream.inputs.call(),
                &stream.input,
                &stream.info,
                &claimed.main,
                &stream.table,
            )? {
                None => {
                    self.passthrough = Some((input_bytes, (width, height)));
                    return Ok(Wants::Nothing);
                }
                Some(why) => self
                    .pass_warnings
                    .push(format!("re-encoded although it fits the caps: {why}")),
            }
        }
        let has_audio = self.encode.audio
            && audio_stream_format(&stream.input, stream.inputs.call())?.is_some();
        if has_audio {
            stream.audio_with_full_decode();
        }
        let duration = stream.duration().as_secs_f64();
        let rate_plan = plan_rates(
            width,
            height,
            stream.frame_count(),
            duration,
            has_audio,
            max,
            budget,
        )
        .map_err(|m| Error::request(&stream.source, format!("{m}{}", self.limits_note())))?;
        self.pass_warnings.extend(lowered(
            &rate_plan,
            (width, height),
            max,
            stream.frame_count(),
            duration,
        ));
        self.solver = Some(RateSolver::new(
            rate_plan,
            self.cap,
            stream.frame_count(),
            duration,
            self.encode.crf,
        ));
        // The first encode shares the item's pass.
        let path = group.scratch(&claimed.main_temp)?;
        let sink = self.attempt_sink(stream, &path, &claimed.main)?;
        self.attempt = Some((sink, path, Instant::now()));
        Ok(Wants::All)
    }

    fn sink(&mut self) -> Option<&mut dyn FrameSink> {
        self.attempt
            .as_mut()
            .map(|(s, _, _)| s as &mut dyn FrameSink)
    }

    fn finish(
        &mut self,
        stream: &ProcessedStream,
        _ctx: &ExportContext,
        group: &mut OutputGroup,
        progress: &mut dyn Progress,
    ) -> Result<ExportReport> {
        let claimed = self.claimed.as_ref().expect("claimed before finish");
        if let Some((bytes, size)) = self.passthrough {
            return self.pass_through(stream, bytes, size);
        }
        let mut solver = self.solver.take().expect("planned in start");
        self.solver = Some(solver.clone());
        let mut files: Vec<(PathBuf, EncodedOutput)> = Vec::new();
        let mut pending = self.attempt.take();
        let mut why = None;
        while let Some((sink, path, started)) = pending.take() {
            let out = sink.into_inner().into_output()?;
            let bytes = std::fs::metadata(&path)
                .map_err(|e| Error::io(&claimed.main, e))?
                .len();
            let verdict = solver.record(&out.report, bytes, started.elapsed().as_secs_f64());
            files.push((path, out));
            match verdict {
                Verdict::Accept => {}
                Verdict::GiveUp(w) => why = Some(w),
                Verdict::Retry => {
                    self.solver = Some(solver.clone());
                    let next = group.scratch(&claimed.main_temp)?;
                    let mut sink = self.attempt_sink(stream, &next, &claimed.main)?;
                    let started = Instant::now();
                    let mut source = stream.full_source()?;
                    pipeline::run(
                        source.as_mut(),
                        &mut [&mut sink as &mut dyn FrameSink],
                        progress,
                        &stream.inputs.call().cancel,
                    )?;
                    pending = Some((sink, next, started));
                }
            }
        }
        let Some(n) = solver.chosen() else {
            return Err(Error::request(
                &stream.source,
                format!(
                    "export {:?}: {}{}",
                    self.spec.name(),
                    solver.failure(why),
                    self.limits_note()
                ),
            ));
        };
        let (chosen_path, out) = files.swap_remove(n);
        std::fs::rename(&chosen_path, &claimed.main_temp)
            .map_err(|e| Error::io(&claimed.main, e))?;
        let attempt = solver.attempts[n].clone();
        if let Some((path, temp)) = &self.base64 {
            write_base64(&claimed.main_temp, path, temp)?;
        }
        let mut extra = serde_json::Map::new();
        let (limits, payload) = self.provider_blocks(
            &claimed.main_temp,
            out.report.frames,
            stream.duration().as_secs_f64(),
            out.report.audio.is_some(),
        )?;
        extra.insert("limits".into(), limits);
        if let Some(p) = payload {
            extra.insert("payload".into(), p);
        }
        extra.insert(
            "budget".into(),
            serde_json::json!({
                "max_size": self.video.max_size.to_string(),
                "max_base64_bytes": self.cap,
                "budget_bytes": budget_bytes(self.cap),
                "passthrough": false,
                "bytes": attempt.bytes,
                "base64_bytes": attempt.base64_bytes,
                "budget_used": attempt.budget_used,
                "encodes": solver.attempts.len(),
                "frame_rate": frame_rate_record(&solver.plan, stream.frame_count(), stream.duration().as_secs_f64()),
                "size": {
                    "fitted": fit_within(stream.display_size().0, stream.display_size().1, self.video.max_size.0, self.video.max_size.1),
                    "encoded": [attempt.width, attempt.height],
                },
                "attempts": solver.attempts,
                "base64": self.base64.as_ref().map(|(p, _)| p.display().to_string()),
            }),
        );
        let mut warnings = std::mem::take(&mut self.pass_warnings);
        warnings.extend(solver.warnings.iter().cloned());
        let sidecar = video_sidecar(
            "video",
            stream,
            &self.spec,
            claimed,
            &out,
            Some(&solver.settings(&self.encode)),
            extra,
            warnings,
        )?;
        write_boxes_file(claimed, &out, stream)?;
        let mut files = claimed.files();
        files.extend(self.base64.as_ref().map(|(p, _)| p.clone()));
        files.extend(self.request.as_ref().map(|(p, _)| p.clone()));
        Ok(ExportReport {
            name: self.spec.name().to_string(),
            kind: "video",
            files,
            summary: format!(
                "{}, {}x{}, {} bytes = {:.1}% of the Base64 budget in {} encode(s)",
                clip_summary(&claimed.main, stream, out.report.frames),
                attempt.width,
                attempt.height,
                attempt.bytes,
                attempt.budget_used * 100.0,
                solver.attempts.len()
            ),
            frames: out.report.frames,
            warnings: sidecar.warnings,
        })
    }
}

impl VideoMaker {
    /// The input already is a standard model input within the caps: copied byte for byte.
    fn pass_through(
        &self,
        stream: &ProcessedStream,
        bytes: u64,
        size: (u32, u32),
    ) -> Result<ExportReport> {
        let claimed = self.claimed.as_ref().expect("claimed");
        std::fs::copy(&stream.source, &claimed.main_temp)
            .map_err(|e| Error::read(&stream.source, e))?;
        if let Some((path, temp)) = &self.base64 {
            write_base64(&claimed.main_temp, path, temp)?;
        }
        let table = &stream.table;
        let has_audio = audio_stream_format(&stream.input, stream.inputs.call())?.is_some();
        let (limits, payload) = self.provider_blocks(
            &claimed.main_temp,
            table.len(),
            (table.end_time() - table.time(0)).as_secs_f64(),
            has_audio,
        )?;
        let mut frames = stream.provenance();
        for i in 0..table.len() {
            frames.record_parts(
                i,
                table.time(i) - table.time(0),
                crate::frames::pipeline::FrameOrigin {
                    source: 0,
                    index: i,
                    pts: table.pts(i),
                },
            );
        }
        let sidecar = serde_json::json!({
            "vidprep_version": VERSION,
            "kind": "video",
            "output": {"path": claimed.main.display().to_string(), "frames": table.len(),
                       "width": size.0, "height": size.1,
                       "duration": crate::vocab::time::decimal_text(table.end_time() - table.time(0)),
                       "duration_s": (table.end_time() - table.time(0)).as_secs_f64(),
                       "colour": crate::media::encode::file_colour(&claimed.main_temp)},
            "sources": [SourceRecord::new(&stream.source, &stream.info, table, true)],
            "request": stream.plan,
            "export": self.spec,
            "resolved": stream.resolved_json(),
            "frames": frames.into_runs(),
            "limits": limits,
            "payload": payload,
            "budget": {
                "max_size": self.video.max_size.to_string(),
                "max_base64_bytes": self.cap,
                "budget_bytes": budget_bytes(self.cap),
                "passthrough": true,
                "bytes": bytes,
                "base64_bytes": base64_len(bytes),
                "budget_used": base64_len(bytes) as f64 / self.cap as f64,
                "encodes": 0,
                "base64": self.base64.as_ref().map(|(p, _)| p.display().to_string()),
            },
        });
        write_json(&claimed.sidecar_temp, &sidecar)?;
        let mut files = vec![claimed.main.clone(), claimed.sidecar.clone()];
        files.extend(self.base64.as_ref().map(|(p, _)| p.clone()));
        files.extend(self.request.as_ref().map(|(p, _)| p.clone()));
        Ok(ExportReport {
            name: self.spec.name().to_string(),
            kind: "video",
            files,
            summary: format!(
                "{}: passed through unchanged ({} bytes, {:.1}% of the Base64 budget)",
                claimed.main.display(),
                bytes,
                base64_len(bytes) as f64 / self.cap as f64 * 100.0
            ),
            frames: table.len(),
            warnings: Vec::new(),
        })
    }
}

impl VideoMaker {
    /// The limits the export meets (`limits`, `vistr` by default).
    fn preset(&self) -> crate::plan::Preset {
        self.video.limits.unwrap_or_default().preset()
    }

    /// What a refusal adds: the preset's limit, and how the request's envelope counts.
    fn limits_note(&self) -> String {
        let preset = self.preset();
        match (preset.max_request_bytes, &self.envelope) {
            (Some(request), Some(e)) => format!(
                " (the {} limits hold the whole request to {request} bytes: the Base64 may have {} after the request's {} bytes of JSON and {} kept for the prompt; a shorter span, --no-audio or the Files API for a longer clip)",
                preset.name,
                self.cap,
                e.len(),
                crate::plan::PROMPT_RESERVE_BYTES
            ),
            (Some(request), None) => format!(
                " (the {} limits hold the whole request to {request} bytes, {} kept for the prompt)",
                preset.name,
                crate::plan::PROMPT_RESERVE_BYTES
            ),
            _ => String::new(),
        }
    }

    /// The sidecar's `limits` block (the preset, the cap, the server's sampling of the clip
    /// and a token estimate) and, with a payload, writes the request body and returns its
    /// `payload` block. A body over the request limit is refused (the budget prevents it).
    fn provider_blocks(
        &self,
        clip: &Path,
        frames: usize,
        duration: f64,
        audio: bool,
    ) -> Result<(serde_json::Value, Option<serde_json::Value>)> {
        let preset = self.preset();
        let sampling = preset.sampling_for(self.video.payload);
        let limits = serde_json::json!({
            "preset": preset.name,
            "max_base64_bytes": preset.max_base64_bytes,
            "max_request_bytes": preset.max_request_bytes,
            "source": preset.source,
            "server_sampling": sampling.map(|s| serde_json::json!({
                "fps": s.fps,
                "frames": s.frames,
                "max_frames": s.max_frames,
                "max_fps": s.max_fps,
                "frames_seen": s.frames_seen(frames, duration),
                "source": s.source,
            })),
            "tokens": sampling.and_then(|s| s.tokens(frames, duration, audio)),
        });
        let (Some(api), Some((path, temp)), Some(envelope)) =
            (self.video.payload, &self.request, &self.envelope)
        else {
            return Ok((limits, None));
        };
        let bytes = envelope.write(clip, path, temp)?;
        if let Some(request) = preset.max_request_bytes {
            if bytes + crate::plan::PROMPT_RESERVE_BYTES > request {
                return Err(Error::request(
                    path,
                    format!(
                        "the {api} request is {bytes} bytes, more than the {} limits allow with {} bytes for the prompt ({request}): lower --max-base64-bytes",
                        preset.name,
                        crate::plan::PROMPT_RESERVE_BYTES
                    ),
                ));
            }
        }
        let b64 = base64_len(
            std::fs::metadata(clip)
                .map_err(|e| Error::io(path, e))?
                .len(),
        );
        Ok((
            limits,
            Some(serde_json::json!({
                "api": api,
                "file": path.display().to_string(),
                "bytes": bytes,
                "envelope_bytes": envelope.len(),
                "base64_bytes": b64,
                "prompt_reserve_bytes": crate::plan::PROMPT_RESERVE_BYTES,
                "max_request_bytes": preset.max_request_bytes,
            })),
        ))
    }
}

/// Writes the Base64 text of `video` (a temporary file) at `temp` (the claimed path `path`),
/// streamed: neither the video nor its text is held in memory whole.
fn write_base64(video: &Path, path: &Path, temp: &Path) -> Result<()> {
    use std::io::Write as _;
    let mut input = std::fs::File::open(video).map_err(|e| Error::io(path, e))?;
    let file = std::fs::File::create(temp).map_err(|e| Error::io(path, e))?;
    let mut encoder = base64::write::EncoderWriter::new(
        std::io::BufWriter::new(file),
        &base64::engine::general_purpose::STANDARD,
    );
    std::io::copy(&mut input, &mut encoder).map_err(|e| Error::io(path, e))?;
    let mut out = encoder.finish().map_err(|e| Error::io(path, e))?;
    out.flush().map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_arithmetic() {
        assert_eq!(base64_len(0), 0);
        assert_eq!(base64_len(1), 4);
        assert_eq!(base64_len(3), 4);
        assert_eq!(base64_len(4), 8);
        assert_eq!(budget_bytes(10_000_000), 7_500_000);
        assert!(base64_len(budget_bytes(10_000_000)) <= 10_000_000);
        assert!(base64_len(budget_bytes(10_000_002)) <= 10_000_002);
        assert!(base64_len(budget_bytes(10_000_002) + 1) > 10_000_002);
    }

    #[test]
    fn plans_lower_frame_rate_then_resolution_only_when_needed() {
        // 60 s of 1080p30 in 10 MB: about 0.9 Mbit/s of video, enough bits per pixel.
        let p = plan_rates(
            1920,
            1080,
            1800,
            60.0,
            true,
            (1920, 1280),
            budget_bytes(10_000_000),
        )
        .unwrap();
        assert_eq!((p.size, p.frame_step), ((1920, 1080), 1));
        assert!(
            p.video_bit_rate > 800_000.0 && p.video_bit_rate < 1_000_000.0,
            "{}",
            p.video_bit_rate
        );
        assert_eq!(p.audio_bit_rate, Some(100_000));
        // 10 minutes of 4K60 in 10 MB: fewer frames, then fewer pixels.
        let p = plan_rates(
            3840,
            2160,
            36000,
            600.0,
            false,
            (1920, 1280),
            budget_bytes(10_000_000),
        )
        .unwrap();
        assert!(p.frame_step >= 2);
        assert!(p.size.0 < 1920);
        // Nothing can fit a few hundred bytes.
        assert!(plan_rates(640, 360, 250, 10.0, false, (1920, 1280), 300)
            .unwrap_err()
            .contains("budget"));
    }
}
