//! The independent oracle: everything here asks the ffmpeg / ffprobe CLI
//! (never vidprep) what a media file contains — stream metadata, exact frame
//! counts, per-frame timestamps, decoded pixels in presentation order — plus
//! pure-Rust comparisons on decoded frames (PSNR, MD5, frame codes).
//!
//! Functions panic with the ffmpeg command line and stderr tail when a tool
//! fails (tests want loud failures); `decode_check` is the non-panicking
//! probe for files that are expected to be broken.

use super::cmd::{self, p};
use super::code;
use super::md5::md5_hex;
use serde_json::Value;
use std::path::Path;

fn ok<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

// ---------------------------------------------------------------- probing

/// `ffprobe -show_streams -show_format -of json` as a JSON value.
pub fn probe(path: &Path) -> Value {
    let out = ok(cmd::ffprobe(&[
        "-v",
        "error",
        "-show_streams",
        "-show_format",
        "-of",
        "json",
        &p(path),
    ]));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("ffprobe JSON for {path:?}: {e}"))
}

/// How long a file presents, in seconds: ffprobe's format duration, except for one known
/// muxer quirk. FFmpeg 4.3's MP4/MOV muxer writes a movie header (`mvhd`) duration that counts
/// the audio encoder's priming samples (AAC: 1024 at the start, before the edit list's media
/// time), so ffprobe reports 21.3 ms more at 48 kHz than either track presents; 5.1 and later
/// write the edit lists' duration. Where the format duration exceeds the longest stream's
/// (edit-list) duration by exactly the first audio packet's negative timestamp, that stream
/// duration is the answer; any other difference is returned as ffprobe reports it.
pub fn presented_duration(path: &Path) -> f64 {
    let probe = probe(path);
    let format = num(&probe["format"]["duration"])
        .unwrap_or_else(|| panic!("no format duration for {path:?}: {probe}"));
    let longest = probe["streams"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| num(&s["duration"]))
        .fold(f64::NAN, f64::max);
    if longest.is_nan() || format <= longest + 0.0005 {
        return format;
    }
    let out = ok(cmd::ffprobe(&[
        "-v",
        "error",
        "-select_streams",
        "a:0",
        "-show_entries",
        "packet=pts_time",
        "-of",
        "csv=p=0",
        &p(path),
    ]));
    let first_audio_pts = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.trim().trim_end_matches(',').parse::<f64>().ok());
    match first_audio_pts {
        // The header's excess is the priming, rounded up to the movie timescale (1 ms).
        Some(t) if t < 0.0 && (format - longest + t).abs() <= 0.0015 => longest,
        _ => format,
    }
}

/// The first stream of `codec_type` ("video", "audio") in a probe result.
pub fn stream<'a>(probe: &'a Value, codec_type: &str) -> Option<&'a Value> {
    probe["streams"]
        .as_array()?
        .iter()
        .find(|s| s["codec_type"] == codec_type)
}

/// All streams of `codec_type` in a probe result.
pub fn streams<'a>(probe: &'a Value, codec_type: &str) -> Vec<&'a Value> {
    probe["streams"]
        .as_array()
        .map(|a| a.iter().filter(|s| s["codec_type"] == codec_type).collect())
        .unwrap_or_default()
}

/// First video stream of `path` (panics if none).
pub fn video_stream(path: &Path) -> Value {
    let pr = probe(path);
    stream(&pr, "video")
        .cloned()
        .unwrap_or_else(|| panic!("no video stream in {path:?}: {pr}"))
}

