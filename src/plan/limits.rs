//! The providers' limits on a video request, as named presets (`--limits`, `"limits"`): the
//! size a clip (and the request body that carries it) may have, and what the provider's
//! server then does to its frames (the frames the model will see, and their tokens). The
//! numbers and where each comes from are in `docs/export.md`.

use serde::Serialize;

use super::text::{Limits, VideoPayload};

/// Bytes kept free in a request limit for the prompt text the caller adds to the body.
pub const PROMPT_RESERVE_BYTES: u64 = 65_536;

/// What a server does to a clip's frames before its model sees them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ServerSampling {
    /// Frames per second the server samples (Gemini's `videoMetadata.fps`, MiMo's `fps`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    /// Frames the server keeps, uniformly spread, when it samples a count (vLLM: 32).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<usize>,
    /// The most frames a request may ask the server for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_frames: Option<usize>,
    /// The highest frame rate a request may ask the server for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_fps: Option<f64>,
    /// Tokens per frame seen (the provider's figure), when it publishes one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_per_frame: Option<u64>,
    /// Tokens per second of audio, when the provider publishes one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio_tokens_per_second: Option<u64>,
    /// Where these numbers come from.
    pub source: &'static str,
}

impl ServerSampling {
    /// How many of a clip's `frames` (lasting `duration` seconds) the server shows its model:
    /// one per `1/fps` seconds (at least one), or its count; never more than the clip has.
    pub fn frames_seen(&self, frames: usize, duration: f64) -> usize {
        let n = match (self.fps, self.frames) {
            (Some(fps), _) => ((duration * fps).ceil() as usize).max(1),
            (None, Some(count)) => count,
            (None, None) => frames,
        };
        n.min(frames)
    }

    /// The token estimate of a clip: frames seen times tokens per frame, plus its audio.
    pub fn tokens(&self, frames: usize, duration: f64, audio: bool) -> Option<serde_json::Value> {
        let per_frame = self.tokens_per_frame?;
        let seen = self.frames_seen(frames, duration) as u64;
        let audio_tokens = match (audio, self.audio_tokens_per_second) {
            (true, Some(per_s)) => (duration.ceil() as u64) * per_s,
            _ => 0,
        };
        Some(serde_json::json!({
            "frames": seen,
            "per_frame": per_frame,
            "video": seen * per_frame,
            "audio": audio_tokens,
            "total": seen * per_frame + audio_tokens,
        }))
    }
}

/// A provider's limits on a video request.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Preset {
    /// The preset's name.
    pub name: Limits,
    /// The largest Base64 text of the clip, where the provider (or the paper) states one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_base64_bytes: Option<u64>,
    /// The largest whole request (JSON envelope, Base64 and the prompt), where the provider
    /// states one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_request_bytes: Option<u64>,
    /// What an OpenAI-compatible server of this provider does to the frames by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<ServerSampling>,
    /// Where the size limit comes from.
    pub source: &'static str,
}

/// Gemini's server-side sampling of a video part: `videoMetadata.fps`, 1 by default, at most
/// 24; 70 tokens a frame at the default media resolution of Gemini 3 (258 on earlier models),
/// 32 tokens a second of audio.
pub const GEMINI_SAMPLING: ServerSampling = ServerSampling {
    fps: Some(1.0),
    frames: None,
    max_frames: None,
    max_fps: Some(24.0),
    tokens_per_frame: Some(70),
    audio_tokens_per_second: Some(32),
    source: "https://ai.google.dev/gemini-api/docs/video-understanding (1 fps by default, \
             videoMetadata.fps in (0, 24], 32 tokens/s of audio); \
             https://ai.google.dev/gemini-api/docs/media-resolution (70 tokens a video frame)",
};

