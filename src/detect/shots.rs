//! Shot boundaries from the per-frame statistics: hard cuts (a content change far above its
//! neighbours', as PySceneDetect's adaptive detector), fades to and from black (runs of dark
//! frames and the ramps into and out of them) and dissolves (a stretch whose middle frame is
//! the average of its ends while the ends differ as much as a cut: motion fails that test).

use serde::Serialize;

use super::scan::{FrameStats, LAGS};

/// What kind of boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BoundaryKind {
    /// One frame to the next: `start` is the first frame of the new shot, `end = start`.
    Cut,
    /// Through black: `[start, end)` are the darkened frames.
    Fade,
    /// A cross-fade: `[start, end)` are the mixed frames.
    Dissolve,
}

/// A boundary between two shots. Frames `[start, end)` belong to neither (none for a cut):
/// the shot before ends at `start`, the next begins at `end`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Boundary {
    /// Cut, fade or dissolve.
    pub kind: BoundaryKind,
    /// First frame of the transition (of the new shot, for a cut).
    pub start: usize,
    /// First frame after the transition.
    pub end: usize,
    /// The evidence: content change and its ratio to the neighbours' (cuts), darkest
    /// brightness (fades), end-to-end change and blend residual (dissolves).
    pub score: f64,
    /// The second number of the evidence (see `score`).
    pub ratio: f64,
}

/// Thresholds of the shot detector.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShotOptions {
    /// A cut needs at least this content change (0-255 scale of [`FrameStats::content`]).
    pub min_content: f32,
    /// ... and at least this many times the mean change of the `window` frames either side.
    pub adaptive: f32,
    /// ... and it changes at least this share of the active picture ([`FrameStats::changed`]):
    /// a sharp change of a smaller part of the picture (a title card's text or drawing
    /// appearing, a caption, a logo) is not a cut.
    pub min_changed: f32,
    /// Frames either side that the change is compared with.
    pub window: usize,
    /// Look for fades (brightness at or below `black` is black).
    pub fades: bool,
    /// Brightness (0-255, full range) at or below which a pixel is dark (ffmpeg's
    /// `blackdetect` default: 10% of the range).
    pub black: f32,
    /// Share of dark pixels that makes a frame black (`blackdetect`: 0.98).
    pub black_share: f32,
    /// Look for dissolves.
    pub dissolves: bool,
    /// A dissolve's ends must differ by at least this (mean luma difference, 0-255).
    pub dissolve_min_change: f32,
    /// ... and its middle frame be within this fraction of that change from the ends'
    /// average.
    pub dissolve_max_residual: f32,
    /// Shots shorter than this many frames are merged into the next one (the boundary is
    /// dropped), as PySceneDetect's `min_scene_len`.
    pub min_shot_frames: usize,
}

impl Default for ShotOptions {
    fn default() -> Self {
        ShotOptions {
            min_content: 8.0,
            adaptive: 3.0,
            min_changed: 0.2,
            window: 2,
            fades: true,
            black: 26.0,
            black_share: 0.98,
            dissolves: true,
            dissolve_min_change: 18.0,
            dissolve_max_residual: 0.3,
            min_shot_frames: 8,
        }
    }
}

/// A dissolve's change, above motion, must be at least this share a change of picture
/// ([`FrameStats::shape`] against [`FrameStats::far`]): the rest is brightness.
const MIN_SHAPE_SHARE: f32 = 0.3;

/// A dissolve replaces the whole picture: the change above motion that most of the picture
/// has ([`FrameStats::wide`], the 30th percentile of a grid's cells) must be at least this
/// share of the mean change ([`FrameStats::far`]). A caption, logo or inset fading in over
/// a part of the picture raises the mean only (over a calm shot the share is about 0; a
/// dissolve reads 0.6-1.2, the middle of a 60-frame one between moving shots read at lag 24
/// about a third).
const MIN_WIDE_SHARE: f32 = 0.3;

