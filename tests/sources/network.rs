//! URL sources against servers users really have (issue 22):
//!
//! - a server that ignores range requests (Python's `http.server` itself, and a `tiny_http`
//!   one that answers every request with the whole file): the file is downloaded once into an
//!   unnamed temporary file, bounded by `VIDPREP_DOWNLOAD_LIMIT`, and read from there, giving
//!   the same bytes as the local file; the sidecar names the URL; nothing is left in the
//!   temporary folder, after success, a refused download, or Ctrl-C;
//! - a file that changes on the server while vidprep reads it in range requests (its ETag,
//!   Last-Modified or size): the command fails naming the URL and what changed, whichever of
//!   its requests first sees the new version, and writes nothing.
//! - a server that sends its body gzip-encoded whatever it was asked (a bomb, or a real video):
//!   refused at once naming the URL and the encoding, since vidprep asks for the bytes as they
//!   are;
//! - a server that drips its body: the command fails at the minimum transfer rate, naming the
//!   URL, the rate seen and the settings, instead of holding on for the deadline.
//!
//! Oracles: the output bytes of the same command on the local file, ffprobe, the server's
//! request counts, the file system.

use crate::common;
use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::cmd::p;
use common::oracle;
use common::synth::SynthVideo;
use serde_json::Value;
use support::http::{Server, Version};
use support::{sidecar, vidprep};

fn mp4(frames: u32, gop: u32) -> Vec<u8> {
    std::fs::read(
        SynthVideo::new(320, 240)
            .frames(frames)
            .gop(gop)
            .cached()
            .path,
    )
    .unwrap()
}

