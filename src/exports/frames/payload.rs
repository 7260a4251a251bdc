//! The API payload of a frames export (`payload.json`): a request-body fragment for
//! OpenAI's, Anthropic's or Gemini's API with the images as Base64, and the text and audio
//! parts that may follow them; or, for a vLLM server, a chat body whose frames are one
//! `video/jpeg` list with the metadata its video processor writes time markers from.

use std::path::PathBuf;

use base64::Engine as _;

use crate::plan::Payload;

/// What the payload carries besides the images.
#[derive(Clone, Debug, Default)]
pub struct PayloadExtras {
    /// A text part (the frames' subtitles, VLMEvalKit's joined text).
    pub text: Option<String>,
    /// The WAV file to add as an audio part.
    pub audio: Option<PathBuf>,
    /// The video the frames come from (the vllm payload says it).
    pub video: Option<VideoFacts>,
}

/// What a vLLM server's video processor needs to know of the frames' video: their source
/// frame indices (in position order), the source's average rate, frame count and duration.
/// (vLLM's `VideoMediaIO.load_base64` for `video/jpeg`, `frames_indices`, `fps`,
/// `total_num_frames` and `duration`: the model's time markers come from indices / fps.)
#[derive(Clone, Debug, Default)]
pub struct VideoFacts {
    pub frames_indices: Vec<usize>,
    pub fps: f64,
    pub total_num_frames: usize,
    pub duration: f64,
}

/// The payload fragment for `api` with the images (in position order) as base64 and, after
/// them, a text part (`text`) and an audio part (`wav`,
/// a WAV file's bytes: OpenAI's `input_audio`, Gemini's `inline_data` of `audio/wav`;
/// Anthropic's Messages API takes no audio, which the plan's check refuses).
pub fn payload_with(
    api: Payload,
    mime: &str,
    images: &[Vec<u8>],
    text: Option<&str>,
    wav: Option<&[u8]>,
    video: Option<&VideoFacts>,
) -> serde_json::Value {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    match api {
        Payload::Vllm => {
            // One data URL: `data:video/jpeg;base64,` and each JPEG's Base64, comma-separated
            // (vLLM splits the data at the commas: Base64 holds none).
            let list: Vec<String> = images.iter().map(|b| b64(b)).collect();
            let mut parts = vec![serde_json::json!({
                "type": "video_url",
                "video_url": {"url": format!("data:video/jpeg;base64,{}", list.join(","))}
            })];
            if let Some(t) = text {
                parts.push(serde_json::json!({"type": "text", "text": t}));
            }
            if let Some(w) = wav {
                parts.push(serde_json::json!({
                    "type": "input_audio",
                    "input_audio": {"data": b64(w), "format": "wav"}
                }));
            }
            let facts = video.cloned().unwrap_or_default();
            serde_json::json!({
                "messages": [{"role": "user", "content": parts}],
                "media_io_kwargs": {"video": {
                    // Every frame sent is read (the server's default keeps 32).
                    "num_frames": images.len(),
                    "fps": facts.fps,
                    "frames_indices": facts.frames_indices,
                    "total_num_frames": facts.total_num_frames,
                    "duration": facts.duration,
                }}
            })
        }
        Payload::OpenAi => {
            let mut parts: Vec<_> = images
                .iter()
                .map(|b| {
                    serde_json::json!({
                        "type": "image_url",
                        "image_url": {"url": format!("data:{mime};base64,{}", b64(b))}
                    })
                })
                .collect();
            if let Some(t) = text {
                parts.push(serde_json::json!({"type": "text", "text": t}));
            }
            if let Some(w) = wav {
                parts.push(serde_json::json!({
                    "type": "input_audio",
                    "input_audio": {"data": b64(w), "format": "wav"}
                }));
            }
            serde_json::json!({"role": "user", "content": parts})
        }
        Payload::Anthropic => {
            let mut parts: Vec<_> = images
                .iter()
                .map(|b| {
                    serde_json::json!({
                        "type": "image",
                        "source": {"type": "base64", "media_type": mime, "data": b64(b)}
                    })
                })
                .collect();
            if let Some(t) = text {
                parts.push(serde_json::json!({"type": "text", "text": t}));
            }
            serde_json::json!({"role": "user", "content": parts})
        }
        Payload::Gemini => {
            let mut parts: Vec<_> = images
                .iter()
                .map(|b| serde_json::json!({"inline_data": {"mime_type": mime, "data": b64(b)}}))
                .collect();
            if let Some(t) = text {
                parts.push(serde_json::json!({"text": t}));
            }
            if let Some(w) = wav {
                parts.push(serde_json::json!({
                    "inline_data": {"mime_type": "audio/wav", "data": b64(w)}
                }));
            }
            serde_json::json!({"role": "user", "parts": parts})
        }
    }
}
