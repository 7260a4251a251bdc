//! Activity: spans where motion stays up. Motion is the fraction of the shrunk luma (or of a
//! region) whose pixels changed by more than a noise level since the previous frame
//! ([`FrameStats::motion`]); it is smoothed over a short window so that a walker's stride or
//! a flicker does not split an event. Static-camera footage (surveillance, tabletop,
//! driving stops) has its events where this is high.

use serde::Serialize;

use super::scan::FrameStats;
use super::spans::Span;
use crate::media::table::FrameTable;
use crate::vocab::time::Time;

/// Thresholds of the activity detector.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ActivityOptions {
    /// Active when the smoothed moving fraction is at least this (0-1).
    pub threshold: f32,
    /// Seconds of the centred moving average.
    pub smooth: Time,
}

impl Default for ActivityOptions {
    fn default() -> Self {
        ActivityOptions {
            threshold: 0.01,
            smooth: Time::new(1, 2),
        }
    }
}

/// The smoothed motion of every frame: the mean over the frames within `smooth / 2` of it.
pub fn smoothed(stats: &[FrameStats], table: &FrameTable, smooth: Time) -> Vec<f32> {
    let n = stats.len();
    let half = Time::new(smooth.numer(), smooth.denom().saturating_mul(2));
    let mut prefix = vec![0f64; n + 1];
    for (i, s) in stats.iter().enumerate() {
        prefix[i + 1] = prefix[i] + f64::from(s.motion);
    }
    let (mut lo, mut hi) = (0usize, 0usize);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let ti = table.time(i);
        while lo < i && table.time(lo) < ti - half {
            lo += 1;
        }
        hi = hi.max(i);
        while hi + 1 < n && table.time(hi + 1) <= ti + half {
            hi += 1;
        }
        out.push(((prefix[hi + 1] - prefix[lo]) / (hi + 1 - lo) as f64) as f32);
    }
    out
}

/// Runs of frames whose smoothed motion reaches the threshold, with their peak and mean.
pub fn spans(stats: &[FrameStats], table: &FrameTable, options: &ActivityOptions) -> Vec<Span> {
    let level = smoothed(stats, table, options.smooth);
    let mut out = Vec::new();
    let mut i = 0;
    while i < level.len() {
        if level[i] < options.threshold {
            i += 1;
            continue;
        }
        let start = i;
        while i < level.len() && level[i] >= options.threshold {
            i += 1;
        }
        let run = &level[start..i];
        let peak = run.iter().copied().fold(0.0, f32::max);
        let mean = run.iter().sum::<f32>() / run.len() as f32;
        out.push(Span {
            start,
            end: i,
            evidence: serde_json::json!({
                "peak_motion": round4(peak),
                "mean_motion": round4(mean),
                "threshold": round4(options.threshold),
            }),
        });
    }
    out
}

fn round4(v: f32) -> f64 {
    (f64::from(v) * 1e4).round() / 1e4
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::table_of;

    #[test]
    fn a_burst_of_motion_is_one_span() {
        let table = table_of(100, 10);
        let stats: Vec<FrameStats> = (0..100)
            .map(|i| FrameStats {
                index: i,
                motion: if (30..60).contains(&i) { 0.2 } else { 0.0 },
                ..FrameStats::default()
            })
            .collect();
        let s = spans(&stats, &table, &ActivityOptions::default());
        assert_eq!(s.len(), 1, "{s:?}");
        // Smoothing over 0.5 s (2 frames either side at 10 fps) widens the run a little.
        assert!(
            (27..=30).contains(&s[0].start) && (60..=63).contains(&s[0].end),
            "{s:?}"
        );
    }
}