/// Parse an ffprobe number that may be a JSON number or a string ("N/A" -> None).
pub fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Parse "a/b" into (a, b).
pub fn ratio(v: &Value) -> Option<(i64, i64)> {
    let s = v.as_str()?;
    let (a, b) = s.split_once('/')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// (width, height) of the coded video stream (before rotation).
pub fn dimensions(path: &Path) -> (u32, u32) {
    let s = video_stream(path);
    (
        num(&s["width"]).expect("width") as u32,
        num(&s["height"]).expect("height") as u32,
    )
}

/// Video stream time base.
pub fn time_base(path: &Path) -> (i64, i64) {
    ratio(&video_stream(path)["time_base"]).expect("time_base")
}

/// Video stream start_time in seconds (None when ffprobe says N/A).
pub fn start_time(path: &Path) -> Option<f64> {
    num(&video_stream(path)["start_time"])
}

/// The input's start time in seconds as ffmpeg uses it for `-ss`/`-t` (ffprobe's format
/// `start_time`: the earliest start among the streams); 0 when ffprobe says N/A.
pub fn input_start_time(path: &Path) -> f64 {
    num(&probe(path)["format"]["start_time"]).unwrap_or(0.0)
}

/// Frame count the container header claims (`nb_frames`); None for N/A
/// (mkv, ts, webm never carry it).
pub fn header_frame_count(path: &Path) -> Option<u64> {
    num(&video_stream(path)["nb_frames"]).map(|f| f as u64)
}

/// Display rotation as ffprobe reports it: the Display Matrix side data's
/// `rotation` (degrees), else the legacy `rotate` tag; None if neither.
/// ffprobe 5.1 reports +90 for a file tagged `rotate=90`.
pub fn rotation(path: &Path) -> Option<f64> {
    rotation_of(&video_stream(path))
}

/// Same as [`rotation`] on an already probed stream.
pub fn rotation_of(s: &Value) -> Option<f64> {
    if let Some(sd) = s["side_data_list"].as_array() {
        for d in sd {
            if d["side_data_type"] == "Display Matrix" {
                if let Some(r) = num(&d["rotation"]) {
                    return Some(r);
                }
            }
        }
    }
    num(&s["tags"]["rotate"])
}

/// Exact number of decodable video frames (`ffprobe -count_frames`).
pub fn count_frames(path: &Path) -> u64 {
    let out = ok(cmd::ffprobe(&[
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-count_frames",
        "-show_entries",
        "stream=nb_read_frames",
        "-of",
        "json",
        &p(path),
    ]));
    let v: Value = serde_json::from_slice(&out.stdout).expect("ffprobe json");
    num(&v["streams"][0]["nb_read_frames"])
        .unwrap_or_else(|| panic!("no nb_read_frames for {path:?}: {v}")) as u64
}

/// Per-frame timing as ffprobe's `-show_frames` reports it (decoder output
/// order = presentation order). Timestamps in `time_base` units.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameInfo {
    pub pts: Option<i64>,
    pub pkt_dts: Option<i64>,
    pub best_effort: Option<i64>,
    pub key_frame: bool,
    /// "I", "P", "B", "?".
    pub pict_type: String,
}

/// All video frames' timestamps plus the stream time base.
#[derive(Clone, Debug)]
pub struct FrameTimes {
    pub time_base: (i64, i64),
    pub frames: Vec<FrameInfo>,
}

impl FrameTimes {
    /// Presentation time in seconds of each frame (best_effort_timestamp,
    /// falling back to pts); None where neither exists.
    pub fn seconds(&self) -> Vec<Option<f64>> {
        let (n, d) = self.time_base;
        self.frames
            .iter()
            .map(|f| {
                f.best_effort
                    .or(f.pts)
                    .map(|t| t as f64 * n as f64 / d as f64)
            })
            .collect()
    }
}

