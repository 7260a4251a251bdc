//! Exact time: rational seconds ([`Time`]), the time syntax users type ([`TimeSpec`]),
//! half-open spans of time ([`Span`]) and of frames ([`FrameRange`]), and the one rule that
//! maps a time to a frame ([`FrameTimeline`], with its tolerance [`FRAME_TOLERANCE`]).
//!
//! Nothing here uses floating point for decisions: timestamps are `pts * time_base` kept as
//! reduced fractions, compared by cross-multiplication in 128-bit integers. Floats appear only
//! in `as_secs_f64` for display and JSON convenience fields.

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, Mul, Neg, Sub};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An exact number of seconds, `num / den` in lowest terms with `den > 0`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Time {
    num: i64,
    den: i64,
}

fn gcd_i128(mut a: i128, mut b: i128) -> i128 {
    a = a.saturating_abs();
    b = b.saturating_abs();
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

impl Time {
    /// Zero seconds (`0/1`).
    pub const ZERO: Time = Time { num: 0, den: 1 };

    /// `num / den` seconds. Panics only on `den == 0`, which is a programming error.
    pub fn new(num: i64, den: i64) -> Time {
        assert!(den != 0, "Time with zero denominator");
        Time::from_i128(num as i128, den as i128)
    }

    /// A whole number of seconds.
    pub fn from_secs(secs: i64) -> Time {
        Time::from_i128(secs as i128, 1)
    }

    /// The largest magnitude a time's numerator takes (`-MAX..=MAX`, so negation never
    /// overflows); times beyond it saturate.
    const MAX_NUM: i128 = i64::MAX as i128;

    /// Reduces an `i128` fraction. If it does not fit `i64` even when reduced (timestamps of
    /// about 292 years, or denominators beyond 2^63: never real media, but hostile input), it
    /// is rounded to the finest of nanoseconds, microseconds, milliseconds or seconds that
    /// fits, and saturates at about ±9.2e18 seconds beyond that. Never panics, never loops.
    fn from_i128(num: i128, den: i128) -> Time {
        if den == 0 {
            return Time::ZERO;
        }
        let (mut num, mut den) = if den < 0 {
            (num.saturating_neg(), den.saturating_neg())
        } else {
            (num, den)
        };
        let g = gcd_i128(num, den).max(1);
        num /= g;
        den /= g;
        if num.abs() <= Self::MAX_NUM && den <= Self::MAX_NUM {
            return Time {
                num: num as i64,
                den: den as i64,
            };
        }
        for scale in [1_000_000_000i128, 1_000_000, 1_000, 1] {
            // num * scale / den without overflowing i128: split num into whole and fraction.
            let whole = num / den;
            let frac = num % den;
            let Some(w) = whole.checked_mul(scale) else {
                continue;
            };
            let f = div_round_i128(frac.saturating_mul(scale), den);
            let n = w.saturating_add(f);
            if n.abs() <= Self::MAX_NUM {
                let g = gcd_i128(n, scale).max(1);
                return Time {
                    num: (n / g) as i64,
                    den: (scale / g) as i64,
                };
            }
        }
        Time {
            num: if num < 0 { -(i64::MAX) } else { i64::MAX },
            den: 1,
        }
    }

    /// The time of `pts` ticks of `time_base` (`tb_num / tb_den` seconds per tick).
    pub fn from_pts(pts: i64, tb_num: i32, tb_den: i32) -> Time {
        Time::from_i128(pts as i128 * tb_num as i128, tb_den as i128)
    }

    /// This time in ticks of `tb_num / tb_den` seconds, rounded as `rounding` says.
    pub fn to_pts(self, tb_num: i32, tb_den: i32, rounding: Rounding) -> i64 {
        let num = self.num as i128 * tb_den as i128;
        let den = self.den as i128 * tb_num as i128;
        let q = match rounding {
            Rounding::Down => div_floor_i128(num, den),
            Rounding::Up => -div_floor_i128(-num, den),
            Rounding::Nearest => div_round_i128(num, den),
        };
        q.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// The numerator of the reduced fraction of seconds (carries the sign).
    pub fn numer(self) -> i64 {
        self.num
    }

    /// The denominator of the reduced fraction of seconds (always positive).
    pub fn denom(self) -> i64 {
        self.den
    }

    /// True for exactly zero seconds.
    pub fn is_zero(self) -> bool {
        self.num == 0
    }

    /// True when strictly below zero.
    pub fn is_negative(self) -> bool {
        self.num < 0
    }

    /// The nearest `f64` number of seconds: for display and JSON convenience fields only,
    /// never for decisions.
    pub fn as_secs_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// The nearest time with denominator `den` (for turning float input into exact time):
    /// `den = 1_000_000` rounds to the microsecond. `None` for NaN, infinities and values
    /// too large to hold. Panics on `den == 0`, like [`Time::new`].
    pub fn from_secs_f64(secs: f64, den: i64) -> Option<Time> {
        if !secs.is_finite() {
            return None;
        }
        let n = (secs * den as f64).round();
        if n.abs() > i64::MAX as f64 / 2.0 {
            return None;
        }
        Some(Time::new(n as i64, den))
    }

    /// `floor(self / other)` for a positive `other`: how many whole `other`s fit (rounding
    /// towards minus infinity for a negative `self`). A zero `other` gives 0.
    pub fn div_floor(self, other: Time) -> i64 {
        let num = self.num as i128 * other.den as i128;
        let den = self.den as i128 * other.num as i128;
        div_floor_i128(num, den).clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// This time multiplied by the ratio `num / den`, exactly (no rounding to ticks). Unlike
    /// [`Time::new`], a zero `den` does not panic: it gives [`Time::ZERO`].
    pub fn scale(self, num: i64, den: i64) -> Time {
        Time::from_i128(
            self.num as i128 * num as i128,
            self.den as i128 * den as i128,
        )
    }

    /// The later of two times.
    pub fn max(self, other: Time) -> Time {
        if self >= other {
            self
        } else {
            other
        }
    }

    /// The earlier of two times.
    pub fn min(self, other: Time) -> Time {
        if self <= other {
            self
        } else {
            other
        }
    }
}

/// How to round when a time is turned into whole ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Towards minus infinity (floor): the last tick at or before the time.
    Down,
    /// Towards plus infinity (ceiling): the first tick at or after the time.
    Up,
    /// To the nearest tick, halves away from zero (ffmpeg's `AV_ROUND_NEAR_INF`).
    Nearest,
}

fn div_floor_i128(num: i128, den: i128) -> i128 {
    if den == 0 {
        return 0;
    }
    // Quotient and remainder never overflow but for MIN / -1, which saturates.
    let q = num.checked_div(den).unwrap_or(i128::MAX);
    let r = num.checked_rem(den).unwrap_or(0);
    if r != 0 && ((r < 0) != (den < 0)) {
        q - 1
    } else {
        q
    }
}

/// Division rounding half away from zero, like `av_rescale_rnd(.., AV_ROUND_NEAR_INF)`,
/// without overflowing for any operands.
fn div_round_i128(num: i128, den: i128) -> i128 {
    if den == 0 {
        return 0;
    }
    let q = num.checked_div(den).unwrap_or(i128::MAX);
    let r = num.checked_rem(den).unwrap_or(0);
    // |r| >= |den| / 2 (in halves, without overflow): round away from zero.
    let (ra, da) = (r.unsigned_abs(), den.unsigned_abs());
    if ra >= da - ra {
        if (num < 0) != (den < 0) {
            q.saturating_sub(1)
        } else {
            q.saturating_add(1)
        }
    } else {
        q
    }
}

impl Ord for Time {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.num as i128 * other.den as i128).cmp(&(other.num as i128 * self.den as i128))
    }
}

impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time::from_i128(
            self.num as i128 * rhs.den as i128 + rhs.num as i128 * self.den as i128,
            self.den as i128 * rhs.den as i128,
        )
    }
}

impl Sub for Time {
    type Output = Time;
    fn sub(self, rhs: Time) -> Time {
        self + (-rhs)
    }
}

impl Neg for Time {
    type Output = Time;
    fn neg(self) -> Time {
        // Numerators stay within -MAX..=MAX (see `from_i128`), so this cannot overflow.
        Time {
            num: self.num.saturating_neg(),
            den: self.den,
        }
    }
}

impl Mul<i64> for Time {
    type Output = Time;
    fn mul(self, rhs: i64) -> Time {
        Time::from_i128(self.num as i128 * rhs as i128, self.den as i128)
    }
}

impl Mul<Time> for Time {
    type Output = Time;
    fn mul(self, rhs: Time) -> Time {
        Time::from_i128(
            self.num as i128 * rhs.num as i128,
            self.den as i128 * rhs.den as i128,
        )
    }
}

impl std::ops::Div<Time> for Time {
    type Output = Time;
    /// Exact quotient; panics on division by zero like integer division.
    fn div(self, rhs: Time) -> Time {
        assert!(rhs.num != 0, "Time divided by zero");
        Time::from_i128(
            self.num as i128 * rhs.den as i128,
            self.den as i128 * rhs.num as i128,
        )
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Time({self})")
    }
}