/// A dissolve's mixed frames: at its lag `k`, frame `i`'s change from frame `i - k` is the
/// whole change from the old shot to the new one (within this share of it, above motion)
/// exactly while `i - k` is before the mix and `i` after it.
const PLATEAU_DROP: f32 = 0.05;

/// The boundaries in `stats`, in frame order, not overlapping.
pub fn boundaries(stats: &[FrameStats], options: &ShotOptions) -> Vec<Boundary> {
    let mut gradual = Vec::new();
    if options.fades {
        gradual.extend(fades(stats, options));
    }
    if options.dissolves {
        let cut_frames: Vec<usize> = cuts(stats, options).iter().map(|c| c.start).collect();
        for d in dissolves_between(stats, options, &cut_frames) {
            if !gradual
                .iter()
                .any(|g: &Boundary| overlaps(g, d.start, d.end.max(d.start + 1)))
            {
                gradual.push(d);
            }
        }
    }
    gradual.sort_by_key(|b| b.start);
    let cuts = cuts(stats, options);
    // A dissolve that ends or starts at a hard cut is the motion of the shot beside the cut
    // (the cut explains the change): the cut stays, the dissolve goes.
    // So is one holding a cut whose step stands far above the stretch's mean step (a
    // cross-fade spreads its change evenly).
    gradual.retain(|g| {
        let mean_step = stats[g.start..g.end.min(stats.len())]
            .iter()
            .map(|s| s.content)
            .sum::<f32>()
            / (g.end - g.start).max(1) as f32;
        g.kind != BoundaryKind::Dissolve
            || !cuts.iter().any(|c| {
                c.start.abs_diff(g.start) <= 1
                    || c.start.abs_diff(g.end) <= 1
                    || (g.start < c.start
                        && c.start < g.end
                        && stats[c.start].content >= 3.0 * mean_step)
            })
    });
    let mut all = gradual.clone();
    for c in cuts {
        // A cut inside a gradual transition (or at a fade's edge) is that transition.
        let inside = |g: &Boundary| match g.kind {
            BoundaryKind::Dissolve => g.start < c.start && c.start < g.end,
            _ => c.start + 1 >= g.start && c.start <= g.end + 1,
        };
        if !gradual.iter().any(inside) {
            all.push(c);
        }
    }
    all.sort_by_key(|b| b.start);
    // Shots shorter than the minimum: drop the later boundary.
    let mut kept: Vec<Boundary> = Vec::new();
    for b in all {
        let shot_start = kept.last().map_or(0, |k| k.end);
        if !kept.is_empty() && b.start < shot_start + options.min_shot_frames {
            continue;
        }
        kept.push(b);
    }
    kept
}

fn round3(v: f32) -> f64 {
    (f64::from(v) * 1000.0).round() / 1000.0
}

fn overlaps(b: &Boundary, start: usize, end: usize) -> bool {
    start < b.end.max(b.start + 1) && b.start < end
}

