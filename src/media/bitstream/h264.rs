//! Just enough H.264 bitstream handling for smart encoding (`exports::smart`): NAL unit
//! splitting (Annex B and length-prefixed), the MP4 `avcC` record (read, and rebuilt with
//! several SPS/PPS pairs), and the SPS fields a re-encoded part must match. Errors are plain
//! messages; callers name the file.

/// A message saying what in the bitstream was not as expected.
pub type Result<T> = std::result::Result<T, String>;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

/// NAL unit types used here.
pub const NAL_IDR: u8 = 5;
pub const NAL_SPS: u8 = 7;
pub const NAL_PPS: u8 = 8;
pub const NAL_AUD: u8 = 9;

pub fn nal_type(nal: &[u8]) -> u8 {
    nal.first().map_or(0, |b| b & 0x1f)
}

/// NAL units of a length-prefixed (MP4) sample.
pub fn split_length_prefixed(data: &[u8], length_size: usize) -> Result<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        ensure!(i + length_size <= data.len(), "truncated NAL length");
        let mut len = 0usize;
        for b in &data[i..i + length_size] {
            len = (len << 8) | *b as usize;
        }
        i += length_size;
        ensure!(
            i + len <= data.len(),
            "NAL length {len} runs past the sample"
        );
        out.push(&data[i..i + len]);
        i += len;
    }
    Ok(out)
}

/// NAL units of an Annex B byte stream (3- or 4-byte start codes; trailing zeros dropped).
pub fn split_annexb(data: &[u8]) -> Vec<&[u8]> {
    let mut starts = Vec::new(); // (start code position, payload position)
    let mut i = 0;
    while i + 3 <= data.len() {
        if data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 {
            starts.push((i, i + 3));
            i += 3;
        } else {
            i += 1;
        }
    }
    let mut out = Vec::new();
    for (k, &(_, payload)) in starts.iter().enumerate() {
        let mut end = starts.get(k + 1).map_or(data.len(), |&(sc, _)| sc);
        while end > payload && data[end - 1] == 0 {
            end -= 1; // the leading zero of a 4-byte start code, or trailing_zero_8bits
        }
        out.push(&data[payload..end]);
    }
    out
}

/// Writes NAL units as an MP4 sample with `length_size`-byte lengths.
pub fn to_length_prefixed<'a>(
    nals: impl IntoIterator<Item = &'a [u8]>,
    length_size: usize,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for nal in nals {
        let len = nal.len();
        ensure!(
            length_size == 4 || len < 1usize << (8 * length_size),
            "a {len}-byte NAL does not fit a {length_size}-byte length field"
        );
        for k in (0..length_size).rev() {
            out.push((len >> (8 * k)) as u8);
        }
        out.extend_from_slice(nal);
    }
    Ok(out)
}

/// An AVCDecoderConfigurationRecord (ISO/IEC 14496-15 5.3.3.1).
#[derive(Clone, Debug)]
pub struct AvcC {
    pub profile: u8,
    pub compat: u8,
    pub level: u8,
    pub length_size: usize,
    pub sps: Vec<Vec<u8>>,
    pub pps: Vec<Vec<u8>>,
    /// The High-profile extension (chroma_format, bit depths, SPS-ext), kept verbatim.
    pub ext: Vec<u8>,
}

