//! Settings: the knobs of one call that are not part of a plan (network timeouts, the
//! download limit, the lease of output-folder locks), carried by the caller in
//! [`ExecOptions::settings`](crate::ExecOptions) (and so in
//! [`BatchOptions::exec`](crate::BatchOptions)).
//!
//! The library never reads the environment. The doors do: the command line and the Python
//! package build their [`Settings`] with [`Settings::from_vars`] over the process's
//! environment (`VIDPREP_NETWORK_TIMEOUT`, `VIDPREP_NETWORK_DEADLINE`,
//! `VIDPREP_DOWNLOAD_LIMIT`, `VIDPREP_NETWORK_MIN_RATE`, `VIDPREP_NETWORK_MIN_RATE_SECONDS`, `VIDPREP_LOCK_LEASE_SECONDS`, `VIDPREP_PARITY_TIMEOUT`; see
//! [`Settings::VARS`]), and a library user sets the fields. The call hands its settings
//! down in its [`CallContext`](crate::call::context::CallContext), so code deep in the stack
//! (FFmpeg's network options, the lock's renewal) reads the settings of the call it works
//! for. Never process-wide: two calls with two settings run apart.
//!
//! FFmpeg's log level is FFmpeg's own process-wide state: the doors set it once with
//! [`crate::media::set_ffmpeg_log`] (`VIDPREP_FFMPEG_LOG`).

use std::time::Duration;

/// The network timeout by default: 30 s.
pub const DEFAULT_NETWORK_TIMEOUT: Duration = Duration::from_secs(30);
/// The total time one opened URL may take by default: an hour.
pub const DEFAULT_NETWORK_DEADLINE: Duration = Duration::from_secs(3600);
/// The slowest transfer a URL source may keep up by default: 1 KiB/s (see
/// [`NetworkSettings::min_rate`]).
pub const DEFAULT_MIN_RATE: u64 = 1024;
/// The time over which [`DEFAULT_MIN_RATE`] is measured by default: 30 s of waiting on the
/// network, so a server sending a byte every 2 s (0.5 B/s) fails within a minute.
pub const DEFAULT_MIN_RATE_WINDOW: Duration = Duration::from_secs(30);
/// The largest file downloaded whole (from a server without range requests) by default: 2 GiB.
pub const DEFAULT_DOWNLOAD_LIMIT: u64 = 2 << 30;
/// The lease of an output folder's lock by default: a holder renews it every quarter lease;
/// a lock not renewed for this long is taken over by a run on another host.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(120);
/// How long `vidprep parity` waits for the package's Python runner by default: 10 minutes.
pub const DEFAULT_PARITY_TIMEOUT: Duration = Duration::from_secs(600);

/// How URL sources are read (`docs/sources.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NetworkSettings {
    /// How long one network operation (connect, a read, a write) may wait before the source
    /// fails. Default [`DEFAULT_NETWORK_TIMEOUT`]; `VIDPREP_NETWORK_TIMEOUT` (seconds, more
    /// than 0, at most a day).
    pub timeout: Duration,
    /// The total time one opened URL may take (its opening and every read after it): a server
    /// that sends a byte every few seconds never trips [`timeout`](Self::timeout), but trips
    /// this. Default [`DEFAULT_NETWORK_DEADLINE`]; `VIDPREP_NETWORK_DEADLINE` (seconds, more
    /// than 0, at most 30 days).
    pub deadline: Duration,
    /// The largest file downloaded whole from a server without range requests, in bytes; 0
    /// never downloads. Default [`DEFAULT_DOWNLOAD_LIMIT`]; `VIDPREP_DOWNLOAD_LIMIT` (bytes, or
    /// with a suffix `K`, `M`, `G`, `T`: powers of 1024).
    pub download_limit: u64,
    /// The slowest transfer a URL source may keep up, in bytes per second (as curl's
    /// `--speed-limit`): measured over each [`min_rate_window`](Self::min_rate_window) of time
    /// spent waiting on the network, a server sending less fails the source, naming the URL
    /// and the rate it sent (a server dripping a byte every few seconds never trips
    /// [`timeout`](Self::timeout), and would hold the call for the whole
    /// `deadline`). 0 turns the check off. Default `DEFAULT_MIN_RATE`;
    /// `VIDPREP_NETWORK_MIN_RATE` (bytes per second, or with K, M, G).
    pub min_rate: u64,
    /// The time over which [`min_rate`](Self::min_rate) is measured (as curl's
    /// `--speed-time`). Default `DEFAULT_MIN_RATE_WINDOW`; `VIDPREP_NETWORK_MIN_RATE_SECONDS`
    /// (seconds, more than 0, at most a day).
    pub min_rate_window: Duration,
}

