//! Decoding: [`FrameReader`] yields a video's frames in presentation order with exact
//! timestamps and 0-based indices, upright and in the pipeline's pixel layout, and seeks to a
//! frame index or to the frame shown at a time by seeking to the keyframe before it and
//! decoding forward, so a seek gives exactly the frame a full decode gives.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ffmpeg::codec::discard::Discard;
use ffmpeg::ffi;
use ffmpeg::frame::Video as VideoFrame;
use ffmpeg::util::error::EAGAIN;
use ffmpeg_next as ffmpeg;

use crate::error::{Error, Result};
use crate::media::frame::{rotate_yuv420, Converter, Frame, PIPELINE_FORMAT};
use crate::media::input::{Rotation, VideoInput, VideoStreamInfo};
use crate::media::table::FrameTable;
use crate::time::Time;

/// How a [`FrameReader`] decodes.
#[derive(Clone, Debug)]
pub struct DecodeOptions {
    /// Rotate frames upright as players show them (the display matrix). Default true.
    pub upright: bool,
    /// Decoder threads; 0 lets ffmpeg choose (one per core).
    pub threads: usize,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            upright: true,
            threads: 0,
        }
    }
}

/// Where the reader must get to before it returns frames again.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// Drop frames until the one with this pts, which is frame `index`.
    Pts { index: usize, pts: i64, retries: u8 },
    /// Drop frames until `index` frames have been decoded from the start (exact fallback).
    Count { index: usize },
}

/// Decodes one video stream frame by frame.
pub struct FrameReader {
    path: PathBuf,
    input: VideoInput,
    decoder: ffmpeg::decoder::Video,
    options: DecodeOptions,
    table: Option<Arc<FrameTable>>,
    converter: Converter,
    /// pts of frame 0 once known.
    origin_pts: Option<i64>,
    /// Index the next returned frame will have, when known.
    next_index: Option<usize>,
    target: Option<Target>,
    /// After a seek, packets are skipped until the first keyframe.
    need_keyframe: bool,
    packets_done: bool,
    eof_sent: bool,
    /// Last pts returned or dropped (to fill in missing timestamps).
    last_pts: Option<i64>,
    decoded: usize,
    /// When set, only frames with these pts are wanted: the decoder may skip non-reference
    /// frames that are not among them (see [`FrameReader::want_only`]).
    wanted_pts: Option<Arc<HashSet<i64>>>,
}

impl FrameReader {
    pub fn open(path: &Path) -> Result<FrameReader> {
        Self::open_with(path, DecodeOptions::default())
    }

    pub fn open_with(path: &Path, options: DecodeOptions) -> Result<FrameReader> {
        let mut input = VideoInput::open(path)?;
        let index = input.video.index;
        input.keep_only_streams(&[index]);
        let decoder = open_decoder(&input, &options)?;
        Ok(FrameReader {
            path: path.to_path_buf(),
            input,
            decoder,
            options,
            table: None,
            converter: Converter::to_format(PIPELINE_FORMAT),
            origin_pts: None,
            next_index: Some(0),
            target: None,
            need_keyframe: false,
            packets_done: false,
            eof_sent: false,
            last_pts: None,
            decoded: 0,
            wanted_pts: None,
        })
    }

    /// Declares that only the frames with these indices will be read (by seeking to each in
    /// increasing order), so the decoder may skip non-reference frames that are not wanted:
    /// they cost nothing and never come out. Frames are still identified by their pts, so what
    /// comes out is exactly what a full decode gives for those indices.
    pub fn want_only(&mut self, indices: &[usize]) -> Result<()> {
        let table = self.table()?;
        let set: HashSet<i64> = indices
            .iter()
            .filter(|&&i| i < table.len())
            .map(|&i| table.pts(i))
            .collect();
        self.wanted_pts = Some(Arc::new(set));
        Ok(())
    }