impl AvcC {
    pub fn parse(d: &[u8]) -> Result<AvcC> {
        ensure!(d.len() >= 7 && d[0] == 1, "extradata is not an avcC record");
        let length_size = (d[4] & 3) as usize + 1;
        let mut i = 5;
        let read_sets = |count: usize, i: &mut usize| -> Result<Vec<Vec<u8>>> {
            let mut v = Vec::new();
            for _ in 0..count {
                ensure!(*i + 2 <= d.len(), "truncated avcC");
                let n = u16::from_be_bytes([d[*i], d[*i + 1]]) as usize;
                *i += 2;
                ensure!(*i + n <= d.len(), "truncated avcC");
                v.push(d[*i..*i + n].to_vec());
                *i += n;
            }
            Ok(v)
        };
        let nsps = (d[i] & 0x1f) as usize;
        i += 1;
        let sps = read_sets(nsps, &mut i)?;
        ensure!(i < d.len(), "truncated avcC");
        let npps = d[i] as usize;
        i += 1;
        let pps = read_sets(npps, &mut i)?;
        Ok(AvcC {
            profile: d[1],
            compat: d[2],
            level: d[3],
            length_size,
            sps,
            pps,
            ext: d[i..].to_vec(),
        })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![
            1,
            self.profile,
            self.compat,
            self.level,
            0xfc | (self.length_size as u8 - 1),
            0xe0 | self.sps.len() as u8,
        ];
        for s in &self.sps {
            out.extend_from_slice(&(s.len() as u16).to_be_bytes());
            out.extend_from_slice(s);
        }
        out.push(self.pps.len() as u8);
        for p in &self.pps {
            out.extend_from_slice(&(p.len() as u16).to_be_bytes());
            out.extend_from_slice(p);
        }
        out.extend_from_slice(&self.ext);
        out
    }
}

/// RBSP bit reader (emulation prevention bytes removed up front).
pub(crate) struct Bits {
    data: Vec<u8>,
    pos: usize,
}

impl Bits {
    pub(crate) fn new(nal_payload: &[u8]) -> Bits {
        Self::prefix(nal_payload, usize::MAX)
    }
    /// The first `max` bytes of the RBSP at most (a slice header, without its picture data).
    pub(crate) fn prefix(nal_payload: &[u8], max: usize) -> Bits {
        let mut data = Vec::with_capacity(nal_payload.len().min(max));
        let mut zeros = 0;
        for &b in nal_payload {
            if data.len() >= max {
                break;
            }
            if zeros >= 2 && b == 3 {
                zeros = 0;
                continue;
            }
            zeros = if b == 0 { zeros + 1 } else { 0 };
            data.push(b);
        }
        Bits { data, pos: 0 }
    }
    pub(crate) fn u(&mut self, n: u32) -> Result<u32> {
        let mut v = 0u32;
        for _ in 0..n {
            let byte = *self
                .data
                .get(self.pos / 8)
                .ok_or_else(|| "a parameter set ends early".to_string())?;
            v = (v << 1) | ((byte >> (7 - self.pos % 8)) & 1) as u32;
            self.pos += 1;
        }
        Ok(v)
    }
    pub(crate) fn flag(&mut self) -> Result<bool> {
        Ok(self.u(1)? == 1)
    }
    pub(crate) fn ue(&mut self) -> Result<u32> {
        let mut zeros = 0;
        while self.u(1)? == 0 {
            zeros += 1;
            ensure!(zeros < 32, "bad exp-Golomb code");
        }
        Ok(((1u64 << zeros) - 1 + self.u(zeros)? as u64) as u32)
    }
    pub(crate) fn se(&mut self) -> Result<i32> {
        let k = self.ue()? as i64;
        Ok(if k % 2 == 1 { (k + 1) / 2 } else { -(k / 2) } as i32)
    }
}

/// `value` when it is at most `max` (the range H.264 7.4.2.1.1 gives `name`), else why not.
pub(crate) fn in_range(value: u32, max: u32, name: &str) -> Result<u32> {
    ensure!(value <= max, "{name} is {value}; expected 0..={max}");
    Ok(value)
}

