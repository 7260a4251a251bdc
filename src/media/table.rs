//! The frame table: every frame of a video stream in presentation order with its exact
//! timestamp and keyframe flag, built by reading packets only (no decoding). It is what makes
//! frame indices, time lookups and exact seeking possible without decoding a whole video.
//!
//! A packet becomes one frame: packets the demuxer marks for discarding (edit lists) are left
//! out, as the decoder drops their frames too. Frame 0 is the earliest presentation timestamp;
//! times are relative to it.

use std::path::Path;

use ffmpeg::ffi;
use ffmpeg::packet::Ref as _;
use ffmpeg_next as ffmpeg;

use crate::error::{Error, Result};
use crate::media::input::{read_packet, Ratio, VideoInput};
use crate::time::Time;

/// One frame as the packets describe it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameEntry {
    /// Presentation timestamp in the stream's time base (dts when the file has no pts).
    pub pts: i64,
    /// Decoding timestamp (pts when the file has no dts).
    pub dts: i64,
    /// Packet duration in the stream's time base (0 when unknown).
    pub duration: i64,
    pub key: bool,
}

/// All frames of one video stream in presentation order.
#[derive(Clone, Debug)]
pub struct FrameTable {
    pub time_base: Ratio,
    entries: Vec<FrameEntry>,
    /// True when two frames share a timestamp (then frames cannot be told apart by pts).
    pub has_duplicate_pts: bool,
    /// Packets left out because the container marks them for discarding.
    pub discarded_packets: usize,
    fallback_frame_duration: i64,
}

impl FrameTable {
    /// Reads every packet of the video stream of `path`.
    pub fn scan(path: &Path) -> Result<FrameTable> {
        let mut input = VideoInput::open(path)?;
        Self::scan_input(&mut input)
    }

    /// Reads every packet of `input`'s video stream from where the input stands (normally the
    /// start of a freshly opened file).
    pub fn scan_input(input: &mut VideoInput) -> Result<FrameTable> {
        let index = input.video.index;
        input.keep_only_streams(&[index]);
        let mut entries = Vec::new();
        let mut discarded = 0usize;
        loop {
            let packet = match read_packet(&mut input.context) {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(e) => {
                    return Err(Error::corrupt(
                        &input.path,
                        format!("after frame {}", entries.len()),
                        format!("cannot read packets: {e}"),
                    ))
                }
            };
            if packet.stream() != index {
                continue;
            }
            if unsafe { (*packet.as_ptr()).flags } & ffi::AV_PKT_FLAG_DISCARD as i32 != 0 {
                discarded += 1;
                continue;
            }
            let (pts, dts) = match (packet.pts(), packet.dts()) {
                (Some(p), Some(d)) => (p, d),
                (Some(p), None) => (p, p),
                (None, Some(d)) => (d, d),
                (None, None) => {
                    return Err(Error::corrupt(
                        &input.path,
                        format!("packet {}", entries.len() + discarded),
                        "a video packet has no timestamp",
                    ))
                }
            };
            entries.push(FrameEntry {
                pts,
                dts,
                duration: packet.duration().max(0),
                key: packet.is_key(),
            });
        }
        if entries.is_empty() {
            return Err(Error::corrupt(
                &input.path,
                "at the start",
                "the video stream has no frames",
            ));
        }
        Ok(Self::from_entries(
            input.video.time_base,
            entries,
            discarded,
            input.video.best_frame_rate(),
        ))
    }

