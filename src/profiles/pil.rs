//! Pillow's `Image.resize(size, Image.BICUBIC)` on an 8-bit RGB image, bit for bit
//! (`src/libImaging/Resample.c` of Pillow 9-13: `precompute_coeffs`, `normalize_coeffs_8bpc`,
//! `ImagingResampleHorizontal_8bpc` / `ImagingResampleVertical_8bpc`). InternVL's loader
//! resizes so (`dynamic_preprocess`'s `image.resize(...)`, whose default resample for an RGB
//! image is BICUBIC, and torchvision's `T.Resize(..., BICUBIC)` on a PIL image, which calls
//! it).
//!
//! The arithmetic: `scale = in / out` in f64, `filterscale = max(scale, 1)`, `support = 2 *
//! filterscale`; for output `i`, `center = (i + 0.5) * scale`, `xmin = max(int(center -
//! support + 0.5), 0)`, `xmax = min(int(center + support + 0.5), in)`, weights
//! `bicubic((x + xmin - center + 0.5) / filterscale)` (Keys, `a = -0.5`, in f64) divided by
//! their sum, then fixed point: `int(±0.5 + w * 2^22)`. Each output value is
//! `clip8((2^21 + sum(v * k)) >> 22)`. The width is resampled first into an 8-bit image of
//! only the rows the vertical pass reads, then the height; an axis whose size does not change
//! is not touched. Integer sums are exact, so this is Pillow's result on any machine (Pillow's
//! wheels are built without fused multiply-adds, which Rust does not contract either).

use image::RgbImage;

/// `PRECISION_BITS` of Pillow's 8-bit resampler (`32 - 8 - 2`).
const PRECISION_BITS: u32 = 22;

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
/// weights `k[o * ksize..]`.
#[derive(Clone, Debug, PartialEq)]
struct Coeffs {
    start: Vec<usize>,
    len: Vec<usize>,
    ksize: usize,
    k: Vec<i32>,
}

/// `precompute_coeffs(in, 0, in, out, bicubic)` then `normalize_coeffs_8bpc`.
fn coeffs(input: usize, output: usize) -> Coeffs {
    let scale = input as f64 / output as f64;
    let filterscale = scale.max(1.0);
    let support = 2.0 * filterscale;
    let ksize = support.ceil() as usize * 2 + 1;
    let mut start = Vec::with_capacity(output);
    let mut len = Vec::with_capacity(output);
    let mut k = vec![0i32; output * ksize];
    let ss = 1.0 / filterscale;
    for xx in 0..output {
        let center = (xx as f64 + 0.5) * scale;
        // C's `(int)` truncates toward zero.
        let xmin = ((center - support + 0.5) as i64).max(0);
        let xmax = ((center + support + 0.5) as i64).min(input as i64);
        let n = (xmax - xmin).max(0) as usize;
        let mut w: Vec<f64> = (0..n)
            .map(|x| bicubic((x as f64 + xmin as f64 - center + 0.5) * ss))
            .collect();
        let ww: f64 = w.iter().fold(0.0, |s, v| s + v);
        if ww != 0.0 {
            for v in &mut w {
                *v /= ww;
            }
        }
        for (x, v) in w.iter().enumerate() {
            let scaled = v * (1u32 << PRECISION_BITS) as f64;
            k[xx * ksize + x] = if *v < 0.0 {
                (-0.5 + scaled) as i32
            } else {
                (0.5 + scaled) as i32
            };
        }
        start.push(xmin as usize);
        len.push(n);
    }
    Coeffs {
        start,
        len,
        ksize,
        k,
    }
}

/// Pillow's `clip8`: the fixed-point sum back to 8 bits.
#[inline(always)]
fn clip8(v: i64) -> u8 {
    if v >= (1i64 << PRECISION_BITS << 8) {
        255
    } else if v <= 0 {
        0
    } else {
        (v >> PRECISION_BITS) as u8
    }
}

/// Pillow's bicubic resize, keeping its taps from frame to frame.
#[derive(Debug, Default)]
pub struct PilBicubic {
    /// `(w0, h0, w1, h1)` the taps are for.
    sizes: Option<(usize, usize, usize, usize)>,
    x: Option<Coeffs>,
    y: Option<Coeffs>,
}