/// The SPS fields a re-encoded part has to agree with.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sps {
    pub profile_idc: u8,
    pub constraint_flags: u8,
    pub level_idc: u8,
    pub id: u32,
    pub chroma_format_idc: u32,
    pub bit_depth_luma: u32,
    pub bit_depth_chroma: u32,
    pub max_num_ref_frames: u32,
    pub width_mbs: u32,
    pub height_map_units: u32,
    pub frame_mbs_only: bool,
    /// left, right, top, bottom in crop units
    pub crop: [u32; 4],
    pub width: u32,
    pub height: u32,
    pub sar: Option<(u32, u32)>,
    pub overscan: Option<bool>,
    pub video_format: Option<u32>,
    pub full_range: bool,
    /// colour_primaries, transfer_characteristics, matrix_coefficients
    pub colour: Option<(u32, u32, u32)>,
    pub chroma_loc: Option<(u32, u32)>,
    pub max_num_reorder_frames: Option<u32>,
    /// What slice headers need (`bitstream::h264_refs`).
    pub separate_colour_plane: bool,
    pub log2_max_frame_num: u32,
    pub poc_type: u32,
    pub log2_max_poc_lsb: u32,
    pub delta_pic_order_always_zero: bool,
    pub gaps_in_frame_num_allowed: bool,
}

const SAR_TABLE: [(u32, u32); 17] = [
    (0, 0),
    (1, 1),
    (12, 11),
    (10, 11),
    (16, 11),
    (40, 33),
    (24, 11),
    (20, 11),
    (32, 11),
    (80, 33),
    (18, 11),
    (15, 11),
    (64, 33),
    (160, 99),
    (4, 3),
    (3, 2),
    (2, 1),
];

fn skip_scaling_list(b: &mut Bits, size: usize) -> Result<()> {
    let (mut last, mut next) = (8i32, 8i32);
    for _ in 0..size {
        if next != 0 {
            let delta = b.se()?;
            ensure!(
                (-128..=127).contains(&delta),
                "a scaling list's delta_scale is {delta}; expected -128..127"
            );
            next = (last + delta + 256) % 256;
        }
        last = if next == 0 { last } else { next };
    }
    Ok(())
}

fn skip_hrd(b: &mut Bits) -> Result<()> {
    let cpb_cnt = in_range(b.ue()?, 31, "cpb_cnt_minus1")? + 1;
    b.u(8)?; // bit_rate_scale, cpb_size_scale
    for _ in 0..cpb_cnt {
        b.ue()?;
        b.ue()?;
        b.u(1)?;
    }
    b.u(20)?; // four 5-bit lengths
    Ok(())
}