/// Exact text: `"5"`, `"21/5"`, `"-1/3"`. Parsed back by [`Time::from_str`].
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

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

/// A half-open span of time `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// The first instant inside the span, in seconds.
    pub start: Time,
    /// The first instant after the span, in seconds (excluded).
    pub end: Time,
}

impl Span {
    /// The span `[start, end)`; not checked, so `end <= start` makes an empty span.
    pub fn new(start: Time, end: Time) -> Span {
        Span { start, end }
    }

    /// True when the span holds no instant (`end <= start`).
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// `end - start`, or zero for an empty span (never negative).
    pub fn duration(&self) -> Time {
        if self.is_empty() {
            Time::ZERO
        } else {
            self.end - self.start
        }
    }

    /// `start <= t < end`.
    pub fn contains(&self, t: Time) -> bool {
        self.start <= t && t < self.end
    }

    /// The overlap of two spans (empty spans come back with `start == end`).
    pub fn intersect(&self, other: &Span) -> Span {
        let start = self.start.max(other.start);
        let end = self.end.min(other.end).max(start);
        Span { start, end }
    }

    /// This span moved by `delta`.
    pub fn shift(&self, delta: Time) -> Span {
        Span {
            start: self.start + delta,
            end: self.end + delta,
        }
    }
}

/// A half-open range of 0-based frame indices `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FrameRange {
    /// The first frame in the range (0-based, included).
    pub start: usize,
    /// One past the last frame in the range (0-based, excluded).
    pub end: usize,
}

impl FrameRange {
    /// The frames `[start, end)`; not checked, so `end <= start` makes an empty range.
    pub fn new(start: usize, end: usize) -> FrameRange {
        FrameRange { start, end }
    }

    /// The number of frames in the range (0 when empty).
    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// True when the range holds no frame (`end <= start`).
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// `start <= index < end`.
    pub fn contains(&self, index: usize) -> bool {
        self.start <= index && index < self.end
    }

    /// The frames in both ranges (an empty overlap comes back with `start == end`).
    pub fn intersect(&self, other: &FrameRange) -> FrameRange {
        let start = self.start.max(other.start);
        FrameRange {
            start,
            end: self.end.min(other.end).max(start),
        }
    }
}

/// How close a time must be to a frame's presentation time to stand for that frame, as a
/// fraction of the interval the time falls in (between that frame and its neighbour on the
/// time's side): 1/100 of a frame. A time computed with a rounded rate (`i / 23.976` for a
/// 24000/1001 stream, `i * 1001 / 24000` for one stamped 2997/125) or printed to a few
/// decimals misses its frame's time by far less; two frames are never that close.
pub const FRAME_TOLERANCE: (i64, i64) = (1, 100);

/// The one rule that maps a time to a frame, used by every reader of annotation keys, by spans
/// (`cut`, `truncate`, decision points) and by the samplers: a time within
/// [`FRAME_TOLERANCE`] of a frame's time *is* that frame's time ([`FrameTimeline::snap`]);
/// then the frame shown at a time is the last one at or before it, and a span starting at a
/// time starts with the first frame at or after it.
///
/// `time(i)` is frame `i`'s presentation time (strictly increasing in `i`), `end` when the
/// last frame stops being shown.
pub struct FrameTimeline<F: Fn(usize) -> Time> {
    count: usize,
    time: F,
    end: Time,
}

