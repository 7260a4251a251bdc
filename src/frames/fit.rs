//! Fitting one picture into another's frame: letterbox (scale to fit, pad with black),
//! stretch (scale to the frame, aspect ratio lost) or crop (scale to cover, cut the overflow),
//! as a [`Placement`] that both the pixels and the boxes go through.

use serde::Serialize;

use crate::error::FfmpegError;
use crate::frames::pipeline::Geometry;
use crate::media::frame::yuv420_plane_sizes;
use crate::media::{Converter, Picture, PixelFormat, Scaling};
use crate::vocab::Fit;

/// Where a `src` picture goes in a `frame`: scaled to `scaled`, its top-left at `offset` in the
/// frame (negative when cropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Placement {
    pub src: (u32, u32),
    pub frame: (u32, u32),
    pub scaled: (u32, u32),
    pub offset: (i64, i64),
    pub fit: Fit,
}

/// Rounds to the nearest even number, at least 2.
fn even(v: f64) -> u32 {
    ((v / 2.0).round() as u32 * 2).max(2)
}

impl Placement {
    /// The placement of a `src` picture in a `frame` under `fit`. Scaled sizes and offsets are
    /// even where the frame allows, so chroma samples line up.
    #[cfg(test)]
    pub fn new(src: (u32, u32), frame: (u32, u32), fit: Fit) -> Placement {
        Placement::on_pixels(src, frame, fit, 1.0)
    }

    /// [`new`](Self::new) for a frame whose pixels are shown `pixel_aspect` times as wide as
    /// tall (a 720x480 DVD frame at 8:9: 0.889), the `src` picture's pixels square: the
    /// aspect ratio kept is the one shown, so a square picture still looks square in a
    /// player (its stored width is divided by `pixel_aspect`).
    pub fn on_pixels(src: (u32, u32), frame: (u32, u32), fit: Fit, pixel_aspect: f64) -> Placement {
        let aspect = if pixel_aspect.is_finite() && pixel_aspect > 0.0 {
            pixel_aspect
        } else {
            1.0
        };
        // In shown units: the source's width as shown, the frame's width as shown.
        let (sw, sh) = (src.0.max(1) as f64, src.1.max(1) as f64);
        let (fw, fh) = (frame.0 as f64 * aspect, frame.1 as f64);
        let scaled = match fit {
            Fit::Stretch => frame,
            Fit::Letterbox => {
                let s = (fw / sw).min(fh / sh);
                (
                    even(sw * s / aspect).min(frame.0.max(2)),
                    even(sh * s).min(frame.1.max(2)),
                )
            }
            Fit::Crop => {
                let s = (fw / sw).max(fh / sh);
                (
                    even(sw * s / aspect).max(frame.0),
                    even(sh * s).max(frame.1),
                )
            }
        };
        let centre = |f: u32, s: u32| -> i64 {
            let half = (f as i64 - s as i64) / 2;
            // Even offsets (towards zero) keep chroma aligned.
            half.signum() * (half.abs() & !1)
        };
        Placement {
            src,
            frame,
            scaled,
            offset: (centre(frame.0, scaled.0), centre(frame.1, scaled.1)),
            fit,
        }
    }

    /// How source pixels map into the frame (for boxes).
    pub fn geometry(&self) -> Geometry {
        Geometry {
            scale_x: self.scaled.0 as f64 / self.src.0.max(1) as f64,
            scale_y: self.scaled.1 as f64 / self.src.1.max(1) as f64,
            offset_x: self.offset.0 as f64,
            offset_y: self.offset.1 as f64,
        }
    }
}

/// Scales pictures and composes them into frames as a [`Placement`] says.
pub struct Placer {
    placement: Placement,
    scaler: Converter,
}

