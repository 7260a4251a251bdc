//! Exact rates and ratios: [`FrameRate`] (a plan's `fps`, 0.1 to 1000 frames per second) and
//! [`Ratio`] (a rational as FFmpeg keeps time bases and rates; `"num/den"` in JSON, as ffprobe
//! writes it).

use serde::Serialize;

use crate::vocab::time::{decimal_text, Time};

/// A rational number as ffmpeg keeps it, for time bases and frame rates. In JSON it is the
/// text `"num/den"`, as ffprobe writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ratio {
    /// Numerator.
    pub num: i32,
    /// Denominator (`0` in a value the file left unset).
    pub den: i32,
}

impl Ratio {
    /// `num/den`, as given (not reduced).
    pub fn new(num: i32, den: i32) -> Ratio {
        Ratio { num, den }
    }

    /// Both parts positive (ffmpeg leaves unknown rates as `0/0` or `0/1`).
    pub fn is_valid(self) -> bool {
        self.num > 0 && self.den > 0
    }

    /// As a float (`0.0` when the denominator is zero).
    pub fn as_f64(self) -> f64 {
        if self.den == 0 {
            0.0
        } else {
            self.num as f64 / self.den as f64
        }
    }

    /// As exact seconds (meaningful for time bases).
    pub fn as_time(self) -> Time {
        Time::new(self.num as i64, self.den.max(1) as i64)
    }
}

impl serde::Serialize for Ratio {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Ratio {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Ratio, D::Error> {
        let text = String::deserialize(d)?;
        let (n, den) = text.split_once('/').ok_or_else(|| {
            serde::de::Error::custom(format!("expected \"num/den\", found {text:?}"))
        })?;
        let num = n.trim().parse().map_err(serde::de::Error::custom)?;
        let den = den.trim().parse().map_err(serde::de::Error::custom)?;
        Ok(Ratio { num, den })
    }
}

crate::vocab::textual::json_schema_as!(
    Ratio,
    "Ratio",
    crate::vocab::textual::pattern(
        "A rational number as ffprobe writes it: `\"num/den\"`.",
        r"^-?[0-9]+/-?[0-9]+$"
    )
);

impl std::fmt::Display for Ratio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

/// An exact, positive frame rate: `25`, `29.97`, `30000/1001` (also `25Hz`, `25fps`), between
/// 0.1 and 1000 frames per second. In JSON it is a number or that text; it is written as text
/// (`"25"`, `"29.97"`, `"30000/1001"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameRate {
    num: i32,
    den: i32,
}

impl FrameRate {
    /// `num / den` frames per second, checked.
    pub fn new(num: i64, den: i64) -> std::result::Result<FrameRate, String> {
        if den == 0 {
            return Err("a frame rate with a zero denominator".into());
        }
        Self::from_time(Time::new(num, den), &format!("{num}/{den}"))
    }

    fn from_time(t: Time, text: &str) -> std::result::Result<FrameRate, String> {
        if t < Time::new(1, 10) || t > Time::from_secs(1000) {
            return Err(format!(
                "frame rate {text} is outside 0.1..1000 frames per second"
            ));
        }
        match (i32::try_from(t.numer()), i32::try_from(t.denom())) {
            (Ok(num), Ok(den)) => Ok(FrameRate { num, den }),
            _ => Err(format!(
                "frame rate {text} is too fine a fraction (its numerator and denominator must fit 32 bits)"
            )),
        }
    }

    /// The rate as FFmpeg keeps it (`num/den`, reduced).
    pub fn as_ratio(self) -> Ratio {
        Ratio::new(self.num, self.den)
    }

    /// Frames per second, exactly.
    pub fn as_time(self) -> Time {
        Time::new(self.num as i64, self.den as i64)
    }
}

impl std::fmt::Display for FrameRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&decimal_text(self.as_time()))
    }
}

impl std::str::FromStr for FrameRate {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<FrameRate, String> {
        let text = s.trim();
        let lower = text.to_ascii_lowercase();
        let body = lower
            .strip_suffix("hz")
            .or_else(|| lower.strip_suffix("fps"))
            .unwrap_or(&lower)
            .trim();
        let t: Time = body.parse().map_err(|_| {
            format!("expected a frame rate like 25, 29.97 or 30000/1001, found {text:?}")
        })?;
        Self::from_time(t, text)
    }
}

impl Serialize for FrameRate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

// A number, or text: a decimal or `num/den`, optionally followed by `hz` or `fps` (any
// case), no zero denominator; 0.1 to 1000 frames per second (the range is checked for
// numbers only here).
crate::vocab::textual::json_schema_as!(
    FrameRate,
    "FrameRate",
    schemars::json_schema!({
        "description": "A frame rate from 0.1 to 1000 frames per second: a number (`25`, `29.97`) or text (`\"30000/1001\"`, `\"25fps\"`).",
        "anyOf": [
            {"type": "number", "minimum": 0.1, "maximum": 1000},
            {
                "type": "string",
                "pattern": r"^\s*([0-9]+\s*/\s*0*[1-9][0-9]*|[0-9]+\.?[0-9]*|\.[0-9]+)\s*([hH][zZ]|[fF][pP][sS])?\s*$"
            }
        ]
    })
);

impl<'de> serde::Deserialize<'de> for FrameRate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<FrameRate, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = FrameRate;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(
                    f,
                    "a frame rate: a number like 25 or 29.97, or text like \"30000/1001\""
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<FrameRate, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<FrameRate, E> {
                v.to_string().parse().map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<FrameRate, E> {
                v.to_string().parse().map_err(E::custom)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<FrameRate, E> {
                // The shortest text that reads back as this number: 29.97, not 29.969999...
                if !v.is_finite() {
                    return Err(E::custom(format!("frame rate {v} is not a number")));
                }
                format!("{v}").parse().map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_rates_are_exact() {
        assert_eq!(
            "25".parse::<FrameRate>().unwrap().as_ratio(),
            Ratio::new(25, 1)
        );
        assert_eq!(
            "29.97".parse::<FrameRate>().unwrap().as_ratio(),
            Ratio::new(2997, 100)
        );
        assert_eq!(
            "30000/1001".parse::<FrameRate>().unwrap().to_string(),
            "30000/1001"
        );
        assert_eq!("10Hz".parse::<FrameRate>().unwrap().to_string(), "10");
        assert!("0".parse::<FrameRate>().is_err());
        assert!("-5".parse::<FrameRate>().is_err());
        assert!("5000".parse::<FrameRate>().is_err());
        assert!("fast".parse::<FrameRate>().is_err());
        let r: FrameRate = serde_json::from_str("29.97").unwrap();
        assert_eq!(r.to_string(), "29.97");
        let r: FrameRate = serde_json::from_str("25").unwrap();
        assert_eq!(serde_json::to_string(&r).unwrap(), "\"25\"");
        let r: FrameRate = serde_json::from_str("\"30000/1001\"").unwrap();
        assert_eq!(r.as_ratio(), Ratio::new(30000, 1001));
    }
}
