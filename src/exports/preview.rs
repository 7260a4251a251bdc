//! The `preview` export: every frame of the processed stream, shrunk (default within 480x270),
//! as H.264 without B-frames and with a keyframe at least every `gop` frames, so that a
//! browser seeks to any frame quickly and shows exactly that frame. No audio. Its sidecar adds
//! what a review page needs to map clicks to frames: the presentation time of every frame and
//! which source frames carry annotations. `vidprep review` makes one per item.

use std::path::Path;

use crate::call::output::group::OutputGroup;
use crate::error::Result;
use crate::exports::claimed::{video_sidecar, Claimed};
use crate::exports::{Export, ExportContext, ExportReport, ExportTarget, Wants};
use crate::frames::fit::fit_within;
use crate::frames::pipeline::{FrameSink, FrameStage, Progress};
use crate::frames::sinks::{StagedSink, VideoSink};
use crate::frames::stages::resize::ScaleStage;
use crate::frames::stages::stream::ProcessedStream;
use crate::plan::{ExportSpec, Plan, PreviewExport};
use crate::vocab::EncodeSettings;
use crate::vocab::Ratio;

/// The x264 preset of previews: they are for eyes, made in bulk.
const PREVIEW_PRESET: &str = "veryfast";

/// The `preview` export.
pub(crate) struct PreviewMaker {
    spec: ExportSpec,
    preview: PreviewExport,
    claimed: Option<Claimed>,
    encode: EncodeSettings,
    size: (u32, u32),
    sink: Option<StagedSink<VideoSink>>,
}

impl PreviewMaker {
    pub fn new(spec: &ExportSpec, preview: &PreviewExport) -> PreviewMaker {
        PreviewMaker {
            spec: spec.clone(),
            preview: preview.clone(),
            claimed: None,
            encode: EncodeSettings::default(),
            size: (0, 0),
            sink: None,
        }
    }
}

impl Export for PreviewMaker {
    fn target_in(&self, dir: &Path) -> ExportTarget {
        ExportTarget::at(dir.join(format!("{}.mp4", self.spec.name())))
    }

    fn claim(
        &mut self,
        target: &ExportTarget,
        _plan: &Plan,
        group: &mut OutputGroup,
    ) -> Result<()> {
        self.claimed = Some(Claimed::claim(target, None, group)?);
        Ok(())
    }

    fn start(
        &mut self,
        stream: &ProcessedStream,
        _ctx: &ExportContext,
        _group: &mut OutputGroup,
    ) -> Result<Wants> {
        super::check_encodable(stream)?;
        let claimed = self.claimed.as_ref().expect("claimed before start");
        self.encode = EncodeSettings {
            crf: self.preview.crf,
            preset: PREVIEW_PRESET.into(),
            audio: false,
            gop: Some(self.preview.gop),
            bframes: Some(0),
            ..EncodeSettings::default()
        };
        self.encode.validate()?;
        let (width, height) = stream.display_size();
        let size = fit_within(
            width,
            height,
            self.preview.max_size.0,
            self.preview.max_size.1,
        );
        self.size = ((size.0 & !1).max(2), (size.1 & !1).max(2));
        let mut stages: Vec<Box<dyn FrameStage + Send>> = Vec::new();
        if self.size != stream.size {
            stages.push(Box::new(ScaleStage::new(self.size)));
        }
        stages.extend(stream.draw_stages());
        let mut timing = stream.timing();
        timing.sample_aspect_ratio = Ratio::new(1, 1);
        let sink = VideoSink::new(
            &claimed.main_temp,
            &claimed.main,
            timing,
            &self.encode,
            None,
            stream.provenance(),
        )?
        .with_source(&stream.source)
        .with_end_time(stream.duration());
        self.sink = Some(StagedSink::new(stages, sink));
        Ok(Wants::All)
    }

    fn sink(&mut self) -> Option<&mut dyn FrameSink> {
        self.sink.as_mut().map(|s| s as &mut dyn FrameSink)
    }

    fn finish(
        &mut self,
        stream: &ProcessedStream,
        _ctx: &ExportContext,
        _group: &mut OutputGroup,
        _progress: &mut dyn Progress,
    ) -> Result<ExportReport> {
        let claimed = self.claimed.as_ref().expect("claimed before finish");
        let out = self
            .sink
            .take()
            .expect("started before finish")
            .into_inner()
            .into_output()?;
        let mut extra = serde_json::Map::new();
        extra.insert("preview".into(), preview_facts(stream));
        let sidecar = video_sidecar(
            "preview",
            stream,
            &self.spec,
            claimed,
            &out,
            Some(&self.encode),
            extra,
            Vec::new(),
        )?;
        Ok(ExportReport {
            name: self.spec.name().to_string(),
            kind: "preview",
            files: claimed.files(),
            summary: format!(
                "{}: {} frames at {}x{} (keyframe every {} frames or sooner)",
                claimed.main.display(),
                out.report.frames,
                self.size.0,
                self.size.1,
                self.preview.gop
            ),
            frames: out.report.frames,
            warnings: sidecar.warnings,
        })
    }
}

/// Seconds rounded to the microsecond (enough to seek inside any frame's interval).
fn seconds(t: crate::vocab::time::Time) -> f64 {
    (t.as_secs_f64() * 1e6).round() / 1e6
}

/// The facts a review page needs beyond the usual sidecar: every frame's presentation time
/// (frame `k` is on screen during `[times[k], times[k + 1])`, the last until `end_s`), and
/// the source frames that carry annotations (runs `[start, end)`), so a page can count the
/// annotations a clip leaves out.
fn preview_facts(stream: &ProcessedStream) -> serde_json::Value {
    let times: Vec<f64> = stream.times().into_iter().map(seconds).collect();
    let mut runs: Vec<[usize; 2]> = Vec::new();
    let mut outside = 0;
    for (source, boxes) in &stream.box_sources {
        if *source != 0 {
            continue;
        }
        outside += boxes.resolved.keys_outside_video;
        for (frame, _) in boxes.resolved.frames_with_boxes() {
            match runs.last_mut() {
                Some(run) if run[1] == frame => run[1] = frame + 1,
                _ => runs.push([frame, frame + 1]),
            }
        }
    }
    runs.sort_unstable();
    serde_json::json!({
        "times": times,
        "end_s": seconds(stream.duration()),
        "source_start_frame": stream.resolved.kept.start,
        "annotated_source_frames": runs,
        "annotation_keys_outside_video": outside,
    })
}