    /// Uses an already built table (e.g. shared between readers of the same file).
    pub fn with_table(mut self, table: Arc<FrameTable>) -> FrameReader {
        self.origin_pts = Some(table.origin_pts());
        self.table = Some(table);
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn info(&self) -> &VideoStreamInfo {
        &self.input.video
    }

    /// The rotation applied to frames (none when `upright` is off).
    pub fn applied_rotation(&self) -> Rotation {
        if self.options.upright {
            self.input.video.rotation
        } else {
            Rotation::None
        }
    }

    /// Size of the frames this reader returns.
    pub fn output_size(&self) -> (u32, u32) {
        self.applied_rotation().displayed_size(
            self.input.video.stored_width,
            self.input.video.stored_height,
        )
    }

    /// The frame table, scanned from the file on first use.
    pub fn table(&mut self) -> Result<Arc<FrameTable>> {
        if let Some(t) = &self.table {
            return Ok(t.clone());
        }
        let table = Arc::new(FrameTable::scan(&self.path)?);
        self.origin_pts = Some(table.origin_pts());
        self.table = Some(table.clone());
        Ok(table)
    }

    /// Frames decoded so far, including ones dropped while seeking (a measure of work).
    pub fn frames_decoded(&self) -> usize {
        self.decoded
    }

    /// Positions the reader so that the next frame returned is frame `index`.
    pub fn seek_to_index(&mut self, index: usize) -> Result<()> {
        let table = self.table()?;
        if index >= table.len() {
            return Err(Error::request(
                &self.path,
                format!(
                    "frame {index} is past the end of the video ({} frames)",
                    table.len()
                ),
            ));
        }
        let pts = table.pts(index);
        // Decoding forward from here is no more work than seeking: do that.
        if let Some(next) = self.next_index {
            if self.target.is_none() && next <= index && table.keyframe_at_or_before(index) <= next
            {
                if next < index {
                    self.target = Some(Target::Pts {
                        index,
                        pts,
                        retries: 0,
                    });
                }
                return Ok(());
            }
        }
        if table.has_duplicate_pts {
            return self.restart_and_count_to(index);
        }
        let keyframe = table.keyframe_at_or_before(index);
        self.seek_to_keyframe(keyframe)?;
        self.target = Some(Target::Pts {
            index,
            pts,
            retries: 0,
        });
        Ok(())
    }

    /// Positions the reader at the frame shown at time `t` (the one with the largest
    /// presentation time `<= t`).
    pub fn seek_to_time(&mut self, t: Time) -> Result<usize> {
        let table = self.table()?;
        let index = table.shown_at(t).ok_or_else(|| {
            Error::request(
                &self.path,
                format!(
                    "no frame is shown at {}s: the video runs from 0s to {}s",
                    t.as_secs_f64(),
                    table.end_time().as_secs_f64()
                ),
            )
        })?;
        self.seek_to_index(index)?;
        Ok(index)
    }

    fn seek_to_keyframe(&mut self, keyframe: usize) -> Result<()> {
        self.seek_to_keyframe_at(keyframe, false)
    }

    /// Seeks to the keyframe's pts (exact for indexed containers such as MP4 and Matroska);
    /// `cautious` seeks to its dts when lower, which lands no later on containers that search
    /// by decoding timestamps (MPEG-TS).
    fn seek_to_keyframe_at(&mut self, keyframe: usize, cautious: bool) -> Result<()> {
        let table = self.table()?;
        let entry = *table.entry(keyframe);
        let ts = if cautious {
            entry.pts.min(entry.dts)
        } else {
            entry.pts
        };
        let ret = unsafe {
            ffi::av_seek_frame(
                self.input.context.as_mut_ptr(),
                self.input.video.index as i32,
                ts,
                ffi::AVSEEK_FLAG_BACKWARD as i32,
            )
        };
        if ret < 0 {
            // Some files cannot seek; decoding from the start is slow but exact.
            return self.reopen();
        }
        self.decoder.flush();
        self.need_keyframe = true;
        self.packets_done = false;
        self.eof_sent = false;
        self.next_index = None;
        Ok(())
    }

    /// Reopens the file and decoder at the start.
    fn reopen(&mut self) -> Result<()> {
        let mut input = VideoInput::open(&self.path)?;
        let index = input.video.index;
        input.keep_only_streams(&[index]);
        self.decoder = open_decoder(&input, &self.options)?;
        self.input = input;
        self.need_keyframe = false;
        self.packets_done = false;
        self.eof_sent = false;
        self.next_index = Some(0);
        self.target = None;
        Ok(())
    }

    fn restart_and_count_to(&mut self, index: usize) -> Result<()> {
        self.reopen()?;
        if index > 0 {
            self.target = Some(Target::Count { index });
        }
        Ok(())
    }

    /// The next frame in presentation order, or `None` at the end of the video.
    pub fn next_frame(&mut self) -> Result<Option<Frame>> {
        loop {
            let Some(raw) = self.next_decoded()? else {
                match self.target.take() {
                    // The seek landed past the target's keyframe: try again from earlier.
                    Some(Target::Pts {
                        index,
                        pts,
                        retries,
                    }) => {
                        self.retry_from_earlier(index, pts, retries)?;
                        continue;
                    }
                    Some(target) => return Err(self.target_missed(target, None)),
                    None => return Ok(None),
                }
            };
            let pts = match raw.timestamp().or(raw.pts()) {
                Some(p) => p,
                None => self
                    .last_pts
                    .map(|p| p + self.typical_duration())
                    .unwrap_or(0),
            };
            self.last_pts = Some(pts);
            if self.origin_pts.is_none() {
                self.origin_pts = Some(pts);
            }
            let index = match self.target {
                None => match self.next_index {
                    Some(i) => i,
                    None => return Err(self.internal_position_lost()),
                },
                Some(Target::Count { index }) => {
                    let i = self.next_index.unwrap_or(0);
                    if i < index {
                        self.next_index = Some(i + 1);
                        continue;
                    }
                    self.target = None;
                    i
                }
                Some(Target::Pts {
                    index,
                    pts: want,
                    retries,
                }) => {
                    if pts < want {
                        continue;
                    }
                    if pts > want {
                        // The seek landed after the target (or the table is off).
                        self.retry_from_earlier(index, want, retries)?;
                        continue;
                    }
                    self.target = None;
                    index
                }
            };
            self.next_index = Some(index + 1);
            if raw.flags().contains(ffmpeg::frame::Flags::CORRUPT) {
                return Err(Error::corrupt(
                    &self.path,
                    format!("at frame {index}"),
                    "the decoder reports a damaged picture",
                ));
            }
            let image = self.to_pipeline_image(raw)?;
            let origin = self.origin_pts.unwrap_or(pts);
            let tb = self.input.video.time_base;
            return Ok(Some(Frame {
                index,
                pts,
                time: Time::from_pts(pts - origin, tb.num, tb.den),
                image,
            }));
        }
    }

    /// After a seek missed frame `index` (pts `want`): seek to an earlier keyframe, then to the
    /// start, then fall back to counting frames from the start (slow but exact).
    fn retry_from_earlier(&mut self, index: usize, want: i64, retries: u8) -> Result<()> {
        if retries >= 2 {
            return self.restart_and_count_to(index);
        }
        let table = self.table()?;
        let k = table.keyframe_at_or_before(index);
        let earlier = if retries == 0 {
            table.keyframe_at_or_before(k.saturating_sub(1))
        } else {
            0
        };
        self.seek_to_keyframe_at(earlier, true)?;
        self.target = Some(Target::Pts {
            index,
            pts: want,
            retries: retries + 1,
        });
        Ok(())
    }

    fn typical_duration(&self) -> i64 {
        self.table
            .as_ref()
            .map(|t| t.typical_frame_duration())
            .unwrap_or(1)
    }

    fn target_missed(&self, target: Target, _pts: Option<i64>) -> Error {
        let what = match target {
            Target::Pts { index, .. } | Target::Count { index } => index,
        };
        Error::corrupt(
            &self.path,
            format!("at frame {what}"),
            "the video ended before this frame could be decoded",
        )
    }

    fn internal_position_lost(&self) -> Error {
        Error::corrupt(
            &self.path,
            "after a seek",
            "lost track of the frame position",
        )
    }

    fn to_pipeline_image(&mut self, raw: VideoFrame) -> Result<VideoFrame> {
        let converted = if raw.format() == PIPELINE_FORMAT {
            raw
        } else {
            self.converter.convert(&raw).map_err(|e| {
                Error::ffmpeg(
                    &self.path,
                    format!("converting {:?} to yuv420p", raw.format()),
                    e,
                )
            })?
        };
        Ok(match self.applied_rotation() {
            Rotation::None => converted,
            r => rotate_yuv420(&converted, r),
        })
    }

    /// The next picture out of the decoder, feeding it packets as needed.
    fn next_decoded(&mut self) -> Result<Option<VideoFrame>> {
        let mut frame = VideoFrame::empty();
        loop {
            match self.decoder.receive_frame(&mut frame) {
                Ok(()) => {
                    self.decoded += 1;
                    return Ok(Some(frame));
                }
                Err(ffmpeg::Error::Eof) => return Ok(None),
                Err(ffmpeg::Error::Other { errno }) if errno == EAGAIN => {}
                Err(e) => {
                    return Err(Error::corrupt(
                        &self.path,
                        self.position_text(),
                        format!("decoding failed: {e}"),
                    ))
                }
            }
            if self.packets_done {
                if self.eof_sent {
                    return Ok(None);
                }
                self.decoder
                    .send_eof()
                    .map_err(|e| Error::ffmpeg(&self.path, "flushing the decoder", e))?;
                self.eof_sent = true;
                continue;
            }
            let mut packet = ffmpeg::Packet::empty();
            match packet.read(&mut self.input.context) {
                Ok(()) => {}
                Err(ffmpeg::Error::Eof) => {
                    self.packets_done = true;
                    continue;
                }
                Err(e) => {
                    return Err(Error::corrupt(
                        &self.path,
                        self.position_text(),
                        format!("cannot read the file: {e}"),
                    ))
                }
            }
            if packet.stream() != self.input.video.index {
                continue;
            }
            if self.need_keyframe {
                if !packet.is_key() {
                    continue;
                }
                self.need_keyframe = false;
            }
            if let Some(wanted) = &self.wanted_pts {
                let want = packet
                    .pts()
                    .or(packet.dts())
                    .is_some_and(|p| wanted.contains(&p));
                self.decoder.skip_frame(if want {
                    Discard::Default
                } else {
                    Discard::NonReference
                });
            }
            if let Err(e) = self.decoder.send_packet(&packet) {
                // Packets decoded only to reach a seek target may lack their references
                // (open GOPs); their frames are dropped anyway.
                let before_target = match (self.target, packet.pts()) {
                    (Some(Target::Pts { pts: want, .. }), Some(p)) => p < want,
                    _ => false,
                };
                if !before_target {
                    return Err(Error::corrupt(
                        &self.path,
                        self.position_text(),
                        format!("decoding failed: {e}"),
                    ));
                }
            }
        }
    }

    fn position_text(&self) -> String {
        match (self.target, self.next_index) {
            (Some(Target::Pts { index, .. }) | Some(Target::Count { index }), _) => {
                format!("while seeking to frame {index}")
            }
            (None, Some(i)) => format!("at frame {i}"),
            (None, None) => "after a seek".into(),
        }
    }
}

impl Iterator for FrameReader {
    type Item = Result<Frame>;
    fn next(&mut self) -> Option<Result<Frame>> {
        self.next_frame().transpose()
    }
}

fn open_decoder(input: &VideoInput, options: &DecodeOptions) -> Result<ffmpeg::decoder::Video> {
    let stream = input
        .context
        .stream(input.video.index)
        .expect("video stream exists");
    let mut context = ffmpeg::codec::context::Context::from_parameters(stream.parameters())
        .map_err(|e| Error::ffmpeg(&input.path, "reading the video codec parameters", e))?;
    context.set_threading(ffmpeg::codec::threading::Config {
        kind: ffmpeg::codec::threading::Type::Frame,
        count: options.threads,
        ..Default::default()
    });
    unsafe {
        // Timestamps of decoded frames in the stream's time base.
        (*context.as_mut_ptr()).pkt_timebase = stream.time_base().into();
    }
    context.decoder().video().map_err(|e| {
        Error::ffmpeg(
            &input.path,
            format!("opening a decoder for {}", input.video.codec),
            e,
        )
    })
}
