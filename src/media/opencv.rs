//! OpenCV's single-object trackers, CSRT and KCF (the contrib `tracking` module), as
//! [`BoxTracker`]s: the only code of vidprep that calls OpenCV, compiled with the `tracking`
//! feature only. It goes through the `opencv` crate's safe bindings (built against the
//! system's OpenCV, Debian's `libopencv-dev` and `libopencv-contrib-dev`), so there is no
//! `unsafe` here; pictures are copied into one reused `Mat` (8-bit, 3 channels, BGR: what
//! OpenCV's trackers expect).

use opencv::core::{Mat, Ptr, Rect, Scalar, CV_8UC3};
use opencv::prelude::*;
use opencv::tracking::{TrackerCSRT, TrackerCSRT_Params, TrackerKCF, TrackerKCF_Params};

use crate::annotations::{BBox, TrackerKind};
use crate::error::{Error, Result};
use crate::media::tracker::{BgrImage, BoxTracker};

enum Inner {
    Csrt(Ptr<TrackerCSRT>),
    Kcf(Ptr<TrackerKCF>),
}

/// One OpenCV tracker and the picture buffer it reads.
pub struct OpenCvTracker {
    kind: TrackerKind,
    inner: Inner,
    mat: Mat,
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
            TrackerKind::Kcf => TrackerKCF_Params::default()
                .and_then(|p| TrackerKCF::create(p))
                .map(Inner::Kcf),
        }
        .map_err(|e| cv_error(kind, "to start", e))?;
        Ok(OpenCvTracker {
            kind,
            inner,
            mat: Mat::default(),
        })
    }

    /// Copies `image` into the tracker's `Mat` (reallocated only when the size changes).
    fn load(&mut self, image: &BgrImage) -> Result<()> {
        let (w, h) = (image.width as i32, image.height as i32);
        if self.mat.cols() != w || self.mat.rows() != h {
            self.mat = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(0.0))
                .map_err(|e| cv_error(self.kind, "to allocate a picture", e))?;
        }
        let bytes = self
            .mat
            .data_bytes_mut()
            .map_err(|e| cv_error(self.kind, "to reach its picture", e))?;
        if bytes.len() != image.data.len() {
            return Err(Error::internal(format!(
                "a {w}x{h} BGR picture has {} bytes, OpenCV's {}",
                image.data.len(),
                bytes.len()
            )));
        }
        bytes.copy_from_slice(&image.data);
        Ok(())
    }
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
        self.load(image)?;
        let rect = to_rect(&bbox, image.width, image.height);
        match &mut self.inner {
            Inner::Csrt(t) => t.init(&self.mat, rect),
            Inner::Kcf(t) => t.init(&self.mat, rect),
        }
        .map_err(|e| cv_error(self.kind, "to start on its box", e))
    }

    fn update(&mut self, image: &BgrImage) -> Result<Option<BBox>> {
        self.load(image)?;
        let mut r = Rect::default();
        let found = match &mut self.inner {
            Inner::Csrt(t) => t.update(&self.mat, &mut r),
            Inner::Kcf(t) => t.update(&self.mat, &mut r),
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
