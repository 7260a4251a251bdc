//! The frame code: the frame index painted into the pixels as a grid of
//! solid black/white blocks, the ffmpeg filter that paints it, a pure-Rust
//! painter (for unit tests), and the reader that gets the index back from a
//! decoded luma plane, also after the frame was scaled.
//!
//! Geometry (block size `B`, default 16 px; all in source pixels):
//! a grid of `COLS`=8 x `ROWS`=3 cells anchored at the top-left corner
//! (0,0), cell (r,c) covering x in [c*B,(c+1)*B), y in [r*B,(r+1)*B); the
//! whole strip is 8B x 3B (128x48 at B=16). White = 1, black = 0.
//!
//! ```text
//!        c0   c1   c2   c3   c4   c5   c6   c7
//! r0  [  W ][  K ][  W ][  K ][d13][d12][d11][d10]
//! r1  [  K ][ d9][ d8][ d7][ d6][ d5][ d4][ d3]
//! r2  [  W ][ d2][ d1][ d0][ k3][ k2][ k1][ k0]
//! ```
//! W/K: fixed marker cells (white/black) that also give the block size
//! (row 0 reads W K W K, column 0 reads W K W). d13..d0: the frame index
//! (14 bits, 0..=16383, MSB first). k3..k0: a check nibble
//! `check(n) = (n0 + 3*n1 + 5*n2 + 7*n3 + 9) mod 16` where n0..n3 are the
//! 4-bit nibbles of n (n3 has 2 bits); odd weights make every single-bit
//! error in d detectable, and +9 keeps the all-black pattern invalid.
//!
//! Reading: each cell is sampled over its central 50% x 50%; its mean must be
//! decisively dark (< 96) or bright (> 160) (mid-grey is rejected), the 6
//! markers must match and the check nibble must agree, else `None`.
//! Works on full-range (0/255, as ffmpeg's `gray` output) and limited-range
//! (16/235) luma. The reader auto-detects the block size independently in x
//! and y from the marker transitions, so frames scaled (even anisotropically)
//! down to about 3 px per block still read; the code must still start at the
//! top-left pixel (no crop/pad/rotation in between).

/// Grid columns.
pub const COLS: u32 = 8;
/// Grid rows.
pub const ROWS: u32 = 3;
/// Bits of the frame index.
pub const DATA_BITS: u32 = 14;
/// Largest index the code can carry.
pub const MAX_CODE: u32 = (1 << DATA_BITS) - 1;
/// Default block (cell) edge in pixels.
pub const DEFAULT_BLOCK: u32 = 16;
/// A cell mean below this reads as 0.
pub const DARK_MAX: f64 = 96.0;
/// A cell mean above this reads as 1.
pub const BRIGHT_MIN: f64 = 160.0;

/// What a grid cell carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Fixed marker, white (true) or black (false).
    Marker(bool),
    /// Bit `b` of the frame index (13 = MSB).
    Data(u32),
    /// Bit `b` of the check nibble (3 = MSB).
    Check(u32),
}

const MARKERS: [((u32, u32), bool); 6] = [
    ((0, 0), true),
    ((0, 1), false),
    ((0, 2), true),
    ((0, 3), false),
    ((1, 0), false),
    ((2, 0), true),
];

/// Role of cell (row, col).
pub fn cell_role(row: u32, col: u32) -> Cell {
    assert!(
        row < ROWS && col < COLS,
        "cell ({row},{col}) outside the grid"
    );
    if let Some((_, v)) = MARKERS.iter().find(|(rc, _)| *rc == (row, col)) {
        return Cell::Marker(*v);
    }
    // Ordinal among non-marker cells in row-major order.
    let mut k = 0;
    for r in 0..ROWS {
        for c in 0..COLS {
            if MARKERS.iter().any(|(rc, _)| *rc == (r, c)) {
                continue;
            }
            if (r, c) == (row, col) {
                return if k < DATA_BITS {
                    Cell::Data(DATA_BITS - 1 - k)
                } else {
                    Cell::Check(3 - (k - DATA_BITS))
                };
            }
            k += 1;
        }
    }
    unreachable!()
}

/// The check nibble of index `n`.
pub fn check_nibble(n: u32) -> u32 {
    ((n & 15) + 3 * ((n >> 4) & 15) + 5 * ((n >> 8) & 15) + 7 * ((n >> 12) & 3) + 9) & 15
}

/// Value (white?) of cell (row, col) for index `n`.
pub fn cell_value(n: u32, row: u32, col: u32) -> bool {
    match cell_role(row, col) {
        Cell::Marker(v) => v,
        Cell::Data(b) => (n >> b) & 1 == 1,
        Cell::Check(b) => (check_nibble(n) >> b) & 1 == 1,
    }
}

