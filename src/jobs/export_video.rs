//! Capped video for video-native models: at most `max_size` (1920x1280 by default, aspect
//! kept, even sides, never upscaled) and a Base64-encoded file of at most `max_base64_bytes`
//! (10 MB by default; Base64 of `n` bytes is `4 * ceil(n / 3)` characters).
//!
//! The size cap is reached by a solver, not by trial and error: from the duration and the byte
//! budget it picks a video bit rate (after audio and container overhead) aiming at 93% of the
//! budget, encodes once with x264's average-bit-rate control, measures, and corrects the rate
//! by the ratio of wanted to measured video bytes. Typical inputs fit (85-100% of the budget)
//! in one or two encodes. Frame rate, then resolution, are lowered only when the bit rate per
//! pixel would fall below what x264 can produce. Every attempt is recorded in the sidecar.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::fit::fit_within;
use crate::jobs::clip::{make_clips, ClipJob, ClipOptions, ClipSpec};
use crate::media::audio::audio_stream_format;
use crate::media::encode::EncodeSettings;
use crate::media::input::VideoInput;
use crate::media::table::FrameTable;
use crate::output::{ensure_not_an_input, sidecar_path, PendingFile, TEMP_MARKER};
use crate::overlay::BoxesRequest;
use crate::pipeline::Progress;
use crate::sidecar::VERSION;

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
/// Above this many bits per pixel per frame the budget exceeds what good quality needs: the
/// first encode is then a constant-quality one (CRF), kept if it fits.
const QUALITY_CEILING_BPP: f64 = 0.25;
/// The highest rate the solver asks for (x264's own limits are near).
const MAX_VIDEO_RATE: f64 = 1.0e9;

#[derive(Clone, Debug)]
pub struct VideoExportRequest {
    pub input: PathBuf,
    pub output: PathBuf,
    /// Optional span/decision of the input to export (the whole input when empty).
    pub spec: ClipSpec,
    pub max_size: (u32, u32),
    pub max_base64_bytes: u64,
    /// Also write the Base64 text here.
    pub base64: Option<PathBuf>,
    /// Re-encode even when the input already fits both caps.
    pub reencode: bool,
    /// Boxes to carry (and draw) through the resize.
    pub boxes: Option<BoxesRequest>,
    /// Preset, audio and threads are used; the rate comes from the solver.
    pub encode: EncodeSettings,
}