impl Limits {
    /// The preset's numbers.
    pub fn preset(self) -> Preset {
        match self {
            Limits::Vistr => Preset {
                name: self,
                max_base64_bytes: Some(10_000_000),
                max_request_bytes: None,
                sampling: None,
                source: "ViSTR-Bench: video-native models get the clip within 1920x1280 as \
                         at most 10 MB of Base64",
            },
            Limits::Gemini => Preset {
                name: self,
                max_base64_bytes: None,
                max_request_bytes: Some(100_000_000),
                sampling: Some(GEMINI_SAMPLING),
                source: "https://ai.google.dev/gemini-api/docs/video-understanding: inline \
                         video data for requests under 100 MB in total (larger files go \
                         through the Files API)",
            },
            Limits::Vllm => Preset {
                name: self,
                max_base64_bytes: Some(10_000_000),
                max_request_bytes: None,
                sampling: Some(ServerSampling {
                    fps: None,
                    frames: Some(32),
                    max_frames: Some(768),
                    max_fps: Some(30.0),
                    tokens_per_frame: None,
                    audio_tokens_per_second: None,
                    source: "vLLM's video loader keeps num_frames=32 uniformly spread frames \
                             unless media_io_kwargs asks otherwise; request knobs are capped \
                             at 768 frames and 30 fps (vllm-project/vllm#56729); tokens are \
                             the served model's processor's",
                }),
                source: "vLLM sets no request size limit of its own: the paper's 10 MB of \
                         Base64 is kept",
            },
            Limits::Seed => Preset {
                name: self,
                max_base64_bytes: None,
                max_request_bytes: Some(512_000_000),
                sampling: Some(ServerSampling {
                    fps: Some(1.0),
                    frames: None,
                    max_frames: None,
                    max_fps: Some(5.0),
                    tokens_per_frame: None,
                    audio_tokens_per_second: None,
                    source: "https://docs.byteplus.com/en/docs/ModelArk/1895586 (video \
                             understanding: frames sampled at 1 fps by default, 0.2 to 5)",
                }),
                source: "Volcano Ark / BytePlus ModelArk: Seed 2.0 video files up to 512 MB",
            },
            Limits::Mimo => Preset {
                name: self,
                max_base64_bytes: Some(10_000_000),
                max_request_bytes: None,
                sampling: Some(ServerSampling {
                    fps: Some(2.0),
                    frames: None,
                    max_frames: None,
                    max_fps: None,
                    tokens_per_frame: None,
                    audio_tokens_per_second: None,
                    source: "https://platform.xiaomimimo.com/docs/en-US/usage-guide/\
                             multimodal-understanding/video-understanding (the video_url \
                             part's fps, 2 by default)",
                }),
                source: "MiMo publishes no inline size limit: the paper's 10 MB of Base64 is \
                         kept",
            },
        }
    }
}

impl Preset {
    /// The largest Base64 text of the clip: `asked` (`max_base64_bytes`) or the preset's,
    /// and within a request limit, what the request leaves after its JSON envelope
    /// (`envelope` bytes) and [`PROMPT_RESERVE_BYTES`] for the prompt.
    pub fn base64_cap(&self, asked: Option<u64>, envelope: u64) -> u64 {
        let mut cap = asked.or(self.max_base64_bytes).unwrap_or(u64::MAX);
        if let Some(request) = self.max_request_bytes {
            cap = cap.min(request.saturating_sub(envelope + PROMPT_RESERVE_BYTES));
        }
        cap
    }

    /// What the server will do to the clip's frames when `payload` carries it: Gemini's
    /// `videoMetadata` sampling for a Gemini body, else the preset's server (if known).
    pub fn sampling_for(&self, payload: Option<VideoPayload>) -> Option<ServerSampling> {
        match payload {
            Some(VideoPayload::GeminiVideo) => Some(GEMINI_SAMPLING),
            _ => self.sampling,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_count_the_envelope_and_the_prompt() {
        let vistr = Limits::Vistr.preset();
        assert_eq!(vistr.base64_cap(None, 300), 10_000_000);
        assert_eq!(vistr.base64_cap(Some(5_000_000), 300), 5_000_000);
        let gemini = Limits::Gemini.preset();
        assert_eq!(
            gemini.base64_cap(None, 300),
            100_000_000 - 300 - PROMPT_RESERVE_BYTES
        );
        // An asked cap above the request limit is held to the request.
        assert_eq!(
            gemini.base64_cap(Some(200_000_000), 0),
            100_000_000 - PROMPT_RESERVE_BYTES
        );
        for l in Limits::ALL {
            assert_eq!(l.to_string().parse::<Limits>().unwrap(), l);
        }
    }

    #[test]
    fn frames_seen_and_tokens() {
        let g = GEMINI_SAMPLING;
        // 2.5 s at 30 fps: 3 frames seen at 1 fps (0, 1, 2 s).
        assert_eq!(g.frames_seen(75, 2.5), 3);
        assert_eq!(g.frames_seen(2, 10.0), 2);
        let t = g.tokens(75, 2.5, true).unwrap();
        assert_eq!(t["video"], 210);
        assert_eq!(t["audio"], 96);
        assert_eq!(t["total"], 306);
        let v = Limits::Vllm.preset().sampling.unwrap();
        assert_eq!(v.frames_seen(300, 10.0), 32);
        assert_eq!(v.frames_seen(20, 10.0), 20);
        assert!(v.tokens(300, 10.0, false).is_none());
    }
}
