//! The 8-bit fixed-point bicubic resizers, bit for bit: Pillow's `Image.resize(size,
//! Image.BICUBIC)` on an RGB image (`src/libImaging/Resample.c`: `precompute_coeffs`,
//! `normalize_coeffs_8bpc`, `ImagingResampleHorizontal_8bpc` / `ImagingResampleVertical_8bpc`,
//! `ImagingResampleInner`), and torch's uint8 antialiased bicubic on CPU, a port of
//! Pillow-SIMD's (`aten/src/ATen/native/cpu/UpSampleKernel.cpp`:
//! `_compute_index_ranges_int16_weights`, `basic_loop_aa_horizontal<uint8_t>`, and
//! `UpSampleKernelAVXAntialias.h`), which torchvision's `v2.functional.resize(uint8 tensor,
//! BICUBIC, antialias=True)` calls on CPU without going through float
//! (`_do_native_uint8_resize_on_cpu`), as transformers' video processors resize. InternVL's
//! loader resizes as Pillow does (`dynamic_preprocess`'s `image.resize(...)`, whose default
//! resample for an RGB image is BICUBIC, and torchvision's `T.Resize(..., BICUBIC)` on a PIL
//! image, which calls it).
//!
//! The arithmetic, common to both: `scale = in / out` in f64, `filterscale = max(scale, 1)`,
//! `support = 2 * filterscale`; for output `i`, `center = (i + 0.5) * scale`, `xmin =
//! max(int(center - support + 0.5), 0)`, `xmax = min(int(center + support + 0.5), in)`, weights
//! `bicubic((x + xmin - center + 0.5) / filterscale)` (Keys, `a = -0.5`, in f64) divided by
//! their sum, then fixed point: `int(±0.5 + w * 2^bits)`. Each output value is
//! `clip8((2^(bits-1) + sum(v * k)) >> bits)`, and each pass rounds to 8 bits. They differ in
//! two things:
//!
//! - `bits`: Pillow's is 22 (`PRECISION_BITS`); torch's is the largest under 22 for which
//!   `int(0.5 + max_weight * 2^(bits + 1))` stays under 2^15 (its weights are int16).
//!   (torch writes the cubic for `1 <= |x| < 2` as `((a x - 5a) x + 8a) x - 4a`, Pillow as
//!   `(((x - 5) x + 8) x - 4) a`: the int16 weights of both forms are equal on all of 486
//!   size pairs tried, 2..2000 -> 2..1000, fused or not.)
//! - the order of the passes. torch: always the width first. Pillow 12.2-12.3
//!   (`Image.resize`): the height first only for a frame more than 100 times taller than
//!   wide whose height shrinks. Pillow 13.0: the height first when the height shrinks and by
//!   more than twice what the width shrinks (`in_h - out_h > 2 * (in_w - out_w)`: every
//!   portrait frame to a square, 320x568 or 720x1280 -> 448x448; a third of random sizes).
//!   That rule was derived from the 13.0.0 wheel (13.0's source is not in the stored copy of
//!   python-pillow/Pillow, whose unmerged PR #9549 has another rule, `out_w >= in_w && out_h
//!   < in_h`, which the wheel does not follow): on 296 random size pairs 3..160, grids over
//!   60x60, 40x80 and 80x40, and 34 pairs up to 1500 near the boundary, exactly one order
//!   gives the wheel's pixels and it is the rule's (`tests/profiles/resize.rs` checks it
//!   against the installed Pillow).
//!
//! An axis whose size does not change is not touched. The width pass before a height pass
//! covers only the rows that pass reads, as Pillow's does (the values are the same).
//! Integer sums are exact, so this is the packages' result on any machine.

use image::RgbImage;

/// `PRECISION_BITS` of Pillow's 8-bit resampler (`32 - 8 - 2`).
const PRECISION_BITS: u32 = 22;