/// ffmpeg filter chain (comma-separated, no leading/trailing comma) that
/// paints the code of the filter's running frame number `n` with block `b`.
/// Put it before any `setpts`; `n` counts frames entering the filter.
pub fn ffmpeg_code_filter(b: u32) -> String {
    let check_expr =
        "mod(mod(n,16)+3*mod(floor(n/16),16)+5*mod(floor(n/256),16)+7*mod(floor(n/4096),4)+9,16)";
    let mut f = vec![format!(
        "drawbox=x=0:y=0:w={}:h={}:color=black:t=fill",
        COLS * b,
        ROWS * b
    )];
    for r in 0..ROWS {
        for c in 0..COLS {
            let enable = match cell_role(r, c) {
                Cell::Marker(false) => continue,
                Cell::Marker(true) => None,
                Cell::Data(bit) => Some(format!("mod(floor(n/{}),2)", 1u32 << bit)),
                Cell::Check(bit) => Some(format!("mod(floor({check_expr}/{}),2)", 1u32 << bit)),
            };
            let mut s = format!(
                "drawbox=x={}:y={}:w={b}:h={b}:color=white:t=fill",
                c * b,
                r * b
            );
            if let Some(e) = enable {
                s.push_str(&format!(":enable='{e}'"));
            }
            f.push(s);
        }
    }
    f.join(",")
}

/// Paint the code of `n` into a luma plane (pure Rust, block `b` px,
/// black = `lo`, white = `hi`). For unit-testing the reader.
#[allow(clippy::too_many_arguments)]
pub fn paint_code(
    luma: &mut [u8],
    width: usize,
    height: usize,
    stride: usize,
    n: u32,
    b: usize,
    lo: u8,
    hi: u8,
) {
    assert!(n <= MAX_CODE, "code {n} > {MAX_CODE}");
    assert!(
        COLS as usize * b <= width && ROWS as usize * b <= height,
        "code strip does not fit"
    );
    for y in 0..ROWS as usize * b {
        for x in 0..COLS as usize * b {
            let v = cell_value(n, (y / b) as u32, (x / b) as u32);
            luma[y * stride + x] = if v { hi } else { lo };
        }
    }
}

/// Where the grid lies in a (possibly scaled) frame: origin and block size
/// in pixels, fractional allowed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodeGeom {
    pub x0: f64,
    pub y0: f64,
    pub bx: f64,
    pub by: f64,
}

impl CodeGeom {
    /// Geometry for block `b` at the top-left (unscaled frame).
    pub fn unscaled(b: u32) -> Self {
        CodeGeom {
            x0: 0.0,
            y0: 0.0,
            bx: b as f64,
            by: b as f64,
        }
    }
    /// Geometry after the frame was scaled by (sx, sy) from block `b`.
    pub fn scaled(b: u32, sx: f64, sy: f64) -> Self {
        CodeGeom {
            x0: 0.0,
            y0: 0.0,
            bx: b as f64 * sx,
            by: b as f64 * sy,
        }
    }
}

fn cell_mean(
    luma: &[u8],
    width: usize,
    height: usize,
    stride: usize,
    g: &CodeGeom,
    r: u32,
    c: u32,
) -> Option<f64> {
    let x_a = g.x0 + (c as f64 + 0.25) * g.bx;
    let x_b = g.x0 + (c as f64 + 0.75) * g.bx;
    let y_a = g.y0 + (r as f64 + 0.25) * g.by;
    let y_b = g.y0 + (r as f64 + 0.75) * g.by;
    let mut xs = x_a.round() as i64;
    let mut xe = x_b.round() as i64;
    let mut ys = y_a.round() as i64;
    let mut ye = y_b.round() as i64;
    if xe <= xs {
        xs = ((x_a + x_b) / 2.0).floor() as i64;
        xe = xs + 1;
    }
    if ye <= ys {
        ys = ((y_a + y_b) / 2.0).floor() as i64;
        ye = ys + 1;
    }
    if xs < 0 || ys < 0 || xe as usize > width || ye as usize > height {
        return None;
    }
    let mut sum = 0u64;
    for y in ys as usize..ye as usize {
        let row = &luma[y * stride + xs as usize..y * stride + xe as usize];
        sum += row.iter().map(|&v| v as u64).sum::<u64>();
    }
    Some(sum as f64 / ((xe - xs) * (ye - ys)) as f64)
}