/// Hard cuts: frame `i` differs from `i - 1` by at least `min_content` over at least
/// `min_changed` of the picture, and by `adaptive` times the mean difference of the `window`
/// frames either side.
pub fn cuts(stats: &[FrameStats], options: &ShotOptions) -> Vec<Boundary> {
    let n = stats.len();
    let w = options.window.max(1);
    let mut out = Vec::new();
    for i in 1..n {
        let c = stats[i].content;
        if c < options.min_content || stats[i].changed < options.min_changed {
            continue;
        }
        let mean = |from: usize, to: usize| {
            let v = &stats[from.max(1).min(to)..to];
            if v.is_empty() {
                None
            } else {
                Some(v.iter().map(|s| s.content).sum::<f32>() / v.len() as f32)
            }
        };
        let before = mean(i.saturating_sub(w), i);
        let after = mean(i + 1, (i + 1 + w).min(n));
        let around = match (before, after) {
            (Some(b), Some(a)) => (b + a) / 2.0,
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => 0.0,
        };
        let ratio = c / around.max(0.5);
        // A cut into (or out of) a moving shot: the change stands far above the calm side
        // and clearly above the busy one. Motion starting never does both.
        let (calm, busy) = match (before, after) {
            (Some(b), Some(a)) => (b.min(a), b.max(a)),
            _ => (around, around),
        };
        let one_sided = c >= options.adaptive * calm.max(0.5) && c >= 1.5 * busy;
        // A cut just before damaged frames (or a flash) whose changes raise the mean after
        // it: the shot before is calm and so is the first step of the new shot.
        let calm_then_calm = before.is_some_and(|b| c >= options.adaptive * b.max(0.5))
            && i + 1 < n
            && c >= options.adaptive * stats[i + 1].content.max(0.5);
        // A flash: a few frames later the picture is back to what it was before.
        // (Frame i+5-d against frame i-1-d, for d up to 3: also catches the frame after a
        // one-frame flash, whose change is the return.)
        // "Back" means within a third of the change, or (in a moving shot) no further than
        // motion alone took the picture over six frames just before.
        let motion_before = stats[i - 1].far[0];
        let flash = (0..=3).any(|d| {
            if i + 5 - d >= n || i <= d {
                return false;
            }
            let back = stats[i + 5 - d].far[0];
            back < 0.35 * c || (back <= 1.2 * motion_before && back < 0.6 * c)
        });
        if flash {
            continue;
        }
        if ratio >= options.adaptive || one_sided || calm_then_calm {
            out.push(Boundary {
                kind: BoundaryKind::Cut,
                start: i,
                end: i,
                score: round3(c),
                ratio: round3(ratio),
            });
        }
    }
    out
}

/// Fades: runs of black frames, widened by the darkening ramp before and the brightening
/// ramp after. A run at the very start or end of the video is a fade too.
pub fn fades(stats: &[FrameStats], options: &ShotOptions) -> Vec<Boundary> {
    let n = stats.len();
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let black = |s: &FrameStats| s.dark >= options.black_share;
        if !black(&stats[i]) {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < n && black(&stats[end]) {
            end += 1;
        }
        // Ramp into black: frames getting darker, each step a visible change.
        let mut start = i;
        while start > 0 && stats[start - 1].luma > stats[start].luma + 0.5 && i - start < 90 {
            start -= 1;
        }
        // Ramp out: frames getting brighter.
        let mut stop = end;
        while stop < n
            && stop > 0
            && stats[stop].luma > stats[stop - 1].luma + 0.5
            && stop - end < 90
            && stop + 1 < n
            && stats[stop + 1].luma > stats[stop].luma + 0.5
        {
            stop += 1;
        }
        let darkest = stats[i..end]
            .iter()
            .map(|s| s.luma)
            .fold(f32::INFINITY, f32::min);
        out.push(Boundary {
            kind: BoundaryKind::Fade,
            start,
            end: stop,
            score: round3(darkest),
            ratio: (end - i) as f64,
        });
        i = end.max(stop);
    }
    out
}

