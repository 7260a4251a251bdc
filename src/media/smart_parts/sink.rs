//! Where a re-encoded part's packets go: straight into the output ([`SpliceMuxer`]), or into
//! a [`PacketBuffer`] kept in memory while the part is encoded on a thread of its own (the
//! tail of a clip, beside its head), which the muxer takes in order when the output reaches
//! that part ([`SpliceMuxer::write_buffer`]). Either way the output gets the same packets in
//! the same order: each part is its own x264 run.

use std::path::Path;

use ffmpeg_next as ffmpeg;

use crate::error::{Error, Result};
use crate::media::smart_parts::mux::SpliceMuxer;

/// What a [`PartEncoder`](crate::media::smart_parts::x264::PartEncoder) needs of where its
/// packets go.
pub(crate) trait PacketSink {
    /// The output as named (for messages).
    fn path(&self) -> &Path;
    /// The presentation time of output frame `o` (in the output's time base).
    fn pts(&self, o: usize) -> i64;
    /// The NAL length size of the samples.
    fn length_size(&self) -> usize;
    /// Takes the packet (a length-prefixed sample) of output frame `o`.
    fn write(&mut self, packet: ffmpeg::Packet, o: usize, key: bool) -> Result<()>;
}

impl PacketSink for SpliceMuxer<'_> {
    fn path(&self) -> &Path {
        SpliceMuxer::path(self)
    }

    fn pts(&self, o: usize) -> i64 {
        SpliceMuxer::pts(self, o)
    }

    fn length_size(&self) -> usize {
        SpliceMuxer::length_size(self)
    }

    fn write(&mut self, packet: ffmpeg::Packet, o: usize, key: bool) -> Result<()> {
        SpliceMuxer::write(self, packet, o, key)
    }
}

/// The packets of one part, in output order, until the muxer takes them.
pub(crate) struct PacketBuffer<'a> {
    path: &'a Path,
    /// Each output frame's presentation time (the whole output's).
    pts: &'a [i64],
    length_size: usize,
    packets: Vec<(ffmpeg::Packet, usize, bool)>,
}

impl<'a> PacketBuffer<'a> {
    /// An empty buffer for the output `path` whose frames have presentation times `pts`
    /// and whose samples have NAL lengths of `length_size` bytes (the muxer's).
    pub(crate) fn new(path: &'a Path, pts: &'a [i64], length_size: usize) -> PacketBuffer<'a> {
        PacketBuffer {
            path,
            pts,
            length_size,
            packets: Vec::new(),
        }
    }
}

impl PacketSink for PacketBuffer<'_> {
    fn path(&self) -> &Path {
        self.path
    }

    fn pts(&self, o: usize) -> i64 {
        self.pts[o]
    }

    fn length_size(&self) -> usize {
        self.length_size
    }

    fn write(&mut self, packet: ffmpeg::Packet, o: usize, key: bool) -> Result<()> {
        // The buffer takes what one part's run gives: output frames one after the other.
        if let Some(&(_, last, _)) = self.packets.last() {
            if o != last + 1 {
                return Err(Error::internal(format!(
                    "{}: output frame {o} kept after output frame {last}",
                    self.path.display()
                )));
            }
        }
        self.packets.push((packet, o, key));
        Ok(())
    }
}

impl SpliceMuxer<'_> {
    /// Writes the packets `buffer` kept, in order.
    pub(crate) fn write_buffer(&mut self, buffer: PacketBuffer) -> Result<()> {
        if buffer.length_size != self.length_size() {
            return Err(Error::internal(format!(
                "{}: packets kept with {}-byte NAL lengths for an output of {}",
                self.path().display(),
                buffer.length_size,
                self.length_size()
            )));
        }
        for (packet, o, key) in buffer.packets {
            self.write(packet, o, key)?;
        }
        Ok(())
    }
}
