//! What is known to be damaged in a stream: packets that did not decode, frames decoded with
//! errors concealed, a tail that cannot be read, packets the container lost; and the one-line
//! summary sidecars and warnings give.

/// A packet that could not be decoded, found while building a table by decoding.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct DamagedPacket {
    /// Its time relative to the table's origin (from its pts or dts), when known.
    pub time_s: Option<f64>,
    /// The last frame decoded before it (`None` when it came before every frame).
    pub after_frame: Option<usize>,
    /// Byte position in the file.
    pub pos: i64,
    /// The frames decoded after it up to the keyframe after the next picture (half-open
    /// `[start, end)`): their references were concealed, and how a decoder conceals depends
    /// on its threads (ffmpeg's default frame-threaded decode of such a stream differs from
    /// run to run in them, and on FFmpeg 9.0 also in the frames after a keyframe that follows
    /// the damage at once).
    pub suspect_frames: [usize; 2],
}

/// Where a file stops being readable (see `read_error_ends_input`): the video ends there,
/// as it does for the ffmpeg CLI and `ffprobe -count_frames`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct UnreadableTail {
    /// Frames read before the error: the video's frames.
    pub after_frame: usize,
    /// Byte position of the last packet read before it (-1 when unknown).
    pub last_packet_pos: i64,
    /// What the demuxer said.
    pub error: String,
}

/// Packets the container lost, told by a jump in timestamps where the format has none: Ogg
/// Theora stamps every frame with its frame number (a dropped frame is an empty packet), so a
/// gap means pages that failed their checksum were skipped. The frames after the gap, up to
/// the next keyframe, are decoded from incomplete references (ffmpeg shows the same pictures;
/// it only warns about the checksum).
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct LostPackets {
    /// The last frame before the gap.
    pub after_frame: usize,
    /// How many frames' packets are missing.
    pub missing: i64,
    /// The frames that may show the damage (half-open `[start, end)`): from the frame before
    /// the gap (its packet may have lost its end) up to the next keyframe.
    pub suspect_frames: [usize; 2],
}

/// A packet the demuxer marked as corrupt (`AV_PKT_FLAG_CORRUPT`: an MPEG-TS continuity
/// counter or CRC failure, a truncated PES). The decoder may conceal its errors without saying
/// so (FFmpeg before 5.0 flags a concealed picture only without frame threads), so this is
/// the container's word that the pictures depending on it are damaged.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct CorruptPacket {
    /// The frame the packet holds.
    pub frame: usize,
    /// Byte position in the file (-1 when unknown).
    pub pos: i64,
    /// The frames that may show the damage (half-open `[start, end)`): those decoded from it
    /// on, up to the next keyframe.
    pub suspect_frames: [usize; 2],
}

/// The first video packet read after the demuxer logged errors (FFmpeg's log at error level).
/// A demuxer that meets damage often says so only there and reads on: Matroska drops a block
/// whose track number a flipped bit changed ("Invalid track number"), so a picture that later
/// ones refer to may be gone, with no flag on any packet and no word from the decoder. ffmpeg
/// decodes the pictures after it from what it decoded before; a seek past them would decode
/// them from other history (a VP8 WebM with flipped bits: other pixels after every later
/// keyframe, 8-17 dB). So the frames from here on are read as the decode from the start reads
/// them, and those up to the next keyframe are listed.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct DemuxerErrors {
    /// The frame whose packet came first after the errors.
    pub frame: usize,
    /// Its byte position in the file (-1 when unknown).
    pub pos: i64,
    /// How many errors the demuxer logged since the video packet before it (those logged
    /// while the input was opened and probed count before the first packet).
    pub errors: u64,
    /// The frames that may show the damage (half-open `[start, end)`): those decoded from it
    /// on, up to the next keyframe.
    pub suspect_frames: [usize; 2],
}

/// An image of a sequence whose file is cut short (see `media::images::whole`): FFmpeg
/// conceals a truncated JPEG without flagging the picture, and fails on a truncated PNG.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct TruncatedImage {
    /// The frame the image is.
    pub frame: usize,
    /// The image file's name in the sequence's folder.
    pub file: String,
    /// What is missing.
    pub why: String,
}

