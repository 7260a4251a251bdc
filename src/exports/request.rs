//! The request body a video export writes beside its clip (`NAME.payload.json`): the clip as
//! Base64 in the body each API takes, a Gemini `generateContent` body (`inlineData` with
//! `videoMetadata`) or an OpenAI-compatible chat body (a `video_url` data URL). The body is
//! made as its JSON envelope with a hole for the Base64, so that its size is known before the
//! clip is encoded (the budget counts the whole body) and the Base64 is streamed into it.

use std::path::Path;

use crate::error::{Error, Result};
use crate::plan::{Preset, ServerSampling, VideoPayload};

/// Stands for the Base64 text in the envelope (Base64 needs no JSON escaping).
const HOLE: &str = "VIDPREP_BASE64_DATA";

/// A request body around the Base64 of a clip: `prefix`, the Base64, `suffix`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Envelope {
    pub prefix: String,
    pub suffix: String,
}

impl Envelope {
    /// The body for `payload` of a clip lasting `duration_s` seconds, under `preset`;
    /// `sampling` is what the server will do (Gemini's body says its `fps`, MiMo's part too).
    pub fn new(
        payload: VideoPayload,
        preset: &Preset,
        sampling: Option<&ServerSampling>,
        duration_s: f64,
    ) -> Envelope {
        let body = match payload {
            VideoPayload::GeminiVideo => {
                // Gemini's REST reference spells Part's fields in lowerCamelCase (`inlineData`,
                // `mimeType`, `videoMetadata`, `startOffset`, `endOffset`); the offsets are
                // protobuf Durations (`"1.5s"`), the clip's whole span.
                let fps = sampling.and_then(|s| s.fps).unwrap_or(1.0);
                serde_json::json!({
                    "contents": [{
                        "role": "user",
                        "parts": [{
                            "inlineData": {"mimeType": "video/mp4", "data": HOLE},
                            "videoMetadata": {
                                "fps": fps,
                                "startOffset": "0s",
                                "endOffset": duration_text(duration_s),
                            }
                        }]
                    }]
                })
            }
            VideoPayload::OpenAiVideo => {
                let mut part = serde_json::json!({
                    "type": "video_url",
                    "video_url": {"url": format!("data:video/mp4;base64,{HOLE}")}
                });
                // MiMo reads the frame rate from the part (`fps`, 2 by default): said outright.
                if preset.name == crate::plan::Limits::Mimo {
                    if let Some(fps) = sampling.and_then(|s| s.fps) {
                        part["fps"] = serde_json::json!(fps);
                    }
                }
                serde_json::json!({"messages": [{"role": "user", "content": [part]}]})
            }
        };
        let text = serde_json::to_string_pretty(&body).expect("a JSON value");
        let at = text.find(HOLE).expect("the hole is in the body");
        Envelope {
            prefix: text[..at].to_string(),
            suffix: format!("{}\n", &text[at + HOLE.len()..]),
        }
    }

    /// The body's bytes besides the Base64.
    pub fn len(&self) -> u64 {
        (self.prefix.len() + self.suffix.len()) as u64
    }

    /// Writes the body with the Base64 of `video` at `temp` (the claimed `path`), streamed;
    /// returns its size in bytes.
    pub fn write(&self, video: &Path, path: &Path, temp: &Path) -> Result<u64> {
        use std::io::Write as _;
        let mut input = std::fs::File::open(video).map_err(|e| Error::io(path, e))?;
        let file = std::fs::File::create(temp).map_err(|e| Error::io(path, e))?;
        let mut out = std::io::BufWriter::new(file);
        out.write_all(self.prefix.as_bytes())
            .map_err(|e| Error::io(path, e))?;
        let mut encoder =
            base64::write::EncoderWriter::new(out, &base64::engine::general_purpose::STANDARD);
        std::io::copy(&mut input, &mut encoder).map_err(|e| Error::io(path, e))?;
        let mut out = encoder.finish().map_err(|e| Error::io(path, e))?;
        out.write_all(self.suffix.as_bytes())
            .map_err(|e| Error::io(path, e))?;
        out.flush().map_err(|e| Error::io(path, e))?;
        drop(out);
        Ok(std::fs::metadata(temp)
            .map_err(|e| Error::io(path, e))?
            .len())
    }
}

/// A protobuf Duration's JSON text of `s` seconds, to the millisecond, rounded down so that
/// the end offset never passes the clip's end (`"12.345s"`, `"3s"`).
fn duration_text(s: f64) -> String {
    let ms = (s * 1000.0).floor().max(0.0) as u64;
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        let t = format!("{}.{:03}", ms / 1000, ms % 1000);
        format!("{}s", t.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Limits;

    #[test]
    fn durations_are_protobuf_text() {
        assert_eq!(duration_text(3.0), "3s");
        assert_eq!(duration_text(2.5), "2.5s");
        assert_eq!(duration_text(3.0029), "3.002s");
        assert_eq!(duration_text(0.0), "0s");
    }

    #[test]
    fn the_envelope_is_the_body_around_the_base64() {
        let preset = Limits::Gemini.preset();
        let sampling = preset.sampling_for(Some(VideoPayload::GeminiVideo));
        let e = Envelope::new(VideoPayload::GeminiVideo, &preset, sampling.as_ref(), 2.5);
        let body: serde_json::Value =
            serde_json::from_str(&format!("{}QUJD{}", e.prefix, e.suffix)).unwrap();
        let part = &body["contents"][0]["parts"][0];
        assert_eq!(part["inlineData"]["data"], "QUJD");
        assert_eq!(part["inlineData"]["mimeType"], "video/mp4");
        assert_eq!(part["videoMetadata"]["fps"], 1.0);
        assert_eq!(part["videoMetadata"]["endOffset"], "2.5s");
        let mimo = Limits::Mimo.preset();
        let e = Envelope::new(
            VideoPayload::OpenAiVideo,
            &mimo,
            mimo.sampling.as_ref(),
            2.5,
        );
        let body: serde_json::Value =
            serde_json::from_str(&format!("{}QUJD{}", e.prefix, e.suffix)).unwrap();
        let part = &body["messages"][0]["content"][0];
        assert_eq!(part["video_url"]["url"], "data:video/mp4;base64,QUJD");
        assert_eq!(part["fps"], 2.0);
    }
}
