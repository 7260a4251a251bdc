//! Pipeline sinks that encode video: [`VideoSink`] encodes the frames it receives into a file
//! (written at a temporary path its output group gave it) and records where every frame came
//! from and, when the stream has boxes, the boxes in the output's own frames and pixels.
//! [`StagedSink`] puts an export's own frame stages (resize, frame-rate reduction, drawing)
//! in front of any sink.

use std::path::{Path, PathBuf};

use crate::annotations::{Annotations, TimestampClock};
use crate::error::{Error, Result};
use crate::frames::overlay::BoxRecorder;
use crate::frames::pipeline::{FrameSink, FrameStage, PipelineFrame};
use crate::frames::provenance::ProvenanceRecorder;
use crate::media::audio::AudioPlan;
use crate::media::encode::{Mp4Writer, VideoFormat, WriteReport};
use crate::records::sidecar::{DamagedOutputFrame, FrameRun};
use crate::vocab::time::Time;
use crate::vocab::EncodeSettings;
use crate::vocab::Ratio;

/// Stream properties a [`VideoSink`] gives its encoder (the size comes from the first frame).
#[derive(Clone, Copy, Debug)]
pub struct StreamTiming {
    pub time_base: Ratio,
    pub frame_rate: Option<Ratio>,
    pub sample_aspect_ratio: Ratio,
}

/// What a finished [`VideoSink`] wrote.
pub struct EncodedOutput {
    pub report: WriteReport,
    pub frames: Vec<FrameRun>,
    pub damaged_frames: Vec<DamagedOutputFrame>,
    /// The output's boxes and clock, when boxes were recorded.
    pub boxes: Option<(Annotations, TimestampClock)>,
}

/// Applies its own stages (a resize or a lower frame rate for one output, boxes drawn on its
/// pixels) before its inner sink, numbering the frames it keeps from 0.
pub struct StagedSink<S: FrameSink> {
    stages: Vec<Box<dyn FrameStage + Send>>,
    inner: S,
    kept: usize,
    renumber: bool,
}

impl<S: FrameSink> StagedSink<S> {
    pub fn new(stages: Vec<Box<dyn FrameStage + Send>>, inner: S) -> StagedSink<S> {
        StagedSink {
            stages,
            inner,
            kept: 0,
            renumber: true,
        }
    }

    /// Like [`StagedSink::new`], but frames keep their stream index (for sinks that pick
    /// frames by it; the stages must not drop frames).
    pub fn keeping_indices(stages: Vec<Box<dyn FrameStage + Send>>, inner: S) -> StagedSink<S> {
        StagedSink {
            renumber: false,
            ..StagedSink::new(stages, inner)
        }
    }

    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: FrameSink> FrameSink for StagedSink<S> {
    fn accept(&mut self, frame: &PipelineFrame) -> Result<()> {
        if !self.inner.wants_more() {
            return Ok(());
        }
        let mut f = frame.clone();
        for stage in self.stages.iter_mut() {
            if !stage.keeps(&f) {
                return Ok(());
            }
            stage.apply(&mut f)?;
        }
        if self.renumber {
            f.index = self.kept;
        }
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

/// Encodes frames into a video file, ending no later than `end_time` (an output time).
pub struct VideoSink {
    write_to: PathBuf,
    final_path: PathBuf,
    timing: StreamTiming,
    settings: EncodeSettings,
    audio: Option<AudioPlan>,
    end_time: Option<Time>,
    writer: Option<Mp4Writer>,
    provenance: ProvenanceRecorder,
    boxes: Option<BoxRecorder>,
    report: Option<WriteReport>,
    /// The source its frames come from (errors about the frames name it).
    source: Option<PathBuf>,
}

impl VideoSink {
    /// A sink writing at `write_to` the file that will be `final_path` (whose extension
    /// chooses the container and which errors name).
    pub fn new(
        write_to: &Path,
        final_path: &Path,
        timing: StreamTiming,
        settings: &EncodeSettings,
        audio: Option<AudioPlan>,
        provenance: ProvenanceRecorder,
    ) -> Result<VideoSink> {
        crate::media::encode::Container::for_output(final_path)?;
        Ok(VideoSink {
            write_to: write_to.to_path_buf(),
            final_path: final_path.to_path_buf(),
            timing,
            settings: settings.clone(),
            audio,
            end_time: None,
            writer: None,
            provenance,
            boxes: None,
            report: None,
            source: None,
        })
    }

    /// The source the frames come from, for errors about them.
    pub fn with_source(mut self, source: &Path) -> VideoSink {
        self.source = Some(source.to_path_buf());
        self
    }

    /// End the last frame no later than this output time.
    pub fn with_end_time(mut self, end: Time) -> VideoSink {
        self.end_time = Some(end);
        self
    }

    /// Also record the boxes of every frame, in this output's frames and pixels.
    pub fn with_boxes(mut self, recorder: Option<BoxRecorder>) -> VideoSink {
        self.boxes = recorder;
        self
    }

    /// After the pipeline: what was written, the provenance runs and the boxes.
    pub fn into_output(self) -> Result<EncodedOutput> {
        let report = self
            .report
            .ok_or_else(|| Error::internal("a video output was read before it was finished"))?;
        let (frames, damaged_frames) = self.provenance.into_parts();
        let boxes = match self.boxes {
            Some(recorder) => Some(
                recorder
                    .with_sample_aspect_ratio(self.timing.sample_aspect_ratio)
                    .finish()?,
            ),
            None => None,
        };
        Ok(EncodedOutput {
            report,
            frames,
            damaged_frames,
            boxes,
        })
    }
}

impl FrameSink for VideoSink {
    fn accept(&mut self, frame: &PipelineFrame) -> Result<()> {
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
                colour: crate::media::encode::Colour::of(&frame.image),
            };
            self.writer = Some(Mp4Writer::create(
                &self.write_to,
                &self.final_path,
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
        let (w, h) = writer.size();
        let (fw, fh) = (frame.image.width() & !1, frame.image.height() & !1);
        if (fw, fh) != (w, h) {
            // Recordings joined together (a screen or WebRTC recording): one output keeps one
            // picture size.
            let at = frame.origin.index;
            let (nw, nh) = (frame.image.width(), frame.image.height());
            let why = if crate::media::frame::implausible_size_change((w, h), (nw, nh)) {
                // A VP8 keyframe whose size field was damaged read 320x8944 in a 320x240
                // stream: no recording changes its shape so.
                "a damaged frame header? no recording changes its shape so much; `vidprep \
                 check SRC` lists every size change and the damage"
            } else {
                "recordings joined together?"
            };
            return Err(Error::request(
                self.source.as_deref().unwrap_or(&self.final_path),
                format!(
                    "its picture size changes mid-stream: source frame {at} is {nw}x{nh} where \
                     the output began at {w}x{h} ({why}); an output keeps one size: cut the \
                     parts apart at source frame {at} (--end {at}, and --start {at} for the \
                     rest), or scale the source to one size first (ffmpeg -i SRC -vf \
                     scale={w}:{h} OUT.mp4)",
                ),
            ));
        }
        writer.write(&frame.image, frame.time, duration)?;
        self.provenance.record(frame);
        if let Some(boxes) = self.boxes.as_mut() {
            let (w, h) = writer.size();
            boxes.record(frame, w, h)?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        let writer = self.writer.as_mut().ok_or_else(|| {
            Error::request(&self.final_path, "no frames to write (the stream is empty)")
        })?;
        self.report = Some(writer.finish()?);
        Ok(())
    }
}
