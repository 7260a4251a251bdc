//! Pipeline sinks that write files: [`Mp4Sink`] encodes the frames it receives into an MP4
//! under a temporary name and records where every frame came from, for the sidecar.

use std::path::{Path, PathBuf};

use crate::annotations::{Annotations, TimestampClock};
use crate::error::{Error, Result};
use crate::media::audio::AudioPlan;
use crate::media::encode::{EncodeSettings, Mp4Writer, VideoFormat, WriteReport};
use crate::media::input::Ratio;
use crate::output::sidecar_path;
use crate::output::PendingFile;
use crate::overlay::{write_boxes_beside, BoxRecorder, BoxesOutFormat};
use crate::pipeline::FrameStage;
use crate::pipeline::{FrameSink, PipelineFrame};
use crate::sidecar::{FrameRun, ProvenanceRecorder};
use crate::sidecar::{OutputRecord, Sidecar, SourceRecord, VERSION};
use crate::time::Time;

/// Stream properties an [`Mp4Sink`] gives its encoder (the size comes from the first frame).
#[derive(Clone, Copy, Debug)]
pub struct StreamTiming {
    pub time_base: Ratio,
    pub frame_rate: Option<Ratio>,
    pub sample_aspect_ratio: Ratio,
}

/// A finished output, renamed into place.
pub struct CommittedOutput {
    pub path: PathBuf,
    pub report: WriteReport,
    pub frames: Vec<FrameRun>,
    pub damaged_frames: Vec<crate::sidecar::DamagedOutputFrame>,
    pub boxes: Option<BoxRecorder>,
}

/// What an output's sidecar says besides what the output itself knows.
pub struct SidecarContext<'a> {
    pub job: &'a str,
    pub sources: Vec<SourceRecord>,
    pub request: serde_json::Value,
    pub resolved: serde_json::Value,
    pub encode: &'a EncodeSettings,
    pub warnings: Vec<String>,
    /// Also write the output's boxes beside it in this format.
    pub boxes_out: Option<BoxesOutFormat>,
}

/// A committed output with its sidecar written.
pub struct FinishedOutput {
    pub path: PathBuf,
    pub sidecar_path: PathBuf,
    pub sidecar: Sidecar,
    pub report: WriteReport,
    pub boxes_file: Option<PathBuf>,
    /// The output's boxes and clock, when boxes were recorded.
    pub boxes: Option<(Annotations, TimestampClock)>,
}

impl CommittedOutput {
    /// Writes the sidecar beside the output: provenance, the boxes in the output's frames and
    /// pixels (when recorded), and `ctx`.
    pub fn write_sidecar(self, mut ctx: SidecarContext) -> Result<FinishedOutput> {
        let mut annotations = None;
        let mut boxes_file = None;
        let mut boxes = None;
        if let Some(recorder) = self.boxes {
            let (out_boxes, clock) = recorder.finish()?;
            if out_boxes.box_count() == 0 {
                ctx.warnings
                    .push("no annotated box falls inside this output".into());
            }
            if let Some(format) = ctx.boxes_out {
                boxes_file = Some(write_boxes_beside(&self.path, &out_boxes, &clock, format)?);
            }
            let text = crate::annotations::to_native_string(&out_boxes)?;
            annotations = Some(serde_json::from_str(&text).expect("native JSON parses"));
            boxes = Some((out_boxes, clock));
        }
        let sidecar = Sidecar {
            vidprep_version: VERSION,
            job: ctx.job.to_string(),
            output: OutputRecord::from_report(&self.path, &self.report),
            sources: ctx.sources,
            request: ctx.request,
            resolved: ctx.resolved,
            frames: self.frames,
            damaged_frames: self.damaged_frames,
            encode: Some(ctx.encode.clone()),
            annotations,
            warnings: ctx.warnings,
        };
        let sidecar_path = sidecar_path(&self.path);
        sidecar.write(&sidecar_path)?;
        Ok(FinishedOutput {
            path: self.path,
            sidecar_path,
            sidecar,
            report: self.report,
            boxes_file,
            boxes,
        })
    }
}

/// Applies its own stages (a resize or a lower frame rate for one output) before its inner
/// sink, numbering the frames it keeps from 0.
pub struct StagedSink<S: FrameSink> {
    stages: Vec<Box<dyn FrameStage + Send>>,
    inner: S,
    kept: usize,
}

