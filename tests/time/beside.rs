//! Time, text and sound beside sampled frames, each against an independent oracle:
//!
//! - `audio.wav` against the ffmpeg CLI's `-i SRC -ss S -t D -ac 1 -ar 16000 -f wav` of the
//!   same span (sample count exact, samples within 1 LSB), on a stereo 44.1 kHz source (a
//!   downmix and a rate change), a mono 48 kHz one, and real footage (MP3, bit-exact);
//! - subtitles against pysubs2 with VLMEvalKit's Video-MME rule run in Python (skipped, with a
//!   message, where no Python with pysubs2 is found: set `VIDPREP_PYSUBS2_PYTHON`, or
//!   `pip install pysubs2`);
//! - NumPro labels: the labelled image differs from ffmpeg's decode only in the bottom-right
//!   corner where the number is, and is the unlabelled image everywhere else;
//! - bad input (a broken cue, audio asked of a silent source) is a clear error;
//! - the command and a manifest line give the same bytes.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::oracle::{self, PixFmt};
use common::synth::SynthVideo;
use serde_json::Value;
use support::{export_frames, vidprep};

/// The samples of a 16-bit PCM WAV file (its `data` chunk).
fn wav_samples(path: &Path) -> Vec<i16> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[0..4], b"RIFF", "{}", path.display());
    let mut i = 12;
    while i + 8 <= b.len() {
        let size = u32::from_le_bytes(b[i + 4..i + 8].try_into().unwrap()) as usize;
        if &b[i..i + 4] == b"data" {
            let end = (i + 8 + size).min(b.len());
            return b[i + 8..end]
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect();
        }
        i += 8 + size + (size & 1);
    }
    panic!("{}: no data chunk", path.display());
}

/// ffmpeg's 16 kHz mono WAV of `[start, start + duration)` seconds of `src`.
fn ffmpeg_wav(src: &Path, start: &str, duration: &str, out: &Path) -> Vec<i16> {
    let args = [
        "-v",
        "error",
        "-y",
        "-i",
        &common::cmd::p(src),
        "-ss",
        start,
        "-t",
        duration,
        "-ac",
        "1",
        "-ar",
        "16000",
        "-f",
        "wav",
        &common::cmd::p(out),
    ];
    common::cmd::ffmpeg(&args).unwrap();
    wav_samples(out)
}

/// A 3 s stereo 44.1 kHz source (a different tone in each channel), 25 fps.
fn stereo_source(dir: &Path) -> PathBuf {
    let path = dir.join("stereo.mp4");
    common::cmd::ffmpeg(&[
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=160x120:rate=25:duration=3",
        "-f",
        "lavfi",
        "-i",
        "aevalsrc=0.6*sin(2*PI*440*t)|0.5*sin(2*PI*660*t):s=44100:d=3",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "aac",
        "-shortest",
        &common::cmd::p(&path),
    ])
    .unwrap();
    path
}

/// Asserts `ours` has exactly `theirs`' length and differs by at most 1 in any sample;
/// returns how many samples differ.
fn within_one_lsb(label: &str, ours: &[i16], theirs: &[i16]) -> usize {
    assert_eq!(ours.len(), theirs.len(), "{label}: sample count");
    let diffs: Vec<(usize, i32)> = ours
        .iter()
        .zip(theirs)
        .enumerate()
        .map(|(i, (&a, &b))| (i, (a as i32 - b as i32).abs()))
        .filter(|&(_, d)| d > 0)
        .collect();
    let worst = diffs.iter().map(|d| d.1).max().unwrap_or(0);
    assert!(
        worst <= 1,
        "{label}: samples differ by up to {worst} (first differences {:?})",
        &diffs[..diffs.len().min(8)]
    );
    assert!(
        ours.iter().any(|&s| s.unsigned_abs() > 1000),
        "{label}: the soundtrack is silent"
    );
    diffs.len()
}

