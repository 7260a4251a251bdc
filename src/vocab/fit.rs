//! [`Fit`]: how a picture fits a frame of another size (letterbox, stretch or crop), and the
//! size syntax `WxH` ([`parse_size`]). The placement itself is `crate::frames::fit`.

/// How a picture is fitted into a frame of another size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Fit {
    /// Scale to fit inside, keeping the aspect ratio; pad with black.
    #[default]
    Letterbox,
    /// Scale to exactly the frame size.
    Stretch,
    /// Scale to cover the frame, keeping the aspect ratio; cut what overflows (centred).
    Crop,
}

impl std::fmt::Display for Fit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Fit::Letterbox => "letterbox",
            Fit::Stretch => "stretch",
            Fit::Crop => "crop",
        })
    }
}

crate::vocab::textual::serde_as_text!(Fit);
crate::vocab::textual::json_schema_as!(
    Fit,
    "Fit",
    crate::vocab::textual::names(
        "How a picture fits another frame: `letterbox`, `stretch` or `crop`.",
        &["letterbox", "stretch", "crop"]
    )
);

impl std::str::FromStr for Fit {
    type Err = String;
    fn from_str(s: &str) -> Result<Fit, String> {
        match s {
            "letterbox" => Ok(Fit::Letterbox),
            "stretch" => Ok(Fit::Stretch),
            "crop" => Ok(Fit::Crop),
            other => Err(format!(
                "unknown fit {other:?}; expected letterbox, stretch or crop"
            )),
        }
    }
}

/// Parses `WxH` (e.g. `1920x1280`).
pub fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(|| {
        format!("cannot read size {text:?}; expected WIDTHxHEIGHT such as 1920x1280")
    })?;
    let parse = |v: &str| v.trim().parse::<u32>().ok().filter(|&n| n >= 2);
    match (parse(w), parse(h)) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(format!(
            "cannot read size {text:?}; expected WIDTHxHEIGHT with sides of at least 2 pixels"
        )),
    }
}
