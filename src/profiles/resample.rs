//! torch's antialiased bicubic resize on CPU (`torch.nn.functional.interpolate(mode="bicubic",
//! antialias=True, align_corners=False)`, which torchvision's `resize(..., BICUBIC,
//! antialias=True)` calls on a uint8 tensor cast to float32, then clamps to [0, 255], rounds
//! half to even and casts back to uint8). qwen-vl-utils' `fetch_video` resizes so (through
//! torchvision's v1 `functional.resize`, which casts); transformers' video processors call
//! the v2 one, which keeps uint8 on CPU and reaches torch's uint8 kernel instead
//! ([`super::pil::Fixed8::TorchUint8`]).
//!
//! The arithmetic follows `aten/src/ATen/native/cpu/UpSampleKernel.cpp`
//! (`HelperInterpBase::_compute_indices_min_size_weights_aa`, `HelperInterpCubic::aa_filter`,
//! `separable_upsample_generic_Nd_kernel_impl`): `scale = in / out` in f32; `support = 2 *
//! scale` when downscaling (2 otherwise); for output `i`, `center = scale * (i + 0.5)`,
//! `xmin = max(int(f32(center - support) + 0.5), 0)`, `xsize = min(int(f32(center +
//! support) + 0.5), in) - xmin` clamped to `2 * ceil(support) + 1` (the f32 difference and
//! sum matter: computed exactly, a few outputs gain a leading zero tap), weights
//! `filter((j + xmin - center + 0.5) * invscale)` (Keys cubic, `a = -0.5`) normalised by
//! their f32 sum; the width is resampled first (into an f32 plane), then the height; a
//! dimension whose size does not change is not touched.
//!
//! Each output sums its taps as torch's x86-64 builds (the AVX2 and AVX-512 kernels PyPI's
//! wheels dispatch to) compiled `output = t[0] * w[0]; for j in 1..n { output += t[j] *
//! w[j] }`: the first `4 * floor((n - 1) / 4)` terms run four products at a time in a vector
//! register and are added one by one (a rounded product, then a rounded sum), the remaining
//! `(n - 1) % 4` as fused multiply-adds. Found by feeding torch 2.15 (`ATEN_CPU_CAPABILITY`
//! avx2 and avx512) random planes over 59 sizes, every output value equal; all fused or all
//! plain leaves 0.5-30% of the f32 values different, and after rounding to bytes about one
//! value in 3,000 off by one (the 102 of 110 frames of issue #43). torch's `DEFAULT`
//! capability (a CPU without AVX2) sums without fusing and can differ by one. The sweep in
//! `python/tests/test_resize_sweep.py` checks whole frames against the installed torch.
//!
//! Speed without other values: the x pass runs over blocks of rows transposed so that each
//! row is one vector lane, the y pass over whole rows, both built for AVX-512 or AVX2 (with
//! FMA) where the CPU has them (chosen at run time). Each lane does the same operations as
//! the plain loop, in the same order; nothing is reassociated, so every width gives the same
//! bytes (`fast_path_equals_the_plain_transcription`).

use image::RgbImage;

/// `a * b + c` rounded once, as the fused multiply-add torch's x86-64 build contracts these
/// expressions into (one instruction where the body is built with FMA, a correctly rounded
/// library call elsewhere).
#[inline(always)]
fn fma(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}

/// How many of an output's `len` taps after the first torch adds as a rounded product then
/// a rounded sum (four at a time, in vector registers); the rest are fused.
#[inline(always)]
fn unfused_terms(len: usize) -> usize {
    len.saturating_sub(1) / 4 * 4
}

