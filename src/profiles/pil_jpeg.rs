//! Pillow's `Image.fromarray(rgb).save("x.jpg")`, byte for byte: the baseline JPEG that
//! libjpeg(-turbo) writes with Pillow's defaults (`JpegImagePlugin._save` and
//! `libImaging/JpegEncode.c` with no options: `jpeg_set_defaults`, quality 75 with
//! `force_baseline`, YCbCr with 2x2 luma / 1x1 chroma sampling (4:2:0), the accurate integer
//! DCT, the standard Huffman tables (no `optimize`, no `progressive`), a JFIF 1.01 APP0 with
//! density 1:1 and no unit (no `dpi`), no EXIF, ICC or comment, no restart markers).
//!
//! A port of the code paths libjpeg runs for that (libjpeg 6b, which libjpeg-turbo's C and
//! SIMD code reproduce bit for bit): `jccolor.c` `rgb_ycc_convert` (16-bit fixed point),
//! `jcsample.c` `h2v2_downsample` (the 1, 2, 1, 2 bias) after `expand_right_edge`,
//! `jcprepct.c`'s bottom padding (the full-size rows to an even count, then each component's
//! rows to a whole MCU row), `jfdctint.c` `jpeg_fdct_islow`, `jcdctmgr.c`'s rounded division
//! by `8 * quantval`, `jccoefct.c`'s dummy blocks past the right and bottom edges (zero AC,
//! the DC of the block before), `jchuff.c` (byte stuffing, padding with 1 bits) and
//! `jcmarker.c` (each DQT and DHT in its own marker, in that order). Checked equal to
//! Pillow 9.4 (Debian's libjpeg-turbo 2.1.5) and Pillow 13.0 (its wheel's libjpeg-turbo
//! 3.2.0), which agree with each other (`tests/profiles/vlmeval.rs`, `docs/profiles.md`).

/// `jpeg_natural_order`: the zigzag position `k` is the natural (row-major) index `ZIGZAG[k]`.
const ZIGZAG: [usize; 64] = [
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20,
    13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59,
    52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
];

/// `std_luminance_quant_tbl` (JPEG Annex K.1), natural order.
const LUMA_QUANT: [u16; 64] = [
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
    14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113,
    92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
];

/// `std_chrominance_quant_tbl` (Annex K.2), natural order.
const CHROMA_QUANT: [u16; 64] = [
    17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99,
    47, 66, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
];

/// A Huffman table as a DHT marker carries it: code counts by length 1..=16, then values.
struct HuffSpec {
    bits: [u8; 16],
    vals: &'static [u8],
}

/// `jstdhuff.c`'s tables (Annex K.3).
const DC_LUMA: HuffSpec = HuffSpec {
    bits: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
    vals: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};
const DC_CHROMA: HuffSpec = HuffSpec {
    bits: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    vals: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};
const AC_LUMA: HuffSpec = HuffSpec {
    bits: [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d],
    vals: &[
        0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61,
        0x07, 0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52,
        0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25,
        0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45,
        0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64,
        0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83,
        0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99,
        0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6,
        0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3,
        0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8,
        0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
    ],
};
const AC_CHROMA: HuffSpec = HuffSpec {
    bits: [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77],
    vals: &[
        0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61,
        0x71, 0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33,
        0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18,
        0x19, 0x1a, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44,
        0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63,
        0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a,
        0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97,
        0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4,
        0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca,
        0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7,
        0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
    ],
};

/// Pillow's default quality (`jpeg_set_defaults` sets 75; Pillow passes no other).
pub const QUALITY: u32 = 75;

/// `jpeg_quality_scaling(quality)` then `jpeg_add_quant_table(..., force_baseline=TRUE)`:
/// each entry `(basic * scale + 50) / 100` within `[1, 255]`, natural order.
fn quant_table(basic: &[u16; 64], quality: u32) -> [u16; 64] {
    let q = quality.clamp(1, 100);
    let scale = if q < 50 { 5000 / q } else { 200 - q * 2 };
    basic.map(|b| ((b as u32 * scale + 50) / 100).clamp(1, 255) as u16)
}