    /// Builds a table from packet entries in any order (sorted here by pts).
    /// `nominal_rate` gives the last frame a duration when the file has none.
    pub fn from_entries(
        time_base: Ratio,
        mut entries: Vec<FrameEntry>,
        discarded: usize,
        nominal_rate: Option<Ratio>,
    ) -> FrameTable {
        entries.sort_by_key(|e| e.pts);
        let has_duplicate_pts = entries.windows(2).any(|w| w[0].pts == w[1].pts);
        let fallback_frame_duration = fallback_duration(&entries, time_base, nominal_rate);
        FrameTable {
            time_base,
            entries,
            has_duplicate_pts,
            discarded_packets: discarded,
            fallback_frame_duration,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entry(&self, index: usize) -> &FrameEntry {
        &self.entries[index]
    }

    pub fn entries(&self) -> &[FrameEntry] {
        &self.entries
    }

    /// The pts of frame 0 (the time origin).
    pub fn origin_pts(&self) -> i64 {
        self.entries[0].pts
    }

    pub fn pts(&self, index: usize) -> i64 {
        self.entries[index].pts
    }

    /// Time of `pts` relative to frame 0.
    pub fn time_of_pts(&self, pts: i64) -> Time {
        Time::from_pts(
            pts - self.origin_pts(),
            self.time_base.num,
            self.time_base.den,
        )
    }

    /// Presentation time of frame `index`, relative to frame 0.
    pub fn time(&self, index: usize) -> Time {
        self.time_of_pts(self.entries[index].pts)
    }

    /// How long frame `index` is shown, in time-base ticks: up to the next frame, or for the
    /// last frame its packet duration (or the typical frame duration when the packet has none).
    pub fn duration_pts(&self, index: usize) -> i64 {
        if index + 1 < self.entries.len() {
            self.entries[index + 1].pts - self.entries[index].pts
        } else if self.entries[index].duration > 0 {
            self.entries[index].duration
        } else {
            self.fallback_frame_duration
        }
    }

    pub fn duration_of(&self, index: usize) -> Time {
        Time::from_pts(
            self.duration_pts(index),
            self.time_base.num,
            self.time_base.den,
        )
    }

    /// When the last frame stops being shown: the video's duration from frame 0.
    pub fn end_time(&self) -> Time {
        let last = self.entries.len() - 1;
        self.time(last) + self.duration_of(last)
    }

    /// The first frame whose time is `>= t` (`len()` when there is none).
    pub fn first_at_or_after(&self, t: Time) -> usize {
        self.entries
            .partition_point(|e| self.time_of_pts(e.pts) < t)
    }

    /// The frame shown at time `t`: the one with the largest time `<= t`; `None` before frame
    /// 0 or at/after the end of the video.
    pub fn shown_at(&self, t: Time) -> Option<usize> {
        if t.is_negative() || t >= self.end_time() {
            return None;
        }
        let after = self
            .entries
            .partition_point(|e| self.time_of_pts(e.pts) <= t);
        after.checked_sub(1)
    }

    /// The frame with exactly this pts, if any.
    pub fn index_of_pts(&self, pts: i64) -> Option<usize> {
        self.entries.binary_search_by_key(&pts, |e| e.pts).ok()
    }

    /// The last keyframe at or before frame `index` in presentation order: decoding from it
    /// reaches frame `index`. Frame 0 when the stream marks no earlier keyframe.
    pub fn keyframe_at_or_before(&self, index: usize) -> usize {
        (0..=index.min(self.entries.len() - 1))
            .rev()
            .find(|&i| self.entries[i].key)
            .unwrap_or(0)
    }

    /// The first keyframe at or after frame `index` (`len()` when there is none).
    pub fn keyframe_at_or_after(&self, index: usize) -> usize {
        (index..self.entries.len())
            .find(|&i| self.entries[i].key)
            .unwrap_or(self.entries.len())
    }

    pub fn keyframe_count(&self) -> usize {
        self.entries.iter().filter(|e| e.key).count()
    }

    /// The typical frame duration in ticks (median spacing).
    pub fn typical_frame_duration(&self) -> i64 {
        self.fallback_frame_duration
    }
}

fn fallback_duration(entries: &[FrameEntry], tb: Ratio, nominal_rate: Option<Ratio>) -> i64 {
    if entries.len() >= 2 {
        let mut gaps: Vec<i64> = entries
            .windows(2)
            .map(|w| w[1].pts - w[0].pts)
            .filter(|&g| g > 0)
            .collect();
        if !gaps.is_empty() {
            gaps.sort_unstable();
            return gaps[gaps.len() / 2];
        }
    }
    if let Some(fps) = nominal_rate {
        // ticks per frame = 1/fps / tb = den_fps * tb_den / (num_fps * tb_num)
        let ticks = (fps.den as i128 * tb.den as i128) / (fps.num as i128 * tb.num.max(1) as i128);
        if ticks > 0 {
            return ticks as i64;
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(pts: &[i64], keys: &[usize]) -> FrameTable {
        let entries = pts
            .iter()
            .enumerate()
            .map(|(i, &p)| FrameEntry {
                pts: p,
                dts: p,
                duration: 0,
                key: keys.contains(&i),
            })
            .collect();
        FrameTable::from_entries(Ratio::new(1, 1000), entries, 0, Some(Ratio::new(25, 1)))
    }

    #[test]
    fn lookups_on_a_variable_rate_table() {
        // frames at 100, 140, 200, 210, 300 ms (origin 100)
        let t = table(&[200, 100, 300, 140, 210], &[0, 3]);
        assert_eq!(t.pts(0), 100);
        assert_eq!(t.time(2), Time::new(1, 10));
        assert_eq!(t.first_at_or_after(Time::new(1, 10)), 2);
        assert_eq!(t.first_at_or_after(Time::new(101, 1000)), 3);
        assert_eq!(t.shown_at(Time::new(109, 1000)), Some(2));
        assert_eq!(t.shown_at(Time::new(110, 1000)), Some(3));
        assert_eq!(t.shown_at(Time::new(-1, 1000)), None);
        // last frame lasts the median gap (60 ms): end at 200 + 60 = 260 ms after origin
        assert_eq!(t.end_time(), Time::new(260, 1000));
        assert_eq!(t.shown_at(Time::new(259, 1000)), Some(4));
        assert_eq!(t.shown_at(Time::new(260, 1000)), None);
        assert_eq!(t.index_of_pts(210), Some(3));
        assert_eq!(t.index_of_pts(211), None);
    }

    #[test]
    fn keyframe_lookup() {
        let t = table(&[0, 40, 80, 120, 160, 200], &[0, 3]);
        assert_eq!(t.keyframe_at_or_before(2), 0);
        assert_eq!(t.keyframe_at_or_before(3), 3);
        assert_eq!(t.keyframe_at_or_before(5), 3);
        assert_eq!(t.keyframe_at_or_after(1), 3);
        assert_eq!(t.keyframe_at_or_after(4), 6);
    }
}