/// Per-frame timestamps of the first video stream.
pub fn frame_times(path: &Path) -> FrameTimes {
    let out = ok(cmd::ffprobe(&[
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-show_entries",
        "stream=time_base:frame=pts,pkt_dts,best_effort_timestamp,key_frame,pict_type",
        "-of",
        "json",
        &p(path),
    ]));
    let v: Value = serde_json::from_slice(&out.stdout).expect("ffprobe json");
    let time_base =
        ratio(&v["streams"][0]["time_base"]).unwrap_or_else(|| panic!("no time_base: {v}"));
    let int = |x: &Value| num(x).map(|f| f as i64);
    let frames = v["frames"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| FrameInfo {
                    pts: int(&f["pts"]),
                    pkt_dts: int(&f["pkt_dts"]),
                    best_effort: int(&f["best_effort_timestamp"]),
                    key_frame: num(&f["key_frame"]) == Some(1.0),
                    pict_type: f["pict_type"].as_str().unwrap_or("?").to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    FrameTimes { time_base, frames }
}

/// Presentation time (seconds) of every video frame; panics if a frame has
/// no timestamp.
pub fn frame_pts(path: &Path) -> Vec<f64> {
    frame_times(path)
        .seconds()
        .into_iter()
        .enumerate()
        .map(|(i, t)| t.unwrap_or_else(|| panic!("frame {i} of {path:?} has no timestamp")))
        .collect()
}

// ---------------------------------------------------------------- frames

/// The filter that brings a decoded picture into vidprep's pipeline layout: 4:2:0 at limited
/// range, which is what vidprep converts every YUV source to (full-range JPEG, MJPEG or VP9
/// included). The range is asked for, not left to ffmpeg: FFmpeg 4.3 and 5.1 convert a
/// full-range source to limited range in `yuv420p`, while 7.1 and 9.0 (which negotiate colour
/// range in filter graphs) keep it full range; `out_range=tv` gives 4.3's and 5.1's bytes.
pub const TO_PIPELINE_YUV: &str = "scale=out_range=tv,format=yuv420p";

/// The filter (ending in `format=rgb24`) that gives `path`'s pictures as vidprep's RGB
/// outputs hold them: a full-range source's own picture converted as `ffmpeg -pix_fmt rgb24`
/// converts it (its range said outright, `in_range=pc`, which FFmpeg 4.3's scale filter needs
/// for a tagged `yuv420p`; #52 item 1: vidprep made these from its limited-range pipeline
/// before, up to 3 levels off), any other through vidprep's 4:2:0 pipeline
/// ([`to_pipeline_yuv`]).
pub fn to_export_rgb(path: &Path) -> String {
    if source_is_full_range(path) {
        "scale=in_range=pc,format=rgb24".to_string()
    } else {
        format!("{},format=rgb24", to_pipeline_yuv(path))
    }
}

/// Frame `index` of `path` as the ffmpeg CLI decodes it, shown as RGB as vidprep's RGB
/// outputs make it ([`to_export_rgb`]: a full-range source's own picture, any other brought
/// into vidprep's pipeline layout, 4:2:0 at limited range): what vidprep's PNG of that frame
/// holds.
pub fn pipeline_rgb_at(path: &Path, index: usize) -> Frame {
    let out = ok(cmd::ffmpeg(&[
        "-v",
        "error",
        "-i",
        &p(path),
        "-vf",
        &format!("select=eq(n\\,{index}),{}", to_export_rgb(path)),
        "-frames:v",
        "1",
        "-f",
        "rawvideo",
        "-",
    ]));
    let (w, h) = dimensions(path);
    Frame {
        width: w as usize,
        height: h as usize,
        pix_fmt: PixFmt::Rgb24,
        data: out.stdout,
    }
}

/// [`TO_PIPELINE_YUV`] for `path`, with the source's range said outright when it is full
/// (`in_range=pc`): FFmpeg 4.3's scale filter ignores a decoded frame's colour range on
/// `yuv420p` (it trusts only the `yuvj` formats), so a full-range VP9 or H.264 frame would pass
/// unconverted there (25.8 dB off vidprep's, which converts as 5.1+ does); from 5.1 on the
/// filter reads the frame's range itself and the two strings give the same bytes.
pub fn to_pipeline_yuv(path: &Path) -> String {
    format!("scale={}format=yuv420p", range_options(path))
}

/// The scale filter's range options vidprep's pipeline implies for `path`, each followed by
/// the separator `,` that ends the scale filter: `in_range=pc:out_range=tv,` for a full-range
/// source, `out_range=tv,` otherwise.
fn range_options(path: &Path) -> &'static str {
    if source_is_full_range(path) {
        "in_range=pc:out_range=tv,"
    } else {
        "out_range=tv,"
    }
}

/// Whether ffprobe reports the first video frame of `path` as full range (`pc`).
pub fn source_is_full_range(path: &Path) -> bool {
    let Ok(out) = cmd::ffprobe(&[
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-read_intervals",
        "%+#1",
        "-show_entries",
        "frame=color_range",
        "-of",
        "csv=p=0",
        &p(path),
    ]) else {
        return false;
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.trim().trim_end_matches(',') == "pc")
}

/// Raw pixel layouts the oracle decodes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PixFmt {
    Gray,
    Yuv420p,
    Rgb24,
}

