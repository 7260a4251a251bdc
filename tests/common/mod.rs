//! Shared test toolkit for vidprep's end-to-end tests: the frame-coded
//! synthetic video generator and the independent ffmpeg/ffprobe-CLI oracle.
//! Nothing here uses vidprep; vidprep is judged against this.
//!
//! Declared once in `tests/tests.rs`; a test module uses it with `use crate::common;` then e.g.
//! `use common::{synth::*, oracle::*};`.
//!
//! # Which builder call makes which variant (`synth::SynthVideo`)
//! Defaults: `SynthVideo::new(w, h)` = 25 fps CFR, 48 frames, H.264
//! (libx264 ultrafast, crf 20, yuv420p), testsrc2 content, code block 16,
//! readable number under the code; container from the path extension.
//! `.write(&path) -> SynthInfo` (panics loudly), `.try_write` (Result),
//! `.cached()` (written once per distinct builder under
//! `$CARGO_TARGET_TMPDIR/vidprep-synth/`, shared between tests).
//!
//! | variant | call | what ffprobe 5.1 then reports |
//! |---|---|---|
//! | CFR | default, `.fps(n, d)`, `.frames(n)` | start 0; time_base 1/12800 (mp4/mov at 25 fps), 1/1000 (mkv), 1/90000 (ts), 1/25 (avi); nb_frames = n in mp4/mov/avi, N/A in mkv/ts/webm; decoded = n |
//! | VFR | `.vfr(&[40, 40, 80, 20, 120])` (ms per frame, cycled) | pts = exact cumulative ms; time_base 1/1000 (mp4/mov/mkv), ts 1/90000 with the same steps; not for AVI |
//! | B-frames, long GOP | `.gop(250).bframes(3)` | pict_type B present, one key frame (frame 0); start 0 in mp4/mkv (edit list), 1.48 in ts |
//! | non-zero start | `.start_offset(10.0)` | start_time 10.0 (mp4/mov/mkv, with or without B-frames); ts 11.4 (mpegts adds 1.4 s; ts without offset starts at 1.4, 1.48 with B-frames); AVI ignores it (start 0, nb_frames 298 = 250 empty chunks + frames, 48 decoded) |
//! | odd size | `SynthVideo::new(321, 241)` | exact 321x241; x264/x265 switch to yuv444p automatically (4:2:0 x264 rejects odd sizes); mpeg4, mpeg2, ffv1, vp9 encode odd 4:2:0 |
//! | rotation | `.rotation(90)` (mp4/mov only) | Display Matrix side data, ffprobe `rotation` 90 / -180 / -90 for 90 / 180 / 270; autorotated decode = coded picture turned that many degrees counter-clockwise (h x w for 90/270), so `frame.rotate_cw(deg)` restores it |
//! | audio | `.audio_tone(440.0)` / `.audio_tone_codec(hz, AudioCodec::..)` | AAC 48 kHz (MP3 in AVI), as long as the video |
//! | other codecs | `.codec(Codec::H265 / Mpeg4 / Mpeg2 / Ffv1 / Vp9 / Mjpeg)`, `.source(Source::Mandelbrot)` | |
//! | corrupt | `.corrupt(Corruption::Garbage{..})` / `Truncate{..}` | ffmpeg prints decode errors (`oracle::decode_check`), fewer frames decoded |
//! | header lies | `.container("avi").codec(Codec::Mpeg4).avi_header_frames(250)` | nb_frames 250, stream duration 10 s, while the real frames decode cleanly |
//! | header > data | `.faststart(true).corrupt(Truncate{keep_fraction: 0.5})` (mp4) | nb_frames = all frames, about half decodable, with errors |
//!
//! # Frame code geometry (`code.rs`)
//! Block B = 16 px (`.code_block(px)`). An 8 x 3 grid of B x B cells at the
//! top-left corner (a 128 x 48 strip at B = 16), white = 1, black = 0:
//! ```text
//! r0: W  K  W  K  d13 d12 d11 d10
//! r1: K  d9 d8 d7 d6  d5  d4  d3
//! r2: W  d2 d1 d0 k3  k2  k1  k0
//! ```
//! W/K are fixed markers; d13..d0 the frame index n (0..=16383) in filter
//! order (= presentation order); k3..k0 = (n0 + 3n1 + 5n2 + 7n3 + 9) mod 16
//! over the nibbles of n. `code::read_code(luma, w, h, stride)` samples each
//! cell's central half, requires every cell decisively dark (< 96) or bright
//! (> 160), the markers right and the check nibble right, else `None`; the
//! block size is detected per axis from the markers, so frames scaled down
//! (even anisotropically) to ~3 px per block still read. The readable number
//! (DejaVuSans, if installed) sits at (2, 3B + 2), B px high.
//!
//! # Oracle (`oracle.rs`)
//! `probe`, `count_frames`, `frame_times`/`frame_pts`, `decode_frames`
//! (autorotation on, `-fps_mode passthrough`; `DecodeOpts` to scale, pick
//! the pixel format or turn autorotation off), `decode_frame_at`,
//! `framemd5`, `frame_codes`, `psnr`/`psnr_planes`, `ffmpeg_psnr_frames`,
//! `decode_check`. All of them run the ffmpeg/ffprobe CLI. `frame_codes`
//! decodes with autorotation: for rotated files use `frame_codes_opts` with
//! `.autorotate(false)` or `Frame::code_any_orientation`.
#![allow(dead_code, unused_imports)]

pub mod cmd;
pub mod code;
pub mod md5;
pub mod oracle;
pub mod palette;
pub mod skip;
pub mod synth;

pub use code::{read_code, read_code_geom, read_code_scaled, CodeGeom};
pub use oracle::{
    count_frames, decode_check, decode_frame_at, decode_frames, decode_frames_opts, frame_codes,
    frame_pts, probe, psnr, psnr_planes, DecodeOpts, Frame, PixFmt,
};
pub use synth::{AudioCodec, Codec, Corruption, Source, SynthInfo, SynthVideo};
