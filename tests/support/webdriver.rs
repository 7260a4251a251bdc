//! A minimal W3C WebDriver client (`ureq`, `serde_json` and `base64`) that drives a real
//! headless Chromium through chromedriver, for tests of pages opened from `file://`.
//!
//! ```ignore
//! let dl = tempfile::tempdir().unwrap();
//! let Some(b) = Browser::start(dl.path()) else { return }; // a `SKIP` line printed (common::skip)
//! b.goto_file(&page);
//! let play = b.wait_for("#play", Duration::from_secs(5));
//! b.click(&play);
//! b.press("ArrowRight");                       // a named key, a W3C code or a character
//! b.press_chord(&["Shift", "ArrowRight"]);     // modifiers held, last key pressed
//! b.click_at_fraction(&b.find("#timeline"), 0.25, 0.5); // a quarter into the timeline
//! let t = b.execute("return document.querySelector('video').currentTime", vec![]);
//! ```
//!
//! Missing chromedriver/Chromium: [`Browser::start`] skips (`common::skip`: a `SKIP` line) and
//! returns `None`, unless `VIDPREP_REQUIRE_BROWSER` or `VIDPREP_REQUIRE_ALL` is set (CI sets the
//! first), where it panics with the reason.
//!
//! Transport: one `ureq` request per command, each with a deadline ([`Browser::timeout`], 30 s by default; async
//! scripts get the script timeout plus 10 s). Every failure names the WebDriver command and
//! carries the response body. The high-level methods panic with that message (they are for
//! tests); [`Browser::command`] returns it as a `Result`.
//!
//! Pointer positions: [`Browser::click_at`] takes an offset from the element's top-left corner
//! ([`Origin::TopLeft`], converted to viewport coordinates from `getBoundingClientRect()`) or
//! from its centre ([`Origin::Center`], W3C's own element origin, which chromedriver resolves
//! itself). Offsets are CSS pixels, rounded to whole pixels (WebDriver takes integers).
//!
//! Downloads go to the `download_dir` given to `start` without a prompt, through the Chrome
//! prefs `download.default_directory` / `download.prompt_for_download` (these work in
//! `--headless=new`, Chromium 156; [`Browser::cdp`] can send `Browser.setDownloadBehavior` if a
//! future version stops honouring them). Console messages and uncaught JS errors are collected
//! through `goog:loggingPrefs` and chromedriver's `POST /session/{id}/se/log`.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::skip::{skipped, Needs};
use base64::Engine as _;
use serde_json::{json, Value};

/// The W3C key of an element reference in JSON.
pub const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Chromium's arguments for every session.
pub const CHROME_ARGS: &[&str] = &[
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--autoplay-policy=no-user-gesture-required",
    "--window-size=1400,900",
    "--mute-audio",
];

/// WebDriver's key codes (the Unicode private-use points of the W3C spec).
pub mod keys {
    pub const NULL: &str = "\u{E000}";
    pub const CANCEL: &str = "\u{E001}";
    pub const HELP: &str = "\u{E002}";
    pub const BACKSPACE: &str = "\u{E003}";
    pub const TAB: &str = "\u{E004}";
    pub const CLEAR: &str = "\u{E005}";
    pub const RETURN: &str = "\u{E006}";
    pub const ENTER: &str = "\u{E007}";
    pub const SHIFT: &str = "\u{E008}";
    pub const CONTROL: &str = "\u{E009}";
    pub const ALT: &str = "\u{E00A}";
    pub const PAUSE: &str = "\u{E00B}";
    pub const ESCAPE: &str = "\u{E00C}";
    pub const SPACE: &str = "\u{E00D}";
    pub const PAGE_UP: &str = "\u{E00E}";
    pub const PAGE_DOWN: &str = "\u{E00F}";
    pub const END: &str = "\u{E010}";
    pub const HOME: &str = "\u{E011}";
    pub const ARROW_LEFT: &str = "\u{E012}";
    pub const ARROW_UP: &str = "\u{E013}";
    pub const ARROW_RIGHT: &str = "\u{E014}";
    pub const ARROW_DOWN: &str = "\u{E015}";
    pub const INSERT: &str = "\u{E016}";
    pub const DELETE: &str = "\u{E017}";
    pub const F1: &str = "\u{E031}";
    pub const META: &str = "\u{E03D}";

