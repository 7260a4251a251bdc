//! The source's H.264 stream as smart encoding copies it: its parameter sets (the avcC
//! record and its one SPS), its video packets in decoding order with their IDR flags, and the
//! input they are copied from. Opened once: the same input gives the parameter sets and,
//! later, the copied packets.

use ffmpeg_next as ffmpeg;

use crate::error::{Error, Result};
use crate::media::h264::{AvcC, Sps};
use crate::media::input::{read_error_ends_input, read_packet, VideoInput};
use crate::media::source::Source;
use crate::media::table::{coded_packet, CodedPacket, FrameTable};

/// An H.264 source opened for smart encoding.
pub(crate) struct H264Source {
    /// The opened input (its other streams discarded), which copied packets are read from.
    pub input: VideoInput,
    /// The video stream's index.
    pub stream: usize,
    pub avcc: AvcC,
    pub sps: Sps,
    /// The video packets in decoding order.
    pub packets: Vec<CodedPacket>,
}

impl H264Source {
    /// Opens `source` (whose frame table is `table`) for smart encoding. `Ok(Err(why))` when
    /// it cannot be smart-encoded: another codec, parameter sets in the stream rather than an
    /// avcC record, more than one SPS, packets that cannot be cut.
    pub(crate) fn open(
        source: &Source,
        table: &FrameTable,
    ) -> Result<std::result::Result<H264Source, String>> {
        let mut input = VideoInput::open(source)?;
        let vindex = input.video.index;
        input.keep_only_streams(&[vindex]);
        let par = input
            .context
            .stream(vindex)
            .expect("the video stream")
            .parameters();
        if par.id() != ffmpeg::codec::Id::H264 {
            return Ok(Err(format!(
                "the source video is {}; smart encoding copies H.264 only",
                input.video.codec
            )));
        }
        let extradata = crate::media::ffi::parameters_extradata(&par);
        let avcc = match AvcC::parse(&extradata) {
            Ok(a) => a,
            Err(_) => {
                return Ok(Err(
                    "the source carries its H.264 parameter sets in the stream, not in an avcC record (a raw or transport stream)".into(),
                ))
            }
        };
        if avcc.sps.len() != 1 || avcc.pps.is_empty() {
            return Ok(Err(format!(
                "the source has {} SPS and {} PPS; smart encoding handles one SPS",
                avcc.sps.len(),
                avcc.pps.len()
            )));
        }
        let sps = match Sps::parse(&avcc.sps[0]) {
            Ok(s) => s,
            Err(e) => return Ok(Err(format!("its SPS could not be read: {e}"))),
        };
        // The table's scan recorded the packets in decoding order with their IDR flags; only
        // a table built otherwise (by decoding) leaves them to be read here.
        let packets = match table.coded_packets() {
            Some(Ok(packets)) => packets.clone(),
            Some(Err(why)) => return Ok(Err(why.clone())),
            None => {
                let read = read_packets(&mut input, avcc.length_size, table.len())?;
                // That read went to the end: the copies need an input at its start.
                input = VideoInput::open(source)?;
                input.keep_only_streams(&[vindex]);
                match read {
                    Ok(packets) => packets,
                    Err(why) => return Ok(Err(why)),
                }
            }
        };
        Ok(Ok(H264Source {
            input,
            stream: vindex,
            avcc,
            sps,
            packets,
        }))
    }
}

/// Reads every video packet of `input` (opened, its other streams discarded) in decoding
/// order, for a table that did not record them. `Ok(Err(why))` when they cannot be cut.
fn read_packets(
    input: &mut VideoInput,
    length_size: usize,
    frames: usize,
) -> Result<std::result::Result<Vec<CodedPacket>, String>> {
    let vindex = input.video.index;
    crate::tally::count(crate::tally::Event::PacketScan);
    let mut packets = Vec::with_capacity(frames);
    loop {
        let packet = match read_packet(&mut input.context) {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) if read_error_ends_input(&e) => break,
            Err(e) => return Err(Error::corrupt(&input.path, "while indexing", e.to_string())),
        };
        if packet.stream() != vindex || crate::media::ffi::packet_is_discarded(&packet) {
            continue;
        }
        match coded_packet(&packet, length_size) {
            Ok(p) => packets.push(p),
            Err(why) => return Ok(Err(why)),
        }
    }
    Ok(Ok(packets))
}
