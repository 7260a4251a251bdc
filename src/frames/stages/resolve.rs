//! A span resolved against a video (the rules of the span stage, [`super::span`]): which
//! source frames the processed stream holds. A cut `[start, end)` keeps exactly the frames
//! with `start <= time < end` (a frame number `N` as start keeps frame N, as end stops before
//! it); the decision point is relative to the clip and keeps the frames shown before it
//! (`time < decision`), the output (video and audio) ending exactly there; a percentage is of
//! the clip's duration (its first frame to the end of its last).
//! Spans outside the video, empty spans and decision points outside the clip are errors that
//! say how long the video is.

use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::media::table::FrameTable;
use crate::records::sidecar::TimeRecord;
use crate::vocab::time::{FrameRange, Time, TimeSpec};

/// What a user asks of one clip.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ClipSpec {
    pub start: Option<TimeSpec>,
    pub end: Option<TimeSpec>,
    /// Decision point relative to the clip: frames at or after it are dropped.
    pub decision: Option<TimeSpec>,
}

/// Where the decision point fell.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecisionRecord {
    pub requested: String,
    /// Relative to the clip's first frame.
    pub clip_time: TimeRecord,
    /// Relative to the source's frame 0.
    pub source_time: TimeRecord,
    /// The last source frame kept (shown before the decision point).
    pub last_kept_frame: usize,
    /// The first source frame dropped (at or after the decision point), if the clip had one.
    pub first_dropped_frame: Option<usize>,
}

/// A clip resolved against a video.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedClip {
    /// Source frames of the cut, before truncation.
    pub cut: FrameRange,
    /// Source frames in the output.
    pub kept: FrameRange,
    /// Where the clip starts on the source's timeline: the span's start as asked (a time,
    /// or the time of the start frame), or the input's start (0) when no start is given.
    /// Decision points are relative to it, as `ffmpeg -ss START -t DECISION` would count.
    pub clip_start: TimeRecord,
    /// Source time of the first kept frame (the output's time 0).
    pub start: TimeRecord,
    /// Source time at which the output ends.
    pub end: TimeRecord,
    pub decision: Option<DecisionRecord>,
    #[serde(skip)]
    start_time: Time,
    #[serde(skip)]
    end_time: Time,
}

impl ResolvedClip {
    pub fn start_time(&self) -> Time {
        self.start_time
    }

    pub fn end_time(&self) -> Time {
        self.end_time
    }

    /// Output duration.
    pub fn duration(&self) -> Time {
        self.end_time - self.start_time
    }
}

fn secs(t: Time) -> String {
    format!("{}s", crate::vocab::time::human_secs(t))
}

