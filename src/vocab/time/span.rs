//! Half-open spans of time ([`Span`]) and of frames ([`FrameRange`]), and the one rule that
//! maps a time to a frame ([`FrameTimeline`], with its tolerance [`FRAME_TOLERANCE`]).

use serde::{Deserialize, Serialize};

use super::Time;

/// A half-open span of time `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// The first instant inside the span, in seconds.
    pub start: Time,
    /// The first instant after the span, in seconds (excluded).
    pub end: Time,
}

impl Span {
    /// The span `[start, end)`; not checked, so `end <= start` makes an empty span.
    pub fn new(start: Time, end: Time) -> Span {
        Span { start, end }
    }

    /// True when the span holds no instant (`end <= start`).
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// `end - start`, or zero for an empty span (never negative).
    pub fn duration(&self) -> Time {
        if self.is_empty() {
            Time::ZERO
        } else {
            self.end - self.start
        }
    }

    /// `start <= t < end`.
    pub fn contains(&self, t: Time) -> bool {
        self.start <= t && t < self.end
    }

    /// The overlap of two spans (empty spans come back with `start == end`).
    pub fn intersect(&self, other: &Span) -> Span {
        let start = self.start.max(other.start);
        let end = self.end.min(other.end).max(start);
        Span { start, end }
    }

    /// This span moved by `delta`.
    pub fn shift(&self, delta: Time) -> Span {
        Span {
            start: self.start + delta,
            end: self.end + delta,
        }
    }
}

/// A half-open range of 0-based frame indices `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FrameRange {
    /// The first frame in the range (0-based, included).
    pub start: usize,
    /// One past the last frame in the range (0-based, excluded).
    pub end: usize,
}

impl FrameRange {
    /// The frames `[start, end)`; not checked, so `end <= start` makes an empty range.
    pub fn new(start: usize, end: usize) -> FrameRange {
        FrameRange { start, end }
    }

    /// The number of frames in the range (0 when empty).
    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// True when the range holds no frame (`end <= start`).
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// `start <= index < end`.
    pub fn contains(&self, index: usize) -> bool {
        self.start <= index && index < self.end
    }

    /// The frames in both ranges (an empty overlap comes back with `start == end`).
    pub fn intersect(&self, other: &FrameRange) -> FrameRange {
        let start = self.start.max(other.start);
        FrameRange {
            start,
            end: self.end.min(other.end).max(start),
        }
    }
}

/// How close a time must be to a frame's presentation time to stand for that frame, as a
/// fraction of the interval the time falls in (between that frame and its neighbour on the
/// time's side): 1/100 of a frame. A time computed with a rounded rate (`i / 23.976` for a
/// 24000/1001 stream, `i * 1001 / 24000` for one stamped 2997/125) or printed to a few
/// decimals misses its frame's time by far less; two frames are never that close.
pub const FRAME_TOLERANCE: (i64, i64) = (1, 100);

/// The one rule that maps a time to a frame, used by every reader of annotation keys, by spans
/// (`cut`, `truncate`, decision points) and by the samplers: a time within
/// [`FRAME_TOLERANCE`] of a frame's time *is* that frame's time ([`FrameTimeline::snap`]);
/// then the frame shown at a time is the last one at or before it, and a span starting at a
/// time starts with the first frame at or after it.
///
/// `time(i)` is frame `i`'s presentation time (strictly increasing in `i`), `end` when the
/// last frame stops being shown.
pub struct FrameTimeline<F: Fn(usize) -> Time> {
    count: usize,
    time: F,
    end: Time,
}

impl<F: Fn(usize) -> Time> FrameTimeline<F> {
    /// `count` frames at `time(0) < time(1) < ...`, the last shown until `end`.
    pub fn new(count: usize, time: F, end: Time) -> FrameTimeline<F> {
        FrameTimeline { count, time, end }
    }

    /// The number of frames.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The first frame whose time is `> t` (exactly, no tolerance); `count` when none is.
    fn first_after_exact(&self, t: Time) -> usize {
        let (mut lo, mut hi) = (0usize, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if (self.time)(mid) <= t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// When frame `i` stops being shown: the next frame's time, or `end` for the last.
    fn next_time(&self, i: usize) -> Time {
        if i + 1 < self.count {
            (self.time)(i + 1)
        } else {
            self.end
        }
    }

    /// `t`, or the time of the frame it stands for when it lies within [`FRAME_TOLERANCE`] of
    /// that frame's time: just before it (the interval from the previous frame; before the
    /// first frame, the first frame's own duration) or just after it (the frame's duration).
    pub fn snap(&self, t: Time) -> Time {
        if self.count == 0 {
            return t;
        }
        let (num, den) = FRAME_TOLERANCE;
        let after = self.first_after_exact(t);
        if after > 0 {
            let i = after - 1;
            let at = (self.time)(i);
            if t == at {
                return t;
            }
            let gap = self.next_time(i) - at;
            if t - at <= gap.scale(num, den) {
                return at;
            }
        }
        if after < self.count {
            let at = (self.time)(after);
            let gap = if after > 0 {
                at - (self.time)(after - 1)
            } else {
                self.next_time(0) - at
            };
            if at - t <= gap.scale(num, den) {
                return at;
            }
        }
        t
    }

    /// The frame shown at `t` (snapped): the one with the largest time `<= t`; `None` before
    /// the first frame or at/after `end`.
    pub fn shown_at(&self, t: Time) -> Option<usize> {
        let t = self.snap(t);
        if self.count == 0 || t >= self.end {
            return None;
        }
        self.first_after_exact(t).checked_sub(1)
    }

    /// The first frame whose time is `>= t` (snapped): where a span starting at `t` starts;
    /// `count` when there is none.
    pub fn first_at_or_after(&self, t: Time) -> usize {
        let t = self.snap(t);
        let after = self.first_after_exact(t);
        if after > 0 && (self.time)(after - 1) == t {
            after - 1
        } else {
            after
        }
    }
}
