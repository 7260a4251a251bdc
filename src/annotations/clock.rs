//! The video's clock as annotation resolution sees it ([`FrameClock`]): how many frames, when
//! each is presented, which frame is on screen at a time, and the (upright) frame size. Two
//! simple implementations: [`ConstantRateClock`] (a frame count and an exact rate) and
//! [`TimestampClock`] (an explicit list of presentation times, for variable frame rate).

use crate::vocab::time::{FrameTimeline, Time};

use super::error::AnnotationError;

/// A video's frame timing. Frame times must increase strictly with the index.
pub trait FrameClock {
    /// The number of frames; valid indices are `0..frame_count()`.
    fn frame_count(&self) -> usize;

    /// Presentation time of frame `index` (seconds from the video start); `index <
    /// frame_count()`.
    fn frame_time(&self, index: usize) -> Time;

    /// When the last frame stops being shown (its time plus its duration): the video's end.
    fn end_time(&self) -> Time;

    /// The upright width and height in pixels (the stored grid).
    fn frame_size(&self) -> (u32, u32);

    /// The frame on screen at `t` by the one time-to-frame rule ([`FrameTimeline`]: a time
    /// within a hundredth of a frame of a frame's time is that frame's time): the one with the
    /// largest time `<= t`; `None` before the first frame's time or at/after
    /// [`end_time`](FrameClock::end_time).
    fn frame_shown_at(&self, t: Time) -> Option<usize> {
        FrameTimeline::new(self.frame_count(), |i| self.frame_time(i), self.end_time()).shown_at(t)
    }

    /// Frames per second on average: `frame_count / end_time` (exact for constant rate).
    fn nominal_fps(&self) -> Option<Time> {
        let end = self.end_time();
        (end > Time::ZERO && self.frame_count() > 0)
            .then(|| Time::from_secs(self.frame_count() as i64).scale(end.denom(), end.numer()))
    }
}

/// Frames at `index / fps`, the last ending at `frame_count / fps`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstantRateClock {
    frame_count: usize,
    fps: Time,
    width: u32,
    height: u32,
}

impl ConstantRateClock {
    /// `fps` must be positive.
    pub fn new(
        frame_count: usize,
        fps: Time,
        width: u32,
        height: u32,
    ) -> Result<ConstantRateClock, AnnotationError> {
        if fps <= Time::ZERO {
            return Err(AnnotationError::Usage(format!(
                "frame rate must be positive, got {fps}"
            )));
        }
        Ok(ConstantRateClock {
            frame_count,
            fps,
            width,
            height,
        })
    }

    fn period(&self) -> Time {
        Time::new(self.fps.denom(), self.fps.numer())
    }
}

impl FrameClock for ConstantRateClock {
    fn frame_count(&self) -> usize {
        self.frame_count
    }

    fn frame_time(&self, index: usize) -> Time {
        self.period() * index as i64
    }

    fn end_time(&self) -> Time {
        self.period() * self.frame_count as i64
    }

    fn frame_size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    fn nominal_fps(&self) -> Option<Time> {
        Some(self.fps)
    }
}

/// Frames at explicit presentation times (variable frame rate).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimestampClock {
    times: Vec<Time>,
    end: Time,
    width: u32,
    height: u32,
}

impl TimestampClock {
    /// `times` must increase strictly and `end` must be after the last time.
    pub fn new(
        times: Vec<Time>,
        end: Time,
        width: u32,
        height: u32,
    ) -> Result<TimestampClock, AnnotationError> {
        if let Some(i) = times.windows(2).position(|w| w[1] <= w[0]) {
            return Err(AnnotationError::Usage(format!(
                "frame times must increase: frame {} is at {} but frame {} at {}",
                i,
                times[i],
                i + 1,
                times[i + 1]
            )));
        }
        if let Some(last) = times.last() {
            if end <= *last {
                return Err(AnnotationError::Usage(format!(
                    "the video end {end} must be after the last frame time {last}"
                )));
            }
        }
        Ok(TimestampClock {
            times,
            end,
            width,
            height,
        })
    }
}

impl FrameClock for TimestampClock {
    fn frame_count(&self) -> usize {
        self.times.len()
    }

    fn frame_time(&self, index: usize) -> Time {
        self.times[index]
    }

    fn end_time(&self) -> Time {
        self.end
    }

