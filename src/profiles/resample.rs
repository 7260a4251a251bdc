//! torch's antialiased bicubic resize on CPU (`torch.nn.functional.interpolate(mode="bicubic",
//! antialias=True, align_corners=False)`, which torchvision's `resize(..., BICUBIC,
//! antialias=True)` calls on a uint8 tensor cast to float32, then clamps to [0, 255], rounds
//! half to even and casts back to uint8). qwen-vl-utils' `fetch_video` and transformers'
//! video processors resize so.
//!
//! The arithmetic follows `aten/src/ATen/native/cpu/UpSampleKernel.cpp`
//! (`HelperInterpBase::_compute_indices_min_size_weights_aa`, `HelperInterpCubic::aa_filter`,
//! `separable_upsample_generic_Nd_kernel_impl`): `scale = in / out` in f32; `support = 2 *
//! scale` when downscaling (2 otherwise); for output `i`, `center = scale * (i + 0.5)`,
//! `xmin = max(int(center - support + 0.5), 0)`, `xsize = min(int(center + support + 0.5),
//! in) - xmin`, weights `filter((j + xmin - center + 0.5) * invscale)` (Keys cubic,
//! `a = -0.5`) normalised by their f32 sum; the width is resampled first (into an f32 plane),
//! then the height; a dimension whose size does not change is not touched. Checked against
//! torch 2.15 / torchvision 0.29 (`tests/profiles.rs`).

use image::RgbImage;

/// `a * b + c` rounded once, as the fused multiply-add torch's x86-64 build contracts these
/// expressions into. The product of two f32 is exact in f64, so this is the fused result
/// except where the f64 sum's rounding lands exactly halfway between two f32 (about one
/// case in 2^29), and it stays fast without the FMA instruction.
#[inline(always)]
fn fma(a: f32, b: f32, c: f32) -> f32 {
    (a as f64 * b as f64 + c as f64) as f32
}

/// Keys' cubic convolution with `a = -0.5`, as torch computes it in f32 (`UpSample.h`
/// `cubic_convolution1`: `((A + 2) * x - (A + 3)) * x * x + 1`, `cubic_convolution2`:
/// `((A * x - 5A) * x + 8A) * x - 4A`), each `p * q + r` fused: without the fusion 1,479 of
/// the 1,600 weights of a 320 -> 448 resize differ from torch 2.15's, with it none.
fn cubic(x: f32) -> f32 {
    let a = -0.5f32;
    let x = x.abs();
    if x < 1.0 {
        fma(fma(a + 2.0, x, -(a + 3.0)) * x, x, 1.0)
    } else if x < 2.0 {
        fma(fma(fma(a, x, -5.0 * a), x, 8.0 * a), x, -4.0 * a)
    } else {
        0.0
    }
}

/// One output sample's source range and weights.
struct Taps {
    start: usize,
    weights: Vec<f32>,
}

/// The taps of each of `output` samples over `input` samples.
fn taps(input: usize, output: usize) -> Vec<Taps> {
    let scale = input as f32 / output as f32;
    let support: f32 = if scale >= 1.0 {
        (4.0 * 0.5 * scale as f64) as f32
    } else {
        2.0
    };
    let invscale: f32 = if scale >= 1.0 {
        (1.0 / scale as f64) as f32
    } else {
        1.0
    };
    (0..output)
        .map(|i| {
            let center = (scale as f64 * (i as f64 + 0.5)) as f32;
            let xmin = ((center as f64 - support as f64 + 0.5) as i64).max(0);
            let xmax = ((center as f64 + support as f64 + 0.5) as i64).min(input as i64);
            let mut weights: Vec<f32> = (xmin..xmax.max(xmin))
                .map(|j| {
                    let d = (j as f32 - center) as f64 + 0.5;
                    cubic((d * invscale as f64) as f32)
                })
                .collect();
            let mut total = 0f32;
            for w in &weights {
                total += *w;
            }
            if total != 0.0 {
                for w in &mut weights {
                    *w /= total;
                }
            }
            Taps {
                start: xmin as usize,
                weights,
            }
        })
        .collect()
}

