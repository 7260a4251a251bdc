//! Synthetic, frame-coded test videos made with the ffmpeg CLI from lavfi
//! sources (`testsrc2` by default: moving content, so encoders do real
//! work), with the frame index painted in as the frame code (see `code.rs`)
//! and a human-readable frame number under it (drawtext, only when the
//! DejaVu font is installed). Also the deliberate damage used by error
//! tests: corrupt/truncated files and an AVI whose header lies about its
//! frame count.

use super::cmd::{self, p};
use super::code::{self, MAX_CODE};
use super::md5::md5_hex;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Font used for the readable frame number, if present.
pub const LABEL_FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// Video codec of a synthetic video.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    /// libx264 (`-preset` ultrafast by default, crf 20). Odd sizes need
    /// yuv444p (chosen automatically).
    H264,
    /// libx265 (ultrafast). Odd sizes need yuv444p (chosen automatically).
    H265,
    /// ffmpeg's mpeg4 (Part 2), `-q:v 3`. Odd sizes work in yuv420p.
    Mpeg4,
    /// mpeg2video, `-q:v 3` (good in .ts).
    Mpeg2,
    /// FFV1, lossless, intra-only.
    Ffv1,
    /// libvpx-vp9 realtime (mkv/webm).
    Vp9,
    /// MJPEG, intra-only, yuvj420p.
    Mjpeg,
}

/// Audio codec of the optional sine-tone track.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AudioCodec {
    /// AAC (ffmpeg native encoder); default except in AVI.
    Aac,
    /// MP3 (libmp3lame); default in AVI.
    Mp3,
    /// 16-bit PCM (mov/mkv/avi).
    Pcm,
}

/// lavfi content under the code.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// `testsrc2` (moving pattern, cheap). Default.
    Testsrc2,
    /// `mandelbrot` (continuously zooming fractal).
    Mandelbrot,
    /// Any lavfi source name accepting `size` and `rate`, e.g. `smptehdbars`.
    Named(String),
}

/// Deliberate damage applied after writing.
#[derive(Clone, Debug, PartialEq)]
pub enum Corruption {
    /// Keep only the first `keep_fraction` of the bytes.
    Truncate { keep_fraction: f64 },
    /// Overwrite `len_fraction` of the file starting at `at_fraction` with
    /// deterministic pseudo-random bytes (xorshift, `seed`).
    Garbage {
        at_fraction: f64,
        len_fraction: f64,
        seed: u64,
    },
}

/// Builder for a synthetic video. All options have defaults: 25 fps, 48
/// frames, H.264 in mp4, testsrc2, block 16, label on.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthVideo {
    pub width: u32,
    pub height: u32,
    pub fps: (u32, u32),
    pub frames: u32,
    pub gop: Option<u32>,
    pub bframes: Option<u32>,
    pub codec: Codec,
    pub container: Option<String>,
    pub start_offset: Option<f64>,
    pub vfr_ms: Option<Vec<u32>>,
    pub rotation: Option<i32>,
    pub audio_tone: Option<(f64, AudioCodec)>,
    pub pix_fmt: Option<String>,
    pub preset: String,
    pub quality: Option<u32>,
    pub block: u32,
    pub label: bool,
    pub source: Source,
    pub faststart: bool,
    pub corrupt: Option<Corruption>,
    pub avi_header_frames: Option<u32>,
    pub extra_args: Vec<String>,
}

/// What was written.
#[derive(Clone, Debug)]
pub struct SynthInfo {
    pub path: PathBuf,
    pub width: u32,
    pub height: u32,
    /// Frames encoded (= decodable frames unless damaged).
    pub frames: u32,
    pub fps: (u32, u32),
    /// Block size of the code in source pixels.
    pub block: u32,
    /// Designed presentation time of each frame in seconds, relative to the
    /// first frame (container start offsets not included).
    pub times: Vec<f64>,
    /// The ffmpeg command lines that made it (for failure messages).
    pub commands: Vec<String>,
}

