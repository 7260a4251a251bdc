//! One entry per parser of untrusted input, for fuzzing (`fuzz/`, cargo-fuzz) and for the
//! corpus replay test that runs in CI (`tests/reliability/fuzz_replay.rs`). Not part of the library's API.
//!
//! Each [`Target`] feeds bytes to the parser the way a user's file reaches it: annotation
//! files, manifests, `decisions.json`, subtitles, `seqinfo.ini` and `meta_info.ini` are written
//! to a file in a [`Scratch`] folder and read through the same function the doors call (so
//! the error must name that file); time syntax, frame rates, image-folder names, profile
//! options and H.264 headers are parsed from the bytes. [`run`] returns `Err` with what went
//! wrong when the property breaks: an error that does not name the input, or a result that
//! does not round-trip. A panic is the parser's own (the fuzzer and the replay test catch it).
//! Hangs and unbounded memory are caught by the harness (libFuzzer's `-timeout` and
//! `-rss_limit_mb`; the replay test's time bound).

use std::path::{Path, PathBuf};

use crate::annotations::{self, Format, ReadOptions};

/// A parser of untrusted input that can be fuzzed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// MOT `gt.txt` / `det.txt`.
    Mot,
    /// A GOT-10k sequence folder: `groundtruth.txt`, `absence.label`, `cover.label` and
    /// `meta_info.ini`, given as the four files' texts separated by NUL bytes.
    Got10k,
    /// V-STaR benchmark JSON.
    Vstar,
    /// Waymo-style camera boxes (CSV or JSON records).
    Waymo,
    /// Plain CSV or JSON box lists.
    Plain,
    /// vidprep's own annotation JSON.
    Native,
    /// Any annotation file, its format detected (the first byte picks the file name).
    AnnotationsAuto,
    /// A manifest (JSONL or a JSON array of plans).
    Manifest,
    /// The review page's `decisions.json`.
    Decisions,
    /// SubRip or WebVTT subtitles (a frames export's `subtitles`).
    Subtitles,
    /// Time syntax (`150`, `5.0s`, `00:01:05.250`, `75%`), as text and as JSON, and frame rates.
    Time,
    /// The names of an image folder's files, one a line: natural order, numbered runs.
    ImageNames,
    /// MOT's `seqinfo.ini`.
    SeqInfo,
    /// GOT-10k's `meta_info.ini`.
    MetaInfo,
    /// A model profile with its options (`profile_options`), count and fps, over a video.
    ProfileOptions,
    /// H.264 headers: an avcC record, then Annex B packets (SPS, PPS, slice headers).
    H264,
}

