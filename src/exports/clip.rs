//! The `clip` export: the processed stream encoded as H.264 (+AAC) in the container its name
//! asks for (`.mp4`, `.mov`, `.mkv`), each frame keeping its source timestamp, with its sidecar
//! and, when asked (or for a needle insertion), its boxes beside it. With `copy` it
//! stream-copies whole GOPs instead ([`super::copy`]).

use std::path::Path;

use crate::call::output::group::OutputGroup;
use crate::error::Result;
use crate::exports::claimed::{
    boxes_out_of, clip_summary, video_sidecar, write_boxes_file, Claimed,
};
use crate::exports::{encode_settings, Export, ExportContext, ExportReport, ExportTarget, Wants};
use crate::frames::pipeline::{FrameSink, Progress};
use crate::frames::sinks::{StagedSink, VideoSink};
use crate::frames::stages::stream::ProcessedStream;
use crate::plan::{ClipExport, ExportSpec, Plan};
use crate::vocab::EncodeSettings;

/// The `clip` export.
pub(crate) struct ClipMaker {
    spec: ExportSpec,
    clip: ClipExport,
    claimed: Option<Claimed>,
    encode: EncodeSettings,
    sink: Option<StagedSink<VideoSink>>,
    /// The smart plan, when the clip is smart and it applies.
    smart: Option<super::smart::SmartPlan>,
    /// Why a smart clip is fully encoded instead.
    smart_fallback: Option<String>,
}

impl ClipMaker {
    pub fn new(spec: &ExportSpec, clip: &ClipExport) -> ClipMaker {
        ClipMaker {
            spec: spec.clone(),
            clip: clip.clone(),
            claimed: None,
            encode: EncodeSettings::default(),
            sink: None,
            smart: None,
            smart_fallback: None,
        }
    }
}

impl Export for ClipMaker {
    fn target_in(&self, dir: &Path) -> ExportTarget {
        let ext = self.clip.container.as_deref().unwrap_or("mp4");
        ExportTarget::at(dir.join(format!("{}.{ext}", self.spec.name())))
    }

    fn claim(&mut self, target: &ExportTarget, plan: &Plan, group: &mut OutputGroup) -> Result<()> {
        let boxes = if self.clip.copy {
            None
        } else {
            boxes_out_of(self.clip.boxes_out, plan)
        };
        self.claimed = Some(Claimed::claim(target, boxes, group)?);
        Ok(())
    }

    fn start(
        &mut self,
        stream: &ProcessedStream,
        ctx: &ExportContext,
        _group: &mut OutputGroup,
    ) -> Result<Wants> {
        if self.clip.copy {
            // Nothing is encoded; only whether the audio is wanted applies.
            self.encode.audio = encode_settings(ctx, None, None, self.clip.audio).audio;
            return Ok(Wants::Nothing);
        }
        super::check_encodable(stream)?;
        let claimed = self.claimed.as_ref().expect("claimed before start");
        self.encode = encode_settings(
            ctx,
            self.clip.crf,
            self.clip.preset.as_deref(),
            self.clip.audio,
        );
        self.encode.validate()?;
        if self.clip.smart {
            let container = crate::media::encode::Container::for_output(&claimed.main)?;
            match super::smart::plan(stream, container, &self.encode)? {
                Ok(plan) => {
                    self.smart = Some(plan);
                    return Ok(Wants::Nothing);
                }
                Err(why) => self.smart_fallback = Some(why),
            }
        }
        if self.encode.audio {
            stream.audio_with_full_decode();
        }
        let sink = VideoSink::new(
            &claimed.main_temp,
            &claimed.main,
            stream.timing(),
            &self.encode,
            Some(stream.audio()),
            stream.provenance(),
        )?
        .with_source(&stream.source)
        .with_end_time(stream.duration())
        .with_boxes(stream.box_recorder());
        self.sink = Some(StagedSink::new(stream.draw_stages(), sink));
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
        if self.clip.copy {
            return super::copy::copy_export(stream, &self.spec, claimed, self.encode.audio);
        }
        if let Some(plan) = self.smart.take() {
            return super::smart::write(
                stream,
                &self.spec,
                claimed,
                plan,
                &self.encode,
                self.clip.verify,
                _progress,
            );
        }
        let out = self
            .sink
            .take()
            .expect("started before finish")
            .into_inner()
            .into_output()?;
        let mut extra = serde_json::Map::new();
        if let Some(why) = &self.smart_fallback {
            let mut smart = serde_json::json!({"applied": false, "fallback": why});
            if self.clip.verify {
                // Every frame was re-encoded: each is checked like a re-encoded part.
                let parts = [super::smart::Part::Encoded {
                    output: 0..stream.frame_count(),
                }];
                let report = super::smart::verify_output(&claimed.main_temp, stream, &parts)?;
                smart["verify"] = serde_json::to_value(&report).expect("serialises");
            }
            extra.insert("smart".into(), smart);
        }
        let mut warnings = Vec::new();
        if let Some(why) = &self.smart_fallback {
            warnings.push(format!(
                "smart encoding does not apply ({why}): fully encoded"
            ));
        }
        let sidecar = video_sidecar(
            "clip",
            stream,
            &self.spec,
            claimed,
            &out,
            Some(&self.encode),
            extra,
            warnings,
        )?;
        write_boxes_file(claimed, &out, stream)?;
        Ok(ExportReport {
            name: self.spec.name().to_string(),
            kind: "clip",
            files: claimed.files(),
            summary: clip_summary(&claimed.main, stream, out.report.frames),
            frames: out.report.frames,
            warnings: sidecar.warnings,
        })
    }
}