/// `acc + t * w` as torch sums term `k` (1-based, after the first product) of an output with
/// `unfused` unfused terms.
#[inline(always)]
fn add_term(acc: f32, t: f32, w: f32, k: usize, unfused: usize) -> f32 {
    if k <= unfused {
        acc + t * w
    } else {
        fma(t, w, acc)
    }
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
    // torch's `max_interp_size`: `ceil(support) * 2 + 1`.
    let max_interp_size = (support as f64).ceil() as i64 * 2 + 1;
    (0..output)
        .map(|i| {
            let center = (scale as f64 * (i as f64 + 0.5)) as f32;
            let xmin = (((center - support) as f64 + 0.5) as i64).max(0);
            let xsize = (((center + support) as f64 + 0.5) as i64).min(input as i64) - xmin;
            let xsize = xsize.clamp(0, max_interp_size);
            let xmax = xmin + xsize;
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

/// The taps of one axis flattened: output `o` reads `len[o]` samples from `start[o]` with
/// weights `weights[o * width..]`.
struct Flat {
    /// The number of input samples.
    input: usize,
    start: Vec<usize>,
    len: Vec<usize>,
    width: usize,
    weights: Vec<f32>,
}

impl Flat {
    fn new(input: usize, taps: &[Taps]) -> Flat {
        let width = taps.iter().map(|t| t.weights.len()).max().unwrap_or(0);
        let mut weights = vec![0.0; taps.len() * width];
        for (o, t) in taps.iter().enumerate() {
            for (k, w) in t.weights.iter().enumerate() {
                weights[o * width + k] = *w;
            }
        }
        Flat {
            input,
            start: taps.iter().map(|t| t.start).collect(),
            len: taps.iter().map(|t| t.weights.len()).collect(),
            width,
            weights,
        }
    }
}

/// Rows the x pass resamples at once: one vector lane per row.
const BLOCK: usize = 8;

/// [`BLOCK`] rows of interleaved RGB (`src`, `rows` rows of `3 * w0` bytes, `stride` apart) resampled along x
/// into `dst` (`rows` rows of `3 * w1` values): `output = t * w[0]; output += t * w[j]`
/// ([`add_term`]), as torch's `interpolate_aa_single_dim`, each output value in torch's
/// order. The rows are first transposed into `t` (sample-major, one lane per row) so that
/// the taps run over all the rows at once, in vector lanes.
#[inline(always)]
fn x_block_body(
    src: &[u8],
    stride: usize,
    rows: usize,
    dst: &mut [f32],
    taps: &Flat,
    t: &mut Vec<[f32; BLOCK]>,
) {
    let n1 = dst.len() / rows;
    let n0 = taps.input * 3;
    t.clear();
    t.resize(n0, [0.0; BLOCK]);
    for r in 0..rows {
        let line = &src[r * stride..r * stride + n0];
        for (lane, v) in t.iter_mut().zip(line) {
            lane[r] = *v as f32;
        }
    }
    for o in 0..n1 / 3 {
        let (start, len) = (taps.start[o], taps.len[o]);
        let w = &taps.weights[o * taps.width..o * taps.width + len];
        for c in 0..3 {
            let base = start * 3 + c;
            let first = &t[base];
            let unfused = unfused_terms(len);
            let mut acc = [0f32; BLOCK];
            for r in 0..BLOCK {
                acc[r] = first[r] * w[0];
            }
            for (k, wk) in w.iter().enumerate().skip(1) {
                let lane = &t[base + 3 * k];
                for r in 0..BLOCK {
                    acc[r] = add_term(acc[r], lane[r], *wk, k, unfused);
                }
            }
            for (r, a) in acc.iter().enumerate().take(rows) {
                dst[r * n1 + o * 3 + c] = *a;
            }
        }
    }
}

/// Output row `o` of the y pass as bytes: rows `src` (each `stride` values) combined with
/// `o`'s taps in torch's order into `acc`, then clamped and rounded into `dst`.
#[inline(always)]
fn y_row_body(src: &[f32], stride: usize, acc: &mut [f32], dst: &mut [u8], o: usize, taps: &Flat) {
    let (start, len) = (taps.start[o], taps.len[o]);
    let w = &taps.weights[o * taps.width..o * taps.width + len];
    let unfused = unfused_terms(len);
    let first = &src[start * stride..(start + 1) * stride];
    for (d, v) in acc.iter_mut().zip(first) {
        *d = *v * w[0];
    }
    for (k, wk) in w.iter().enumerate().skip(1) {
        let line = &src[(start + k) * stride..(start + k + 1) * stride];
        for (d, v) in acc.iter_mut().zip(line) {
            *d = add_term(*d, *v, *wk, k, unfused);
        }
    }
    for (b, v) in dst.iter_mut().zip(acc.iter()) {
        *b = to_byte(*v);
    }
}

/// The x pass's body built for AVX-512 and FMA (its arithmetic is the same IEEE f32
/// operations, in the same order, eight lanes at a time).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn x_block_avx512(
    src: &[u8],
    stride: usize,
    rows: usize,
    dst: &mut [f32],
    taps: &Flat,
    t: &mut Vec<[f32; BLOCK]>,
) {
    x_block_body(src, stride, rows, dst, taps, t)
}

/// The x pass's body built for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn x_block_avx2(
    src: &[u8],
    stride: usize,
    rows: usize,
    dst: &mut [f32],
    taps: &Flat,
    t: &mut Vec<[f32; BLOCK]>,
) {
    x_block_body(src, stride, rows, dst, taps, t)
}

/// The y pass's body built for AVX-512.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn y_row_avx512(
    src: &[f32],
    stride: usize,
    acc: &mut [f32],
    dst: &mut [u8],
    o: usize,
    taps: &Flat,
) {
    y_row_body(src, stride, acc, dst, o, taps)
}