impl Target {
    /// Every target, in a fixed order.
    pub const ALL: &'static [Target] = &[
        Target::Mot,
        Target::Got10k,
        Target::Vstar,
        Target::Waymo,
        Target::Plain,
        Target::Native,
        Target::AnnotationsAuto,
        Target::Manifest,
        Target::Decisions,
        Target::Subtitles,
        Target::Time,
        Target::ImageNames,
        Target::SeqInfo,
        Target::MetaInfo,
        Target::ProfileOptions,
        Target::H264,
    ];

    /// The target's name: its fuzz binary (`fuzz/fuzz_targets/<name>.rs`) and corpus folder.
    pub fn name(self) -> &'static str {
        match self {
            Target::Mot => "mot",
            Target::Got10k => "got10k",
            Target::Vstar => "vstar",
            Target::Waymo => "waymo",
            Target::Plain => "plain",
            Target::Native => "native",
            Target::AnnotationsAuto => "annotations_auto",
            Target::Manifest => "manifest",
            Target::Decisions => "decisions",
            Target::Subtitles => "subtitles",
            Target::Time => "time",
            Target::ImageNames => "image_names",
            Target::SeqInfo => "seqinfo",
            Target::MetaInfo => "meta_info",
            Target::ProfileOptions => "profile_options",
            Target::H264 => "h264",
        }
    }

    /// The target named `name`.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.iter().copied().find(|t| t.name() == name)
    }

    /// The seed inputs made from the repository's own fixtures (`root`: the repository).
    pub fn seeds(self, root: &Path) -> Vec<Vec<u8>> {
        let read = |rel: &str| std::fs::read(root.join(rel)).unwrap_or_default();
        let join = |parts: &[&str]| {
            let texts: Vec<Vec<u8>> = parts.iter().map(|p| read(p)).collect();
            texts.join(&0u8)
        };
        let a = "fixtures/annotations";
        match self {
            Target::Mot => vec![
                read(&format!("{a}/mot/gt.txt")),
                read(&format!("{a}/mot/det.txt")),
            ],
            Target::Got10k => vec![
                join(&[
                    &format!("{a}/got10k/seq_a/groundtruth.txt"),
                    &format!("{a}/got10k/seq_a/absence.label"),
                    &format!("{a}/got10k/seq_a/cover.label"),
                    &format!("{a}/got10k/seq_a/meta_info.ini"),
                ]),
                join(&[
                    "fixtures/example/needle/groundtruth.txt",
                    "fixtures/example/needle/absence.label",
                    "fixtures/example/needle/cover.label",
                    "fixtures/example/needle/meta_info.ini",
                ]),
            ],
            Target::Vstar => vec![
                read(&format!("{a}/vstar/bench_keyed_form.json")),
                read(&format!("{a}/vstar/item_list_form.json")),
            ],
            Target::Waymo => vec![
                read(&format!("{a}/waymo/camera_boxes.csv")),
                read(&format!("{a}/waymo/camera_boxes_v2.json")),
            ],
            Target::Plain => vec![
                read(&format!("{a}/plain/boxes.csv")),
                read(&format!("{a}/plain/boxes_normalized.json")),
                read("fixtures/example/track.csv"),
            ],
            Target::Native => vec![read(&format!("{a}/native/example.vidprep.json"))],
            Target::AnnotationsAuto => {
                // The first byte picks the file name (see `auto_name`).
                let mut seeds = Vec::new();
                for (pick, t) in [
                    (0u8, Target::Mot),
                    (1, Target::Plain),
                    (2, Target::Plain),
                    (3, Target::Vstar),
                    (4, Target::Native),
                    (2, Target::Waymo),
                ] {
                    for s in t.seeds(root) {
                        seeds.push([&[pick][..], &s].concat());
                    }
                }
                seeds
            }
            Target::Manifest => vec![
                read("fixtures/example/benchmark.jsonl"),
                read("fixtures/example/events.jsonl"),
            ],
            Target::Decisions => vec![DECISIONS_SEED.as_bytes().to_vec()],
            Target::Subtitles => vec![SRT_SEED.as_bytes().to_vec(), VTT_SEED.as_bytes().to_vec()],
            Target::Time => [
                "150",
                "5s",
                "5.0",
                "00:01:05.250",
                "75%",
                "12.5%",
                "1:2:3",
                "30000/1001",
                "29.97",
                "0.1",
            ]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect(),
            Target::ImageNames => [
                "00000001.jpg\n00000002.jpg\n00000003.jpg",
                "frame_9.png\nframe_10.png\nframe_11.png",
                "a.jpg\nb.jpg\nc.jpg",
                "img%06d.jpg\n1.jpg\n01.jpg",
            ]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect(),
            Target::SeqInfo => vec![SEQINFO_SEED.as_bytes().to_vec()],
            Target::MetaInfo => vec![
                read(&format!("{a}/got10k/seq_a/meta_info.ini")),
                read("fixtures/example/needle/meta_info.ini"),
            ],
            Target::ProfileOptions => PROFILE_SEEDS
                .iter()
                .map(|s| s.as_bytes().to_vec())
                .collect(),
            Target::H264 => vec![h264_seed()],
        }
    }
}

const DECISIONS_SEED: &str = r#"{"version":1,"manifest":"benchmark.jsonl","exported":"2026-01-01T00:00:00Z","items":[{"id":"a","decision":"accept"},{"id":"b","decision":"reject","note":"blurry"},{"id":"c","decision":"adjust","start":"1.5s","end":"00:00:04.000"}]}"#;

const SRT_SEED: &str = "1\n00:00:01,000 --> 00:00:02,500\nHello there\n\n2\n00:00:03,000 --> 00:00:04,000\n<i>Second</i> line\nand more\n";

const VTT_SEED: &str = "WEBVTT\n\n00:01.000 --> 00:02.500 align:start\nHello\n\nnote-id\n00:00:03.000 --> 00:00:04.000\nWorld\n";

const SEQINFO_SEED: &str = "[Sequence]\nname=MOT17-02\nimDir=img1\nframeRate=30\nseqLength=600\nimWidth=1920\nimHeight=1080\nimExt=.jpg\n";

