//! The `explicit` sampler: no toolkit's formula, the frames given by index
//! ([`Request::Frames`](super::Request::Frames): `"frames": [0, 5, 17]` in a manifest,
//! `--frames 0,5,17` on the command line), in the order given. A benchmark that publishes its
//! frame indices, or a model package whose frames are to be followed as it showed them
//! (`docs/profiles.md`), is reproduced by naming the frames. It takes no count and no fps.

use super::{picked, Formula, FrameTimes, Picked, SampleError, Sampler};

/// `explicit`: the frames given, as given. Indices past the video are refused (naming the
/// index and the frame count), and an index given twice only with `allow_repeats`
/// ([`SampleError::FrameOutOfRange`], [`SampleError::RepeatedGivenFrame`]; [`super::sample`]
/// checks both).
#[derive(Clone, Copy, Debug)]
pub struct Explicit;

impl Explicit {
    fn refusal() -> SampleError {
        SampleError::Toolkit {
            sampler: Sampler::of(&Explicit),
            reason: "it takes the frames given (`frames`: source frame indices such as 0, 5, 17), \
                     not a count or an fps"
                .into(),
        }
    }
}

impl Formula for Explicit {
    fn name(&self) -> &'static str {
        "explicit"
    }

    fn takes_frames(&self) -> bool {
        true
    }

    fn count(&self, _total: usize, _n: usize) -> Result<Picked, SampleError> {
        Err(Explicit::refusal())
    }

    fn fps(
        &self,
        _video: &dyn FrameTimes,
        _fps: f64,
        _max_frames: Option<usize>,
        _allow_repeats: bool,
    ) -> Result<Picked, SampleError> {
        Err(Explicit::refusal())
    }

    fn frames(&self, indices: &[usize]) -> Result<Picked, SampleError> {
        Ok(picked(indices.to_vec(), given_formula(indices), None))
    }
}

/// The formula text of a list of given frames: `the frames given: 0, 5, 17` (the first and
/// last few of a long list).
fn given_formula(indices: &[usize]) -> String {
    let text = |s: &[usize]| {
        s.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if indices.len() <= 12 {
        format!("the frames given: {}", text(indices))
    } else {
        format!(
            "the frames given ({}): {}, ..., {}",
            indices.len(),
            text(&indices[..6]),
            text(&indices[indices.len() - 3..])
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::sampling::{sample, ConstantRate, Request};

    fn named(s: &str) -> Sampler {
        s.parse().unwrap()
    }

    #[test]
    fn the_frames_given_in_their_order() {
        let v = ConstantRate::new(30, 30, 1);
        let s = sample(
            &v,
            named("explicit"),
            Request::Frames(vec![17, 0, 5]),
            false,
        )
        .unwrap();
        assert_eq!(s.indices, [17, 0, 5]);
        assert_eq!(s.sampler, named("explicit"));
        assert_eq!(s.formula, "the frames given: 17, 0, 5");
        assert_eq!(s.note, None);
        assert_eq!(s.requested, Request::Frames(vec![17, 0, 5]));
        let long: Vec<usize> = (0..20).collect();
        let s = sample(&v, named("explicit"), Request::Frames(long), false).unwrap();
        assert_eq!(
            s.formula,
            "the frames given (20): 0, 1, 2, 3, 4, 5, ..., 17, 18, 19"
        );
    }

    #[test]
    fn past_the_end_repeats_and_empty_lists_are_refused() {
        let v = ConstantRate::new(30, 30, 1);
        let e = sample(&v, named("explicit"), Request::Frames(vec![3, 30]), false).unwrap_err();
        assert_eq!(
            e,
            SampleError::FrameOutOfRange {
                index: 30,
                position: 1,
                total: 30
            }
        );
        assert!(e.to_string().contains("frame 30"), "{e}");
        assert!(e.to_string().contains("30 frames (0 to 29)"), "{e}");
        let e = sample(&v, named("explicit"), Request::Frames(vec![3, 4, 3]), false).unwrap_err();
        assert_eq!(
            e,
            SampleError::RepeatedGivenFrame {
                index: 3,
                first: 0,
                again: 2
            }
        );
        assert!(e.to_string().contains("allow_repeats"), "{e}");
        let s = sample(&v, named("explicit"), Request::Frames(vec![3, 4, 3]), true).unwrap();
        assert_eq!(s.indices, [3, 4, 3]);
        assert!(s.note.unwrap().contains("2 distinct"));
        assert_eq!(
            sample(&v, named("explicit"), Request::Frames(vec![]), false).unwrap_err(),
            SampleError::ZeroFrames
        );
    }

    #[test]
    fn explicit_takes_no_count_and_formulas_take_no_list() {
        let v = ConstantRate::new(30, 30, 1);
        let e = sample(&v, named("explicit"), Request::Count(4), false).unwrap_err();
        assert!(e.to_string().contains("`frames`"), "{e}");
        let e = sample(&v, named("uniform"), Request::Frames(vec![1]), false).unwrap_err();
        assert_eq!(
            e,
            SampleError::FramesNotTaken {
                sampler: named("uniform")
            }
        );
        assert!(e.to_string().contains("explicit"), "{e}");
    }
}