/// The y pass's body built for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn y_row_avx2(src: &[f32], stride: usize, acc: &mut [f32], dst: &mut [u8], o: usize, taps: &Flat) {
    y_row_body(src, stride, acc, dst, o, taps)
}

/// The widest vector instructions this CPU has, for the passes' bodies (all give the same
/// values: the same operations in the same order, only more lanes run at once; the fused
/// ones are one instruction with FMA, a library call without).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lanes {
    Avx512,
    Avx2,
    Plain,
}

impl Lanes {
    fn detect() -> Lanes {
        #[cfg(target_arch = "x86_64")]
        {
            let fma = std::arch::is_x86_feature_detected!("fma");
            if fma && std::arch::is_x86_feature_detected!("avx512f") {
                return Lanes::Avx512;
            }
            if fma && std::arch::is_x86_feature_detected!("avx2") {
                return Lanes::Avx2;
            }
        }
        Lanes::Plain
    }

    fn x_block(
        self,
        src: &[u8],
        stride: usize,
        rows: usize,
        dst: &mut [f32],
        taps: &Flat,
        t: &mut Vec<[f32; BLOCK]>,
    ) {
        match self {
            // SAFETY: `Lanes::detect` chose this only where the CPU has AVX-512F and FMA.
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx512 => unsafe { x_block_avx512(src, stride, rows, dst, taps, t) },
            // SAFETY: `Lanes::detect` chose this only where the CPU has AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx2 => unsafe { x_block_avx2(src, stride, rows, dst, taps, t) },
            _ => x_block_body(src, stride, rows, dst, taps, t),
        }
    }

    fn y_row(
        self,
        src: &[f32],
        stride: usize,
        acc: &mut [f32],
        dst: &mut [u8],
        o: usize,
        taps: &Flat,
    ) {
        match self {
            // SAFETY: `Lanes::detect` chose this only where the CPU has AVX-512F and FMA.
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx512 => unsafe { y_row_avx512(src, stride, acc, dst, o, taps) },
            // SAFETY: `Lanes::detect` chose this only where the CPU has AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            Lanes::Avx2 => unsafe { y_row_avx2(src, stride, acc, dst, o, taps) },
            _ => y_row_body(src, stride, acc, dst, o, taps),
        }
    }
}

/// `v` clamped to [0, 255], rounded half to even, as a byte: adding and taking away 1.5 * 2^23
/// rounds an f32 in that range to an integer in the current (nearest-even) mode, exactly as
/// `round_ties_even` does, without its library call on x86-64 builds without SSE4.1.
#[inline(always)]
fn to_byte(v: f32) -> u8 {
    const MAGIC: f32 = 12_582_912.0;
    ((v.clamp(0.0, 255.0) + MAGIC) - MAGIC) as u8
}

