//! Hostile names and sizes (issue 22): inputs that are legal but that vidprep must not trust.
//!
//! - File names that are not UTF-8 (legal on Linux): refused up front with exit 2, a message
//!   naming the path and what to do, and nothing written (they used to panic after the whole
//!   encode, or in every item of a run).
//! - Frames larger than the pixel budget (a 16000x16000 MJPEG): refused from the header,
//!   naming the size and the limit, before anything is allocated (it used to need over 16 GB).
//! - Annotation files far larger than the work: only the boxes the video can show are kept.
//!
//! One `#[test]` per case, so a failure names its case. The oracles are the file system (what
//! exists afterwards), ffprobe, and arithmetic on the inputs.

use crate::common;
use crate::support;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::synth::SynthVideo;
use support::{temporaries, vidprep};

/// A name made of `bytes` (not UTF-8 when they are not).
fn raw_name(bytes: &[u8]) -> OsString {
    OsString::from_vec(bytes.to_vec())
}

/// A small video copied to `dir/name`.
fn video_at(dir: &Path, name: &OsString) -> PathBuf {
    let info = SynthVideo::new(160, 120).frames(10).cached();
    let path = dir.join(name);
    std::fs::copy(&info.path, &path).unwrap();
    path
}

/// Every entry of `dir`, as raw names, sorted.
fn entries(dir: &Path) -> Vec<OsString> {
    let mut v: Vec<OsString> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    v.sort();
    v
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn non_utf8_source_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let name = raw_name(b"\xff.mp4");
    video_at(dir.path(), &name);
    let before = entries(dir.path());
    let out = vidprep()
        .current_dir(dir.path())
        .arg("cut")
        .arg(&name)
        .args(["-o", "out.mp4"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(r#""\xFF.mp4""#), "{err}");
    assert!(
        err.contains("not valid UTF-8") && err.contains("rename"),
        "{err}"
    );
    assert_eq!(entries(dir.path()), before, "nothing may be written");
}

#[test]
fn non_utf8_output_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    video_at(dir.path(), &"g.mp4".into());
    let before = entries(dir.path());
    let out = vidprep()
        .current_dir(dir.path())
        .args(["cut", "g.mp4", "-o"])
        .arg(raw_name(b"\xfe.mp4"))
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(r#""\xFE.mp4""#) && err.contains("not valid UTF-8"),
        "{err}"
    );
    assert_eq!(entries(dir.path()), before);
}

#[test]
fn non_utf8_out_dir_of_a_run_is_refused_before_any_item() {
    let dir = tempfile::tempdir().unwrap();
    video_at(dir.path(), &"g.mp4".into());
    std::fs::write(
        dir.path().join("m.jsonl"),
        "{\"id\":\"a\",\"source\":\"g.mp4\",\"exports\":[{\"kind\":\"clip\"}]}\n\
         {\"id\":\"b\",\"source\":\"g.mp4\",\"exports\":[{\"kind\":\"clip\"}]}\n",
    )
    .unwrap();
    let before = entries(dir.path());
    let out = vidprep()
        .current_dir(dir.path())
        .args(["run", "m.jsonl", "--out-dir"])
        .arg(raw_name(b"o\xff"))
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains(r#""o\xFF""#) && err.contains("--out-dir"),
        "{err}"
    );
    assert_eq!(
        entries(dir.path()),
        before,
        "the folder is not even created"
    );
}

#[test]
fn non_utf8_source_of_detect_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let name = raw_name(b"v\xff.mp4");
    video_at(dir.path(), &name);
    let before = entries(dir.path());
    let out = vidprep()
        .current_dir(dir.path())
        .arg("detect")
        .arg(&name)
        .args(["--output", "p.jsonl"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(r#""v\xFF.mp4""#), "{err}");
    assert_eq!(entries(dir.path()), before);
}

/// A valid baseline JPEG of one flat grey `side x side` picture, written by hand (a few bytes
/// per 8x8 block) so that a huge frame costs the test no huge encode: one component, a
/// quantisation table of ones, and Huffman tables of one code each (DC difference 0, end of
/// block), so every block is the two bits `00`.
fn flat_jpeg(side: u16) -> Vec<u8> {
    let mut j = vec![0xFF, 0xD8];
    j.extend([0xFF, 0xDB, 0x00, 67, 0x00]);
    j.extend([1u8; 64]);
    j.extend([0xFF, 0xC0, 0x00, 11, 8]);
    j.extend(side.to_be_bytes());
    j.extend(side.to_be_bytes());
    j.extend([1, 1, 0x11, 0]);
    for class in [0x00u8, 0x10] {
        j.extend([0xFF, 0xC4, 0x00, 20, class, 1]);
        j.extend([0u8; 15]);
        j.push(0);
    }
    j.extend([0xFF, 0xDA, 0x00, 8, 1, 1, 0x00, 0, 63, 0]);
    let blocks = (side as usize).div_ceil(8).pow(2);
    j.extend(vec![0u8; (blocks * 2).div_ceil(8)]);
    j.extend([0xFF, 0xD9]);
    j
}

/// An MJPEG AVI of `frames` flat `side x side` pictures, muxed by the ffmpeg CLI.
fn huge_mjpeg(dir: &Path, side: u16, frames: u32) -> PathBuf {
    let jpeg = dir.join("frame.jpg");
    std::fs::write(&jpeg, flat_jpeg(side)).unwrap();
    let avi = dir.join("huge.avi");
    common::cmd::run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-y",
            "-framerate",
            "25",
            "-loop",
            "1",
            "-i",
            jpeg.to_str().unwrap(),
            "-frames:v",
            &frames.to_string(),
            "-c:v",
            "copy",
            avi.to_str().unwrap(),
        ],
    );
    std::fs::remove_file(&jpeg).unwrap();
    avi
}

#[test]
fn the_hand_made_jpeg_is_what_ffprobe_says() {
    // The oracle for the generator: ffmpeg reads its size and decodes a flat grey picture.
    let dir = tempfile::tempdir().unwrap();
    let avi = huge_mjpeg(dir.path(), 64, 3);
    let v = common::oracle::video_stream(&avi);
    assert_eq!(
        (v["width"].as_u64(), v["height"].as_u64()),
        (Some(64), Some(64))
    );
    assert_eq!(common::oracle::count_frames(&avi), 3);
}

#[test]
fn a_huge_mjpeg_frame_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let avi = huge_mjpeg(dir.path(), 16000, 10);
    let v = common::oracle::video_stream(&avi);
    assert_eq!(
        v["width"].as_u64(),
        Some(16000),
        "the oracle sees 16000x16000"
    );
    for args in [
        vec!["cut", "huge.avi", "-o", "out.mp4"],
        vec![
            "export",
            "frames",
            "huge.avi",
            "--out-dir",
            "fr",
            "--count",
            "4",
        ],
    ] {
        let began = Instant::now();
        let out = vidprep()
            .current_dir(dir.path())
            .args(&args)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("16000x16000")
                && err.contains("256000000 pixels")
                && err.contains("67108864 pixels"),
            "{args:?}: {err}"
        );
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "{args:?}: refused late"
        );
        assert_eq!(
            entries(dir.path()),
            vec![OsString::from("huge.avi")],
            "{args:?}"
        );
        assert!(temporaries(dir.path()).is_empty());
    }
}