impl Placer {
    pub fn new(placement: Placement) -> Placer {
        // Bicubic: the ffmpeg CLI's default for its scale filter.
        let scaler = Converter::new(
            PixelFormat::PIPELINE,
            Some(placement.scaled),
            Scaling::BICUBIC,
        );
        Placer { placement, scaler }
    }

    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    /// `src` (any pixel format, size `placement.src`) scaled and placed in a black YUV 4:2:0
    /// frame of size `placement.frame`.
    pub fn place(&mut self, src: &Picture) -> Result<Picture, FfmpegError> {
        let scaled = self.scaler.convert(src)?;
        let (fw, fh) = self.placement.frame;
        let mut out = Picture::new(PixelFormat::YUV420P, fw, fh)?;
        out.copy_colour_description_from(&scaled);
        let (ox, oy) = self.placement.offset;
        for (plane, &(pw, ph)) in yuv420_plane_sizes(fw, fh).iter().enumerate() {
            let black = if plane == 0 { 16 } else { 128 };
            let (sw, sh) = yuv420_plane_sizes(scaled.width(), scaled.height())[plane];
            let (px, py) = if plane == 0 {
                (ox, oy)
            } else {
                (ox / 2, oy / 2)
            };
            let (ss, ds) = (scaled.stride(plane), out.stride(plane));
            let src_data = scaled.data(plane);
            let dst = out.data_mut(plane);
            for y in 0..ph {
                let row = &mut dst[y * ds..y * ds + pw];
                let sy = y as i64 - py;
                if sy < 0 || sy >= sh as i64 {
                    row.fill(black);
                    continue;
                }
                let srow = &src_data[sy as usize * ss..sy as usize * ss + sw];
                for (x, cell) in row.iter_mut().enumerate() {
                    let sx = x as i64 - px;
                    *cell = if sx >= 0 && (sx as usize) < sw {
                        srow[sx as usize]
                    } else {
                        black
                    };
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotations::BBox;
    use proptest::prelude::*;

    #[test]
    fn letterbox_centres_and_keeps_aspect() {
        // 480x360 (4:3) into 640x360: full height, pillarboxed.
        let p = Placement::new((480, 360), (640, 360), Fit::Letterbox);
        assert_eq!(p.scaled, (480, 360));
        assert_eq!(p.offset, (80, 0));
        // 360x240 (3:2) into 768x576 (4:3): full width, letterboxed top and bottom.
        let p = Placement::new((360, 240), (768, 576), Fit::Letterbox);
        assert_eq!(p.scaled, (768, 512));
        assert_eq!(p.offset, (0, 32));
        let g = p.geometry();
        let b = g.apply(&BBox {
            x1: 0.0,
            y1: 0.0,
            x2: 360.0,
            y2: 240.0,
        });
        assert_eq!(
            b,
            BBox {
                x1: 0.0,
                y1: 32.0,
                x2: 768.0,
                y2: 544.0
            }
        );
    }

    #[test]
    fn non_square_frame_pixels_keep_the_shown_aspect() {
        // A square picture in a 720x480 frame of 8:9 pixels (shown 640x480): 480 shown pixels
        // wide are 540 stored ones, centred.
        let p = Placement::on_pixels((100, 100), (720, 480), Fit::Letterbox, 8.0 / 9.0);
        assert_eq!(p.scaled, (540, 480));
        assert_eq!(p.offset, (90, 0));
        // Crop covers the shown frame; stretch ignores the shape; square pixels as `new`.
        let c = Placement::on_pixels((100, 50), (720, 480), Fit::Crop, 8.0 / 9.0);
        assert_eq!(c.scaled, (1080, 480));
        assert_eq!(
            Placement::on_pixels((100, 50), (720, 480), Fit::Stretch, 8.0 / 9.0).scaled,
            (720, 480)
        );
        assert_eq!(
            Placement::on_pixels((320, 240), (720, 480), Fit::Letterbox, 1.0),
            Placement::new((320, 240), (720, 480), Fit::Letterbox)
        );
    }

    #[test]
    fn stretch_and_crop() {
        let p = Placement::new((360, 240), (640, 360), Fit::Stretch);
        assert_eq!((p.scaled, p.offset), ((640, 360), (0, 0)));
        // Crop: 360x240 (3:2) to cover 640x360 (16:9): 640x426.7 -> 640x426, 33 rows over the top -> 32.
        let p = Placement::new((360, 240), (640, 360), Fit::Crop);
        assert_eq!(p.scaled, (640, 426));
        assert_eq!(p.offset, (0, -32));
    }

    proptest! {
        #[test]
        fn letterbox_fits_inside_and_keeps_aspect(sw in 16u32..4000, sh in 16u32..4000, fw in 16u32..4000, fh in 16u32..4000) {
            let p = Placement::new((sw, sh), (fw, fh), Fit::Letterbox);
            prop_assert!(p.scaled.0 <= fw.max(2) && p.scaled.1 <= fh.max(2));
            prop_assert!(p.offset.0 >= 0 && p.offset.1 >= 0);
            prop_assert!(p.offset.0 + p.scaled.0 as i64 <= fw as i64 && p.offset.1 + p.scaled.1 as i64 <= fh as i64);
            // one side fills the frame (up to rounding to even)
            prop_assert!(fw - p.scaled.0 <= 2 || fh - p.scaled.1 <= 2);
            // aspect ratio kept within the rounding of one or two pixels (when neither side
            // shrinks below the 2-pixel minimum, which no aspect survives)
            let s = (fw as f64 / sw as f64).min(fh as f64 / sh as f64);
            prop_assume!(sw as f64 * s >= 3.0 && sh as f64 * s >= 3.0);
            let a = sw as f64 / sh as f64;
            let b = p.scaled.0 as f64 / p.scaled.1 as f64;
            prop_assert!((a - b).abs() / a < 2.5 / (p.scaled.0.min(p.scaled.1) as f64) + 1e-9);
        }

        #[test]
        fn boxes_map_with_the_pixels(sw in 16u32..2000, sh in 16u32..2000, fw in 16u32..2000, fh in 16u32..2000, x in 0f64..1.0, y in 0f64..1.0) {
            for fit in [Fit::Letterbox, Fit::Stretch, Fit::Crop] {
                let p = Placement::new((sw, sh), (fw, fh), fit);
                let g = p.geometry();
                // A source point at a fraction of the picture lands at that fraction of the scaled picture.
                let b = g.apply(&BBox { x1: x * sw as f64, y1: y * sh as f64, x2: sw as f64, y2: sh as f64 });
                prop_assert!((b.x1 - (p.offset.0 as f64 + x * p.scaled.0 as f64)).abs() < 1e-6);
                prop_assert!((b.y1 - (p.offset.1 as f64 + y * p.scaled.1 as f64)).abs() < 1e-6);
                prop_assert!((b.x2 - (p.offset.0 + p.scaled.0 as i64) as f64).abs() < 1e-6);
            }
        }
    }
}

/// The size of a `width x height` picture scaled down (never up) to fit inside
/// `max_width x max_height`, keeping its aspect ratio, with even sides (rounded down, so the
/// result stays inside the box).
pub fn fit_within(width: u32, height: u32, max_width: u32, max_height: u32) -> (u32, u32) {
    let s = (max_width as f64 / width.max(1) as f64)
        .min(max_height as f64 / height.max(1) as f64)
        .min(1.0);
    let side = |v: u32, limit: u32| -> u32 {
        let scaled = if s >= 1.0 {
            v
        } else {
            (v as f64 * s).round() as u32
        };
        (scaled.min(limit) & !1).max(2)
    };
    (side(width, max_width), side(height, max_height))
}

#[cfg(test)]
mod fit_within_tests {
    use super::*;
    use crate::vocab::parse_size;
    use proptest::prelude::*;

    #[test]
    fn examples() {
        assert_eq!(fit_within(3840, 2160, 1920, 1280), (1920, 1080));
        // A portrait video is bounded by the same box.
        assert_eq!(fit_within(1080, 1920, 1920, 1280), (720, 1280));
        // Never upscale; odd sides become even.
        assert_eq!(fit_within(641, 361, 1920, 1280), (640, 360));
        assert_eq!(parse_size("1920x1280"), Ok((1920, 1280)));
        assert!(parse_size("1920").is_err() && parse_size("0x5").is_err());
    }

    proptest! {
        #[test]
        fn stays_inside_and_keeps_aspect(w in 2u32..8000, h in 2u32..8000, mw in 2u32..4000, mh in 2u32..4000) {
            let (a, b) = fit_within(w, h, mw, mh);
            prop_assert!(a <= mw.max(2) && b <= mh.max(2) && a <= w.max(2) && b <= h.max(2));
            prop_assert!(a % 2 == 0 && b % 2 == 0);
            if a > 16 && b > 16 {
                let r = (a as f64 / b as f64) / (w as f64 / h as f64);
                prop_assert!((r - 1.0).abs() < 0.15, "aspect {} vs {}", a as f64 / b as f64, w as f64 / h as f64);
            }
        }
    }
}
