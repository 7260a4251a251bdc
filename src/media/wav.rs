//! A soundtrack ([`AudioPlan`]) written as a 16-bit PCM WAV file (speech models' input: 16 kHz
//! mono). The samples are decoded, trimmed to the sample and resampled exactly as for an AAC
//! soundtrack ([`crate::media::audio`]: swresample with its default filter, to planar float),
//! with the channel mix normalised as swresample normalises it for integer output, then
//! converted to 16 bits as swresample does (`av_clip_int16(lrintf(x * 32768))`), so the
//! file holds what `ffmpeg -i SRC -ss S -t D -ac 1 -ar 16000 -f wav` writes. Each segment
//! takes exactly its length in samples (rounded to the nearest), padded with silence where
//! the source's audio ends early. Written in a stream: memory stays flat however long it is.

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::media::audio::{AudioFormat, AudioPlan, AudioSegment, SegmentReader};
use crate::vocab::time::{Rounding, Time};

/// What a WAV file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WavFacts {
    pub sample_rate: u32,
    pub channels: u16,
    /// Samples per channel.
    pub samples: u64,
}

/// Writes `plan` as 16-bit PCM at `format` to `path`.
pub fn write_wav(plan: &AudioPlan, format: AudioFormat, path: &Path) -> Result<WavFacts> {
    let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    let mut out = BufWriter::new(file);
    let io = |e| Error::io(path, e);
    out.write_all(&header(format, 0)).map_err(io)?;
    let channels = format.channels as usize;
    let rate = format.sample_rate as i64;
    let mut written: i64 = 0;
    let mut segment_end = Time::ZERO;
    let mut bytes = Vec::new();
    for seg in &plan.segments {
        segment_end = segment_end + seg.duration();
        let end_samples = segment_end.scale(rate, 1).to_pts(1, 1, Rounding::Nearest);
        let mut reader = match seg {
            AudioSegment::Source {
                source,
                start,
                end,
                inputs,
            } => SegmentReader::open(source, *start, *end, format, inputs)?
                .map(SegmentReader::for_pcm),
            AudioSegment::Silence { .. } => None,
        };
        while written < end_samples {
            let room = (end_samples - written) as usize;
            let chunk = match reader.as_mut() {
                Some(r) => r.next_chunk()?,
                None => None,
            };
            bytes.clear();
            let n = match chunk {
                Some(c) => {
                    let n = c[0].len().min(room);
                    for i in 0..n {
                        for plane in c.iter().take(channels) {
                            bytes.extend_from_slice(&to_s16(plane[i]).to_le_bytes());
                        }
                    }
                    n
                }
                None => {
                    // The source ended early (or silence): zeros to the segment's length.
                    reader = None;
                    let n = room.min(1 << 16);
                    bytes.resize(n * channels * 2, 0);
                    n
                }
            };
            out.write_all(&bytes).map_err(io)?;
            written += n as i64;
        }
    }
    let data_bytes = written as u64 * channels as u64 * 2;
    if data_bytes > u32::MAX as u64 - 36 {
        return Err(Error::request(
            path,
            "the soundtrack is too long for a WAV file (4 GiB); ask for a shorter span",
        ));
    }
    out.seek(SeekFrom::Start(0)).map_err(io)?;
    out.write_all(&header(format, data_bytes as u32))
        .map_err(io)?;
    out.flush().map_err(io)?;
    Ok(WavFacts {
        sample_rate: format.sample_rate,
        channels: format.channels,
        samples: written as u64,
    })
}

/// swresample's float to 16-bit conversion: `av_clip_int16(lrintf(x * (1 << 15)))`.
fn to_s16(x: f32) -> i16 {
    (x * 32768.0).round_ties_even().clamp(-32768.0, 32767.0) as i16
}

/// The 44-byte RIFF/WAVE header of 16-bit PCM with `data_bytes` of samples.
fn header(format: AudioFormat, data_bytes: u32) -> [u8; 44] {
    let channels = format.channels as u32;
    let block = channels * 2;
    let mut h = [0u8; 44];
    h[0..4].copy_from_slice(b"RIFF");
    h[4..8].copy_from_slice(&(36 + data_bytes).to_le_bytes());
    h[8..12].copy_from_slice(b"WAVE");
    h[12..16].copy_from_slice(b"fmt ");
    h[16..20].copy_from_slice(&16u32.to_le_bytes());
    h[20..22].copy_from_slice(&1u16.to_le_bytes());
    h[22..24].copy_from_slice(&(channels as u16).to_le_bytes());
    h[24..28].copy_from_slice(&format.sample_rate.to_le_bytes());
    h[28..32].copy_from_slice(&(format.sample_rate * block).to_le_bytes());
    h[32..34].copy_from_slice(&(block as u16).to_le_bytes());
    h[34..36].copy_from_slice(&16u16.to_le_bytes());
    h[36..40].copy_from_slice(b"data");
    h[40..44].copy_from_slice(&data_bytes.to_le_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_convert_as_swresample_does() {
        assert_eq!(to_s16(0.0), 0);
        assert_eq!(to_s16(1.0), 32767);
        assert_eq!(to_s16(-1.0), -32768);
        assert_eq!(to_s16(1.5 / 32768.0), 2, "half to even");
        assert_eq!(to_s16(2.5 / 32768.0), 2, "half to even");
        let h = header(
            AudioFormat {
                sample_rate: 16000,
                channels: 1,
            },
            32000,
        );
        assert_eq!(&h[0..4], b"RIFF");
        assert_eq!(u32::from_le_bytes(h[28..32].try_into().unwrap()), 32000);
        assert_eq!(u32::from_le_bytes(h[40..44].try_into().unwrap()), 32000);
    }
}
