//! The exact arithmetic the formulas share: numpy's and torch's `linspace` and `arange` as
//! those libraries compute them (f64 for numpy and Python, f32 for torch), the index lists
//! each toolkit derives from them, qwen-vl-utils' frame-count rules, and the fraction
//! approximation of a frame rate. Everything here is a pure function of its numbers; the
//! rules that decide which of them a request uses, and what to say about it, are in the
//! formula files.

/// The default fps of qwen-vl-utils (`FPS = 2.0` in `qwen_vl_utils/vision_process.py`).
#[cfg(test)]
pub const QWEN_DEFAULT_FPS: f64 = 2.0;
/// `FRAME_FACTOR` of qwen-vl-utils: frame counts are multiples of 2.
pub const QWEN_FRAME_FACTOR: usize = 2;
/// `FPS_MIN_FRAMES` of qwen-vl-utils.
pub const QWEN_FPS_MIN_FRAMES: usize = 4;
/// `FPS_MAX_FRAMES` of qwen-vl-utils.
pub const QWEN_FPS_MAX_FRAMES: usize = 768;

/// `numpy.linspace(0, stop, num)` in f64, as numpy 2.x `_core/function_base.py` `linspace`
/// computes it: `delta = stop - start; y = arange(0, num) * (delta / div)` (or, when the step
/// is 0, `y / div * delta`); `y += start`; `y[-1] = stop` when `num > 1`; with `div = num - 1`
/// and, for `num == 1`, `y = [0] * delta + start`.
pub fn numpy_linspace(start: f64, stop: f64, num: usize) -> Vec<f64> {
    let div = num.saturating_sub(1);
    let delta = stop - start;
    let mut y: Vec<f64> = (0..num).map(|i| i as f64).collect();
    if div > 0 {
        let step = delta / div as f64;
        if step == 0.0 {
            for v in &mut y {
                *v = *v / div as f64 * delta;
            }
        } else {
            for v in &mut y {
                *v *= step;
            }
        }
    } else {
        for v in &mut y {
            *v *= delta;
        }
    }
    for v in &mut y {
        *v += start;
    }
    if num > 1 {
        y[num - 1] = stop;
    }
    y
}

/// `uniform`: `numpy.round(numpy.linspace(0, total - 1, n))` (half to even).
pub fn uniform_indices(total: usize, n: usize) -> Vec<usize> {
    numpy_linspace(0.0, (total - 1) as f64, n)
        .into_iter()
        .map(|v| v.round_ties_even() as usize)
        .collect()
}

/// `lmms-eval`: `numpy.linspace(0, total - 1, n, dtype=int)` (numpy floors, then casts).
pub fn lmms_eval_indices(total: usize, n: usize) -> Vec<usize> {
    numpy_linspace(0.0, (total - 1) as f64, n)
        .into_iter()
        .map(|v| v.floor() as usize)
        .collect()
}

/// `vlmevalkit` count mode: `[int(i * (total / (n + 1))) for i in range(1, n + 1)]`.
pub fn vlmevalkit_count_indices(total: usize, n: usize) -> Vec<usize> {
    let step_size = total as f64 / (n + 1) as f64;
    (1..=n).map(|i| (i as f64 * step_size) as usize).collect()
}

/// `torch.linspace(start, end, steps)` with the default float32 dtype on CPU
/// (`RangeFactoriesKernel.cpp` `linspace_kernel`): `step = (float(end) - float(start)) /
/// (steps - 1)` in f32; element `i` is `start + step * i` for `i < steps / 2` and
/// `end - step * (steps - i - 1)` otherwise, each rounded to f32 once (the product of an f32
/// and an integer below 2^29 is exact in f64, and so is the sum here, so computing in f64 and
/// rounding to f32 is exactly torch's fused multiply-add); `steps == 1` gives `[start]`
/// (`RangeFactories.cpp` `linspace_out`: `fill_(start)`).
pub fn torch_linspace_f32(start: i64, end: i64, steps: usize) -> Vec<f32> {
    match steps {
        0 => return Vec::new(),
        1 => return vec![start as f32],
        _ => {}
    }
    let s = start as f32;
    let e = end as f32;
    let step = (e - s) / ((steps - 1) as i64 as f32);
    let (s, e, step64) = (s as f64, e as f64, step as f64);
    let halfway = steps / 2;
    (0..steps)
        .map(|i| {
            if i < halfway {
                (s + step64 * i as f64) as f32
            } else {
                (e - step64 * (steps - i - 1) as f64) as f32
            }
        })
        .collect()
}

/// `qwen`: `torch.linspace(0, total - 1, nframes).round().long()` (f32, half to even).
pub fn qwen_indices(total: usize, nframes: usize) -> Vec<usize> {
    torch_linspace_f32(0, total as i64 - 1, nframes)
        .into_iter()
        .map(|v| v.round_ties_even() as usize)
        .collect()
}

/// qwen-vl-utils `smart_nframes` for `{"nframes": n}`: `round(n / 2) * 2`.
pub fn qwen_nframes_for_count(n: usize) -> usize {
    ((n as f64 / QWEN_FRAME_FACTOR as f64).round_ties_even() as usize) * QWEN_FRAME_FACTOR
}

/// qwen-vl-utils' frame limit for an fps request:
/// `floor_by_factor(ele.get("max_frames", min(FPS_MAX_FRAMES, total_frames)), FRAME_FACTOR)`.
pub(super) fn qwen_max_frames(total: usize, max_frames: Option<usize>) -> usize {
    // floor_by_factor(ele.get("max_frames", min(FPS_MAX_FRAMES, total_frames)), FRAME_FACTOR)
    let m = max_frames.unwrap_or(QWEN_FPS_MAX_FRAMES.min(total));
    (m as f64 / QWEN_FRAME_FACTOR as f64).floor() as usize * QWEN_FRAME_FACTOR
}