/// `name\ncount\nfps\nframes\nrate\nkey=value...`, one field a line (see [`profile_options`]).
const PROFILE_SEEDS: &[&str] = &[
    "qwen2.5-vl\n\n2\n300\n30\nmin_pixels=3136\nmax_pixels=50176",
    "qwen3-vl\n16\n\n1000\n30000/1001",
    "internvl\n8\n\n250\n25",
    "llava-onevision\n32\n\n90\n24000/1001",
    "lmms-eval\n8\n\n10\n10",
    "vlmevalkit\n\n1\n601\n60",
];

/// An avcC of a 64x64 baseline stream (its SPS and PPS), then an IDR slice's first bytes.
fn h264_seed() -> Vec<u8> {
    let sps: &[u8] = &[
        0x67, 0x42, 0xc0, 0x0a, 0xd9, 0x07, 0x3c, 0x04, 0x40, 0x00, 0x00, 0x03, 0x00, 0x40, 0x00,
        0x00, 0x0c, 0x83, 0xc4, 0x89, 0x92,
    ];
    let pps: &[u8] = &[0x68, 0xcb, 0x83, 0xcb, 0x20];
    let mut avcc = vec![1, sps[1], sps[2], sps[3], 0xff, 0xe1];
    avcc.extend((sps.len() as u16).to_be_bytes());
    avcc.extend(sps);
    avcc.push(1);
    avcc.extend((pps.len() as u16).to_be_bytes());
    avcc.extend(pps);
    let mut out = (avcc.len() as u16).to_be_bytes().to_vec();
    out.extend(avcc);
    for slice in [
        &[0x65u8, 0x88, 0x84, 0x00, 0x33, 0xff][..],
        &[0x41, 0x9a, 0x21, 0x6c, 0x42, 0xbf],
        &[0x41, 0x9a, 0x42, 0x3c, 0x21, 0x93],
    ] {
        out.extend([0, 0, 0, 1]);
        out.extend(slice);
        out.extend([0, 0, 1, 0x09, 0x10]); // an access unit delimiter ends the packet
    }
    out
}

/// The folder the file targets write their input to (one per fuzzing process or test).
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// A fresh folder under the system's temporary folder.
    pub fn new() -> std::io::Result<Scratch> {
        Ok(Scratch {
            dir: tempfile::Builder::new().prefix("vidprep-fuzz-").tempdir()?,
        })
    }

    /// Writes `data` to `name` in the folder and gives its path.
    fn file(&self, name: &str, data: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, data).expect("the scratch folder is writable");
        path
    }

    /// A fresh, empty subfolder `name`.
    fn folder(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("the scratch folder is writable");
        path
    }
}

/// Feeds `data` to `target`'s parser. `Err`: the property broke (the message says how).
pub fn run(target: Target, data: &[u8], scratch: &Scratch) -> Result<(), String> {
    match target {
        Target::Mot => annotation(Format::Mot, scratch.file("gt.txt", data)),
        Target::Got10k => got10k(data, scratch),
        Target::Vstar => annotation(Format::Vstar, scratch.file("vstar.json", data)),
        Target::Waymo => annotation(
            Format::Waymo,
            scratch.file(table_name("camera_boxes", data), data),
        ),
        Target::Plain => annotation(Format::Plain, scratch.file(table_name("boxes", data), data)),
        Target::Native => annotation(Format::Vidprep, scratch.file("boxes.vidprep.json", data)),
        Target::AnnotationsAuto => {
            let (pick, rest) = data.split_first().unwrap_or((&0, &[]));
            annotation(Format::Auto, scratch.file(auto_name(*pick), rest))
        }
        Target::Manifest => manifest(scratch.file("manifest.jsonl", data)),
        Target::Decisions => decisions(scratch.file("decisions.json", data)),
        Target::Subtitles => {
            let path = scratch.file("subtitles.srt", data);
            names_file(
                &path,
                crate::exports::subtitles::Subtitles::load(&path).map(drop),
            )
        }
        Target::Time => time(data),
        Target::ImageNames => image_names(data),
        Target::SeqInfo => {
            let path = scratch.file("seqinfo.ini", data);
            names_file(&path, crate::media::images::read_seqinfo(&path).map(drop))
        }
        Target::MetaInfo => {
            let path = scratch.file("meta_info.ini", data);
            names_file(&path, annotations::got10k::read_meta_info(&path).map(drop))
        }
        Target::ProfileOptions => profile_options(data),
        Target::H264 => h264(data),
    }
}