/// Resolves `spec` against the frames of `path` described by `table`.
pub(crate) fn resolve_clip(
    path: &Path,
    table: &FrameTable,
    spec: &ClipSpec,
) -> Result<ResolvedClip> {
    let n = table.len();
    let video_end = table.end_time();
    let outside = |what: &str, detail: String| {
        Error::request(
            path,
            format!(
                "{what} is outside the video: {detail} (the video has {n} frames, 0s to {})",
                secs(video_end)
            ),
        )
    };
    let start = match spec.start {
        None => 0,
        Some(TimeSpec::Frame(f)) => {
            if f as usize >= n {
                return Err(outside("start", format!("frame {f}")));
            }
            f as usize
        }
        Some(TimeSpec::Seconds(t)) => {
            if t >= video_end {
                return Err(outside("start", secs(t)));
            }
            table.first_at_or_after(t)
        }
        Some(TimeSpec::Percent(_)) => {
            return Err(Error::Usage(
                "a percentage is only allowed for a decision point or an insertion point, not the start of a span".into(),
            ))
        }
    };
    let (end, cut_end_time) = match spec.end {
        None => (n, video_end),
        Some(TimeSpec::Frame(f)) => {
            let f = f as usize;
            if f > n {
                return Err(outside("end", format!("frame {f}")));
            }
            (f, if f < n { table.time(f) } else { video_end })
        }
        Some(TimeSpec::Seconds(t)) => {
            if t > video_end {
                return Err(outside("end", secs(t)));
            }
            (table.first_at_or_after(t), t)
        }
        Some(TimeSpec::Percent(_)) => {
            return Err(Error::Usage(
                "a percentage is only allowed for a decision point or an insertion point, not the end of a span".into(),
            ))
        }
    };
    if end <= start {
        return Err(Error::request(
            path,
            format!(
                "the span [{}, {}) holds no frames",
                spec.start
                    .map(|s| s.to_text())
                    .unwrap_or_else(|| "0".into()),
                spec.end
                    .map(|s| s.to_text())
                    .unwrap_or_else(|| "end".into())
            ),
        ));
    }
    let cut = FrameRange::new(start, end);
    let start_time = table.time(start);
    let clip_start = match spec.start {
        None => Time::ZERO,
        Some(TimeSpec::Seconds(t)) => t,
        Some(_) => start_time,
    }
    .min(start_time);
    let clip_duration = cut_end_time - clip_start;

    let Some(decision) = spec.decision else {
        return Ok(ResolvedClip {
            cut,
            kept: cut,
            clip_start: clip_start.into(),
            start: start_time.into(),
            end: cut_end_time.into(),
            decision: None,
            start_time,
            end_time: cut_end_time,
        });
    };
    let outside_clip = |detail: String| {
        Error::request(
            path,
            format!(
                "decision point {detail} is outside the clip (the clip has {} frames and lasts {}; the decision point is relative to the clip's start)",
                cut.len(),
                secs(clip_duration)
            ),
        )
    };
    let (kept_end, decision_clip_time) = match decision {
        TimeSpec::Frame(f) => {
            let f = f as usize;
            if f > cut.len() {
                return Err(outside_clip(format!("frame {f}")));
            }
            let t = if start + f < end {
                table.time(start + f) - clip_start
            } else {
                clip_duration
            };
            (start + f, t)
        }
        TimeSpec::Seconds(t) => {
            if t > clip_duration {
                return Err(outside_clip(secs(t)));
            }
            (table.first_at_or_after(clip_start + t).clamp(start, end), t)
        }
        TimeSpec::Percent(p) => {
            // A percentage is of the clip from its first frame, as truncate's and insert's
            // are: time before the first frame (a source whose first frame is late, a
            // `--start` in seconds before a frame) does not count.
            let at = start_time + percent_of(cut_end_time - start_time, p);
            (
                table.first_at_or_after(at).clamp(start, end),
                at - clip_start,
            )
        }
    };
    if kept_end <= start {
        return Err(Error::request(
            path,
            format!(
                "decision point {} leaves no frame before it",
                decision.to_text()
            ),
        ));
    }
    let end_time = clip_start + decision_clip_time;
    Ok(ResolvedClip {
        cut,
        kept: FrameRange::new(start, kept_end),
        clip_start: clip_start.into(),
        start: start_time.into(),
        end: end_time.into(),
        decision: Some(DecisionRecord {
            requested: decision.to_text(),
            clip_time: decision_clip_time.into(),
            source_time: end_time.into(),
            last_kept_frame: kept_end - 1,
            first_dropped_frame: (kept_end < end).then_some(kept_end),
        }),
        start_time,
        end_time,
    })
}

