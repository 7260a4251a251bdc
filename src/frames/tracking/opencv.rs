//! OpenCV's single-object trackers, CSRT and KCF (the contrib `tracking` module), as
//! [`BoxTracker`]s: the only code of vidprep that calls OpenCV, compiled with the `tracking`
//! feature only. It goes through the `opencv` crate's safe bindings (built against the
//! system's OpenCV, Debian's `libopencv-dev` and `libopencv-contrib-dev`), so there is no
//! `unsafe` here; a picture reaches OpenCV as a `Mat` header over its own bytes (8-bit,
//! 3 channels, BGR: what OpenCV's trackers expect), never copied.

use opencv::boxed_ref::BoxedRef;
use opencv::core::{Mat, Ptr, Rect, Vec3b};
use opencv::prelude::*;
use opencv::tracking::{TrackerCSRT, TrackerCSRT_Params, TrackerKCF, TrackerKCF_Params};

use crate::annotations::{BBox, TrackerKind};
use crate::error::{Error, Result};
use crate::frames::tracking::{BgrImage, BoxTracker};

enum Inner {
    Csrt(Ptr<TrackerCSRT>),
    /// KCF, the largest box area it tracks at full resolution (`max_patch_size`; above it,
    /// it halves every picture) and the window it was started on (see [`kcf_window`]).
    Kcf(Ptr<TrackerKCF>, Option<i32>, KcfWindow),
}

/// One OpenCV tracker.
pub struct OpenCvTracker {
    kind: TrackerKind,
    inner: Inner,
}

/// The box KCF is started on and the one it was asked to track: KCF's filter is as large as
/// its box (twice as large below `max_patch_size`), and its every update takes a dozen
/// Fourier transforms of that size. OpenCV's DFT is fast for sizes whose prime factors are
/// 2, 3 and 5 (`getOptimalDFTSize`) and slow for others (146 = 2 x 73, the width of
/// VOT_bag's box, costs 3 times 150). So KCF tracks a window of the next such width and
/// height around the same centre, and reports the asked-for box at the centre it finds
/// (KCF never changes its box's size, so the reported box keeps the keyed size as before).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KcfWindow {
    /// Pixels the window reaches left of and above the asked-for box.
    pub dx: i32,
    pub dy: i32,
    /// The asked-for box's size.
    pub width: i32,
    pub height: i32,
}

/// The window KCF tracks for `rect` ([`KcfWindow`]): each side grown to `optimal(side)` (the
/// next DFT-friendly size, OpenCV's `getOptimalDFTSize`), half the growth on each side
/// (rounded down on the left and top). A box small enough for full resolution
/// (`area <= max_patch`, `None`: KCF never halves) that would grow past it keeps its size:
/// the window must not change how KCF samples the picture.
pub fn kcf_window(
    rect: Rect,
    max_patch: Option<i32>,
    optimal: impl Fn(i32) -> i32,
) -> (Rect, KcfWindow) {
    let (w, h) = (
        optimal(rect.width).max(rect.width),
        optimal(rect.height).max(rect.height),
    );
    let area = |w: i32, h: i32| i64::from(w) * i64::from(h);
    let crosses = max_patch.is_some_and(|m| {
        area(rect.width, rect.height) <= i64::from(m) && area(w, h) > i64::from(m)
    });
    let (w, h) = if crosses {
        (rect.width, rect.height)
    } else {
        (w, h)
    };
    let (dx, dy) = ((w - rect.width) / 2, (h - rect.height) / 2);
    (
        Rect::new(rect.x - dx, rect.y - dy, w, h),
        KcfWindow {
            dx,
            dy,
            width: rect.width,
            height: rect.height,
        },
    )
}

/// An OpenCV exception as [`Error::Tracker`]: the tracker and what it was doing (the caller,
/// which knows the video and the frame, adds them with [`Error::on_frame`]).
fn cv_error(kind: TrackerKind, doing: &str, e: opencv::Error) -> Error {
    Error::Tracker {
        path: None,
        tracker: kind.name().to_uppercase(),
        doing: doing.to_string(),
        frame: None,
        message: e.to_string(),
    }
}

impl OpenCvTracker {
    /// A fresh tracker of `kind` with OpenCV's default parameters.
    pub fn new(kind: TrackerKind) -> Result<OpenCvTracker> {
        let inner = match kind {
            TrackerKind::Csrt => TrackerCSRT_Params::default()
                .and_then(|p| TrackerCSRT::create(&p))
                .map(Inner::Csrt),
            TrackerKind::Kcf => TrackerKCF_Params::default().and_then(|p| {
                let max_patch = p.resize.then_some(p.max_patch_size);
                TrackerKCF::create(p).map(|t| Inner::Kcf(t, max_patch, KcfWindow::default()))
            }),
        }
        .map_err(|e| cv_error(kind, "to start", e))?;
        Ok(OpenCvTracker { kind, inner })
    }
}