/// Names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `vidprep args` with `TMPDIR=tmp` (and `env`), in `dir`.
fn run(dir: &Path, tmp: &Path, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut cmd = vidprep();
    cmd.current_dir(dir).env("TMPDIR", tmp);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The same cut and frames from `url` as from `file` (same bytes), and a sidecar naming the
/// URL; the temporary folder is empty afterwards.
fn reads_like_the_file(url: &str, file: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    for (src, out) in [(url.to_string(), "url.mp4"), (p(file), "file.mp4")] {
        let o = run(
            d,
            &tmp,
            &[],
            &[
                "cut",
                &src,
                "--start",
                "13",
                "--end",
                "61",
                "--preset",
                "ultrafast",
                "-o",
                out,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert!(
        std::fs::read(d.join("url.mp4")).unwrap() == std::fs::read(d.join("file.mp4")).unwrap(),
        "the clip from the URL differs from the clip from the file"
    );
    assert_eq!(oracle::count_frames(&d.join("url.mp4")), 48);
    let (su, sf) = (sidecar(&d.join("url.mp4")), sidecar(&d.join("file.mp4")));
    assert_eq!(su["sources"][0]["path"], url);
    assert_eq!(
        su["sources"][0]["size_bytes"],
        sf["sources"][0]["size_bytes"]
    );
    assert_eq!(su["frames"], sf["frames"]);
    for (src, out) in [(url.to_string(), "f_url"), (p(file), "f_file")] {
        let o = run(
            d,
            &tmp,
            &[],
            &[
                "export",
                "frames",
                &src,
                "--count",
                "6",
                "--workers",
                "2",
                "--out-dir",
                out,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let images: Vec<String> = names(&d.join("f_file"))
        .into_iter()
        .filter(|n| n.ends_with(".jpg"))
        .collect();
    assert_eq!(images.len(), 6);
    for n in &images {
        assert!(
            std::fs::read(d.join("f_url").join(n)).unwrap()
                == std::fs::read(d.join("f_file").join(n)).unwrap(),
            "{n} differs"
        );
    }
    assert!(names(&tmp).is_empty(), "left in TMPDIR: {:?}", names(&tmp));
}

#[test]
fn a_server_without_range_requests_is_downloaded_once_and_read_like_the_file() {
    let bytes = mp4(90, 30);
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &bytes).unwrap();
    let server = Server::file(
        "/v.mp4",
        vec![Version::new(bytes).last_modified("Tue, 01 Dec 2026 10:00:00 GMT")],
        false,
    );
    reads_like_the_file(&server.url("/v.mp4"), file.path());
    // One download per command: the cut and the frames export (with two workers) made one
    // request each.
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
}

#[test]
fn pythons_http_server_is_a_source() {
    if Command::new("python3").arg("--version").output().is_err() {
        crate::common::skip::skip(
            crate::common::skip::Needs::Tools,
            "python3 is not installed",
        );
        return;
    }
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("v.mp4"), mp4(90, 30)).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new("python3")
        .args([
            "-m",
            "http.server",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .current_dir(root.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let began = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "http.server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    reads_like_the_file(
        &format!("http://127.0.0.1:{port}/v.mp4"),
        &root.path().join("v.mp4"),
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_download_over_the_limit_is_refused_naming_the_url_and_the_limit() {
    let bytes = mp4(90, 30);
    let len = bytes.len();
    let server = Server::file("/v.mp4", vec![Version::new(bytes)], false);
    let url = server.url("/v.mp4");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let o = run(
        d,
        &tmp,
        &[("VIDPREP_DOWNLOAD_LIMIT", "10K")],
        &["cut", &url, "--end", "10", "-o", "o.mp4"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for s in [
        url.as_str(),
        "does not accept range requests",
        &format!("({len} bytes)"),
        "the download limit is 10.0 KiB (10240 bytes)",
        "VIDPREP_DOWNLOAD_LIMIT",
    ] {
        assert!(err.contains(s), "expected {s:?} in: {err}");
    }
    assert_eq!(names(d), ["tmp"], "nothing written");
    assert!(names(&tmp).is_empty());
    // A limit that is not a size is a usage error naming the variable.
    let o = run(
        d,
        &tmp,
        &[("VIDPREP_DOWNLOAD_LIMIT", "lots")],
        &["probe", &url],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("VIDPREP_DOWNLOAD_LIMIT=\"lots\" is not a size"),
        "{err}"
    );
}

#[test]
fn ctrl_c_during_a_download_leaves_nothing() {
    // A server without ranges that sends 4 MB slowly (64 KiB every 100 ms: 6 s).
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let port = server.server_addr().to_ip().unwrap().port();
    std::thread::spawn(move || {
        for rq in server.incoming_requests() {
            std::thread::spawn(move || {
                struct Slow(usize);
                impl std::io::Read for Slow {
                    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                        if self.0 == 0 {
                            return Ok(0);
                        }
                        std::thread::sleep(Duration::from_millis(100));
                        let n = buf.len().min(self.0).min(64 << 10);
                        buf[..n].fill(0);
                        self.0 -= n;
                        Ok(n)
                    }
                }
                let len = 4 << 20;
                let _ = rq.respond(
                    tiny_http::Response::new(
                        tiny_http::StatusCode(200),
                        vec![],
                        Slow(len),
                        Some(len),
                        None,
                    )
                    .with_chunked_threshold(usize::MAX),
                );
            });
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    let mut child = Command::new(bin)
        .current_dir(d)
        .env("TMPDIR", &tmp)
        .args([
            "cut",
            &format!("http://127.0.0.1:{port}/v.mp4"),
            "-o",
            "o.mp4",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The download is under way (within 5 s), in an unnamed file in TMPDIR.
    let pid = child.id();
    let in_tmp = || -> Vec<String> {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|fds| {
                fds.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                    .map(|l| l.display().to_string())
                    .filter(|l| l.starts_with(&p(&tmp)))
                    .collect()
            })
            .unwrap_or_default()
    };
    let began = Instant::now();
    let mut open = in_tmp();
    while open.is_empty() && began.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
        open = in_tmp();
    }
    assert_eq!(open.len(), 1, "open files in TMPDIR: {open:?}");
    assert!(open[0].ends_with("(deleted)"), "{open:?}");
    assert!(names(&tmp).is_empty(), "{:?}", names(&tmp));
    let began = Instant::now();
    // The shell's kill builtin: a minimal Debian 11 root has no /bin/kill (procps).
    let ok = Command::new("sh")
        .args(["-c", "kill -INT \"$1\"", "sh", &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let status = child.wait().unwrap();
    assert!(
        began.elapsed() < Duration::from_secs(8),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(status.code(), Some(130));
    assert_eq!(names(d), ["tmp"]);
    assert!(names(&tmp).is_empty());
}

/// `cut` of a URL whose file is `a` until request `k` (0-based) and `b` from then on.
fn cut_while_changing(k: usize, a: Version, b: Version) -> (std::process::Output, String) {
    let server = Server::file("/v.mp4", vec![a, b.from_request(k)], true);
    let url = server.url("/v.mp4");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = run(
        d,
        d,
        &[],
        &[
            "cut",
            &url,
            "--start",
            "10",
            "--end",
            "70",
            "--preset",
            "ultrafast",
            "-o",
            "o.mp4",
        ],
    );
    if !o.status.success() {
        assert_eq!(names(d), Vec::<String>::new(), "k={k}: nothing written");
    }
    (o, url)
}

#[test]
fn a_file_changing_between_range_reads_fails_naming_what_changed() {
    let (a, b) = (mp4(150, 25), mp4(150, 50));
    // The unchanged run: how many requests a cut makes.
    let server = Server::file("/v.mp4", vec![Version::new(a.clone()).etag("\"a\"")], true);
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        dir.path(),
        dir.path(),
        &[],
        &[
            "cut",
            &server.url("/v.mp4"),
            "--start",
            "10",
            "--end",
            "70",
            "--preset",
            "ultrafast",
            "-o",
            "o.mp4",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let total = server.requests.load(Ordering::SeqCst);
    eprintln!("an unchanged cut made {total} requests");
    assert!(total >= 3, "{total}");
    // The file changes at every request after the first, the validator checks and FFmpeg's own
    // range reads alike, up to the last one (the check once the reads are done): every time
    // the cut fails, says the file changed and writes nothing.
    for k in 1..total {
        let (o, url) = cut_while_changing(
            k,
            Version::new(a.clone()).etag("\"a\""),
            Version::new(b.clone()).etag("\"b\""),
        );
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "k={k}: {err}");
        for s in [
            url.as_str(),
            "the file changed while vidprep read it",
            "its ETag was \"a\" and is now \"b\"",
            "none were written",
        ] {
            assert!(err.contains(s), "k={k}: expected {s:?} in: {err}");
        }
    }
    // Only Last-Modified tells.
    let (o, _) = cut_while_changing(
        total - 1,
        Version::new(a.clone()).last_modified("Tue, 01 Dec 2026 10:00:00 GMT"),
        Version::new(a.clone()).last_modified("Tue, 01 Dec 2026 10:00:05 GMT"),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("its Last-Modified was Tue, 01 Dec 2026 10:00:00 GMT and is now Tue, 01 Dec 2026 10:00:05 GMT"),
        "{err}"
    );
    // No validators at all: the size still tells.
    let (o, _) = cut_while_changing(1, Version::new(a.clone()), Version::new(b.clone()));
    let err = stderr(&o);
    if a.len() != b.len() {
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("its size was"), "{err}");
    }
    // The same validators throughout: no complaint.
    let (o, _) = cut_while_changing(
        1,
        Version::new(a.clone()).etag("\"a\""),
        Version::new(a).etag("\"a\""),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The manifest door of a server without range requests: `vidprep run` over items whose
/// source is the URL writes the same clip and frames, byte for byte, as the same items over
/// the local file, one download per item, nothing left in TMPDIR, and the sidecar names the URL.
#[test]
fn a_manifest_item_from_a_server_without_range_requests_is_the_local_items_bytes() {
    let bytes = mp4(90, 30);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(d.join("v.mp4"), &bytes).unwrap();
    let server = Server::file("/v.mp4", vec![Version::new(bytes)], false);
    let url = server.url("/v.mp4");
    let exports = r#"[{"kind": "clip", "preset": "ultrafast"}, {"kind": "frames", "name": "frames", "count": 5}]"#;
    for (name, src) in [("url", url.as_str()), ("file", "v.mp4")] {
        let lines: Vec<String> = (0..2)
            .map(|i| {
                format!(
                    r#"{{"id": "i{i}", "source": "{src}", "start": {}, "end": {}, "exports": {exports}}}"#,
                    10 + 20 * i,
                    40 + 20 * i
                )
            })
            .collect();
        std::fs::write(d.join(format!("{name}.jsonl")), lines.join("\n") + "\n").unwrap();
        let o = run(
            d,
            &tmp,
            &[],
            &[
                "run",
                &format!("{name}.jsonl"),
                "--jobs",
                "2",
                "--out-dir",
                name,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(
        server.requests.load(Ordering::SeqCst),
        2,
        "one download per item"
    );
    for item in ["i0", "i1"] {
        let (u, f) = (d.join("url").join(item), d.join("file").join(item));
        let files = names(&f);
        assert_eq!(
            names(&u),
            files,
            "{item}: the two runs wrote different files"
        );
        for n in &files {
            if n.ends_with(".json") {
                continue;
            }
            if f.join(n).is_dir() {
                for m in names(&f.join(n)) {
                    if !m.ends_with(".json") {
                        assert!(
                            std::fs::read(u.join(n).join(&m)).unwrap()
                                == std::fs::read(f.join(n).join(&m)).unwrap(),
                            "{item}/{n}/{m} differs between the URL and the file"
                        );
                    }
                }
            } else {
                assert!(
                    std::fs::read(u.join(n)).unwrap() == std::fs::read(f.join(n)).unwrap(),
                    "{item}/{n} differs between the URL and the file"
                );
            }
        }
        let clip = files.iter().find(|n| n.ends_with(".mp4")).expect("a clip");
        assert_eq!(oracle::count_frames(&u.join(clip)), 30);
        assert_eq!(sidecar(&u.join(clip))["sources"][0]["path"], url.as_str());
    }
    assert!(names(&tmp).is_empty(), "left in TMPDIR: {:?}", names(&tmp));
}

/// The JPEG files of a frames export folder, in name order.
fn jpgs(dir: &Path) -> Vec<Vec<u8>> {
    names(dir)
        .iter()
        .filter(|n| n.ends_with(".jpg"))
        .map(|n| std::fs::read(dir.join(n)).unwrap())
        .collect()
}

/// `--resume` over a URL source asks the server whether the file is still the version the
/// item was made from (its ETag): unchanged, the item is skipped; rewritten, it is made
/// again from the new file. With and without range requests.
#[test]
fn resume_redoes_an_item_whose_url_changed() {
    for ranges in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let served = d.join("served");
        std::fs::create_dir(&served).unwrap();
        let tmp = d.join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        std::fs::write(served.join("v.mp4"), mp4(60, 30)).unwrap();
        let server = Server::folder(&served, ranges);
        let line = format!(
            r#"{{"id": "a", "source": "{}", "exports": [{{"kind": "frames", "name": "frames", "count": 3}}]}}"#,
            server.url("/v.mp4")
        );
        std::fs::write(d.join("m.jsonl"), line + "\n").unwrap();
        let status = |o: &std::process::Output| -> String {
            assert!(o.status.success(), "{}", stderr(o));
            let report = std::fs::read_to_string(d.join("out/report.jsonl")).unwrap();
            let line: Value = report
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .rfind(|v| v["id"] == "a")
                .expect("a report line for item a");
            line["status"].as_str().unwrap().to_string()
        };
        let args = ["run", "m.jsonl", "--out-dir", "out", "--resume"];
        assert_eq!(status(&run(d, &tmp, &[], &args)), "ok");
        let item: Value =
            serde_json::from_slice(&std::fs::read(d.join("out/a/item.json")).unwrap()).unwrap();
        assert!(
            item["remote"][0]["etag"].is_string(),
            "item.json records the URL's ETag: {item}"
        );
        assert_eq!(
            status(&run(d, &tmp, &[], &args)),
            "skipped",
            "ranges {ranges}: an unchanged URL is not redone"
        );
        let first = jpgs(&d.join("out/a/frames"));
        // The server's file is rewritten: 90 frames, another picture at the sampled frames.
        std::fs::write(served.join("v.mp4"), mp4(90, 30)).unwrap();
        assert_eq!(
            status(&run(d, &tmp, &[], &args)),
            "ok",
            "ranges {ranges}: a changed URL is made again"
        );
        let again = jpgs(&d.join("out/a/frames"));
        assert_eq!(again.len(), 3);
        assert!(
            first != again,
            "ranges {ranges}: the frames are the new file's"
        );
        assert!(names(&tmp).is_empty(), "left in TMPDIR: {:?}", names(&tmp));
    }
}

/// A server on 127.0.0.1 answering each request (numbered from 0) with `answer`, on a thread
/// of its own; its port.
fn serve(
    answer: impl Fn(tiny_http::Request, usize) + Send + Sync + 'static,
) -> (u16, std::sync::Arc<tiny_http::Server>) {
    let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let port = server.server_addr().to_ip().unwrap().port();
    let answer = std::sync::Arc::new(answer);
    let s = server.clone();
    std::thread::spawn(move || {
        for (n, rq) in s.incoming_requests().enumerate() {
            let answer = answer.clone();
            std::thread::spawn(move || answer(rq, n));
        }
    });
    (port, server)
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).unwrap()
}

/// The value of `name` in `rq`'s headers.
fn request_header(rq: &tiny_http::Request, name: &str) -> Option<String> {
    rq.headers()
        .iter()
        .find(|h| h.field.to_string().eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str().to_string())
}

/// `bytes` gzipped by the `gzip` tool.
fn gzipped(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut child = Command::new("gzip")
        .args(["-c", "-9"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    out.stdout
}

/// A gzip bomb (64 MiB of zeros, 64 KB gzipped) and a gzipped real video, each sent with
/// `Content-Encoding: gzip` to every request whatever it asked (as a `206` of the whole body,
/// and as a `200` from a server without ranges, under `VIDPREP_DOWNLOAD_LIMIT=10M`): `probe`
/// and `cut` fail at once naming the URL and the encoding, read nothing more, and leave
/// nothing (FFmpeg's http unpacked such a body without bound, and read the gzipped video as
/// the video). vidprep asked for `Accept-Encoding: identity`.
#[test]
fn a_gzip_encoded_body_is_refused_before_it_is_unpacked() {
    let bomb = gzipped(&vec![0u8; 64 << 20]);
    assert!(bomb.len() < 200_000, "{}", bomb.len());
    let video = gzipped(&mp4(30, 10));
    for (what, body) in [("bomb", bomb), ("video", video)] {
        for ranges in [true, false] {
            let body = std::sync::Arc::new(body.clone());
            let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let (b, a) = (body.clone(), asked.clone());
            let (port, _server) = serve(move |rq, _| {
                a.lock()
                    .unwrap()
                    .push(request_header(&rq, "Accept-Encoding"));
                let len = b.len();
                let mut r = tiny_http::Response::from_data(b.to_vec())
                    .with_chunked_threshold(usize::MAX)
                    .with_header(header("Content-Encoding", "gzip"))
                    .with_header(header("Content-Type", "video/mp4"));
                if ranges {
                    r = r
                        .with_status_code(206)
                        .with_header(header("Accept-Ranges", "bytes"))
                        .with_header(header(
                            "Content-Range",
                            &format!("bytes 0-{}/{len}", len - 1),
                        ));
                }
                let _ = rq.respond(r);
            });
            let url = format!("http://127.0.0.1:{port}/v.mp4");
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            let tmp = d.join("tmp");
            std::fs::create_dir(&tmp).unwrap();
            for args in [
                vec!["probe", &url],
                vec!["cut", &url, "--end", "1", "-o", "o.mp4"],
            ] {
                let t0 = Instant::now();
                let o = run(d, &tmp, &[("VIDPREP_DOWNLOAD_LIMIT", "10M")], &args);
                let err = stderr(&o);
                let case = format!("{what}, ranges {ranges}, {}", args[0]);
                assert_eq!(o.status.code(), Some(1), "{case}: {err}");
                for s in [
                    url.as_str(),
                    "Content-Encoding: gzip",
                    "Accept-Encoding: identity",
                    "serve the file without compression",
                ] {
                    assert!(err.contains(s), "{case}: {s:?} not in: {err}");
                }
                assert!(t0.elapsed() < Duration::from_secs(10), "{case}");
                assert_eq!(names(d), ["tmp"], "{case}");
                assert!(names(&tmp).is_empty(), "{case}");
            }
            // One request per command, each asking for the bytes as they are.
            let asked = asked.lock().unwrap().clone();
            assert_eq!(
                asked,
                vec![Some("identity".to_string()); 2],
                "{what}, ranges {ranges}"
            );
        }
    }
}

/// A file server on a plain socket (each write flushed at once, unlike `tiny_http`'s buffered
/// bodies) that serves `bytes`, with range requests or without, answering the first contact's
/// one-byte range at once but sending every other body one byte per `every`. Its port.
fn dripping_server(bytes: Vec<u8>, ranges: bool, every: Duration) -> u16 {
    use std::io::{BufRead as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let bytes = std::sync::Arc::new(bytes);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let bytes = bytes.clone();
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut range = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        if k.trim().eq_ignore_ascii_case("range") {
                            range = Some(v.trim().to_string());
                        }
                    }
                }
                let mut out = stream;
                let len = bytes.len();
                if ranges && range.as_deref() == Some("bytes=0-0") {
                    let _ = write!(
                        out,
                        "HTTP/1.1 206 Partial Content\r\nAccept-Ranges: bytes\r\nContent-Range: \
                         bytes 0-0/{len}\r\nContent-Length: 1\r\nConnection: close\r\n\r\n"
                    );
                    let _ = out.write_all(&bytes[..1]);
                    return;
                }
                let start = range
                    .as_deref()
                    .and_then(|r| r.strip_prefix("bytes="))
                    .and_then(|r| r.split('-').next())
                    .and_then(|a| a.parse::<usize>().ok())
                    .filter(|_| ranges)
                    .unwrap_or(0);
                let head = if ranges {
                    format!(
                        "HTTP/1.1 206 Partial Content\r\nAccept-Ranges: bytes\r\nContent-Range: \
                         bytes {start}-{}/{len}\r\n",
                        len - 1
                    )
                } else {
                    "HTTP/1.1 200 OK\r\n".to_string()
                };
                let _ = write!(
                    out,
                    "{head}Content-Length: {}\r\nConnection: close\r\n\r\n",
                    len - start
                );
                for b in &bytes[start..] {
                    std::thread::sleep(every);
                    if out.write_all(&[*b]).and_then(|_| out.flush()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// A server that drips its body (a byte every 200 ms: 5 bytes/s), read by FFmpeg in range
/// requests and downloaded whole from a server without ranges: with a minimum rate of 1 KiB/s
/// over 2 s (`VIDPREP_NETWORK_MIN_RATE`, `VIDPREP_NETWORK_MIN_RATE_SECONDS`) the command fails
/// within seconds, naming the URL, the rate it saw and the settings, and leaves nothing (it
/// held the command for the whole 1-hour deadline). The same settings read a fast server.
#[test]
fn a_dripping_server_fails_at_the_minimum_rate() {
    let bytes = mp4(30, 10);
    for ranges in [true, false] {
        let port = dripping_server(bytes.clone(), ranges, Duration::from_millis(200));
        let url = format!("http://127.0.0.1:{port}/v.mp4");
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let tmp = d.join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let env = [
            ("VIDPREP_NETWORK_MIN_RATE", "1K"),
            ("VIDPREP_NETWORK_MIN_RATE_SECONDS", "2"),
        ];
        let t0 = Instant::now();
        let o = run(d, &tmp, &env, &["cut", &url, "--end", "1", "-o", "o.mp4"]);
        let took = t0.elapsed();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "ranges {ranges}: {err}");
        for s in [
            url.as_str(),
            "below the minimum transfer rate of 1024 bytes/s over 2 s",
            "VIDPREP_NETWORK_MIN_RATE",
            "bytes/s)",
        ] {
            assert!(err.contains(s), "ranges {ranges}: {s:?} not in: {err}");
        }
        assert!(
            took < Duration::from_secs(20),
            "ranges {ranges}: took {took:?}: {err}"
        );
        assert_eq!(names(d), ["tmp"]);
        assert!(names(&tmp).is_empty());
        // The same settings read a server that sends at once.
        let server = Server::file("/v.mp4", vec![Version::new(bytes.clone())], ranges);
        let o = run(d, &tmp, &env, &["probe", &server.url("/v.mp4")]);
        assert!(o.status.success(), "ranges {ranges}: {}", stderr(&o));
    }
}