#[test]
fn audio_is_the_span_ffmpeg_resamples_to_16k_mono() {
    let dir = tempfile::tempdir().unwrap();
    let stereo = stereo_source(dir.path());
    let mono = SynthVideo::new(160, 120)
        .frames(75)
        .audio_tone(523.0)
        .cached();
    // (source, span args, ffmpeg's -ss, -t, samples)
    let cases: [(&Path, &[&str], &str, &str, u64); 4] = [
        (&stereo, &[], "0", "3", 48000),
        (
            &stereo,
            &["--start", "1.2s", "--end", "2.6s"],
            "1.2",
            "1.4",
            22400,
        ),
        (
            &stereo,
            &["--start", "17", "--end", "61"],
            "0.68",
            "1.76",
            28160,
        ),
        (
            &mono.path,
            &["--start", "10", "--end", "50"],
            "0.4",
            "1.6",
            25600,
        ),
    ];
    for (k, (src, span, ss, t, samples)) in cases.iter().enumerate() {
        let out = dir.path().join(format!("out{k}"));
        let mut args = vec!["--count", "4", "--audio"];
        args.extend_from_slice(span);
        let j = export_frames(src, &out, &args);
        let a = &j["audio"];
        assert_eq!(a["file"], "audio.wav");
        assert_eq!(a["sample_rate"], 16000);
        assert_eq!(a["channels"], 1);
        assert_eq!(a["samples"], *samples, "case {k}: {a}");
        assert_eq!(a["start"], "0");
        assert_eq!(
            a["source_start_s"].as_f64().unwrap(),
            ss.parse::<f64>().unwrap()
        );
        assert_eq!(a["end_s"].as_f64().unwrap(), t.parse::<f64>().unwrap());
        let ours = wav_samples(&out.join("audio.wav"));
        let theirs = ffmpeg_wav(src, ss, t, &dir.path().join(format!("ffmpeg{k}.wav")));
        let n = within_one_lsb(&format!("case {k} ({span:?})"), &ours, &theirs);
        eprintln!(
            "case {k}: {} samples, {n} differ by 1 LSB from ffmpeg, none by more",
            ours.len()
        );
        // The header says what the file holds.
        let probe = oracle::probe(&out.join("audio.wav"));
        let s = oracle::stream(&probe, "audio").unwrap();
        assert_eq!(s["codec_name"], "pcm_s16le");
        assert_eq!(s["sample_rate"], "16000");
        assert_eq!(s["channels"], 1);
    }
}