/// `jpeg_make_c_derived_tbl`: (code, length) by symbol.
fn derive(spec: &HuffSpec) -> [(u16, u8); 256] {
    let mut sizes = Vec::new();
    for (l, &count) in spec.bits.iter().enumerate() {
        sizes.extend(std::iter::repeat_n(l as u8 + 1, count as usize));
    }
    let mut table = [(0u16, 0u8); 256];
    let (mut code, mut si, mut p) = (0u32, sizes.first().copied().unwrap_or(1), 0);
    while p < sizes.len() {
        while p < sizes.len() && sizes[p] == si {
            table[spec.vals[p] as usize] = (code as u16, si);
            code += 1;
            p += 1;
        }
        code <<= 1;
        si += 1;
    }
    table
}

/// The entropy-coded segment: bits packed MSB first, a 0 byte stuffed after each 0xFF.
struct BitWriter {
    out: Vec<u8>,
    acc: u32,
    n: u32,
}

impl BitWriter {
    fn put(&mut self, bits: u32, len: u8) {
        let len = len as u32;
        if len == 0 {
            return;
        }
        self.acc = (self.acc << len) | (bits & ((1u32 << len) - 1));
        self.n += len;
        while self.n >= 8 {
            let byte = (self.acc >> (self.n - 8)) as u8;
            self.out.push(byte);
            if byte == 0xFF {
                self.out.push(0);
            }
            self.n -= 8;
        }
        self.acc &= (1u32 << self.n).wrapping_sub(1);
    }

    /// `flush_bits`: the last byte filled with 1 bits.
    fn flush(&mut self) {
        if self.n > 0 {
            self.put(0x7F, 7 - (self.n as u8 - 1) % 8);
        }
    }
}

/// `jpeg_fdct_islow` (`jfdctint.c`): the accurate integer forward DCT, its output scaled up by
/// 8, in place on samples already centred on 0.
fn fdct_islow(d: &mut [i32; 64]) {
    const CONST_BITS: i32 = 13;
    const PASS1_BITS: i32 = 2;
    const F_0_298: i32 = 2446;
    const F_0_390: i32 = 3196;
    const F_0_541: i32 = 4433;
    const F_0_765: i32 = 6270;
    const F_0_899: i32 = 7373;
    const F_1_175: i32 = 9633;
    const F_1_501: i32 = 12299;
    const F_1_847: i32 = 15137;
    const F_1_961: i32 = 16069;
    const F_2_053: i32 = 16819;
    const F_2_562: i32 = 20995;
    const F_3_072: i32 = 25172;
    let descale = |x: i32, n: i32| (x + (1 << (n - 1))) >> n;
    // Pass 1 over the rows (stride 1), pass 2 over the columns (stride 8).
    for pass in 0..2 {
        let (step, stride) = if pass == 0 { (8, 1) } else { (1, 8) };
        for line in 0..8 {
            let b = line * step;
            let at = |k: usize| b + k * stride;
            let x: [i32; 8] = std::array::from_fn(|k| d[at(k)]);
            let tmp0 = x[0] + x[7];
            let tmp7 = x[0] - x[7];
            let tmp1 = x[1] + x[6];
            let tmp6 = x[1] - x[6];
            let tmp2 = x[2] + x[5];
            let tmp5 = x[2] - x[5];
            let tmp3 = x[3] + x[4];
            let tmp4 = x[3] - x[4];
            let tmp10 = tmp0 + tmp3;
            let tmp13 = tmp0 - tmp3;
            let tmp11 = tmp1 + tmp2;
            let tmp12 = tmp1 - tmp2;
            let shift = if pass == 0 {
                CONST_BITS - PASS1_BITS
            } else {
                CONST_BITS + PASS1_BITS
            };
            if pass == 0 {
                d[at(0)] = (tmp10 + tmp11) << PASS1_BITS;
                d[at(4)] = (tmp10 - tmp11) << PASS1_BITS;
            } else {
                d[at(0)] = descale(tmp10 + tmp11, PASS1_BITS);
                d[at(4)] = descale(tmp10 - tmp11, PASS1_BITS);
            }
            let z1 = (tmp12 + tmp13) * F_0_541;
            d[at(2)] = descale(z1 + tmp13 * F_0_765, shift);
            d[at(6)] = descale(z1 + tmp12 * -F_1_847, shift);
            let z1 = tmp4 + tmp7;
            let z2 = tmp5 + tmp6;
            let z3 = tmp4 + tmp6;
            let z4 = tmp5 + tmp7;
            let z5 = (z3 + z4) * F_1_175;
            let tmp4 = tmp4 * F_0_298;
            let tmp5 = tmp5 * F_2_053;
            let tmp6 = tmp6 * F_3_072;
            let tmp7 = tmp7 * F_1_501;
            let z1 = z1 * -F_0_899;
            let z2 = z2 * -F_2_562;
            let z3 = z3 * -F_1_961 + z5;
            let z4 = z4 * -F_0_390 + z5;
            d[at(7)] = descale(tmp4 + z1 + z3, shift);
            d[at(5)] = descale(tmp5 + z2 + z4, shift);
            d[at(3)] = descale(tmp6 + z2 + z3, shift);
            d[at(1)] = descale(tmp7 + z1 + z4, shift);
        }
    }
}

