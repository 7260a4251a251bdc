//! The newer doors: model profiles (`--profile`, `--profile-option`), keyframe tracking
//! (`--fill track`, `vidprep track`), `vidprep parity` with a missing or broken Python, and
//! what goes beside the frames (`--label`, `--subtitles`, `--audio`).

use super::*;

fn profile_case(name: &str, options: &[&str], code: i32, says: &str) -> Case {
    let mut args = vec!["export", "frames", "g.mp4", "--out-dir", "ex"];
    args.extend_from_slice(options);
    case(name, &args, &[code]).says(says)
}

cases!(profile_case:
    profile_unknown => ("unknown profile", &["--profile", "qwen9"], 2, "unknown profile \"qwen9\"; known profiles: qwen2.5-vl"),
    profile_option_not_a_number => ("option not a number", &["--profile", "qwen2.5-vl", "--profile-option", "min_pixels=abc"], 2, "must be a number, found \"abc\""),
    profile_option_without_value => ("option without a value", &["--profile", "qwen2.5-vl", "--profile-option", "min_pixels"], 2, "expected KEY=NUMBER"),
    profile_option_unknown => ("unknown option", &["--profile", "qwen2.5-vl", "--profile-option", "bogus=5"], 2, "has no option \"bogus\"; it takes video_start"),
    profile_option_nan => ("option nan", &["--profile", "qwen2.5-vl", "--profile-option", "max_pixels=nan"], 2, "\"max_pixels\" must be a finite number"),
    profile_option_inf => ("option inf", &["--profile", "qwen3-vl", "--profile-option", "total_pixels=inf"], 2, "\"total_pixels\" must be a finite number"),
    profile_option_without_profile => ("option without a profile", &["--profile-option", "min_pixels=5"], 2, "--profile"),
    profile_option_negative => ("negative max_pixels", &["--profile", "qwen2.5-vl", "--profile-option", "max_pixels=-5"], 1, "max_pixels (-5) >= min_pixels"),
    profile_option_huge_min_pixels => ("huge min_pixels", &["--profile", "qwen2.5-vl", "--profile-option", "min_pixels=1e30"], 1, "lower the profile's min_pixels"),
    profile_option_start_past_end => ("video_start past the end", &["--profile", "qwen2.5-vl", "--profile-option", "video_start=100"], 1, "Invalid time range"),
);

fn fill_case(name: &str, fill: &str, says: &str) -> Case {
    case(
        name,
        &[
            "overlay",
            "g.mp4",
            "--boxes",
            "boxes.csv",
            "--fill",
            fill,
            "-o",
            "o.mp4",
        ],
        &[2],
    )
    .says(says)
}

cases!(fill_case:
    fill_unknown_tracker => ("unknown tracker", "track-mil", "unknown fill \"track-mil\"; expected linear, cubic, hold, none, track"),
    fill_tracker_missing => ("tracker name missing", "track:", "unknown fill \"track:\""),
    fill_misspelt => ("misspelt fill", "tracking", "track-kcf"),
);