/// What is known to be damaged in a stream.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Damage {
    /// Packets the decoder rejected (their pictures are not among the frames).
    pub undecodable_packets: Vec<DamagedPacket>,
    /// Frames the decoder returned but marked as damaged (errors concealed), in order.
    pub concealed_frames: Vec<usize>,
    /// The file cannot be read past this point: the rest is not part of the video.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<UnreadableTail>,
    /// Runs of packets the container lost (Ogg Theora only: see [`LostPackets`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost_packets: Vec<LostPackets>,
    /// Packets the demuxer marked as corrupt (see [`CorruptPacket`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub corrupt_packets: Vec<CorruptPacket>,
    /// Where the demuxer logged errors while reading (see [`DemuxerErrors`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub demuxer_errors: Vec<DemuxerErrors>,
    /// Images of a sequence whose files are cut short (see [`TruncatedImage`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub truncated_images: Vec<TruncatedImage>,
}

impl Damage {
    /// True when no damage is known (which, for a table built from packets, does not mean
    /// there is none).
    pub fn is_empty(&self) -> bool {
        self.undecodable_packets.is_empty()
            && self.concealed_frames.is_empty()
            && self.unreadable.is_none()
            && self.lost_packets.is_empty()
            && self.corrupt_packets.is_empty()
            && self.demuxer_errors.is_empty()
            && self.truncated_images.is_empty()
    }

    /// Whether frame `index` may show damage from packets the decoder rejected or the
    /// container lost or marked corrupt or read after errors, or is an image whose file is cut short.
    pub fn suspect(&self, index: usize) -> bool {
        let undecodable = self.undecodable_packets.iter().map(|p| p.suspect_frames);
        let lost = self.lost_packets.iter().map(|l| l.suspect_frames);
        let corrupt = self.corrupt_packets.iter().map(|c| c.suspect_frames);
        let demuxer = self.demuxer_errors.iter().map(|d| d.suspect_frames);
        undecodable
            .chain(lost)
            .chain(corrupt)
            .chain(demuxer)
            .any(|[a, b]| (a..b).contains(&index))
            || self.truncated_image(index).is_some()
    }

    /// Whether the pictures of this stream depend on how its decoder conceals errors (it
    /// rejected packets or concealed errors), which depends on the decoder's threads: such a
    /// stream is decoded with one thread, the same pictures on every run (as
    /// `ffmpeg -threads 1` gives). A stream the decoder takes without complaint decodes the
    /// same with any threads.
    pub(crate) fn decode_depends_on_threads(&self) -> bool {
        !self.undecodable_packets.is_empty()
            || !self.concealed_frames.is_empty()
            || !self.demuxer_errors.is_empty()
    }

    /// The cut-short image that frame `index` is, if it is one.
    pub(crate) fn truncated_image(&self, index: usize) -> Option<&TruncatedImage> {
        self.truncated_images.iter().find(|t| t.frame == index)
    }

    /// The first frame the damage can touch: the first concealed frame or the first that
    /// depends on a corrupt packet; frame 0 where the decoder rejected a packet or the demuxer
    /// logged errors (a cut-short image touches no other frame: a sequence's images are
    /// independent).
    pub fn first_affected_frame(&self) -> Option<usize> {
        // A packet the decoder rejects or a demuxer's error says the file's bytes are damaged,
        // not only where: a flipped bit inside an earlier packet may leave no trace and yet
        // change what the decoder carries on (VP8 keeps it across keyframes: a WebM with
        // flipped bits decoded from a keyframe gave other pixels than from the start, before
        // the first packet it rejected), so such a stream is read as from the start.
        let bytes_damaged =
            (!self.undecodable_packets.is_empty() || !self.demuxer_errors.is_empty()).then_some(0);
        let corrupt = self.corrupt_packets.iter().map(|c| c.suspect_frames[0]);
        // (Concealed frames are listed in order: the first is the least. Readers ask this for
        // every frame they hand out.)
        self.concealed_frames
            .first()
            .copied()
            .into_iter()
            .chain(bytes_damaged)
            .chain(corrupt)
            .min()
    }

