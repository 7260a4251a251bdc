//! The one decode -> sinks pipeline. A [`FrameSource`] yields the processed stream's frames
//! with their index, timing and provenance; every [`FrameSink`] consumes the same stream (an
//! encoder, a frame sampler, ...), each behind its own [`FrameStage`]s (resize, drawing). The
//! source runs on its own thread a few frames ahead, so decoding overlaps the sinks' work.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::media::decode::FrameReader;
use crate::media::table::FrameTable;
use crate::media::Picture;
use crate::vocab::time::{FrameRange, Time};

/// Where an output frame came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameOrigin {
    /// Which input of the job (index into the job's list of sources).
    pub source: usize,
    /// 0-based frame index in that source.
    pub index: usize,
    /// Presentation timestamp in that source's time base.
    pub pts: i64,
}

/// How a frame's pixels relate to its source's displayed (upright) frame: a source point
/// `(x, y)` is at `(x * scale_x + offset_x, y * scale_y + offset_y)` in the frame. Stages that
/// resize, pad or place pictures update it, so annotations can follow the pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    pub scale_x: f64,
    pub scale_y: f64,
    pub offset_x: f64,
    pub offset_y: f64,
}

impl Geometry {
    pub const IDENTITY: Geometry = Geometry {
        scale_x: 1.0,
        scale_y: 1.0,
        offset_x: 0.0,
        offset_y: 0.0,
    };

    /// Maps a source box into the frame.
    pub fn apply(&self, b: &crate::annotations::BBox) -> crate::annotations::BBox {
        crate::annotations::BBox {
            x1: b.x1 * self.scale_x + self.offset_x,
            y1: b.y1 * self.scale_y + self.offset_y,
            x2: b.x2 * self.scale_x + self.offset_x,
            y2: b.y2 * self.scale_y + self.offset_y,
        }
    }

    /// This geometry followed by `then` (e.g. a later resize).
    pub fn then(&self, then: &Geometry) -> Geometry {
        Geometry {
            scale_x: self.scale_x * then.scale_x,
            scale_y: self.scale_y * then.scale_y,
            offset_x: self.offset_x * then.scale_x + then.offset_x,
            offset_y: self.offset_y * then.scale_y + then.offset_y,
        }
    }
}

impl Default for Geometry {
    fn default() -> Self {
        Geometry::IDENTITY
    }
}

/// One frame travelling through the pipeline (cloning shares the picture's buffers).
pub struct PipelineFrame {
    /// YUV 4:2:0, upright.
    pub image: Picture,
    /// 0-based index in the output.
    pub index: usize,
    /// Presentation time in the output, from 0.
    pub time: Time,
    /// How long the frame is shown.
    pub duration: Time,
    pub origin: FrameOrigin,
    /// Where the source's pixels are in `image`.
    pub geometry: Geometry,
    /// The decoder marked the source picture as damaged (errors concealed).
    pub damaged: bool,
    /// The same picture in its source's RGB coding (see [`crate::media::frame::Frame::rgb`]),
    /// at `image`'s size, while no stage has changed its pixels other than by scaling; RGB
    /// outputs are made from it. `None` for limited-range 8-bit 4:2:0 sources.
    pub rgb: Option<Picture>,
}

impl Clone for PipelineFrame {
    fn clone(&self) -> Self {
        PipelineFrame {
            image: self.image.share(),
            index: self.index,
            time: self.time,
            duration: self.duration,
            origin: self.origin,
            geometry: self.geometry,
            damaged: self.damaged,
            rgb: self.rgb.as_ref().map(Picture::share),
        }
    }
}

/// Produces the frames of an output in order (on its own thread, hence `Send`).
pub trait FrameSource: Send {
    fn next_frame(&mut self) -> Result<Option<PipelineFrame>>;
    /// Frames this source will produce, when known (for progress).
    fn len_hint(&self) -> Option<usize> {
        None
    }
}

/// Changes frames in place, or drops them.
pub trait FrameStage {
    /// False drops the frame (the stages after it and the sinks never see it). Called before
    /// `apply`; the default keeps every frame.
    fn keeps(&mut self, _frame: &PipelineFrame) -> bool {
        true
    }

    fn apply(&mut self, frame: &mut PipelineFrame) -> Result<()>;
}

/// Consumes frames; `finish` is called once after the last frame.
pub trait FrameSink {
    fn accept(&mut self, frame: &PipelineFrame) -> Result<()>;
    fn finish(&mut self) -> Result<()>;
    /// False once the sink wants no more frames (the pipeline stops early when all agree).
    fn wants_more(&self) -> bool {
        true
    }
}