/// `image` as an OpenCV `Mat` header over its own bytes (8-bit, 3 channels, rows without
/// padding): no pixel is copied, and the borrow keeps the bytes alive and unchanged for as
/// long as OpenCV may read them (one `init` or `update` call; neither tracker keeps the
/// picture: KCF clones it, CSRT extracts its features from it).
fn as_mat(kind: TrackerKind, image: &BgrImage) -> Result<BoxedRef<'_, Mat>> {
    let (w, h) = (image.width as i32, image.height as i32);
    if image.data.len() != image.width as usize * image.height as usize * 3 {
        return Err(Error::internal(format!(
            "a {w}x{h} BGR picture has {} bytes, not {}",
            image.data.len(),
            image.width as usize * image.height as usize * 3
        )));
    }
    Mat::new_rows_cols_with_bytes::<Vec3b>(h, w, &image.data)
        .map_err(|e| cv_error(kind, "to reach its picture", e))
}

/// A box as whole pixels inside a `w x h` picture (at least 1x1).
fn to_rect(b: &BBox, w: u32, h: u32) -> Rect {
    let x1 = b.x1.round().clamp(0.0, w as f64 - 1.0) as i32;
    let y1 = b.y1.round().clamp(0.0, h as f64 - 1.0) as i32;
    let x2 = (b.x2.round().clamp(0.0, w as f64) as i32).max(x1 + 1);
    let y2 = (b.y2.round().clamp(0.0, h as f64) as i32).max(y1 + 1);
    Rect::new(x1, y1, x2 - x1, y2 - y1)
}

impl BoxTracker for OpenCvTracker {
    fn init(&mut self, image: &BgrImage, bbox: BBox) -> Result<()> {
        let mat = as_mat(self.kind, image)?;
        let rect = to_rect(&bbox, image.width, image.height);
        match &mut self.inner {
            Inner::Csrt(t) => t.init(&mat, rect),
            Inner::Kcf(t, max_patch, window) => {
                let optimal = |n: i32| opencv::core::get_optimal_dft_size(n).unwrap_or(n);
                let (grown, w) = kcf_window(rect, *max_patch, optimal);
                *window = w;
                t.init(&mat, grown)
            }
        }
        .map_err(|e| cv_error(self.kind, "to start on its box", e))
    }

    fn update(&mut self, image: &BgrImage) -> Result<Option<BBox>> {
        let mat = as_mat(self.kind, image)?;
        let mut r = Rect::default();
        let found = match &mut self.inner {
            Inner::Csrt(t) => t.update(&mat, &mut r),
            Inner::Kcf(t, _, w) => t.update(&mat, &mut r).map(|found| {
                // The asked-for box at the window's place (KCF keeps the window's size).
                r = Rect::new(r.x + w.dx, r.y + w.dy, w.width, w.height);
                found
            }),
        }
        .map_err(|e| cv_error(self.kind, "to follow its box", e))?;
        Ok((found && r.width > 0 && r.height > 0).then(|| {
            BBox::new(
                r.x as f64,
                r.y as f64,
                (r.x + r.width) as f64,
                (r.y + r.height) as f64,
            )
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn optimal(n: i32) -> i32 {
        opencv::core::get_optimal_dft_size(n).unwrap()
    }

    #[test]
    fn kcf_windows_have_dft_friendly_sides_around_the_same_centre() {
        // VOT_bag's first box, 146x132: 146 = 2 x 73 grows to 150, 132 = 4 x 3 x 11 to 135.
        let (grown, w) = kcf_window(Rect::new(292, 128, 146, 132), Some(6400), optimal);
        assert_eq!(grown, Rect::new(290, 127, 150, 135));
        assert_eq!(
            w,
            KcfWindow {
                dx: 2,
                dy: 1,
                width: 146,
                height: 132
            }
        );
        // Sides already made of 2, 3 and 5 stay (OTB_Crossing's 20x50).
        let r = Rect::new(10, 20, 20, 50);
        assert_eq!(kcf_window(r, Some(6400), optimal).0, r);
        // 79x81 = 6399 is tracked at full resolution; grown to 80x81 it would be halved:
        // it keeps its size.
        let r = Rect::new(0, 0, 79, 81);
        assert_eq!(kcf_window(r, Some(6400), optimal).0, r);
        assert_eq!(kcf_window(r, None, optimal).0.width, 80);
    }
}
