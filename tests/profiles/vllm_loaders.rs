//! `vidprep parity --loader vllm-opencv|vllm-torchcodec` (docs/profiles.md, "vLLM's video
//! loaders"): what a vLLM server's loader shows the model when it is sent the file, against
//! oracles that are not vidprep:
//!
//! - the frame each of the loader's pictures really shows is read from the frame code painted
//!   into it (the loader run here by vLLM itself, its pictures read with `common::code`), and
//!   the record's `server.shows` must be those frames;
//! - the frame count is ffprobe's decode count (`common::oracle::count_frames`), and the
//!   benchmark's uniform frames are `round(linspace(0, n - 1, N))` over it.
//!
//! A constant-rate H.264 MP4 with 100 frames asked for 12 (linspace's step is a whole 9, so
//! vLLM's truncating linspace and vidprep's rounding one agree) is one where sending the file
//! is right; a variable-rate MKV is one where vLLM's OpenCV loader is wrong (OpenCV counts
//! the container's duration x 25, more frames than there are, and its last index is never
//! decoded: python/tests/test_pipeline_loaders.py's `VLLM_WRONG`). Skipped, with a message,
//! when `VIDPREP_PYTHON` lacks vllm, OpenCV or torchcodec; a failure when
//! `VIDPREP_REQUIRE_PARITY` is set.

use crate::common;
use crate::profiles::parity::python_with;
use crate::support::vidprep;

use std::path::Path;

use common::code::read_code;
use common::synth::SynthVideo;
use serde_json::Value;

/// The interpreter with vLLM's video loaders and both CPU codecs, or `None` (a message).
fn python() -> Option<String> {
    let py = python_with("vllm.multimodal.video")?;
    python_with("cv2")?;
    python_with("torchcodec")?;
    Some(py)
}

