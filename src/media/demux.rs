//! One demuxer read by two: a full decode of the video and the soundtrack's reader of the
//! same file take their packets from one input, read once from its start, instead of the
//! soundtrack opening the file again (issue 25).
//!
//! Each side gets exactly the packets of its stream, in the order an input of its own read
//! from the start would give them: what one side reads for the other waits in the other's
//! queue. The demuxer's stream choices are the same (one file, one container header), and a
//! stream's packets do not depend on which other streams are read. Where the two could part
//! (the video side seeks or starts over, a read fails, or one side's queue grows past
//! [`MAX_QUEUED_BYTES`] because the streams lie far apart in the file), each side goes on
//! with an input of its own, reading on exactly where it was: the video side starts over
//! from the start of the file and counts to its next frame (as after a seek that cannot be
//! proven, `media::decode`), the soundtrack opens the file and skips the packets it already
//! had. So the samples and pictures are the same as with two inputs, whatever happens.

use std::collections::VecDeque;
use std::sync::Mutex;

use ffmpeg_next as ffmpeg;

use crate::media::input::{read_packet, VideoInput};

/// The most bytes of packets held for one side; past this the soundtrack reads an input of
/// its own (the streams lie far apart in the file, so sharing would hold much of it).
pub(crate) const MAX_QUEUED_BYTES: usize = 32 << 20;

/// The input shared by a full decode (the video side) and the soundtrack's reader.
pub(crate) struct SharedDemuxer {
    state: Mutex<State>,
}

impl std::fmt::Debug for SharedDemuxer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedDemuxer").finish_non_exhaustive()
    }
}

struct State {
    input: VideoInput,
    audio: usize,
    /// The most bytes of packets held for one side.
    limit: usize,
    video_queue: VecDeque<ffmpeg::Packet>,
    audio_queue: VecDeque<ffmpeg::Packet>,
    video_bytes: usize,
    audio_bytes: usize,
    /// Audio packets read for the soundtrack (queued or handed over): where an input of its
    /// own goes on from.
    audio_read: usize,
    /// The soundtrack reads an input of its own once its queue is empty.
    audio_detached: bool,
    /// The video side is gone: its packets are dropped.
    video_done: bool,
    /// A read failed (not the end of the file): each side reads an input of its own, which
    /// meets the failure (or not) as it would have alone.
    broken: bool,
    /// The demuxer reached the end of the file.
    ended: bool,
}

/// The video side must go on with an input of its own (a read failed).
#[derive(Debug)]
pub(crate) struct Parted;

/// What the soundtrack's reader gets next.
pub(crate) enum AudioRead {
    Packet(ffmpeg::Packet),
    /// The end of the file.
    End,
    /// Go on with an input of its own, past the first `skip` packets of the audio stream.
    OwnInput {
        skip: usize,
    },
}

impl SharedDemuxer {
    /// Shares `input` (freshly opened and not read, or rewound to its start,
    /// [`crate::media::rewind`]) between its video stream and its audio stream `audio`, both
    /// kept by the demuxer. `video` and `audio_packets` are the packets of each stream read
    /// since the open or the rewind (none for a fresh input), in order: each side gets its
    /// own first.
    pub(crate) fn with_queued(
        input: VideoInput,
        audio: usize,
        video: VecDeque<ffmpeg::Packet>,
        audio_packets: VecDeque<ffmpeg::Packet>,
    ) -> SharedDemuxer {
        Self::with_limit(input, audio, MAX_QUEUED_BYTES).queued(video, audio_packets)
    }

    /// Puts packets read before this demuxer was shared at the front of each side's queue.
    fn queued(
        self,
        video: VecDeque<ffmpeg::Packet>,
        audio: VecDeque<ffmpeg::Packet>,
    ) -> SharedDemuxer {
        {
            let mut s = self.state();
            s.video_bytes = video.iter().map(|p| p.size()).sum();
            s.audio_bytes = audio.iter().map(|p| p.size()).sum();
            s.audio_read = audio.len();
            s.audio_detached = s.audio_bytes > s.limit || s.video_bytes > s.limit;
            s.video_queue = video;
            s.audio_queue = audio;
        }
        self
    }