impl SynthVideo {
    /// A `width` x `height` video with the defaults above.
    pub fn new(width: u32, height: u32) -> Self {
        SynthVideo {
            width,
            height,
            fps: (25, 1),
            frames: 48,
            gop: None,
            bframes: None,
            codec: Codec::H264,
            container: None,
            start_offset: None,
            vfr_ms: None,
            rotation: None,
            audio_tone: None,
            pix_fmt: None,
            preset: "ultrafast".into(),
            quality: None,
            block: code::DEFAULT_BLOCK,
            label: true,
            source: Source::Testsrc2,
            faststart: false,
            corrupt: None,
            avi_header_frames: None,
            extra_args: Vec::new(),
        }
    }
    /// Frame rate num/den (CFR; base for VFR's source).
    pub fn fps(mut self, num: u32, den: u32) -> Self {
        self.fps = (num, den);
        self
    }
    /// Exact number of frames to encode (<= 16383, the code's range).
    pub fn frames(mut self, n: u32) -> Self {
        self.frames = n;
        self
    }
    /// Fixed GOP length (x264/x265: keyint=min-keyint=n, scenecut off).
    pub fn gop(mut self, n: u32) -> Self {
        self.gop = Some(n);
        self
    }
    /// Max consecutive B-frames (H.264/H.265/MPEG-4/MPEG-2).
    pub fn bframes(mut self, n: u32) -> Self {
        self.bframes = Some(n);
        self
    }
    pub fn codec(mut self, c: Codec) -> Self {
        self.codec = c;
        self
    }
    /// Container by extension: mp4, mov, mkv, webm, ts, avi. Default: the
    /// extension of the path given to `write` (mp4 for `cached`).
    pub fn container(mut self, ext: &str) -> Self {
        self.container = Some(ext.to_string());
        self
    }
    /// Shift all output timestamps by `secs` (`-output_ts_offset`).
    pub fn start_offset(mut self, secs: f64) -> Self {
        self.start_offset = Some(secs);
        self
    }
    /// Variable frame rate: frame i lasts `pattern[i % len]` milliseconds
    /// (time base 1/1000, `-fps_mode passthrough`). Not for AVI.
    pub fn vfr(mut self, pattern_ms: &[u32]) -> Self {
        self.vfr_ms = Some(pattern_ms.to_vec());
        self
    }
    /// Rotation metadata: the legacy `rotate=deg` tag, turned into a Display
    /// Matrix by a stream-copy remux (ffmpeg 5.1 has no `-display_rotation`
    /// and drops the tag while encoding); mp4/mov only. ffprobe 5.1 then
    /// reports rotation 90 / -180 / -90 for deg 90 / 180 / 270, and ffmpeg's
    /// autorotation shows the coded picture turned `deg` counter-clockwise.
    pub fn rotation(mut self, deg: i32) -> Self {
        self.rotation = Some(deg);
        self
    }
    /// Add a sine tone audio track (AAC, or MP3 in AVI), as long as the video.
    pub fn audio_tone(mut self, freq_hz: f64) -> Self {
        self.audio_tone = Some((freq_hz, AudioCodec::Aac));
        self
    }
    /// Sine tone with an explicit audio codec.
    pub fn audio_tone_codec(mut self, freq_hz: f64, c: AudioCodec) -> Self {
        self.audio_tone = Some((freq_hz, c));
        self
    }
    /// Output pixel format (default: yuv420p; yuv444p for odd sizes with
    /// x264/x265; yuvj420p for MJPEG).
    pub fn pix_fmt(mut self, f: &str) -> Self {
        self.pix_fmt = Some(f.to_string());
        self
    }
    /// x264/x265 preset (default ultrafast).
    pub fn preset(mut self, p: &str) -> Self {
        self.preset = p.to_string();
        self
    }
    /// CRF (x264/x265/vp9) or q:v (mpeg4/mpeg2/mjpeg).
    pub fn quality(mut self, q: u32) -> Self {
        self.quality = Some(q);
        self
    }
    /// Block size of the frame code in pixels (default 16).
    pub fn code_block(mut self, px: u32) -> Self {
        self.block = px;
        self
    }
    /// Draw the readable frame number under the code (default true; needs
    /// the DejaVu font, silently skipped without it).
    pub fn label(mut self, on: bool) -> Self {
        self.label = on;
        self
    }
    pub fn source(mut self, s: Source) -> Self {
        self.source = s;
        self
    }
    /// mp4/mov: moov atom first (`-movflags +faststart`), so a truncated file
    /// still carries the full sample table (header frame count > decodable).
    pub fn faststart(mut self, on: bool) -> Self {
        self.faststart = on;
        self
    }
    /// Damage the file after writing.
    pub fn corrupt(mut self, c: Corruption) -> Self {
        self.corrupt = Some(c);
        self
    }
    /// AVI only: patch the header frame counts (avih dwTotalFrames and the
    /// video strh dwLength) to `n` after writing; ffprobe then reports
    /// nb_frames = n and a matching duration, while `frames` decode cleanly.
    pub fn avi_header_frames(mut self, n: u32) -> Self {
        self.avi_header_frames = Some(n);
        self
    }
    /// Extra ffmpeg output options (inserted before the output path).
    pub fn extra_args(mut self, args: &[&str]) -> Self {
        self.extra_args.extend(args.iter().map(|s| s.to_string()));
        self
    }