/// Resamples `lines` lines of `src` along one axis: line `r` starts at `r * line_in.0`, its
/// samples `line_in.1` apart; output sample `o` of line `r` goes to `dst[r * line_out.0 + o *
/// line_out.1]`.
fn pass(
    src: &[f32],
    dst: &mut [f32],
    lines: usize,
    line_in: (usize, usize),
    line_out: (usize, usize),
    taps: &[Taps],
) {
    let (istride, istep) = line_in;
    let (ostride, ostep) = line_out;
    for r in 0..lines {
        let base = r * istride;
        for (o, t) in taps.iter().enumerate() {
            // `output = t * w[0]; output += t * w[j]` (fused), as `interpolate_aa_single_dim`.
            let mut acc = 0f32;
            for (k, w) in t.weights.iter().enumerate() {
                let v = src[base + (t.start + k) * istep];
                acc = if k == 0 { v * *w } else { fma(v, *w, acc) };
            }
            dst[r * ostride + o * ostep] = acc;
        }
    }
}

/// `src` resized to `width` x `height` as torch does it (see the module comment).
pub fn torch_bicubic_aa(src: &RgbImage, width: u32, height: u32) -> RgbImage {
    let (w0, h0) = (src.width() as usize, src.height() as usize);
    let (w1, h1) = (width as usize, height as usize);
    if (w0, h0) == (w1, h1) {
        return src.clone();
    }
    let mut out = vec![0u8; w1 * h1 * 3];
    let wtaps = (w1 != w0).then(|| taps(w0, w1));
    let htaps = (h1 != h0).then(|| taps(h0, h1));
    let raw = src.as_raw();
    let mut plane: Vec<f32> = vec![0.0; w0 * h0];
    let mut mid: Vec<f32> = Vec::new();
    let mut fin: Vec<f32> = Vec::new();
    for c in 0..3 {
        for (i, p) in plane.iter_mut().enumerate() {
            *p = raw[i * 3 + c] as f32;
        }
        let after_w: &[f32] = match &wtaps {
            Some(t) => {
                mid.resize(w1 * h0, 0.0);
                pass(&plane, &mut mid, h0, (w0, 1), (w1, 1), t);
                &mid
            }
            None => &plane,
        };
        let after_h: &[f32] = match &htaps {
            Some(t) => {
                fin.resize(w1 * h1, 0.0);
                // Columns: line r is column r (stride 1 between lines, w1 between samples).
                pass(after_w, &mut fin, w1, (1, w1), (1, w1), t);
                &fin
            }
            None => after_w,
        };
        for (i, v) in after_h.iter().enumerate() {
            out[i * 3 + c] = v.clamp(0.0, 255.0).round_ties_even() as u8;
        }
    }
    RgbImage::from_raw(width, height, out).expect("buffer of the right size")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_size_is_a_copy_and_flat_stays_flat() {
        let img = RgbImage::from_pixel(40, 30, image::Rgb([10, 200, 77]));
        assert_eq!(torch_bicubic_aa(&img, 40, 30), img);
        let small = torch_bicubic_aa(&img, 28, 14);
        assert!(small.pixels().all(|p| p.0 == [10, 200, 77]));
        let big = torch_bicubic_aa(&img, 64, 64);
        assert!(big.pixels().all(|p| p.0 == [10, 200, 77]));
    }

    #[test]
    fn weights_sum_to_one() {
        for (i, o) in [(1280, 448), (720, 252), (100, 300), (5, 2)] {
            for t in taps(i, o) {
                let s: f32 = t.weights.iter().sum();
                assert!((s - 1.0).abs() < 1e-5, "{i}->{o}: {s}");
                assert!(t.start + t.weights.len() <= i);
            }
        }
    }
}
