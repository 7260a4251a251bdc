//! Work tallies: how often one call opened its source, scanned its packets, checked and
//! normalised its plan, read an annotation file, and how many decoder threads it had running
//! at once. They measure that an item does each piece of work once (`tests/batch/work_once.rs`)
//! and let a caller see what a call cost.
//!
//! A [`Tally`] is carried by the caller in [`ExecOptions::tally`](crate::ExecOptions) (and so
//! in [`BatchOptions::exec`](crate::BatchOptions)); nothing is counted without one. The call
//! hands it down in its [`CallContext`](crate::call::context::CallContext): code deep in the stack
//! (opening a file in `media/input.rs`) counts on the context it was given. Never
//! process-wide: two calls with two tallies count apart.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Counters shared by everything working for one call (clones share them).
#[derive(Clone, Debug, Default)]
pub struct Tally(Arc<Counters>);

#[derive(Debug, Default)]
struct Counters {
    opens: AtomicUsize,
    audio_opens: AtomicUsize,
    packet_scans: AtomicUsize,
    decode_scans: AtomicUsize,
    plan_checks: AtomicUsize,
    normalisations: AtomicUsize,
    annotation_reads: AtomicUsize,
    decoders: AtomicUsize,
    peak_decoders: AtomicUsize,
    decoder_threads: AtomicUsize,
    peak_decoder_threads: AtomicUsize,
    frames_decoded: AtomicUsize,
    packets_left_out: AtomicUsize,
}

/// What a [`Tally`] has counted so far.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Sources opened (`avformat_open_input` calls for video sources and image sequences).
    pub opens: usize,
    /// Of those, opens to read the audio (an encode reads the soundtrack with a demuxer of its
    /// own while the video is decoded).
    pub audio_opens: usize,
    /// Full reads of a source's packets without decoding (the frame table's scan, smart
    /// encoding's index).
    pub packet_scans: usize,
    /// Frame tables built by decoding a whole stream.
    pub decode_scans: usize,
    /// `Plan::check` calls.
    pub plan_checks: usize,
    /// `Plan::normalized` calls.
    pub normalisations: usize,
    /// Annotation files (or GOT-10k folders) read for boxes (each read reads its files once:
    /// the text a format's detection read is the text parsed).
    pub annotation_reads: usize,
    /// The most video decoders open at once.
    pub peak_decoders: usize,
    /// The most decoder threads at once: each open decoder counts the threads FFmpeg runs for
    /// it (its thread count; FFmpeg's automatic count, cores + 1 up to 16, for 0).
    pub peak_decoder_threads: usize,
    /// Pictures that came out of the call's video decoders (every [`FrameReader`]'s, those
    /// dropped on the way to a seek's target included): the decoding work done.
    ///
    /// [`FrameReader`]: crate::media::FrameReader
    pub frames_decoded: usize,
    /// Packets sparse reading did not send to a decoder because no frame it wanted depends on
    /// them (see `bitstream::h264_refs`).
    pub packets_left_out: usize,
}

/// Something a tally counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    Open,
    AudioOpen,
    PacketScan,
    DecodeScan,
    PlanCheck,
    Normalise,
    AnnotationRead,
    FrameDecoded,
    PacketLeftOut,
}

impl Tally {
    /// A tally at zero.
    pub fn new() -> Tally {
        Tally::default()
    }

    /// What has been counted so far.
    pub fn counts(&self) -> Counts {
        let c = &self.0;
        let get = |a: &AtomicUsize| a.load(Ordering::SeqCst);
        Counts {
            opens: get(&c.opens),
            audio_opens: get(&c.audio_opens),
            packet_scans: get(&c.packet_scans),
            decode_scans: get(&c.decode_scans),
            plan_checks: get(&c.plan_checks),
            normalisations: get(&c.normalisations),
            annotation_reads: get(&c.annotation_reads),
            peak_decoders: get(&c.peak_decoders),
            peak_decoder_threads: get(&c.peak_decoder_threads),
            frames_decoded: get(&c.frames_decoded),
            packets_left_out: get(&c.packets_left_out),
        }
    }

    /// Counts one `event`.
    pub(crate) fn add(&self, event: Event) {
        let c = &self.0;
        let counter = match event {
            Event::Open => &c.opens,
            Event::AudioOpen => &c.audio_opens,
            Event::PacketScan => &c.packet_scans,
            Event::DecodeScan => &c.decode_scans,
            Event::PlanCheck => &c.plan_checks,
            Event::Normalise => &c.normalisations,
            Event::AnnotationRead => &c.annotation_reads,
            Event::FrameDecoded => &c.frames_decoded,
            Event::PacketLeftOut => &c.packets_left_out,
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

/// The threads FFmpeg runs for a decoder opened with `threads` (0: its automatic count,
/// `pthread_frame.c`: cores + 1 when there are several, at most 16).
pub(crate) fn ffmpeg_decoder_threads(threads: usize) -> usize {
    if threads > 0 {
        return threads;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores > 1 {
        (cores + 1).min(16)
    } else {
        1
    }
}

/// An open decoder counted on a tally (with its threads) until the guard is dropped
/// ([`CallContext::decoder_opened`](crate::call::context::CallContext::decoder_opened)).
#[derive(Debug)]
pub(crate) struct DecoderHeld {
    tally: Option<Tally>,
    threads: usize,
}

impl DecoderHeld {
    /// Counts an open decoder of `threads` (as given to FFmpeg) on `tally`, if any.
    pub(crate) fn new(tally: Option<Tally>, threads: usize) -> DecoderHeld {
        let threads = ffmpeg_decoder_threads(threads);
        if let Some(t) = &tally {
            let c = &t.0;
            let open = c.decoders.fetch_add(1, Ordering::SeqCst) + 1;
            c.peak_decoders.fetch_max(open, Ordering::SeqCst);
            let running = c.decoder_threads.fetch_add(threads, Ordering::SeqCst) + threads;
            c.peak_decoder_threads.fetch_max(running, Ordering::SeqCst);
        }
        DecoderHeld { tally, threads }
    }
}

impl Drop for DecoderHeld {
    fn drop(&mut self) {
        if let Some(t) = &self.tally {
            t.0.decoders.fetch_sub(1, Ordering::SeqCst);
            t.0.decoder_threads
                .fetch_sub(self.threads, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_tallies_count_apart_and_decoders_count_while_held() {
        let a = Tally::new();
        let b = Tally::new();
        a.add(Event::Open);
        {
            let _d = DecoderHeld::new(Some(a.clone()), 3);
            let _e = DecoderHeld::new(Some(a.clone()), 2);
            let _none = DecoderHeld::new(None, 4);
            let in_thread = a.clone();
            std::thread::spawn(move || in_thread.add(Event::PacketScan))
                .join()
                .unwrap();
        }
        b.add(Event::PlanCheck);
        let ca = a.counts();
        assert_eq!((ca.opens, ca.packet_scans, ca.plan_checks), (1, 1, 0));
        assert_eq!((ca.peak_decoders, ca.peak_decoder_threads), (2, 5));
        assert_eq!(a.0.decoder_threads.load(Ordering::SeqCst), 0);
        assert_eq!(b.counts().plan_checks, 1);
    }
}