    /// Designed presentation times (seconds from the first frame).
    pub fn expected_times(&self) -> Vec<f64> {
        match &self.vfr_ms {
            Some(pat) => {
                let mut t = 0u64;
                (0..self.frames as usize)
                    .map(|i| {
                        let now = t;
                        t += pat[i % pat.len()] as u64;
                        now as f64 / 1000.0
                    })
                    .collect()
            }
            None => (0..self.frames as u64)
                .map(|i| (i * self.fps.1 as u64) as f64 / self.fps.0 as f64)
                .collect(),
        }
    }

    /// Total designed duration in seconds.
    pub fn duration(&self) -> f64 {
        match &self.vfr_ms {
            Some(pat) => {
                (0..self.frames as usize)
                    .map(|i| pat[i % pat.len()] as u64)
                    .sum::<u64>() as f64
                    / 1000.0
            }
            None => self.frames as f64 * self.fps.1 as f64 / self.fps.0 as f64,
        }
    }

    fn ext_for(&self, path: &Path) -> Result<String, String> {
        if let Some(c) = &self.container {
            return Ok(c.clone());
        }
        path.extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .ok_or_else(|| format!("no container given and no extension on {path:?}"))
    }

    fn default_pix_fmt(&self) -> &'static str {
        let odd = self.width % 2 == 1 || self.height % 2 == 1;
        match self.codec {
            Codec::Mjpeg => "yuvj420p",
            Codec::H264 | Codec::H265 if odd => "yuv444p",
            _ => "yuv420p",
        }
    }

    /// The video filter chain (source crop, code, label, VFR timestamps).
    pub fn video_filter(&self) -> String {
        let b = self.block;
        let mut f: Vec<String> = Vec::new();
        if self.width % 2 == 1 || self.height % 2 == 1 {
            // lavfi sources round odd sizes down in yuv420p: make it even,
            // go to 4:4:4 and crop to the exact odd size.
            f.push(format!(
                "format=yuv444p,crop={}:{}:0:0",
                self.width, self.height
            ));
        }
        f.push(code::ffmpeg_code_filter(b));
        let label_y = code::ROWS * b + 2;
        if self.label && Path::new(LABEL_FONT).exists() && self.height >= label_y + b + 2 {
            f.push(format!(
                "drawtext=fontfile={LABEL_FONT}:text='%{{frame_num}}':x=2:y={label_y}:fontsize={b}:fontcolor=white:box=1:boxcolor=black:boxborderw=2"
            ));
        }
        if let Some(pat) = &self.vfr_ms {
            let l = pat.len();
            let sum: u64 = pat.iter().map(|&d| d as u64).sum();
            // prefix(m) = sum of the first m durations, as nested ifs.
            let mut prefix = Vec::with_capacity(l);
            let mut acc = 0u64;
            for &d in pat {
                prefix.push(acc);
                acc += d as u64;
            }
            let mut e = format!("{}", prefix[l - 1]);
            for m in (0..l - 1).rev() {
                e = format!("if(eq(mod(N,{l}),{m}),{},{e})", prefix[m]);
            }
            f.push(format!("settb=1/1000,setpts='floor(N/{l})*{sum}+{e}'"));
        }
        f.join(",")
    }

    /// Full argument list of the encoding ffmpeg call writing `out` with
    /// muxer extension `ext` (without the leading `ffmpeg -hide_banner ...`).
    fn encode_args(&self, out: &Path, ext: &str, with_offset: bool) -> Result<Vec<String>, String> {
        let (sw, sh) = (self.width + self.width % 2, self.height + self.height % 2);
        let rate = format!("{}/{}", self.fps.0, self.fps.1);
        let src = match &self.source {
            Source::Testsrc2 => format!("testsrc2=size={sw}x{sh}:rate={rate}"),
            Source::Mandelbrot => format!("mandelbrot=size={sw}x{sh}:rate={rate}"),
            Source::Named(n) => format!("{n}=size={sw}x{sh}:rate={rate}"),
        };
        let mut a: Vec<String> = vec![
            "-v".into(),
            "error".into(),
            "-f".into(),
            "lavfi".into(),
            "-i".into(),
            src,
        ];
        if let Some((freq, _)) = self.audio_tone {
            a.extend(["-f".into(), "lavfi".into(), "-i".into()]);
            a.push(format!(
                "sine=frequency={freq}:sample_rate=48000:duration={}",
                self.duration()
            ));
        }
        a.extend(["-vf".into(), self.video_filter()]);
        a.extend(["-map".into(), "0:v:0".into()]);
        if self.audio_tone.is_some() {
            a.extend(["-map".into(), "1:a:0".into()]);
        }
        a.extend(["-frames:v".into(), self.frames.to_string()]);
        a.extend(cmd::passthrough().map(String::from));
        if self.vfr_ms.is_some() {
            a.extend(["-enc_time_base".into(), "1/1000".into()]);
            if ext == "mp4" || ext == "mov" {
                a.extend(["-video_track_timescale".into(), "1000".into()]);
            }
        }
        let q = self.quality;
        let gop_args = |a: &mut Vec<String>| {
            if let Some(g) = self.gop {
                a.extend(["-g".into(), g.to_string()]);
            }
        };
        match self.codec {
            Codec::H264 => {
                a.extend([
                    "-c:v".into(),
                    "libx264".into(),
                    "-preset".into(),
                    self.preset.clone(),
                ]);
                a.extend(["-crf".into(), q.unwrap_or(20).to_string()]);
                gop_args(&mut a);
                if let Some(g) = self.gop {
                    a.extend([
                        "-x264-params".into(),
                        format!("keyint={g}:min-keyint={g}:scenecut=0"),
                    ]);
                }
                if let Some(bf) = self.bframes {
                    a.extend(["-bf".into(), bf.to_string()]);
                }
            }
            Codec::H265 => {
                a.extend([
                    "-c:v".into(),
                    "libx265".into(),
                    "-preset".into(),
                    self.preset.clone(),
                ]);
                a.extend(["-crf".into(), q.unwrap_or(24).to_string()]);
                let mut xp = vec!["log-level=error".to_string()];
                if let Some(g) = self.gop {
                    xp.push(format!("keyint={g}:min-keyint={g}:scenecut=0"));
                }
                if let Some(bf) = self.bframes {
                    xp.push(format!("bframes={bf}"));
                }
                a.extend(["-x265-params".into(), xp.join(":")]);
                if ext == "mp4" || ext == "mov" {
                    a.extend(["-tag:v".into(), "hvc1".into()]);
                }
            }
            Codec::Mpeg4 | Codec::Mpeg2 => {
                let name = if self.codec == Codec::Mpeg4 {
                    "mpeg4"
                } else {
                    "mpeg2video"
                };
                a.extend([
                    "-c:v".into(),
                    name.into(),
                    "-q:v".into(),
                    q.unwrap_or(3).to_string(),
                ]);
                gop_args(&mut a);
                if let Some(bf) = self.bframes {
                    a.extend(["-bf".into(), bf.to_string()]);
                }
            }
            Codec::Ffv1 => {
                a.extend(["-c:v".into(), "ffv1".into()]);
                gop_args(&mut a);
            }
            Codec::Vp9 => {
                a.extend([
                    "-c:v".into(),
                    "libvpx-vp9".into(),
                    "-deadline".into(),
                    "realtime".into(),
                ]);
                a.extend(["-cpu-used".into(), "8".into(), "-b:v".into(), "0".into()]);
                a.extend(["-crf".into(), q.unwrap_or(32).to_string()]);
                gop_args(&mut a);
            }
            Codec::Mjpeg => {
                a.extend([
                    "-c:v".into(),
                    "mjpeg".into(),
                    "-q:v".into(),
                    q.unwrap_or(3).to_string(),
                ]);
            }
        }
        let pix = self
            .pix_fmt
            .clone()
            .unwrap_or_else(|| self.default_pix_fmt().to_string());
        a.extend(["-pix_fmt".into(), pix]);
        if let Some((_, ac)) = self.audio_tone {
            let ac = match (ac, ext) {
                (AudioCodec::Aac, "avi") => AudioCodec::Mp3,
                (x, _) => x,
            };
            match ac {
                AudioCodec::Aac => {
                    a.extend(["-c:a".into(), "aac".into(), "-b:a".into(), "64k".into()])
                }
                AudioCodec::Mp3 => a.extend([
                    "-c:a".into(),
                    "libmp3lame".into(),
                    "-b:a".into(),
                    "64k".into(),
                ]),
                AudioCodec::Pcm => a.extend(["-c:a".into(), "pcm_s16le".into()]),
            }
        }
        if self.faststart {
            a.extend(["-movflags".into(), "+faststart".into()]);
        }
        if with_offset {
            if let Some(off) = self.start_offset {
                a.extend(["-output_ts_offset".into(), format!("{off}")]);
            }
        }
        a.extend(self.extra_args.iter().cloned());
        a.extend(["-f".into(), muxer_for(ext)?.into(), p(out)]);
        Ok(a)
    }

    /// Write the video to `path`, returning `Err` with the ffmpeg command
    /// line and stderr tail on failure.
    pub fn try_write(&self, path: &Path) -> Result<SynthInfo, String> {
        let ext = self.ext_for(path)?;
        if self.frames == 0 || self.frames > MAX_CODE + 1 {
            return Err(format!(
                "frames must be 1..={} (code range), got {}",
                MAX_CODE + 1,
                self.frames
            ));
        }
        if self.width < code::COLS * self.block || self.height < code::ROWS * self.block {
            return Err(format!(
                "{}x{} too small for the {}x{} code strip (block {})",
                self.width,
                self.height,
                code::COLS * self.block,
                code::ROWS * self.block,
                self.block
            ));
        }
        if self
            .vfr_ms
            .as_ref()
            .is_some_and(|v| v.is_empty() || v.contains(&0))
        {
            return Err("vfr pattern must be non-empty with durations > 0 ms".into());
        }
        if self.vfr_ms.is_some() && ext == "avi" {
            return Err("AVI cannot carry variable frame rate".into());
        }
        if self.rotation.is_some() && ext != "mp4" && ext != "mov" {
            return Err(format!(
                "rotation metadata is only supported for mp4/mov here (ffmpeg 5.1), not {ext}"
            ));
        }
        if self.avi_header_frames.is_some() && ext != "avi" {
            return Err("avi_header_frames needs the avi container".into());
        }
        let mut commands = Vec::new();
        let mut run_ffmpeg = |args: Vec<String>| -> Result<(), String> {
            commands.push(cmd::cmdline("ffmpeg", &args));
            cmd::ffmpeg(&args).map(|_| ())
        };
        if let Some(deg) = self.rotation {
            // ffmpeg 5.1 ignores `-metadata:s:v rotate=` while encoding; a
            // stream-copy remux turns the tag into a display matrix. FFmpeg 6.0
            // added `-display_rotation` (same angles) and 7.x dropped the tag:
            // the option where this ffmpeg has it, the tag otherwise.
            let tmp = sibling_tmp(path, &ext);
            let remux = |display_rotation: bool| -> Result<Vec<String>, String> {
                let mut a: Vec<String> = vec!["-v".into(), "error".into(), "-y".into()];
                if display_rotation {
                    a.extend(["-display_rotation:v:0".into(), format!("{deg}")]);
                }
                a.extend(["-i".into(), p(&tmp)]);
                a.extend(["-map".into(), "0".into(), "-c".into(), "copy".into()]);
                if !display_rotation {
                    a.extend(["-metadata:s:v:0".into(), format!("rotate={deg}")]);
                }
                if self.faststart {
                    a.extend(["-movflags".into(), "+faststart".into()]);
                }
                if let Some(off) = self.start_offset {
                    a.extend(["-output_ts_offset".into(), format!("{off}")]);
                }
                a.extend(["-f".into(), muxer_for(&ext)?.into(), p(path)]);
                Ok(a)
            };
            let r = run_ffmpeg(self.encode_args(&tmp, &ext, false)?).and_then(|_| {
                let with_option = remux(true)?;
                if cmd::ffmpeg(&with_option).is_ok() {
                    return run_ffmpeg(with_option);
                }
                run_ffmpeg(remux(false)?)
            });
            let _ = std::fs::remove_file(&tmp);
            r?;
        } else {
            run_ffmpeg(self.encode_args(path, &ext, true)?)?;
        }
        if let Some(n) = self.avi_header_frames {
            patch_avi_frame_count(path, n)?;
        }
        if let Some(c) = &self.corrupt {
            corrupt_file(path, c)?;
        }
        Ok(SynthInfo {
            path: path.to_path_buf(),
            width: self.width,
            height: self.height,
            frames: self.frames,
            fps: self.fps,
            block: self.block,
            times: self.expected_times(),
            commands,
        })
    }

    /// Write the video to `path`; panics with the ffmpeg command line and
    /// stderr tail on failure.
    pub fn write(&self, path: &Path) -> SynthInfo {
        self.try_write(path).unwrap_or_else(|e| {
            panic!("SynthVideo::write({path:?}) failed:\n{e}\nbuilder: {self:?}")
        })
    }

    /// Write once per distinct builder into a shared cache directory
    /// (`$CARGO_TARGET_TMPDIR/vidprep-synth`, else the system temp dir) and
    /// reuse it; safe when several tests ask for the same video at once.
    pub fn cached(&self) -> SynthInfo {
        let ext = self.container.clone().unwrap_or_else(|| "mp4".into());
        let dir = cache_dir();
        // Key: the builder and the exact ffmpeg arguments, so a changed
        // generator never serves a stale file.
        let args = self
            .encode_args(Path::new("OUT"), &ext, true)
            .unwrap_or_default();
        // (Rotated files: the remux changed to -display_rotation for FFmpeg 7+.)
        let remux = if self.rotation.is_some() {
            "\nremux 2"
        } else {
            ""
        };
        let key = md5_hex(format!("{self:?}\n{}{remux}", args.join("\u{1f}")).as_bytes());
        let path = dir.join(format!("{}.{ext}", &key[..20]));
        if !path.exists() {
            let tmp = sibling_tmp(&path, &ext);
            let info = self.clone().container(&ext).write(&tmp);
            // Linked, never renamed over: a test generating the same file meanwhile must not
            // replace the one another test is reading (vidprep fails a request whose source
            // was replaced while it read it). The first made stays; a later copy is dropped.
            match std::fs::hard_link(&tmp, &path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => panic!("link {tmp:?} -> {path:?}: {e}"),
            }
            let _ = std::fs::remove_file(&tmp);
            return SynthInfo { path, ..info };
        }
        SynthInfo {
            path,
            width: self.width,
            height: self.height,
            frames: self.frames,
            fps: self.fps,
            block: self.block,
            times: self.expected_times(),
            commands: vec!["(cached)".into()],
        }
    }
}