impl<S: FrameSink> StagedSink<S> {
    pub fn new(stages: Vec<Box<dyn FrameStage + Send>>, inner: S) -> StagedSink<S> {
        StagedSink {
            stages,
            inner,
            kept: 0,
        }
    }

    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: FrameSink> FrameSink for StagedSink<S> {
    fn accept(&mut self, frame: &PipelineFrame) -> Result<()> {
        let mut f = frame.clone();
        for stage in self.stages.iter_mut() {
            if !stage.keeps(&f) {
                return Ok(());
            }
            stage.apply(&mut f)?;
        }
        f.index = self.kept;
        self.kept += 1;
        self.inner.accept(&f)
    }

    fn finish(&mut self) -> Result<()> {
        self.inner.finish()
    }

    fn wants_more(&self) -> bool {
        self.inner.wants_more()
    }
}

/// Encodes frames into an MP4, optionally only the first `limit` of them and ending no later
/// than `end_time` (an output time).
pub struct Mp4Sink {
    pending: PendingFile,
    timing: StreamTiming,
    settings: EncodeSettings,
    audio: Option<AudioPlan>,
    limit: Option<usize>,
    end_time: Option<Time>,
    writer: Option<Mp4Writer>,
    provenance: ProvenanceRecorder,
    boxes: Option<BoxRecorder>,
    report: Option<WriteReport>,
}

impl Mp4Sink {
    pub fn new(
        final_path: &Path,
        timing: StreamTiming,
        settings: &EncodeSettings,
        audio: Option<AudioPlan>,
        provenance: ProvenanceRecorder,
    ) -> Result<Mp4Sink> {
        crate::media::encode::Container::for_output(final_path)?;
        Ok(Mp4Sink {
            pending: PendingFile::new(final_path)?,
            timing,
            settings: settings.clone(),
            audio,
            limit: None,
            end_time: None,
            writer: None,
            provenance,
            boxes: None,
            report: None,
        })
    }

    /// Keep only output frames `0..limit`.
    pub fn with_limit(mut self, limit: usize) -> Mp4Sink {
        self.limit = Some(limit);
        self
    }

    /// End the last frame no later than this output time.
    pub fn with_end_time(mut self, end: Time) -> Mp4Sink {
        self.end_time = Some(end);
        self
    }

    /// Also record the boxes of every frame, in this output's frames and pixels.
    pub fn with_boxes(mut self, recorder: BoxRecorder) -> Mp4Sink {
        self.boxes = Some(recorder);
        self
    }

    pub fn final_path(&self) -> &Path {
        self.pending.final_path()
    }

    /// After `finish`: what was written.
    pub fn report(&self) -> Option<&WriteReport> {
        self.report.as_ref()
    }

    pub fn frame_runs(&self) -> &[FrameRun] {
        self.provenance.runs()
    }

    /// Renames the finished file into place.
    pub fn commit(self) -> Result<CommittedOutput> {
        let report = self
            .report
            .ok_or_else(|| Error::Usage("output committed before it was finished".into()))?;
        let path = self.pending.commit()?;
        let (frames, damaged_frames) = self.provenance.into_parts();
        Ok(CommittedOutput {
            path,
            report,
            frames,
            damaged_frames,
            boxes: self.boxes,
        })
    }
}

impl FrameSink for Mp4Sink {
    fn accept(&mut self, frame: &PipelineFrame) -> Result<()> {
        if !self.wants_more() {
            return Ok(());
        }
        if self.writer.is_none() {
            // An output that ends between frames (a decision point) needs a time base that
            // holds its end exactly.
            let time_base = match self.end_time {
                Some(end) => crate::media::encode::time_base_including(self.timing.time_base, end),
                None => self.timing.time_base,
            };
            let format = VideoFormat {
                width: frame.image.width(),
                height: frame.image.height(),
                time_base,
                frame_rate: self.timing.frame_rate,
                sample_aspect_ratio: self.timing.sample_aspect_ratio,
            };
            self.writer = Some(Mp4Writer::create(
                self.pending.path(),
                self.pending.final_path(),
                format,
                &self.settings,
                self.audio.as_ref(),
            )?);
        }
        let duration = match self.end_time {
            Some(end) => (end - frame.time).min(frame.duration),
            None => frame.duration,
        };
        let writer = self.writer.as_mut().expect("created above");
        writer.write(&frame.image, frame.time, duration)?;
        self.provenance.record(frame);
        if let Some(boxes) = self.boxes.as_mut() {
            let (w, h) = writer.size();
            boxes.record(frame, w, h)?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| Error::request(self.pending.final_path(), "no frames to write"))?;
        self.report = Some(writer.finish()?);
        Ok(())
    }

    fn wants_more(&self) -> bool {
        match (self.limit, &self.writer) {
            (Some(limit), Some(w)) => w.frames_written() < limit,
            (Some(limit), None) => limit > 0,
            _ => true,
        }
    }
}
