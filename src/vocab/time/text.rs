//! Times as text: the exact forms a record keeps (`"21/5"`), the decimals and timecodes users
//! type, [`TimeSpec`] (a frame, seconds, a timecode or a percentage of a span) and serde.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{gcd_i128, Time};

/// Parses the exact forms `"5"`, `"21/5"` and finite decimals `"4.2"` (no suffixes; see
/// [`TimeSpec`] for the user-facing syntax).
impl FromStr for Time {
    type Err = String;
    fn from_str(s: &str) -> Result<Time, String> {
        let s = s.trim();
        if let Some((n, d)) = s.split_once('/') {
            let n: i64 = n
                .trim()
                .parse()
                .map_err(|_| format!("bad numerator in {s:?}"))?;
            let d: i64 = d
                .trim()
                .parse()
                .map_err(|_| format!("bad denominator in {s:?}"))?;
            if d == 0 {
                return Err(format!("zero denominator in {s:?}"));
            }
            return Ok(Time::new(n, d));
        }
        let (neg, body) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let t = parse_decimal(body).ok_or_else(|| format!("not a number: {s:?}"))?;
        Ok(if neg { -t } else { t })
    }
}

/// An unsigned decimal like `12`, `12.5`, `.5` or `12.` as an exact fraction.
fn parse_decimal(s: &str) -> Option<Time> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let (int_part, frac_part) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    if frac_part.contains('.') || (int_part.is_empty() && frac_part.is_empty()) {
        return None;
    }
    if frac_part.len() > 18 || int_part.len() > 15 {
        return None;
    }
    let int: i64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().ok()?
    };
    // Exactly `int + frac / 10^digits`, or nothing: a sum whose numerator does not fit 64 bits
    // would be rounded, and its text would not read back.
    let den = 10i64.pow(frac_part.len() as u32);
    let frac: i64 = if frac_part.is_empty() {
        0
    } else {
        frac_part.parse().ok()?
    };
    // The fraction in lowest terms first: a time written from a reduced rational (its
    // denominator 6250000, not 10^8) then reads back even where int * 10^digits would not fit
    // (`1333271946604.74292112s`, found by `cargo fuzz run time`).
    let g = gcd_i128(frac as i128, den as i128).max(1) as i64;
    let (frac, den) = (frac / g, den / g);
    let num = int.checked_mul(den)?.checked_add(frac)?;
    let t = Time::new(num, den);
    (t < Time::from_secs(MAX_TEXT_SECS)).then_some(t)
}

/// Times written as text are below 10^15 s (15 integer digits, `parse_decimal`'s bound), so
/// that every time read from text is written back as text that reads again.
const MAX_TEXT_SECS: i64 = 1_000_000_000_000_000;

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A point in a video as a user writes it, before it is resolved against a real video.
///
/// Syntax (as PySceneDetect users know it):
/// - `150`: frame 150 (0-based);
/// - `5s`, `5.0s`, `5.0`: seconds (a decimal point or an `s` suffix means seconds);
/// - `00:01:05.250` or `01:05.250`: a timecode (hours optional, fraction optional);
/// - `75%`: a fraction of the clip (only where a job allows it, e.g. truncation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeSpec {
    /// A 0-based frame index of the video (`150`).
    Frame(u64),
    /// Seconds from the start of the video, not negative (`5s`, `5.0`, a timecode).
    Seconds(Time),
    /// Percent of the clip, `0..=100`, kept as the percentage itself: `75%` is
    /// `Percent(Time::from_secs(75))`, `12.5%` is `Percent(Time::new(25, 2))`.
    Percent(Time),
}