impl Sps {
    /// Parses an SPS NAL unit (with its one-byte header).
    pub fn parse(nal: &[u8]) -> Result<Sps> {
        ensure!(nal_type(nal) == NAL_SPS, "not an SPS");
        let mut b = Bits::new(&nal[1..]);
        let mut s = Sps {
            profile_idc: b.u(8)? as u8,
            constraint_flags: b.u(8)? as u8,
            level_idc: b.u(8)? as u8,
            id: in_range(b.ue()?, 31, "seq_parameter_set_id")?,
            chroma_format_idc: 1,
            bit_depth_luma: 8,
            bit_depth_chroma: 8,
            ..Default::default()
        };
        if matches!(
            s.profile_idc,
            100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
        ) {
            s.chroma_format_idc = in_range(b.ue()?, 3, "chroma_format_idc")?;
            if s.chroma_format_idc == 3 {
                s.separate_colour_plane = b.flag()?;
            }
            s.bit_depth_luma = in_range(b.ue()?, 6, "bit_depth_luma_minus8")? + 8;
            s.bit_depth_chroma = in_range(b.ue()?, 6, "bit_depth_chroma_minus8")? + 8;
            b.u(1)?; // qpprime_y_zero_transform_bypass_flag
            if b.flag()? {
                let n = if s.chroma_format_idc != 3 { 8 } else { 12 };
                for i in 0..n {
                    if b.flag()? {
                        skip_scaling_list(&mut b, if i < 6 { 16 } else { 64 })?;
                    }
                }
            }
        }
        s.log2_max_frame_num = in_range(b.ue()?, 12, "log2_max_frame_num_minus4")? + 4;
        s.poc_type = in_range(b.ue()?, 2, "pic_order_cnt_type")?;
        match s.poc_type {
            0 => {
                s.log2_max_poc_lsb =
                    in_range(b.ue()?, 12, "log2_max_pic_order_cnt_lsb_minus4")? + 4;
            }
            1 => {
                s.delta_pic_order_always_zero = b.flag()?;
                b.se()?;
                b.se()?;
                for _ in 0..in_range(b.ue()?, 255, "num_ref_frames_in_pic_order_cnt_cycle")? {
                    b.se()?;
                }
            }
            _ => {}
        }
        s.max_num_ref_frames = in_range(b.ue()?, 16, "max_num_ref_frames")?;
        s.gaps_in_frame_num_allowed = b.flag()?;
        // At most 2^16 macroblocks a side here; the picture's size is checked below as FFmpeg
        // checks it (av_image_check_size).
        s.width_mbs = in_range(b.ue()?, 1 << 16, "pic_width_in_mbs_minus1")? + 1;
        s.height_map_units = in_range(b.ue()?, 1 << 16, "pic_height_in_map_units_minus1")? + 1;
        s.frame_mbs_only = b.flag()?;
        if !s.frame_mbs_only {
            b.u(1)?; // mb_adaptive_frame_field_flag
        }
        b.u(1)?; // direct_8x8_inference_flag
        if b.flag()? {
            s.crop = [b.ue()?, b.ue()?, b.ue()?, b.ue()?];
        }
        let (cx, cy) = match s.chroma_format_idc {
            0 | 3 => (1, 1),
            1 => (2, 2),
            _ => (2, 1),
        };
        let cy = cy * (2 - s.frame_mbs_only as u32);
        let coded_width = s.width_mbs as u64 * 16;
        let coded_height = s.height_map_units as u64 * 16 * (2 - s.frame_mbs_only as u64);
        ensure!(
            (coded_width + 128) * (coded_height + 128) < (i32::MAX / 8) as u64,
            "the picture is {coded_width}x{coded_height}, larger than FFmpeg decodes"
        );
        let crop_x = cx as u64 * (s.crop[0] as u64 + s.crop[1] as u64);
        let crop_y = cy as u64 * (s.crop[2] as u64 + s.crop[3] as u64);
        ensure!(
            crop_x < coded_width && crop_y < coded_height,
            "the cropping ({crop_x} columns, {crop_y} rows) is not smaller than the coded picture ({coded_width}x{coded_height})"
        );
        s.width = (coded_width - crop_x) as u32;
        s.height = (coded_height - crop_y) as u32;
        if b.flag()? {
            // VUI
            if b.flag()? {
                let idc = b.u(8)?;
                // A SAR with a zero part is unspecified (H.264 E.2.1), as no SAR at all.
                s.sar = if idc == 255 {
                    Some((b.u(16)?, b.u(16)?)).filter(|&(w, h)| w != 0 && h != 0)
                } else {
                    SAR_TABLE
                        .get(idc as usize)
                        .copied()
                        .filter(|&(w, _)| w != 0)
                };
            }
            if b.flag()? {
                s.overscan = Some(b.flag()?);
            }
            if b.flag()? {
                s.video_format = Some(b.u(3)?);
                s.full_range = b.flag()?;
                if b.flag()? {
                    s.colour = Some((b.u(8)?, b.u(8)?, b.u(8)?));
                }
            }
            if b.flag()? {
                s.chroma_loc = Some((b.ue()?, b.ue()?));
            }
            if b.flag()? {
                b.u(32)?;
                b.u(32)?;
                b.u(1)?;
            }
            let nal_hrd = b.flag()?;
            if nal_hrd {
                skip_hrd(&mut b)?;
            }
            let vcl_hrd = b.flag()?;
            if vcl_hrd {
                skip_hrd(&mut b)?;
            }
            if nal_hrd || vcl_hrd {
                b.u(1)?;
            }
            b.u(1)?; // pic_struct_present_flag
            if b.flag()? {
                b.u(1)?;
                b.ue()?;
                b.ue()?;
                b.ue()?;
                b.ue()?;
                s.max_num_reorder_frames = Some(in_range(b.ue()?, 16, "max_num_reorder_frames")?);
                b.ue()?;
            }
        }
        Ok(s)
    }
}