/// torch's resize (see the module comment) for frames of one size: the taps of both axes are
/// computed once, and the f32 planes between the passes are kept from frame to frame.
#[derive(Default)]
pub struct TorchBicubic {
    /// `(w0, h0, w1, h1)` the taps are for, and the taps of each axis that changes.
    sizes: Option<(usize, usize, usize, usize)>,
    x: Option<Flat>,
    y: Option<Flat>,
    mid: Vec<f32>,
    /// The vector instructions the passes run with (detected on the first frame).
    lanes: Option<Lanes>,
}

impl TorchBicubic {
    /// `src` resized to `width` x `height` as torch does it. Rows are shared among rayon's
    /// threads; each output value is computed in torch's order.
    #[cfg(test)]
    pub fn resize(&mut self, src: &RgbImage, width: u32, height: u32) -> RgbImage {
        let (w0, h0) = (src.width(), src.height());
        self.resize_rows(src.as_raw(), w0 as usize * 3, w0, h0, width, height)
    }

    /// The RGB picture of `w0` x `h0` pixels whose rows start `stride` bytes apart in `raw`
    /// (a converted frame's plane, read in place) resized to `width` x `height` as
    /// [`TorchBicubic::resize`] does it.
    pub fn resize_rows(
        &mut self,
        raw: &[u8],
        stride: usize,
        w0: u32,
        h0: u32,
        width: u32,
        height: u32,
    ) -> RgbImage {
        use rayon::prelude::*;
        let (w0, h0) = (w0 as usize, h0 as usize);
        let (w1, h1) = (width as usize, height as usize);
        assert!(stride >= w0 * 3 && raw.len() >= stride * (h0.max(1) - 1) + w0 * 3);
        if (w0, h0) == (w1, h1) {
            let mut out = Vec::with_capacity(w0 * 3 * h0);
            for y in 0..h0 {
                out.extend_from_slice(&raw[y * stride..y * stride + w0 * 3]);
            }
            return RgbImage::from_raw(width, height, out).expect("buffer of the right size");
        }
        if self.sizes != Some((w0, h0, w1, h1)) {
            self.sizes = Some((w0, h0, w1, h1));
            self.x = (w1 != w0).then(|| Flat::new(w0, &taps(w0, w1)));
            self.y = (h1 != h0).then(|| Flat::new(h0, &taps(h0, h1)));
        }
        let lanes = *self.lanes.get_or_insert_with(Lanes::detect);
        // The width first (a dimension whose size does not change is not touched), in blocks
        // of rows.
        self.mid.resize(w1 * 3 * h0, 0.0);
        match &self.x {
            Some(taps) => self
                .mid
                .par_chunks_mut(w1 * 3 * BLOCK)
                .enumerate()
                .for_each_init(Vec::new, |t, (b, d)| {
                    let rows = d.len() / (w1 * 3);
                    let s = &raw[b * BLOCK * stride..];
                    lanes.x_block(s, stride, rows, d, taps, t)
                }),
            None => {
                for (y, line) in self.mid.chunks_exact_mut(w1 * 3).enumerate() {
                    for (d, s) in line.iter_mut().zip(&raw[y * stride..y * stride + w0 * 3]) {
                        *d = *s as f32;
                    }
                }
            }
        }
        let mut out = vec![0u8; w1 * 3 * h1];
        match &self.y {
            Some(taps) => {
                let mid = &self.mid;
                out.par_chunks_mut(w1 * 3).enumerate().for_each_init(
                    || vec![0f32; w1 * 3],
                    |acc, (o, d)| lanes.y_row(mid, w1 * 3, acc, d, o, taps),
                );
            }
            None => {
                for (b, v) in out.iter_mut().zip(&self.mid) {
                    *b = to_byte(*v);
                }
            }
        }
        RgbImage::from_raw(width, height, out).expect("buffer of the right size")
    }
}

