//! Frame numbers (or times) drawn as NumPro does for temporal grounding ("Number it: Temporal
//! Grounding Videos like Flipping Manga", CVPR 2025; github.com/yongliang-wu/NumPro,
//! `eval/qwen2_vl_7b_mr.py`, `annotate_frame_with_pil` with that script's defaults): DejaVu
//! Sans Bold at a 40-pixel em (`ImageFont.truetype(..., 40)`), pure red (PIL's `"red"`), no
//! background, in the bottom-right corner with no margin: with the text's ink box
//! `(l, t, r, b)` as PIL's `textbbox((0, 0))` gives it and `tw = r - l`, `th = b - t`, the text
//! is drawn at `x = W - tw`, `y = H - th - th / 3` (its ascender line), so its ink ends `l`
//! pixels past the right edge (clipped, as PIL clips) and `th / 3 - t` above the bottom. Drawn
//! on the frame at its decoded size, before any resize (NumPro numbers the source video's
//! frames, then the model's preprocessing resizes them).

use ab_glyph::{Font, PxScale, ScaleFont};

use super::{rgb_to_yuv, Canvas, Mask, Matrix};
use crate::media::Picture;
use crate::vocab::Rgb;

/// NumPro's font size: the em, in pixels.
pub const EM_PX: f32 = 40.0;
/// NumPro's colour (PIL's `"red"`).
pub const COLOUR: Rgb = Rgb(255, 0, 0);

/// Where a label's ink went: `[x0, y0, x1, y1)` in the frame's pixels, clipped to it.
pub type InkBox = [i64; 4];

/// Draws `text` on `frame` (writable YUV 4:2:0) by NumPro's rule; returns its ink box (`None`
/// when nothing of it lands on the frame).
pub fn draw(frame: &mut Picture, text: &str) -> Option<InkBox> {
    let (w, h) = (frame.width() as i64, frame.height() as i64);
    let font = super::font();
    let upem = font.units_per_em().unwrap_or(2048.0);
    let scale = PxScale::from(EM_PX * font.height_unscaled() / upem);
    let scaled = font.as_scaled(scale);
    let ascent = scaled.ascent();
    // The glyphs laid out with their ascender line at y = 0 (PIL's default anchor "la").
    let layout = |x0: f32, y0: f32| {
        let mut pen = x0;
        let mut previous = None;
        let mut glyphs = Vec::new();
        for ch in text.chars() {
            let id = scaled.glyph_id(ch);
            if let Some(p) = previous {
                pen += scaled.kern(p, id);
            }
            glyphs.push(id.with_scale_and_position(scale, ab_glyph::point(pen, y0 + ascent)));
            pen += scaled.h_advance(id);
            previous = Some(id);
        }
        glyphs
    };
    let outlines = |x0: f32, y0: f32| {
        layout(x0, y0)
            .into_iter()
            .filter_map(|g| font.outline_glyph(g))
            .collect::<Vec<_>>()
    };
    // textbbox((0, 0)): the ink's whole-pixel box.
    let ink = outlines(0.0, 0.0);
    let (mut l, mut t, mut r, mut b) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
    for o in &ink {
        let p = o.px_bounds();
        (l, t, r, b) = (
            l.min(p.min.x),
            t.min(p.min.y),
            r.max(p.max.x),
            b.max(p.max.y),
        );
    }
    if ink.is_empty() {
        return None;
    }
    let (l, t, r, b) = (l.floor(), t.floor(), r.ceil(), b.ceil());
    let (tw, th) = (r - l, b - t);
    let x = w as f32 - tw;
    let y = h as f32 - th - th / 3.0;
    // Rasterise at that place into a mask over the ink's pixels.
    let placed = outlines(x, y);
    let (mx0, my0) = ((x + l).floor() as i64 - 1, (y + t).floor() as i64 - 1);
    let (mw, mh) = ((tw + 3.0) as usize, (th + 3.0) as usize);
    let mut coverage = vec![0u8; mw * mh];
    for o in &placed {
        let bounds = o.px_bounds();
        o.draw(|gx, gy, c| {
            let px = bounds.min.x as i64 + gx as i64 - mx0;
            let py = bounds.min.y as i64 + gy as i64 - my0;
            if px >= 0 && py >= 0 && (px as usize) < mw && (py as usize) < mh {
                let cell = &mut coverage[py as usize * mw + px as usize];
                *cell = (*cell).max((c * 255.0).round().clamp(0.0, 255.0) as u8);
            }
        });
    }
    // The ink box actually painted, clipped to the frame.
    let (mut bx0, mut by0, mut bx1, mut by1) = (i64::MAX, i64::MAX, i64::MIN, i64::MIN);
    for yy in 0..mh {
        for xx in 0..mw {
            if coverage[yy * mw + xx] > 0 {
                let (px, py) = (mx0 + xx as i64, my0 + yy as i64);
                if px >= 0 && py >= 0 && px < w && py < h {
                    (bx0, by0) = (bx0.min(px), by0.min(py));
                    (bx1, by1) = (bx1.max(px + 1), by1.max(py + 1));
                }
            }
        }
    }
    if bx0 == i64::MAX {
        return None;
    }
    let mask = Mask {
        width: mw,
        height: mh,
        coverage,
    };
    let colour = rgb_to_yuv(COLOUR, Matrix::of(frame));
    Canvas::new(frame).blend_mask(mx0, my0, &mask, colour);
    Some([bx0, by0, bx1, by1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::PixelFormat;

    #[test]
    fn the_number_sits_in_the_bottom_right_corner() {
        let mut f = Picture::new(PixelFormat::PIPELINE, 320, 240).unwrap();
        for plane in 0..3 {
            f.data_mut(plane).fill(if plane == 0 { 100 } else { 128 });
        }
        let [x0, y0, x1, y1] = draw(&mut f, "17").unwrap();
        // About 40 px glyphs: digits ~29 px tall, two of them ~45 px wide, flush right.
        assert!((26..=32).contains(&(y1 - y0)), "{y0}..{y1}");
        assert!((40..=52).contains(&(x1 - x0)), "{x0}..{x1}");
        assert!(x1 >= 318, "right edge {x1}");
        assert!(
            (228..=236).contains(&y1),
            "bottom {y1}: th/3 above the edge"
        );
        // Red raised V (Cr) where the ink is.
        let v = f.data(2);
        let stride = f.stride(2);
        let touched = (0..120)
            .flat_map(|y| (0..160).map(move |x| (x, y)))
            .filter(|&(x, y)| v[y * stride + x] > 140)
            .count();
        assert!(touched > 50, "{touched}");
    }
}