    /// Shares `input` (see [`SharedDemuxer::with_queued`]), holding at most `limit` bytes of
    /// packets for one side.
    pub(crate) fn with_limit(mut input: VideoInput, audio: usize, limit: usize) -> SharedDemuxer {
        let video = input.video.index;
        input.keep_only_streams(&[video, audio]);
        SharedDemuxer {
            state: Mutex::new(State {
                input,
                audio,
                limit,
                video_queue: VecDeque::new(),
                audio_queue: VecDeque::new(),
                video_bytes: 0,
                audio_bytes: 0,
                audio_read: 0,
                audio_detached: false,
                video_done: false,
                broken: false,
                ended: false,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the input and the audio stream's index (to read the stream's
    /// description: its time base, start and codec parameters, as the container header gave
    /// them).
    pub(crate) fn with_audio_stream<R>(
        &self,
        f: impl FnOnce(&ffmpeg::format::context::Input, usize) -> R,
    ) -> R {
        let s = self.state();
        f(&s.input.context, s.audio)
    }

    /// The next packet of the video stream (`Ok(None)` at the end of the file).
    pub(crate) fn read_video(&self) -> Result<Option<ffmpeg::Packet>, Parted> {
        let mut s = self.state();
        if let Some(p) = s.video_queue.pop_front() {
            s.video_bytes -= p.size();
            return Ok(Some(p));
        }
        let video = s.input.video.index;
        loop {
            if s.broken {
                return Err(Parted);
            }
            if s.ended {
                return Ok(None);
            }
            match read_packet(&mut s.input.context) {
                Ok(Some(p)) if p.stream() == video => return Ok(Some(p)),
                Ok(Some(p)) if p.stream() == s.audio && !s.audio_detached => {
                    s.audio_read += 1;
                    s.audio_bytes += p.size();
                    s.audio_queue.push_back(p);
                    if s.audio_bytes > s.limit {
                        s.audio_detached = true;
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => s.ended = true,
                Err(_) => s.broken = true,
            }
        }
    }

    /// The next packet of the audio stream, or where to go on from.
    pub(crate) fn read_audio(&self) -> AudioRead {
        let mut s = self.state();
        if let Some(p) = s.audio_queue.pop_front() {
            s.audio_bytes -= p.size();
            return AudioRead::Packet(p);
        }
        let video = s.input.video.index;
        loop {
            if s.audio_detached || s.broken {
                s.audio_detached = true;
                return AudioRead::OwnInput { skip: s.audio_read };
            }
            if s.ended {
                return AudioRead::End;
            }
            match read_packet(&mut s.input.context) {
                Ok(Some(p)) if p.stream() == s.audio => {
                    s.audio_read += 1;
                    return AudioRead::Packet(p);
                }
                Ok(Some(p)) if p.stream() == video && !s.video_done => {
                    s.video_bytes += p.size();
                    s.video_queue.push_back(p);
                    if s.video_bytes > s.limit {
                        s.audio_detached = true;
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => s.ended = true,
                Err(_) => s.broken = true,
            }
        }
    }

    /// Runs `f` on the input for the video side alone (a seek): the soundtrack goes on with
    /// an input of its own, and what was queued for the video is dropped.
    pub(crate) fn position_video<R>(&self, f: impl FnOnce(&mut VideoInput) -> R) -> R {
        let mut s = self.state();
        // (The soundtrack still gets what was queued for it, then reads on by itself.)
        s.audio_detached = true;
        s.video_queue.clear();
        s.video_bytes = 0;
        s.ended = false;
        f(&mut s.input)
    }

    /// The video side is gone (its reader dropped or started over on an input of its own).
    pub(crate) fn video_done(&self) {
        let mut s = self.state();
        s.video_done = true;
        s.video_queue.clear();
        s.video_bytes = 0;
    }
}
