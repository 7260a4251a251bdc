//! The memory form of a frames export ([`MemoryFrames`]): the images of a
//! [`Destination::Memory`](crate::Destination::Memory) run packed as one RGB array, with what
//! `frames.json` would hold (what the Python package hands back as a NumPy array).

use std::path::Path;

use crate::error::{Error, Result};
use crate::records::frames_json::FramesJson;

/// The frames of one `frames` export run with [`Destination::Memory`](crate::Destination::Memory).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct MemoryFrames {
    /// The export's name.
    pub name: String,
    /// What `frames.json` would hold (each image's `file` is the name it would have in the
    /// export's folder).
    pub frames_json: FramesJson,
    /// The number of images (positions, in the asked order; a frame shown twice is there
    /// twice).
    pub count: usize,
    /// Width of every image in pixels.
    pub width: u32,
    /// Height of every image in pixels.
    pub height: u32,
    /// The images, packed 8-bit RGB, row by row, one after the other: `count * height *
    /// width * 3` bytes (a `(count, height, width, 3)` array). The same pixels the image
    /// files would be encoded from: the decoded frame, scaled to `max_size` when asked,
    /// boxes drawn, converted to RGB with swscale's bicubic flags (as the ffmpeg CLI).
    pub pixels: Vec<u8>,
}

impl MemoryFrames {
    pub(crate) fn new(
        name: &str,
        frames_json: FramesJson,
        images: Vec<Option<image::RgbImage>>,
        source: &Path,
    ) -> Result<MemoryFrames> {
        let count = images.len();
        let (width, height) = images
            .iter()
            .flatten()
            .next()
            .map_or((0, 0), |i| (i.width(), i.height()));
        // An allocation the system refuses is an error, not an abort.
        let needed = count * width as usize * height as usize * 3;
        let mut pixels = Vec::new();
        pixels
            .try_reserve_exact(needed)
            .map_err(|_| Error::OverBudget {
                path: source.to_path_buf(),
                what: format!("export {name:?}: {count} frames of {width}x{height} RGB"),
                needed: needed as u64,
                pixels: false,
                limit: needed as u64,
                advice: "the system refused to allocate it (less memory is free than that); ask for fewer or smaller frames"
                    .into(),
            })?;
        for (p, image) in images.into_iter().enumerate() {
            let image = image.ok_or_else(|| {
                Error::corrupt(
                    source,
                    format!("at output position {p}"),
                    "this frame was not decoded",
                )
            })?;
            if (image.width(), image.height()) != (width, height) {
                return Err(Error::internal(format!(
                    "frames of export {name:?} differ in size: {}x{} at position {p}, \
                     {width}x{height} before",
                    image.width(),
                    image.height()
                )));
            }
            pixels.extend_from_slice(image.as_raw());
        }
        Ok(MemoryFrames {
            name: name.to_string(),
            frames_json,
            count,
            width,
            height,
            pixels,
        })
    }
}