/// Read the code with a known geometry. `None` if any cell is not decisive,
/// a marker is wrong, the grid does not fit, or the check nibble disagrees.
pub fn read_code_geom(
    luma: &[u8],
    width: usize,
    height: usize,
    stride: usize,
    g: &CodeGeom,
) -> Option<u32> {
    if stride < width || luma.len() < stride * (height.saturating_sub(1)) + width {
        return None;
    }
    if g.bx < 1.0 || g.by < 1.0 {
        return None;
    }
    if g.x0 + COLS as f64 * g.bx > width as f64 + 0.5
        || g.y0 + ROWS as f64 * g.by > height as f64 + 0.5
    {
        return None;
    }
    let mut n = 0u32;
    let mut chk = 0u32;
    for r in 0..ROWS {
        for c in 0..COLS {
            let m = cell_mean(luma, width, height, stride, g, r, c)?;
            let v = if m < DARK_MAX {
                false
            } else if m > BRIGHT_MIN {
                true
            } else {
                return None;
            };
            match cell_role(r, c) {
                Cell::Marker(want) => {
                    if v != want {
                        return None;
                    }
                }
                Cell::Data(b) => n |= (v as u32) << b,
                Cell::Check(b) => chk |= (v as u32) << b,
            }
        }
    }
    (chk == check_nibble(n)).then_some(n)
}

/// Read the code assuming the unscaled block size was `block` and the frame
/// was scaled uniformly by `scale` (e.g. 0.5 for a half-size frame).
pub fn read_code_scaled(
    luma: &[u8],
    width: usize,
    height: usize,
    stride: usize,
    block: u32,
    scale: f64,
) -> Option<u32> {
    read_code_geom(
        luma,
        width,
        height,
        stride,
        &CodeGeom::scaled(block, scale, scale),
    )
}

/// Sub-pixel positions where a 1-D profile crosses 128, starting bright.
/// Returns up to `max` crossings (positions in pixel units from the start).
fn crossings(profile: &[u8], max: usize) -> Vec<f64> {
    let mut out = Vec::new();
    if profile.is_empty() || profile[0] < 128 {
        return out;
    }
    let mut bright = true;
    for i in 1..profile.len() {
        let (a, b) = (profile[i - 1] as f64, profile[i] as f64);
        let now_bright = b >= 128.0;
        if now_bright != bright {
            // linear interpolation between pixel centres (i-1)+0.5 and i+0.5
            let frac = if (a - b).abs() > 0.0 {
                (a - 128.0) / (a - b)
            } else {
                0.5
            };
            out.push(i as f64 - 0.5 + frac);
            bright = now_bright;
            if out.len() == max {
                break;
            }
        }
    }
    out
}

/// Candidate block sizes estimated from the markers: (bx, by) pairs.
pub fn detect_blocks(luma: &[u8], width: usize, height: usize, stride: usize) -> Vec<(f64, f64)> {
    let mut bxs = Vec::new();
    let mut bys = Vec::new();
    for k in 0..3usize {
        if k < height {
            let row: Vec<u8> = luma[k * stride..k * stride + width].to_vec();
            let t = crossings(&row, 3);
            if t.len() == 3 {
                bxs.push(t[2] / 3.0);
            }
        }
        if k < width {
            let col: Vec<u8> = (0..height).map(|y| luma[y * stride + k]).collect();
            let t = crossings(&col, 2);
            if t.len() == 2 {
                bys.push(t[1] / 2.0);
            }
        }
    }
    let mut out: Vec<(f64, f64)> = Vec::new();
    for &bx in &bxs {
        for &by in &bys {
            if bx >= 2.0
                && by >= 2.0
                && !out
                    .iter()
                    .any(|&(a, b)| (a - bx).abs() < 0.05 && (b - by).abs() < 0.05)
            {
                out.push((bx, by));
            }
        }
    }
    out
}

/// Read the frame index from a luma plane, auto-detecting the block size
/// (see the module doc). `stride` is bytes per row (>= width).
pub fn read_code(luma: &[u8], width: usize, height: usize, stride: usize) -> Option<u32> {
    if width == 0 || height == 0 || stride < width || luma.len() < stride * (height - 1) + width {
        return None;
    }
    const FACTORS: [f64; 7] = [1.0, 0.98, 1.02, 0.96, 1.04, 0.94, 1.06];
    for (bx, by) in detect_blocks(luma, width, height, stride) {
        for fx in FACTORS {
            for fy in FACTORS {
                let g = CodeGeom {
                    x0: 0.0,
                    y0: 0.0,
                    bx: bx * fx,
                    by: by * fy,
                };
                if let Some(n) = read_code_geom(luma, width, height, stride, &g) {
                    return Some(n);
                }
            }
        }
    }
    None
}
