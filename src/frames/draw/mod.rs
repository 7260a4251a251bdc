//! Drawing on YUV 4:2:0 pictures in place: filled and outlined rectangles and anti-aliased text
//! (DejaVu Sans Bold, embedded), in colours converted from RGB with the picture's own matrix.
//! Drawing straight on the planes avoids converting every frame to RGB and back.

use std::collections::HashMap;

use crate::error::FfmpegError;
use crate::media::{Picture, TaggedMatrix};
use crate::vocab::Rgb;
use ab_glyph::{Font, FontRef, PxScale, ScaleFont};

pub mod numpro;

/// The embedded label font (licence in `src/frames/draw/DejaVu-LICENSE.txt`).
const FONT_BYTES: &[u8] = include_bytes!("DejaVuSans-Bold.ttf");

/// The embedded label font, for callers that draw text themselves (e.g. on RGB images).
pub fn font() -> FontRef<'static> {
    FontRef::try_from_slice(FONT_BYTES).expect("embedded font parses")
}

/// High-contrast colours for tracks, in order (track `i` gets `PALETTE[i % len]`); chosen to
/// stay distinct from each other and from typical scene colours.
pub const PALETTE: [Rgb; 12] = [
    Rgb(230, 25, 75),   // red
    Rgb(60, 180, 75),   // green
    Rgb(255, 225, 25),  // yellow
    Rgb(0, 130, 200),   // blue
    Rgb(245, 130, 48),  // orange
    Rgb(145, 30, 180),  // purple
    Rgb(70, 240, 240),  // cyan
    Rgb(240, 50, 230),  // magenta
    Rgb(210, 245, 60),  // lime
    Rgb(250, 190, 212), // pink
    Rgb(0, 128, 128),   // teal
    Rgb(255, 255, 255), // white
];

/// The RGB -> YUV matrix of a picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matrix {
    /// ITU-R BT.601 (standard definition; also BT.470BG and SMPTE 170M).
    Bt601,
    /// ITU-R BT.709 (HD).
    Bt709,
}

impl Matrix {
    /// The picture's own matrix; when it does not say, BT.709 from 720 lines up, else BT.601
    /// (what players assume).
    pub fn of(frame: &Picture) -> Matrix {
        match frame.tagged_matrix() {
            TaggedMatrix::Bt709 => Matrix::Bt709,
            TaggedMatrix::Bt601 => Matrix::Bt601,
            _ if frame.height() >= 720 || frame.width() >= 1280 => Matrix::Bt709,
            _ => Matrix::Bt601,
        }
    }
}

/// A colour as limited-range 8-bit Y, Cb, Cr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Yuv {
    /// Luma, 16..=235 for colours in gamut.
    pub y: u8,
    /// Blue-difference chroma (Cb), 16..=240, 128 for grey.
    pub u: u8,
    /// Red-difference chroma (Cr), 16..=240, 128 for grey.
    pub v: u8,
}

/// Converts an sRGB colour to limited-range YCbCr with `matrix`.
pub fn rgb_to_yuv(c: Rgb, matrix: Matrix) -> Yuv {
    let (kr, kb) = match matrix {
        Matrix::Bt601 => (0.299, 0.114),
        Matrix::Bt709 => (0.2126, 0.0722),
    };
    let (r, g, b) = (c.0 as f64 / 255.0, c.1 as f64 / 255.0, c.2 as f64 / 255.0);
    let y = kr * r + (1.0 - kr - kb) * g + kb * b;
    let cb = (b - y) / (2.0 * (1.0 - kb));
    let cr = (r - y) / (2.0 * (1.0 - kr));
    let clamp = |v: f64| v.round().clamp(0.0, 255.0) as u8;
    Yuv {
        y: clamp(16.0 + 219.0 * y),
        u: clamp(128.0 + 224.0 * cb),
        v: clamp(128.0 + 224.0 * cr),
    }
}

/// Makes a picture's buffers writable (copying them when shared, e.g. with the decoder).
pub fn make_writable(frame: &mut Picture) -> Result<(), FfmpegError> {
    frame.make_writable()
}

/// An anti-aliased coverage mask (0..=255 per pixel), e.g. a rendered label.
#[derive(Clone, Debug, PartialEq)]
pub struct Mask {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// `width * height` coverage values, row by row from the top left: 0 leaves the
    /// picture as it is, 255 paints the colour fully.
    pub coverage: Vec<u8>,
}

/// Renders text into coverage masks with the embedded font, caching by (text, size).
pub struct TextRenderer {
    font: FontRef<'static>,
    cache: HashMap<(String, u32), Mask>,
}

impl Default for TextRenderer {
    fn default() -> Self {
        TextRenderer::new()
    }
}

impl TextRenderer {
    /// A renderer with the embedded font and an empty cache.
    pub fn new() -> TextRenderer {
        TextRenderer {
            font: FontRef::try_from_slice(FONT_BYTES).expect("embedded font parses"),
            cache: HashMap::new(),
        }
    }