/// Runs `vidprep parity VIDEO --loader LOADER ARGS --out`, returning the exit code, stdout
/// and the record.
fn parity(py: &str, video: &Path, loader: &str, args: &[&str]) -> (i32, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("parity.json");
    let o = vidprep()
        .env("VIDPREP_PYTHON", py)
        .arg("parity")
        .arg(video)
        .args(["--loader", loader])
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let record = std::fs::read_to_string(&out).unwrap_or_else(|_| {
        panic!(
            "no record: {}\n{stdout}\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (
        o.status.code().unwrap_or(-1),
        stdout,
        serde_json::from_str(&record).unwrap(),
    )
}

/// The frame codes painted into the pictures vLLM's own loader (`codec`, `num_frames`) gives
/// for `video`, and the indices it names: run here with vLLM, not through vidprep.
fn vllm_pictures(
    py: &str,
    video: &Path,
    codec: &str,
    num_frames: usize,
) -> (Vec<u64>, Vec<Option<u32>>) {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("frames.u8");
    let script = format!(
        r#"
import json, sys
import numpy as np
from vllm.multimodal.video import VIDEO_LOADER_REGISTRY
data = open(sys.argv[1], "rb").read()
frames, meta = VIDEO_LOADER_REGISTRY.load("opencv").load_bytes(data, num_frames={num_frames}, backend="{codec}")
frames = np.ascontiguousarray(np.asarray(frames, dtype=np.uint8))
open(sys.argv[2], "wb").write(frames.tobytes())
print(json.dumps({{"indices": [int(i) for i in meta["frames_indices"]], "shape": list(frames.shape)}}))
"#
    );
    let o = std::process::Command::new(py)
        .args(["-c", &script])
        .arg(video)
        .arg(&raw)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let meta: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let shape: Vec<usize> = meta["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    let pixels = std::fs::read(&raw).unwrap();
    let (h, w) = (shape[1], shape[2]);
    let codes = (0..shape[0])
        .map(|p| {
            let g: Vec<u8> = pixels[p * h * w * 3..(p + 1) * h * w * 3]
                .chunks(3)
                .map(|px| px[1])
                .collect();
            read_code(&g, w, h, w)
        })
        .collect();
    (u64s(&meta["indices"]), codes)
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

/// numpy.round(numpy.linspace(0, n - 1, count)): the benchmark's uniform frames.
fn uniform(n: u64, count: u64) -> Vec<u64> {
    (0..count)
        .map(|k| {
            let x = k as f64 * (n - 1) as f64 / (count - 1) as f64;
            x.round_ties_even() as u64
        })
        .collect()
}

#[test]
fn vllm_opencv_on_a_constant_rate_mp4_gives_the_benchmarks_frames() {
    let Some(py) = python() else { return };
    let src = SynthVideo::new(320, 240)
        .fps(25, 1)
        .frames(100)
        .gop(25)
        .cached()
        .path;
    let n = common::oracle::count_frames(&src);
    assert_eq!(n, 100);
    let bench = uniform(n, 12);
    for loader in ["vllm-opencv", "vllm-torchcodec"] {
        let (code, stdout, r) = parity(&py, &src, loader, &["--count", "12"]);
        assert_eq!(code, 0, "{loader}: {stdout}");
        assert!(stdout.contains("send the file"), "{stdout}");
        assert_eq!(r["verdict"], "send the file");
        assert_eq!(r["loader"], loader);
        assert_eq!(u64s(&r["benchmark"]["indices"]), bench);
        assert_eq!(u64s(&r["server"]["names"]), bench);
        // What the pictures show, read from their painted codes.
        let codec = loader.strip_prefix("vllm-").unwrap();
        let (names, codes) = vllm_pictures(&py, &src, codec, 12);
        assert_eq!(names, bench);
        let codes: Vec<Option<u64>> = codes.iter().map(|c| c.map(u64::from)).collect();
        assert_eq!(codes, bench.iter().map(|&b| Some(b)).collect::<Vec<_>>());
        let shows: Vec<Option<u64>> = r["server"]["shows"]
            .as_array()
            .unwrap()
            .iter()
            .map(Value::as_u64)
            .collect();
        assert_eq!(shows, codes, "{loader}");
        assert_eq!(r["frames_equal"], true);
        assert_eq!(r["timestamps_equal"], true);
        assert_eq!(r["server"]["fps"].as_f64(), Some(25.0));
        assert_eq!(r["pass"], true);
    }
    // 8 of 100: vLLM truncates linspace's 14.14... steps where the benchmark rounds them, so
    // the server names other frames (and the right pictures of them): send the frames.
    let (code, stdout, r) = parity(&py, &src, "vllm-opencv", &["--count", "8"]);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(r["verdict"], "send the frames: --payload vllm");
    assert_eq!(u64s(&r["benchmark"]["indices"]), uniform(n, 8));
    assert_eq!(u64s(&r["server"]["names"]), [0, 14, 28, 42, 56, 70, 84, 99]);
    assert_eq!(r["shows_what_it_names"], true);
    assert_eq!(r["indices_equal"], false);
}

#[test]
fn vllm_opencv_on_a_variable_rate_mkv_is_wrong_and_says_send_the_frames() {
    let Some(py) = python() else { return };
    let src = SynthVideo::new(320, 240)
        .fps(25, 1)
        .frames(100)
        .gop(24)
        .vfr(&[40, 40, 60])
        .container("mkv")
        .cached()
        .path;
    let n = common::oracle::count_frames(&src);
    assert_eq!(n, 100);
    let (code, stdout, r) = parity(&py, &src, "vllm-opencv", &["--count", "8"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("send the frames: --payload vllm"),
        "{stdout}"
    );
    assert_eq!(r["verdict"], "send the frames: --payload vllm");
    assert_eq!(r["pass"], false);
    assert_eq!(u64s(&r["benchmark"]["indices"]), uniform(n, 8));
    // OpenCV counts more frames than the decode has (the container's duration x its rate)...
    let total = r["server"]["total_frames"].as_u64().unwrap();
    assert!(total > n, "OpenCV counted {total} of {n}: {stdout}");
    // ...so its sampler picks past the end, and a frame it picked is never read.
    let sampled = u64s(&r["server"]["sampled"]);
    assert!(sampled.iter().any(|&i| i >= n), "{sampled:?}");
    assert!(!u64s(&r["server"]["dropped"]).is_empty());
    assert_eq!(r["frames_equal"], false);
    // The pictures it does return, by their painted codes, are the record's `shows`.
    let (names, codes) = vllm_pictures(&py, &src, "opencv", 8);
    assert_eq!(u64s(&r["server"]["names"]), names);
    let shows: Vec<Option<u64>> = r["server"]["shows"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::as_u64)
        .collect();
    let codes: Vec<Option<u64>> = codes.iter().map(|c| c.map(u64::from)).collect();
    assert_eq!(shows, codes);
    assert!(
        r["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t.as_str().unwrap().contains("could not read")),
        "{}",
        r["reasons"]
    );
}

#[test]
fn a_loader_vllm_has_no_codec_for_is_refused_naming_the_ones_it_has() {
    let src = SynthVideo::new(160, 120)
        .fps(25, 1)
        .frames(10)
        .cached()
        .path;
    let o = vidprep()
        .arg("parity")
        .arg(&src)
        .args(["--loader", "vllm-pyav"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("vllm-opencv") && err.contains("no PyAV"),
        "{err}"
    );
    // A loader and a profile together are refused too.
    let o = vidprep()
        .arg("parity")
        .arg(&src)
        .args(["--loader", "vllm-opencv", "--profile", "qwen3-vl"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
