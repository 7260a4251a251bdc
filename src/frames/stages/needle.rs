//! The needle of an insertion: a GOT-10k tracking sequence (JPEG frames + boxes) loaded and
//! checked, then prepared for one host ([`PreparedNeedle`]): how many host frames it takes
//! (`K = round(n * fps / anno_fps)`), which sequence frame each shows, where it is placed on
//! the host's frame, and its boxes. The insert stage ([`super::insert`]) splices it in.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::annotations::{self, ConstantRateClock, Fill};
use crate::error::{Error, Result};
use crate::frames::fit::Placement;
use crate::frames::overlay::{BoxesRequest, SourceBoxes};
use crate::media::still::still_size;
use crate::records::sidecar::SourceRecord;
use crate::vocab::time::{Rounding, Time};
use crate::vocab::Fit;
use crate::vocab::Ratio;

/// A checked GOT-10k sequence ready to insert.
struct Needle {
    dir: PathBuf,
    images: Vec<PathBuf>,
    size: (u32, u32),
    anno_fps: Time,
    annotations: annotations::Annotations,
}

fn load_needle(dir: &Path) -> Result<Needle> {
    let seq = annotations::open_sequence(dir)?;
    let first = still_size(&seq.images[0])?;
    for image in &seq.images[1..] {
        let size = still_size(image)?;
        if size != first {
            return Err(Error::request(
                image,
                format!(
                    "is {}x{} but the sequence's first frame {} is {}x{}; a sequence's frames must all have one size",
                    size.0,
                    size.1,
                    seq.images[0].display(),
                    first.0,
                    first.1
                ),
            ));
        }
    }
    let anno_fps = seq
        .annotations
        .meta
        .fps
        .filter(|f| *f > Time::ZERO)
        .unwrap_or(Time::from_secs(annotations::got10k::DEFAULT_ANNO_FPS));
    Ok(Needle {
        dir: dir.to_path_buf(),
        images: seq.images,
        size: first,
        anno_fps,
        annotations: seq.annotations,
    })
}

/// A sequence prepared for insertion into one host: its frames' placement, timing and boxes.
pub struct PreparedNeedle {
    pub dir: PathBuf,
    pub images: Vec<PathBuf>,
    pub size: (u32, u32),
    pub anno_fps: Time,
    /// Number of output frames the needle takes.
    pub frames: usize,
    /// Sequence frame shown by each needle frame.
    pub map: Vec<usize>,
    /// Output frame duration (one host frame).
    pub step: Time,
    /// The needle's duration (`frames * step`).
    pub duration: Time,
    pub placement: Placement,
    /// The sequence's boxes on its own frames (drawn when asked).
    pub boxes: Arc<SourceBoxes>,
    pub object: Option<String>,
}

impl PreparedNeedle {
    /// Checks and prepares `sequence` for a host of `host_size` at `host_fps`.
    pub fn new(
        sequence: &Path,
        host_size: (u32, u32),
        host_pixel_aspect: f64,
        host_fps: Time,
        fit: Fit,
    ) -> Result<PreparedNeedle> {
        let needle = load_needle(sequence)?;
        let n = needle.images.len();
        // K = round(n * host_fps / anno_fps), at least one frame.
        let frames = (Time::from_secs(n as i64) * host_fps)
            .scale(needle.anno_fps.denom(), needle.anno_fps.numer())
            .to_pts(1, 1, Rounding::Nearest)
            .max(1) as usize;
        let map: Vec<usize> = (0..frames)
            .map(|k| {
                let s = (Time::from_secs(k as i64) * needle.anno_fps / host_fps)
                    .div_floor(Time::from_secs(1));
                (s.max(0) as usize).min(n - 1)
            })
            .collect();
        let step = Time::from_secs(1) / host_fps;
        let placement = Placement::on_pixels(needle.size, host_size, fit, host_pixel_aspect);
        let clock = ConstantRateClock::new(n, needle.anno_fps, needle.size.0, needle.size.1)?;
        let mut request = BoxesRequest::new(needle.dir.clone());
        request.format = annotations::Format::Got10k;
        request.fill = Fill::None;
        let resolved = needle.annotations.resolve(&clock, Fill::None)?;
        let object = needle
            .annotations
            .tracks
            .first()
            .and_then(|t| t.label.clone());
        let boxes = Arc::new(SourceBoxes {
            request,
            annotations: needle.annotations,
            resolved,
            warnings: Vec::new(),
            tracked: Vec::new(),
        });
        Ok(PreparedNeedle {
            dir: needle.dir,
            images: needle.images,
            size: needle.size,
            anno_fps: needle.anno_fps,
            frames,
            map,
            step,
            duration: step * frames as i64,
            placement,
            boxes,
            object,
        })
    }

    /// The time base of the sequence's own frames (`1 / anno_fps`).
    pub fn time_base(&self) -> Ratio {
        Ratio::new(self.anno_fps.denom() as i32, self.anno_fps.numer() as i32)
    }

    /// The sequence as a source record for sidecars.
    pub fn record(&self) -> SourceRecord {
        SourceRecord {
            path: self.dir.display().to_string(),
            size_bytes: self
                .images
                .iter()
                .filter_map(|p| std::fs::metadata(p).ok())
                .map(|m| m.len())
                .sum(),
            frames: self.images.len(),
            width: self.size.0,
            height: self.size.1,
            rotation_cw: 0,
            time_base: self.time_base(),
            avg_frame_rate: Ratio::new(self.anno_fps.numer() as i32, self.anno_fps.denom() as i32),
            duration_s: (Time::from_secs(self.images.len() as i64) / self.anno_fps).as_secs_f64(),
            time_origin: "0".into(),
            first_frame_time: "0".into(),
            frame_times_from: crate::media::table::TimesFrom::Packets,
            damage: Default::default(),
            // The sequence's naming, when its folder reads as the same image sequence.
            images: crate::media::images::ImageSequence::resolve(&self.dir, None)
                .ok()
                .filter(|s| s.count == self.images.len())
                .map(|s| s.record()),
        }
    }
}