    /// `text` rendered `px` pixels tall (ascent to descent).
    pub fn render(&mut self, text: &str, px: u32) -> &Mask {
        let key = (text.to_string(), px);
        if !self.cache.contains_key(&key) {
            let mask = self.rasterize(text, px);
            self.cache.insert(key.clone(), mask);
        }
        &self.cache[&key]
    }

    fn rasterize(&self, text: &str, px: u32) -> Mask {
        let scale = PxScale::from(px as f32);
        let font = self.font.as_scaled(scale);
        let ascent = font.ascent();
        let height = (font.ascent() - font.descent()).ceil().max(1.0) as usize;
        let mut x = 0.0f32;
        let mut glyphs = Vec::new();
        let mut previous = None;
        for ch in text.chars() {
            let id = font.glyph_id(ch);
            if let Some(p) = previous {
                x += font.kern(p, id);
            }
            glyphs.push(id.with_scale_and_position(scale, ab_glyph::point(x, ascent)));
            x += font.h_advance(id);
            previous = Some(id);
        }
        let width = x.ceil().max(1.0) as usize;
        let mut coverage = vec![0u8; width * height];
        for g in glyphs {
            if let Some(outline) = self.font.outline_glyph(g) {
                let bounds = outline.px_bounds();
                outline.draw(|gx, gy, c| {
                    let px = bounds.min.x as i64 + gx as i64;
                    let py = bounds.min.y as i64 + gy as i64;
                    if px >= 0 && py >= 0 && (px as usize) < width && (py as usize) < height {
                        let cell = &mut coverage[py as usize * width + px as usize];
                        *cell = (*cell).max((c * 255.0).round().clamp(0.0, 255.0) as u8);
                    }
                });
            }
        }
        Mask {
            width,
            height,
            coverage,
        }
    }
}

/// A writable YUV 4:2:0 picture to draw on. Coordinates are luma pixels; rectangles are
/// half-open `[x0, x1) x [y0, y1)` and are clipped to the picture.
pub struct Canvas<'a> {
    frame: &'a mut Picture,
    width: i64,
    height: i64,
}

impl<'a> Canvas<'a> {
    /// The caller must have made the frame writable ([`make_writable`]).
    pub fn new(frame: &'a mut Picture) -> Canvas<'a> {
        let (width, height) = (frame.width() as i64, frame.height() as i64);
        Canvas {
            frame,
            width,
            height,
        }
    }

    /// Fills a rectangle. Chroma samples touched by the rectangle take the colour.
    pub fn fill_rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, color: Yuv) {
        let (x0, x1) = (x0.clamp(0, self.width), x1.clamp(0, self.width));
        let (y0, y1) = (y0.clamp(0, self.height), y1.clamp(0, self.height));
        if x1 <= x0 || y1 <= y0 {
            return;
        }
        let stride = self.frame.stride(0);
        let luma = self.frame.data_mut(0);
        for y in y0..y1 {
            let row = y as usize * stride;
            luma[row + x0 as usize..row + x1 as usize].fill(color.y);
        }
        let (cx0, cx1, cy0, cy1) = (x0 / 2, (x1 + 1) / 2, y0 / 2, (y1 + 1) / 2);
        for (plane, value) in [(1, color.u), (2, color.v)] {
            let stride = self.frame.stride(plane);
            let data = self.frame.data_mut(plane);
            for y in cy0..cy1 {
                let row = y as usize * stride;
                data[row + cx0 as usize..row + cx1 as usize].fill(value);
            }
        }
    }

