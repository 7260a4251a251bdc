//! `--no-audio` holds on every clip path: a stream copy (`cut --copy`, a manifest clip with
//! `"copy": true, "audio": false`) and a smart cut write no audio stream, and the sidecar says
//! what the file holds (`output.audio`, `copy.audio`), checked against ffprobe's stream list.

use crate::common;
use crate::support;

use common::oracle;
use common::synth::SynthVideo;
use support::{shared, sidecar, vidprep};

/// The codec names of `path`'s audio streams, as ffprobe lists them.
fn audio_codecs(path: &std::path::Path) -> Vec<String> {
    let p = oracle::probe(path);
    oracle::streams(&p, "audio")
        .iter()
        .map(|s| s["codec_name"].as_str().unwrap_or("?").to_string())
        .collect()
}

#[test]
fn no_audio_drops_the_audio_of_every_clip_path() {
    let v = SynthVideo::new(320, 240)
        .frames(100)
        .gop(25)
        .audio_tone(440.0)
        .cached();
    assert_eq!(audio_codecs(&v.path), vec!["aac"], "the source has AAC");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cut = |name: &str, extra: &[&str]| {
        let out = d.join(name);
        vidprep()
            .arg("cut")
            .arg(&v.path)
            .args([
                "--start",
                "30",
                "--end",
                "70",
                "--preset",
                "ultrafast",
                "-o",
            ])
            .arg(&out)
            .args(extra)
            .assert()
            .success();
        out
    };

    // A stream copy keeps the AAC stream, and the sidecar gives its rate and channels.
    let kept = cut("copy.mp4", &["--copy"]);
    assert_eq!(audio_codecs(&kept), vec!["aac"]);
    let s = sidecar(&kept);
    assert_eq!(s["copy"]["audio"], "copied");
    let probe = oracle::probe(&kept);
    let a = oracle::stream(&probe, "audio").unwrap();
    assert_eq!(
        s["output"]["audio"]["sample_rate"].to_string(),
        a["sample_rate"].as_str().unwrap()
    );
    assert_eq!(s["output"]["audio"]["channels"], a["channels"]);

    // --no-audio: no audio stream, and the sidecar says so.
    for (name, extra) in [
        ("copy_na.mp4", &["--copy", "--no-audio"][..]),
        ("copy_na_mkv.mkv", &["--copy", "--no-audio"][..]),
        ("smart_na.mp4", &["--smart", "--no-audio"][..]),
        ("full_na.mp4", &["--no-audio"][..]),
    ] {
        let out = cut(name, extra);
        assert_eq!(audio_codecs(&out), Vec::<String>::new(), "{name}");
        let s = sidecar(&out);
        assert!(s["output"]["audio"].is_null(), "{name}: {}", s["output"]);
        if extra.contains(&"--copy") {
            let note = s["copy"]["audio"].as_str().unwrap();
            assert!(
                note.starts_with("dropped: no audio asked for"),
                "{name}: {note}"
            );
        }
    }

    // The manifest door: "audio": false on a copied clip.
    std::fs::write(
        d.join("m.jsonl"),
        format!(
            "{{\"id\": \"a\", \"source\": \"{}\", \"start\": 30, \"end\": 70, \"exports\": [{{\"kind\": \"clip\", \"copy\": true, \"audio\": false}}]}}\n",
            v.path.display()
        ),
    )
    .unwrap();
    vidprep()
        .args(["run"])
        .arg(d.join("m.jsonl"))
        .arg("--out-dir")
        .arg(d.join("run"))
        .assert()
        .success();
    let clip = d.join("run/a/clip.mp4");
    assert_eq!(audio_codecs(&clip), Vec::<String>::new());
    assert!(sidecar(&clip)["output"]["audio"].is_null());
    assert_eq!(
        std::fs::read(&clip).unwrap(),
        std::fs::read(d.join("copy_na.mp4")).unwrap(),
        "the command and the manifest line copy the same bytes"
    );
}

/// Real footage: the MP3 soundtrack of `host/chaplin.mp4` is copied with `--copy`, and gone
/// with `--copy --no-audio`.
#[test]
fn chaplin_copy_keeps_or_drops_its_mp3() {
    let Some(src) = shared("host/chaplin.mp4") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, extra, want) in [
        ("with.mp4", &["--copy"][..], vec!["mp3".to_string()]),
        ("without.mp4", &["--copy", "--no-audio"][..], vec![]),
    ] {
        let out = dir.path().join(name);
        vidprep()
            .arg("cut")
            .arg(&src)
            .args(["--start", "2s", "--end", "5s", "-o"])
            .arg(&out)
            .args(extra)
            .assert()
            .success();
        assert_eq!(audio_codecs(&out), want, "{name}");
        assert_eq!(
            sidecar(&out)["output"]["audio"].is_null(),
            want.is_empty(),
            "{name}"
        );
    }
}
