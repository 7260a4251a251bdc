//! The parts of a smart clip: which output frames are copied GOPs of the source and which
//! are re-encoded, from which source frame each output frame shows unchanged and where the
//! source may be cut.

use std::ops::Range;

/// A stretch of the output: copied packets or re-encoded frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// Output frames `output` are source frames `source`, copied (whole GOPs).
    Copied {
        output: Range<usize>,
        source: Range<usize>,
    },
    /// Output frames `output` are re-encoded.
    Encoded { output: Range<usize> },
}

impl Part {
    pub(crate) fn output(&self) -> Range<usize> {
        match self {
            Part::Copied { output, .. } | Part::Encoded { output } => output.clone(),
        }
    }
}

/// Splits `n` output frames into copied GOPs and re-encoded stretches. `host_of(o)` is the
/// source frame output frame `o` shows unchanged (None: a needle frame or one with boxes
/// drawn); `cut_points` are the clean cut points (ending with the source's frame count).
pub(crate) fn plan_parts(
    n: usize,
    host_of: &dyn Fn(usize) -> Option<usize>,
    next_cut: &dyn Fn(usize) -> Option<usize>,
    is_cut: &dyn Fn(usize) -> bool,
) -> Vec<Part> {
    // The copyable GOP starting at output frame `o`: source frames [src, c) shown unchanged
    // by outputs [o, o + c - src).
    let gop_at = |o: usize| -> Option<(usize, usize)> {
        let src = host_of(o)?;
        if !is_cut(src) {
            return None;
        }
        let c = next_cut(src)?;
        if o + (c - src) > n {
            return None;
        }
        (1..c - src)
            .all(|i| host_of(o + i) == Some(src + i))
            .then_some((src, c))
    };
    let mut parts: Vec<Part> = Vec::new();
    let mut o = 0;
    while o < n {
        if let Some((src, mut end)) = gop_at(o) {
            // Whole GOPs, as many as follow.
            while let Some((s2, e2)) = gop_at(o + (end - src)) {
                if s2 != end {
                    break;
                }
                end = e2;
            }
            parts.push(Part::Copied {
                output: o..o + (end - src),
                source: src..end,
            });
            o += end - src;
            continue;
        }
        let start = o;
        o += 1;
        while o < n && gop_at(o).is_none() {
            o += 1;
        }
        parts.push(Part::Encoded { output: start..o });
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(n: usize, host_of: impl Fn(usize) -> Option<usize>, cuts: &[usize]) -> Vec<Part> {
        let cuts = cuts.to_vec();
        let c2 = cuts.clone();
        plan_parts(
            n,
            &host_of,
            &move |c| cuts.iter().copied().find(|&x| x > c),
            &move |c| c2.contains(&c),
        )
    }

    #[test]
    fn whole_gops_are_copied_and_the_edges_encoded() {
        // GOPs of 10 frames; a cut of source frames 13..47.
        let cuts = [0, 10, 20, 30, 40, 50, 60];
        let p = parts(34, |o| Some(13 + o), &cuts);
        assert_eq!(
            p,
            vec![
                Part::Encoded { output: 0..7 },
                Part::Copied {
                    output: 7..27,
                    source: 20..40
                },
                Part::Encoded { output: 27..34 },
            ]
        );
        // Aligned on both sides: nothing to encode.
        assert_eq!(
            parts(20, |o| Some(10 + o), &cuts),
            vec![Part::Copied {
                output: 0..20,
                source: 10..30
            }]
        );
        // Shorter than a GOP: all encoded.
        assert_eq!(
            parts(8, |o| Some(11 + o), &cuts),
            vec![Part::Encoded { output: 0..8 }]
        );
    }

    #[test]
    fn a_needle_and_drawn_frames_are_encoded_and_the_host_around_them_copied() {
        let cuts = [0, 10, 20, 30, 40];
        // Host 0..40 with a 5-frame needle before host frame 15 (output 15..20).
        let host_of = |o: usize| {
            if o < 15 {
                Some(o)
            } else if o < 20 {
                None
            } else {
                Some(o - 5)
            }
        };
        assert_eq!(
            parts(45, host_of, &cuts),
            vec![
                Part::Copied {
                    output: 0..10,
                    source: 0..10
                },
                Part::Encoded { output: 10..25 },
                Part::Copied {
                    output: 25..45,
                    source: 20..40
                },
            ]
        );
        // Boxes drawn on source frame 33: its GOP is re-encoded.
        let drawn = |o: usize| (o != 33).then_some(o);
        assert_eq!(
            parts(40, drawn, &cuts),
            vec![
                Part::Copied {
                    output: 0..30,
                    source: 0..30
                },
                Part::Encoded { output: 30..40 },
            ]
        );
    }
}