    fn frame_size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The stream's frame rate: one over the typical (median) spacing of the frames, so a
    /// clip cut short at a decision point between frames keeps its source's rate (25, not
    /// frames / kept duration). A single frame falls back to `1 / duration`.
    fn nominal_fps(&self) -> Option<Time> {
        let mut steps: Vec<Time> = self.times.windows(2).map(|w| w[1] - w[0]).collect();
        if steps.is_empty() {
            let only = self.end - *self.times.first()?;
            return (only > Time::ZERO).then(|| Time::from_secs(1) / only);
        }
        steps.sort();
        let median = steps[steps.len() / 2];
        (median > Time::ZERO).then(|| Time::from_secs(1) / median)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_rate_shown_at() {
        let c = ConstantRateClock::new(10, Time::from_secs(25), 640, 360).unwrap();
        assert_eq!(c.frame_time(3), Time::new(3, 25));
        assert_eq!(c.end_time(), Time::new(2, 5));
        assert_eq!(c.frame_shown_at(Time::ZERO), Some(0));
        assert_eq!(c.frame_shown_at(Time::new(3, 25)), Some(3));
        // A microsecond before frame 3's time is frame 3 (within a hundredth of a frame,
        // 0.4 ms); a millisecond before it is frame 2.
        assert_eq!(
            c.frame_shown_at(Time::new(3, 25) - Time::new(1, 1_000_000)),
            Some(3)
        );
        assert_eq!(
            c.frame_shown_at(Time::new(3, 25) - Time::new(1, 1000)),
            Some(2)
        );
        assert_eq!(
            c.frame_shown_at(Time::new(2, 5) - Time::new(1, 1000)),
            Some(9)
        );
        assert_eq!(c.frame_shown_at(Time::new(2, 5)), None);
        assert_eq!(c.frame_shown_at(Time::new(-1, 100)), None);
        assert!(ConstantRateClock::new(10, Time::ZERO, 1, 1).is_err());
        let ntsc = ConstantRateClock::new(100, Time::new(30000, 1001), 1, 1).unwrap();
        assert_eq!(ntsc.frame_shown_at(ntsc.frame_time(77)), Some(77));
        assert_eq!(ntsc.nominal_fps(), Some(Time::new(30000, 1001)));
    }

    #[test]
    fn timestamp_clock_matches_default_search() {
        let times = vec![
            Time::ZERO,
            Time::new(1, 10),
            Time::new(3, 10),
            Time::new(7, 20),
        ];
        let c = TimestampClock::new(times, Time::new(1, 2), 8, 8).unwrap();
        assert_eq!(c.frame_shown_at(Time::new(1, 20)), Some(0));
        assert_eq!(c.frame_shown_at(Time::new(1, 10)), Some(1));
        assert_eq!(c.frame_shown_at(Time::new(29, 100)), Some(1));
        assert_eq!(c.frame_shown_at(Time::new(34, 100)), Some(2));
        assert_eq!(c.frame_shown_at(Time::new(49, 100)), Some(3));
        assert_eq!(c.frame_shown_at(Time::new(1, 2)), None);
        // one over the median spacing (0.1 s)
        assert_eq!(c.nominal_fps(), Some(Time::from_secs(10)));
        // a 25 fps clip ended between frames keeps 25 fps
        let times: Vec<Time> = (0..10).map(|i| Time::new(i, 25)).collect();
        let cut = TimestampClock::new(times, Time::new(37, 100), 8, 8).unwrap();
        assert_eq!(cut.nominal_fps(), Some(Time::from_secs(25)));
        let err = TimestampClock::new(vec![Time::ZERO, Time::ZERO], Time::from_secs(1), 1, 1)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "frame times must increase: frame 0 is at 0 but frame 1 at 0"
        );
    }

    #[test]
    fn default_search_agrees_with_constant_rate() {
        struct Plain(ConstantRateClock);
        impl FrameClock for Plain {
            fn frame_count(&self) -> usize {
                self.0.frame_count()
            }
            fn frame_time(&self, i: usize) -> Time {
                self.0.frame_time(i)
            }
            fn end_time(&self) -> Time {
                self.0.end_time()
            }
            fn frame_size(&self) -> (u32, u32) {
                self.0.frame_size()
            }
        }
        let c = ConstantRateClock::new(50, Time::new(30000, 1001), 1, 1).unwrap();
        let p = Plain(c);
        for k in -5..2000 {
            let t = Time::new(k, 1000);
            assert_eq!(p.frame_shown_at(t), c.frame_shown_at(t), "{t}");
        }
    }
}