    /// The WebDriver code for a DOM `KeyboardEvent.key` name ("ArrowLeft", "Shift", "Space",
    /// "Escape", "Enter", "F1", ...; case-insensitive), or `None` for an unknown name.
    pub fn named(name: &str) -> Option<&'static str> {
        let n = name.to_ascii_lowercase();
        Some(match n.as_str() {
            "backspace" => BACKSPACE,
            "tab" => TAB,
            "return" => RETURN,
            "enter" => ENTER,
            "shift" => SHIFT,
            "control" | "ctrl" => CONTROL,
            "alt" => ALT,
            "pause" => PAUSE,
            "escape" | "esc" => ESCAPE,
            "space" | " " => SPACE,
            "pageup" => PAGE_UP,
            "pagedown" => PAGE_DOWN,
            "end" => END,
            "home" => HOME,
            "arrowleft" | "left" => ARROW_LEFT,
            "arrowup" | "up" => ARROW_UP,
            "arrowright" | "right" => ARROW_RIGHT,
            "arrowdown" | "down" => ARROW_DOWN,
            "insert" => INSERT,
            "delete" | "del" => DELETE,
            "meta" | "command" => META,
            _ => {
                let f: u32 = n.strip_prefix('f')?.parse().ok()?;
                if !(1..=12).contains(&f) {
                    return None;
                }
                const FS: [&str; 12] = [
                    "\u{E031}", "\u{E032}", "\u{E033}", "\u{E034}", "\u{E035}", "\u{E036}",
                    "\u{E037}", "\u{E038}", "\u{E039}", "\u{E03A}", "\u{E03B}", "\u{E03C}",
                ];
                FS[f as usize - 1]
            }
        })
    }

    /// `key` as one WebDriver key value: a name from [`named`], or `key` itself when it is a
    /// single character (a letter, a digit, or a code from this module). Panics otherwise.
    pub fn resolve(key: &str) -> String {
        if key.chars().count() == 1 {
            return key.to_string();
        }
        named(key)
            .unwrap_or_else(|| panic!("webdriver: unknown key {key:?} (use a DOM key name such as ArrowLeft, or one character)"))
            .to_string()
    }
}

/// A WebDriver element reference (the W3C id of a node in the current page).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Element(pub String);

impl Element {
    /// The JSON form, to pass as a script argument (`arguments[i]` is then the DOM node).
    pub fn json(&self) -> Value {
        json!({ ELEMENT_KEY: self.0 })
    }
    /// An element from a JSON reference (as returned by find or by a script).
    pub fn from_value(v: &Value) -> Option<Element> {
        v.get(ELEMENT_KEY)
            .and_then(|s| s.as_str())
            .map(|s| Element(s.to_string()))
    }
}

/// An element's box in CSS pixels, relative to the viewport (`getBoundingClientRect()`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// Where a pointer offset is measured from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The element's top-left corner (border box).
    TopLeft,
    /// The element's centre (WebDriver's element origin).
    Center,
}

/// One entry of the browser log (console messages, uncaught errors, failed loads).
#[derive(Clone, Debug)]
pub struct LogEntry {
    /// "INFO", "WARNING", "SEVERE", ...
    pub level: String,
    /// "console-api", "javascript", "network", ...
    pub source: String,
    pub message: String,
}

/// A failed WebDriver call: which command, and what came back.
#[derive(Clone, Debug)]
pub struct WdError {
    /// e.g. "POST /session/{id}/element".
    pub command: String,
    /// HTTP status (0 when no response arrived).
    pub status: u16,
    /// The W3C error code ("no such element", "timeout", ...) when the body had one.
    pub error: Option<String>,
    /// What went wrong, with the response body (or the transport error).
    pub message: String,
}

impl std::fmt::Display for WdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "WebDriver command {} failed (HTTP {}{}): {}",
            self.command,
            self.status,
            self.error
                .as_deref()
                .map(|e| format!(", {e}"))
                .unwrap_or_default(),
            self.message
        )
    }
}

impl std::error::Error for WdError {}

/// A running chromedriver with one Chromium session. Dropping it deletes the session and
/// stops chromedriver (and Chromium, should it outlive its session).
pub struct Browser {
    port: u16,
    session: String,
    driver: Child,
    driver_log: PathBuf,
    chrome_pid: Option<u32>,
    download_dir: PathBuf,
    /// Deadline of each ordinary command.
    pub timeout: Duration,
    script_timeout: Duration,
    _tmp: tempfile::TempDir,
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_file())
}