/// Directory for [`SynthVideo::cached`].
pub fn cache_dir() -> PathBuf {
    let base = option_env!("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join("vidprep-synth");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {dir:?}: {e}"));
    dir
}

fn sibling_tmp(path: &Path, ext: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("synth");
    path.with_file_name(format!("{stem}.tmp-{}-{n}.{ext}", std::process::id()))
}

/// ffmpeg muxer name for a container extension.
pub fn muxer_for(ext: &str) -> Result<&'static str, String> {
    Ok(match ext {
        "mp4" | "m4v" => "mp4",
        "mov" => "mov",
        "mkv" => "matroska",
        "webm" => "webm",
        "ts" | "m2ts" => "mpegts",
        "avi" => "avi",
        "nut" => "nut",
        other => return Err(format!("unknown container extension {other:?}")),
    })
}

/// Damage a file in place.
pub fn corrupt_file(path: &Path, c: &Corruption) -> Result<(), String> {
    let mut data = std::fs::read(path).map_err(|e| format!("read {path:?}: {e}"))?;
    let len = data.len();
    match *c {
        Corruption::Truncate { keep_fraction } => {
            data.truncate(((len as f64) * keep_fraction.clamp(0.0, 1.0)) as usize);
        }
        Corruption::Garbage {
            at_fraction,
            len_fraction,
            seed,
        } => {
            let start = ((len as f64) * at_fraction.clamp(0.0, 1.0)) as usize;
            let end = (start + ((len as f64) * len_fraction.clamp(0.0, 1.0)) as usize).min(len);
            let mut s = seed | 1;
            for b in &mut data[start..end] {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                *b = (s >> 24) as u8;
            }
        }
    }
    std::fs::write(path, data).map_err(|e| format!("write {path:?}: {e}"))
}