/// One component's sample plane, already padded as libjpeg pads it.
struct Plane {
    data: Vec<u8>,
    width: usize,
}

impl Plane {
    /// The quantized coefficients of the 8x8 block at block column `bx`, row `by`.
    fn block(&self, bx: usize, by: usize, divisors: &[i32; 64]) -> [i32; 64] {
        let mut d = [0i32; 64];
        for y in 0..8 {
            let row = &self.data[(by * 8 + y) * self.width + bx * 8..][..8];
            for x in 0..8 {
                d[y * 8 + x] = row[x] as i32 - 128;
            }
        }
        fdct_islow(&mut d);
        for (v, &q) in d.iter_mut().zip(divisors) {
            *v = if *v < 0 {
                -((-*v + (q >> 1)) / q)
            } else {
                (*v + (q >> 1)) / q
            };
        }
        d
    }
}

/// `encode_one_block` (`jchuff.c`).
fn encode_block(
    w: &mut BitWriter,
    block: &[i32; 64],
    last_dc: &mut i32,
    dc: &[(u16, u8); 256],
    ac: &[(u16, u8); 256],
) {
    let magnitude = |v: i32| -> (u32, u8) {
        let a = v.unsigned_abs();
        let nbits = (32 - a.leading_zeros()) as u8;
        let bits = if v < 0 { (v - 1) as u32 } else { v as u32 };
        (bits, nbits)
    };
    let (bits, nbits) = magnitude(block[0] - *last_dc);
    *last_dc = block[0];
    let (code, len) = dc[nbits as usize];
    w.put(code as u32, len);
    w.put(bits, nbits);
    let mut run = 0;
    for &k in &ZIGZAG[1..] {
        let v = block[k];
        if v == 0 {
            run += 1;
            continue;
        }
        while run > 15 {
            let (code, len) = ac[0xF0];
            w.put(code as u32, len);
            run -= 16;
        }
        let (bits, nbits) = magnitude(v);
        let (code, len) = ac[(run << 4) + nbits as usize];
        w.put(code as u32, len);
        w.put(bits, nbits);
        run = 0;
    }
    if run > 0 {
        let (code, len) = ac[0];
        w.put(code as u32, len);
    }
}

