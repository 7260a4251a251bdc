//! Soundtracks whose channel layout the container does not state (issue 23, item 8): WMA in
//! ASF/WMV, and PCM in Matroska with three channels, are read with FFmpeg's default layout for
//! the channel count, as the ffmpeg CLI does ("Guessed Channel Layout"), instead of failing
//! with "resampling audio: Input changed". Judged with ffprobe and the ffmpeg CLI's decode of
//! the output's audio: a 440 Hz tone, as long as the clip.

use crate::common;
use crate::support;

use std::path::Path;

use common::cmd::{ffmpeg, ffprobe, p};
use support::vidprep;

/// A 2 s, 25 fps clip with a 440 Hz tone at 44.1 kHz, written by the ffmpeg CLI with the given
/// audio arguments.
fn synth(path: &Path, video_codec: &str, audio: &[&str]) {
    let mut args: Vec<String> = [
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=160x120:rate=25:duration=2",
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:duration=2:sample_rate=44100",
        "-c:v",
        video_codec,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(audio.iter().map(|s| s.to_string()));
    args.push(p(path));
    ffmpeg(&args).unwrap();
}

/// ffprobe's channel count and layout name of the first audio stream.
fn audio_layout(path: &Path) -> (u64, String) {
    let out = ffprobe(&[
        "-v",
        "error",
        "-select_streams",
        "a:0",
        "-show_entries",
        "stream=channels,channel_layout",
        "-of",
        "default=noprint_wrappers=1",
        &p(path),
    ])
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .unwrap_or("")
            .to_string()
    };
    (
        field("channels").parse().unwrap_or(0),
        field("channel_layout"),
    )
}

/// The output's first audio channel as decoded by the ffmpeg CLI (f32, 44.1 kHz).
fn decoded_tone(path: &Path) -> Vec<f32> {
    let out = ffmpeg(&[
        "-v",
        "error",
        "-i",
        &p(path),
        "-map",
        "0:a:0",
        "-af",
        "pan=mono|c0=c0",
        "-ar",
        "44100",
        "-f",
        "f32le",
        "-",
    ])
    .unwrap();
    out.stdout
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Checks that `out` holds `seconds` of a 440 Hz tone (zero crossings) at the sine source's
/// level (amplitude 1/8) in every channel it has.
fn assert_tone(out: &Path, seconds: f64) {
    let samples = decoded_tone(out);
    let dur = samples.len() as f64 / 44100.0;
    assert!(
        (dur - seconds).abs() < 0.1,
        "{}: {dur:.3} s of audio, want {seconds} s",
        out.display()
    );
    // Skip the encoder's priming and the fade at the ends.
    let body = &samples[samples.len() / 10..samples.len() * 9 / 10];
    let crossings = body
        .windows(2)
        .filter(|w| (w[0] < 0.0) != (w[1] < 0.0))
        .count();
    let hz = crossings as f64 / 2.0 / (body.len() as f64 / 44100.0);
    assert!(
        (hz - 440.0).abs() < 10.0,
        "{}: tone at {hz:.1} Hz, want 440",
        out.display()
    );
    let rms = (body.iter().map(|s| (*s as f64).powi(2)).sum::<f64>() / body.len() as f64).sqrt();
    let want = 0.125 / 2f64.sqrt();
    assert!(
        (rms - want).abs() < 0.3 * want,
        "{}: RMS {rms:.4}, want about {want:.4} (the source's level)",
        out.display()
    );
}

#[test]
fn wma_in_asf_with_an_unknown_layout_is_cut_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("tone.wmv");
    synth(&src, "wmv2", &["-c:a", "wmav2", "-ac", "2"]);
    // The premise: the container states two channels and no layout.
    assert_eq!(
        audio_layout(&src),
        (2, "unknown".to_string()),
        "premise: the ASF's WMA has no layout"
    );

    let clip = dir.path().join("clip.mp4");
    vidprep()
        .args(["cut"])
        .arg(&src)
        .args(["--start", "5", "--end", "30", "-o"])
        .arg(&clip)
        .assert()
        .success();
    assert_eq!(audio_layout(&clip), (2, "stereo".to_string()));
    assert_tone(&clip, 1.0);

    let export = dir.path().join("export.mp4");
    vidprep()
        .args(["export", "video"])
        .arg(&src)
        .args(["--reencode", "-o"])
        .arg(&export)
        .assert()
        .success();
    assert_eq!(audio_layout(&export), (2, "stereo".to_string()));
    assert_tone(&export, 2.0);
}

#[test]
fn three_channels_of_unknown_layout_are_mixed_to_stereo() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("tone3.mkv");
    synth(&src, "mpeg4", &["-c:a", "pcm_s16le", "-ac", "3"]);
    assert_eq!(
        audio_layout(&src),
        (3, "unknown".to_string()),
        "premise: Matroska's PCM has three channels and no layout"
    );
    let clip = dir.path().join("clip.mp4");
    vidprep()
        .args(["cut"])
        .arg(&src)
        .args(["--start", "5", "--end", "30", "-o"])
        .arg(&clip)
        .assert()
        .success();
    assert_eq!(audio_layout(&clip), (2, "stereo".to_string()));
    // ffmpeg's default layout for three channels is 2.1 (FL FR LFE): the front pair carries
    // the tone at its level.
    assert_tone(&clip, 1.0);
}
