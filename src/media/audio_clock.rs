//! Where each decoded audio frame sits on the source's timeline, in samples, as the ffmpeg CLI
//! places it: the first frame at its timestamp, each later one where the one before ended as long
//! as its own timestamp allows (libavutil's `av_rescale_delta`, driven as FFmpeg 6.1+'s
//! `fftools/ffmpeg_dec.c` `audio_ts_process` drives it).
//!
//! A container whose time base is coarser than a sample (Matroska and WebM count milliseconds,
//! FLV too) rounds every packet's time: a Vorbis or AAC frame of 1024 samples at 44.1 kHz is
//! 23.22 ms, written as 23 or 24. Taken at its word, a frame's time is up to half a tick off
//! (22 samples at 44.1 kHz), so where a span starts depends on which frame it is counted from.
//! The clock instead carries the sample count on from the stream's first frame and only pulls it
//! back inside a frame's rounding interval where it strays out, which keeps the samples
//! continuous and converges on the encoder's own sample positions. It must run from the stream's
//! first frame: a reader of such a stream decodes from the start of the file.
//!
//! FFmpeg 4.3 to 6.0's CLI reset the clock whenever a packet's timestamp step exceeded its
//! (rounded) duration, so on those versions the CLI's span of a millisecond-timed stream may sit
//! up to half a tick from this one (docs/export.md); on time bases as fine as a sample (MP4, NUT,
//! Ogg, MPEG-TS) every version rounds each timestamp to the nearest sample, as this does.

use crate::vocab::Ratio;

/// The running clock of one audio stream (its samples at `sample_rate`).
#[derive(Clone, Debug)]
pub(crate) struct AudioClock {
    sample_rate: i64,
    /// Where the next frame would start, in samples, once a frame has been placed
    /// (`last_filter_in_rescale_delta`).
    next: Option<i64>,
    /// The previous frame's place, in samples (`last_frame_pts`).
    last_place: Option<i64>,
}

/// `a * b / c` rounded as libavutil's `av_rescale_rnd` rounds (`up`: towards +inf, else
/// down; `nearest`: half away from zero).
fn rescale(a: i64, b: i64, c: i64, rounding: Round) -> i64 {
    let n = a as i128 * b as i128;
    let c = c as i128;
    let q = match rounding {
        Round::Down => n.div_euclid(c),
        Round::Up => -(-n).div_euclid(c),
        Round::NearInf => {
            if n >= 0 {
                (2 * n + c).div_euclid(2 * c)
            } else {
                -((-2 * n + c).div_euclid(2 * c))
            }
        }
    };
    q as i64
}

#[derive(Clone, Copy)]
enum Round {
    Down,
    Up,
    NearInf,
}

impl AudioClock {
    pub(crate) fn new(sample_rate: u32) -> AudioClock {
        AudioClock {
            sample_rate: sample_rate.max(1) as i64,
            next: None,
            last_place: None,
        }
    }

    /// `pts` (in `time_base`) in samples, rounded to the nearest (`av_rescale_q`).
    fn round_to_samples(&self, pts: i64, time_base: Ratio) -> i64 {
        rescale(
            pts,
            time_base.num as i64 * self.sample_rate,
            time_base.den as i64,
            Round::NearInf,
        )
    }

    /// Places a frame of `samples` samples whose timestamp is `pts` (in `time_base`; `None`:
    /// where the last one ended) and returns its first sample's position, in samples from the
    /// timeline's 0.
    pub(crate) fn place(&mut self, pts: Option<i64>, time_base: Ratio, samples: i64) -> i64 {
        let Some(pts) = pts else {
            // No timestamp: it goes where the last frame ended (`pts_pred`).
            let at = self.next.unwrap_or(0);
            self.next = Some(at + samples);
            self.last_place = Some(at);
            return at;
        };
        let (num, den) = (time_base.num as i64, time_base.den as i64);
        // A gap: the timestamp is past where the last frame ended (rounded up into the
        // stream's time base): start again from the timestamp.
        if let (Some(_), Some(next)) = (self.last_place, self.next) {
            if pts > rescale(next, den, num * self.sample_rate, Round::Up) {
                self.next = None;
            }
        }
        // `av_rescale_delta(time_base, pts, 1/rate, samples, &next, 1/rate)`.
        let coarse = num * self.sample_rate > den;
        let at = match self.next {
            Some(next) if samples > 0 && coarse => {
                let a = rescale(2 * pts - 1, num * self.sample_rate, den, Round::Down) >> 1;
                let b = (rescale(2 * pts + 1, num * self.sample_rate, den, Round::Up) + 1) >> 1;
                if next < 2 * a - b || next > 2 * b - a {
                    self.round_to_samples(pts, time_base)
                } else {
                    next.clamp(a, b)
                }
            }
            _ => self.round_to_samples(pts, time_base),
        };
        self.next = Some(at + samples);
        self.last_place = Some(at);
        at
    }
}