/// Which package's 8-bit bicubic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fixed8 {
    /// Pillow 13.0's `Image.resize(size, BICUBIC)`.
    #[default]
    Pillow13,
    /// Pillow 12.2-12.3's (the same weights; the width first but for very tall frames).
    Pillow12,
    /// torch's uint8 antialiased bicubic on CPU.
    TorchUint8,
}

impl Fixed8 {
    /// Whether the height is resampled first for `w0 x h0 -> w1 x h1`.
    pub fn height_first(self, w0: usize, h0: usize, w1: usize, h1: usize) -> bool {
        match self {
            Fixed8::Pillow13 => h1 < h0 && (h0 - h1) as i64 > 2 * (w0 as i64 - w1 as i64),
            Fixed8::Pillow12 => h0 > w0 * 100 && h1 < h0,
            Fixed8::TorchUint8 => false,
        }
    }
}

/// Pillow's `bicubic_filter` (`a = -0.5`), in f64 as C computes it.
fn bicubic(x: f64) -> f64 {
    let a = -0.5;
    let x = x.abs();
    if x < 1.0 {
        ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    } else if x < 2.0 {
        (((x - 5.0) * x + 8.0) * x - 4.0) * a
    } else {
        0.0
    }
}

/// One axis's taps: output `o` reads `len[o]` samples from `start[o]` with the fixed-point
/// weights `k[o * ksize..]`, of `bits` fractional bits.
#[derive(Clone, Debug, PartialEq)]
struct Coeffs {
    start: Vec<usize>,
    len: Vec<usize>,
    ksize: usize,
    k: Vec<i32>,
    bits: u32,
}

/// `precompute_coeffs(in, 0, in, out, bicubic)` then `normalize_coeffs_8bpc` (Pillow's 22
/// bits) or torch's `_compute_index_ranges_int16_weights` (its computed precision).
fn coeffs(input: usize, output: usize, kind: Fixed8) -> Coeffs {
    let scale = input as f64 / output as f64;
    let filterscale = scale.max(1.0);
    let support = 2.0 * filterscale;
    let ksize = support.ceil() as usize * 2 + 1;
    let mut start = Vec::with_capacity(output);
    let mut len = Vec::with_capacity(output);
    let mut weights = vec![0f64; output * ksize];
    let ss = 1.0 / filterscale;
    let mut max_weight = 0f64;
    for xx in 0..output {
        let center = (xx as f64 + 0.5) * scale;
        // C's `(int)` truncates toward zero.
        let xmin = ((center - support + 0.5) as i64).max(0);
        let xmax = ((center + support + 0.5) as i64).min(input as i64);
        let n = ((xmax - xmin).max(0) as usize).min(ksize);
        let w = &mut weights[xx * ksize..xx * ksize + n];
        for (x, v) in w.iter_mut().enumerate() {
            *v = bicubic((x as f64 + xmin as f64 - center + 0.5) * ss);
        }
        let ww: f64 = w.iter().fold(0.0, |s, v| s + v);
        if ww != 0.0 {
            for v in w.iter_mut() {
                *v /= ww;
                max_weight = max_weight.max(*v);
            }
        }
        start.push(xmin as usize);
        len.push(n);
    }
    let bits = match kind {
        Fixed8::Pillow13 | Fixed8::Pillow12 => PRECISION_BITS,
        // `for (weights_precision = 0; weights_precision < 22; ++weights_precision)`, broken
        // off when the largest weight would no longer fit in an int16 at one bit more.
        Fixed8::TorchUint8 => (0..22)
            .find(|&b| (0.5 + max_weight * (1u64 << (b + 1)) as f64) as i64 >= 1 << 15)
            .unwrap_or(22),
    };
    let k = weights
        .iter()
        .map(|v| {
            let scaled = v * (1u64 << bits) as f64;
            if scaled < 0.0 {
                (-0.5 + scaled) as i32
            } else {
                (0.5 + scaled) as i32
            }
        })
        .collect();
    Coeffs {
        start,
        len,
        ksize,
        k,
        bits,
    }
}