impl PilBicubic {
    /// `src` resized to `width` x `height` as `Image.resize((width, height), BICUBIC)`.
    pub fn resize(&mut self, src: &RgbImage, width: u32, height: u32) -> RgbImage {
        use rayon::prelude::*;
        let (w0, h0) = (src.width() as usize, src.height() as usize);
        let (w1, h1) = (width as usize, height as usize);
        if (w0, h0) == (w1, h1) {
            return src.clone();
        }
        if self.sizes != Some((w0, h0, w1, h1)) {
            self.sizes = Some((w0, h0, w1, h1));
            self.x = (w1 != w0).then(|| coeffs(w0, w1));
            self.y = (h1 != h0).then(|| coeffs(h0, h1));
        }
        let raw = src.as_raw();
        // The horizontal pass covers only the rows the vertical pass reads
        // (`ybox_first..ybox_last`), as Pillow's does.
        let (first, last) = match &self.y {
            Some(c) => (c.start[0], c.start[h1 - 1] + c.len[h1 - 1]),
            None => (0, h0),
        };
        let mid: Vec<u8> = match &self.x {
            Some(c) => {
                let mut mid = vec![0u8; w1 * 3 * (last - first)];
                mid.par_chunks_mut(w1 * 3).enumerate().for_each(|(r, out)| {
                    let row = &raw[(first + r) * w0 * 3..(first + r + 1) * w0 * 3];
                    for xx in 0..w1 {
                        let k = &c.k[xx * c.ksize..xx * c.ksize + c.len[xx]];
                        let s = c.start[xx];
                        let mut acc = [1i64 << (PRECISION_BITS - 1); 3];
                        for (j, &w) in k.iter().enumerate() {
                            let p = (s + j) * 3;
                            for ch in 0..3 {
                                acc[ch] += row[p + ch] as i64 * w as i64;
                            }
                        }
                        for ch in 0..3 {
                            out[xx * 3 + ch] = clip8(acc[ch]);
                        }
                    }
                });
                mid
            }
            None => raw[first * w0 * 3..last * w0 * 3].to_vec(),
        };
        let fin: Vec<u8> = match &self.y {
            Some(c) => {
                let mut fin = vec![0u8; w1 * 3 * h1];
                fin.par_chunks_mut(w1 * 3)
                    .enumerate()
                    .for_each(|(yy, out)| {
                        let k = &c.k[yy * c.ksize..yy * c.ksize + c.len[yy]];
                        let s = c.start[yy] - first;
                        for (x, o) in out.iter_mut().enumerate() {
                            let mut acc = 1i64 << (PRECISION_BITS - 1);
                            for (j, &w) in k.iter().enumerate() {
                                acc += mid[(s + j) * w1 * 3 + x] as i64 * w as i64;
                            }
                            *o = clip8(acc);
                        }
                    });
                fin
            }
            None => mid,
        };
        RgbImage::from_raw(width, height, fin).expect("a buffer of the image's size")
    }
}

/// [`PilBicubic::resize`] once.
#[cfg(test)]
pub fn pil_bicubic(src: &RgbImage, width: u32, height: u32) -> RgbImage {
    PilBicubic::default().resize(src, width, height)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_in_fixed_point_and_cover_the_source() {
        for (i, o) in [(320, 448), (1280, 448), (448, 448 * 2), (7, 3), (3, 7)] {
            let c = coeffs(i, o);
            for xx in 0..o {
                let s: i64 = c.k[xx * c.ksize..xx * c.ksize + c.len[xx]]
                    .iter()
                    .map(|&v| v as i64)
                    .sum();
                // Each weight rounds by at most half a unit.
                assert!(
                    (s - (1 << PRECISION_BITS)).abs() <= c.len[xx] as i64,
                    "{i}->{o}"
                );
                assert!(c.start[xx] + c.len[xx] <= i);
            }
        }
    }

    #[test]
    fn a_flat_image_stays_flat_and_the_same_size_is_a_copy() {
        let src = RgbImage::from_pixel(37, 23, image::Rgb([10, 200, 255]));
        let out = pil_bicubic(&src, 448, 448);
        assert!(out.pixels().all(|p| p.0 == [10, 200, 255]));
        assert_eq!(pil_bicubic(&src, 37, 23), src);
    }
}