#[test]
fn audio_asked_of_a_silent_source_is_a_clear_error() {
    let v = SynthVideo::new(160, 120).frames(25).cached();
    let dir = tempfile::tempdir().unwrap();
    let out = vidprep()
        .args(["export", "frames"])
        .arg(&v.path)
        .arg("--out-dir")
        .arg(dir.path().join("f"))
        .args(["--count", "2", "--audio"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no audio stream"), "{err}");
    assert!(err.contains("drop --audio"), "{err}");
    assert!(!dir.path().join("f").exists(), "nothing half-written");
    // Anthropic's API takes no audio: refused before anything is read.
    let out = vidprep()
        .args(["export", "frames"])
        .arg(&v.path)
        .arg("--out-dir")
        .arg(dir.path().join("g"))
        .args(["--count", "2", "--audio", "--payload", "anthropic"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("takes no audio"), "{err}");
}

const SRT: &str = "1\n00:00:00,300 --> 00:00:01,100\n<i>First</i> words\n\n2\n00:00:01,100 --> 00:00:02,000\nSecond\nline\n\n3\n00:00:02,500 --> 00:00:02,900\nThird  \n\n4\n00:00:03,000 --> 00:00:03,600\n\n5\n00:00:03,600 --> 00:00:04,000\nlast <b>one</b>\n";

/// A Python that imports pysubs2, or `None` (with a message).
fn pysubs2_python() -> Option<PathBuf> {
    // VIDPREP_PYSUBS2_PYTHON first, then the profiles' parity Python (CI installs pysubs2
    // there), then python3 on PATH.
    let candidates: Vec<PathBuf> = ["VIDPREP_PYSUBS2_PYTHON", "VIDPREP_PYTHON"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain([PathBuf::from("python3")])
        .collect();
    for py in candidates {
        let ok = Command::new(&py)
            .args(["-c", "import pysubs2"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(py);
        }
    }
    crate::common::skip::skipped(
        crate::common::skip::Needs::Parity,
        "no Python with pysubs2 (pip install pysubs2, or set VIDPREP_PYSUBS2_PYTHON)",
    )
}

/// VLMEvalKit's rule (vlmeval/dataset/videomme.py, `build_prompt`), run by pysubs2.
const ORACLE: &str = r#"
import json, sys, pysubs2
path, fps, indices = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
subs = pysubs2.load(path, encoding='utf-8')
per_frame, subtitles = [], []
for seleced_frame_id in indices:
    sub_text = ''
    cur_time = pysubs2.make_time(fps=fps, frames=seleced_frame_id)
    for sub in subs:
        if sub.start < cur_time and sub.end > cur_time:
            sub_text = sub.text.replace('\\N', ' ')
            break
    per_frame.append(sub_text)
    if sub_text.strip():
        subtitles.append(sub_text)
print(json.dumps({"per_frame": per_frame, "text": '\n'.join(subtitles)}))
"#;

#[test]
fn subtitles_are_vlmevalkits_video_mme_rule_by_pysubs2() {
    let Some(py) = pysubs2_python() else {
        return;
    };
    let v = SynthVideo::new(160, 120).frames(100).cached();
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("subs.srt", SRT.to_string()),
        (
            "subs.vtt",
            "WEBVTT\n\n00:00.300 --> 00:01.100 align:start\nFirst\n\nnote-id\n00:01.500 --> 00:03.000\nA <c.yellow>cue</c>\n\n01:00:00.000 --> 01:00:01.000\nlate\n"
                .to_string(),
        ),
    ] {
        let subs = dir.path().join(name);
        std::fs::write(&subs, text).unwrap();
        for (sampler, count) in [("vlmevalkit", "16"), ("uniform", "33")] {
            let out = dir.path().join(format!("{name}-{sampler}"));
            let j = export_frames(
                &v.path,
                &out,
                &[
                    "--count",
                    count,
                    "--sampler",
                    sampler,
                    "--subtitles",
                    subs.to_str().unwrap(),
                    "--payload",
                    "openai",
                ],
            );
            let frames = j["frames"].as_array().unwrap();
            let indices: Vec<u64> = frames
                .iter()
                .map(|f| f["source_frame"].as_u64().unwrap())
                .collect();
            let o = Command::new(&py)
                .args(["-c", ORACLE])
                .arg(&subs)
                .arg("25")
                .arg(serde_json::to_string(&indices).unwrap())
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let want: Value = serde_json::from_slice(&o.stdout).unwrap();
            let got: Vec<Value> = frames.iter().map(|f| f["subtitle"].clone()).collect();
            assert_eq!(
                Value::Array(got),
                want["per_frame"],
                "{name} {sampler}: per-frame texts"
            );
            assert_eq!(j["subtitles"]["text"], want["text"], "{name} {sampler}");
            assert!(
                want["text"].as_str().unwrap().contains("Second line")
                    || name.ends_with(".vtt"),
                "the oracle saw the cues: {want}"
            );
            // The payload carries the same text after the images.
            let p: Value =
                serde_json::from_str(&std::fs::read_to_string(out.join("payload.json")).unwrap())
                    .unwrap();
            let parts = p["content"].as_array().unwrap();
            // Each image after its time marker (#53), then the text.
            assert_eq!(parts.len(), 2 * frames.len() + 1);
            assert_eq!(parts.last().unwrap()["type"], "text");
            assert_eq!(parts.last().unwrap()["text"], want["text"]);
        }
    }
}

#[test]
fn a_broken_cue_names_the_file_and_line() {
    let v = SynthVideo::new(160, 120).frames(25).cached();
    let dir = tempfile::tempdir().unwrap();
    let subs = dir.path().join("broken.srt");
    std::fs::write(
        &subs,
        "1\n00:00:00,300 --> 00:00:01,100\nok\n\n2\n00:00:01,100 --> 00:00:02\nbad\n",
    )
    .unwrap();
    let out = vidprep()
        .args(["export", "frames"])
        .arg(&v.path)
        .arg("--out-dir")
        .arg(dir.path().join("f"))
        .args(["--count", "2", "--subtitles"])
        .arg(&subs)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("broken.srt line 6"), "{err}");
    assert!(err.contains("HH:MM:SS,mmm --> HH:MM:SS,mmm"), "{err}");
    assert!(!dir.path().join("f").exists(), "nothing half-written");
}

/// `(x0, y0, x1, y1)` of the pixels where two same-size RGB frames differ (`None`: identical).
fn differing_box(a: &oracle::Frame, b: &oracle::Frame) -> Option<(usize, usize, usize, usize)> {
    let mut bx: Option<(usize, usize, usize, usize)> = None;
    for y in 0..a.height {
        for x in 0..a.width {
            if a.pixel(0, x, y) != b.pixel(0, x, y) {
                bx = Some(match bx {
                    None => (x, y, x + 1, y + 1),
                    Some((x0, y0, x1, y1)) => (x0.min(x), y0.min(y), x1.max(x + 1), y1.max(y + 1)),
                });
            }
        }
    }
    bx
}

#[test]
fn numpro_labels_change_only_the_bottom_right_corner() {
    let v = SynthVideo::new(320, 240).frames(100).cached();
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    let labelled = dir.path().join("labelled");
    let timed = dir.path().join("timed");
    let args = ["--count", "5", "--format", "png"];
    let jp = export_frames(&v.path, &plain, &args);
    let jl = export_frames(
        &v.path,
        &labelled,
        &[&args[..], &["--label", "frame"]].concat(),
    );
    let jt = export_frames(&v.path, &timed, &[&args[..], &["--label", "time"]].concat());
    assert_eq!(jl["label"]["em_px"], 40.0);
    assert_eq!(jl["label"]["colour"], "ff0000");
    assert_eq!(jl["label"]["position"], "bottom_right");
    let all = oracle::decode_frames(&v.path, PixFmt::Rgb24, None);
    for (k, f) in jl["frames"].as_array().unwrap().iter().enumerate() {
        let i = f["source_frame"].as_u64().unwrap() as usize;
        assert_eq!(f["label"], i.to_string());
        let t = jt["frames"][k]["time_s"].as_f64().unwrap();
        assert_eq!(jt["frames"][k]["label"], format!("{t:.2}s"));
        let file = f["file"].as_str().unwrap();
        let img = oracle::decode_image(&labelled.join(file), PixFmt::Rgb24);
        let bare = oracle::decode_image(
            &plain.join(jp["frames"][k]["file"].as_str().unwrap()),
            PixFmt::Rgb24,
        );
        let ffmpeg = &all[i];
        // Where the label went: the bottom-right corner, about 40 px glyphs.
        let (x0, y0, x1, y1) = differing_box(&img, &bare).expect("a label was drawn");
        let digits = i.to_string().len();
        assert!(
            x1 >= 318 && x0 + 30 * digits + 8 >= 320,
            "frame {i}: x {x0}..{x1}"
        );
        // (The ink ends about th/3 - t = 2 px above the edge; chroma spreads a pixel more.)
        assert!(y0 >= 240 - 48 && y1 <= 240, "frame {i}: y {y0}..{y1}");
        // Inside it the picture is not ffmpeg's: red ink.
        let reddest = (y0..y1)
            .flat_map(|y| (x0..x1).map(move |x| (x, y)))
            .map(|(x, y)| {
                let p = img.pixel(0, x, y);
                let q = ffmpeg.pixel(0, x, y);
                (
                    p[0] as i32 - p[1] as i32,
                    (p[0] as i32 - q[0] as i32).abs() + (p[1] as i32 - q[1] as i32).abs(),
                )
            })
            .max()
            .unwrap();
        assert!(reddest.0 > 180, "frame {i}: no red ink ({reddest:?})");
        // Outside it: the unlabelled image exactly, i.e. ffmpeg's frame as vidprep converts it.
        let mut outside_img = img.clone();
        let mut outside_ffmpeg = ffmpeg.clone();
        for y in y0..y1 {
            for x in x0..x1 {
                for c in 0..3 {
                    let at = (y * img.width + x) * 3 + c;
                    outside_img.data[at] = 0;
                    outside_ffmpeg.data[at] = 0;
                }
            }
        }
        let p = oracle::psnr(&outside_img, &outside_ffmpeg);
        assert!(
            p >= 45.0,
            "frame {i}: {p:.2} dB outside the label against ffmpeg"
        );
        assert!(
            oracle::psnr(&img, ffmpeg) < p,
            "frame {i}: the label changed nothing"
        );
    }
}

#[test]
fn the_command_and_a_manifest_line_give_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = stereo_source(d);
    let subs = d.join("subs.srt");
    std::fs::write(&subs, SRT).unwrap();
    let (src_s, subs_s) = (common::cmd::p(&src), common::cmd::p(&subs));
    vidprep()
        .current_dir(d)
        .args(["export", "frames", &src_s, "--out-dir", "cli/frames"])
        .args(["--count", "6", "--start", "0.4s", "--label", "frame"])
        .args(["--subtitles", &subs_s, "--audio", "--payload", "gemini"])
        .assert()
        .success();
    let line = serde_json::json!({
        "id": "a", "source": src_s, "start": "0.4s",
        "exports": [{"kind": "frames", "count": 6, "label": "frame", "subtitles": subs_s,
                     "audio": true, "payload": "gemini"}]
    });
    std::fs::write(d.join("m.jsonl"), format!("{line}\n")).unwrap();
    vidprep()
        .current_dir(d)
        .args(["run", "m.jsonl", "--out-dir", "run"])
        .assert()
        .success();
    let (a, b) = (d.join("cli/frames"), d.join("run/a/frames"));
    let names = |p: &Path| support::files_in(p);
    assert_eq!(names(&a), names(&b));
    assert!(
        names(&a).contains(&"audio.wav".to_string()),
        "{:?}",
        names(&a)
    );
    for name in names(&a) {
        let (x, y) = (
            std::fs::read(a.join(&name)).unwrap(),
            std::fs::read(b.join(&name)).unwrap(),
        );
        if name == "frames.json" {
            let blank = |v: &[u8], folder: &str, id: &str| {
                let mut j: Value = serde_json::from_slice(v).unwrap();
                let t = j["request"].to_string().replace(folder, "<OUT>");
                j["request"] = serde_json::from_str(&t).unwrap();
                if j["request"]["id"] == id {
                    j["request"]["id"] = "<ID>".into();
                }
                j
            };
            let (jx, jy) = (blank(&x, "cli/frames", "frames"), blank(&y, "run/a", "a"));
            for key in [
                "frames",
                "sampled",
                "label",
                "subtitles",
                "audio",
                "payload",
            ] {
                assert_eq!(jx[key], jy[key], "frames.json {key}");
            }
            assert_eq!(jx["request"]["exports"], jy["request"]["exports"]);
        } else {
            assert!(x == y, "{name} differs between the doors");
        }
    }
    // The payload carries the audio after the images and the subtitle text.
    let p: Value = serde_json::from_slice(&std::fs::read(a.join("payload.json")).unwrap()).unwrap();
    // Six images, each after its time marker (#53), then the text and the audio.
    let parts = p["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 12 + 2);
    assert!(parts[12]["text"].is_string());
    assert_eq!(parts[13]["inline_data"]["mime_type"], "audio/wav");
    use base64::Engine as _;
    let wav = base64::engine::general_purpose::STANDARD
        .decode(parts[13]["inline_data"]["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(wav, std::fs::read(a.join("audio.wav")).unwrap());
}

#[test]
fn real_footage_audio_is_ffmpegs_to_the_sample() {
    // chaplin.mp4: MP3 stereo 44.1 kHz whose audio ends 26 ms before its video.
    let Some(src) = support::shared("host/chaplin.mp4") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let j = export_frames(
        &src,
        &dir.path().join("f"),
        &["--count", "4", "--start", "2.5s", "--end", "8s", "--audio"],
    );
    let a = &j["audio"];
    assert_eq!(a["source_start"], "2.52");
    assert_eq!(a["samples"], 87680);
    let ours = wav_samples(&dir.path().join("f/audio.wav"));
    let theirs = ffmpeg_wav(&src, "2.52", "5.48", &dir.path().join("ffmpeg.wav"));
    assert_eq!(
        within_one_lsb("chaplin 2.52 s + 5.48 s", &ours, &theirs),
        0,
        "bit-exact"
    );
    // The whole video: the audio is ffmpeg's where it has some, then silence to the end of
    // the video's span (ffmpeg's file stops where the audio does).
    let j = export_frames(&src, &dir.path().join("g"), &["--count", "4", "--audio"]);
    assert_eq!(j["audio"]["samples"], 154240);
    let ours = wav_samples(&dir.path().join("g/audio.wav"));
    let theirs = ffmpeg_wav(&src, "0", "9.64", &dir.path().join("ffmpeg2.wav"));
    assert!(theirs.len() < ours.len());
    assert_eq!(&ours[..theirs.len()], &theirs[..]);
    assert!(ours[theirs.len()..].iter().all(|&s| s == 0));
}

/// The shift `s` (|s| at most `most`) at which `ours[i]` and `theirs[i + s]` are within
/// 1 LSB wherever both are (the counts may differ by a few samples: the older CLI's clock
/// restarts move its end too).
fn shifted_within_one_lsb(ours: &[i16], theirs: &[i16], most: i64) -> Option<i64> {
    let n = ours.len().min(theirs.len()) as i64;
    if ours.len().abs_diff(theirs.len()) as i64 > most || n <= 2 * most {
        return None;
    }
    (0..=most).flat_map(|s| [s, -s]).find(|&s| {
        (most..n - most).all(|i| {
            let j = i + s;
            (ours[i as usize] as i32 - theirs[j as usize] as i32).abs() <= 1
        })
    })
}

/// One source of the audio-clock test: its video and audio encoders and container; `twin`:
/// encoded into NUT (whose audio time base is the sample rate) and copied into the
/// (millisecond) container, so both hold the same packets.
struct AudioVariant {
    name: &'static str,
    video: &'static [&'static str],
    audio: &'static [&'static str],
    ext: &'static str,
    twin: bool,
}

/// The audio stream's time base as (num, den) and sample rate, by ffprobe.
fn audio_time_base(path: &Path) -> ((i64, i64), i64) {
    let probe = oracle::probe(path);
    let s = oracle::stream(&probe, "audio").unwrap();
    let tb = s["time_base"].as_str().unwrap();
    let (n, d) = tb.split_once('/').unwrap();
    (
        (n.parse().unwrap(), d.parse().unwrap()),
        s["sample_rate"].as_str().unwrap().parse().unwrap(),
    )
}

#[test]
fn audio_spans_follow_ffmpegs_sample_clock_in_every_codec_and_container() {
    // #52 item 4: a span of a VP8/Vorbis WebM was 5 samples off the ffmpeg command. Two
    // causes: the output's sample grid was laid from time 0, where the ffmpeg CLI's resampler
    // starts at the stream's first decoded sample (Vorbis's first packet decodes to nothing:
    // its first sample is at 128/44100 s, 0.44 of an output sample off the grid); and a
    // millisecond time base rounds each frame's time by up to half a tick, where the CLI
    // carries its sample count on from the stream's first frame (media::audio_clock).
    //
    // Oracle: the ffmpeg CLI's `-ss -t -ac 1 -ar 16000` of the same span. Every codec is
    // encoded into NUT (time base 1/rate: each frame's timestamp is its sample; every CLI
    // version agrees) and checked there to within 1 LSB; then the same packets are copied
    // into the millisecond container, checked the same way against FFmpeg 6.1+'s CLI (CI's
    // forky root), whose clock vidprep follows. Before 6.1 the CLI restarted its clock at
    // rounded timestamps: there the samples must be the CLI's, starting at most half a
    // millisecond (8 samples) apart.
    let stereo_tone = "aevalsrc=0.6*sin(2*PI*440*t)|0.5*sin(2*PI*660*t):s=44100:d=4";
    let variants = [
        AudioVariant {
            name: "vorbis_nut",
            video: &["-c:v", "mpeg4"],
            audio: &["-c:a", "libvorbis"],
            ext: "nut",
            twin: false,
        },
        AudioVariant {
            name: "vorbis_ogv",
            video: &["-c:v", "libtheora"],
            audio: &["-c:a", "libvorbis"],
            ext: "ogv",
            twin: false,
        },
        AudioVariant {
            name: "vorbis_webm",
            video: &["-c:v", "libvpx", "-b:v", "200k"],
            audio: &["-c:a", "libvorbis"],
            ext: "webm",
            twin: true,
        },
        AudioVariant {
            name: "opus_webm",
            video: &["-c:v", "libvpx", "-b:v", "200k"],
            audio: &["-c:a", "libopus"],
            ext: "webm",
            twin: true,
        },
        AudioVariant {
            name: "aac_mkv",
            video: &["-c:v", "mpeg4"],
            audio: &["-c:a", "aac"],
            ext: "mkv",
            twin: true,
        },
        AudioVariant {
            name: "mp3_mkv",
            video: &["-c:v", "mpeg4"],
            audio: &["-c:a", "libmp3lame"],
            ext: "mkv",
            twin: true,
        },
        AudioVariant {
            name: "flac_mkv",
            video: &["-c:v", "mpeg4"],
            audio: &["-c:a", "flac"],
            ext: "mkv",
            twin: true,
        },
        AudioVariant {
            name: "ac3_mkv",
            video: &["-c:v", "mpeg4"],
            audio: &["-c:a", "ac3"],
            ext: "mkv",
            twin: true,
        },
        AudioVariant {
            name: "aac_ts",
            video: &["-c:v", "mpeg2video"],
            audio: &["-c:a", "aac"],
            ext: "ts",
            twin: false,
        },
    ];
    let version = common::cmd::ffmpeg_cli_version().expect("ffmpeg -version names a version");
    let cli_clock = version >= (6, 1);
    eprintln!("the ffmpeg CLI is {version:?}: millisecond containers checked exactly: {cli_clock}");
    let dir = tempfile::tempdir().unwrap();
    let mut report = Vec::new();
    for v in &variants {
        let encoded = dir
            .path()
            .join(format!("{}.{}", v.name, if v.twin { "nut" } else { v.ext }));
        let mut args: Vec<String> = [
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=160x120:rate=25:duration=4",
            "-f",
            "lavfi",
            "-i",
            stereo_tone,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(v.video.iter().chain(v.audio).map(|s| s.to_string()));
        args.extend(["-shortest".into(), common::cmd::p(&encoded)]);
        common::cmd::ffmpeg(&args).unwrap();
        let src = if v.twin {
            let src = dir.path().join(format!("{}.{}", v.name, v.ext));
            common::cmd::ffmpeg(&[
                "-v",
                "error",
                "-i",
                &common::cmd::p(&encoded),
                "-c",
                "copy",
                &common::cmd::p(&src),
            ])
            .unwrap();
            src
        } else {
            encoded.clone()
        };
        let ((tb_num, tb_den), rate) = audio_time_base(&src);
        let coarse = tb_num * rate > tb_den;
        assert_eq!(coarse, v.twin, "{}: time base {tb_num}/{tb_den}", v.name);
        // The encode itself (time base as fine as a sample: every CLI version places each
        // frame at its timestamp), then, for a twin, the millisecond container.
        let files: Vec<&Path> = if v.twin {
            vec![&encoded, &src]
        } else {
            vec![&src]
        };
        for file in files {
            let coarse = file == src.as_path() && coarse;
            let spans: [&[&str]; 2] = [
                &["--start", "1.2s", "--end", "2.6s"],
                &["--start", "17", "--end", "61"],
            ];
            for (k, span) in spans.iter().enumerate() {
                let out = dir.path().join(format!("{}_{k}", v.name));
                let mut a = vec!["--count", "2", "--audio"];
                a.extend_from_slice(span);
                let j = export_frames(file, &out, &a);
                let ss = j["audio"]["source_start"].as_str().unwrap().to_string();
                let t = j["audio"]["end"].as_str().unwrap().to_string();
                let ours = wav_samples(&out.join("audio.wav"));
                let name = file.file_name().unwrap().to_string_lossy().to_string();
                let label = format!("{name} {span:?} (-ss {ss} -t {t})");
                let theirs = ffmpeg_wav(file, &ss, &t, &dir.path().join("cli.wav"));
                if !coarse || cli_clock {
                    let n = within_one_lsb(&format!("{label} against the CLI"), &ours, &theirs);
                    report.push(format!("{label}: {n} samples 1 LSB off the CLI"));
                } else {
                    // FFmpeg before 6.1 restarts its clock at rounded timestamps: the same
                    // samples, starting up to half a millisecond (8 samples) apart.
                    let shift = shifted_within_one_lsb(&ours, &theirs, 8).unwrap_or_else(|| {
                        panic!("{label}: not the CLI's samples at a shift of at most 8")
                    });
                    report.push(format!(
                        "{label}: the CLI's samples (FFmpeg before 6.1) shifted by {shift}"
                    ));
                }
            }
        }
    }
    eprintln!("{}", report.join("\n"));
}

#[test]
fn an_audio_export_is_rerun_into_its_own_folder() {
    // frames.json did not list audio.wav among vidprep's files, so the rerun was refused
    // ("holds files vidprep did not write (audio.wav)"); a person's file there still is.
    let v = SynthVideo::new(160, 120)
        .frames(50)
        .audio_tone(440.0)
        .cached();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f");
    export_frames(&v.path, &out, &["--count", "2", "--audio"]);
    let j = export_frames(&v.path, &out, &["--count", "3", "--audio", "--end", "30"]);
    assert_eq!(j["audio"]["samples"], 19200);
    assert_eq!(wav_samples(&out.join("audio.wav")).len(), 19200);
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let o = vidprep()
        .args(["export", "frames"])
        .arg(&v.path)
        .arg("--out-dir")
        .arg(&out)
        .args(["--count", "2", "--audio"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("notes.txt"), "{err}");
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
}
