//! The plan's checks that need no media ([`Plan::check`], [`validate_id`]): a folder-safe id,
//! a span of frames or times (no percentages), exactly one insertion position, unique and
//! unreserved export names, numbers in range. Each message says what is wrong and what was
//! expected.

use super::schema::{ExportSpec, Plan};
use super::{FramesExport, ImageFormat};
use crate::profiles::sampling::{Order, Sampler};
use crate::vocab::time::TimeSpec;

/// Names an export may not have (they are taken by files every item folder holds).
const RESERVED_EXPORT_NAMES: [&str; 2] = ["item", "report"];

/// Checks that `id` can name a folder: not empty, no slashes or control characters, not
/// starting with a dot, and short enough for file systems.
pub fn validate_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("the id is empty".into());
    }
    if id.starts_with('.') {
        return Err(format!(
            "id {id:?} may not start with '.' (it must be usable as a file name)"
        ));
    }
    if id.chars().any(|c| c == '/' || c == '\\' || c.is_control()) {
        return Err(format!(
            "id {id:?} must be usable as a file name (no slashes or control characters)"
        ));
    }
    if id.len() > 200 {
        return Err(format!(
            "id is {} bytes long; at most 200 bytes (it names a folder)",
            id.len()
        ));
    }
    if id.starts_with("report.") || id.starts_with("report-") || id == "report" {
        return Err(format!(
            "id {id:?} is reserved: the batch report is written beside the item folders"
        ));
    }
    Ok(())
}
impl Plan {
    /// Checks everything that needs no media; the message says what is wrong and what was
    /// expected.
    pub fn check(&self) -> Result<(), String> {
        validate_id(&self.id)?;
        if self.source.as_os_str().is_empty() {
            return Err("\"source\" is empty; expected a video path".into());
        }
        self.check_paths()?;
        let (start, end) = self.span();
        for (key, t) in [("start", start), ("end", end)] {
            if matches!(t, Some(TimeSpec::Percent(_))) {
                return Err(format!(
                    "\"{key}\": a percentage is only allowed for a decision point or an insertion point"
                ));
            }
        }
        let opts = self.box_options();
        if self.boxes.is_some() {
            check_fill(opts.fill)?;
        }
        if let Some(c) = opts.min_confidence {
            if !c.is_finite() {
                return Err(format!("\"min_confidence\" must be a number, found {c}"));
            }
        }
        if opts.thickness.is_some_and(|t| t == 0 || t > 256) {
            return Err("\"thickness\" must be 1..256 pixels".into());
        }
        if let Some(ins) = &self.insert {
            if ins.at.is_some() == ins.seed.is_some() {
                return Err(
                    "\"insert\" needs exactly one of \"at\" (a time) or \"seed\" (a number)".into(),
                );
            }
        }
        if self.exports.is_empty() {
            return Err("\"exports\" must be a non-empty list of exports".into());
        }
        let mut names = std::collections::HashSet::new();
        for (i, e) in self.exports.iter().enumerate() {
            let here = |m: String| format!("exports[{i}] ({}): {m}", e.name());
            let name = e.name();
            validate_export_name(name).map_err(&here)?;
            if !names.insert(name.to_string()) {
                return Err(here(format!(
                    "the name {name:?} is used twice; give each export its own \"name\""
                )));
            }
            check_export(e, self).map_err(here)?;
        }
        Ok(())
    }
}