/// `percent`% of `duration`, exactly.
fn percent_of(duration: Time, percent: Time) -> Time {
    (duration * percent).scale(1, 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::table::FrameEntry;
    use crate::vocab::Ratio;

    fn cfr_table(frames: usize) -> FrameTable {
        let entries = (0..frames as i64)
            .map(|i| FrameEntry {
                pts: i,
                dts: Some(i),
                duration: 1,
                key: i % 10 == 0,
                pos: -1,
            })
            .collect();
        FrameTable::from_entries(Ratio::new(1, 25), entries, 0, Some(Ratio::new(25, 1)), None)
    }

    fn spec(start: Option<&str>, end: Option<&str>, decision: Option<&str>) -> ClipSpec {
        let p = |s: Option<&str>| s.map(|t| TimeSpec::parse(t).unwrap());
        ClipSpec {
            start: p(start),
            end: p(end),
            decision: p(decision),
        }
    }

    #[test]
    fn cut_keeps_frames_in_the_half_open_span() {
        let t = cfr_table(100); // 4 s at 25 fps
        let path = Path::new("v.mp4");
        let r = resolve_clip(path, &t, &spec(Some("1s"), Some("2s"), None)).unwrap();
        assert_eq!(r.kept, FrameRange::new(25, 50));
        let r = resolve_clip(path, &t, &spec(Some("25"), Some("50"), None)).unwrap();
        assert_eq!(r.kept, FrameRange::new(25, 50));
        // 1.01 s: frame 25 (1.00 s) is before the start, frame 26 (1.04 s) is the first kept
        let r = resolve_clip(path, &t, &spec(Some("1.01"), Some("00:00:02.000"), None)).unwrap();
        assert_eq!(r.kept, FrameRange::new(26, 50));
        let r = resolve_clip(path, &t, &spec(None, None, None)).unwrap();
        assert_eq!(r.kept, FrameRange::new(0, 100));
        assert_eq!(r.duration(), Time::from_secs(4));
    }

    #[test]
    fn truncation_drops_the_decision_frame_and_after() {
        let t = cfr_table(100);
        let path = Path::new("v.mp4");
        // clip [1 s, 3 s) = frames 25..75; decision at 1 s into the clip = source 2 s = frame 50
        let r = resolve_clip(path, &t, &spec(Some("1s"), Some("3s"), Some("1s"))).unwrap();
        assert_eq!(r.kept, FrameRange::new(25, 50));
        let d = r.decision.unwrap();
        assert_eq!(d.first_dropped_frame, Some(50));
        assert_eq!(d.last_kept_frame, 49);
        // 75% of a 2 s clip = 1.5 s -> frames 25..62 (62 is at 2.48 s, shown before 2.5 s)
        let r = resolve_clip(path, &t, &spec(Some("1s"), Some("3s"), Some("75%"))).unwrap();
        assert_eq!(r.kept, FrameRange::new(25, 63));
        assert_eq!(r.end_time(), Time::new(5, 2));
        // frame-number decision: keep the first 10 frames of the clip
        let r = resolve_clip(path, &t, &spec(Some("1s"), Some("3s"), Some("10"))).unwrap();
        assert_eq!(r.kept, FrameRange::new(25, 35));
        // 100% keeps everything
        let r = resolve_clip(path, &t, &spec(None, None, Some("100%"))).unwrap();
        assert_eq!(r.kept, FrameRange::new(0, 100));
    }

    #[test]
    fn bad_requests_are_errors_that_say_why() {
        let t = cfr_table(100);
        let path = Path::new("v.mp4");
        let err = |s| resolve_clip(path, &t, &s).unwrap_err().to_string();
        assert!(err(spec(Some("5s"), None, None)).contains("outside the video"));
        assert!(err(spec(None, Some("101"), None)).contains("outside the video"));
        assert!(err(spec(None, Some("4.5s"), None)).contains("outside the video"));
        assert!(err(spec(Some("2s"), Some("2s"), None)).contains("holds no frames"));
        assert!(err(spec(Some("2s"), Some("1s"), None)).contains("holds no frames"));
        assert!(err(spec(Some("1s"), Some("2s"), Some("2s"))).contains("outside the clip"));
        assert!(err(spec(Some("1s"), Some("2s"), Some("26"))).contains("outside the clip"));
        assert!(err(spec(Some("1s"), Some("2s"), Some("0%"))).contains("leaves no frame"));
        assert!(err(spec(Some("1s"), Some("2s"), Some("0"))).contains("leaves no frame"));
    }

    #[test]
    fn decisions_count_from_the_clip_start_as_ffmpeg_does() {
        // 24 fps frames stamped from 1/24 s (the first one late): with no start the clip
        // starts at the input's start, so 5 s keeps the frames shown before 5 s (119).
        let entries = (1..=200)
            .map(|i| FrameEntry {
                pts: i,
                dts: Some(i),
                duration: 1,
                key: i == 1,
                pos: -1,
            })
            .collect();
        let t = FrameTable::from_entries(Ratio::new(1, 24), entries, 0, None, Some(Time::ZERO));
        let r = resolve_clip(Path::new("v.avi"), &t, &spec(None, None, Some("5s"))).unwrap();
        assert_eq!(r.kept.len(), 119);
        assert_eq!(r.clip_start.seconds, 0.0);
        // A start in seconds is where the clip starts, even between frames.
        let r = resolve_clip(
            Path::new("v.avi"),
            &t,
            &spec(Some("1.01s"), None, Some("1s")),
        )
        .unwrap();
        assert_eq!(r.end_time(), Time::new(201, 100));
    }
}