impl PixFmt {
    pub fn ffmpeg_name(self) -> &'static str {
        match self {
            PixFmt::Gray => "gray",
            PixFmt::Yuv420p => "yuv420p",
            PixFmt::Rgb24 => "rgb24",
        }
    }
    /// (width, height, bytes per pixel) of each plane.
    pub fn planes(self, w: usize, h: usize) -> Vec<(usize, usize, usize)> {
        match self {
            PixFmt::Gray => vec![(w, h, 1)],
            PixFmt::Rgb24 => vec![(w, h, 3)],
            PixFmt::Yuv420p => {
                let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
                vec![(w, h, 1), (cw, ch, 1), (cw, ch, 1)]
            }
        }
    }
    /// Bytes of one frame.
    pub fn frame_bytes(self, w: usize, h: usize) -> usize {
        self.planes(w, h).iter().map(|(a, b, c)| a * b * c).sum()
    }
}

/// One decoded frame: tightly packed planes (no padding), as ffmpeg's
/// rawvideo output writes them.
#[derive(Clone, PartialEq, Eq)]
pub struct Frame {
    pub width: usize,
    pub height: usize,
    pub pix_fmt: PixFmt,
    pub data: Vec<u8>,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Frame({}x{} {:?}, md5 {})",
            self.width,
            self.height,
            self.pix_fmt,
            self.md5()
        )
    }
}

