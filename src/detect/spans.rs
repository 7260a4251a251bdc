//! Half-open frame spans and the shaping every detector's spans get: merge across short
//! gaps, pad, drop the too short, split at shot boundaries. Lengths are frames or seconds
//! (seconds are measured on the frame table's times, so variable frame rate is exact).

use serde::Serialize;

use super::shots::Boundary;
use crate::media::table::FrameTable;
use crate::vocab::time::{Time, TimeSpec};

/// A detected span `[start, end)` of frames, with its evidence (a JSON object).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Span {
    /// First frame.
    pub start: usize,
    /// First frame after.
    pub end: usize,
    /// Why (scores); an object.
    pub evidence: serde_json::Value,
}

impl Span {
    /// A span with empty evidence.
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start,
            end,
            evidence: serde_json::json!({}),
        }
    }
}

/// A length in frames or seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Length {
    /// Whole frames.
    Frames(usize),
    /// Seconds, measured on frame times.
    Seconds(Time),
}

impl Length {
    /// `15` (frames) or `1.5s` / `1.5` (seconds).
    pub fn parse(text: &str) -> Result<Length, String> {
        match TimeSpec::parse(text)? {
            TimeSpec::Frame(n) => Ok(Length::Frames(n as usize)),
            TimeSpec::Seconds(t) => Ok(Length::Seconds(t)),
            TimeSpec::Percent(_) => Err(format!(
                "a length is frames (15) or seconds (1.5s), not a percentage: {text:?}"
            )),
        }
    }

    fn is_zero(self) -> bool {
        match self {
            Length::Frames(n) => n == 0,
            Length::Seconds(t) => t <= Time::ZERO,
        }
    }
}

/// How spans are shaped after detection.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Shaping {
    /// Spans shorter than this are dropped.
    pub min_length: Length,
    /// Spans separated by at most this are merged.
    pub merge_gap: Length,
    /// Each span is widened by this on both sides (within the video).
    pub padding: Length,
}

impl Default for Shaping {
    fn default() -> Self {
        Shaping {
            min_length: Length::Seconds(Time::from_secs(1)),
            merge_gap: Length::Frames(0),
            padding: Length::Frames(0),
        }
    }
}

/// The time frame `index` begins (the video's end for `index == len`).
fn t(table: &FrameTable, index: usize) -> Time {
    super::time_at(table, index)
}

/// The length from frame `a` to frame `b` (`a <= b`) measured as `len`'s unit says.
fn at_least(table: &FrameTable, a: usize, b: usize, len: Length) -> bool {
    match len {
        Length::Frames(n) => b - a >= n,
        Length::Seconds(s) => t(table, b) - t(table, a) >= s,
    }
}

impl std::fmt::Display for Length {
    /// As the options take it: `15` (frames) or `1.5s`.
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Length::Frames(n) => write!(f, "{n}"),
            Length::Seconds(t) => write!(f, "{}s", t.as_secs_f64()),
        }
    }
}

/// Spans after shaping, and those `min_length` dropped (so a caller can say why a span it
/// expected is missing).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shaped {
    /// The kept spans, sorted, not overlapping.
    pub spans: Vec<Span>,
    /// The spans (merged and padded) shorter than `min_length`, sorted.
    pub too_short: Vec<Span>,
}

/// Merges spans closer than `merge_gap`, pads by `padding`, drops spans shorter than
/// `min_length` (listing them). Input in any order; output sorted, not overlapping.
pub fn shape(mut spans: Vec<Span>, shaping: &Shaping, table: &FrameTable) -> Shaped {
    let n = table.len();
    spans.retain(|s| s.start < s.end && s.end <= n);
    spans.sort_by_key(|s| s.start);
    // Merge: overlapping, touching, or within the gap.
    let mut merged: Vec<Span> = Vec::new();
    for s in spans {
        if let Some(last) = merged.last_mut() {
            // Touching spans stay apart (shots meet at a cut); a gap merges them.
            let close = s.start < last.end
                || (!shaping.merge_gap.is_zero()
                    && !at_least(table, last.end, s.start, next_up(shaping.merge_gap)));
            if close {
                last.end = last.end.max(s.end);
                merge_evidence(&mut last.evidence, &s.evidence);
                continue;
            }
        }
        merged.push(s);
    }
    // Pad.
    if !shaping.padding.is_zero() {
        for s in &mut merged {
            match shaping.padding {
                Length::Frames(p) => {
                    s.start = s.start.saturating_sub(p);
                    s.end = (s.end + p).min(n);
                }
                Length::Seconds(p) => {
                    let from = t(table, s.start) - p;
                    s.start = if from <= Time::ZERO {
                        0
                    } else {
                        table.first_at_or_after(from)
                    };
                    let to = t(table, s.end) + p;
                    s.end = if to >= table.end_time() {
                        n
                    } else {
                        table.first_at_or_after(to)
                    };
                }
            }
        }
        // Padding can make neighbours overlap: merge again (without a gap).
        let mut again: Vec<Span> = Vec::new();
        for s in merged {
            match again.last_mut() {
                Some(last) if s.start < last.end => {
                    last.end = last.end.max(s.end);
                    merge_evidence(&mut last.evidence, &s.evidence);
                }
                _ => again.push(s),
            }
        }
        merged = again;
    }
    let (spans, too_short) = merged
        .into_iter()
        .partition(|s| at_least(table, s.start, s.end, shaping.min_length));
    Shaped { spans, too_short }
}