/// chromedriver: `$VIDPREP_CHROMEDRIVER`, `PATH`, `/usr/bin/chromedriver`.
pub fn find_chromedriver() -> Option<PathBuf> {
    env_path("VIDPREP_CHROMEDRIVER")
        .or_else(|| which("chromedriver"))
        .or_else(|| Some(PathBuf::from("/usr/bin/chromedriver")).filter(|p| p.is_file()))
}

/// Chromium: `$VIDPREP_CHROMIUM`, Debian's real binary `/usr/lib/chromium/chromium` (the
/// `/usr/bin/chromium` shell wrapper only adds desktop flags, and prints shell noise), then
/// `chromium`, `chromium-browser`, `google-chrome-stable`, `google-chrome` on `PATH`.
pub fn find_chromium() -> Option<PathBuf> {
    env_path("VIDPREP_CHROMIUM")
        .or_else(|| Some(PathBuf::from("/usr/lib/chromium/chromium")).filter(|p| p.is_file()))
        .or_else(|| {
            [
                "chromium",
                "chromium-browser",
                "google-chrome-stable",
                "google-chrome",
            ]
            .iter()
            .find_map(|n| which(n))
        })
}

/// Skip (`SKIP ... (browser)`) and give `None`, or panic when a browser is required
/// (`VIDPREP_REQUIRE_BROWSER`, `VIDPREP_REQUIRE_ALL`).
fn unavailable<T>(why: String) -> Option<T> {
    skipped(
        Needs::Browser,
        format!("no headless browser session: {why}"),
    )
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn tail(path: &Path, n: usize) -> String {
    let s = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// One HTTP exchange with chromedriver (`ureq`, no proxy) within a total deadline: the status
/// and the body.
fn http(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> Result<(u16, String), String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_connect(Some(timeout.min(Duration::from_secs(5))))
        .timeout_global(Some(timeout))
        .build()
        .into();
    let url = format!("http://127.0.0.1:{port}{path}");
    let sent = match method {
        "GET" => agent.get(&url).header("Accept", "application/json").call(),
        "DELETE" => agent
            .delete(&url)
            .header("Accept", "application/json")
            .call(),
        _ => agent
            .post(&url)
            .header("Accept", "application/json")
            .header("Content-Type", "application/json; charset=utf-8")
            .send(body.map(|b| b.to_string()).unwrap_or_default()),
    };
    let response = sent.map_err(|e| format!("{method} {url} (chromedriver): {e}"))?;
    let status = response.status().as_u16();
    let text = response
        .into_body()
        .into_with_config()
        .limit(1 << 30)
        .read_to_string()
        .map_err(|e| format!("read response: {e}"))?;
    Ok((status, text))
}

fn shorten(s: &str) -> String {
    if s.len() <= 2000 {
        s.to_string()
    } else {
        let mut cut = 2000;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}... ({} bytes)", &s[..cut], s.len())
    }
}

/// Send one WebDriver command to `port`: the W3C `value` on success.
fn wd(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&Value>,
    timeout: Duration,
    label: &str,
) -> Result<Value, WdError> {
    let command = format!("{method} {label}");
    let (status, text) = http(port, method, path, body, timeout).map_err(|m| WdError {
        command: command.clone(),
        status: 0,
        error: None,
        message: m,
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| WdError {
        command: command.clone(),
        status,
        error: None,
        message: format!("response is not JSON ({e}): {}", shorten(&text)),
    })?;
    let value = v.get("value").cloned().unwrap_or(Value::Null);
    let error = value
        .get("error")
        .and_then(|e| e.as_str())
        .map(String::from);
    if status != 200 || error.is_some() {
        let msg = value
            .get("message")
            .and_then(|m| m.as_str())
            .map(|m| m.lines().next().unwrap_or("").to_string())
            .unwrap_or_default();
        return Err(WdError {
            command,
            status,
            error,
            message: format!("{msg}\nresponse body: {}", shorten(&text)),
        });
    }
    Ok(value)
}

impl Browser {
    /// Start chromedriver and a headless Chromium session downloading into `download_dir`;
    /// `None` (after a `SKIP` line, `common::skip`) when either is not installed or does not
    /// start, unless `VIDPREP_REQUIRE_BROWSER` (or `_ALL`) is set, which makes that a panic.
    pub fn start(download_dir: &Path) -> Option<Browser> {
        Self::start_with_args(download_dir, &[])
    }

    /// [`start`](Self::start) with more Chromium arguments after [`CHROME_ARGS`] (e.g.
    /// `--allow-file-access-from-files`, which lets a `file://` page read pixels of a
    /// `file://` video through a canvas).
    pub fn start_with_args(download_dir: &Path, extra_args: &[&str]) -> Option<Browser> {
        let Some(driver) = find_chromedriver() else {
            return unavailable(
                "chromedriver not found (PATH, /usr/bin/chromedriver, $VIDPREP_CHROMEDRIVER); install chromium-driver".into(),
            );
        };
        let Some(chrome) = find_chromium() else {
            return unavailable(
                "Chromium not found (/usr/lib/chromium/chromium, chromium on PATH, $VIDPREP_CHROMIUM); install chromium".into(),
            );
        };
        match Self::launch(&driver, &chrome, download_dir, extra_args) {
            Ok(b) => Some(b),
            Err(e) => unavailable(e),
        }
    }

    fn launch(
        driver: &Path,
        chrome: &Path,
        download_dir: &Path,
        extra_args: &[&str],
    ) -> Result<Browser, String> {
        std::fs::create_dir_all(download_dir)
            .map_err(|e| format!("create download dir {download_dir:?}: {e}"))?;
        let download_dir = download_dir
            .canonicalize()
            .map_err(|e| format!("download dir {download_dir:?}: {e}"))?;
        let tmp = tempfile::Builder::new()
            .prefix("vidprep-webdriver")
            .tempdir()
            .map_err(|e| format!("temp dir: {e}"))?;
        let log = tmp.path().join("chromedriver.log");
        let mut last_err = String::new();
        // The port is free when asked; another process could take it before chromedriver
        // binds it, so try a few.
        for _attempt in 0..3 {
            let port = free_port().map_err(|e| format!("find a free port: {e}"))?;
            let out = std::fs::File::create(&log).map_err(|e| format!("{log:?}: {e}"))?;
            let err = out.try_clone().map_err(|e| format!("{log:?}: {e}"))?;
            // Chromium's own temporaries (its profile, the singleton socket's folder) go into
            // this session's folder, removed with it: in /tmp they outlived every run.
            let mut child = Command::new(driver)
                .arg(format!("--port={port}"))
                .env("TMPDIR", tmp.path())
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .spawn()
                .map_err(|e| format!("start {driver:?}: {e}"))?;
            match Self::wait_ready(port, &mut child, Duration::from_secs(20)) {
                Ok(()) => {}
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    last_err = format!("{e}\nchromedriver output:\n{}", tail(&log, 20));
                    continue;
                }
            }
            let mut b = Browser {
                port,
                session: String::new(),
                driver: child,
                driver_log: log.clone(),
                chrome_pid: None,
                download_dir: download_dir.clone(),
                timeout: Duration::from_secs(30),
                script_timeout: Duration::from_secs(30),
                _tmp: tmp,
            };
            b.new_session(chrome, extra_args)
                .map_err(|e| format!("{e}\nchromedriver output:\n{}", tail(&log, 20)))?;
            return Ok(b);
        }
        Err(last_err)
    }

    fn wait_ready(port: u16, child: &mut Child, limit: Duration) -> Result<(), String> {
        let t0 = Instant::now();
        let mut last = String::new();
        while t0.elapsed() < limit {
            if let Ok(Some(st)) = child.try_wait() {
                return Err(format!("chromedriver exited at start ({st})"));
            }
            match wd(
                port,
                "GET",
                "/status",
                None,
                Duration::from_secs(2),
                "/status",
            ) {
                Ok(v) if v["ready"] == json!(true) => return Ok(()),
                Ok(v) => last = format!("not ready: {v}"),
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!(
            "chromedriver on port {port} not ready within {limit:?}; last: {last}"
        ))
    }

    fn new_session(&mut self, chrome: &Path, extra_args: &[&str]) -> Result<(), String> {
        let mut args: Vec<&str> = CHROME_ARGS.to_vec();
        args.extend_from_slice(extra_args);
        let caps = json!({
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "pageLoadStrategy": "normal",
                    "goog:chromeOptions": {
                        "binary": chrome.to_string_lossy(),
                        "args": args,
                        "prefs": {
                            "download.default_directory": self.download_dir.to_string_lossy(),
                            "download.prompt_for_download": false,
                            "download.directory_upgrade": true,
                            "safebrowsing.enabled": false,
                        },
                    },
                    "goog:loggingPrefs": { "browser": "ALL" },
                    "timeouts": { "script": self.script_timeout.as_millis() as u64, "pageLoad": 60000, "implicit": 0 },
                }
            }
        });
        let v = wd(
            self.port,
            "POST",
            "/session",
            Some(&caps),
            Duration::from_secs(60),
            "/session (new session)",
        )
        .map_err(|e| e.to_string())?;
        self.session = v["sessionId"]
            .as_str()
            .ok_or_else(|| format!("new session: no sessionId in {v}"))?
            .to_string();
        self.chrome_pid = v["capabilities"]["goog:processID"]
            .as_u64()
            .map(|p| p as u32);
        Ok(())
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session
    }

    /// The (canonical) download folder.
    pub fn download_dir(&self) -> &Path {
        &self.download_dir
    }

    /// chromedriver's process id and those of all its descendants (Chromium and its helpers),
    /// from `/proc`; to check that nothing outlives the browser.
    pub fn process_ids(&self) -> Vec<u32> {
        let mut parent: Vec<(u32, u32)> = Vec::new();
        if let Ok(rd) = std::fs::read_dir("/proc") {
            for e in rd.filter_map(|e| e.ok()) {
                let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                    continue;
                };
                let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                    continue;
                };
                if let Some((_, rest)) = stat.rsplit_once(')') {
                    if let Some(ppid) = rest.split_whitespace().nth(1).and_then(|x| x.parse().ok())
                    {
                        parent.push((pid, ppid));
                    }
                }
            }
        }
        let mut out = vec![self.driver.id()];
        let mut i = 0;
        while i < out.len() {
            let p = out[i];
            out.extend(parent.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
            i += 1;
        }
        if let Some(c) = self.chrome_pid {
            if !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    /// The last lines of chromedriver's own output.
    pub fn driver_log(&self) -> String {
        tail(&self.driver_log, 40)
    }

    /// Any session command: `method` ("GET", "POST", "DELETE") on `/session/{id}{path}`
    /// (`path` starts with '/', or is empty for the session itself), returning the W3C `value`.
    pub fn command(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, WdError> {
        self.command_timeout(method, path, body, self.timeout)
    }

    fn command_timeout(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        timeout: Duration,
    ) -> Result<Value, WdError> {
        let full = format!("/session/{}{path}", self.session);
        let label = format!("/session/{{id}}{path}");
        let body = match (method, body) {
            ("POST", None) => Some(json!({})),
            (_, b) => b,
        };
        wd(self.port, method, &full, body.as_ref(), timeout, &label)
    }

    /// [`command`](Self::command), panicking with its message.
    fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.command(method, path, body)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    // ------------------------------------------------------------------ navigation

    /// Navigate to `url` and wait for the page load.
    pub fn goto(&self, url: &str) {
        self.command_timeout(
            "POST",
            "/url",
            Some(json!({ "url": url })),
            Duration::from_secs(70),
        )
        .unwrap_or_else(|e| panic!("goto {url}: {e}"));
    }

    /// Navigate to a local file (`file://` URL of its absolute path).
    pub fn goto_file(&self, path: &Path) {
        self.goto(&file_url(path));
    }

    /// The current URL.
    pub fn url(&self) -> String {
        self.cmd("GET", "/url", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Set the async-script timeout (30 s by default).
    pub fn set_script_timeout(&mut self, t: Duration) {
        self.cmd(
            "POST",
            "/timeouts",
            Some(json!({ "script": t.as_millis() as u64 })),
        );
        self.script_timeout = t;
    }

    // ------------------------------------------------------------------ elements

    /// The first element matching the CSS selector, if any.
    pub fn try_find(&self, css: &str) -> Result<Option<Element>, WdError> {
        match self.command(
            "POST",
            "/element",
            Some(json!({ "using": "css selector", "value": css })),
        ) {
            Ok(v) => Ok(Element::from_value(&v)),
            Err(e) if e.error.as_deref() == Some("no such element") => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The first element matching the CSS selector; panics if there is none.
    pub fn find(&self, css: &str) -> Element {
        match self.try_find(css) {
            Ok(Some(e)) => e,
            Ok(None) => panic!("find: no element matches {css:?} on {}", self.url()),
            Err(e) => panic!("find {css:?}: {e}"),
        }
    }

    /// Every element matching the CSS selector, in document order.
    pub fn find_all(&self, css: &str) -> Vec<Element> {
        let v = self
            .command(
                "POST",
                "/elements",
                Some(json!({ "using": "css selector", "value": css })),
            )
            .unwrap_or_else(|e| panic!("find_all {css:?}: {e}"));
        v.as_array()
            .map(|a| a.iter().filter_map(Element::from_value).collect())
            .unwrap_or_default()
    }

    /// The first element matching `css`, polling until it appears; panics after `timeout`.
    pub fn wait_for(&self, css: &str, timeout: Duration) -> Element {
        let t0 = Instant::now();
        loop {
            match self.try_find(css) {
                Ok(Some(e)) => return e,
                Ok(None) => {}
                Err(e) => panic!("wait_for {css:?}: {e}"),
            }
            if t0.elapsed() >= timeout {
                panic!("wait_for: no element matches {css:?} after {timeout:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Click an element (WebDriver's element click: scrolled into view, at its centre;
    /// fails if another element would receive the click).
    pub fn click(&self, el: &Element) {
        self.command("POST", &format!("/element/{}/click", el.0), None)
            .unwrap_or_else(|e| panic!("click: {e}"));
    }

    /// Type `text` into an element (focusing it). WebDriver key codes ([`keys`]) may appear.
    pub fn send_keys(&self, el: &Element, text: &str) {
        self.command(
            "POST",
            &format!("/element/{}/value", el.0),
            Some(json!({ "text": text })),
        )
        .unwrap_or_else(|e| panic!("send_keys {text:?}: {e}"));
    }

    /// Clear an input or textarea.
    pub fn clear(&self, el: &Element) {
        self.cmd("POST", &format!("/element/{}/clear", el.0), None);
    }

    /// The rendered text of an element.
    pub fn text(&self, el: &Element) -> String {
        self.cmd("GET", &format!("/element/{}/text", el.0), None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// An attribute of an element (`None` when absent).
    pub fn attribute(&self, el: &Element, name: &str) -> Option<String> {
        let v = self.cmd("GET", &format!("/element/{}/attribute/{name}", el.0), None);
        match v {
            Value::Null => None,
            Value::String(s) => Some(s),
            other => Some(other.to_string()),
        }
    }

    /// A DOM property of an element (`value`, `checked`, `currentTime`, ...).
    pub fn property(&self, el: &Element, name: &str) -> Value {
        self.cmd("GET", &format!("/element/{}/property/{name}", el.0), None)
    }

    /// Whether an element is displayed (WebDriver's heuristic).
    pub fn displayed(&self, el: &Element) -> bool {
        self.cmd("GET", &format!("/element/{}/displayed", el.0), None) == json!(true)
    }

    /// An element's box relative to the viewport, after scrolling it into view if needed.
    pub fn rect(&self, el: &Element) -> Rect {
        let v = self.execute(
            "const e = arguments[0]; e.scrollIntoView({block: 'nearest', inline: 'nearest'});\
             const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height];",
            vec![el.json()],
        );
        let f = |i: usize| v[i].as_f64().unwrap_or_else(|| panic!("rect: bad {v}"));
        Rect {
            x: f(0),
            y: f(1),
            width: f(2),
            height: f(3),
        }
    }

    // ------------------------------------------------------------------ scripts

    /// Run a synchronous script (a function body; `arguments[i]` are `args`) and return its
    /// result. Elements in `args` go as [`Element::json`].
    pub fn execute(&self, script: &str, args: Vec<Value>) -> Value {
        self.command(
            "POST",
            "/execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
        .unwrap_or_else(|e| panic!("execute {}: {e}", script_head(script)))
    }

    /// Run an asynchronous script: it gets a callback as its last argument
    /// (`arguments[arguments.length - 1]`) and its result is what it passes to it. A rejected
    /// callback or the script timeout (30 s, [`set_script_timeout`](Self::set_script_timeout))
    /// panics.
    pub fn execute_async(&self, script: &str, args: Vec<Value>) -> Value {
        self.try_execute_async(script, args)
            .unwrap_or_else(|e| panic!("execute_async {}: {e}", script_head(script)))
    }

    /// [`execute_async`](Self::execute_async) returning the error.
    pub fn try_execute_async(&self, script: &str, args: Vec<Value>) -> Result<Value, WdError> {
        self.command_timeout(
            "POST",
            "/execute/async",
            Some(json!({ "script": script, "args": args })),
            self.script_timeout + Duration::from_secs(10),
        )
    }

    /// Poll a script (a function body) every 50 ms until it returns `true`; `false` after
    /// `timeout`. A script error panics.
    pub fn poll_until(&self, script: &str, timeout: Duration) -> bool {
        let t0 = Instant::now();
        loop {
            if self.execute(script, vec![]) == json!(true) {
                return true;
            }
            if t0.elapsed() >= timeout {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// [`poll_until`](Self::poll_until), panicking on timeout (with the browser's JS errors).
    pub fn wait_until(&self, script: &str, timeout: Duration) {
        if !self.poll_until(script, timeout) {
            let errs: Vec<String> = self.js_errors().iter().map(|e| e.message.clone()).collect();
            panic!(
                "wait_until: {} still not true after {timeout:?}; JS errors: {errs:?}",
                script_head(script)
            );
        }
    }

    // ------------------------------------------------------------------ input actions

    /// Perform W3C actions (`actions` is the `actions` array of `POST /actions`), then
    /// release every input.
    pub fn actions(&self, actions: Value) {
        self.command("POST", "/actions", Some(json!({ "actions": actions })))
            .unwrap_or_else(|e| panic!("actions {actions}: {e}"));
        self.command("DELETE", "/actions", None)
            .unwrap_or_else(|e| panic!("release actions: {e}"));
    }

    /// Press and release one key on the focused element (or the page's body): a DOM key name
    /// ("ArrowLeft", "Space", "Escape", "Enter"; see [`keys::named`]), a [`keys`] code, or one
    /// character.
    pub fn press(&self, key: &str) {
        self.press_chord(&[key]);
    }

    /// Hold every key but the last, press the last, release all in reverse: e.g.
    /// `&["Shift", "ArrowRight"]`, `&["Control", "a"]`.
    pub fn press_chord(&self, chord: &[&str]) {
        let ks: Vec<String> = chord.iter().map(|k| keys::resolve(k)).collect();
        let mut seq = Vec::new();
        for k in &ks {
            seq.push(json!({ "type": "keyDown", "value": k }));
        }
        for k in ks.iter().rev() {
            seq.push(json!({ "type": "keyUp", "value": k }));
        }
        self.actions(json!([{ "type": "key", "id": "keyboard", "actions": seq }]));
    }

    /// Type a string with key actions (no element focus change), one keyDown/keyUp per char.
    pub fn type_text(&self, text: &str) {
        let mut seq = Vec::new();
        for c in text.chars() {
            seq.push(json!({ "type": "keyDown", "value": c.to_string() }));
            seq.push(json!({ "type": "keyUp", "value": c.to_string() }));
        }
        self.actions(json!([{ "type": "key", "id": "keyboard", "actions": seq }]));
    }

    /// Left-click with the mouse at (`x`, `y`) CSS pixels from the element's top-left corner
    /// or centre (see [`Origin`]); the element is scrolled into view first.
    pub fn click_at(&self, el: &Element, origin: Origin, x: f64, y: f64) {
        let mv = match origin {
            Origin::Center => json!({
                "type": "pointerMove", "duration": 0,
                "origin": el.json(), "x": x.round() as i64, "y": y.round() as i64,
            }),
            Origin::TopLeft => {
                let r = self.rect(el);
                json!({
                    "type": "pointerMove", "duration": 0, "origin": "viewport",
                    "x": (r.x + x).round() as i64, "y": (r.y + y).round() as i64,
                })
            }
        };
        self.actions(json!([{
            "type": "pointer", "id": "mouse", "parameters": { "pointerType": "mouse" },
            "actions": [
                mv,
                { "type": "pointerDown", "button": 0 },
                { "type": "pointerUp", "button": 0 },
            ]
        }]));
    }

    /// Click at a fraction of the element's box from its top-left corner: (0.5, 0.5) is the
    /// centre, (0.25, 0.5) a quarter along a horizontal timeline. The fraction is clamped so
    /// the point stays inside the box.
    pub fn click_at_fraction(&self, el: &Element, fx: f64, fy: f64) {
        let r = self.rect(el);
        let x = (fx * r.width).clamp(0.0, (r.width - 1.0).max(0.0));
        let y = (fy * r.height).clamp(0.0, (r.height - 1.0).max(0.0));
        self.click_at(el, Origin::TopLeft, x, y);
    }

    // ------------------------------------------------------------------ output

    /// A PNG of the viewport.
    pub fn screenshot(&self) -> Vec<u8> {
        decode_png_value(&self.cmd("GET", "/screenshot", None), "screenshot")
    }

    /// A PNG of one element (cropped from the composited page).
    pub fn element_screenshot(&self, el: &Element) -> Vec<u8> {
        let v = self
            .command("GET", &format!("/element/{}/screenshot", el.0), None)
            .unwrap_or_else(|e| panic!("element screenshot: {e}"));
        decode_png_value(&v, "element screenshot")
    }

    /// Browser log entries since the last call (console messages, uncaught errors, failed
    /// loads); empty if this chromedriver has no log endpoint.
    pub fn logs(&self) -> Vec<LogEntry> {
        match self.command("POST", "/se/log", Some(json!({ "type": "browser" }))) {
            Ok(v) => v
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|e| LogEntry {
                            level: e["level"].as_str().unwrap_or("").to_string(),
                            source: e["source"].as_str().unwrap_or("").to_string(),
                            message: e["message"].as_str().unwrap_or("").to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            Err(e) if e.status == 404 || e.error.as_deref() == Some("unknown command") => {
                Vec::new()
            }
            Err(e) => panic!("read the browser log: {e}"),
        }
    }

    /// The SEVERE entries of [`logs`](Self::logs) (uncaught exceptions, `console.error`,
    /// failed resource loads) since the last call.
    pub fn js_errors(&self) -> Vec<LogEntry> {
        self.logs()
            .into_iter()
            .filter(|e| e.level == "SEVERE")
            .collect()
    }

    /// A Chrome DevTools Protocol command through chromedriver (`goog/cdp/execute`), e.g.
    /// `cdp("Browser.setDownloadBehavior", json!({"behavior": "allow", "downloadPath": ...}))`.
    pub fn cdp(&self, cmd: &str, params: Value) -> Value {
        self.command(
            "POST",
            "/goog/cdp/execute",
            Some(json!({ "cmd": cmd, "params": params })),
        )
        .unwrap_or_else(|e| panic!("CDP {cmd}: {e}"))
    }

    /// Wait until `name` is complete in the download folder (present, no `.crdownload`
    /// sibling, size stable); its path, or a panic listing the folder after `timeout`.
    pub fn wait_for_download(&self, name: &str, timeout: Duration) -> PathBuf {
        let p = self.download_dir.join(name);
        let partial = self.download_dir.join(format!("{name}.crdownload"));
        let t0 = Instant::now();
        let mut last_size = None;
        loop {
            if p.is_file() && !partial.exists() {
                let size = std::fs::metadata(&p).map(|m| m.len()).ok();
                if size.is_some() && size == last_size {
                    return p;
                }
                last_size = size;
            }
            if t0.elapsed() >= timeout {
                let names: Vec<String> = std::fs::read_dir(&self.download_dir)
                    .map(|r| {
                        r.filter_map(|e| e.ok())
                            .map(|e| e.file_name().to_string_lossy().into_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                panic!(
                    "download {name:?} not complete in {:?} after {timeout:?}; folder holds {names:?}",
                    self.download_dir
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Chromium's helpers (zygote, renderer, GPU) exit a moment after it: wait for all.
        let family = self.process_ids();
        if !self.session.is_empty() {
            if let Err(e) = self.command_timeout("DELETE", "", None, Duration::from_secs(15)) {
                eprintln!("webdriver: deleting the session failed: {e}");
            }
        }
        // Chromium normally exits with its session; make sure it did.
        if let Some(pid) = self.chrome_pid {
            let alive = || pid_alive(pid);
            let t0 = Instant::now();
            while alive() && t0.elapsed() < Duration::from_secs(3) {
                std::thread::sleep(Duration::from_millis(50));
            }
            if alive() {
                let _ = super::send_signal("KILL", &pid.to_string());
            }
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let t0 = Instant::now();
        while family.iter().any(|&p| pid_alive(p)) && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        for &p in family.iter().filter(|&&p| pid_alive(p)) {
            let _ = super::send_signal("KILL", &p.to_string());
        }
        let t0 = Instant::now();
        while family.iter().any(|&p| pid_alive(p)) && t0.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Whether a process id is alive (not gone, not a zombie).
pub fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists() && !is_zombie(pid)
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
                .unwrap_or(false)
        })
        .unwrap_or(true)
}

fn script_head(script: &str) -> String {
    let one: String = script.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 120 {
        format!("{:?}...", one.chars().take(120).collect::<String>())
    } else {
        format!("{one:?}")
    }
}

fn decode_png_value(v: &Value, what: &str) -> Vec<u8> {
    let s = v.as_str().unwrap_or_else(|| {
        panic!(
            "{what}: expected a base64 string, got {}",
            shorten(&v.to_string())
        )
    });
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .unwrap_or_else(|e| panic!("{what}: bad base64 ({e})"))
}

/// The `file://` URL of a path (made absolute; bytes outside the URL-safe set escaped).
pub fn file_url(path: &Path) -> String {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap().join(path)
    };
    let mut s = String::from("file://");
    for b in abs.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}