impl Frame {
    /// Plane `i` as bytes.
    pub fn plane(&self, i: usize) -> &[u8] {
        let planes = self.pix_fmt.planes(self.width, self.height);
        let off: usize = planes[..i].iter().map(|(a, b, c)| a * b * c).sum();
        let (w, h, bpp) = planes[i];
        &self.data[off..off + w * h * bpp]
    }
    /// Number of planes.
    pub fn num_planes(&self) -> usize {
        self.pix_fmt.planes(self.width, self.height).len()
    }
    /// Luma as a packed width*height plane (gray/yuv: plane 0; rgb24:
    /// full-range BT.601 Y = 0.299R + 0.587G + 0.114B).
    pub fn luma(&self) -> Vec<u8> {
        match self.pix_fmt {
            PixFmt::Gray | PixFmt::Yuv420p => self.plane(0).to_vec(),
            PixFmt::Rgb24 => self
                .data
                .chunks_exact(3)
                .map(|c| {
                    (0.299 * c[0] as f64 + 0.587 * c[1] as f64 + 0.114 * c[2] as f64).round() as u8
                })
                .collect(),
        }
    }
    /// The frame code (see `code.rs`), block size auto-detected.
    pub fn code(&self) -> Option<u32> {
        let l = self.luma();
        code::read_code(&l, self.width, self.height, self.width)
    }
    /// Try the code at 0, 90, 180, 270 degrees of clockwise rotation
    /// applied to this frame; returns (code, degrees that made it readable).
    pub fn code_any_orientation(&self) -> Option<(u32, i32)> {
        [0, 90, 180, 270]
            .into_iter()
            .find_map(|d| self.rotate_cw(d).code().map(|c| (c, d)))
    }
    /// MD5 of the raw frame bytes (equals ffmpeg `framemd5` of the same
    /// pixel format and size).
    pub fn md5(&self) -> String {
        md5_hex(&self.data)
    }
    /// Bytes of pixel (x, y) in plane `i`.
    pub fn pixel(&self, i: usize, x: usize, y: usize) -> &[u8] {
        let (w, _, bpp) = self.pix_fmt.planes(self.width, self.height)[i];
        &self.plane(i)[(y * w + x) * bpp..(y * w + x + 1) * bpp]
    }
    /// The frame rotated clockwise by `deg` (a multiple of 90).
    pub fn rotate_cw(&self, deg: i32) -> Frame {
        let turns = deg.rem_euclid(360) / 90;
        assert!(
            deg.rem_euclid(90) == 0,
            "rotate_cw({deg}): only multiples of 90"
        );
        let mut f = self.clone();
        for _ in 0..turns {
            f = f.rotate90_cw();
        }
        f
    }
    fn rotate90_cw(&self) -> Frame {
        let (nw, nh) = (self.height, self.width);
        let mut data = Vec::with_capacity(self.data.len());
        for (i, &(w, h, bpp)) in self
            .pix_fmt
            .planes(self.width, self.height)
            .iter()
            .enumerate()
        {
            let src = self.plane(i);
            // new plane is h x w; new(x', y') = old(x = y', y = h-1-x')
            for y2 in 0..w {
                for x2 in 0..h {
                    let (x, y) = (y2, h - 1 - x2);
                    data.extend_from_slice(&src[(y * w + x) * bpp..(y * w + x + 1) * bpp]);
                }
            }
        }
        Frame {
            width: nw,
            height: nh,
            pix_fmt: self.pix_fmt,
            data,
        }
    }
}

/// How to decode.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodeOpts {
    pub pix_fmt: PixFmt,
    /// Scale every frame to (w, h) after autorotation.
    pub size: Option<(u32, u32)>,
    /// ffmpeg's default autorotation (display matrix applied). Default true.
    pub autorotate: bool,
    /// swscale flags for the conversion/scale, e.g. "bicubic" (default) or
    /// "area", "neighbor".
    pub scale_flags: Option<String>,
    /// Decoder threads (`-threads N` before the input); None: ffmpeg's own count.
    pub threads: Option<usize>,
}

impl DecodeOpts {
    pub fn new(pix_fmt: PixFmt) -> Self {
        DecodeOpts {
            pix_fmt,
            size: None,
            autorotate: true,
            scale_flags: None,
            threads: None,
        }
    }
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }
    pub fn size(mut self, w: u32, h: u32) -> Self {
        self.size = Some((w, h));
        self
    }
    pub fn autorotate(mut self, on: bool) -> Self {
        self.autorotate = on;
        self
    }
    pub fn scale_flags(mut self, f: &str) -> Self {
        self.scale_flags = Some(f.to_string());
        self
    }
}

/// Output size the decoder will produce for `opts`.
fn output_size(path: &Path, opts: &DecodeOpts) -> (usize, usize) {
    if let Some((w, h)) = opts.size {
        return (w as usize, h as usize);
    }
    let s = video_stream(path);
    let (w, h) = (
        num(&s["width"]).expect("width") as usize,
        num(&s["height"]).expect("height") as usize,
    );
    let rot = if opts.autorotate {
        rotation_of(&s).unwrap_or(0.0)
    } else {
        0.0
    };
    let quarter = ((rot / 90.0).round() as i64).rem_euclid(2) == 1;
    if quarter {
        (h, w)
    } else {
        (w, h)
    }
}