impl TimeSpec {
    /// Parses the user syntax; the error message says what forms are accepted.
    pub fn parse(text: &str) -> Result<TimeSpec, String> {
        let s = text.trim();
        let expected = "expected a frame number (150), seconds (5s, 5.0s, 5.0), a timecode \
                        (00:01:05.250) or a percentage (75%)";
        if s.is_empty() {
            return Err(format!("empty time; {expected}"));
        }
        if s.starts_with('-') {
            return Err(format!("negative time {s:?}; {expected}"));
        }
        if let Some(p) = s.strip_suffix('%') {
            let v = parse_decimal(p.trim())
                .ok_or_else(|| format!("bad percentage {s:?}; {expected}"))?;
            if v > Time::from_secs(100) {
                return Err(format!("percentage {s:?} is above 100%"));
            }
            return Ok(TimeSpec::Percent(v));
        }
        if s.contains(':') {
            return parse_timecode(s)
                .map(TimeSpec::Seconds)
                .ok_or_else(|| format!("bad timecode {s:?}; {expected}"));
        }
        if let Some(secs) = s.strip_suffix('s') {
            return parse_decimal(secs.trim())
                .map(TimeSpec::Seconds)
                .ok_or_else(|| format!("bad seconds {s:?}; {expected}"));
        }
        if s.contains('.') {
            return parse_decimal(s)
                .map(TimeSpec::Seconds)
                .ok_or_else(|| format!("bad seconds {s:?}; {expected}"));
        }
        if s.bytes().all(|b| b.is_ascii_digit()) {
            return s
                .parse::<u64>()
                .map(TimeSpec::Frame)
                .map_err(|_| format!("frame number {s:?} is too large"));
        }
        Err(format!("cannot read time {s:?}; {expected}"))
    }

    /// Reads a JSON value: strings use [`TimeSpec::parse`]; integers are frames and other
    /// numbers seconds, mirroring the text rule (`150` is a frame, `5.0` is seconds).
    pub fn from_json(value: &serde_json::Value) -> Result<TimeSpec, String> {
        match value {
            serde_json::Value::String(s) => TimeSpec::parse(s),
            serde_json::Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    Ok(TimeSpec::Frame(u))
                } else if n.as_i64().is_some() {
                    Err(format!("negative time {n}"))
                } else {
                    // Use the decimal text serde_json kept, so 0.1 stays exactly 1/10.
                    TimeSpec::parse(&format!("{n}s")).or_else(|_| {
                        n.as_f64()
                            .and_then(|f| Time::from_secs_f64(f, 1_000_000))
                            .filter(|t| !t.is_negative())
                            .map(TimeSpec::Seconds)
                            .ok_or_else(|| format!("bad time {n}"))
                    })
                }
            }
            other => Err(format!("expected a time string or number, found {other}")),
        }
    }

    /// The canonical text of this spec (round-trips through [`TimeSpec::parse`]).
    pub fn to_text(&self) -> String {
        match self {
            TimeSpec::Frame(n) => n.to_string(),
            TimeSpec::Seconds(t) => format!("{}s", decimal_text(*t)),
            TimeSpec::Percent(p) => format!("{}%", decimal_text(*p)),
        }
    }
}

impl fmt::Display for TimeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl FromStr for TimeSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        TimeSpec::parse(s)
    }
}

/// In JSON a time is its text (`"5s"`, `"150"`, `"75%"`).
impl Serialize for TimeSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_text())
    }
}

