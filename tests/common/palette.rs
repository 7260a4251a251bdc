//! The track colours vidprep draws (docs/annotations.md: a fixed palette, track `i` gets colour
//! `i % 12`), written out here from the documentation, and their limited-range BT.601 YCbCr
//! values by the textbook formula: the oracle overlay tests compare drawn pixels with, without
//! asking vidprep.

/// The palette, in order: red, green, yellow, blue, orange, purple, cyan, magenta, lime, pink,
/// teal, white.
pub const TRACK_COLOURS: [(u8, u8, u8); 12] = [
    (230, 25, 75),
    (60, 180, 75),
    (255, 225, 25),
    (0, 130, 200),
    (245, 130, 48),
    (145, 30, 180),
    (70, 240, 240),
    (240, 50, 230),
    (210, 245, 60),
    (250, 190, 212),
    (0, 128, 128),
    (255, 255, 255),
];

/// A colour in limited-range YCbCr.
#[derive(Clone, Copy, Debug)]
pub struct Yuv {
    pub y: u8,
    pub u: u8,
    pub v: u8,
}

/// The limited-range BT.601 YCbCr of track `track`'s colour (Kr 0.299, Kb 0.114; Y in 16..235,
/// Cb and Cr in 16..240).
pub fn track_yuv_bt601(track: usize) -> Yuv {
    let (r, g, b) = TRACK_COLOURS[track % TRACK_COLOURS.len()];
    let (kr, kb) = (0.299, 0.114);
    let (r, g, b) = (r as f64 / 255.0, g as f64 / 255.0, b as f64 / 255.0);
    let y = kr * r + (1.0 - kr - kb) * g + kb * b;
    let cb = (b - y) / (2.0 * (1.0 - kb));
    let cr = (r - y) / (2.0 * (1.0 - kr));
    let q = |v: f64| v.round().clamp(0.0, 255.0) as u8;
    Yuv {
        y: q(16.0 + 219.0 * y),
        u: q(128.0 + 224.0 * cb),
        v: q(128.0 + 224.0 * cr),
    }
}