/// Dissolves, given the hard cuts (first frames of their new shots): at some lag `k`, frame
/// `i` differs from frame `i - k` as much as a cut would, the frame halfway is their average
/// (a cross-fade, not motion), and no single step in between carries most of the change. The
/// mixed frames are then the steps of that stretch whose change stands out. What motion alone
/// gives is measured within the shot, never across a cut.
fn dissolves_between(
    stats: &[FrameStats],
    options: &ShotOptions,
    cut_frames: &[usize],
) -> Vec<Boundary> {
    let n = stats.len();
    // Candidates: (end frame, lag index, change, residual ratio).
    let mut candidates: Vec<(usize, usize, f32, f32)> = Vec::new();
    for i in 0..n {
        let mut best: Option<(usize, f32, f32)> = None;
        for (li, &lag) in LAGS.iter().enumerate() {
            if i < lag {
                continue;
            }
            // The frames of `from..to` whose statistics at this lag exist: frame `j` is
            // compared with frame `j - lag`, which the first `lag` frames of the video lack
            // (their value is 0, not a measurement: a baseline read there would take any
            // motion at the video's start for a transition).
            let measured = |from: usize, to: usize| from.max(lag).min(to)..to;
            // What motion alone gives at this lag: the medians just before the stretch and
            // just after it.
            let base = |pick: &dyn Fn(&FrameStats) -> f32| {
                // Frame j compares j with j - lag: within one shot when no cut lies in
                // (j - lag, j].
                let crosses = |j: usize| cut_frames.iter().any(|&c| j < c + lag && c <= j);
                let before_range = measured(i.saturating_sub(2 * lag), i + 1 - lag);
                let after_range = (i + lag).min(n - 1)..(i + 2 * lag).min(n);
                let before_crosses = before_range.clone().any(crosses);
                let after_crosses = after_range.clone().any(crosses);
                let mut before: Vec<f32> = stats[before_range].iter().map(pick).collect();
                let mut after: Vec<f32> = stats[after_range].iter().map(pick).collect();
                let m = |v: &mut Vec<f32>| {
                    if v.is_empty() {
                        None
                    } else {
                        v.sort_by(f32::total_cmp);
                        Some(v[v.len() / 2])
                    }
                };
                match (m(&mut before), m(&mut after)) {
                    // A side measured across a hard cut is another shot's motion: the other
                    // side alone; else the quieter side (the other may hold the next
                    // transition).
                    (Some(_), Some(b)) if before_crosses && !after_crosses => b,
                    (Some(a), Some(_)) if after_crosses && !before_crosses => a,
                    (Some(a), Some(b)) if before_crosses && after_crosses => (a + b) / 2.0,
                    (Some(a), Some(b)) => a.min(b),
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => 0.0,
                }
            };
            // The two sides' medians differ by more than half (a far busier side).
            let uneven = |pick: &dyn Fn(&FrameStats) -> f32| {
                let med = |r: std::ops::Range<usize>| {
                    let mut v: Vec<f32> = stats[r].iter().map(pick).collect();
                    v.sort_by(f32::total_cmp);
                    v.get(v.len() / 2).copied()
                };
                match (
                    med(measured(i.saturating_sub(2 * lag), i + 1 - lag)),
                    med((i + lag).min(n - 1)..(i + 2 * lag).min(n)),
                ) {
                    (Some(a), Some(b)) => a.max(b) > 1.5 * a.min(b),
                    _ => false,
                }
            };
            let far = stats[i].far[li] - base(&|s: &FrameStats| s.far[li]);
            // A cross-fade replaces one picture by another: most of its change is left once
            // brightness and contrast are matched. A brightening or darkening of one shot
            // (a light coming on, an exposure ramp) changes the brightness only.
            let shape = stats[i].shape[li] - base(&|s: &FrameStats| s.shape[li]);
            if shape < MIN_SHAPE_SHARE * far {
                continue;
            }
            let wide = stats[i].wide[li] - base(&|s: &FrameStats| s.wide[li]);
            if wide < MIN_WIDE_SHARE * far {
                continue;
            }
            // Where the sides differ (one may hold the next transition, or motion speeds
            // up, as in a whip pan), the middle frame must plainly be the ends' blend.
            if uneven(&|s: &FrameStats| s.far[li]) && stats[i].blend[li] > 0.4 * stats[i].far[li] {
                continue;
            }
            // Into or out of a moving shot, motion alone changes the picture nearly as much:
            // a smaller margin will do where the middle frame is plainly the ends' blend.
            let blend_like = stats[i].blend[li] <= 0.28 * stats[i].far[li];
            let least = if blend_like {
                0.4 * options.dissolve_min_change
            } else {
                options.dissolve_min_change
            };
            if far < least {
                continue;
            }
            // The stretch must start from a picture of the shot, not from a flash (frames
            // that themselves jumped away from the ones before).
            if stats[(i - lag).saturating_sub(2)..=i - lag]
                .iter()
                .any(|s| s.content >= 0.5 * stats[i].far[li])
            {
                continue;
            }
            let residual =
                (stats[i].blend[li] - base(&|s: &FrameStats| s.blend[li])).max(0.0) / far;
            if residual > options.dissolve_max_residual {
                continue;
            }
            let steps = &stats[i + 1 - lag..=i];
            let largest = steps.iter().map(|s| s.content).fold(0.0, f32::max);
            let total: f32 = steps.iter().map(|s| s.content).sum();
            // The change is spread: no step holds half of it (that is a cut).
            if total <= 0.0 || largest > 0.5 * total {
                continue;
            }
            if best.is_none_or(|(_, r, _)| residual < r) {
                best = Some((li, residual, far));
            }
        }
        if let Some((li, residual, far)) = best {
            candidates.push((i, li, far, residual));
        }
    }
    let stretch = |c: &(usize, usize, f32, f32)| (c.0 + 1 - LAGS[c.1], c.0 + 1);
    // A dissolve of `L` frames shows best at the smallest lag at or above `L`: a longer
    // stretch around it that adds little change (less than 15% more) only adds the
    // shots' motion at its ends, and goes.
    let fits_shorter = |c: &(usize, usize, f32, f32)| {
        let (s0, e0) = stretch(c);
        candidates.iter().any(|d| {
            let (s1, e1) = stretch(d);
            d.1 < c.1 && s0 <= s1 && e1 <= e0 && d.2 * 1.15 >= c.2
        })
    };
    let candidates: Vec<(usize, usize, f32, f32)> = candidates
        .iter()
        .filter(|c| !fits_shorter(c))
        .copied()
        .collect();
    // One dissolve per stretch: the candidates with the largest change first, each dropping
    // the candidates whose stretches overlap it by half the shorter one (so a chain of
    // dissolves with short shots between stays a chain of dissolves).
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| candidates[b].2.total_cmp(&candidates[a].2).then(a.cmp(&b)));
    let mut chosen: Vec<usize> = Vec::new();
    for k in order {
        let (s0, e0) = stretch(&candidates[k]);
        let clash = chosen.iter().any(|&j| {
            let (s1, e1) = stretch(&candidates[j]);
            let overlap = e0.min(e1).saturating_sub(s0.max(s1));
            2 * overlap > (e0 - s0).min(e1 - s1)
        });
        if !clash {
            chosen.push(k);
        }
    }
    chosen.sort_by_key(|&k| stretch(&candidates[k]).0);
    let mut out: Vec<Boundary> = Vec::new();
    for k in chosen {
        let (end_frame, li, far, residual) = candidates[k];
        let lag = LAGS[li];
        let first = end_frame + 1 - lag;
        // Trim steps whose change is small next to the stretch's mean.
        let steps: Vec<f32> = (first..=end_frame).map(|j| stats[j].content).collect();
        let mean = steps.iter().sum::<f32>() / steps.len() as f32;
        let keep = |c: f32| c >= 0.3 * mean;
        let lo = steps.iter().position(|&c| keep(c)).unwrap_or(0);
        let hi = steps
            .iter()
            .rposition(|&c| keep(c))
            .unwrap_or(steps.len() - 1);
        // Step j changes frame j-1 into frame j: mixed frames are first+lo .. first+hi-1
        // (the last step lands on the new shot's first clean frame).
        let (mut start, mut end) = (first + lo, (first + hi).max(first + lo + 1));
        // Where the mixing is: at this lag the change stays at its height (the plateau
        // around the candidate) from the first frame after the mix (`i - k` still before
        // it) to the frame `k` after the first mixed one. The steps' trim above keeps the
        // new shot's motion (a moving shot's steps are as large as the mix's), so it only
        // bounds this.
        let level = stats[end_frame].far[li] - (PLATEAU_DROP * far);
        let mut held_from = end_frame;
        while held_from > lag && stats[held_from - 1].far[li] >= level {
            held_from -= 1;
        }
        let mut held_to = end_frame;
        while held_to + 1 < n && stats[held_to + 1].far[li] >= level {
            held_to += 1;
        }
        let (mixed_from, mixed_to) = ((held_to + 1 - lag).max(start), held_from.min(end));
        if mixed_from < mixed_to {
            (start, end) = (mixed_from, mixed_to);
        }
        // Trimmed stretches that still overlap: the larger change stays.
        if let Some(last) = out.last_mut() {
            if start < last.end {
                if far as f64 > last.score {
                    *last = Boundary {
                        kind: BoundaryKind::Dissolve,
                        start,
                        end,
                        score: round3(far),
                        ratio: round3(residual),
                    };
                }
                continue;
            }
        }
        out.push(Boundary {
            kind: BoundaryKind::Dissolve,
            start,
            end,
            score: round3(far),
            ratio: round3(residual),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::time::Time;

    fn flat(n: usize, content: f32) -> Vec<FrameStats> {
        (0..n)
            .map(|i| FrameStats {
                index: i,
                time: Time::ZERO,
                luma: 120.0,
                content: if i == 0 { 0.0 } else { content },
                ..FrameStats::default()
            })
            .collect()
    }

    /// A cut at `at`: a change of `size`, and the frames after it stay far from those before.
    fn cut_at(s: &mut [FrameStats], at: usize, size: f32) {
        s[at].content = size;
        s[at].changed = 0.9;
        for st in &mut s[at..at + 6] {
            st.far[0] = size;
        }
    }

    #[test]
    fn a_spike_is_a_cut_and_steady_motion_is_not() {
        let mut s = flat(100, 4.0);
        cut_at(&mut s, 40, 40.0);
        let b = boundaries(&s, &ShotOptions::default());
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(
            (b[0].kind, b[0].start, b[0].end),
            (BoundaryKind::Cut, 40, 40)
        );
        let s = flat(100, 20.0);
        assert!(boundaries(&s, &ShotOptions::default()).is_empty());
    }

    #[test]
    fn a_flash_is_not_a_cut() {
        // Frame 40 jumps away and a few frames later the picture is back.
        let mut s = flat(100, 2.0);
        s[40].content = 40.0;
        s[41].content = 40.0;
        s[40].changed = 0.9;
        s[41].changed = 0.9;
        s[40].far[0] = 40.0;
        assert!(boundaries(&s, &ShotOptions::default()).is_empty());
    }

    #[test]
    fn short_shots_are_merged() {
        let mut s = flat(100, 2.0);
        cut_at(&mut s, 40, 40.0);
        cut_at(&mut s, 43, 40.0);
        let b = boundaries(&s, &ShotOptions::default());
        assert_eq!(b.iter().map(|b| b.start).collect::<Vec<_>>(), vec![40]);
    }

    #[test]
    fn a_fade_through_black_covers_the_ramps() {
        let mut s = flat(100, 1.0);
        // Darkening 40..50, black 50..55, brightening 55..60.
        for (k, i) in (40..50).enumerate() {
            s[i].luma = 120.0 - 11.0 * (k as f32 + 1.0);
        }
        for st in &mut s[50..55] {
            st.luma = 2.0;
            st.dark = 1.0;
        }
        for (k, i) in (55..60).enumerate() {
            s[i].luma = 2.0 + 22.0 * (k as f32 + 1.0);
        }
        let b = boundaries(&s, &ShotOptions::default());
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(b[0].kind, BoundaryKind::Fade);
        assert!((39..=41).contains(&b[0].start), "{b:?}");
        assert!((58..=60).contains(&b[0].end), "{b:?}");
    }
}