/// The fixed-point sum back to 8 bits: Pillow's `clip8`, torch's shift then saturating packs.
#[inline(always)]
fn clip8(v: i64, bits: u32) -> u8 {
    (v >> bits).clamp(0, 255) as u8
}

/// Rows `rows` of the packed RGB image `src` (`w0` wide) resampled along the width.
fn horizontal(src: &[u8], w0: usize, rows: std::ops::Range<usize>, c: &Coeffs) -> Vec<u8> {
    use rayon::prelude::*;
    let w1 = c.start.len();
    let mut out = vec![0u8; w1 * 3 * rows.len()];
    out.par_chunks_mut(w1 * 3).enumerate().for_each(|(r, out)| {
        let y = rows.start + r;
        let row = &src[y * w0 * 3..(y + 1) * w0 * 3];
        for xx in 0..w1 {
            let k = &c.k[xx * c.ksize..xx * c.ksize + c.len[xx]];
            let s = c.start[xx];
            let mut acc = [1i64 << (c.bits - 1); 3];
            for (j, &w) in k.iter().enumerate() {
                let p = (s + j) * 3;
                for ch in 0..3 {
                    acc[ch] += row[p + ch] as i64 * w as i64;
                }
            }
            for ch in 0..3 {
                out[xx * 3 + ch] = clip8(acc[ch], c.bits);
            }
        }
    });
    out
}

/// The packed RGB image `src` (`w` wide, its first row being source row `first`) resampled
/// along the height.
fn vertical(src: &[u8], w: usize, first: usize, c: &Coeffs) -> Vec<u8> {
    use rayon::prelude::*;
    let h1 = c.start.len();
    let mut out = vec![0u8; w * 3 * h1];
    out.par_chunks_mut(w * 3).enumerate().for_each(|(yy, out)| {
        let k = &c.k[yy * c.ksize..yy * c.ksize + c.len[yy]];
        let s = c.start[yy] - first;
        for (x, o) in out.iter_mut().enumerate() {
            let mut acc = 1i64 << (c.bits - 1);
            for (j, &wt) in k.iter().enumerate() {
                acc += src[(s + j) * w * 3 + x] as i64 * wt as i64;
            }
            *o = clip8(acc, c.bits);
        }
    });
    out
}

/// An 8-bit bicubic resizer of one kind, keeping its taps from frame to frame.
#[derive(Debug, Default)]
pub struct PilBicubic {
    /// `(kind, w0, h0, w1, h1)` the taps are for.
    sizes: Option<(Fixed8, usize, usize, usize, usize)>,
    x: Option<Coeffs>,
    y: Option<Coeffs>,
}

impl PilBicubic {
    /// `src` resized to `width` x `height` as `kind` does it.
    pub fn resize(&mut self, src: &RgbImage, width: u32, height: u32, kind: Fixed8) -> RgbImage {
        let (w0, h0) = (src.width() as usize, src.height() as usize);
        let (w1, h1) = (width as usize, height as usize);
        if (w0, h0) == (w1, h1) {
            return src.clone();
        }
        if self.sizes != Some((kind, w0, h0, w1, h1)) {
            self.sizes = Some((kind, w0, h0, w1, h1));
            self.x = (w1 != w0).then(|| coeffs(w0, w1, kind));
            self.y = (h1 != h0).then(|| coeffs(h0, h1, kind));
        }
        let raw = src.as_raw();
        let out = match (&self.x, &self.y) {
            (Some(x), Some(y)) if kind.height_first(w0, h0, w1, h1) => {
                horizontal(&vertical(raw, w0, 0, y), w0, 0..h1, x)
            }
            (Some(x), Some(y)) => {
                // Only the rows the vertical pass reads (`ybox_first..ybox_last`).
                let (first, last) = (y.start[0], y.start[h1 - 1] + y.len[h1 - 1]);
                let mid = horizontal(raw, w0, first..last, x);
                vertical(&mid, w1, first, y)
            }
            (Some(x), None) => horizontal(raw, w0, 0..h0, x),
            (None, Some(y)) => vertical(raw, w0, 0, y),
            (None, None) => raw.clone(),
        };
        RgbImage::from_raw(width, height, out).expect("a buffer of the image's size")
    }
}

