//! The plan's values spelt as text or in more than one JSON form, each with its serde written
//! by hand: `Size` (`WIDTHxHEIGHT`), `ImageFormat` (`jpg`/`png`), `Payload` (`openai`, ...),
//! `BoxesOut` (`vidprep`/`vstar`) and `Strip` (`true`, `false` or a column count). Each
//! refuses an unknown spelling with the ones it expected. (`BoxesSpec`, a path or an object,
//! is in `schema.rs` beside the `BoxOptions` whose fields it mirrors.)

use serde::{Deserialize, Serialize};

/// Which boxes file to write beside an output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BoxesOut {
    /// `NAME.boxes.json`: vidprep's own annotation JSON.
    Vidprep,
    /// `NAME.vstar.json`: V-STaR items (for an insertion: the needle's item).
    Vstar,
}

impl std::str::FromStr for BoxesOut {
    type Err = String;
    fn from_str(s: &str) -> Result<BoxesOut, String> {
        match s {
            "vidprep" => Ok(BoxesOut::Vidprep),
            "vstar" => Ok(BoxesOut::Vstar),
            other => Err(format!(
                "unknown boxes output format {other:?}; expected vidprep or vstar"
            )),
        }
    }
}

/// The strip option: off, or on with a column count (0: up to 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Strip(pub Option<usize>);

impl Serialize for Strip {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => s.serialize_bool(false),
            Some(0) => s.serialize_bool(true),
            Some(n) => s.serialize_u64(n as u64),
        }
    }
}

crate::vocab::textual::json_schema_as!(
    Strip,
    "Strip",
    schemars::json_schema!({
        "description": "A captioned grid of every frame: `true` (up to 4 columns), `false`, or a column count (0: up to 4; at most 64).",
        "oneOf": [
            {"type": "boolean"},
            {"type": "integer", "minimum": 0, "maximum": 64}
        ]
    })
);

impl<'de> Deserialize<'de> for Strip {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Strip;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "true, false or a column count")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Strip, E> {
                Ok(Strip(v.then_some(0)))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Strip, E> {
                if v > 64 {
                    return Err(E::custom(format!(
                        "a strip of {v} columns is too wide (at most 64)"
                    )));
                }
                Ok(Strip(Some(v as usize)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A `WIDTHxHEIGHT` size, both at least 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub u32, pub u32);

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Size, String> {
        crate::vocab::parse_size(s).map(|(w, h)| Size(w, h))
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}", self.0, self.1)
    }
}

crate::vocab::textual::serde_as_text!(Size);
// `vocab::parse_size`: split at the first `x` or `X`, each side a trimmed `u32` (a `+` sign
// allowed) of at least 2.
crate::vocab::textual::json_schema_as!(
    Size,
    "Size",
    crate::vocab::textual::pattern(
        "`WIDTHxHEIGHT` in pixels, both at least 2 (`1920x1280`).",
        r"^\s*\+?0*([2-9]|[1-9][0-9]+)\s*[xX]\s*\+?0*([2-9]|[1-9][0-9]+)\s*$"
    )
);

/// Image file format of exported frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ImageFormat {
    /// JPEG (`jpg`; `jpeg` is accepted too), at the export's `quality`.
    #[default]
    Jpg,
    /// PNG (`png`), lossless.
    Png,
}

impl ImageFormat {
    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Jpg => "jpg",
            ImageFormat::Png => "png",
        }
    }

    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            ImageFormat::Jpg => "image/jpeg",
            ImageFormat::Png => "image/png",
        }
    }
}

impl std::fmt::Display for ImageFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.extension())
    }
}

impl std::str::FromStr for ImageFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "jpg" | "jpeg" => Ok(ImageFormat::Jpg),
            "png" => Ok(ImageFormat::Png),
            other => Err(format!(
                "unknown image format {other:?}; expected jpg or png"
            )),
        }
    }
}

crate::vocab::textual::serde_as_text!(ImageFormat);
crate::vocab::textual::json_schema_as!(
    ImageFormat,
    "ImageFormat",
    crate::vocab::textual::names(
        "Image file format: `jpg` (`jpeg`) or `png`.",
        &["jpg", "jpeg", "png"]
    )
);

/// The API whose request format the payload follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload {
    /// A chat message with `image_url` parts holding data URLs.
    OpenAi,
    /// A message with `image` blocks holding base64 sources.
    Anthropic,
    /// A `contents` entry with `inline_data` parts.
    Gemini,
    /// An OpenAI-compatible chat body for a vLLM server: the frames as one `video/jpeg`
    /// list (`video_url`), and `media_io_kwargs` saying their source frame indices, the
    /// source's rate, frame count and duration (vLLM's pre-extracted frame sequences).
    Vllm,
}

impl std::fmt::Display for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Payload::OpenAi => "openai",
            Payload::Anthropic => "anthropic",
            Payload::Gemini => "gemini",
            Payload::Vllm => "vllm",
        })
    }
}