fn marker(out: &mut Vec<u8>, code: u8, body: &[u8]) {
    out.extend_from_slice(&[0xFF, code]);
    out.extend_from_slice(&((body.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(body);
}

/// The JPEG file Pillow writes for the RGB image `rgb` (`width * height * 3` bytes, rows top
/// to bottom) with `Image.save(path)` and no options. `width` and `height` are 1 to 65535.
pub fn encode(rgb: &[u8], width: u32, height: u32) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    assert!(
        (1..=65535).contains(&w) && (1..=65535).contains(&h) && rgb.len() == w * h * 3,
        "a {w}x{h} RGB image of {} bytes",
        rgb.len()
    );
    let (mcu_x, mcu_y) = (w.div_ceil(16), h.div_ceil(16));
    // rgb_ycc_convert: FIX(x) = (x * 2^16 + 0.5) as integer.
    const ONE_HALF: i32 = 1 << 15;
    const CBCR_OFFSET: i32 = 128 << 16;
    let (mut yf, mut cb, mut cr) = (vec![0u8; w * h], vec![0u8; w * h], vec![0u8; w * h]);
    for (i, p) in rgb.chunks_exact(3).enumerate() {
        let (r, g, b) = (p[0] as i32, p[1] as i32, p[2] as i32);
        yf[i] = ((19595 * r + 38470 * g + 7471 * b + ONE_HALF) >> 16) as u8;
        cb[i] = ((-11059 * r - 21709 * g + 32768 * b + CBCR_OFFSET + ONE_HALF - 1) >> 16) as u8;
        cr[i] = ((32768 * r - 27439 * g - 5329 * b + CBCR_OFFSET + ONE_HALF - 1) >> 16) as u8;
    }
    // Luma: the edge column and row repeated out to whole MCUs (expand_right_edge,
    // expand_bottom_edge); blocks past its own width and height in blocks are dummies.
    let luma = {
        let pw = mcu_x * 16;
        let mut data = vec![0u8; pw * mcu_y * 16];
        for (y, row) in data.chunks_exact_mut(pw).enumerate() {
            let src = &yf[y.min(h - 1) * w..][..w];
            row[..w].copy_from_slice(src);
            row[w..].fill(src[w - 1]);
        }
        Plane { data, width: pw }
    };
    // Chroma: the full-size rows padded to an even count and the columns to twice the
    // component's width in blocks, averaged 2x2 with the bias 1, 2, 1, 2, ... along each row
    // (h2v2_downsample); its last row repeated to whole MCU rows.
    let chroma = |full: &[u8]| {
        let cw = mcu_x * 8;
        let rows = h.div_ceil(2);
        let at = |x: usize, y: usize| full[y.min(h - 1) * w + x.min(w - 1)] as u32;
        let mut data = vec![0u8; cw * mcu_y * 8];
        for (y, row) in data.chunks_exact_mut(cw).enumerate() {
            let r = y.min(rows - 1);
            let mut bias = 1;
            for (x, v) in row.iter_mut().enumerate() {
                let s = at(2 * x, 2 * r)
                    + at(2 * x + 1, 2 * r)
                    + at(2 * x, 2 * r + 1)
                    + at(2 * x + 1, 2 * r + 1);
                *v = ((s + bias) >> 2) as u8;
                bias ^= 3;
            }
        }
        Plane { data, width: cw }
    };
    let (cb, cr) = (chroma(&cb), chroma(&cr));
    let lq = quant_table(&LUMA_QUANT, QUALITY);
    let cq = quant_table(&CHROMA_QUANT, QUALITY);
    // The islow DCT's output is 8 times the true one: it is divided by 8 * quantval.
    let ldiv: [i32; 64] = lq.map(|q| (q as i32) << 3);
    let cdiv: [i32; 64] = cq.map(|q| (q as i32) << 3);

    let mut out = Vec::with_capacity(w * h / 4 + 1024);
    out.extend_from_slice(&[0xFF, 0xD8]);
    marker(
        &mut out,
        0xE0,
        &[b'J', b'F', b'I', b'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0],
    );
    for (id, table) in [(0u8, &lq), (1, &cq)] {
        let mut body = vec![id];
        body.extend(ZIGZAG.iter().map(|&k| table[k] as u8));
        marker(&mut out, 0xDB, &body);
    }
    let mut sof = vec![8];
    sof.extend_from_slice(&(h as u16).to_be_bytes());
    sof.extend_from_slice(&(w as u16).to_be_bytes());
    sof.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    marker(&mut out, 0xC0, &sof);
    for (class_id, spec) in [
        (0x00u8, &DC_LUMA),
        (0x10, &AC_LUMA),
        (0x01, &DC_CHROMA),
        (0x11, &AC_CHROMA),
    ] {
        let mut body = vec![class_id];
        body.extend_from_slice(&spec.bits);
        body.extend_from_slice(spec.vals);
        marker(&mut out, 0xC4, &body);
    }
    marker(&mut out, 0xDA, &[3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]);

    let (dc_l, ac_l) = (derive(&DC_LUMA), derive(&AC_LUMA));
    let (dc_c, ac_c) = (derive(&DC_CHROMA), derive(&AC_CHROMA));
    let (luma_bw, luma_bh) = (w.div_ceil(8), h.div_ceil(8));
    let mut bits = BitWriter { out, acc: 0, n: 0 };
    let mut last = [0i32; 3];
    for my in 0..mcu_y {
        for mx in 0..mcu_x {
            // compress_data: the luma's 2x2 blocks, real or dummy.
            let mut prev_dc = 0;
            for j in 0..2 {
                for i in 0..2 {
                    let (bx, by) = (mx * 2 + i, my * 2 + j);
                    let block = if by < luma_bh && bx < luma_bw {
                        luma.block(bx, by, &ldiv)
                    } else {
                        // Past the right edge: the DC of the block to the left; a dummy row
                        // at the bottom: the DC of the block before (the last one above).
                        let mut d = [0i32; 64];
                        d[0] = prev_dc;
                        d
                    };
                    prev_dc = block[0];
                    encode_block(&mut bits, &block, &mut last[0], &dc_l, &ac_l);
                }
            }
            let b = cb.block(mx, my, &cdiv);
            encode_block(&mut bits, &b, &mut last[1], &dc_c, &ac_c);
            let b = cr.block(mx, my, &cdiv);
            encode_block(&mut bits, &b, &mut last[2], &dc_c, &ac_c);
        }
    }
    bits.flush();
    let mut out = bits.out;
    out.extend_from_slice(&[0xFF, 0xD9]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_constants_are_libjpegs() {
        let fix = |x: f64| (x * 65536.0 + 0.5) as i32;
        assert_eq!(
            [19595, 38470, 7471, 11059, 21709, 32768, 27439, 5329],
            [0.299, 0.587, 0.114, 0.16874, 0.33126, 0.5, 0.41869, 0.08131].map(fix)
        );
        let fix13 = |x: f64| (x * 8192.0 + 0.5) as i32;
        assert_eq!(fix13(0.541196100), 4433);
        assert_eq!(fix13(3.072711026), 25172);
    }

    #[test]
    fn quality_75_tables_and_codes() {
        let lq = quant_table(&LUMA_QUANT, 75);
        assert_eq!(&lq[..4], &[8, 6, 5, 8]);
        assert_eq!(quant_table(&CHROMA_QUANT, 75)[63], 50);
        assert_eq!(AC_LUMA.bits.iter().map(|&b| b as usize).sum::<usize>(), 162);
        assert_eq!(AC_CHROMA.vals.len(), 162);
        // Annex K.3.1: DC luma category 0 is 00, category 11 is 111111110.
        let dc = derive(&DC_LUMA);
        assert_eq!((dc[0], dc[11]), ((0, 2), (0x1FE, 9)));
        // AC luma EOB 1010, ZRL 11111111001.
        let ac = derive(&AC_LUMA);
        assert_eq!((ac[0], ac[0xF0]), ((0xA, 4), (0x7F9, 11)));
    }

    #[test]
    fn a_flat_grey_block_is_all_dc() {
        let mut d = [0i32; 64];
        d.iter_mut().for_each(|v| *v = 10);
        fdct_islow(&mut d);
        // 8 * 8 * 10 (the DCT's scale of 8 times the orthonormal DC 8 * mean).
        assert_eq!(d[0], 640);
        assert!(d[1..].iter().all(|&v| v == 0));
    }
}
