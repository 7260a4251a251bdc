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
const MAX_QUEUED_BYTES: usize = 32 << 20;

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
    fn with_limit(mut input: VideoInput, audio: usize, limit: usize) -> SharedDemuxer {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::audio::{AudioFormat, SegmentReader};
    use crate::media::source::Source;
    use crate::time::Time;
    use std::sync::Arc;

    /// A 2 s MP4: H.264 with B-frames and AAC of noise (its decoding depends on the packets
    /// decoded before), made by the ffmpeg CLI; `None` without it.
    fn media(dir: &std::path::Path) -> Option<std::path::PathBuf> {
        let path = dir.join("av.mp4");
        let made = std::process::Command::new("ffmpeg")
            .args([
                "-v",
                "error",
                "-f",
                "lavfi",
                "-i",
                "testsrc2=size=64x48:rate=25",
            ])
            .args([
                "-f",
                "lavfi",
                "-i",
                "anoisesrc=sample_rate=48000:amplitude=0.3",
            ])
            .args([
                "-t", "2", "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-g", "10",
            ])
            .args(["-bf", "2", "-c:a", "aac", "-b:a", "32k"])
            .arg(&path)
            .status()
            .ok()?;
        made.success().then_some(path)
    }

    fn samples(mut reader: SegmentReader, mut between: impl FnMut()) -> Vec<f32> {
        let mut all = Vec::new();
        while let Some(chunk) = reader.next_chunk().unwrap() {
            all.extend(chunk.concat());
            between();
        }
        all
    }

    fn video_packets(
        mut next: impl FnMut() -> Option<ffmpeg::Packet>,
    ) -> Vec<(Option<i64>, Vec<u8>)> {
        std::iter::from_fn(|| next().map(|p| (p.pts(), p.data().unwrap_or(&[]).to_vec()))).collect()
    }

    /// Whatever the two sides' pace, queue limit or a seek of the video side, the soundtrack
    /// read from the shared input is, sample for sample, the one read from an input of its
    /// own, and the video side gets every packet of its stream an input of its own gives.
    #[test]
    fn each_side_gets_what_an_input_of_its_own_gives() {
        let dir = tempfile::tempdir().unwrap();
        let Some(path) = media(dir.path()) else {
            eprintln!("skipped: no ffmpeg CLI to make the test media");
            return;
        };
        let format = AudioFormat {
            sample_rate: 48000,
            channels: 1,
        };
        let (start, end) = (Time::new(1, 5), Time::new(19, 10));
        let pool = crate::media::pool::InputPool::new(Default::default());
        let alone = samples(
            SegmentReader::open(&Source::from(&path), start, end, format, &pool)
                .unwrap()
                .unwrap(),
            || {},
        );
        assert!(alone.len() > 40_000, "{}", alone.len());
        let mut own = VideoInput::open(&path, pool.call()).unwrap();
        let index = own.video.index;
        own.keep_only_streams(&[index]);
        let own_video = video_packets(|| loop {
            match read_packet(&mut own.context).unwrap() {
                Some(p) if p.stream() == index => return Some(p),
                Some(_) => {}
                None => return None,
            }
        });
        // (limit, video packets read between audio chunks, seek the video after a chunk)
        for (limit, pace, seek) in [
            (MAX_QUEUED_BYTES, 1, false),
            (MAX_QUEUED_BYTES, 7, false),
            (MAX_QUEUED_BYTES, 0, false),
            (2000, 3, false),
            (0, 1, false),
            (MAX_QUEUED_BYTES, 2, true),
        ] {
            let source = Source::from(&path);
            let input = VideoInput::open(&source, pool.call()).unwrap();
            let audio = crate::media::input::best_audio_stream(&input.context).unwrap();
            let shared = Arc::new(SharedDemuxer::with_limit(input, audio, limit));
            pool.offer(&source, shared.clone());
            // An offer is for its source only.
            assert!(pool.take(&Source::from("elsewhere.mp4")).is_none());
            let reader = SegmentReader::open(&source, start, end, format, &pool)
                .unwrap()
                .unwrap();
            assert!(pool.take(&source).is_none(), "the reader took the input");
            let mut got_video = Vec::new();
            let mut chunks = 0;
            let shared_audio = samples(reader, || {
                chunks += 1;
                if seek && chunks == 3 {
                    shared.position_video(|_| ());
                }
                for _ in 0..pace {
                    if let Ok(Some(p)) = shared.read_video() {
                        got_video.push((p.pts(), p.data().unwrap_or(&[]).to_vec()));
                    }
                }
            });
            assert!(
                shared_audio == alone,
                "limit {limit}, pace {pace}, seek {seek}: the samples differ"
            );
            if !seek {
                got_video.extend(video_packets(|| shared.read_video().unwrap()));
                assert!(
                    got_video == own_video,
                    "limit {limit}, pace {pace}: the video packets differ"
                );
            }
        }
    }

    /// An input a table's scan read to its end, rewound to its start (`media::rewind`),
    /// shared with the soundtrack: the samples are, bit for bit, those of a reader of its
    /// own, and the video side gets every packet of its stream from the first.
    #[test]
    fn a_rewound_input_gives_what_an_input_of_its_own_gives() {
        let dir = tempfile::tempdir().unwrap();
        let Some(path) = media(dir.path()) else {
            eprintln!("skipped: no ffmpeg CLI to make the test media");
            return;
        };
        let format = AudioFormat {
            sample_rate: 48000,
            channels: 1,
        };
        let (start, end) = (Time::ZERO, Time::new(19, 10));
        let pool = crate::media::pool::InputPool::new(Default::default());
        let alone = samples(
            SegmentReader::open(&Source::from(&path), start, end, format, &pool)
                .unwrap()
                .unwrap(),
            || {},
        );
        let mut own = VideoInput::open(&path, pool.call()).unwrap();
        let index = own.video.index;
        own.keep_only_streams(&[index]);
        let own_video = video_packets(|| loop {
            match read_packet(&mut own.context).unwrap() {
                Some(p) if p.stream() == index => return Some(p),
                Some(_) => {}
                None => return None,
            }
        });
        for pace in [0, 1, 5] {
            let source = Source::from(&path);
            let mut input = VideoInput::open(&source, pool.call()).unwrap();
            let table = crate::media::table::FrameTable::scan_input(&mut input).unwrap();
            let audio = crate::media::input::best_audio_stream(&input.context).unwrap();
            let rewound = crate::media::rewind::rewind(input, &table, Some(audio))
                .expect("an MP4 is rewound");
            assert!(!rewound.video.is_empty() && !rewound.audio.is_empty());
            let shared = Arc::new(SharedDemuxer::with_queued(
                rewound.input,
                audio,
                rewound.video,
                rewound.audio,
            ));
            pool.offer(&source, shared.clone());
            let reader = SegmentReader::open(&source, start, end, format, &pool)
                .unwrap()
                .unwrap();
            assert!(pool.take(&source).is_none(), "the reader took the input");
            let mut got_video = Vec::new();
            let shared_audio = samples(reader, || {
                for _ in 0..pace {
                    if let Ok(Some(p)) = shared.read_video() {
                        got_video.push((p.pts(), p.data().unwrap_or(&[]).to_vec()));
                    }
                }
            });
            assert!(shared_audio == alone, "pace {pace}: the samples differ");
            got_video.extend(video_packets(|| shared.read_video().unwrap()));
            assert!(
                got_video == own_video,
                "pace {pace}: the video packets differ"
            );
        }
    }
}
