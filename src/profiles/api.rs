//! What a request of these frames costs on the hosted APIs: each vendor's documented image
//! size limits (the downscale it applies before counting) and token formula, per image and
//! in all. `frames.json` records it (`request_tokens`) when the export writes a payload.
//! Sources, read 2026-12-01 (`docs/profiles.md` cites them):
//!
//! - OpenAI, "Images and vision", Calculating costs
//!   (platform.openai.com/docs/guides/images-vision#calculating-costs). Tile models (GPT-4o,
//!   GPT-4.1, GPT-4.5, o-series but o4-mini): `detail: low` costs the base tokens; `high`
//!   scales to fit 2048 x 2048, then the shortest side to 768, and costs `base + tile *
//!   ceil(w / 512) * ceil(h / 512)` (GPT-4o: 85 + 170; GPT-4o-mini 2833 + 5667; o1/o3
//!   75 + 150). Patch models (GPT-4.1-mini, GPT-4.1-nano, o4-mini): 32 px patches, at most
//!   1536 (scaled down by `sqrt(32^2 * 1536 / (w * h))`, then shrunk so whole patches fit),
//!   times the model's multiplier (1.62, 2.46, 1.72).
//! - Anthropic, "Vision", Evaluate image size (docs.anthropic.com/en/docs/vision):
//!   `tokens = (width px * height px) / 750`; an image whose long edge is over 1568 px or
//!   over about 1,600 tokens is first scaled down, keeping its aspect ratio.
//! - Google, "Understand and count tokens" (ai.google.dev/gemini-api/docs/tokens): Gemini
//!   2.0+: an image with both sides <= 384 px costs 258 tokens; a larger one is cropped
//!   and scaled into 768 x 768 tiles of 258 tokens each; video 263 tokens per second.

use serde::Serialize;

/// The API a request goes to (the frames export's payload names it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Anthropic,
    Gemini,
}

/// One model family's estimate for the request.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Estimate {
    /// The models the rule is documented for.
    pub models: &'static str,
    /// The documented rule, as a formula.
    pub formula: &'static str,
    /// Tokens per image, in position order.
    pub per_image: Vec<u64>,
    /// Their sum.
    pub total: u64,
    /// The size the vendor counts each image at, when it downscales (the first image's;
    /// every image of an export has one size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counted_size: Option<(u32, u32)>,
}

/// OpenAI's tile rule for `detail: high` with `base` and `tile` tokens: `(tokens, counted
/// size)`.
pub fn openai_tiles(width: u32, height: u32, base: u64, tile: u64) -> (u64, (u32, u32)) {
    let (mut w, mut h) = (width as f64, height as f64);
    if w > 2048.0 || h > 2048.0 {
        let r = (2048.0 / w).min(2048.0 / h);
        w = (w * r).floor();
        h = (h * r).floor();
    }
    // "scaled such that the shortest side of the image is 768px long" (only ever down:
    // the documented examples never upscale, and a 512 px image is one tile).
    let short = w.min(h);
    if short > 768.0 {
        let r = 768.0 / short;
        w = (w * r).floor();
        h = (h * r).floor();
    }
    let tiles = (w / 512.0).ceil() as u64 * (h / 512.0).ceil() as u64;
    (base + tile * tiles, (w as u32, h as u32))
}

/// OpenAI's 32 px patch rule (before the model's multiplier): `(patches, counted size)`.
pub fn openai_patches(width: u32, height: u32) -> (u64, (u32, u32)) {
    let (w, h) = (width as f64, height as f64);
    let raw = (w / 32.0).ceil() * (h / 32.0).ceil();
    if raw <= 1536.0 {
        return (raw as u64, (width, height));
    }
    let mut r = (32.0 * 32.0 * 1536.0 / (w * h)).sqrt();
    let (pw, ph) = (w * r / 32.0, h * r / 32.0);
    r *= (pw.floor() / pw).min(ph.floor() / ph);
    let (rw, rh) = ((w * r).floor(), (h * r).floor());
    let patches = ((rw / 32.0).ceil() * (rh / 32.0).ceil()).min(1536.0);
    (patches as u64, (rw as u32, rh as u32))
}

/// Anthropic's rule: `(tokens, counted size)`; the size is scaled down to a long edge of
/// 1568 and about 1,600 tokens (1.2 MP) when over either.
pub fn anthropic(width: u32, height: u32) -> (u64, (u32, u32)) {
    let (w, h) = (width as f64, height as f64);
    let r = (1568.0 / w.max(h))
        .min((1600.0 * 750.0 / (w * h)).sqrt())
        .min(1.0);
    let (rw, rh) = if r < 1.0 {
        ((w * r).floor().max(1.0), (h * r).floor().max(1.0))
    } else {
        (w, h)
    };
    (((rw * rh) / 750.0).ceil() as u64, (rw as u32, rh as u32))
}

/// Gemini's rule: 258 tokens for an image within 384 x 384, else 258 per 768 x 768 tile.
pub fn gemini(width: u32, height: u32) -> u64 {
    if width <= 384 && height <= 384 {
        258
    } else {
        258 * (width as u64).div_ceil(768) * (height as u64).div_ceil(768)
    }
}