/// Progress reports from long work. The library never draws; callers implement this (the CLI
/// draws a bar). Returning `false` from `advance` cancels the work.
pub trait Progress: Send {
    /// The number of frames the coming pass will decode, when known (called before it starts;
    /// may be called again for a later pass).
    fn set_length(&mut self, _frames: u64) {}
    /// `frames` more frames are done. Return `false` to stop: the work then fails with
    /// [`Error::Cancelled`](crate::Error::Cancelled) and no output is committed.
    fn advance(&mut self, _frames: u64) -> bool {
        true
    }
}

/// A [`Progress`] that ignores everything.
pub struct NoProgress;

impl Progress for NoProgress {}

/// Frames decoded ahead of the stages and sinks (bounds memory: a few frames at most).
const READ_AHEAD: usize = 4;

/// Runs the pipeline to the end of the source (or until no sink wants more); returns the
/// number of frames that went through. The source runs on its own thread, a few frames ahead,
/// so decoding overlaps drawing and encoding (the source carries the call it reads for).
/// Stops with [`Error::Cancelled`] once `cancel`, the call's token, is cancelled.
pub fn run(
    source: &mut dyn FrameSource,
    sinks: &mut [&mut dyn FrameSink],
    progress: &mut dyn Progress,
    cancel: &crate::call::cancel::CancelToken,
) -> Result<usize> {
    if let Some(n) = source.len_hint() {
        progress.set_length(n as u64);
    }
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<PipelineFrame>>(READ_AHEAD);
        scope.spawn(move || {
            loop {
                let next = source.next_frame();
                let stop = !matches!(next, Ok(Some(_)));
                let item = match next {
                    Ok(Some(frame)) => Ok(frame),
                    Ok(None) => break,
                    Err(e) => Err(e),
                };
                // A closed channel means the consumer stopped: stop reading.
                if tx.send(item).is_err() || stop {
                    break;
                }
            }
        });
        let mut count = 0usize;
        while sinks.iter().any(|s| s.wants_more()) {
            let Ok(next) = rx.recv() else { break };
            // A read cut short by the cancel (FFmpeg's `AVERROR_EXIT`) is the cancel.
            if cancel.is_cancelled() {
                return Err(Error::Cancelled);
            }
            let frame = next?;
            if !progress.advance(1) {
                return Err(Error::Cancelled);
            }
            // Frames keep their index in the stream; each sink's stages renumber what they keep.
            for sink in sinks.iter_mut() {
                if sink.wants_more() {
                    sink.accept(&frame)?;
                }
            }
            count += 1;
        }
        drop(rx);
        for sink in sinks.iter_mut() {
            sink.finish()?;
        }
        Ok(count)
    })
}

/// The frames `[range.start, range.end)` of one video, timed from the first of them, each
/// shown until the next (the last one no later than `end_limit`, a source time).
pub struct ClipSource {
    reader: FrameReader,
    table: Arc<FrameTable>,
    range: FrameRange,
    end_limit: Time,
    origin_time: Time,
    source_id: usize,
    next: usize,
    started: bool,
}

impl ClipSource {
    pub fn new(
        reader: FrameReader,
        table: Arc<FrameTable>,
        range: FrameRange,
        end_limit: Time,
        source_id: usize,
    ) -> ClipSource {
        let origin_time = table.time(range.start.min(table.len().saturating_sub(1)));
        ClipSource {
            reader,
            table,
            range,
            end_limit,
            origin_time,
            source_id,
            next: range.start,
            started: false,
        }
    }

    /// The reader, for its input (see [`FrameReader::into_input`]).
    pub(crate) fn into_reader(self) -> FrameReader {
        self.reader
    }
}

impl FrameSource for ClipSource {
    fn next_frame(&mut self) -> Result<Option<PipelineFrame>> {
        if self.next >= self.range.end {
            return Ok(None);
        }
        if !self.started {
            self.started = true;
            self.reader.seek_to_index(self.range.start)?;
        }
        let Some(frame) = self.reader.next_frame()? else {
            return Err(Error::corrupt(
                self.reader.path(),
                format!("at frame {}", self.next),
                format!(
                    "the video ended early: the packets promise {} frames",
                    self.table.len()
                ),
            ));
        };
        if frame.index != self.next {
            return Err(Error::corrupt(
                self.reader.path(),
                format!("at frame {}", self.next),
                format!("the decoder returned frame {} instead", frame.index),
            ));
        }
        let index = self.next;
        self.next += 1;
        let shown_until =
            (self.table.time(index) + self.table.duration_of(index)).min(self.end_limit);
        Ok(Some(PipelineFrame {
            image: frame.image,
            index: index - self.range.start,
            time: frame.time - self.origin_time,
            duration: (shown_until - frame.time).max(Time::ZERO),
            origin: FrameOrigin {
                source: self.source_id,
                index,
                pts: frame.pts,
            },
            geometry: Geometry::IDENTITY,
            damaged: frame.damaged,
            rgb: frame.rgb,
        }))
    }

    fn len_hint(&self) -> Option<usize> {
        Some(self.range.len())
    }
}
