//! Odd picture sizes through the profiles whose packages read with decord (`internvl`) or
//! PyAV (`lmms-eval`): both convert YUV to RGB with swscale's bilinear flags, which give the
//! same bytes as the ffmpeg CLI's bicubic ones on even sizes only; on a 161x97 clip vidprep's
//! default conversion was 29-30 dB from both. Checked with `vidprep parity` against the real
//! packages in `VIDPREP_PYTHON` (skipped, with a message, without them): bit-exact, where
//! the package's PyAV links the system's libswscale (a PyPI wheel of PyAV bundles its own,
//! which converts odd sizes otherwise: then frames and sizes only, with the PSNR printed).

use crate::common;
use crate::profiles::parity::{parity, python_with};

use std::path::PathBuf;

use common::synth::{Codec, SynthVideo};

/// 161x97 MPEG-4 Part 2 in AVI (odd sides: the 4:2:0 chroma's last column and row cover one
/// luma sample each), 40 frames.
fn odd_clip() -> PathBuf {
    SynthVideo::new(161, 97)
        .frames(40)
        .codec(Codec::Mpeg4)
        .container("avi")
        .cached()
        .path
}

fn assert_bit_exact(py: &str, profile: &str) {
    let rec = parity(py, &odd_clip(), profile, &["--count", "4"])
        .unwrap_or_else(|e| panic!("{profile}: parity failed: {e}"));
    assert!(
        rec["indices_equal"] == true && rec["sizes_equal"] == true && rec["bit_exact"] == true,
        "{profile} on 161x97: {rec}"
    );
}

#[test]
fn internvl_converts_odd_sizes_as_decord_does() {
    let Some(py) = python_with("decord, torchvision, PIL") else {
        return;
    };
    assert_bit_exact(&py, "internvl");
}

/// libswscale's major version as `ffmpeg -version` prints it (the system's FFmpeg, which
/// vidprep links).
fn system_swscale_major() -> Option<u32> {
    let out = std::process::Command::new("ffmpeg")
        .arg("-version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("libswscale"))?;
    line.split_whitespace()
        .nth(1)?
        .trim_end_matches('.')
        .parse()
        .ok()
}

/// libswscale's major version in the FFmpeg that `py`'s PyAV links (a PyPI wheel bundles
/// its own; Debian's python3-av links the system's).
fn pyav_swscale_major(py: &str) -> Option<u32> {
    let out = std::process::Command::new(py)
        .args([
            "-c",
            "import av; print(av.library_versions['libswscale'][0])",
        ])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

#[test]
fn lmms_eval_converts_odd_sizes_as_pyav_does() {
    let Some(py) = python_with("lmms_eval, av, numpy") else {
        return;
    };
    let (system, pyav) = (system_swscale_major(), pyav_swscale_major(&py));
    if system.is_some() && system == pyav {
        assert_bit_exact(&py, "lmms-eval");
        return;
    }
    // Another libswscale converts odd sizes otherwise (measured: PyAV 18.1's wheel, FFmpeg 8's
    // libswscale 9, against Debian 12's libswscale 6: 28.7 dB, up to 141 apart, on this clip,
    // the whole picture; even sizes agree): vidprep converts with the system's, so only the
    // frames and sizes are the package's here.
    let rec = parity(&py, &odd_clip(), "lmms-eval", &["--count", "4"])
        .unwrap_or_else(|e| panic!("lmms-eval: parity failed: {e}"));
    assert!(
        rec["indices_equal"] == true && rec["sizes_equal"] == true,
        "lmms-eval on 161x97: {rec}"
    );
    eprintln!(
        "lmms-eval on 161x97: PyAV's libswscale {pyav:?} is not the system's {system:?}: pixels \
         not compared bit for bit (min PSNR {} dB)",
        rec["min_psnr_db"]
    );
}