fn decode_args(path: &Path, opts: &DecodeOpts, extra_filter: Option<&str>) -> Vec<String> {
    let mut a: Vec<String> = vec!["-v".into(), "error".into()];
    if !opts.autorotate {
        a.push("-noautorotate".into());
    }
    if let Some(n) = opts.threads {
        a.extend(["-threads".into(), n.to_string()]);
    }
    a.extend(["-i".into(), p(path), "-map".into(), "0:v:0".into()]);
    let mut filters: Vec<String> = Vec::new();
    if let Some(f) = extra_filter {
        filters.push(f.to_string());
    }
    // The scale filter's options: the size, the flags, and for yuv420p the range vidprep's
    // pipeline holds (limited, see TO_PIPELINE_YUV).
    let mut scale: Vec<String> = Vec::new();
    if let Some((w, h)) = opts.size {
        scale.push(format!("{w}:{h}"));
    }
    if opts.pix_fmt == PixFmt::Yuv420p {
        if let Some(f) = &opts.scale_flags {
            scale.push(format!("flags={f}"));
        }
        if source_is_full_range(path) {
            // Said outright for FFmpeg 4.3, whose scale filter ignores the frame's range on
            // yuv420p (see `to_pipeline_yuv`).
            scale.push("in_range=pc".into());
        }
        scale.push("out_range=tv".into());
    } else if let (Some(f), Some(_)) = (&opts.scale_flags, opts.size) {
        scale.push(format!("flags={f}"));
    }
    if !scale.is_empty() {
        filters.push(format!("scale={}", scale.join(":")));
    }
    if !filters.is_empty() {
        a.extend(["-vf".into(), filters.join(",")]);
    }
    if opts.size.is_none() {
        if let Some(f) = &opts.scale_flags {
            a.extend(["-sws_flags".into(), f.clone()]);
        }
    }
    a.extend(cmd::passthrough().map(String::from));
    // (ffmpeg exits 69 when more than 2/3 of the packets fail to decode, its output complete:
    // a stream that damaged is still decoded as ffmpeg decodes it.)
    a.extend(["-max_error_rate".into(), "1".into()]);
    a.extend(["-pix_fmt".into(), opts.pix_fmt.ffmpeg_name().into()]);
    a
}

fn split_frames(raw: Vec<u8>, w: usize, h: usize, pf: PixFmt, what: &str) -> Vec<Frame> {
    let fb = pf.frame_bytes(w, h);
    assert!(
        fb > 0 && raw.len() / fb * fb == raw.len(),
        "{what}: {} bytes of raw video is not a whole number of {w}x{h} {pf:?} frames ({fb} bytes each)",
        raw.len()
    );
    raw.chunks_exact(fb)
        .map(|c| Frame {
            width: w,
            height: h,
            pix_fmt: pf,
            data: c.to_vec(),
        })
        .collect()
}

/// Decode every video frame in presentation order (no duplication or
/// dropping: `-fps_mode passthrough`), autorotation on.
pub fn decode_frames(path: &Path, pix_fmt: PixFmt, size: Option<(u32, u32)>) -> Vec<Frame> {
    let mut o = DecodeOpts::new(pix_fmt);
    o.size = size;
    decode_frames_opts(path, &o)
}

/// Decode every video frame with explicit options. Also works on still
/// images (png/jpg) ffmpeg can read.
pub fn decode_frames_opts(path: &Path, opts: &DecodeOpts) -> Vec<Frame> {
    let (w, h) = output_size(path, opts);
    let mut a = decode_args(path, opts, None);
    a.extend(["-f".into(), "rawvideo".into(), "-".into()]);
    let out = ok(cmd::ffmpeg(&a));
    split_frames(out.stdout, w, h, opts.pix_fmt, &cmd::cmdline("ffmpeg", &a))
}

/// Decode a still image (png, jpg, bmp, ... anything ffmpeg reads as one
/// frame), e.g. a frame exported by vidprep.
pub fn decode_image(path: &Path, pix_fmt: PixFmt) -> Frame {
    let mut v = decode_frames(path, pix_fmt, None);
    assert!(
        v.len() == 1,
        "{path:?}: expected one image, decoded {} frames",
        v.len()
    );
    v.pop().unwrap()
}