impl Plan {
    /// The part of [`Plan::check`] about paths: the source, boxes and needle are UTF-8 (they
    /// are written into sidecars and reports).
    pub(super) fn check_paths(&self) -> Result<(), String> {
        let mut named = vec![("\"source\"", &self.source)];
        if let Some(b) = &self.boxes {
            named.push(("\"boxes\"", &b.path));
        }
        if let Some(i) = &self.insert {
            named.push(("\"insert\".\"sequence\"", &i.sequence));
        }
        for (role, path) in named {
            crate::error::require_utf8(path, role).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

fn validate_export_name(name: &str) -> Result<(), String> {
    validate_id(name).map_err(|e| e.replace("id", "export name"))?;
    if RESERVED_EXPORT_NAMES.contains(&name) {
        return Err(format!(
            "the export name {name:?} is reserved ({name}.json records the item)"
        ));
    }
    Ok(())
}

/// A tracker fill needs a build with the `tracking` feature (OpenCV); without it the plan is
/// refused here, before any media is opened, rather than at the boxes stage.
fn check_fill(fill: crate::annotations::Fill) -> Result<(), String> {
    #[cfg(not(feature = "tracking"))]
    if let crate::annotations::Fill::Track(kind) = fill {
        return Err(format!(
            "\"fill\": \"{fill}\" runs OpenCV's {} tracker, and this vidprep was built \
             without the tracking feature: install OpenCV 4.6+ (apt-get install libopencv-dev \
             libopencv-contrib-dev clang libclang-dev) and build with `cargo build --features \
             tracking`, or fill with \"cubic\" or \"linear\" instead",
            kind.name().to_uppercase()
        ));
    }
    #[cfg(feature = "tracking")]
    let _ = fill;
    Ok(())
}

/// The explicit frames (`frames`) and the package's frames (`follow_package`): one way to
/// choose the frames, a list of at least one frame and at most any video's, the explicit
/// sampler only with a list, and a parity record only of the whole source.
fn check_given_frames(f: &FramesExport, plan: &Plan) -> Result<(), String> {
    let explicit = crate::profiles::sampling::explicit_sampler();
    match &f.frames {
        Some(list) => {
            let other: Vec<&str> = [
                ("\"count\"", f.count.is_some()),
                ("\"fps\"", f.fps.is_some()),
                ("\"max_frames\"", f.max_frames.is_some()),
                ("\"follow_package\"", f.follow_package.is_some()),
            ]
            .into_iter()
            .filter_map(|(k, given)| given.then_some(k))
            .collect();
            if !other.is_empty() {
                return Err(format!(
                    "\"frames\" names the frames; drop {} (give the frames, a count or an fps, \
                     not more than one{})",
                    other.join(" and "),
                    if f.follow_package.is_some() {
                        "; with \"follow_package\" the parity record gives the frames"
                    } else {
                        ""
                    }
                ));
            }
            if list.is_empty() {
                return Err(
                    "\"frames\" lists no frame; give at least one source frame index (0-based)"
                        .into(),
                );
            }
            let most = crate::vocab::MAX_FRAMES;
            if list.len() > most {
                return Err(format!(
                    "\"frames\" lists {} frames; at most {most} (a 24-hour video at 240 fps)",
                    list.len()
                ));
            }
            if f.sampler != Sampler::default() && f.sampler != explicit {
                return Err(format!(
                    "\"frames\" are the explicit sampler's; drop \"sampler\" ({}), which picks \
                     frames by a count or an fps",
                    f.sampler
                ));
            }
        }
        None if f.sampler == explicit => {
            return Err("the explicit sampler takes the frames given: add \"frames\" (source frame indices, e.g. [0, 5, 17]) or name another sampler".into());
        }
        None => {}
    }
    if f.follow_package.is_some() {
        let (start, end) = plan.span();
        if start.is_some() || end.is_some() || plan.decision.is_some() || plan.insert.is_some() {
            return Err(
                "\"follow_package\": a parity record compares the whole source, so \
                        the export must be of the whole source too; drop the span (\"start\", \
                        \"end\"), \"decision\" and \"insert\""
                    .into(),
            );
        }
    }
    Ok(())
}

fn check_preset(preset: &Option<String>) -> Result<(), String> {
    if let Some(p) = preset {
        if !crate::vocab::X264_PRESETS.contains(&p.as_str()) {
            return Err(format!(
                "unknown x264 preset {p:?}; expected one of {}",
                crate::vocab::X264_PRESETS.join(", ")
            ));
        }
    }
    Ok(())
}

fn check_export(e: &ExportSpec, plan: &Plan) -> Result<(), String> {
    let boxes_out = match e {
        ExportSpec::Clip(c) => c.boxes_out,
        ExportSpec::Video(v) => v.boxes_out,
        ExportSpec::Frames(_) | ExportSpec::Preview(_) => None,
    };
    if boxes_out.is_some() && plan.boxes.is_none() && plan.insert.is_none() {
        return Err("\"boxes_out\" needs boxes (an annotation file) or an insertion".into());
    }
    match e {
        ExportSpec::Clip(c) => {
            if let Some(crf) = c.crf {
                if !(0.0..=51.0).contains(&crf) {
                    return Err(format!("\"crf\" must be a number in 0..51, found {crf}"));
                }
            }
            check_preset(&c.preset)?;
            if let Some(container) = &c.container {
                if !["mp4", "mov", "mkv"].contains(&container.as_str()) {
                    return Err(format!(
                        "\"container\" must be mp4, mov or mkv, found {container:?}"
                    ));
                }
            }
            if c.smart && c.copy {
                return Err("give `smart` (copy whole GOPs, re-encode the edges: exact frames) or `copy` (whole GOPs only: the span snaps to keyframes), not both".into());
            }
            if c.verify && !c.smart {
                return Err(
                    "`verify` checks a smart clip's copied and re-encoded frames; add `smart`"
                        .into(),
                );
            }
            if c.copy {
                if plan.decision.is_some() {
                    return Err("a copied clip (`copy`) keeps whole GOPs, which could show frames after the decision point; drop `copy` to re-encode it".into());
                }
                if plan.insert.is_some() {
                    return Err(
                        "a copied clip (`copy`) cannot hold an insertion; drop `copy` to re-encode it".into(),
                    );
                }
                if plan.boxes.is_some() && plan.box_options().draw {
                    return Err("a copied clip (`copy`) cannot have boxes drawn on it; drop `copy` to re-encode it, or carry the boxes without drawing them (`no_draw`)".into());
                }
                if c.crf.is_some() || c.preset.is_some() {
                    return Err(
                        "a copied clip (`copy`) is not encoded: `crf` and `preset` do not apply"
                            .into(),
                    );
                }
            }
            Ok(())
        }
        ExportSpec::Video(v) => {
            check_preset(&v.preset)?;
            if let Some(m) = v.max_base64_bytes.filter(|&m| m < 64) {
                return Err(format!(
                    "\"max_base64_bytes\" {m} is too small to hold any video"
                ));
            }
            let preset = v.limits.unwrap_or_default().preset();
            if let (Some(asked), Some(request)) = (v.max_base64_bytes, preset.max_request_bytes) {
                if asked > request {
                    return Err(format!(
                        "\"max_base64_bytes\" {asked} is more than the {} limits allow a whole request ({request} bytes): drop it or lower it",
                        preset.name
                    ));
                }
            }
            Ok(())
        }
        ExportSpec::Preview(p) => {
            if !(0.0..=51.0).contains(&p.crf) {
                return Err(format!(
                    "\"crf\" must be a number in 0..51, found {}",
                    p.crf
                ));
            }
            if !(1..=1000).contains(&p.gop) {
                return Err(format!("\"gop\" must be 1..1000 frames, found {}", p.gop));
            }
            if p.max_size.0 < 16 || p.max_size.1 < 16 {
                return Err(format!(
                    "\"max_size\" {} is too small for a preview (at least 16x16)",
                    p.max_size
                ));
            }
            Ok(())
        }
        ExportSpec::Frames(f) => {
            if f.count.is_some() && f.fps.is_some() {
                return Err("give \"count\" or \"fps\", not both".into());
            }
            check_given_frames(f, plan)?;
            if let Some(name) = &f.profile {
                let profile =
                    crate::profiles::find(name).ok_or_else(|| crate::profiles::unknown(name))?;
                // `allow_repeats` stays: it lets a profile whose package repeats frames keep
                // its repeats, as the samplers do.
                // (The explicit sampler comes with `frames`, checked above.)
                let sampler_given = f.sampler != Sampler::default()
                    && f.sampler != crate::profiles::sampling::explicit_sampler();
                if sampler_given || f.max_size.is_some() || f.max_frames.is_some() {
                    return Err(format!(
                        "profile {name} picks the frames and their size as its package does; drop \"sampler\", \"max_size\" and \"max_frames\" (the package's own max_frames is a profile option)"
                    ));
                }
                if profile.encoding().is_some()
                    && (f.format != ImageFormat::Jpg
                        || f.quality != FramesExport::default().quality
                        || f.order != Order::Ordered)
                {
                    return Err(format!(
                        "profile {name} writes its frames as its package does (the names in the package's order, JPEG as Pillow saves it: quality 75, 4:2:0); drop \"format\", \"quality\" and \"order\""
                    ));
                }
                crate::profiles::check_request(profile, &f.profile_request())?;
            } else if !f.profile_options.is_empty() {
                return Err("\"profile_options\" go with \"profile\"".into());
            } else if f.follow_package.is_some() {
                return Err("\"follow_package\" goes with \"profile\": the parity record is of a profile and the package it mirrors (vidprep parity SRC --profile P --out RECORD.json)".into());
            }
            if f.max_frames.is_some() && f.fps.is_none() {
                return Err("\"max_frames\" goes with \"fps\"".into());
            }
            if let Some(fps) = f.fps {
                if !(fps.is_finite() && fps > 0.0) {
                    return Err(format!("\"fps\" must be a positive number, found {fps}"));
                }
            }
            if f.count == Some(0) || f.max_frames == Some(0) {
                return Err("a frame count must be at least 1".into());
            }
            // More images than any video vidprep reads has frames: refused here, before a
            // sampler or a profile sizes its list of indices by it.
            let most = crate::vocab::MAX_FRAMES;
            if let Some(n) = f
                .count
                .filter(|n| *n > most)
                .or(f.max_frames.filter(|n| *n > most))
            {
                return Err(format!(
                    "a frame count must be at most {most} (a 24-hour video at 240 fps), found {n}"
                ));
            }
            if !(1..=100).contains(&f.quality) {
                return Err(format!("\"quality\" must be 1..100, found {}", f.quality));
            }
            if f.payload == Some(crate::plan::Payload::Vllm)
                && f.format != crate::plan::ImageFormat::Jpg
            {
                return Err("the vllm payload sends the frames as vLLM's video/jpeg list: use \"format\": \"jpg\" (--format jpg)".into());
            }
            if f.audio && f.payload == Some(crate::plan::Payload::Anthropic) {
                return Err("Anthropic's Messages API takes no audio: drop \"audio\" or use the openai or gemini payload".into());
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Plan, String> {
        let plan: Plan = serde_json::from_str(text).map_err(|e| e.to_string())?;
        plan.check()?;
        Ok(plan)
    }

    /// Found by the `profile_options` fuzz target (`VIDPREP_FUZZ_MUTATIONS=10000
    /// VIDPREP_FUZZ_SEED=1`): internvl with `count` 21474836480 sized its index list by it,
    /// and the allocation of 171798691904 bytes aborted the process. A count past the most
    /// frames a video may have is refused by the check, with or without a profile.
    #[test]
    fn a_frame_count_past_any_video_is_refused() {
        for extra in [
            "",
            r#", "profile": "internvl""#,
            r#", "allow_repeats": true"#,
        ] {
            let e = parse(&format!(
                r#"{{"id": "a", "source": "v.mp4", "exports": [{{"kind": "frames", "count": 21474836480{extra}}}]}}"#
            ))
            .unwrap_err();
            assert!(e.contains("at most 20736000"), "{extra}: {e}");
        }
        let e = parse(
            r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "frames", "fps": 1, "max_frames": 99999999999}]}"#,
        )
        .unwrap_err();
        assert!(e.contains("at most 20736000"), "{e}");
        let e = parse(
            r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "frames", "profile": "lmms-eval", "profile_options": {"num_frm": 1e15}}]}"#,
        )
        .unwrap_err();
        assert!(e.contains("20736000"), "{e}");
        parse(
            r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "frames", "count": 20736000}]}"#,
        )
        .unwrap();
    }

    /// Without the `tracking` feature a tracker fill is refused by the plan check (exit 2
    /// through `Error::Usage`), naming how to build it; the other fills pass. (The end-to-end
    /// tests run with the feature, so this is the test of a build without it:
    /// `cargo test --lib plan::check` without `--features tracking`.)
    #[cfg(not(feature = "tracking"))]
    #[test]
    fn a_tracker_fill_needs_the_tracking_feature() {
        for fill in ["track", "track-kcf"] {
            let e = parse(&format!(
                r#"{{"id": "a", "source": "v.mp4", "boxes": {{"path": "b.json", "fill": "{fill}"}}, "exports": [{{"kind": "clip"}}]}}"#
            ))
            .unwrap_err();
            assert!(e.contains("--features tracking"), "{e}");
            assert!(e.contains(fill), "{e}");
        }
        parse(r#"{"id": "a", "source": "v.mp4", "boxes": {"path": "b.json", "fill": "cubic"}, "exports": [{"kind": "clip"}]}"#).unwrap();
    }

    /// With the feature the same plan passes the check.
    #[cfg(feature = "tracking")]
    #[test]
    fn a_tracker_fill_passes_the_check_with_the_feature() {
        parse(r#"{"id": "a", "source": "v.mp4", "boxes": {"path": "b.json", "fill": "track-kcf"}, "exports": [{"kind": "clip"}]}"#).unwrap();
    }

    #[test]
    fn mistakes_are_refused_with_what_was_expected() {
        let err = |t: &str| parse(t).unwrap_err();
        assert!(err(r#"{"id": "a", "source": "v.mp4", "colour": "red"}"#)
            .contains("unknown field `colour`"));
        assert!(
            err(r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "gif"}]}"#)
                .contains("unknown variant `gif`")
        );
        assert!(err(r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "frames", "sampler": "decord"}]}"#).contains("uniform"));
        assert!(err(
            r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "clip"}, {"kind": "clip"}]}"#
        )
        .contains("used twice"));
        assert!(err(
            r#"{"id": "a", "source": "v.mp4", "insert": {"sequence": "s", "at": "1s", "seed": 3}}"#
        )
        .contains("exactly one of"));
        assert!(err(r#"{"id": "a", "source": "v.mp4", "start": "10%"}"#).contains("percentage"));
        assert!(err(r#"{"id": "a", "source": "v.mp4", "exports": []}"#).contains("non-empty"));
        assert!(err(
            r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "clip", "name": "item"}]}"#
        )
        .contains("reserved"));
        assert!(err(r#"{"id": "report.jsonl", "source": "v.mp4"}"#).contains("reserved"));
        assert!(err(r#"{"id": "../x", "source": "v.mp4"}"#).contains("file name"));
        assert!(
            err(r#"{"id": "a", "source": "v.mp4", "boxes": {"path": "b.txt", "colr": 1}}"#)
                .contains("unknown field `colr`")
        );
        assert!(err(r#"{"id": "a", "source": "v.mp4", "decision": "1s", "exports": [{"kind": "clip", "copy": true}]}"#).contains("decision"));
        assert!(err(
            r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "frames", "quality": 0}]}"#
        )
        .contains("quality"));
    }

    #[test]
    fn given_frames_and_a_followed_package_are_checked() {
        let frames = |extra: &str| {
            parse(&format!(
                r#"{{"id": "a", "source": "v.mp4", "exports": [{{"kind": "frames"{extra}}}]}}"#
            ))
        };
        assert!(frames(r#", "frames": [17, 0, 5]"#).is_ok());
        assert!(frames(r#", "frames": [3], "sampler": "explicit""#).is_ok());
        assert!(frames(r#", "frames": [1, 2], "profile": "qwen3-vl""#).is_ok());
        assert!(
            frames(r#", "frames": [1, 2], "profile": "qwen3-vl", "sampler": "explicit""#).is_ok()
        );
        let e = frames(r#", "profile": "qwen3-vl", "sampler": "qwen""#).unwrap_err();
        assert!(e.contains("drop \"sampler\""), "{e}");
        assert!(frames(r#", "profile": "qwen3-vl", "follow_package": "p.json""#).is_ok());
        let e = frames(r#", "frames": [1], "count": 4"#).unwrap_err();
        assert!(e.contains("drop \"count\""), "{e}");
        let e = frames(r#", "frames": [1], "fps": 2, "max_frames": 3"#).unwrap_err();
        assert!(e.contains("\"fps\" and \"max_frames\""), "{e}");
        let e = frames(r#", "frames": []"#).unwrap_err();
        assert!(e.contains("lists no frame"), "{e}");
        let e = frames(r#", "frames": [1], "sampler": "qwen""#).unwrap_err();
        assert!(e.contains("explicit sampler"), "{e}");
        let e = frames(r#", "sampler": "explicit""#).unwrap_err();
        assert!(e.contains("add \"frames\""), "{e}");
        assert!(frames(r#", "frames": [-1]"#).is_err());
        let e = frames(r#", "follow_package": "p.json""#).unwrap_err();
        assert!(e.contains("goes with \"profile\""), "{e}");
        let e = frames(r#", "profile": "qwen3-vl", "follow_package": "p.json", "frames": [1, 2]"#)
            .unwrap_err();
        assert!(e.contains("the parity record gives the frames"), "{e}");
        let e = parse(
            r#"{"id": "a", "source": "v.mp4", "start": 10, "exports": [{"kind": "frames", "profile": "qwen3-vl", "follow_package": "p.json"}]}"#,
        )
        .unwrap_err();
        assert!(e.contains("whole source"), "{e}");
    }

    #[test]
    fn given_frames_normalise_to_the_explicit_sampler() {
        let plan = parse(
            r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "frames", "frames": [4, 2]}]}"#,
        )
        .unwrap();
        let named = parse(r#"{"id": "a", "source": "v.mp4", "exports": [{"kind": "frames", "frames": [4, 2], "sampler": "explicit"}]}"#).unwrap();
        let defaults = crate::vocab::EncodeSettings::default();
        let n = plan.normalized(&defaults);
        assert_eq!(n, named.normalized(&defaults));
        n.check().unwrap();
        let ExportSpec::Frames(f) = &n.exports[0] else {
            panic!()
        };
        assert_eq!(f.sampler.name(), "explicit");
        assert_eq!(
            f.request(),
            crate::profiles::sampling::Request::Frames(vec![4, 2])
        );
        assert_eq!(f.profile_request().count, Some(2));
    }
}