/// A string in the time syntax, or a number: integers are frames, other numbers seconds
/// (the same rule as the text: `150` is a frame, `5.0` is seconds).
impl<'de> Deserialize<'de> for TimeSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TimeVisitor;
        impl serde::de::Visitor<'_> for TimeVisitor {
            type Value = TimeSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "a time: a frame number (150), seconds (\"5s\", 5.0), a timecode (\"00:01:05.250\") or a percentage (\"75%\")"
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TimeSpec, E> {
                TimeSpec::parse(v).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<TimeSpec, E> {
                Ok(TimeSpec::Frame(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<TimeSpec, E> {
                u64::try_from(v)
                    .map(TimeSpec::Frame)
                    .map_err(|_| E::custom(format!("negative time {v}")))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<TimeSpec, E> {
                // Rust prints the shortest text that reads back as `v`, so 0.1 is exactly 1/10.
                if !v.is_finite() {
                    return Err(E::custom(format!("bad time {v}")));
                }
                TimeSpec::parse(&format!("{v}s")).map_err(E::custom)
            }
        }
        d.deserialize_any(TimeVisitor)
    }
}

/// The strings [`TimeSpec::parse`] accepts (blanks around): a frame (`150`), seconds (`5s`,
/// `5.0`, `.5`), a timecode (`[H:]M:S[.f]`, seconds below 60 and, with hours, minutes
/// below 60) or a percentage up to 100 (`75%`). Digit-count limits (15 before the point, 18
/// after) are not spelt out.
const TIME_PATTERN: &str = concat!(
    r"^\s*(",
    r"[0-9]+",
    r"|[0-9]+\.[0-9]*|\.[0-9]+",
    r"|([0-9]+\.?[0-9]*|\.[0-9]+)\s*s",
    r"|[0-9]+:(0*[1-5]?[0-9]:)?0*([1-5]?[0-9](\.[0-9]*)?|\.[0-9]+)",
    r"|0*(100(\.0*)?|[0-9]{1,2}(\.[0-9]*)?|\.[0-9]+)\s*%",
    r")\s*$"
);

crate::vocab::textual::json_schema_as!(
    TimeSpec,
    "TimeSpec",
    schemars::json_schema!({
        "description": "A time: a frame number (`150`), seconds (`\"5s\"`, `5.0`), a timecode (`\"00:01:05.250\"`) or a percentage (`\"75%\"`, where the field allows it). In JSON, integers are frames and other numbers seconds.",
        "anyOf": [
            {"type": "string", "pattern": TIME_PATTERN},
            {"type": "number", "minimum": 0}
        ]
    })
);

/// A finite decimal if the fraction has one (denominator 2^a * 5^b), else `num/den`.
pub fn decimal_text(t: Time) -> String {
    let mut d = t.den;
    let (mut twos, mut fives) = (0u32, 0u32);
    while d % 2 == 0 {
        d /= 2;
        twos += 1;
    }
    while d % 5 == 0 {
        d /= 5;
        fives += 1;
    }
    if d != 1 {
        return t.to_string();
    }
    let digits = twos.max(fives);
    if digits == 0 {
        return t.num.to_string();
    }
    let scale = 10i128.pow(digits);
    let scaled = t.num as i128 * scale / t.den as i128;
    let sign = if scaled < 0 { "-" } else { "" };
    let a = scaled.abs();
    let int = a / scale;
    let frac = a % scale;
    format!("{sign}{int}.{frac:0width$}", width = digits as usize)
}

/// Seconds for people to read: the exact decimal when it has at most 6 digits after the point
/// (`"2.5"`), else rounded to milliseconds (`1441/24` -> `"60.042"`). Machine-readable fields
/// keep [`decimal_text`].
pub fn human_secs(t: Time) -> String {
    let exact = decimal_text(t);
    match exact.split_once('.') {
        Some((_, frac)) if frac.len() <= 6 => exact,
        None if !exact.contains('/') => exact,
        _ => format!("{:.3}", t.as_secs_f64()),
    }
}

/// `HH:MM:SS[.fff]` or `MM:SS[.fff]`; minutes and seconds below 60 when a larger unit is given.
fn parse_timecode(s: &str) -> Option<Time> {
    let parts: Vec<&str> = s.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let secs = parse_decimal(parts[parts.len() - 1])?;
    let all_digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if !parts[..parts.len() - 1].iter().all(|p| all_digits(p)) {
        return None;
    }
    let minutes: i64 = parts[parts.len() - 2].parse().ok()?;
    let hours: i64 = if parts.len() == 3 {
        parts[0].parse().ok()?
    } else {
        0
    };
    if secs >= Time::from_secs(60) || (parts.len() == 3 && minutes >= 60) {
        return None;
    }
    let whole = hours
        .checked_mul(3600)?
        .checked_add(minutes.checked_mul(60)?)?;
    // Below 10^15 s, as a decimal is: the timecode's seconds text reads back.
    (whole < MAX_TEXT_SECS)
        .then(|| Time::from_secs(whole) + secs)
        .filter(|t| *t < Time::from_secs(MAX_TEXT_SECS))
}