/// Decode only frame `index` (0-based, presentation order) via the select
/// filter. Panics if the video has no such frame.
pub fn decode_frame_at(path: &Path, index: u64, pix_fmt: PixFmt) -> Frame {
    decode_frame_at_opts(path, index, &DecodeOpts::new(pix_fmt))
}

/// [`decode_frame_at`] with explicit options.
pub fn decode_frame_at_opts(path: &Path, index: u64, opts: &DecodeOpts) -> Frame {
    let (w, h) = output_size(path, opts);
    let sel = format!("select='eq(n,{index})'");
    let mut a = decode_args(path, opts, Some(&sel));
    a.extend([
        "-frames:v".into(),
        "1".into(),
        "-f".into(),
        "rawvideo".into(),
        "-".into(),
    ]);
    let out = ok(cmd::ffmpeg(&a));
    let what = cmd::cmdline("ffmpeg", &a);
    let mut v = split_frames(out.stdout, w, h, opts.pix_fmt, &what);
    assert!(
        v.len() == 1,
        "{what}: expected frame {index}, got {} frames",
        v.len()
    );
    v.pop().unwrap()
}

/// ffmpeg's own per-frame MD5 (`-f framemd5`) of the decoded frames in
/// `opts.pix_fmt`; equals `Frame::md5()` of `decode_frames_opts`.
pub fn framemd5(path: &Path, opts: &DecodeOpts) -> Vec<String> {
    let mut a = decode_args(path, opts, None);
    a.extend(["-f".into(), "framemd5".into(), "-".into()]);
    let out = ok(cmd::ffmpeg(&a));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.rsplit(',').next().unwrap().trim().to_string())
        .collect()
}

/// Codes of all frames (gray decode, autorotation on); panics naming the
/// frames whose code cannot be read.
pub fn frame_codes(path: &Path) -> Vec<u32> {
    let codes = frame_codes_opts(path, &DecodeOpts::new(PixFmt::Gray));
    let bad: Vec<usize> = codes
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_none())
        .map(|(i, _)| i)
        .collect();
    assert!(
        bad.is_empty(),
        "{path:?}: frame code unreadable in {} of {} frames (first: {:?})",
        bad.len(),
        codes.len(),
        &bad[..bad.len().min(10)]
    );
    codes.into_iter().map(Option::unwrap).collect()
}

/// Codes of all frames with explicit decode options (None = unreadable).
pub fn frame_codes_opts(path: &Path, opts: &DecodeOpts) -> Vec<Option<u32>> {
    decode_frames_opts(path, opts)
        .iter()
        .map(Frame::code)
        .collect()
}

// ---------------------------------------------------------------- quality

/// PSNR (dB) for a mean squared error over 8-bit samples; inf for mse = 0.
pub fn psnr_from_mse(mse: f64) -> f64 {
    if mse <= 0.0 {
        f64::INFINITY
    } else {
        10.0 * (255.0f64 * 255.0 / mse).log10()
    }
}

fn plane_sse(a: &[u8], b: &[u8]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| ((x as i32 - y as i32) * (x as i32 - y as i32)) as f64)
        .sum()
}

fn assert_same_layout(a: &Frame, b: &Frame) {
    assert!(
        a.width == b.width && a.height == b.height && a.pix_fmt == b.pix_fmt,
        "PSNR of different layouts: {a:?} vs {b:?}"
    );
}

/// PSNR of each plane (Y, U, V for yuv420p; one value for gray / rgb24).
pub fn psnr_planes(a: &Frame, b: &Frame) -> Vec<f64> {
    assert_same_layout(a, b);
    (0..a.num_planes())
        .map(|i| {
            let (pa, pb) = (a.plane(i), b.plane(i));
            psnr_from_mse(plane_sse(pa, pb) / pa.len() as f64)
        })
        .collect()
}