/// qwen-vl-utils `smart_nframes` for `{"fps": fps}` (optionally `"max_frames"`), in f64 as
/// Python computes it.
pub fn qwen_nframes_for_fps(
    total: usize,
    video_fps: f64,
    fps: f64,
    max_frames: Option<usize>,
) -> usize {
    let factor = QWEN_FRAME_FACTOR as f64;
    let min_frames = (QWEN_FPS_MIN_FRAMES as f64 / factor).ceil() * factor;
    let max_frames = qwen_max_frames(total, max_frames) as f64;
    let nframes = total as f64 / video_fps * fps;
    let nframes = nframes.max(min_frames).min(max_frames).min(total as f64);
    ((nframes / factor).floor() * factor) as usize
}

/// numpy `arange(0, stop, step)` length (`ctors.c` `_calc_length`): `ceil((stop - start) / step)`
/// in f64, with `stop` a Python int and `step` a float.
fn numpy_arange_len(total: usize, step: f64) -> usize {
    (total as f64 / step).ceil() as usize
}

/// `hf`: `np.arange(0, total, total / n).astype(int)`: values `0 + i * step` in f64
/// (numpy's `DOUBLE_fill`: `start + i*delta`, `delta = (start + step) - start`), truncated.
pub fn hf_arange_astype_indices(total: usize, n: usize) -> Vec<usize> {
    let step = total as f64 / n as f64;
    let len = numpy_arange_len(total, step);
    let delta = (0.0 + step) - 0.0;
    (0..len)
        .map(|i| (0.0 + i as f64 * delta) as usize)
        .collect()
}

/// `hf-load-video`: `np.arange(0, total, total / n, dtype=int)`: numpy stores `int(0)` and
/// `int(0 + step)` and fills `start + i * delta` with the integer `delta = int(step)`
/// (`LONG_fill`).
pub fn hf_arange_dtype_int_indices(total: usize, n: usize) -> Vec<usize> {
    let step = total as f64 / n as f64;
    let len = numpy_arange_len(total, step);
    let delta = step.trunc() as usize;
    (0..len).map(|i| i * delta).collect()
}

/// Floats per `Vectorized<float>` in torch's x86 AVX2 kernels.
pub const TORCH_VEC_FLOATS: usize = 8;

/// `hf-processor`: `torch.arange(0, total, total / n).int()` (see
/// [`HfProcessor`](super::hf_processor::HfProcessor)): torch's `vectorized_loop` takes two
/// vectors of [`TORCH_VEC_FLOATS`] per step while at least that many elements remain, each
/// from `Vectorized<float>::arange(base, step)` with
/// `base = (float)(start + step * idx)` and elements `base + j * step` computed in double and
/// stored as float; the remaining elements come from the scalar `start + step * idx`.
pub fn hf_torch_arange_indices(total: usize, n: usize) -> Vec<usize> {
    let step = total as f64 / n as f64;
    let len = numpy_arange_len(total, step);
    let start = 0.0f64;
    let mut out: Vec<f32> = Vec::with_capacity(len);
    let mut i = 0;
    while i + 2 * TORCH_VEC_FLOATS <= len {
        for block in [i, i + TORCH_VEC_FLOATS] {
            let base = (start + step * block as f64) as f32;
            out.extend((0..TORCH_VEC_FLOATS).map(|j| (base as f64 + j as f64 * step) as f32));
        }
        i += 2 * TORCH_VEC_FLOATS;
    }
    out.extend((i..len).map(|k| (start + step * k as f64) as f32));
    out.into_iter().map(|v| v as i32 as usize).collect()
}

/// `hf-default`: `np.arange(n, dtype=int) * total // n`, exact integers.
pub fn hf_default_indices(total: usize, n: usize) -> Vec<usize> {
    (0..n)
        .map(|i| (i as u128 * total as u128 / n as u128) as usize)
        .collect()
}

/// The nearest fraction `p / q` to `x > 0` with `q <= max_den` (continued fractions with
/// semiconvergents). Returns at least `1 / max_den`; rates of 10^12 and more (absurd, and
/// refused later as too many samples) come back as `min(x, 10^15) / 1`.
pub(super) fn rational_approx(x: f64, max_den: i64) -> (i64, i64) {
    if x >= 1e12 {
        return (x.min(1e15).round() as i64, 1);
    }
    let max_den = max_den as i128;
    let (mut p0, mut q0, mut p1, mut q1) = (0i128, 1i128, 1i128, 0i128);
    let mut r = x;
    let mut best: (i128, i128);
    loop {
        let a = r.floor();
        if a > 1e15 {
            best = (p1, q1);
            break;
        }
        let a = a as i128;
        let (p2, q2) = (a * p1 + p0, a * q1 + q0);
        if q2 > max_den {
            let t = (max_den - q0) / q1;
            let (ps, qs) = (t * p1 + p0, t * q1 + q0);
            let err_s = (x - ps as f64 / qs as f64).abs();
            let err_c = (x - p1 as f64 / q1 as f64).abs();
            best = if q1 > 0 && err_c <= err_s {
                (p1, q1)
            } else {
                (ps, qs)
            };
            break;
        }
        (p0, q0, p1, q1) = (p1, q1, p2, q2);
        let frac = r - a as f64;
        if frac == 0.0 || p1 as f64 / q1 as f64 == x {
            best = (p1, q1);
            break;
        }
        r = 1.0 / frac;
    }
    if best.0 <= 0 || best.1 <= 0 {
        best = (1, max_den);
    }
    let p = best.0.min(i64::MAX as i128) as i64;
    (p, best.1 as i64)
}

// ---------------------------------------------------------------------------------------------
