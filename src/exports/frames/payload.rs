//! The API payload of a frames export (`payload.json`): a request-body fragment for
//! OpenAI's, Anthropic's or Gemini's API with the images as Base64, and the text and audio
//! parts that may follow them; or, for a vLLM server, a chat body whose frames are one
//! `video/jpeg` list with the metadata its video processor writes time markers from.
//!
//! Each image of the OpenAI, Anthropic and Gemini payloads follows a text part with its time
//! (none of the three APIs has a metadata field for an image's time: a text part is what they
//! document for text beside an image). The text is Qwen3-VL's marker, `<1.5 seconds>`: the
//! form Qwen3-VL and Qwen3.5 are trained on (their processor writes `<t seconds>` before each
//! frame's tokens), plain enough for any model to read, here with the time to the millisecond
//! (one decimal, as Qwen writes it, would give two frames a tenth of a second apart the same
//! marker). A profile that defines its model's own markers (Qwen3-VL's, one per pair of
//! frames) gives those instead.

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
    /// The time markers put before the images (none: left out).
    pub markers: Option<Markers>,
}

/// Which time markers precede the images of a payload.
#[derive(Clone, Debug, PartialEq)]
pub enum Markers {
    /// Each frame's time on its source's timeline, as [`time_marker`] writes it.
    Times,
    /// A profile's own markers, in position order, each before the next
    /// `ceil(images / markers)` images (Qwen3-VL: one per pair of frames).
    Given(Vec<String>),
}

impl Markers {
    /// The marker before each of `times.len()` images (`None`: no marker there), `times`
    /// being the frames' times in seconds on their source's timeline.
    pub fn before_each(&self, times: &[f64]) -> Vec<Option<String>> {
        match self {
            Markers::Times => times.iter().map(|&t| Some(time_marker(t))).collect(),
            Markers::Given(list) if list.is_empty() => vec![None; times.len()],
            Markers::Given(list) => {
                let group = times.len().div_ceil(list.len()).max(1);
                (0..times.len())
                    .map(|i| {
                        (i % group == 0)
                            .then(|| list.get(i / group).cloned())
                            .flatten()
                    })
                    .collect()
            }
        }
    }
}

/// The text of a frame's time marker, Qwen3-VL's form with the time to the millisecond
/// (trailing zeros dropped, one decimal kept): `<1.5 seconds>`, `<0.033 seconds>`.
pub fn time_marker(seconds: f64) -> String {
    let mut t = format!("{seconds:.3}");
    while t.ends_with('0') && !t.ends_with(".0") {
        t.pop();
    }
    format!("<{t} seconds>")
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

/// The payload fragment for `api` with the images (in position order) as base64, each after
/// its time marker (`markers`, one per image or empty), and, after
/// them, a text part (`text`) and an audio part (`wav`,
/// a WAV file's bytes: OpenAI's `input_audio`, Gemini's `inline_data` of `audio/wav`;
/// Anthropic's Messages API takes no audio, which the plan's check refuses).
pub fn payload_with(
    api: Payload,
    mime: &str,
    images: &[Vec<u8>],
    markers: &[Option<String>],
    text: Option<&str>,
    wav: Option<&[u8]>,
    video: Option<&VideoFacts>,
) -> serde_json::Value {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let marker = |i: usize| markers.get(i).cloned().flatten();
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
            let mut parts = Vec::new();
            for (i, b) in images.iter().enumerate() {
                if let Some(m) = marker(i) {
                    parts.push(serde_json::json!({"type": "text", "text": m}));
                }
                parts.push(serde_json::json!({
                    "type": "image_url",
                    "image_url": {"url": format!("data:{mime};base64,{}", b64(b))}
                }));
            }
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
            let mut parts = Vec::new();
            for (i, b) in images.iter().enumerate() {
                if let Some(m) = marker(i) {
                    parts.push(serde_json::json!({"type": "text", "text": m}));
                }
                parts.push(serde_json::json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": mime, "data": b64(b)}
                }));
            }
            if let Some(t) = text {
                parts.push(serde_json::json!({"type": "text", "text": t}));
            }
            serde_json::json!({"role": "user", "content": parts})
        }
        Payload::Gemini => {
            let mut parts = Vec::new();
            for (i, b) in images.iter().enumerate() {
                if let Some(m) = marker(i) {
                    parts.push(serde_json::json!({"text": m}));
                }
                parts.push(serde_json::json!({"inline_data": {"mime_type": mime, "data": b64(b)}}));
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_qwen_shaped_to_the_millisecond() {
        assert_eq!(time_marker(1.5), "<1.5 seconds>");
        assert_eq!(time_marker(2.0), "<2.0 seconds>");
        assert_eq!(time_marker(1.0 / 30.0), "<0.033 seconds>");
        assert_eq!(time_marker(12.4799), "<12.48 seconds>");
    }

    #[test]
    fn given_markers_precede_their_groups() {
        // Qwen3-VL: one marker per pair; an odd count's last marker has one frame.
        let m = Markers::Given(vec!["<0.2 seconds>".into(), "<1.0 seconds>".into()]);
        assert_eq!(
            m.before_each(&[0.0, 0.5, 1.0]),
            vec![
                Some("<0.2 seconds>".into()),
                None,
                Some("<1.0 seconds>".into())
            ]
        );
        let body = payload_with(
            Payload::Anthropic,
            "image/jpeg",
            &[vec![1], vec![2]],
            &Markers::Times.before_each(&[0.5, 1.25]),
            None,
            None,
            None,
        );
        let parts = body["content"].as_array().unwrap();
        assert_eq!(parts.len(), 4);
        assert_eq!(parts[0]["text"], "<0.5 seconds>");
        assert_eq!(parts[1]["type"], "image");
        assert_eq!(parts[2]["text"], "<1.25 seconds>");
    }
}
