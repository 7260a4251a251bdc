//! Exact time: rational seconds ([`Time`]), the time syntax users type ([`TimeSpec`]),
//! half-open spans of time ([`Span`]) and of frames ([`FrameRange`]), and the one rule that
//! maps a time to a frame ([`FrameTimeline`], with its tolerance [`FRAME_TOLERANCE`]).
//!
//! Nothing here uses floating point for decisions: timestamps are `pts * time_base` kept as
//! reduced fractions, compared by cross-multiplication in 128-bit integers. Floats appear only
//! in `as_secs_f64` for display and JSON convenience fields.
//!
//! By job: [`Time`] and its exact arithmetic here; the text users and records spell times in
//! (`text.rs`: [`TimeSpec`], decimals, timecodes, serde); spans and the time-to-frame rule
//! (`span.rs`).

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, Mul, Neg, Sub};

mod span;
mod text;

pub use span::{FrameRange, FrameTimeline, Span, FRAME_TOLERANCE};
pub use text::{decimal_text, human_secs, TimeSpec};

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

/// Exact text: `"5"`, `"21/5"`, `"-1/3"`. Parsed back by its [`FromStr`](std::str::FromStr).
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
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