/// A gap counts as short when it is below the merge gap: "at least one more than the gap"
/// marks a gap long enough to keep spans apart.
fn next_up(len: Length) -> Length {
    match len {
        Length::Frames(n) => Length::Frames(n + 1),
        Length::Seconds(s) => Length::Seconds(s + Time::new(1, 1_000_000)),
    }
}

fn merge_evidence(into: &mut serde_json::Value, from: &serde_json::Value) {
    let (Some(a), Some(b)) = (into.as_object_mut(), from.as_object()) else {
        return;
    };
    for (k, v) in b {
        match (a.get(k).and_then(|x| x.as_f64()), v.as_f64()) {
            // Peaks keep the larger value; counts add up.
            (Some(x), Some(y)) if k.starts_with("peak") || k.starts_with("max") => {
                a.insert(k.clone(), serde_json::json!(x.max(y)));
            }
            (Some(x), Some(y)) if k.ends_with("count") || k.ends_with("frames") => {
                a.insert(k.clone(), serde_json::json!(x + y));
            }
            (None, _) => {
                a.insert(k.clone(), v.clone());
            }
            _ => {}
        }
    }
    let merges = a.get("merged").and_then(|m| m.as_u64()).unwrap_or(1);
    a.insert("merged".into(), serde_json::json!(merges + 1));
}

/// The shots of a video with `n` frames between `boundaries` (sorted): transition frames
/// belong to no shot.
pub fn between(boundaries: &[Boundary], n: usize) -> Vec<Span> {
    let mut out = Vec::new();
    let mut start = 0;
    for b in boundaries {
        if b.start > start {
            out.push(Span::new(start, b.start));
        }
        start = start.max(b.end);
    }
    if start < n {
        out.push(Span::new(start, n));
    }
    out
}

/// Splits spans at shot boundaries, leaving the transition frames out.
pub fn split_at(spans: Vec<Span>, boundaries: &[Boundary]) -> Vec<Span> {
    let mut out = Vec::new();
    for s in spans {
        let mut start = s.start;
        for b in boundaries {
            if b.end <= start || b.start >= s.end {
                if b.start >= s.end {
                    break;
                }
                continue;
            }
            if b.start > start {
                let mut piece = s.clone();
                piece.start = start;
                piece.end = b.start;
                out.push(piece);
            }
            start = start.max(b.end);
        }
        if start < s.end {
            let mut piece = s;
            piece.start = start;
            out.push(piece);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::shots::BoundaryKind;
    use crate::detect::table_of;

    fn starts_ends(s: &[Span]) -> Vec<(usize, usize)> {
        s.iter().map(|s| (s.start, s.end)).collect()
    }

    #[test]
    fn merge_pad_and_drop() {
        let table = table_of(200, 10);
        let spans = vec![Span::new(10, 20), Span::new(23, 40), Span::new(100, 103)];
        let shaping = Shaping {
            min_length: Length::Seconds(Time::from_secs(1)),
            merge_gap: Length::Frames(3),
            padding: Length::Frames(0),
        };
        assert_eq!(
            starts_ends(&shape(spans.clone(), &shaping, &table).spans),
            vec![(10, 40)]
        );
        assert_eq!(
            starts_ends(&shape(spans.clone(), &shaping, &table).too_short),
            vec![(100, 103)]
        );
        let shaping = Shaping {
            min_length: Length::Frames(1),
            merge_gap: Length::Frames(2),
            padding: Length::Seconds(Time::new(1, 2)),
        };
        assert_eq!(
            starts_ends(&shape(spans, &shaping, &table).spans),
            vec![(5, 45), (95, 108)]
        );
    }

    #[test]
    fn shots_leave_transitions_out_and_splitting_cuts_spans() {
        let cut = Boundary {
            kind: BoundaryKind::Cut,
            start: 50,
            end: 50,
            score: 30.0,
            ratio: 5.0,
        };
        let fade = Boundary {
            kind: BoundaryKind::Fade,
            start: 80,
            end: 90,
            score: 1.0,
            ratio: 4.0,
        };
        assert_eq!(
            starts_ends(&between(&[cut.clone(), fade.clone()], 120)),
            vec![(0, 50), (50, 80), (90, 120)]
        );
        let split = split_at(vec![Span::new(40, 100)], &[cut, fade]);
        assert_eq!(starts_ends(&split), vec![(40, 50), (50, 80), (90, 100)]);
    }
}