/// Set the frame counts in an AVI header (avih dwTotalFrames and the video
/// stream's strh dwLength) to `n`, leaving the data untouched.
pub fn patch_avi_frame_count(path: &Path, n: u32) -> Result<(), String> {
    let mut d = std::fs::read(path).map_err(|e| format!("read {path:?}: {e}"))?;
    if d.len() < 12 || &d[0..4] != b"RIFF" || &d[8..12] != b"AVI " {
        return Err(format!("{path:?} is not an AVI (RIFF/AVI) file"));
    }
    let head: Vec<u8> = d[..d.len().min(64 * 1024)].to_vec();
    let find = |tag: &[u8], from: usize| {
        head[from..]
            .windows(4)
            .position(|w| w == tag)
            .map(|i| i + from)
    };
    let avih = find(b"avih", 12).ok_or("no avih chunk")?;
    // avih payload starts at +8; dwTotalFrames is its 5th u32 (offset 16).
    let off = avih + 8 + 16;
    d[off..off + 4].copy_from_slice(&n.to_le_bytes());
    let mut from = avih;
    let mut patched = false;
    while let Some(strh) = find(b"strh", from) {
        // strh payload: fccType at +0, dwLength at +32.
        if &d[strh + 8..strh + 12] == b"vids" {
            let off = strh + 8 + 32;
            d[off..off + 4].copy_from_slice(&n.to_le_bytes());
            patched = true;
            break;
        }
        from = strh + 4;
    }
    if !patched {
        return Err("no video strh chunk".into());
    }
    std::fs::write(path, d).map_err(|e| format!("write {path:?}: {e}"))
}