/// Combined PSNR over all samples of all planes (for yuv420p this is
/// ffmpeg's `psnr_avg`: MSE weighted by plane size); inf when identical.
pub fn psnr(a: &Frame, b: &Frame) -> f64 {
    assert_same_layout(a, b);
    psnr_from_mse(plane_sse(&a.data, &b.data) / a.data.len() as f64)
}

/// One line of ffmpeg's psnr filter statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct FfPsnr {
    pub n: u64,
    pub psnr_avg: f64,
    pub psnr_y: f64,
    pub psnr_u: f64,
    pub psnr_v: f64,
}

/// ffmpeg's psnr filter between two videos, frame i against frame i (both
/// converted to yuv420p, timestamps replaced by the frame index so the
/// filter pairs by index). Independent cross-check of [`psnr`].
pub fn ffmpeg_psnr_frames(a: &Path, b: &Path) -> Vec<FfPsnr> {
    let graph = "[0:v]format=yuv420p,settb=1/25,setpts=N[a];[1:v]format=yuv420p,settb=1/25,setpts=N[b];[a][b]psnr=stats_file=-";
    let args = [
        "-v",
        "error",
        "-i",
        &p(a),
        "-i",
        &p(b),
        "-lavfi",
        graph,
        "-f",
        "null",
        "-",
    ];
    let out = ok(cmd::ffmpeg(&args));
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter(|l| l.starts_with("n:"))
        .map(|l| {
            let get = |k: &str| -> f64 {
                l.split_whitespace()
                    .find_map(|kv| kv.strip_prefix(k).and_then(|r| r.strip_prefix(':')))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("psnr stats line without {k}: {l}"))
            };
            FfPsnr {
                n: get("n") as u64,
                psnr_avg: get("psnr_avg"),
                psnr_y: get("psnr_y"),
                psnr_u: get("psnr_u"),
                psnr_v: get("psnr_v"),
            }
        })
        .collect()
}

// ---------------------------------------------------------------- damage

/// Result of decoding a whole file with
/// `ffmpeg -v error -i F -map 0 -fps_mode passthrough -enc_time_base:v -1 -f null -` (`demux` for `-1` from
/// FFmpeg 7 on, see `cmd::source_time_base`).
#[derive(Clone, Debug)]
pub struct DecodeCheck {
    /// ffmpeg exited with status 0 (it often does even on damaged input).
    pub exit_ok: bool,
    /// Non-empty stderr lines at `-v error` (errors ffmpeg reported).
    pub error_lines: Vec<String>,
    /// The command line that was run.
    pub command: String,
}

impl DecodeCheck {
    /// No error reported and exit status 0.
    pub fn is_clean(&self) -> bool {
        self.exit_ok && self.error_lines.is_empty()
    }
}

/// Decode every stream and collect what ffmpeg complains about; never panics
/// on a broken file.
pub fn decode_check(path: &Path) -> DecodeCheck {
    // passthrough + the demuxer's time base: VFR input must not collide in
    // the null muxer's default 1/fps time base (false "non monotonic dts").
    let args = [
        "-hide_banner",
        "-nostdin",
        "-v",
        "error",
        "-i",
        &p(path),
        "-map",
        "0",
        cmd::passthrough()[0],
        cmd::passthrough()[1],
        "-enc_time_base:v",
        cmd::source_time_base(),
        "-f",
        "null",
        "-",
    ];
    let command = cmd::cmdline("ffmpeg", &args);
    match cmd::run_raw("ffmpeg", &args) {
        Ok(out) => DecodeCheck {
            exit_ok: out.status.success(),
            error_lines: String::from_utf8_lossy(&out.stderr)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect(),
            command,
        },
        Err(e) => DecodeCheck {
            exit_ok: false,
            error_lines: vec![e],
            command,
        },
    }
}
