//! [`Rgb`]: an 8-bit sRGB colour as a plan spells it (`RRGGBB`, `#RRGGBB` or a name).

/// An 8-bit sRGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl std::fmt::Display for Rgb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

impl std::str::FromStr for Rgb {
    type Err = String;
    fn from_str(s: &str) -> Result<Rgb, String> {
        Rgb::parse(s)
    }
}

crate::vocab::textual::serde_as_text!(Rgb);
crate::vocab::textual::json_schema_as!(Rgb, "Rgb", {
    // `Rgb::parse`: blanks trimmed, leading `#`s dropped, any case; six hex digits or a name.
    let names = crate::vocab::textual::caseless_words(&[
        "red", "green", "blue", "yellow", "cyan", "magenta", "orange", "white", "black",
    ]);
    crate::vocab::textual::pattern(
        "A colour: `RRGGBB` (or `#RRGGBB`) or a name (`red`, `green`, `blue`, `yellow`, \
         `cyan`, `magenta`, `orange`, `white`, `black`).",
        &format!("^\\s*#*([0-9A-Fa-f]{{6}}|{names})\\s*$"),
    )
});

impl Rgb {
    /// Parses `RRGGBB` or `#RRGGBB`, or a few names (`red`, `green`, `blue`, `yellow`, `cyan`,
    /// `magenta`, `white`, `black`, `orange`).
    pub fn parse(text: &str) -> Result<Rgb, String> {
        let t = text.trim().trim_start_matches('#').to_ascii_lowercase();
        let named = match t.as_str() {
            "red" => Some(Rgb(230, 25, 75)),
            "green" => Some(Rgb(60, 180, 75)),
            "blue" => Some(Rgb(0, 130, 200)),
            "yellow" => Some(Rgb(255, 225, 25)),
            "cyan" => Some(Rgb(70, 240, 240)),
            "magenta" => Some(Rgb(240, 50, 230)),
            "orange" => Some(Rgb(245, 130, 48)),
            "white" => Some(Rgb(255, 255, 255)),
            "black" => Some(Rgb(0, 0, 0)),
            _ => None,
        };
        if let Some(c) = named {
            return Ok(c);
        }
        if t.len() == 6 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
            let v = u32::from_str_radix(&t, 16).expect("checked hex");
            return Ok(Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8));
        }
        Err(format!(
            "cannot read colour {text:?}; expected RRGGBB (e.g. ff8800) or a name such as red"
        ))
    }

    /// Relative luminance in 0..=255 (to pick black or white text on top).
    pub fn luma(self) -> f64 {
        0.2126 * self.0 as f64 + 0.7152 * self.1 as f64 + 0.0722 * self.2 as f64
    }
}