impl VideoExportRequest {
    pub fn new(input: PathBuf, output: PathBuf) -> VideoExportRequest {
        VideoExportRequest {
            input,
            output,
            spec: ClipSpec::default(),
            max_size: (1920, 1280),
            max_base64_bytes: 10_000_000,
            base64: None,
            reencode: false,
            boxes: None,
            encode: EncodeSettings::default(),
        }
    }
}

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
    pub seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct VideoExport {
    pub output: PathBuf,
    pub sidecar: PathBuf,
    pub base64: Option<PathBuf>,
    pub passthrough: bool,
    pub bytes: u64,
    pub base64_bytes: u64,
    pub budget_used: f64,
    pub width: u32,
    pub height: u32,
    pub attempts: Vec<Attempt>,
    pub warnings: Vec<String>,
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
    let total_rate = budget as f64 * 8.0 / duration_s;
    let audio_bit_rate = has_audio.then(|| (total_rate * 0.1).clamp(32_000.0, 128_000.0) as u64);
    let overhead = 2048.0
        + 24.0 * frames as f64
        + if has_audio {
            12.0 * duration_s * 48_000.0 / 1024.0
        } else {
            0.0
        };
    let video_bit_rate = ((budget as f64 * AIM - overhead) * 8.0
        - audio_bit_rate.unwrap_or(0) as f64 * duration_s)
        / duration_s;
    if video_bit_rate < MIN_VIDEO_RATE {
        return Err(format!(
            "a budget of {budget} bytes leaves {:.0} bit/s of video for {duration_s:.2} s; at least {MIN_VIDEO_RATE:.0} bit/s is needed",
            video_bit_rate.max(0.0)
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
        return Err(format!(
            "a budget of {budget} bytes is too small for {duration_s:.2} s of video even at {}x{} and {:.1} fps",
            size.0,
            size.1,
            fps / frame_step as f64
        ));
    }
    Ok(RatePlan {
        size,
        frame_step,
        video_bit_rate,
        audio_bit_rate,
    })
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
            seconds,
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
fn passthrough_blocker(input: &Path, output: &Path) -> Result<Option<String>> {
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
    let opened = VideoInput::open(input)?;
    let v = &opened.video;
    if !is_mp4_name(input) || !opened.context.format().name().contains("mp4") {
        return Ok(Some(format!(
            "the input is {} in a {} file, not an MP4",
            v.codec,
            opened.context.format().name()
        )));
    }
    if v.codec != "h264" || v.pixel_format != "yuv420p" {
        return Ok(Some(format!(
            "the video is {} {}, not H.264 yuv420p",
            v.codec, v.pixel_format
        )));
    }
    if v.rotation != crate::media::input::Rotation::None {
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
    for s in opened.context.streams() {
        if s.parameters().medium() == ffmpeg_next::media::Type::Audio
            && s.parameters().id() != ffmpeg_next::codec::Id::AAC
        {
            return Ok(Some(format!(
                "the audio is {}, not AAC",
                s.parameters().id().name()
            )));
        }
    }
    let table = FrameTable::for_file(input)?;
    if !table.damage.is_empty() {
        return Ok(Some(format!(
            "the video is damaged: {}",
            table.damage.summary()
        )));
    }
    Ok(None)
}

/// Exports `request.input` within the caps.
pub fn export_video(
    request: &VideoExportRequest,
    progress: &mut dyn Progress,
) -> Result<VideoExport> {
    crate::media::table::retry_on_table_mismatch(|| export_video_once(request, progress))
}

fn export_video_once(
    request: &VideoExportRequest,
    progress: &mut dyn Progress,
) -> Result<VideoExport> {
    request.encode.validate()?;
    if request.max_base64_bytes < 64 {
        return Err(Error::Usage(format!(
            "--max-base64-bytes {} is too small to hold any video",
            request.max_base64_bytes
        )));
    }
    let mut inputs: Vec<&Path> = vec![&request.input];
    if let Some(b) = &request.boxes {
        inputs.push(&b.path);
    }
    ensure_not_an_input(&request.output, &inputs)?;
    ensure_not_an_input(&sidecar_path(&request.output), &inputs)?;
    if let Some(b) = &request.base64 {
        ensure_not_an_input(b, &inputs)?;
    }
    let budget = budget_bytes(request.max_base64_bytes);
    let input = VideoInput::open(&request.input)?;
    let (width, height) = input.video.displayed_size();
    drop(input);
    let input_bytes = std::fs::metadata(&request.input)
        .map_err(|e| Error::io(&request.input, e))?
        .len();
    let whole = request.spec == ClipSpec::default()
        && request.boxes.as_ref().is_none_or(|b| b.draw.is_none());
    let fits_size = width <= request.max_size.0 && height <= request.max_size.1;
    let mut warnings = Vec::new();
    if !request.reencode
        && whole
        && fits_size
        && base64_len(input_bytes) <= request.max_base64_bytes
    {
        match passthrough_blocker(&request.input, &request.output)? {
            None => return pass_through(request, input_bytes, (width, height)),
            Some(why) => warnings.push(format!("re-encoded although it fits: {why}")),
        }
    }

    let table = FrameTable::for_file(&request.input)?;
    let resolved = crate::jobs::clip::resolve_clip(&request.input, &table, &request.spec)?;
    let duration = resolved.duration().as_secs_f64();
    let has_audio = request.encode.audio && audio_stream_format(&request.input)?.is_some();
    let plan = plan_rates(
        width,
        height,
        resolved.kept.len(),
        duration,
        has_audio,
        request.max_size,
        budget,
    )
    .map_err(|m| Error::request(&request.input, m))?;

    let mut solver = RateSolver::new(
        plan,
        request.max_base64_bytes,
        resolved.kept.len(),
        duration,
        request.encode.crf,
    );
    let mut attempt_files: Vec<PathBuf> = Vec::new();
    let name = request
        .output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut last_error = None;
    loop {
        let path = request.output.with_file_name(format!(
            ".{name}{TEMP_MARKER}-attempt{}-{}.mp4",
            solver.attempts.len() + 1,
            std::process::id()
        ));
        attempt_files.push(path.clone());
        let options = ClipOptions {
            encode: solver.settings(&request.encode),
            boxes: request.boxes.clone(),
            boxes_out: None,
            scale_to: Some(plan.size),
            decimate: plan.frame_step,
        };
        let started = std::time::Instant::now();
        let out = make_clips(
            &request.input,
            &[ClipJob {
                spec: request.spec.clone(),
                output: path.clone(),
            }],
            &options,
            progress,
        )?
        .remove(0);
        let bytes = std::fs::metadata(&out.output)
            .map_err(|e| Error::io(&out.output, e))?
            .len();
        match solver.record(&out.report, bytes, started.elapsed().as_secs_f64()) {
            Verdict::Accept => break,
            Verdict::Retry => {}
            Verdict::GiveUp(why) => {
                last_error = Some(why);
                break;
            }
        }
    }
    let cleanup = |files: &[PathBuf], keep: Option<&Path>| {
        for f in files {
            if Some(f.as_path()) != keep {
                let _ = std::fs::remove_file(f);
                let _ = std::fs::remove_file(sidecar_path(f));
            }
        }
    };
    let Some(n) = solver.chosen() else {
        cleanup(&attempt_files, None);
        return Err(Error::request(&request.input, solver.failure(last_error)));
    };
    let chosen = attempt_files[n].clone();
    let attempts = solver.attempts.clone();
    warnings.extend(solver.warnings.iter().cloned());
    // The chosen attempt becomes the output; its sidecar gains the export record.
    let attempt_sidecar: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sidecar_path(&chosen))
            .map_err(|e| Error::io(&sidecar_path(&chosen), e))?,
    )
    .map_err(|e| Error::bad_file(&sidecar_path(&chosen), None, e.to_string()))?;
    std::fs::rename(&chosen, &request.output).map_err(|e| Error::io(&request.output, e))?;
    cleanup(&attempt_files, Some(&request.output));
    let a = &attempts[n];
    let base64 = write_base64(request)?;
    let export = VideoExport {
        output: request.output.clone(),
        sidecar: sidecar_path(&request.output),
        base64,
        passthrough: false,
        bytes: a.bytes,
        base64_bytes: a.base64_bytes,
        budget_used: a.budget_used,
        width: a.width,
        height: a.height,
        attempts: attempts.clone(),
        warnings,
    };
    let mut sidecar = attempt_sidecar;
    sidecar["job"] = "export-video".into();
    sidecar["output"]["path"] = request.output.display().to_string().into();
    sidecar["export"] = export_record(request, budget, &export);
    if !export.warnings.is_empty() {
        sidecar["warnings"] = serde_json::to_value(&export.warnings).expect("strings");
    }
    let text = serde_json::to_string_pretty(&sidecar).expect("sidecar serializes") + "\n";
    PendingFile::write_all(&export.sidecar, text.as_bytes())?;
    Ok(export)
}

fn export_record(
    request: &VideoExportRequest,
    budget: u64,
    export: &VideoExport,
) -> serde_json::Value {
    serde_json::json!({
        "max_size": [request.max_size.0, request.max_size.1],
        "max_base64_bytes": request.max_base64_bytes,
        "budget_bytes": budget,
        "passthrough": export.passthrough,
        "bytes": export.bytes,
        "base64_bytes": export.base64_bytes,
        "budget_used": export.budget_used,
        "encodes": export.attempts.len(),
        "attempts": export.attempts,
        "base64": export.base64.as_ref().map(|p| p.display().to_string()),
    })
}

fn write_base64(request: &VideoExportRequest) -> Result<Option<PathBuf>> {
    let Some(path) = &request.base64 else {
        return Ok(None);
    };
    let bytes = std::fs::read(&request.output).map_err(|e| Error::io(&request.output, e))?;
    let text = base64::engine::general_purpose::STANDARD.encode(bytes);
    PendingFile::write_all(path, text.as_bytes())?;
    Ok(Some(path.clone()))
}

/// The input already fits: copy it byte for byte.
fn pass_through(request: &VideoExportRequest, bytes: u64, size: (u32, u32)) -> Result<VideoExport> {
    let pending = PendingFile::new(&request.output)?;
    std::fs::copy(&request.input, pending.path()).map_err(|e| Error::io(&request.input, e))?;
    pending.commit()?;
    let base64 = write_base64(request)?;
    let export = VideoExport {
        output: request.output.clone(),
        sidecar: sidecar_path(&request.output),
        base64,
        passthrough: true,
        bytes,
        base64_bytes: base64_len(bytes),
        budget_used: base64_len(bytes) as f64 / request.max_base64_bytes as f64,
        width: size.0,
        height: size.1,
        attempts: Vec::new(),
        warnings: Vec::new(),
    };
    let table = FrameTable::for_file(&request.input)?;
    let info = VideoInput::open(&request.input)?.video;
    let sidecar = serde_json::json!({
        "vidprep_version": VERSION,
        "job": "export-video",
        "output": {"path": request.output.display().to_string(), "frames": table.len(), "width": size.0, "height": size.1},
        "sources": [crate::sidecar::SourceRecord::new(&request.input, &info, &table, true)],
        "request": {"input": request.input.display().to_string()},
        "frames": [{"output_start": 0, "count": table.len(), "source": 0, "source_start": 0, "note": "passed through unchanged"}],
        "export": export_record(request, budget_bytes(request.max_base64_bytes), &export),
    });
    let text = serde_json::to_string_pretty(&sidecar).expect("sidecar serializes") + "\n";
    PendingFile::write_all(&export.sidecar, text.as_bytes())?;
    Ok(export)
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