    /// Draws the outline of `[x0, x1) x [y0, y1)` with lines `thickness` pixels wide, inside
    /// the rectangle (as ffmpeg's drawbox does), so a box clamped to the frame stays visible.
    pub fn stroke_rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, thickness: i64, color: Yuv) {
        let t = thickness.max(1).min((x1 - x0).max(1)).min((y1 - y0).max(1));
        self.fill_rect(x0, y0, x1, y0 + t, color);
        self.fill_rect(x0, y1 - t, x1, y1, color);
        self.fill_rect(x0, y0 + t, x0 + t, y1 - t, color);
        self.fill_rect(x1 - t, y0 + t, x1, y1 - t, color);
    }

    /// Blends `color` into the picture through `mask` placed with its top-left at `(x, y)`.
    pub fn blend_mask(&mut self, x: i64, y: i64, mask: &Mask, color: Yuv) {
        let stride = self.frame.stride(0);
        let luma = self.frame.data_mut(0);
        let blend = |dst: u8, src: u8, a: u32| {
            ((dst as u32 * (255 - a) + src as u32 * a + 127) / 255) as u8
        };
        for my in 0..mask.height {
            let py = y + my as i64;
            if py < 0 || py >= self.height {
                continue;
            }
            for mx in 0..mask.width {
                let px = x + mx as i64;
                let a = mask.coverage[my * mask.width + mx] as u32;
                if a == 0 || px < 0 || px >= self.width {
                    continue;
                }
                let i = py as usize * stride + px as usize;
                luma[i] = blend(luma[i], color.y, a);
            }
        }
        // Chroma: average coverage over each 2x2 block.
        for plane in [1usize, 2] {
            let value = if plane == 1 { color.u } else { color.v };
            let stride = self.frame.stride(plane);
            let data = self.frame.data_mut(plane);
            let (cw, ch) = ((self.width + 1) / 2, (self.height + 1) / 2);
            let (cx0, cy0) = (x.div_euclid(2), y.div_euclid(2));
            let (cx1, cy1) = (
                (x + mask.width as i64 + 1).div_euclid(2),
                (y + mask.height as i64 + 1).div_euclid(2),
            );
            for cy in cy0.max(0)..cy1.min(ch) {
                for cx in cx0.max(0)..cx1.min(cw) {
                    let mut sum = 0u32;
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        let mx = cx * 2 + dx - x;
                        let my = cy * 2 + dy - y;
                        if mx >= 0
                            && my >= 0
                            && (mx as usize) < mask.width
                            && (my as usize) < mask.height
                        {
                            sum += mask.coverage[my as usize * mask.width + mx as usize] as u32;
                        }
                    }
                    let a = sum / 4;
                    if a > 0 {
                        let i = cy as usize * stride + cx as usize;
                        data[i] = blend(data[i], value, a);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::PixelFormat;

    fn gray(w: u32, h: u32) -> Picture {
        let mut f = Picture::new(PixelFormat::PIPELINE, w, h).unwrap();
        for plane in 0..3 {
            let v = if plane == 0 { 100 } else { 128 };
            f.data_mut(plane).fill(v);
        }
        f
    }

    fn at(f: &Picture, plane: usize, x: usize, y: usize) -> u8 {
        f.data(plane)[y * f.stride(plane) + x]
    }

    #[test]
    fn colours_convert_like_the_standard_matrices() {
        assert_eq!(
            rgb_to_yuv(Rgb(255, 255, 255), Matrix::Bt601),
            Yuv {
                y: 235,
                u: 128,
                v: 128
            }
        );
        assert_eq!(
            rgb_to_yuv(Rgb(0, 0, 0), Matrix::Bt709),
            Yuv {
                y: 16,
                u: 128,
                v: 128
            }
        );
        // Pure red, BT.601: Y 81, Cb 90, Cr 240.
        assert_eq!(
            rgb_to_yuv(Rgb(255, 0, 0), Matrix::Bt601),
            Yuv {
                y: 81,
                u: 90,
                v: 240
            }
        );
        // Pure red, BT.709: Y 63, Cb 102, Cr 240.
        assert_eq!(
            rgb_to_yuv(Rgb(255, 0, 0), Matrix::Bt709),
            Yuv {
                y: 63,
                u: 102,
                v: 240
            }
        );
        assert_eq!(Rgb::parse("#ff8800"), Ok(Rgb(255, 136, 0)));
        assert!(Rgb::parse("nope").unwrap_err().contains("RRGGBB"));
    }

    #[test]
    fn outlines_stay_inside_the_rectangle_and_clip_to_the_frame() {
        let mut f = gray(64, 48);
        let c = Yuv {
            y: 200,
            u: 50,
            v: 60,
        };
        Canvas::new(&mut f).stroke_rect(10, 8, 30, 28, 2, c);
        assert_eq!(at(&f, 0, 10, 8), 200);
        assert_eq!(at(&f, 0, 29, 27), 200);
        assert_eq!(at(&f, 0, 11, 20), 200);
        assert_eq!(at(&f, 0, 12, 20), 100, "inside the border");
        assert_eq!(at(&f, 0, 30, 20), 100, "right of the box");
        assert_eq!(at(&f, 0, 9, 20), 100, "left of the box");
        assert_eq!(at(&f, 1, 5, 10), 50);
        assert_eq!(at(&f, 2, 14, 10), 60);
        assert_eq!(at(&f, 1, 10, 10), 128, "chroma inside the box untouched");
        // Outside the frame: clipped away, no panic; clamped to the frame: drawn at its edges.
        Canvas::new(&mut f).stroke_rect(-20, -20, 100, 100, 3, c);
        assert_eq!(at(&f, 0, 63, 47), 100);
        Canvas::new(&mut f).stroke_rect(0, 0, 64, 48, 3, c);
        assert_eq!(at(&f, 0, 63, 47), 200);
        assert_eq!(at(&f, 0, 0, 0), 200);
    }

    #[test]
    fn text_renders_and_blends() {
        let mut r = TextRenderer::new();
        let m = r.render("car 7", 16).clone();
        assert!(m.width > 20 && m.height >= 16);
        assert!(m.coverage.contains(&255));
        let mut f = gray(64, 48);
        Canvas::new(&mut f).blend_mask(
            2,
            2,
            &m,
            Yuv {
                y: 16,
                u: 128,
                v: 128,
            },
        );
        let dark = (0..48)
            .flat_map(|y| (0..64).map(move |x| (x, y)))
            .filter(|&(x, y)| at(&f, 0, x, y) < 30)
            .count();
        assert!(dark > 30, "text darkened {dark} pixels");
        // Cached: the same mask comes back.
        assert_eq!(r.render("car 7", 16), &m);
    }
}