    /// One line for people: "3 damaged packets near 12.4 s; 2 frames decoded with errors
    /// concealed (first: 310)".
    pub(crate) fn summary(&self) -> String {
        let mut parts = Vec::new();
        let n = self.undecodable_packets.len();
        if n > 0 {
            let near = self
                .undecodable_packets
                .iter()
                .find_map(|p| p.time_s)
                .map(|t| format!(" near {t:.2} s"))
                .unwrap_or_default();
            parts.push(format!(
                "{n} damaged packet{} could not be decoded{near}",
                if n == 1 { "" } else { "s" }
            ));
        }
        let c = self.concealed_frames.len();
        if c > 0 {
            parts.push(format!(
                "{c} frame{} decoded with errors concealed (first: frame {})",
                if c == 1 { "" } else { "s" },
                self.concealed_frames[0]
            ));
        }
        if !self.lost_packets.is_empty() {
            let missing: i64 = self.lost_packets.iter().map(|l| l.missing).sum();
            let suspect: usize = self
                .lost_packets
                .iter()
                .map(|l| l.suspect_frames[1] - l.suspect_frames[0])
                .sum();
            parts.push(format!(
                "the container lost the packets of {missing} frame{} (first after frame {}); {suspect} frames up to the next keyframes may show it",
                if missing == 1 { "" } else { "s" },
                self.lost_packets[0].after_frame
            ));
        }
        if let Some(c) = self.corrupt_packets.first() {
            let n = self.corrupt_packets.len();
            parts.push(format!(
                "the container marked {n} packet{} corrupt (first: frame {})",
                if n == 1 { "" } else { "s" },
                c.frame
            ));
        }
        if let Some(d) = self.demuxer_errors.first() {
            let n: u64 = self.demuxer_errors.iter().map(|d| d.errors).sum();
            parts.push(format!(
                "the demuxer reported {n} error{} while reading (first before frame {}): frames after it are read as a decode from the start reads them",
                if n == 1 { "" } else { "s" },
                d.frame
            ));
        }
        if let Some(t) = self.truncated_images.first() {
            let n = self.truncated_images.len();
            parts.push(format!(
                "{n} image file{} cut short (first: {}, frame {}: {})",
                if n == 1 { " is" } else { "s are" },
                t.file,
                t.frame,
                t.why
            ));
        }
        if let Some(u) = &self.unreadable {
            parts.push(format!(
                "the file cannot be read after frame {} ({}): the video ends there, as in ffmpeg",
                u.after_frame, u.error
            ));
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damage_summary_reads_well() {
        let d = Damage {
            undecodable_packets: vec![
                DamagedPacket {
                    time_s: Some(12.4),
                    after_frame: Some(309),
                    pos: 100,
                    suspect_frames: [310, 320],
                },
                DamagedPacket {
                    time_s: None,
                    after_frame: Some(309),
                    pos: 200,
                    suspect_frames: [310, 320],
                },
            ],
            concealed_frames: vec![310, 311],
            unreadable: None,
            lost_packets: Vec::new(),
            corrupt_packets: Vec::new(),
            demuxer_errors: Vec::new(),
            truncated_images: Vec::new(),
        };
        assert_eq!(
            d.summary(),
            "2 damaged packets could not be decoded near 12.40 s; 2 frames decoded with errors concealed (first: frame 310)"
        );
        // The frames after a rejected packet up to the next keyframe are suspect, no others.
        assert!(!d.suspect(309) && d.suspect(310) && d.suspect(319) && !d.suspect(320));
        assert!(d.decode_depends_on_threads());
        assert!(!Damage::default().decode_depends_on_threads());
        let tail = Damage {
            unreadable: Some(UnreadableTail {
                after_frame: 366,
                last_packet_pos: 1000,
                error: "Invalid data found when processing input".into(),
            }),
            ..Damage::default()
        };
        assert!(!tail.is_empty());
        // Damage the decoder was told of stays where it is; a rejected packet or a demuxer's
        // error makes the whole stream read from the start.
        let corrupt = Damage {
            corrupt_packets: vec![CorruptPacket {
                frame: 30,
                pos: 9,
                suspect_frames: [28, 36],
            }],
            ..Damage::default()
        };
        assert_eq!(corrupt.first_affected_frame(), Some(28));
        assert!(!corrupt.decode_depends_on_threads());
        assert_eq!(d.first_affected_frame(), Some(0));
        let demuxer = Damage {
            demuxer_errors: vec![DemuxerErrors {
                frame: 56,
                pos: 69539,
                errors: 1,
                suspect_frames: [56, 68],
            }],
            ..Damage::default()
        };
        assert_eq!(demuxer.first_affected_frame(), Some(0));
        assert!(demuxer.decode_depends_on_threads());
        assert!(demuxer.suspect(56) && demuxer.suspect(67) && !demuxer.suspect(68));
        assert!(!demuxer.suspect(55) && !demuxer.is_empty());
        assert_eq!(
            demuxer.summary(),
            "the demuxer reported 1 error while reading (first before frame 56): frames after it are read as a decode from the start reads them"
        );
        assert_eq!(
            tail.summary(),
            "the file cannot be read after frame 366 (Invalid data found when processing input): the video ends there, as in ffmpeg"
        );
    }
}