impl<F: Fn(usize) -> Time> FrameTimeline<F> {
    /// `count` frames at `time(0) < time(1) < ...`, the last shown until `end`.
    pub fn new(count: usize, time: F, end: Time) -> FrameTimeline<F> {
        FrameTimeline { count, time, end }
    }

    /// The number of frames.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The first frame whose time is `> t` (exactly, no tolerance); `count` when none is.
    fn first_after_exact(&self, t: Time) -> usize {
        let (mut lo, mut hi) = (0usize, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if (self.time)(mid) <= t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// When frame `i` stops being shown: the next frame's time, or `end` for the last.
    fn next_time(&self, i: usize) -> Time {
        if i + 1 < self.count {
            (self.time)(i + 1)
        } else {
            self.end
        }
    }

    /// `t`, or the time of the frame it stands for when it lies within [`FRAME_TOLERANCE`] of
    /// that frame's time: just before it (the interval from the previous frame; before the
    /// first frame, the first frame's own duration) or just after it (the frame's duration).
    pub fn snap(&self, t: Time) -> Time {
        if self.count == 0 {
            return t;
        }
        let (num, den) = FRAME_TOLERANCE;
        let after = self.first_after_exact(t);
        if after > 0 {
            let i = after - 1;
            let at = (self.time)(i);
            if t == at {
                return t;
            }
            let gap = self.next_time(i) - at;
            if t - at <= gap.scale(num, den) {
                return at;
            }
        }
        if after < self.count {
            let at = (self.time)(after);
            let gap = if after > 0 {
                at - (self.time)(after - 1)
            } else {
                self.next_time(0) - at
            };
            if at - t <= gap.scale(num, den) {
                return at;
            }
        }
        t
    }

    /// The frame shown at `t` (snapped): the one with the largest time `<= t`; `None` before
    /// the first frame or at/after `end`.
    pub fn shown_at(&self, t: Time) -> Option<usize> {
        let t = self.snap(t);
        if self.count == 0 || t >= self.end {
            return None;
        }
        self.first_after_exact(t).checked_sub(1)
    }

    /// The first frame whose time is `>= t` (snapped): where a span starting at `t` starts;
    /// `count` when there is none.
    pub fn first_at_or_after(&self, t: Time) -> usize {
        let t = self.snap(t);
        let after = self.first_after_exact(t);
        if after > 0 && (self.time)(after - 1) == t {
            after - 1
        } else {
            after
        }
    }
}

#[cfg(test)]
mod tests {

    /// Frames at `i / 25` s, 10 of them, ending at 0.4 s.
    fn frames_25() -> FrameTimeline<impl Fn(usize) -> Time> {
        FrameTimeline::new(10, |i| Time::new(i as i64, 25), Time::new(2, 5))
    }

    #[test]
    fn a_time_within_a_hundredth_of_a_frame_is_that_frame() {
        let f = frames_25();
        let at3 = Time::new(3, 25);
        // 0.4 ms either side of frame 3 (a 40 ms frame) is frame 3's time; 0.5 ms is not.
        assert_eq!(f.snap(at3 - Time::new(4, 10_000)), at3);
        assert_eq!(f.snap(at3 + Time::new(4, 10_000)), at3);
        assert_eq!(
            f.snap(at3 - Time::new(5, 10_000)),
            at3 - Time::new(5, 10_000)
        );
        assert_eq!(f.shown_at(at3 - Time::new(1, 1_000_000)), Some(3));
        assert_eq!(f.shown_at(at3 - Time::new(1, 1000)), Some(2));
        assert_eq!(f.first_at_or_after(at3 + Time::new(1, 1_000_000)), 3);
        assert_eq!(f.first_at_or_after(at3 + Time::new(1, 1000)), 4);
        assert_eq!(f.first_at_or_after(at3), 3);
        assert_eq!(f.shown_at(at3), Some(3));
        // Before the first frame, after the end.
        assert_eq!(f.shown_at(Time::new(-1, 1_000_000)), Some(0));
        assert_eq!(f.shown_at(Time::new(-1, 1000)), None);
        assert_eq!(f.shown_at(Time::new(2, 5)), None);
        assert_eq!(
            f.shown_at(Time::new(2, 5) - Time::new(1, 1_000_000)),
            Some(9)
        );
        assert_eq!(f.first_at_or_after(Time::new(2, 5)), 10);
    }

    #[test]
    fn rounded_rate_times_are_their_frames() {
        // Stamped 2997/125, keyed at i * 1001 / 24000 (a few hundred ns early), and a
        // 24000/1001 stream keyed at i / 23.976 (a few ns late).
        let avi = FrameTimeline::new(
            100,
            |i| Time::new(125 * i as i64, 2997),
            Time::new(12500, 2997),
        );
        let ntsc = FrameTimeline::new(
            100,
            |i| Time::new(1001 * i as i64, 24000),
            Time::new(100_100, 24000),
        );
        for i in (10..100).step_by(10) {
            assert_eq!(avi.shown_at(Time::new(1001 * i as i64, 24000)), Some(i));
            let t = Time::new(1000 * i as i64, 23976);
            assert_eq!(ntsc.first_at_or_after(t), i);
            assert_eq!(ntsc.shown_at(t), Some(i));
        }
    }

    proptest::proptest! {
        /// Snapped or not, the frame shown at `t` is the one `first_at_or_after` starts with
        /// when `t` is (or snaps to) a frame's time, and the lookups never cross a frame.
        #[test]
        fn lookups_agree_with_snapping(num in -50i64..500, den in 1i64..1000) {
            let f = frames_25();
            let t = Time::new(num, den);
            let s = f.snap(t);
            let d = if s > t { s - t } else { t - s };
            proptest::prop_assert!(d <= Time::new(4, 10_000));
            if let Some(i) = f.shown_at(t) {
                proptest::prop_assert!(Time::new(i as i64, 25) <= s);
                if Time::new(i as i64, 25) == s {
                    proptest::prop_assert_eq!(f.first_at_or_after(t), i);
                } else {
                    proptest::prop_assert_eq!(f.first_at_or_after(t), i + 1);
                }
            }
        }
    }

    use super::*;
    use proptest::prelude::*;

    /// Found by the `time` fuzz entry (10,000 mutations, seed 1): a timecode of 10^15 s or
    /// more, and a decimal whose exact value does not fit 64 bits (read rounded to 10^15),
    /// were accepted, but their canonical text (a normalised plan's, a sidecar's `request`)
    /// did not read back. Both are refused now; the largest accepted values round-trip.
    #[test]
    fn every_time_read_from_text_reads_back_from_its_text() {
        for text in [
            "999999999900:01:05.250",
            "999999999999999.99999995999975",
            "99999999999999999999:00:00",
        ] {
            assert!(TimeSpec::parse(text).is_err(), "{text}");
        }
        for text in [
            "999999999999999.5",
            "999999999999999",
            "277777777777:46:39.999",
            "0.000000000000000001",
            // (Found by `cargo fuzz run time`: its text, 1333271946604.74292112s, did not
            // read back until the fraction was reduced first.)
            "22221199110:04.742921120",
        ] {
            let spec = TimeSpec::parse(text).unwrap();
            assert_eq!(TimeSpec::parse(&spec.to_text()), Ok(spec), "{text}");
        }
    }

    #[test]
    fn parses_each_form() {
        assert_eq!(TimeSpec::parse("150"), Ok(TimeSpec::Frame(150)));
        assert_eq!(
            TimeSpec::parse("5s"),
            Ok(TimeSpec::Seconds(Time::from_secs(5)))
        );
        assert_eq!(
            TimeSpec::parse("5.0s"),
            Ok(TimeSpec::Seconds(Time::from_secs(5)))
        );
        assert_eq!(
            TimeSpec::parse("5.0"),
            Ok(TimeSpec::Seconds(Time::from_secs(5)))
        );
        assert_eq!(
            TimeSpec::parse("0.1"),
            Ok(TimeSpec::Seconds(Time::new(1, 10)))
        );
        assert_eq!(
            TimeSpec::parse("00:01:05.250"),
            Ok(TimeSpec::Seconds(Time::new(65250, 1000)))
        );
        assert_eq!(
            TimeSpec::parse("01:05.5"),
            Ok(TimeSpec::Seconds(Time::new(131, 2)))
        );
        assert_eq!(
            TimeSpec::parse("75%"),
            Ok(TimeSpec::Percent(Time::from_secs(75)))
        );
        assert_eq!(
            TimeSpec::parse("12.5%"),
            Ok(TimeSpec::Percent(Time::new(25, 2)))
        );
    }

    #[test]
    fn rejects_bad_forms_with_a_reason() {
        for bad in [
            "", "-1", "5x", "1:2:3:4", "00:61:00", "00:00:60", "1.2.3", "abc", "101%", "s",
        ] {
            let err = TimeSpec::parse(bad).unwrap_err();
            assert!(!err.is_empty(), "{bad}");
        }
        assert!(TimeSpec::parse("5x")
            .unwrap_err()
            .contains("expected a frame number"));
    }

    #[test]
    fn json_numbers_follow_the_text_rule() {
        let v: serde_json::Value = serde_json::from_str("[150, 5.0, 0.1, \"2s\", -3]").unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(TimeSpec::from_json(&a[0]), Ok(TimeSpec::Frame(150)));
        assert_eq!(
            TimeSpec::from_json(&a[1]),
            Ok(TimeSpec::Seconds(Time::from_secs(5)))
        );
        assert_eq!(
            TimeSpec::from_json(&a[2]),
            Ok(TimeSpec::Seconds(Time::new(1, 10)))
        );
        assert_eq!(
            TimeSpec::from_json(&a[3]),
            Ok(TimeSpec::Seconds(Time::from_secs(2)))
        );
        assert!(TimeSpec::from_json(&a[4]).is_err());
    }

    #[test]
    fn pts_rescaling_is_exact() {
        let t = Time::from_pts(512, 1, 12800);
        assert_eq!(t, Time::new(1, 25));
        assert_eq!(t.to_pts(1, 90000, Rounding::Nearest), 3600);
        assert_eq!(Time::new(1, 3).to_pts(1, 10, Rounding::Down), 3);
        assert_eq!(Time::new(1, 3).to_pts(1, 10, Rounding::Up), 4);
        assert_eq!(Time::new(-1, 3).to_pts(1, 10, Rounding::Down), -4);
        assert_eq!(Time::new(-1, 3).to_pts(1, 10, Rounding::Up), -3);
    }

    #[test]
    fn decimal_text_is_exact_or_fraction() {
        assert_eq!(decimal_text(Time::new(1, 4)), "0.25");
        assert_eq!(decimal_text(Time::new(-5, 2)), "-2.5");
        assert_eq!(decimal_text(Time::new(1, 3)), "1/3");
        assert_eq!(decimal_text(Time::from_secs(7)), "7");
    }

    fn any_time() -> impl Strategy<Value = Time> {
        (-1_000_000_000i64..1_000_000_000, 1i64..100_000).prop_map(|(n, d)| Time::new(n, d))
    }

    fn extreme_time() -> impl Strategy<Value = Time> {
        (
            any::<i64>(),
            any::<i64>().prop_filter("a denominator", |d| *d != 0),
        )
            .prop_map(|(n, d)| Time::new(n, d))
    }

    proptest! {
        /// Hostile text: the time syntax never panics or hangs, whatever it is given.
        #[test]
        fn any_text_parses_or_is_refused(text in ".{0,40}") {
            let _ = TimeSpec::parse(&text);
            let _ = text.parse::<Time>();
            let _ = serde_json::from_str::<TimeSpec>(&text);
        }

        #[test]
        fn numbers_at_the_limits_parse_or_are_refused(
            n in any::<i64>(), d in any::<i64>(), f in any::<f64>(), digits in "[0-9.:%s/-]{0,60}"
        ) {
            let _ = format!("{n}/{d}").parse::<Time>();
            let _ = TimeSpec::parse(&digits);
            let _ = serde_json::from_str::<TimeSpec>(&format!("{f}"));
            let _ = serde_json::from_str::<TimeSpec>(&format!("{n}"));
        }

        /// Arithmetic on extreme times saturates instead of overflowing (no panic, no loop).
        #[test]
        fn extreme_arithmetic_never_panics(a in extreme_time(), b in extreme_time(), k in any::<i64>()) {
            let _ = a + b;
            let _ = a - b;
            let _ = -a;
            let _ = a * b;
            let _ = a * k;
            let _ = a.scale(k, 3);
            let _ = a.div_floor(Time::new(1, 25));
            let _ = a.to_pts(1, 90000, Rounding::Nearest);
            let _ = decimal_text(a * b);
            if !b.is_zero() {
                let _ = a / b;
            }
            prop_assert!((-a).numer() != i64::MIN);
        }

        #[test]
        fn display_round_trips(t in any_time()) {
            prop_assert_eq!(t.to_string().parse::<Time>().unwrap(), t);
        }

        #[test]
        fn seconds_spec_round_trips(n in 0i64..10_000_000, d in prop::sample::select(vec![1i64, 2, 4, 5, 8, 10, 100, 1000, 1024])) {
            let spec = TimeSpec::Seconds(Time::new(n, d));
            prop_assert_eq!(TimeSpec::parse(&spec.to_text()).unwrap(), spec);
        }

        #[test]
        fn timecode_matches_seconds(h in 0i64..100, m in 0i64..60, s in 0i64..60, ms in 0i64..1000) {
            let text = format!("{h:02}:{m:02}:{s:02}.{ms:03}");
            let expected = Time::from_secs(h * 3600 + m * 60 + s) + Time::new(ms, 1000);
            prop_assert_eq!(TimeSpec::parse(&text).unwrap(), TimeSpec::Seconds(expected));
        }

        #[test]
        fn arithmetic_is_exact(a in any_time(), b in any_time()) {
            prop_assert_eq!((a + b) - b, a);
            prop_assert_eq!(a - a, Time::ZERO);
            prop_assert_eq!(a * Time::from_secs(2), a + a);
            prop_assert_eq!(a < b, (a - b).is_negative());
        }

        #[test]
        fn pts_round_trip_through_a_finer_base(pts in -10_000_000i64..10_000_000, tb_den in 1i32..100_000) {
            let t = Time::from_pts(pts, 1, tb_den);
            // Any base that is a multiple of the original represents it exactly.
            let fine = tb_den.saturating_mul(3);
            let back = Time::from_pts(t.to_pts(1, fine, Rounding::Nearest), 1, fine);
            prop_assert_eq!(back, t);
            prop_assert_eq!(t.to_pts(1, tb_den, Rounding::Down), pts);
        }

        #[test]
        fn rounding_brackets_the_value(t in any_time(), tb_den in 1i32..100_000) {
            let down = t.to_pts(1, tb_den, Rounding::Down);
            let up = t.to_pts(1, tb_den, Rounding::Up);
            prop_assert!(Time::from_pts(down, 1, tb_den) <= t);
            prop_assert!(Time::from_pts(up, 1, tb_den) >= t);
            prop_assert!(up - down <= 1);
        }

        #[test]
        fn span_intersection_is_within_both(a in any_time(), b in any_time(), c in any_time(), d in any_time()) {
            let s1 = Span::new(a.min(b), a.max(b));
            let s2 = Span::new(c.min(d), c.max(d));
            let i = s1.intersect(&s2);
            prop_assert!(i.duration() <= s1.duration() && i.duration() <= s2.duration());
            for t in [a, b, c, d] {
                prop_assert_eq!(i.contains(t), s1.contains(t) && s2.contains(t));
            }
        }

        #[test]
        fn frame_range_intersection(a in 0usize..1000, b in 0usize..1000, c in 0usize..1000, d in 0usize..1000) {
            let r1 = FrameRange::new(a.min(b), a.max(b));
            let r2 = FrameRange::new(c.min(d), c.max(d));
            let i = r1.intersect(&r2);
            for x in 0..1000 {
                prop_assert_eq!(i.contains(x), r1.contains(x) && r2.contains(x));
            }
        }
    }
}