impl NetworkSettings {
    /// Whether `bytes` received over `waited` is below the minimum rate: judged only once a
    /// whole window has been waited (never with the check off).
    pub(crate) fn too_slow(&self, bytes: u64, waited: Duration) -> bool {
        self.min_rate > 0
            && waited >= self.min_rate_window
            && (bytes as u128) * 1000 < (self.min_rate as u128) * waited.as_millis()
    }
}

impl Default for NetworkSettings {
    fn default() -> Self {
        NetworkSettings {
            timeout: DEFAULT_NETWORK_TIMEOUT,
            deadline: DEFAULT_NETWORK_DEADLINE,
            download_limit: DEFAULT_DOWNLOAD_LIMIT,
            min_rate: DEFAULT_MIN_RATE,
            min_rate_window: DEFAULT_MIN_RATE_WINDOW,
        }
    }
}

/// The settings of one call (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// How URL sources are read.
    pub network: NetworkSettings,
    /// The lease this call gives its output-folder locks (`docs/cluster.md`). Default
    /// [`DEFAULT_LEASE`]; `VIDPREP_LOCK_LEASE_SECONDS` (1 to 86400).
    pub lock_lease: Duration,
    /// How long `vidprep parity` lets the package's Python runner run before it kills the
    /// runner's process group and fails. Default `DEFAULT_PARITY_TIMEOUT`;
    /// `VIDPREP_PARITY_TIMEOUT` (seconds, more than 0, at most a day).
    pub parity_timeout: Duration,
    /// The PEM bundle of certificate authorities https trusts instead of the system's
    /// (`SSL_CERT_FILE`, as Python's `ssl` and curl read it; `net::trust`).
    pub ssl_cert_file: Option<std::path::PathBuf>,
    /// Folders of PEM certificates https trusts too (`SSL_CERT_DIR`, `:`-separated).
    pub ssl_cert_dir: Option<String>,
    /// Test-only fault injection: the batch item with this id panics (`VIDPREP_FAULT_PANIC`).
    /// Only a build with the test-only `fault-injection` feature has it.
    #[cfg(feature = "fault-injection")]
    #[doc(hidden)]
    pub fault_panic: Option<String>,
    /// Test-only fault injection: the commit step (numbered from 1 over the call) at which
    /// the process pauses or fails (`VIDPREP_FAULT_COMMIT_STEP` and the variables of
    /// [`FaultSteps`]; see `CancelToken::fault_step`).
    #[cfg(feature = "fault-injection")]
    #[doc(hidden)]
    pub fault_commit_step: Option<FaultSteps>,
    /// Test-only fault injection: a folder where a plan, its inputs read and before it checks
    /// them again, writes `read` and waits (at most a minute) for `go`
    /// (`VIDPREP_FAULT_READ_GATE`): a test changes a source in between.
    #[cfg(feature = "fault-injection")]
    #[doc(hidden)]
    pub fault_read_gate: Option<std::path::PathBuf>,
}

/// Test-only fault injection at one filesystem step of a call (a commit's renames and
/// removals, a lock's writes, links and take-overs), numbered from 1 over the call.
#[cfg(feature = "fault-injection")]
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultSteps {
    /// The step (`VIDPREP_FAULT_COMMIT_STEP`).
    pub at: u64,
    /// How long it pauses there (`VIDPREP_FAULT_COMMIT_PAUSE_MS`, default 3000); with a
    /// handshake, the longest wait for `go` (at least a minute).
    pub pause: Duration,
    /// `VIDPREP_FAULT_STEP_DIR`: the folder where the paused process writes `paused` and
    /// waits for `go` (an interleaving harness acts in between).
    pub handshake: Option<std::path::PathBuf>,
    /// `VIDPREP_FAULT_STEP_FAIL`: the error number the step then fails with (`EXDEV`,
    /// `ENOSPC`, `EIO`, `EACCES`, or a number).
    pub fail: Option<i32>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            network: NetworkSettings::default(),
            lock_lease: DEFAULT_LEASE,
            parity_timeout: DEFAULT_PARITY_TIMEOUT,
            ssl_cert_file: None,
            ssl_cert_dir: None,
            #[cfg(feature = "fault-injection")]
            fault_panic: None,
            #[cfg(feature = "fault-injection")]
            fault_commit_step: None,
            #[cfg(feature = "fault-injection")]
            fault_read_gate: None,
        }
    }
}

