//! The source's H.264 stream as smart encoding copies it: its parameter sets (the avcC
//! record and its one SPS), its video packets in decoding order with their IDR flags, and the
//! input they are copied from. The input is the one the frame table's scan read where the
//! stream still has it, and is lent to the reader of the re-encoded part written before the
//! copies on the same thread and given back after it: the scan, the parameter sets, that part
//! and the copied GOPs read one input (each reader positions it by a seek).

use ffmpeg_next as ffmpeg;

use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::media::bitstream::h264::{AvcC, Sps};
use crate::media::input::{read_error_ends_input, read_packet, VideoInput};
use crate::media::source::Source;
use crate::media::table::{coded_packet, CodedPacket, FrameTable, UsedInput};

/// An H.264 source opened for smart encoding.
pub(crate) struct H264Source {
    /// The source, for opening it again where the input is not here.
    source: Source,
    /// The call it is read for.
    call: CallContext,
    /// The opened input (its other streams discarded), which copied packets are read from;
    /// `None` while lent ([`H264Source::lend_input`]).
    input: Option<UsedInput>,
    /// The video stream's index.
    pub stream: usize,
    /// The video stream's codec parameters, and whether the source has an audio stream.
    pub parameters: ffmpeg::codec::Parameters,
    pub has_audio: bool,
    pub avcc: AvcC,
    pub sps: Sps,
    /// The video packets in decoding order.
    pub packets: Vec<CodedPacket>,
}

impl H264Source {
    /// Opens `source` (whose frame table is `table`) for smart encoding. `Ok(Err(why))` when
    /// it cannot be smart-encoded: another codec, parameter sets in the stream rather than an
    /// avcC record, more than one SPS, packets that cannot be cut.
    /// `used`: the input the table's scan read, when the stream still has it (else the
    /// source is opened now, for the call `ctx`).
    pub(crate) fn open(
        source: &Source,
        table: &FrameTable,
        used: Option<UsedInput>,
        ctx: &CallContext,
    ) -> Result<std::result::Result<H264Source, String>> {
        let (mut input, mut read) = match used {
            Some(u) => (u.input, u.read),
            None => (VideoInput::open(source, ctx)?, false),
        };
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
                if read {
                    // (Read by the scan: the packets are read from the start again.)
                    input = VideoInput::open(source, ctx)?;
                    input.keep_only_streams(&[vindex]);
                }
                let packets = read_packets(&mut input, avcc.length_size, table.len())?;
                // That read went to the end: the readers position the input by a seek.
                read = true;
                match packets {
                    Ok(packets) => packets,
                    Err(why) => return Ok(Err(why)),
                }
            }
        };
        let has_audio = crate::media::input::best_audio_stream(&input.context).is_some();
        Ok(Ok(H264Source {
            source: source.clone(),
            call: ctx.clone(),
            input: Some(UsedInput { input, read }),
            stream: vindex,
            parameters: par,
            has_audio,
            avcc,
            sps,
            packets,
        }))
    }

    /// The input, lent to the reader of a part written before the copies; `None` when it
    /// is already lent.
    pub(crate) fn lend_input(&mut self) -> Option<UsedInput> {
        self.input.take()
    }

    /// Gives back a lent input (that reader's own, which it positioned by a seek).
    pub(crate) fn give_back(&mut self, input: Option<UsedInput>) {
        // (Its reader kept only the video stream, as `open` did.)
        if input.is_some() {
            self.input = input;
        }
    }

    /// The input to copy packets from, positioned by a seek to `at` (a timestamp of the
    /// video stream: the first copied packet's), and the packets. The source is opened again
    /// when the lent input was not given back, or when the seek fails on an input already
    /// read (it stays where it was, at its end; a fresh input reads from the start, where
    /// the copy finds its first packet, as it does when the seek fails on a fresh one).
    pub(crate) fn input_for_copies(
        &mut self,
        at: i64,
    ) -> Result<(&mut VideoInput, &[CodedPacket])> {
        let call = self.call.clone();
        let fresh = |source: &Source, stream: usize| -> Result<UsedInput> {
            let mut input = VideoInput::open(source, &call)?;
            input.keep_only_streams(&[stream]);
            Ok(UsedInput { input, read: false })
        };
        if self.input.is_none() {
            self.input = Some(fresh(&self.source, self.stream)?);
        }
        let used = self.input.as_mut().expect("just set");
        let sought =
            crate::media::ffi::seek_to_timestamp(&mut used.input.context, self.stream, at).is_ok();
        if !sought && used.read {
            *used = fresh(&self.source, self.stream)?;
        }
        // (Every copy seeks to its first packet.)
        used.read = true;
        Ok((&mut used.input, &self.packets))
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
    input.call.count(crate::call::tally::Event::PacketScan);
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