/// `src` resized to `width` x `height` as torch does it (see the module comment), once.
#[cfg(test)]
pub fn torch_bicubic_aa(src: &RgbImage, width: u32, height: u32) -> RgbImage {
    TorchBicubic::default().resize(src, width, height)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain transcription (planar, one output at a time), to check the fast one against.
    fn reference(src: &RgbImage, width: u32, height: u32) -> RgbImage {
        let (w0, h0) = (src.width() as usize, src.height() as usize);
        let (w1, h1) = (width as usize, height as usize);
        let one = |line: &[f32], taps: &[Taps]| -> Vec<f32> {
            taps.iter()
                .map(|t| {
                    // torch's order: the first product, then the unfused terms, then the
                    // fused ones.
                    let n = t.weights.len();
                    let unfused = (n - 1) / 4 * 4;
                    let mut acc = 0f32;
                    for (k, w) in t.weights.iter().enumerate() {
                        let v = line[t.start + k];
                        acc = if k == 0 {
                            v * *w
                        } else if k <= unfused {
                            acc + v * *w
                        } else {
                            v.mul_add(*w, acc)
                        };
                    }
                    acc
                })
                .collect()
        };
        let mut out = vec![0u8; w1 * h1 * 3];
        for c in 0..3 {
            let mut p: Vec<Vec<f32>> = (0..h0)
                .map(|y| {
                    (0..w0)
                        .map(|x| src.get_pixel(x as u32, y as u32).0[c] as f32)
                        .collect()
                })
                .collect();
            if w1 != w0 {
                let t = taps(w0, w1);
                p = p.iter().map(|r| one(r, &t)).collect();
            }
            if h1 != h0 {
                let t = taps(h0, h1);
                let cols: Vec<Vec<f32>> = (0..w1)
                    .map(|x| one(&p.iter().map(|r| r[x]).collect::<Vec<_>>(), &t))
                    .collect();
                p = (0..h1)
                    .map(|y| cols.iter().map(|c| c[y]).collect())
                    .collect();
            }
            for y in 0..h1 {
                for x in 0..w1 {
                    out[(y * w1 + x) * 3 + c] = p[y][x].clamp(0.0, 255.0).round_ties_even() as u8;
                }
            }
        }
        RgbImage::from_raw(width, height, out).unwrap()
    }

    #[test]
    fn fast_path_equals_the_plain_transcription() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u8
        };
        let img = RgbImage::from_fn(97, 61, |_, _| image::Rgb([next(), next(), next()]));
        // Every vector width this CPU has gives the plain transcription's values.
        let mut all = vec![Lanes::Plain];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                all.push(Lanes::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                all.push(Lanes::Avx512);
            }
        }
        for lanes in all {
            for (w, h) in [(64, 32), (128, 96), (97, 30), (40, 61), (300, 200), (3, 2)] {
                let mut r = TorchBicubic {
                    lanes: Some(lanes),
                    ..Default::default()
                };
                assert_eq!(
                    r.resize(&img, w, h),
                    reference(&img, w, h),
                    "{w}x{h} with {lanes:?}"
                );
            }
        }
        // Heights that leave a partial block of rows, and 720p to the qwen3-vl size.
        let hd = RgbImage::from_fn(1280, 720, |_, _| image::Rgb([next(), next(), next()]));
        for (src, w, h) in [(&hd, 736, 416), (&img, 97, 13)] {
            assert_eq!(torch_bicubic_aa(src, w, h), reference(src, w, h), "{w}x{h}");
        }
    }

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
    fn the_byte_rounding_is_round_half_even() {
        let mut v = -3.0f32;
        while v < 260.0 {
            assert_eq!(
                to_byte(v),
                v.clamp(0.0, 255.0).round_ties_even() as u8,
                "{v}"
            );
            v += 1.0 / 64.0;
        }
        for v in [
            0.5f32,
            1.5,
            2.5,
            254.5,
            127.49999,
            127.50001,
            f32::NAN,
            -0.0,
        ] {
            assert_eq!(
                to_byte(v),
                v.clamp(0.0, 255.0).round_ties_even() as u8,
                "{v}"
            );
        }
        // One resizer over frames of two sizes gives what fresh ones give.
        let a = RgbImage::from_fn(50, 40, |x, y| image::Rgb([x as u8, y as u8, (x * y) as u8]));
        let b = RgbImage::from_fn(64, 30, |x, y| image::Rgb([y as u8, x as u8, (x ^ y) as u8]));
        let mut r = TorchBicubic::default();
        for img in [&a, &b, &a] {
            assert_eq!(r.resize(img, 28, 20), reference(img, 28, 20));
        }
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