/// [`PilBicubic::resize`] once.
#[cfg(test)]
pub fn pil_bicubic(src: &RgbImage, width: u32, height: u32, kind: Fixed8) -> RgbImage {
    PilBicubic::default().resize(src, width, height, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_in_fixed_point_and_cover_the_source() {
        for kind in [Fixed8::Pillow13, Fixed8::TorchUint8] {
            for (i, o) in [
                (320, 448),
                (1280, 448),
                (448, 448 * 2),
                (7, 3),
                (3, 7),
                (1920, 2),
            ] {
                let c = coeffs(i, o, kind);
                for xx in 0..o {
                    let s: i64 = c.k[xx * c.ksize..xx * c.ksize + c.len[xx]]
                        .iter()
                        .map(|&v| v as i64)
                        .sum();
                    // Each weight rounds by at most half a unit.
                    assert!((s - (1 << c.bits)).abs() <= c.len[xx] as i64, "{i}->{o}");
                    assert!(c.start[xx] + c.len[xx] <= i);
                    assert!(c
                        .k
                        .iter()
                        .all(|&k| kind != Fixed8::TorchUint8 || k.abs() < 1 << 15));
                }
            }
        }
    }

    /// torch's precisions, printed by its formula in Python (the largest weight of a
    /// 320 -> 448 upscale is about 0.9; of a 1920 -> 384 downscale about 0.22).
    #[test]
    fn torch_precision_keeps_the_largest_weight_in_an_int16() {
        for (i, o) in [(320, 448), (1920, 384), (384, 384 * 3), (100, 3)] {
            let c = coeffs(i, o, Fixed8::TorchUint8);
            let max = *c.k.iter().max().unwrap() as i64;
            assert!(max < 1 << 15, "{i}->{o}");
            // One bit more would overflow: the largest weight uses the top of the int16.
            assert!(max >= (1 << 14) - 1, "{i}->{o}: {} bits, max {max}", c.bits);
        }
    }

    #[test]
    fn a_flat_image_stays_flat_and_the_same_size_is_a_copy() {
        let src = RgbImage::from_pixel(37, 23, image::Rgb([10, 200, 255]));
        for kind in [Fixed8::Pillow13, Fixed8::Pillow12, Fixed8::TorchUint8] {
            let out = pil_bicubic(&src, 448, 448, kind);
            assert!(out.pixels().all(|p| p.0 == [10, 200, 255]));
            let out = pil_bicubic(&src, 20, 10, kind);
            assert!(out.pixels().all(|p| p.0 == [10, 200, 255]));
            assert_eq!(pil_bicubic(&src, 37, 23, kind), src);
        }
    }

    #[test]
    fn the_pass_orders_are_the_packages() {
        let f = Fixed8::Pillow13;
        assert!(f.height_first(320, 568, 448, 448));
        assert!(f.height_first(720, 1280, 448, 448));
        assert!(!f.height_first(1280, 720, 448, 448));
        assert!(!f.height_first(60, 60, 57, 54)); // 6 = 2 * 3: the width first
        assert!(f.height_first(60, 60, 57, 53));
        assert!(!Fixed8::Pillow12.height_first(720, 1280, 448, 448));
        assert!(Fixed8::Pillow12.height_first(2, 300, 2, 100));
        assert!(!Fixed8::TorchUint8.height_first(320, 568, 448, 448));
        // The two orders give other pixels (else the rule could not be seen).
        let mut seed = 3u64;
        let img = RgbImage::from_fn(32, 57, |_, _| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            image::Rgb([(seed >> 33) as u8, (seed >> 41) as u8, (seed >> 49) as u8])
        });
        assert_ne!(
            pil_bicubic(&img, 45, 45, Fixed8::Pillow13),
            pil_bicubic(&img, 45, 45, Fixed8::Pillow12)
        );
    }
}