impl Settings {
    /// The variables [`from_vars`](Self::from_vars) reads.
    pub const VARS: [&'static str; 9] = [
        "VIDPREP_NETWORK_TIMEOUT",
        "VIDPREP_NETWORK_DEADLINE",
        "VIDPREP_DOWNLOAD_LIMIT",
        "VIDPREP_NETWORK_MIN_RATE",
        "VIDPREP_NETWORK_MIN_RATE_SECONDS",
        "VIDPREP_LOCK_LEASE_SECONDS",
        "VIDPREP_PARITY_TIMEOUT",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    ];

    /// Settings from variables looked up by `var` (a door passes its environment:
    /// `Settings::from_vars(|k| std::env::var(k).ok())`); a variable not set, and a timeout,
    /// deadline or lease out of its range, keep the default. A download limit or minimum rate
    /// that is not a size is an error naming the variable.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Settings, String> {
        let seconds = |name: &str, max: f64| {
            var(name)
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s > 0.0 && *s <= max)
                .map(Duration::from_secs_f64)
        };
        let download_limit = match var("VIDPREP_DOWNLOAD_LIMIT") {
            None => DEFAULT_DOWNLOAD_LIMIT,
            Some(v) => parse_size(&v).ok_or_else(|| {
                format!(
                    "VIDPREP_DOWNLOAD_LIMIT={v:?} is not a size: give bytes, or a number with K, \
                     M or G (powers of 1024), such as 500M or 4G"
                )
            })?,
        };
        let min_rate = match var("VIDPREP_NETWORK_MIN_RATE") {
            None => DEFAULT_MIN_RATE,
            Some(v) => parse_size(&v).ok_or_else(|| {
                format!(
                    "VIDPREP_NETWORK_MIN_RATE={v:?} is not a rate: give bytes per second, or a \
                     number with K, M or G (powers of 1024), such as 1K; 0 turns the check off"
                )
            })?,
        };
        let lock_lease = var("VIDPREP_LOCK_LEASE_SECONDS")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|s| (1..=86_400).contains(s))
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_LEASE);
        Ok(Settings {
            network: NetworkSettings {
                timeout: seconds("VIDPREP_NETWORK_TIMEOUT", 86_400.0)
                    .unwrap_or(DEFAULT_NETWORK_TIMEOUT),
                deadline: seconds("VIDPREP_NETWORK_DEADLINE", 30.0 * 86_400.0)
                    .unwrap_or(DEFAULT_NETWORK_DEADLINE),
                download_limit,
                min_rate,
                min_rate_window: seconds("VIDPREP_NETWORK_MIN_RATE_SECONDS", 86_400.0)
                    .unwrap_or(DEFAULT_MIN_RATE_WINDOW),
            },
            lock_lease,
            parity_timeout: seconds("VIDPREP_PARITY_TIMEOUT", 86_400.0)
                .unwrap_or(DEFAULT_PARITY_TIMEOUT),
            ssl_cert_file: var("SSL_CERT_FILE")
                .filter(|v| !v.is_empty())
                .map(std::path::PathBuf::from),
            ssl_cert_dir: var("SSL_CERT_DIR").filter(|v| !v.is_empty()),
            #[cfg(feature = "fault-injection")]
            fault_panic: var("VIDPREP_FAULT_PANIC"),
            #[cfg(feature = "fault-injection")]
            fault_commit_step: var("VIDPREP_FAULT_COMMIT_STEP")
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(|n| {
                    let ms = var("VIDPREP_FAULT_COMMIT_PAUSE_MS")
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .unwrap_or(3000);
                    FaultSteps {
                        at: n,
                        pause: Duration::from_millis(ms),
                        handshake: var("VIDPREP_FAULT_STEP_DIR")
                            .filter(|v| !v.is_empty())
                            .map(std::path::PathBuf::from),
                        fail: var("VIDPREP_FAULT_STEP_FAIL").and_then(|v| match v.trim() {
                            "EXDEV" => Some(18),
                            "ENOSPC" => Some(28),
                            "EIO" => Some(5),
                            "EACCES" => Some(13),
                            n => n.parse().ok(),
                        }),
                    }
                }),
            #[cfg(feature = "fault-injection")]
            fault_read_gate: var("VIDPREP_FAULT_READ_GATE")
                .filter(|v| !v.is_empty())
                .map(std::path::PathBuf::from),
        })
    }
}

/// `123`, `500M`, `1.5GiB`, `4 G` (powers of 1024) as bytes.
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let shift = match unit.trim() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    if num.is_empty() {
        return None;
    }
    if shift == 0 {
        return num.parse().ok();
    }
    let n: f64 = num.parse().ok()?;
    let bytes = n * (1u64 << shift) as f64;
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