#[test]
fn a_small_mjpeg_of_the_same_kind_still_cuts() {
    let dir = tempfile::tempdir().unwrap();
    huge_mjpeg(dir.path(), 64, 3);
    let out = vidprep()
        .current_dir(dir.path())
        .args(["cut", "huge.avi", "-o", "out.mp4"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(common::oracle::count_frames(&dir.path().join("out.mp4")), 3);
}

/// Peak resident memory of a finished command run under `/usr/bin/time -v`, in KiB.
fn peak_rss_kib(stderr: &str) -> Option<u64> {
    stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn a_mot_file_far_longer_than_the_video_costs_only_the_video_part() {
    let dir = tempfile::tempdir().unwrap();
    let info = SynthVideo::new(160, 120).frames(10).cached();
    std::fs::copy(&info.path, dir.path().join("v.mp4")).unwrap();
    // Two tracks inside the 10-frame video; track 1 continues past the end (frames 40, then
    // 20), and two million rows of other tracks lie past the end (about 50 MB).
    let junk: u64 = 2_000_000;
    let mut text = String::with_capacity(60 << 20);
    text.push_str("9,1,0,0,20,20,1,1,1\n1,2,5,5,10,10,1,1,1\n41,1,500,0,20,20,1,1,1\n");
    for k in 0..junk {
        use std::fmt::Write;
        writeln!(
            text,
            "{},{},{},7,20,30,1,1,1",
            11 + k / 16,
            3 + k % 1000,
            k % 300
        )
        .unwrap();
    }
    text.push_str("21,1,110,0,20,20,1,1,1\n");
    std::fs::write(dir.path().join("gt.txt"), &text).unwrap();
    drop(text);
    let time = Path::new("/usr/bin/time");
    let mut cmd = if time.exists() {
        let mut c = std::process::Command::new(time);
        c.arg("-v").arg(assert_cmd::cargo::cargo_bin("vidprep"));
        c
    } else {
        crate::common::skip::skip(
            crate::common::skip::Needs::Tools,
            "/usr/bin/time is absent: the peak memory is not checked",
        );
        std::process::Command::new(assert_cmd::cargo::cargo_bin("vidprep"))
    };
    let out = cmd
        .current_dir(dir.path())
        .args([
            "overlay", "v.mp4", "--boxes", "gt.txt", "--format", "mot", "-o", "o.mp4",
        ])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let outside = junk + 2;
    assert!(
        err.contains(&format!(
            "{outside} annotation keys fall outside the video (10 frames"
        )),
        "{err}"
    );
    if let Some(kib) = peak_rss_kib(&err) {
        eprintln!("peak RSS {kib} KiB for a {} MB MOT file", 50);
        assert!(kib < 400 * 1024, "peak RSS {kib} KiB");
    }
    let sidecar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("o.json")).unwrap()).unwrap();
    let tracks = sidecar["annotations"]["tracks"].as_array().unwrap();
    let ids: Vec<&str> = tracks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["1", "2"]);
    // Track 1 keeps its one key inside the video (fill does not reach past the video's
    // end), as when the file holds only the video's rows.
    assert_eq!(
        tracks[0]["keys"],
        serde_json::json!([{"frame": 8, "box": [0.0, 0.0, 20.0, 20.0]}])
    );
    assert_eq!(
        tracks[1]["keys"],
        serde_json::json!([{"frame": 0, "box": [5.0, 5.0, 15.0, 15.0]}])
    );
}