#[test]
fn fill_unknown_tracker_in_a_manifest() {
    check(
        case(
            "unknown tracker in a manifest",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[1, 2],
        )
        .says("unknown fill \"track-mil\"")
        .writes("out")
        .with(|d| {
            manifest(
                d,
                "m.jsonl",
                &[r#"{"id": "a", "source": "g.mp4", "boxes": {"path": "boxes.csv", "fill": "track-mil"}, "exports": [{"kind": "clip", "preset": "ultrafast"}]}"#.to_string()],
            )
        }),
    );
}

/// `vidprep track g.mp4 --boxes KEYS -o OUT` (KCF: fast), with `keys` written first when given.
fn track_case(
    name: &str,
    keys: &'static str,
    body: Option<&'static str>,
    out: &str,
    code: i32,
    says: &str,
) -> Case {
    let c = case(
        name,
        &[
            "track",
            "g.mp4",
            "--boxes",
            keys,
            "--fill",
            "track-kcf",
            "-o",
            out,
        ],
        &[code],
    )
    .says(says);
    let c = if code == 0 { c.writes(out) } else { c };
    match body {
        Some(body) => c.with(move |d| std::fs::write(d.join(keys), body).unwrap()),
        None => c,
    }
}

cases!(track_case:
    track_keys_broken_json => ("keys not JSON", "k.json", Some("{\"vidprep_annotations\": 1, \"tracks\": [\n"), "o.json", 1, "k.json line 2"),
    track_keys_ragged_csv => ("keys ragged csv", "k.csv", Some("frame,track_id,x1,y1,x2,y2\n0,1,10,10\n"), "o.json", 1, "k.csv line 2: expected 6 comma-separated values"),
    track_keys_no_format => ("keys of no format", "k.json", Some("{}\n"), "o.json", 1, "k.json: cannot tell the annotation format"),
    track_keys_missing => ("keys missing", "nope.json", None, "o.json", 1, "nope.json"),
    track_keys_past_the_source => ("keys past the source", "k.json", Some(r#"{"vidprep_annotations": 1, "coords": "pixels", "tracks": [{"id": "1", "keys": [{"frame": 500, "box": [10, 10, 50, 50]}]}]}"#), "o.json", 1, "k.json: every key is on frame 500 or later, but g.mp4 has 40 frames (0..=39)"),
    track_output_is_the_source => ("output is the source", "boxes.csv", None, "g.mp4", 2, "output g.mp4 is the input g.mp4: refusing to overwrite an input"),
    track_output_is_the_keys => ("output is the keys", "boxes.csv", None, "./boxes.csv", 2, "output ./boxes.csv is the input boxes.csv: refusing to overwrite an input"),
    track_output_is_a_folder => ("output is a folder", "boxes.csv", None, "seq", 2, "seq exists and is a folder; refusing to replace it with a file"),
);

#[test]
fn track_keys_partly_past_the_source() {
    // Any fill (this one needs no tracker, so a build without OpenCV runs it too).
    check(
        case(
            "keys partly past the source",
            &["track", "g.mp4", "--boxes", "k.json", "--fill", "linear", "-o", "o.json"],
            &[0],
        )
        .says("k.json: 1 key(s) from frame 500 on are past the frames tracked")
        .writes("o.json")
        .with(|d| {
            std::fs::write(
                d.join("k.json"),
                r#"{"vidprep_annotations": 1, "coords": "pixels", "tracks": [{"id": "1", "keys": [{"frame": 5, "box": [10, 10, 50, 50]}, {"frame": 500, "box": [10, 10, 50, 50]}]}]}"#,
            )
            .unwrap()
        }),
    );
}

#[cfg(feature = "tracking")]
#[test]
fn track_key_box_outside_the_frame() {
    check(track_case(
        "key box outside the frame",
        "k.json",
        Some(
            r#"{"vidprep_annotations": 1, "coords": "pixels", "tracks": [{"id": "1", "keys": [{"frame": 5, "box": [1000, 1000, 1050, 1050]}]}]}"#,
        ),
        "o.json",
        0,
        "were not tracked (no boxes): a key's box is outside the frame",
    ));
}

#[test]
fn track_output_someone_elses_file() {
    check(
        track_case(
            "output someone else's file",
            "boxes.csv",
            None,
            "theirs.json",
            2,
            "theirs.json exists and was not written by `vidprep track`",
        )
        .with(|d| std::fs::write(d.join("theirs.json"), "{\"mine\": true}\n").unwrap()),
    );
}

#[test]
fn track_end_before_every_key() {
    check(
        case(
            "end before every key",
            &[
                "track",
                "g.mp4",
                "--boxes",
                "boxes.csv",
                "--end",
                "0",
                "-o",
                "o.json",
            ],
            &[1],
        )
        .says("boxes.csv: every key is on frame 0 or later, but tracking stops before frame 0"),
    );
}

/// `vidprep parity g.mp4 --profile qwen2.5-vl --python PY --out rec.json`, where `py.sh` (when
/// `script` is given) stands in for Python.
fn parity_case(name: &str, python: &str, script: Option<&'static str>, says: &str) -> Case {
    let c = case(
        name,
        &[
            "parity",
            "g.mp4",
            "--profile",
            "qwen2.5-vl",
            "--count",
            "4",
            "--python",
            python,
            "--out",
            "rec.json",
        ],
        &[1],
    )
    .says(says);
    match script {
        Some(body) => c.with(move |d| {
            use std::os::unix::fs::PermissionsExt;
            let path = d.join("py.sh");
            std::fs::write(&path, body).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }),
        None => c,
    }
}

cases!(parity_case:
    parity_python_missing => ("python missing", "./no-such-python", None, "cannot run the Python interpreter ./no-such-python (install Python 3 with the package, or name one with --python or VIDPREP_PYTHON)"),
    parity_python_not_executable => ("python not executable", "g.mp4", None, "cannot run the Python interpreter g.mp4"),
    parity_python_fails => ("python fails", "./py.sh", Some("#!/bin/sh\necho 'Traceback: boom' >&2\nexit 1\n"), "the package failed on this video"),
    parity_python_package_missing => ("package missing", "./py.sh", Some("#!/bin/sh\necho 'parity: qwen-vl-utils is not installed' >&2\nexit 3\n"), "is not installed (install it there, or name another interpreter"),
    parity_python_writes_nothing => ("python writes nothing", "./py.sh", Some("#!/bin/sh\nexit 0\n"), "the parity runner wrote no result.json: is ./py.sh a working Python 3"),
    parity_python_writes_garbage => ("python writes garbage", "./py.sh", Some("#!/bin/sh\nmkdir -p \"$4\"\necho 'not json' > \"$4/result.json\"\n: > \"$4/frames.u8\"\n"), "result.json is not JSON"),
    parity_python_short_frames => ("python short frames", "./py.sh", Some("#!/bin/sh\nmkdir -p \"$4\"\necho '{\"shape\": [4, 1000, 1000, 3], \"indices\": [0, 13, 26, 39]}' > \"$4/result.json\"\nprintf 'ab' > \"$4/frames.u8\"\n"), "frames.u8 has 2 bytes, but its result.json gives the shape [4, 1000, 1000, 3]"),
);

#[test]
fn parity_python_frames_of_our_shape_but_short() {
    // The runner claims the very shape vidprep's side has (read from an export of the same
    // profile), then writes too few bytes: refused, not a slice out of bounds.
    check(
        parity_case(
            "python frames of our shape but short",
            "./py.sh",
            None,
            "frames.u8 has 2 bytes",
        )
        .with(|d| {
            use std::os::unix::fs::PermissionsExt;
            let scratch = tempfile::tempdir().unwrap();
            let ex = scratch.path().join("ex");
            vidprep()
                .current_dir(d)
                .args(["export", "frames", "g.mp4", "--profile", "qwen2.5-vl", "--count", "4", "--out-dir"])
                .arg(&ex)
                .assert()
                .success();
            let facts: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(ex.join("frames.json")).unwrap())
                    .unwrap();
            let (w, h) = (
                facts["profile"]["width"].as_u64().or(facts["width"].as_u64()).unwrap_or_else(|| panic!("no size in {facts:#}")),
                facts["profile"]["height"].as_u64().or(facts["height"].as_u64()).unwrap(),
            );
            let script = format!(
                "#!/bin/sh\nmkdir -p \"$4\"\necho '{{\"shape\": [4, {h}, {w}, 3], \"indices\": [0, 13, 26, 39]}}' > \"$4/result.json\"\nprintf 'ab' > \"$4/frames.u8\"\n"
            );
            let path = d.join("py.sh");
            std::fs::write(&path, script).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }),
    );
}

#[test]
fn parity_unknown_profile() {
    check(
        case(
            "parity unknown profile",
            &[
                "parity",
                "g.mp4",
                "--profile",
                "qwen9",
                "--python",
                "./no-such-python",
            ],
            &[2],
        )
        .says("unknown profile \"qwen9\""),
    );
}

/// `vidprep export frames g.mp4 --out-dir ex OPTIONS` with `subs.srt` holding `body` when given.
fn beside_case(
    name: &str,
    options: &[&str],
    body: Option<&'static str>,
    code: i32,
    says: &str,
) -> Case {
    let mut args = vec!["export", "frames", "g.mp4", "--out-dir", "ex"];
    args.extend_from_slice(options);
    let c = case(name, &args, &[code]).says(says);
    match body {
        Some(body) => c.with(move |d| std::fs::write(d.join("subs.srt"), body).unwrap()),
        None => c,
    }
}

cases!(beside_case:
    label_unknown => ("unknown label", &["--label", "bogus"], None, 2, "unknown label \"bogus\"; expected frame"),
    subtitles_missing => ("subtitles file missing", &["--subtitles", "missing.srt"], None, 1, "missing.srt"),
    subtitles_not_text => ("subtitles not UTF-8", &["--subtitles", "g.mp4"], None, 1, "is not UTF-8 text"),
    subtitles_without_a_cue => ("subtitles with no cue", &["--subtitles", "subs.srt"], Some("1\nat one second\nhi\n"), 1, "subs.srt: holds no subtitle cue"),
    subtitles_broken_timing => ("subtitles broken timing", &["--subtitles", "subs.srt"], Some("1\n00:00:01,000 --> 00:00:0x,000\nhi\n"), 1, "subs.srt line 2: cannot read the cue timing"),
    subtitles_backwards => ("subtitles ending before they start", &["--subtitles", "subs.srt"], Some("1\n00:00:02,000 --> 00:00:01,000\nhi\n"), 1, "ends (1000 ms) before it starts"),
    audio_to_anthropic => ("audio in an Anthropic payload", &["--audio", "--payload", "anthropic"], None, 2, "Anthropic's Messages API takes no audio"),
);