/// How much FFmpeg itself prints (to stderr): nothing but fatal errors by default, since
/// vidprep reports errors through its own messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum FfmpegLog {
    /// Fatal errors only (the default).
    #[default]
    Quiet,
    /// Errors.
    Error,
    /// Warnings and errors.
    Warning,
    /// Informational messages too.
    Info,
    /// Everything FFmpeg says while debugging.
    Debug,
}

impl FfmpegLog {
    /// `VIDPREP_FFMPEG_LOG`'s spelling: `error`, `warning`, `info`, `debug`; anything else
    /// (or nothing) is [`FfmpegLog::Quiet`].
    pub fn from_text(text: Option<&str>) -> FfmpegLog {
        match text {
            Some("debug") => FfmpegLog::Debug,
            Some("info") => FfmpegLog::Info,
            Some("warning") => FfmpegLog::Warning,
            Some("error") => FfmpegLog::Error,
            _ => FfmpegLog::Quiet,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_fill_the_settings_and_bad_ones_keep_the_defaults() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(Settings::from_vars(|_| None).unwrap(), Settings::default());
        let s = Settings::from_vars(vars(&[
            ("VIDPREP_NETWORK_TIMEOUT", "1.5"),
            ("VIDPREP_NETWORK_DEADLINE", "7"),
            ("VIDPREP_DOWNLOAD_LIMIT", "10K"),
            ("VIDPREP_LOCK_LEASE_SECONDS", "3"),
            ("VIDPREP_PARITY_TIMEOUT", "2.5"),
        ]))
        .unwrap();
        assert_eq!(s.parity_timeout, Duration::from_millis(2500));
        assert_eq!(s.network.timeout, Duration::from_millis(1500));
        assert_eq!(s.network.deadline, Duration::from_secs(7));
        assert_eq!(s.network.download_limit, 10 << 10);
        assert_eq!(s.lock_lease, Duration::from_secs(3));
        let s = Settings::from_vars(vars(&[
            ("VIDPREP_NETWORK_TIMEOUT", "-1"),
            ("VIDPREP_LOCK_LEASE_SECONDS", "0"),
            ("VIDPREP_PARITY_TIMEOUT", "0"),
        ]))
        .unwrap();
        assert_eq!(s, Settings::default());
        let e = Settings::from_vars(vars(&[("VIDPREP_DOWNLOAD_LIMIT", "lots")])).unwrap_err();
        assert!(
            e.contains("VIDPREP_DOWNLOAD_LIMIT=\"lots\" is not a size"),
            "{e}"
        );
    }

    #[test]
    fn the_default_minimum_rate_fails_a_byte_every_two_seconds_within_a_minute() {
        let n = NetworkSettings::default();
        assert!(n.min_rate_window <= Duration::from_secs(60));
        // A byte every 2 s: 15 bytes in the first window of 30 s.
        let window = n.min_rate_window;
        let dripped = window.as_secs() / 2;
        assert!(n.too_slow(dripped, window));
        // Not judged before a whole window was waited, nor with the check off.
        assert!(!n.too_slow(0, window - Duration::from_millis(1)));
        let off = NetworkSettings { min_rate: 0, ..n };
        assert!(!off.too_slow(0, Duration::from_secs(3600)));
        // The rate itself passes: 1 KiB/s over 30 s is 30 KiB.
        assert!(!n.too_slow(30 << 10, window));
        assert!(n.too_slow((30 << 10) - 1, window));
        let s = Settings::from_vars(|k| match k {
            "VIDPREP_NETWORK_MIN_RATE" => Some("100K".into()),
            "VIDPREP_NETWORK_MIN_RATE_SECONDS" => Some("2".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(s.network.min_rate, 100 << 10);
        assert_eq!(s.network.min_rate_window, Duration::from_secs(2));
        let e =
            Settings::from_vars(|k| (k == "VIDPREP_NETWORK_MIN_RATE").then(|| "slow".to_string()))
                .unwrap_err();
        assert!(
            e.contains("VIDPREP_NETWORK_MIN_RATE=\"slow\" is not a rate"),
            "{e}"
        );
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("0"), Some(0));
        assert_eq!(parse_size("500M"), Some(500 << 20));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("1.5 g"), Some(3 << 29));
        assert_eq!(parse_size("4kb"), Some(4096));
        assert_eq!(parse_size("10b"), Some(10));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("5X"), None);
        assert_eq!(parse_size(""), None);
    }
}