/// Whether timestamps in `time_base` are coarser than one sample at `sample_rate`: then where
/// a frame sits depends on the frames before it ([`AudioClock`]), so the stream is read from
/// its start.
pub(crate) fn time_base_is_coarse(time_base: Ratio, sample_rate: u32) -> bool {
    time_base.num as i64 * sample_rate as i64 > time_base.den as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ratio = Ratio { num: 1, den: 1000 };

    #[test]
    fn a_fine_time_base_is_rounded_to_the_nearest_sample() {
        let mut c = AudioClock::new(44100);
        let tb = Ratio { num: 1, den: 90000 };
        // 1.4 s in 90 kHz ticks, then a 1024-sample frame later (2089.8 ticks, written 2090).
        assert_eq!(c.place(Some(126000), tb, 1024), 61740);
        assert_eq!(c.place(Some(128090), tb, 1024), 62764); // 128090 * 44100 / 90000 = 62764.1
        assert!(!time_base_is_coarse(tb, 44100));
    }

    #[test]
    fn milliseconds_carry_the_sample_count_within_each_frames_rounding() {
        // Vorbis at 44.1 kHz in WebM: frames start at samples 128, 704, 1728, 2752, 3776,
        // written 3, 16, 39, 62, 86 ms. The clock starts at the first rounded time
        // (3 ms = 132.3 -> 132) and then counts samples: 708, 1732, 2756, 3780 each lie in
        // their frame's millisecond ([a, b] of +-0.5 ms), so they are kept.
        let mut c = AudioClock::new(44100);
        assert!(time_base_is_coarse(MS, 44100));
        assert_eq!(c.place(Some(3), MS, 576), 132);
        assert_eq!(c.place(Some(16), MS, 1024), 708);
        assert_eq!(c.place(Some(39), MS, 1024), 1732);
        assert_eq!(c.place(Some(62), MS, 1024), 2756);
        assert_eq!(c.place(Some(86), MS, 1024), 3780);
        // A frame stamped earlier than the count says (108 ms: [4740, 4785]) pulls the
        // clock back to the edge of its millisecond.
        assert_eq!(c.place(Some(108), MS, 1024), 4785);
        assert_eq!(c.place(None, MS, 1024), 5809);
        // One stamped past the tick where the count ends (6833 samples end in 155 ms; 160 ms
        // is later) is a gap: the clock starts again from its rounded time.
        assert_eq!(c.place(Some(160), MS, 1024), 7056);
    }

    #[test]
    fn a_gap_restarts_the_clock_at_the_timestamp() {
        let mut c = AudioClock::new(48000);
        assert_eq!(c.place(Some(0), MS, 1024), 0);
        // 1024 samples end at 21.33 ms; a frame stamped 500 ms is a gap.
        assert_eq!(c.place(Some(500), MS, 1024), 24000);
        assert_eq!(c.place(Some(521), MS, 1024), 25024);
    }

    #[test]
    fn rescale_rounds_as_libavutil() {
        assert_eq!(rescale(7, 1, 2, Round::NearInf), 4);
        assert_eq!(rescale(-7, 1, 2, Round::NearInf), -4);
        assert_eq!(rescale(-7, 1, 2, Round::Down), -4);
        assert_eq!(rescale(-7, 1, 2, Round::Up), -3);
        assert_eq!(rescale(5, 1, 2, Round::Up), 3);
    }
}