/// `Ok` when `result` is `Ok` or an error whose text names `path`.
fn names_file<E: std::fmt::Display>(path: &Path, result: Result<(), E>) -> Result<(), String> {
    match result {
        Ok(()) => Ok(()),
        Err(e) => {
            let text = e.to_string();
            if text.contains(&path.display().to_string()) {
                Ok(())
            } else {
                Err(format!(
                    "the error does not name {}: {text}",
                    path.display()
                ))
            }
        }
    }
}

/// A CSV name, or a JSON one when the text is JSON (as a user's file would be named).
fn table_name(stem: &str, data: &[u8]) -> &'static str {
    let json = data
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'[' || *b == b'{');
    match (stem, json) {
        ("boxes", false) => "boxes.csv",
        ("boxes", true) => "boxes.json",
        (_, false) => "camera_boxes.csv",
        (_, true) => "camera_boxes.json",
    }
}

/// The file name auto-detection sees, picked by `pick`.
fn auto_name(pick: u8) -> &'static str {
    [
        "gt.txt",
        "boxes.csv",
        "boxes.json",
        "vstar.json",
        "x.vidprep.json",
        "groundtruth.txt",
    ][pick as usize % 6]
}

fn annotation(format: Format, path: PathBuf) -> Result<(), String> {
    for options in [
        ReadOptions::default(),
        ReadOptions {
            min_confidence: Some(0.5),
            item: Some("#1".into()),
            prefer_keys: annotations::KeyKind::Frame,
            units: annotations::Units::Pixels,
            camera: Some("FRONT".into()),
            frame_count: Some(3),
            span: Some(1..2),
            boxes_only: true,
        },
    ] {
        names_file(&path, annotations::read(&path, format, &options).map(drop))?;
    }
    Ok(())
}

fn got10k(data: &[u8], scratch: &Scratch) -> Result<(), String> {
    let dir = scratch.folder("seq");
    let mut parts = data.splitn(4, |b| *b == 0);
    for name in [
        "groundtruth.txt",
        "absence.label",
        "cover.label",
        "meta_info.ini",
    ] {
        if let Some(part) = parts.next() {
            std::fs::write(dir.join(name), part).expect("the scratch folder is writable");
        }
    }
    let result = annotations::read(&dir, Format::Got10k, &ReadOptions::default()).map(drop);
    match &result {
        // A label file's or meta_info's error names that file, which is in the folder.
        Err(e) if e.to_string().contains(&dir.display().to_string()) => Ok(()),
        _ => names_file(&dir, result),
    }
}

fn manifest(path: PathBuf) -> Result<(), String> {
    match crate::batch::manifest::read_manifest(&path) {
        Ok(m) => {
            for bad in &m.bad {
                let text = bad.error.to_string();
                if !text.contains(&path.display().to_string()) {
                    return Err(format!(
                        "line {}: the error does not name {}: {text}",
                        bad.line,
                        path.display()
                    ));
                }
            }
            // A good plan round-trips through its JSON as the same plan.
            for item in &m.items {
                let plan = item.plan.plan();
                let json = serde_json::to_string(plan).map_err(|e| e.to_string())?;
                let again: crate::plan::Plan = serde_json::from_str(&json).map_err(|e| {
                    format!(
                        "line {}: the plan's JSON does not read back: {e}: {json}",
                        item.line
                    )
                })?;
                if serde_json::to_string(&again).map_err(|e| e.to_string())? != json {
                    return Err(format!(
                        "line {}: the plan does not round-trip: {json}",
                        item.line
                    ));
                }
            }
            Ok(())
        }
        Err(e) => names_file(&path, Err(e)),
    }
}

fn decisions(path: PathBuf) -> Result<(), String> {
    names_file(
        &path,
        crate::review::decisions::Decisions::read(&path).map(drop),
    )
}

