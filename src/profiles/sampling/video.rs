//! What the samplers know about a video: [`FrameTimes`] (the true frame count, the exact
//! duration, the frame on screen at an exact time, the container's nominal float frame rate)
//! and its two implementations, [`ConstantRate`] and [`FrameList`] (any list of presentation
//! times, so variable frame rate is handled).

use crate::vocab::time::{FrameTimeline, Time};

use super::numeric::rational_approx;

/// What a sampler needs to know about a video.
///
/// Times are measured from the presentation time of the first frame (frame 0 is shown at 0).
pub trait FrameTimes {
    /// The true number of decoded frames (the caller guarantees this is exact).
    fn total(&self) -> usize;
    /// Exact duration: from the first frame's presentation time to the end of the last frame.
    fn duration(&self) -> Time;
    /// The frame on screen at `t` by the one time-to-frame rule ([`FrameTimeline`]: a time
    /// within a hundredth of a frame of a frame's time is that frame's time): the frame with
    /// the largest presentation time `<= t` (frame 0 for `t` before it, the last frame for `t`
    /// past the end).
    fn frame_shown_at(&self, t: Time) -> usize;
    /// The container's nominal frame rate as a float, as toolkits read it (decord's
    /// `get_avg_fps()`, PyAV's `average_rate`). Only the toolkit fps rules use it.
    fn nominal_fps(&self) -> f64;
    /// How long a frame typically lasts (the median spacing of the frames): sampling faster
    /// than this repeats frames because the rate is above the video's, while a slower rate
    /// repeats a frame only where the video holds it (a freeze in variable frame rate).
    fn typical_frame_duration(&self) -> Option<Time> {
        let fps = self.nominal_fps();
        (fps.is_finite() && fps > 0.0).then(|| {
            let (p, q) = rational_approx(fps, 1_000_000);
            Time::new(q, p)
        })
    }
}

/// A constant-frame-rate video: frame `i` is shown during `[i/rate, (i+1)/rate)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstantRate {
    total: usize,
    rate_num: i64,
    rate_den: i64,
    nominal_fps: Option<f64>,
}

impl ConstantRate {
    /// `total` frames at `rate_num / rate_den` frames per second (e.g. 30000/1001).
    /// Panics if the rate is not positive (a programming error).
    pub fn new(total: usize, rate_num: i64, rate_den: i64) -> ConstantRate {
        assert!(rate_num > 0 && rate_den > 0, "frame rate must be positive");
        ConstantRate {
            total,
            rate_num,
            rate_den,
            nominal_fps: None,
        }
    }

    /// The same video, but reporting `fps` as its nominal float frame rate (what the container
    /// or decord says, e.g. `29.97002997` for a 30000/1001 stream). By default the nominal rate
    /// is `rate_num as f64 / rate_den as f64`.
    pub fn with_nominal_fps(self, fps: f64) -> ConstantRate {
        ConstantRate {
            nominal_fps: Some(fps),
            ..self
        }
    }
}

impl FrameTimes for ConstantRate {
    fn total(&self) -> usize {
        self.total
    }
    fn duration(&self) -> Time {
        Time::new(self.rate_den, self.rate_num) * self.total as i64
    }
    fn frame_shown_at(&self, t: Time) -> usize {
        let period = Time::new(self.rate_den, self.rate_num);
        clamped_shown_at(
            &FrameTimeline::new(self.total, |i| period * i as i64, self.duration()),
            t,
        )
    }
    fn nominal_fps(&self) -> f64 {
        self.nominal_fps
            .unwrap_or(self.rate_num as f64 / self.rate_den as f64)
    }
    fn typical_frame_duration(&self) -> Option<Time> {
        Some(Time::new(self.rate_den, self.rate_num))
    }
}

/// A video given by the presentation time of every frame (variable frame rate welcome).
#[derive(Clone, Debug, PartialEq)]
pub struct FrameList {
    /// Presentation times relative to the first frame, strictly increasing, first one 0.
    pts: Vec<Time>,
    duration: Time,
    nominal_fps: f64,
}

impl FrameList {
    /// `pts`: every frame's presentation time in decode-output order (strictly increasing);
    /// `end`: the time the last frame stops being shown (its pts plus its duration), on the same
    /// clock; `nominal_fps`: the container's float frame rate. Times are shifted so that the
    /// first frame is at 0. Returns `None` if `pts` is not strictly increasing or `end` is not
    /// after the last pts.
    pub fn new(pts: Vec<Time>, end: Time, nominal_fps: f64) -> Option<FrameList> {
        if pts.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        let Some(&first) = pts.first() else {
            return Some(FrameList {
                pts,
                duration: Time::ZERO,
                nominal_fps,
            });
        };
        if end <= *pts.last().unwrap() {
            return None;
        }
        let pts: Vec<Time> = pts.into_iter().map(|p| p - first).collect();
        Some(FrameList {
            pts,
            duration: end - first,
            nominal_fps,
        })
    }
}

impl FrameTimes for FrameList {
    fn total(&self) -> usize {
        self.pts.len()
    }
    fn duration(&self) -> Time {
        self.duration
    }
    fn frame_shown_at(&self, t: Time) -> usize {
        clamped_shown_at(
            &FrameTimeline::new(self.pts.len(), |i| self.pts[i], self.duration),
            t,
        )
    }
    fn nominal_fps(&self) -> f64 {
        self.nominal_fps
    }
    fn typical_frame_duration(&self) -> Option<Time> {
        let mut steps: Vec<Time> = self.pts.windows(2).map(|w| w[1] - w[0]).collect();
        if steps.is_empty() {
            return (self.duration > Time::ZERO).then_some(self.duration);
        }
        steps.sort();
        Some(steps[steps.len() / 2])
    }
}

/// [`FrameTimeline::shown_at`] as the samplers want it: frame 0 before the first frame, the
/// last frame at or past the end (0 for no frame).
fn clamped_shown_at<F: Fn(usize) -> Time>(timeline: &FrameTimeline<F>, t: Time) -> usize {
    match timeline.shown_at(t) {
        Some(i) => i,
        None if t > Time::ZERO => timeline.count().saturating_sub(1),
        None => 0,
    }
}