/// A loopback HTTP server: every connection's request head is read, then `answer` writes the
/// reply (it may stream forever; a write error ends it). Returns the port.
fn serve(
    answer: impl Fn(&mut std::net::TcpStream) -> std::io::Result<()> + Send + Sync + 'static,
) -> u16 {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let answer = answer.clone();
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match stream.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let _ = answer(&mut stream);
            });
        }
    });
    port
}

/// A small MP4 (its bytes), as a server would hold it.
fn mp4_bytes() -> Vec<u8> {
    std::fs::read(SynthVideo::new(160, 120).frames(25).cached().path).unwrap()
}

fn probe_url(url: &str, env: &[(&str, &str)]) -> (std::process::Output, Duration) {
    let began = Instant::now();
    let mut cmd = vidprep();
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .args(["probe", url, "--count-frames"])
        .timeout(Duration::from_secs(40))
        .output()
        .unwrap();
    (out, began.elapsed())
}

#[test]
fn a_server_that_ignores_range_requests_is_read_from_a_download() {
    // What Python's http.server does: 200 and the whole file whatever the Range asked, and
    // no Accept-Ranges. vidprep downloads it (tests/sources/network.rs checks the bytes).
    let body = mp4_bytes();
    let port = serve(move |s| {
        use std::io::Write;
        write!(
            s,
            "HTTP/1.0 200 OK\r\nContent-Type: video/mp4\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )?;
        s.write_all(&body)
    });
    let began = Instant::now();
    let out = vidprep()
        .args([
            "probe",
            &format!("http://127.0.0.1:{port}/v.mp4"),
            "--count-frames",
            "--json",
        ])
        .timeout(Duration::from_secs(40))
        .output()
        .unwrap();
    let took = began.elapsed();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let probe: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(probe["video"]["frames"], 25, "{probe}");
    assert!(took < Duration::from_secs(20));
}

#[test]
fn a_server_dripping_bytes_cannot_hold_a_command_past_the_deadline() {
    // Ranges and a size, then one byte every 2 s: no single read ever times out.
    let port = serve(|s| {
        use std::io::Write;
        write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nAccept-Ranges: bytes\r\nContent-Length: 1000000\r\n\r\n"
        )?;
        loop {
            s.write_all(&[0])?;
            s.flush()?;
            std::thread::sleep(Duration::from_secs(2));
        }
    });
    let (out, took) = probe_url(
        &format!("http://127.0.0.1:{port}/v.mp4"),
        &[("VIDPREP_NETWORK_DEADLINE", "3")],
    );
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("3 s deadline") && err.contains("VIDPREP_NETWORK_DEADLINE"),
        "{err}"
    );
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

#[test]
fn an_endless_stream_over_http_is_refused_not_read_forever() {
    // A looping MPEG-TS with neither a size nor ranges (a live stream).
    let dir = tempfile::tempdir().unwrap();
    let ts = dir.path().join("v.ts");
    common::cmd::run_ok(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-y",
            "-i",
            SynthVideo::new(160, 120)
                .frames(25)
                .cached()
                .path
                .to_str()
                .unwrap(),
            "-c",
            "copy",
            "-f",
            "mpegts",
            ts.to_str().unwrap(),
        ],
    );
    let body = std::fs::read(&ts).unwrap();
    let port = serve(move |s| {
        use std::io::Write;
        write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nConnection: close\r\n\r\n"
        )?;
        loop {
            s.write_all(&body)?;
        }
    });
    let (out, took) = probe_url(&format!("http://127.0.0.1:{port}/live.ts"), &[]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("live or endless stream"), "{err}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
}