fn time(data: &[u8]) -> Result<(), String> {
    use crate::vocab::time::TimeSpec;
    let text = String::from_utf8_lossy(data);
    if let Ok(spec) = TimeSpec::parse(&text) {
        let again = TimeSpec::parse(&spec.to_text()).map_err(|e| {
            format!(
                "{text:?} reads as {spec:?}, whose text {:?} does not read: {e}",
                spec.to_text()
            )
        })?;
        if again != spec {
            return Err(format!(
                "{text:?} reads as {spec:?} but its text {:?} as {again:?}",
                spec.to_text()
            ));
        }
    }
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = TimeSpec::from_json(&value);
    }
    if let Ok(rate) = text.parse::<crate::vocab::FrameRate>() {
        let again = rate.to_string().parse::<crate::vocab::FrameRate>();
        if again != Ok(rate) {
            return Err(format!(
                "frame rate {text:?} reads as {rate}, which reads as {again:?}"
            ));
        }
    }
    Ok(())
}

fn image_names(data: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(data);
    // A pattern is a path (`dir/%06d.jpg`).
    for line in text.lines().take(64) {
        let _ = crate::media::images::printf_pattern(Path::new(line));
    }
    crate::media::images::check_names(text.lines().take(4096).map(str::to_string).collect());
    Ok(())
}

/// `name`, `count`, `fps`, the video's frame count (at most a million) and rate, then
/// `key=value` options, one a line.
fn profile_options(data: &[u8]) -> Result<(), String> {
    use crate::profiles::{ContainerFacts, ProfileInput, ProfileRequest};
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    let name = lines.next().unwrap_or_default();
    let Some(profile) = crate::profiles::find(name.trim()) else {
        return Ok(());
    };
    let count = lines.next().and_then(|l| l.trim().parse::<usize>().ok());
    let fps = lines.next().and_then(|l| l.trim().parse::<f64>().ok());
    let frames = lines
        .next()
        .and_then(|l| l.trim().parse::<usize>().ok())
        .unwrap_or(1)
        .min(1_000_000);
    let rate = lines
        .next()
        .and_then(|l| l.trim().parse::<crate::vocab::FrameRate>().ok());
    let (num, den) = rate.map_or((30, 1), |r| (r.as_time().numer(), r.as_time().denom()));
    let mut options = std::collections::BTreeMap::new();
    for line in lines.take(16) {
        if let Some((k, v)) = line.split_once('=') {
            if let Ok(v) = v.trim().parse::<f64>() {
                options.insert(k.trim().to_string(), v);
            }
        }
    }
    let request = ProfileRequest {
        count,
        fps,
        options,
    };
    if crate::profiles::check_request(profile, &request).is_err() {
        return Ok(());
    }
    let video = crate::profiles::sampling::ConstantRate::new(frames, num, den);
    let input = ProfileInput {
        frames: &video,
        width: 1280,
        height: 720,
        container: ContainerFacts {
            path: Path::new("video.mp4"),
            header_frames: frames as u64,
            average_rate: Some((num, den)),
        },
    };
    if let Ok(applied) = crate::profiles::apply(profile, &input, &request) {
        if let Some(i) = applied.indices.iter().find(|i| **i >= frames) {
            return Err(format!("{name}: frame {i} chosen of a video of {frames}"));
        }
    }
    Ok(())
}

/// Two bytes (big-endian) give the avcC's length; the avcC; then Annex B NAL units, a packet
/// ending at each access unit delimiter.
fn h264(data: &[u8]) -> Result<(), String> {
    use crate::media::bitstream::h264::{self, AvcC, Sps};
    if data.len() < 2 {
        return Ok(());
    }
    let len = u16::from_be_bytes([data[0], data[1]]) as usize;
    let (avcc, rest) = data[2..].split_at(len.min(data.len() - 2));
    let nals = h264::split_annexb(rest);
    for nal in &nals {
        match h264::nal_type(nal) {
            7 => drop(Sps::parse(nal)),
            8 => drop(h264::pps_ids(nal)),
            _ => {}
        }
    }
    for size in [1, 2, 4] {
        let _ = h264::split_length_prefixed(rest, size);
    }
    if let Ok(avcc) = AvcC::parse(avcc) {
        let mut analyser = crate::media::bitstream::h264_refs::Analyser::new(&avcc);
        for (pts, packet) in nals.split(|nal| h264::nal_type(nal) == 9).enumerate() {
            analyser.packet(pts as i64, packet);
        }
        let _ = analyser.finish();
        let bytes = avcc.to_bytes();
        let again =
            AvcC::parse(&bytes).map_err(|e| format!("the avcC written does not read back: {e}"))?;
        if again.to_bytes() != bytes {
            return Err("the avcC does not round-trip".into());
        }
    }
    Ok(())
}