/// (pps_id, sps_id) of a PPS NAL unit.
pub fn pps_ids(nal: &[u8]) -> Result<(u32, u32)> {
    ensure!(nal_type(nal) == NAL_PPS, "not a PPS");
    let mut b = Bits::new(&nal[1..]);
    Ok((
        in_range(b.ue()?, 255, "pic_parameter_set_id")?,
        in_range(b.ue()?, 31, "seq_parameter_set_id")?,
    ))
}

/// x264's names for the VUI colour codes (index = code), for `x264-params`.
pub fn x264_colour_names(
    prim: u32,
    trc: u32,
    matrix: u32,
) -> Option<(&'static str, &'static str, &'static str)> {
    const PRIM: [&str; 13] = [
        "",
        "bt709",
        "undef",
        "",
        "bt470m",
        "bt470bg",
        "smpte170m",
        "smpte240m",
        "film",
        "bt2020",
        "smpte428",
        "smpte431",
        "smpte432",
    ];
    const TRC: [&str; 19] = [
        "",
        "bt709",
        "undef",
        "",
        "bt470m",
        "bt470bg",
        "smpte170m",
        "smpte240m",
        "linear",
        "log100",
        "log316",
        "iec61966-2-4",
        "bt1361e",
        "iec61966-2-1",
        "bt2020-10",
        "bt2020-12",
        "smpte2084",
        "smpte428",
        "arib-std-b67",
    ];
    const MATRIX: [&str; 15] = [
        "GBR",
        "bt709",
        "undef",
        "",
        "fcc",
        "bt470bg",
        "smpte170m",
        "smpte240m",
        "YCgCo",
        "bt2020nc",
        "bt2020c",
        "smpte2085",
        "chroma-derived-nc",
        "chroma-derived-c",
        "ICtCp",
    ];
    let p = PRIM.get(prim as usize).filter(|s| !s.is_empty())?;
    let t = TRC.get(trc as usize).filter(|s| !s.is_empty())?;
    let m = MATRIX.get(matrix as usize).filter(|s| !s.is_empty())?;
    Some((p, t, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes an RBSP bit by bit (no emulation prevention: the tests' values make none).
    #[derive(Default)]
    struct Writer {
        bits: Vec<bool>,
    }

    impl Writer {
        fn u(&mut self, n: u32, v: u64) -> &mut Self {
            for i in (0..n).rev() {
                self.bits.push((v >> i) & 1 == 1);
            }
            self
        }
        fn ue(&mut self, v: u64) -> &mut Self {
            let x = v + 1;
            let len = 64 - x.leading_zeros();
            self.u(len - 1, 0).u(len, x)
        }
        fn se(&mut self, v: i64) -> &mut Self {
            self.ue(if v > 0 {
                2 * v as u64 - 1
            } else {
                (-2 * v) as u64
            })
        }
        /// The NAL unit: its header, the bits, a stop bit and padding.
        fn nal(&mut self, header: u8) -> Vec<u8> {
            self.u(1, 1);
            while self.bits.len() % 8 != 0 {
                self.bits.push(false);
            }
            let mut out = vec![header];
            out.extend(
                self.bits
                    .chunks(8)
                    .map(|c| c.iter().fold(0u8, |a, b| a << 1 | *b as u8)),
            );
            out
        }
    }

    /// A baseline SPS: `size` (width, height in macroblocks, minus 1), `crop` (left, right,
    /// top, bottom), `log2_max_frame_num_minus4`.
    fn baseline_sps(size: (u64, u64), crop: Option<[u64; 4]>, log2_frame_num: u64) -> Vec<u8> {
        let mut w = Writer::default();
        w.u(8, 66).u(8, 0xc0).u(8, 30).ue(0); // profile, constraints, level, id
        w.ue(log2_frame_num).ue(2); // log2_max_frame_num_minus4, pic_order_cnt_type 2
        w.ue(1).u(1, 0); // max_num_ref_frames, gaps
        w.ue(size.0).ue(size.1).u(1, 1).u(1, 1); // size, frame_mbs_only, direct_8x8
        match crop {
            Some(c) => {
                w.u(1, 1);
                for v in c {
                    w.ue(v);
                }
            }
            None => {
                w.u(1, 0);
            }
        }
        w.u(1, 0); // no VUI
        w.nal(0x67)
    }

    #[test]
    fn a_plain_sps_reads() {
        let s = Sps::parse(&baseline_sps((3, 3), Some([0, 1, 0, 2]), 0)).unwrap();
        assert_eq!((s.width, s.height), (62, 60));
        assert_eq!(s.log2_max_frame_num, 4);
    }

    /// Found by the `h264` fuzz target (fuzz/, tests/reliability/fuzz_replay.rs): a crop wider than the
    /// picture panicked (attempt to subtract with overflow); a picture of 2^32 macroblock rows
    /// panicked (attempt to multiply with overflow). Both are refused with the reason now.
    #[test]
    fn a_lying_size_or_crop_is_refused_not_a_panic() {
        let e = Sps::parse(&baseline_sps((3, 3), Some([40, 0, 0, 0]), 0)).unwrap_err();
        assert!(e.contains("cropping"), "{e}");
        let e = Sps::parse(&baseline_sps((3, 3), Some([0, 0, 0, 1 << 31]), 0)).unwrap_err();
        assert!(e.contains("cropping"), "{e}");
        let e = Sps::parse(&baseline_sps((3, (1 << 32) - 2), None, 0)).unwrap_err();
        assert!(e.contains("pic_height_in_map_units_minus1"), "{e}");
        let e = Sps::parse(&baseline_sps((4000, 4000), None, 0)).unwrap_err();
        assert!(e.contains("larger than FFmpeg decodes"), "{e}");
    }

    /// Values past H.264's ranges (7.4.2.1.1) are refused at the SPS, so that nothing
    /// downstream shifts or adds with them (`h264_refs`: `1 << log2_max_frame_num`).
    #[test]
    fn syntax_elements_out_of_range_are_refused() {
        let e = Sps::parse(&baseline_sps((3, 3), None, 13)).unwrap_err();
        assert!(e.contains("log2_max_frame_num_minus4 is 13"), "{e}");
        // High profile: chroma_format_idc 1, bit_depth_luma_minus8 = 2^32 - 2.
        let mut w = Writer::default();
        w.u(8, 100).u(8, 0).u(8, 30).ue(0).ue(1).ue((1 << 32) - 2);
        let e = Sps::parse(&w.nal(0x67)).unwrap_err();
        assert!(e.contains("bit_depth_luma_minus8"), "{e}");
        // A scaling list's delta_scale of 2^31 overflowed an i32 sum.
        let mut w = Writer::default();
        w.u(8, 100).u(8, 0).u(8, 30).ue(0).ue(1).ue(0).ue(0).u(1, 0);
        w.u(1, 1).u(1, 1).se(1 << 30).se(1 << 30);
        let e = Sps::parse(&w.nal(0x67)).unwrap_err();
        assert!(e.contains("delta_scale"), "{e}");
        let mut pps = Writer::default();
        pps.ue(256).ue(0);
        assert!(pps_ids(&pps.nal(0x68))
            .unwrap_err()
            .contains("pic_parameter_set_id"));
    }
}