impl std::str::FromStr for Payload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "openai" => Ok(Payload::OpenAi),
            "anthropic" => Ok(Payload::Anthropic),
            "gemini" => Ok(Payload::Gemini),
            "vllm" => Ok(Payload::Vllm),
            other => Err(format!(
                "unknown payload {other:?}; expected openai, anthropic, gemini or vllm"
            )),
        }
    }
}

crate::vocab::textual::serde_as_text!(Payload);
crate::vocab::textual::json_schema_as!(
    Payload,
    "Payload",
    crate::vocab::textual::names(
        "The API whose request format the payload follows.",
        &["openai", "anthropic", "gemini", "vllm"]
    )
);

/// The request body a video export writes beside the clip (`NAME.payload.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VideoPayload {
    /// A Gemini `generateContent` body: one `contents` entry whose part holds the clip as
    /// `inlineData` (`video/mp4`, Base64) with its `videoMetadata` (`fps`, offsets).
    GeminiVideo,
    /// An OpenAI-compatible chat body (vLLM, Qwen, GLM, Seed, MiMo endpoints): one user
    /// message whose `video_url` part holds a `data:video/mp4;base64,` URL.
    OpenAiVideo,
}

impl std::fmt::Display for VideoPayload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            VideoPayload::GeminiVideo => "gemini-video",
            VideoPayload::OpenAiVideo => "openai-video",
        })
    }
}

impl std::str::FromStr for VideoPayload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "gemini-video" => Ok(VideoPayload::GeminiVideo),
            "openai-video" => Ok(VideoPayload::OpenAiVideo),
            other => Err(format!(
                "unknown video payload {other:?}; expected gemini-video or openai-video"
            )),
        }
    }
}

crate::vocab::textual::serde_as_text!(VideoPayload);
crate::vocab::textual::json_schema_as!(
    VideoPayload,
    "VideoPayload",
    crate::vocab::textual::names(
        "The API whose request body a video export writes beside the clip.",
        &["gemini-video", "openai-video"]
    )
);

/// A named preset of a provider's limits on a video request (`super::limits`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Limits {
    /// ViSTR-Bench's protocol: at most 10 MB of Base64 (the default).
    #[default]
    Vistr,
    /// Gemini API inline data: the whole request under 100 MB; 1 fps sampled server-side.
    Gemini,
    /// An OpenAI-compatible vLLM server: the paper's 10 MB; the server's loader picks the frames.
    Vllm,
    /// Seed 2.0 (Volcano Ark / BytePlus ModelArk): files up to 512 MB.
    Seed,
    /// Xiaomi MiMo's API: `fps` 2 by default.
    Mimo,
}

impl Limits {
    /// Every preset, in the order the docs list them.
    pub const ALL: [Limits; 5] = [
        Limits::Vistr,
        Limits::Gemini,
        Limits::Vllm,
        Limits::Seed,
        Limits::Mimo,
    ];
}

impl std::fmt::Display for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Limits::Vistr => "vistr",
            Limits::Gemini => "gemini",
            Limits::Vllm => "vllm",
            Limits::Seed => "seed",
            Limits::Mimo => "mimo",
        })
    }
}

impl std::str::FromStr for Limits {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Limits::ALL
            .into_iter()
            .find(|l| l.to_string() == s)
            .ok_or_else(|| {
                format!("unknown limits {s:?}; expected vistr, gemini, vllm, seed or mimo")
            })
    }
}

crate::vocab::textual::serde_as_text!(Limits);
crate::vocab::textual::json_schema_as!(
    Limits,
    "Limits",
    crate::vocab::textual::names(
        "A named preset of a provider's limits on a video request.",
        &["vistr", "gemini", "vllm", "seed", "mimo"]
    )
);

/// What a frames export draws on each frame, as NumPro does (`src/frames/draw/numpro.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameLabel {
    /// The frame's index in the processed stream (NumPro's number: 0 at the span's start).
    Frame,
    /// The frame's time in the processed stream, in seconds with two decimals (`12.48s`).
    Time,
}

impl FrameLabel {
    /// The text drawn on stream frame `index`, shown at `time`.
    pub fn text(self, index: usize, time: crate::vocab::time::Time) -> String {
        match self {
            FrameLabel::Frame => index.to_string(),
            FrameLabel::Time => format!("{:.2}s", time.as_secs_f64()),
        }
    }
}

impl std::fmt::Display for FrameLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FrameLabel::Frame => "frame",
            FrameLabel::Time => "time",
        })
    }
}

impl std::str::FromStr for FrameLabel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "frame" => Ok(FrameLabel::Frame),
            "time" => Ok(FrameLabel::Time),
            other => Err(format!(
                "unknown label {other:?}; expected frame (the frame number) or time (seconds)"
            )),
        }
    }
}

crate::vocab::textual::serde_as_text!(FrameLabel);
crate::vocab::textual::json_schema_as!(
    FrameLabel,
    "FrameLabel",
    crate::vocab::textual::names(
        "Drawn on each frame: `frame` (its number in the stream) or `time` (seconds).",
        &["frame", "time"]
    )
);
