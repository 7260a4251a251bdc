//! Provenance: the [`FrameRun`]s of an output, recorded from the pipeline's frames as they
//! arrive (their source, index and timestamp), and the damaged frames among them, for the
//! output's sidecar (`crate::records::sidecar`).

use crate::frames::pipeline::{FrameOrigin, PipelineFrame};
use crate::records::sidecar::{DamagedOutputFrame, FrameRun};
use crate::vocab::time::{decimal_text, Time};
use crate::vocab::Ratio;

/// Collects [`FrameRun`]s from the frames an output receives.
#[derive(Clone, Debug, Default)]
pub struct ProvenanceRecorder {
    runs: Vec<FrameRun>,
    source_times: Vec<(Time, Ratio)>,
    damaged: Vec<DamagedOutputFrame>,
}

/// What a [`ProvenanceRecorder`] records of a frame, without its pictures.
#[derive(Clone, Copy, Debug)]
pub struct FrameNote {
    pub index: usize,
    pub time: Time,
    pub origin: FrameOrigin,
    pub damaged: bool,
}

impl FrameNote {
    pub fn of(frame: &PipelineFrame) -> FrameNote {
        FrameNote {
            index: frame.index,
            time: frame.time,
            origin: frame.origin,
            damaged: frame.damaged,
        }
    }
}

impl ProvenanceRecorder {
    /// `sources` gives, per source, its time origin (the absolute time of its time 0) and its
    /// time base (for `source_time_start_s`).
    pub fn new(sources: &[(Time, Ratio)]) -> ProvenanceRecorder {
        ProvenanceRecorder {
            runs: Vec::new(),
            source_times: sources.to_vec(),
            damaged: Vec::new(),
        }
    }

    pub fn record(&mut self, frame: &PipelineFrame) {
        self.record_note(&FrameNote::of(frame));
    }

    /// Records a frame from what [`FrameNote::of`] kept of it (a frame seen on another
    /// thread, recorded in output order later).
    pub fn record_note(&mut self, frame: &FrameNote) {
        if frame.damaged {
            self.damaged.push(DamagedOutputFrame {
                output_frame: frame.index,
                source: frame.origin.source,
                source_frame: frame.origin.index,
            });
        }
        self.record_parts(frame.index, frame.time, frame.origin);
    }

    /// Records output frame `index`, shown at output time `time`, taken from `o`.
    pub fn record_parts(&mut self, index: usize, time: Time, o: FrameOrigin) {
        let (origin, tb) = self
            .source_times
            .get(o.source)
            .copied()
            .unwrap_or((Time::ZERO, Ratio::new(1, 1)));
        if let Some(run) = self.runs.last_mut() {
            let next_out = run.output_start + run.count;
            let step = if run.count == 1 {
                o.pts - run.source_pts_start
            } else {
                run.source_pts_step
            };
            // Output time and source pts must both follow the run's formula.
            let k = run.count as i64;
            let continues = run.source == o.source
                && index == next_out
                && o.index == run.source_start + run.count
                && step > 0
                && o.pts == run.source_pts_start + k * step
                && time == run.output_time + Time::from_pts(k * step, tb.num, tb.den);
            if continues {
                run.source_pts_step = step;
                run.count += 1;
                return;
            }
        }
        self.runs.push(FrameRun {
            output_start: index,
            count: 1,
            source: o.source,
            source_start: o.index,
            source_pts_start: o.pts,
            source_pts_step: 0,
            output_time_start: decimal_text(time),
            output_time_start_s: time.as_secs_f64(),
            source_time_start_s: (Time::from_pts(o.pts, tb.num, tb.den) - origin).as_secs_f64(),
            output_time: time,
        });
    }

    pub fn into_runs(self) -> Vec<FrameRun> {
        self.runs
    }

    /// The runs and the damaged output frames.
    pub fn into_parts(self) -> (Vec<FrameRun>, Vec<DamagedOutputFrame>) {
        (self.runs, self.damaged)
    }
}
