//! Odd picture sizes through the profiles whose packages read with decord (`internvl`) or
//! PyAV (`lmms-eval`): both convert YUV to RGB with swscale's bilinear flags, which give the
//! same bytes as the ffmpeg CLI's bicubic ones on even sizes only; on a 161x97 clip vidprep's
//! default conversion was 29-30 dB from both. Checked with `vidprep parity` against the real
//! packages in `VIDPREP_PYTHON` (skipped, with a message, without them): bit-exact.

use crate::common;
use crate::profiles::{parity, python_with};

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

#[test]
fn lmms_eval_converts_odd_sizes_as_pyav_does() {
    let Some(py) = python_with("lmms_eval, av, numpy") else {
        return;
    };
    assert_bit_exact(&py, "lmms-eval");
}