fn estimate(
    models: &'static str,
    formula: &'static str,
    sizes: &[(u32, u32)],
    f: impl Fn(u32, u32) -> (u64, Option<(u32, u32)>),
) -> Estimate {
    let each: Vec<(u64, Option<(u32, u32)>)> = sizes.iter().map(|&(w, h)| f(w, h)).collect();
    Estimate {
        models,
        formula,
        per_image: each.iter().map(|e| e.0).collect(),
        total: each.iter().map(|e| e.0).sum(),
        counted_size: each.first().and_then(|e| e.1),
    }
}

/// The estimates for a request to `api` of images of these sizes (width, height).
pub fn request_tokens(api: Api, sizes: &[(u32, u32)]) -> Vec<Estimate> {
    let scaled = |orig: (u32, u32), got: (u32, u32)| (orig != got).then_some(got);
    match api {
        Api::OpenAi => {
            let tiles = |models, formula, base, tile| {
                estimate(models, formula, sizes, move |w, h| {
                    let (t, s) = openai_tiles(w, h, base, tile);
                    (t, scaled((w, h), s))
                })
            };
            let patches = |models, formula, mult: f64| {
                estimate(models, formula, sizes, move |w, h| {
                    let (p, s) = openai_patches(w, h);
                    ((p as f64 * mult).ceil() as u64, scaled((w, h), s))
                })
            };
            vec![
                tiles(
                    "gpt-4o, gpt-4.1, gpt-4.5 (detail high)",
                    "85 + 170 * ceil(w / 512) * ceil(h / 512) after fitting 2048x2048 and a 768 shortest side",
                    85,
                    170,
                ),
                estimate("gpt-4o, gpt-4.1, gpt-4.5 (detail low)", "85", sizes, |_, _| {
                    (85, None)
                }),
                tiles(
                    "gpt-4o-mini (detail high)",
                    "2833 + 5667 * tiles",
                    2833,
                    5667,
                ),
                tiles("o1, o1-pro, o3 (detail high)", "75 + 150 * tiles", 75, 150),
                patches(
                    "gpt-4.1-mini",
                    "ceil(1.62 * min(ceil(w / 32) * ceil(h / 32), 1536)) after scaling to 1536 patches",
                    1.62,
                ),
                patches(
                    "gpt-4.1-nano",
                    "ceil(2.46 * min(ceil(w / 32) * ceil(h / 32), 1536)) after scaling to 1536 patches",
                    2.46,
                ),
                patches(
                    "o4-mini",
                    "ceil(1.72 * min(ceil(w / 32) * ceil(h / 32), 1536)) after scaling to 1536 patches",
                    1.72,
                ),
            ]
        }
        Api::Anthropic => vec![estimate(
            "claude (vision)",
            "ceil(w * h / 750) after scaling to a long edge <= 1568 and <= ~1600 tokens",
            sizes,
            |w, h| {
                let (t, s) = anthropic(w, h);
                (t, scaled((w, h), s))
            },
        )],
        Api::Gemini => vec![estimate(
            "gemini 2.0+ (images)",
            "258 if w <= 384 and h <= 384, else 258 * ceil(w / 768) * ceil(h / 768)",
            sizes,
            |w, h| (gemini(w, h), None),
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenAI's worked examples (images-vision, Calculating costs).
    #[test]
    fn openai_worked_examples() {
        // "A 1024 x 1024 square image in detail: high mode costs 765 tokens": 768 x 768.
        assert_eq!(openai_tiles(1024, 1024, 85, 170), (765, (768, 768)));
        // "A 2048 x 4096 image in detail: high mode costs 1105 tokens": 1024 x 2048, then
        // 768 x 1536.
        assert_eq!(openai_tiles(2048, 4096, 85, 170), (1105, (768, 1536)));
        // Patches: "1024 x 1024 image is 1024 tokens".
        assert_eq!(openai_patches(1024, 1024), (1024, (1024, 1024)));
        // "1800 x 2400 image": shrink 0.603 -> 1086 x 1448, 33.94 x 45.25 patches, shrunk
        // by 0.97 to 1056 x 1408, 33 * 44 = 1452 tokens.
        assert_eq!(openai_patches(1800, 2400), (1452, (1056, 1408)));
    }

    /// Anthropic's table of costs (Vision, Evaluate image size): 200x200 ~54, 1000x1000
    /// ~1334, 1092x1092 ~1590 tokens.
    #[test]
    fn anthropic_worked_examples() {
        assert_eq!(anthropic(200, 200), (54, (200, 200)));
        assert_eq!(anthropic(1000, 1000), (1334, (1000, 1000)));
        assert_eq!(anthropic(1092, 1092), (1590, (1092, 1092)));
        // Over the long edge: scaled to it.
        let (_, (w, h)) = anthropic(3136, 400);
        assert_eq!((w, h), (1568, 200));
    }

    /// Google's worked example (Understand and count tokens): a 384 x 384 image is 258
    /// tokens; larger ones are 258 per 768 x 768 tile.
    #[test]
    fn gemini_worked_examples() {
        assert_eq!(gemini(384, 384), 258);
        assert_eq!(gemini(600, 400), 258);
        assert_eq!(gemini(1024, 1024), 4 * 258);
    }

    #[test]
    fn request_sums_every_image() {
        let e = request_tokens(Api::OpenAi, &[(1024, 1024); 3]);
        assert_eq!(e[0].per_image, vec![765; 3]);
        assert_eq!(e[0].total, 2295);
        assert_eq!(e[0].counted_size, Some((768, 768)));
        assert_eq!(e[1].total, 255);
    }
}
