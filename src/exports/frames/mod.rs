//! The `frames` export: sampled frames for image-only models. Frame indices are picked with a
//! named sampler (each reproducing a toolkit's formula over the true frame count of the
//! processed stream), or given by source index (`frames`, the `explicit` sampler), or, with a
//! profile, followed as its package showed them (`follow_package`, [`super::follow`]), put in
//! the asked order, read by seeking (only those frames are decoded),
//! scaled to square pixels within the size cap, boxes drawn, and written as images named with
//! their position and time, with `frames.json` (each image's stream frame, source frame, time
//! and boxes) and optionally a captioned strip, an API payload with Base64 images, or JSONL.
//! Beside the frames, on request: each frame's number or time drawn on it as NumPro does
//! (`crate::frames::draw::numpro`), each frame's subtitle text from an SRT/WebVTT file by VLMEvalKit's
//! Video-MME rule ([`crate::exports::subtitles`]), and `audio.wav`, the span's audio as 16 kHz
//! mono PCM ([`crate::media::wav`]); each in `frames.json` and the payload.
//! The folder is written whole under a temporary name and replaces any earlier one.
//!
//! One file per job: [`sink`] (the image files), [`strip`], [`payload`] (API payloads),
//! [`memory`] (`MemoryFrames`); this file is the export itself. Its record, `frames.json`, is
//! `crate::records::frames_json`.

pub(crate) mod memory;
mod payload;
mod sink;
mod strip;

use std::path::{Path, PathBuf};

use crate::call::output::group::OutputGroup;
use crate::error::{Error, Result};
use crate::exports::{Export, ExportContext, ExportReport, ExportTarget, Wants};
use crate::frames::fit::fit_within;
use crate::frames::pipeline::{FrameSink, FrameStage, PipelineFrame, Progress};
use crate::frames::sinks::StagedSink;
use crate::frames::stages::resize::ScaleStage;
use crate::frames::stages::stream::ProcessedStream;
use crate::plan::{ExportSpec, FrameLabel, FramesExport, Plan};
use crate::profiles::sampling::{self, Arranged, FrameList, Sampled};
use crate::records::frames_json::FramesJson;
use crate::records::sidecar::{write_json, VERSION};
use crate::vocab::time::{decimal_text, Time};
use memory::MemoryFrames;
use payload::PayloadExtras;
use sink::{FramesOutputSpec, FramesSink};

/// The `frames` export.
pub(crate) struct FramesMaker {
    spec: ExportSpec,
    frames: FramesExport,
    folder: Option<(PathBuf, PathBuf)>,
    chosen: Option<(Sampled, Arranged)>,
    sink: Option<StagedSink<FramesSink>>,
    /// Kept in memory ([`crate::Destination::Memory`]) instead of written.
    memory: bool,
    /// What memory mode made, once finished.
    made: Option<MemoryFrames>,
    /// What the profile decided (when the export has one).
    applied: Option<crate::profiles::Applied>,
    /// The subtitle file, read (with `subtitles`).
    subtitles: Option<crate::exports::subtitles::Subtitles>,
    /// What `frames.json` says of the followed package (with `follow_package`).
    followed: Option<serde_json::Value>,
}

/// Draws each frame's label by NumPro's rule, on the frame as decoded (before any resize).
struct LabelStage {
    kind: FrameLabel,
    /// Each stream frame's time on its source's timeline (what a `time` label says).
    times: Vec<Time>,
}

impl FrameStage for LabelStage {
    fn apply(&mut self, frame: &mut PipelineFrame) -> Result<()> {
        crate::frames::draw::make_writable(&mut frame.image)
            .map_err(|e| Error::internal(format!("cannot draw on frame {}: {e}", frame.index)))?;
        // Drawn in YUV: this frame's RGB outputs are made from the drawn picture.
        frame.rgb = None;
        let time = self.times.get(frame.index).copied().unwrap_or(frame.time);
        let text = self.kind.text(frame.index, time);
        crate::frames::draw::numpro::draw(&mut frame.image, &text);
        Ok(())
    }
}

/// Time of stream frame `i` on its source's own timeline (from the source's start); `None`
/// for an inserted needle's frames.
fn source_time(stream: &ProcessedStream, i: usize) -> Option<Time> {
    let host = match &stream.needle {
        None => i,
        Some(n) if i < n.at => i,
        Some(n) if i < n.at + n.prepared.frames => return None,
        Some(n) => i - n.prepared.frames,
    };
    Some(stream.table.time(stream.resolved.kept.start + host))
}

/// The WAV's format: what speech models take.
const WAV_FORMAT: crate::media::audio::AudioFormat = crate::media::audio::AudioFormat {
    sample_rate: 16000,
    channels: 1,
};

impl FramesMaker {
    pub fn new(spec: &ExportSpec, frames: &FramesExport) -> FramesMaker {
        FramesMaker {
            spec: spec.clone(),
            frames: frames.clone(),
            folder: None,
            chosen: None,
            sink: None,
            memory: false,
            made: None,
            applied: None,
            subtitles: None,
            followed: None,
        }
    }
}

/// The processed stream's index of each source frame in `given` (the video's own frame
/// indices, `frames` of a frames export): refused, naming the index, the file and the frame
/// count, when one is not in the stream (past the end, or outside the span).
fn stream_indices(stream: &ProcessedStream, given: &[usize], export: &str) -> Result<Vec<usize>> {
    let kept = stream.resolved.kept;
    let total = stream.table.len();
    given
        .iter()
        .enumerate()
        .map(|(position, &s)| {
            if s >= total {
                return Err(Error::request(
                    &stream.source,
                    format!(
                        "export {export:?}: source frame {s} (position {position} of `frames`) \
                         is past the end: the source has {total} frames (0 to {}); give indices \
                         below {total}",
                        total.saturating_sub(1)
                    ),
                ));
            }
            if s < kept.start || s >= kept.end {
                return Err(Error::request(
                    &stream.source,
                    format!(
                        "export {export:?}: source frame {s} (position {position} of `frames`) \
                         is outside the span, which keeps source frames {} to {} of {total}; \
                         give frames in the span, or widen it",
                        kept.start,
                        kept.end.saturating_sub(1)
                    ),
                ));
            }
            let host = s - kept.start;
            Ok(match &stream.needle {
                Some(n) if host >= n.at => host + n.prepared.frames,
                _ => host,
            })
        })
        .collect()
}

/// The processed stream's frames as the samplers see them.
pub(crate) fn stream_frame_list(stream: &ProcessedStream) -> Result<FrameList> {
    let nominal = stream
        .timing()
        .frame_rate
        .map(|r| r.as_f64())
        .unwrap_or_else(|| stream.frame_count() as f64 / stream.duration().as_secs_f64().max(1e-9));
    FrameList::new(stream.times(), stream.duration(), nominal)
        .ok_or_else(|| Error::request(&stream.source, "the processed stream has no frames"))
}

impl Export for FramesMaker {
    fn target_in(&self, dir: &Path) -> ExportTarget {
        ExportTarget::at(dir.join(self.spec.name()))
    }

    fn claim(
        &mut self,
        target: &ExportTarget,
        _plan: &Plan,
        group: &mut OutputGroup,
    ) -> Result<()> {
        let temp = group.folder(&target.main)?;
        self.folder = Some((target.main.clone(), temp));
        Ok(())
    }

    fn keep_in_memory(&mut self) -> Result<()> {
        let mut files = Vec::new();
        if self.frames.strip.0.is_some() {
            files.push("strip");
        }
        if self.frames.payload.is_some() {
            files.push("payload");
        }
        if self.frames.jsonl {
            files.push("jsonl");
        }
        if self.frames.audio {
            files.push("audio");
        }
        if !files.is_empty() {
            return Err(Error::Usage(format!(
                "export {:?}: {} only exist as files; frames kept in memory cannot have them",
                self.spec.name(),
                files.join(", ")
            )));
        }
        self.memory = true;
        Ok(())
    }

    fn take_memory(&mut self) -> Option<MemoryFrames> {
        self.made.take()
    }

    fn start(
        &mut self,
        stream: &ProcessedStream,
        ctx: &ExportContext,
        _group: &mut OutputGroup,
    ) -> Result<Wants> {
        let list = stream_frame_list(stream)?;
        // What goes beside the frames is checked before a frame is decoded.
        if let Some(path) = &self.frames.subtitles {
            self.subtitles = Some(crate::exports::subtitles::Subtitles::load(path)?);
        }
        if self.frames.audio
            && crate::media::audio::audio_stream_format(&stream.input, stream.inputs.call())?
                .is_none()
        {
            return Err(Error::request(
                &stream.source,
                format!(
                    "export {:?}: audio was asked for (audio.wav) but the source has no audio \
                     stream; drop --audio (\"audio\": true), or give a source with sound",
                    self.spec.name()
                ),
            ));
        }
        // Frames given by source index: into the stream's indices, refused past the end.
        let given = match &self.frames.frames {
            Some(list) => Some(stream_indices(stream, list, self.spec.name())?),
            None => None,
        };
        // Checked as the explicit sampler checks them (a repeat needs `allow_repeats`) before
        // a profile takes them.
        let given_sampled = match &given {
            Some(indices) => Some(
                sampling::sample(
                    &list,
                    self.frames.effective_sampler(),
                    sampling::Request::Frames(indices.clone()),
                    self.frames.allow_repeats,
                )
                .map_err(|e| {
                    let e = match e {
                        // Named by the source's index, as given.
                        sampling::SampleError::RepeatedGivenFrame { first, again, .. } => {
                            sampling::SampleError::RepeatedGivenFrame {
                                index: self.frames.frames.as_ref().map_or(0, |f| f[first]),
                                first,
                                again,
                            }
                        }
                        e => e,
                    };
                    Error::request(
                        &stream.source,
                        format!("export {:?}: {e}", self.spec.name()),
                    )
                })
                .map(|s| Sampled {
                    // As asked: the source's indices (the stream's are `indices`).
                    requested: self.frames.request(),
                    ..s
                })?,
            ),
            None => None,
        };
        let record = match &self.frames.follow_package {
            Some(path) => Some(crate::exports::follow::FollowedRecord::load(path)?),
            None => None,
        };
        let applied = match &self.frames.profile {
            None => None,
            Some(name) => {
                let profile = crate::profiles::find(name)
                    .ok_or_else(|| Error::Usage(crate::profiles::unknown(name)))?;
                let input = crate::profiles::ProfileInput {
                    frames: &list,
                    width: stream.size.0,
                    height: stream.size.1,
                    container: crate::profiles::ContainerFacts {
                        path: &stream.source,
                        header_frames: stream.info.metadata_frames.unwrap_or(0),
                        average_rate: Some(stream.info.avg_frame_rate)
                            .filter(|r| r.num != 0 && r.den != 0)
                            .map(|r| (r.num as i64, r.den as i64)),
                    },
                };
                let in_export = |e: crate::profiles::ProfileError| {
                    Error::request(
                        &stream.source,
                        format!("export {:?}: {e}", self.spec.name()),
                    )
                };
                let request = self.frames.profile_request();
                let mut a = crate::profiles::apply(profile, &input, &request).map_err(in_export)?;
                if let Some(indices) = &given {
                    a = crate::profiles::with_frames(
                        profile,
                        a,
                        indices.clone(),
                        &crate::profiles::FramesFrom::Given,
                        &input,
                    )
                    .map_err(in_export)?;
                }
                if let Some(record) = &record {
                    let now = stream.source_records().swap_remove(0);
                    let asked = crate::exports::follow::Request {
                        count: request.count,
                        fps: request.fps,
                        options: request.options.clone(),
                    };
                    let shown = record.shown(&stream.source, &now, &asked, &a)?;
                    self.followed = Some(record.json(&shown));
                    a = crate::profiles::with_frames(
                        profile,
                        a,
                        shown,
                        &crate::profiles::FramesFrom::Package {
                            record: record.path.display().to_string(),
                        },
                        &input,
                    )
                    .map_err(in_export)?;
                }
                Some(a)
            }
        };
        // A package that repeats frames (InternVL's get_index with more segments than frames)
        // is followed only with `allow_repeats`, as a sampler is.
        if let Some(a) = applied.as_ref().filter(|_| !self.frames.allow_repeats) {
            let distinct = a
                .indices
                .iter()
                .collect::<std::collections::HashSet<_>>()
                .len();
            if distinct < a.indices.len() && self.followed.is_some() {
                return Err(Error::request(
                    &stream.source,
                    format!(
                        "export {:?}: following the package, {} of the {} positions show a \
                         frame the package already showed at another position (package_shows: \
                         {:?}); set `allow_repeats` to keep the repeats as the package fed them",
                        self.spec.name(),
                        a.indices.len() - distinct,
                        a.indices.len(),
                        a.indices,
                    ),
                ));
            }
            if distinct < a.indices.len() {
                // Asked for a number of frames, fewer may do; with none asked the profile's
                // own rule repeats them (GLM-4.6V pads an odd count with its last frame).
                let advice = if self.frames.count.is_some() || self.frames.fps.is_some() {
                    "ask for fewer frames (`count`), or set `allow_repeats` to keep the \
                     repeats as the package would"
                } else {
                    "the profile's own rule repeats them on this video, as the package does: \
                     set `allow_repeats` to keep the repeats as the package \
                     feeds them"
                };
                return Err(Error::request(
                    &stream.source,
                    format!(
                        "export {:?}: profile {} picks {} frames of a video of {}, {} of \
                         them repeats of frames already picked; {advice}",
                        self.spec.name(),
                        a.profile,
                        a.indices.len(),
                        crate::profiles::sampling::FrameTimes::total(&list),
                        a.indices.len() - distinct,
                    ),
                ));
            }
        }
        // A profile's options can ask for any size (min_pixels=1e30): refuse one no frame of
        // vidprep may have before anything of that size is allocated.
        if let Some(a) = &applied {
            let pixels = a.width as u64 * a.height as u64;
            if pixels > crate::media::input::MAX_FRAME_PIXELS {
                return Err(Error::OverBudget {
                    path: stream.source.clone(),
                    what: format!(
                        "export {:?}: profile {} resizes to {}x{}",
                        self.spec.name(),
                        a.profile,
                        a.width,
                        a.height
                    ),
                    needed: pixels,
                    pixels: true,
                    limit: crate::media::input::MAX_FRAME_PIXELS,
                    advice: "lower the profile's min_pixels, total_pixels or resized_height / \
                             resized_width options"
                        .into(),
                });
            }
        }
        let sampled = match (&applied, given_sampled) {
            (Some(a), None) => Sampled {
                indices: a.indices.clone(),
                sampler: a.sampler,
                requested: self.frames.request(),
                formula: match &self.followed {
                    Some(_) => format!(
                        "{}, each replaced by the frame the package showed there",
                        a.formula
                    ),
                    None => a.formula.clone(),
                },
                note: None,
            },
            (_, Some(given)) => given,
            (None, None) => sampling::sample(
                &list,
                self.frames.sampler,
                self.frames.request(),
                self.frames.allow_repeats,
            )
            .map_err(|e| {
                Error::request(
                    &stream.source,
                    format!("export {:?}: {e}", self.spec.name()),
                )
            })?,
        };
        let arranged = sampling::arrange(&sampled.indices, self.frames.order, self.frames.seed);
        // Names and records carry each frame's time on its source's timeline.
        let times = stream.source_timeline_times();
        let at: Vec<Time> = arranged.indices.iter().map(|&i| times[i]).collect();
        // Images are what players show: square pixels, within the size cap.
        let (dw, dh) = stream.display_size();
        // A profile: the decoded size (as the package's decoder returns it), then its resize.
        let size = match &applied {
            Some(a) => (a.width, a.height),
            None => self
                .frames
                .max_size
                .map_or((dw, dh), |m| fit_within(dw, dh, m.0, m.1)),
        };
        let resize = applied
            .as_ref()
            .filter(|a| a.resample != crate::profiles::Resample::None)
            .map(|a| (a.width, a.height, a.resample));
        let package_files = applied.as_ref().and_then(|a| a.files.clone());
        let encoding = applied.as_ref().and_then(|a| a.encoding);
        let rgb = applied.as_ref().and_then(|a| a.rgb);
        let output = FramesOutputSpec {
            format: self.frames.format,
            quality: self.frames.quality,
            strip: self.frames.strip.0,
            payload: self.frames.payload,
            jsonl: self.frames.jsonl,
        };
        if self.memory {
            // The array handed back is allocated once every frame is in: refuse a request
            // that cannot fit before decoding anything.
            let n = arranged.indices.len() as u64;
            let needed = n
                .saturating_mul(size.0 as u64)
                .saturating_mul(size.1 as u64)
                .saturating_mul(3);
            if needed > ctx.memory_budget {
                return Err(Error::OverBudget {
                    path: stream.source.clone(),
                    what: format!(
                        "export {:?}: {n} frames of {}x{} RGB",
                        self.spec.name(),
                        size.0,
                        size.1
                    ),
                    needed,
                    pixels: false,
                    limit: ctx.memory_budget,
                    advice: "ask for fewer frames (n, max_frames) or smaller ones (size), or \
                             raise the limit (memory_budget)"
                        .into(),
                });
            }
        }
        let sink = if self.memory {
            FramesSink::in_memory(&output, &arranged.indices, &at, stream.box_sources.clone())
        } else {
            let (_, temp) = self.folder.as_ref().expect("claimed before start");
            FramesSink::new(
                temp,
                &output,
                &arranged.indices,
                &at,
                size.0,
                stream.box_sources.clone(),
            )
        }
        .with_source(&stream.source)
        .stopped_by(&stream.inputs.call().cancel)
        .with_resize(resize)
        .with_label(self.frames.label)
        .with_package_files(package_files, encoding)
        .with_rgb(rgb);
        let mut stages: Vec<Box<dyn FrameStage + Send>> = Vec::new();
        if let Some(kind) = self.frames.label {
            // NumPro numbers the frames as decoded; the resize comes after.
            stages.push(Box::new(LabelStage { kind, times }));
        }
        if resize.is_none() && size != stream.size {
            stages.push(Box::new(ScaleStage::new(size)));
        }
        stages.extend(stream.draw_stages());
        // The sink keys frames by stream index: keep it (the staged sink renumbers).
        self.sink = Some(StagedSink::keeping_indices(stages, sink));
        let mut wanted = arranged.indices.clone();
        wanted.sort_unstable();
        wanted.dedup();
        self.chosen = Some((sampled, arranged));
        self.applied = applied;
        Ok(Wants::Frames(wanted))
    }

    fn sink(&mut self) -> Option<&mut dyn FrameSink> {
        self.sink.as_mut().map(|s| s as &mut dyn FrameSink)
    }

    fn finish(
        &mut self,
        stream: &ProcessedStream,
        _ctx: &ExportContext,
        _group: &mut OutputGroup,
        _progress: &mut dyn Progress,
    ) -> Result<ExportReport> {
        let (folder, temp) = match &self.folder {
            Some(f) => (Some(f.0.clone()), Some(f.1.clone())),
            None if self.memory => (None, None),
            None => panic!("claimed before finish"),
        };
        let (sampled, arranged) = self.chosen.take().expect("started");
        let mut sink = self.sink.take().expect("started").into_inner();
        let images = sink.take_images();
        // Subtitles: each position's text at its frame's time on the source's timeline.
        let subtitle_ms: Vec<Option<i64>> = arranged
            .indices
            .iter()
            .map(|&i| {
                source_time(stream, i).map(|t| crate::exports::subtitles::time_ms(t.as_secs_f64()))
            })
            .collect();
        let subtitle_texts: Option<Vec<String>> = self.subtitles.as_ref().map(|subs| {
            subtitle_ms
                .iter()
                .map(|ms| ms.map(|ms| subs.text_at(ms)).unwrap_or_default())
                .collect()
        });
        let subtitles_json = match (&self.subtitles, &subtitle_texts) {
            (Some(subs), Some(texts)) => Some(serde_json::json!({
                "file": subs.path,
                "format": subs.format,
                "cues": subs.cues.len(),
                "rule": crate::exports::subtitles::RULE,
                "text": crate::exports::subtitles::Subtitles::prompt(texts),
            })),
            _ => None,
        };
        // Audio: the span the frames were sampled from, sample 0 at time 0 of their times.
        let mut audio_json = None;
        let mut extras = PayloadExtras {
            text: subtitles_json
                .as_ref()
                .map(|j| j["text"].as_str().unwrap_or_default().to_string()),
            audio: None,
            video: (self.frames.payload == Some(crate::plan::Payload::Vllm)).then(|| {
                let source = &stream.source_records()[0];
                let rate = source.avg_frame_rate;
                payload::VideoFacts {
                    frames_indices: Vec::new(),
                    fps: if rate.den > 0 {
                        rate.num as f64 / rate.den as f64
                    } else {
                        0.0
                    },
                    total_num_frames: source.frames,
                    duration: source.duration_s,
                }
            }),
            // The image payloads' time markers: the profile's own when it defines them (and
            // the frames are in their order), else each frame's time.
            markers: (self.frames.time_markers
                && self.frames.payload.is_some()
                && self.frames.payload != Some(crate::plan::Payload::Vllm))
            .then(
                || match self.applied.as_ref().and_then(|a| a.timestamps.clone()) {
                    Some(stamps) if self.frames.order == crate::plan::Order::Ordered => {
                        payload::Markers::Given(stamps)
                    }
                    _ => payload::Markers::Times,
                },
            ),
        };
        if self.frames.audio {
            let temp = temp.as_ref().expect("audio is refused in memory");
            let path = temp.join("audio.wav");
            let plan = stream.audio();
            let facts = crate::media::wav::write_wav(&plan, WAV_FORMAT, &path)?;
            let start = stream.resolved.start_time();
            let end = Time::new(facts.samples as i64, facts.sample_rate as i64);
            audio_json = Some(serde_json::json!({
                "file": "audio.wav",
                "format": "pcm_s16le",
                "sample_rate": facts.sample_rate,
                "channels": facts.channels,
                "samples": facts.samples,
                "start": "0",
                "end": decimal_text(end),
                "start_s": 0.0,
                "end_s": end.as_secs_f64(),
                "source_start": decimal_text(start),
                "source_start_s": start.as_secs_f64(),
                "rule": "the processed stream's span (its first frame's start to its last \
                         frame's end, silence under an insertion), decoded and resampled by \
                         swresample with its defaults to 16 kHz mono, cut to the sample \
                         (rounded to the nearest) and converted to 16 bits as swresample \
                         does; a frame at time t is at sample round(t * 16000)",
            }));
            extras.audio = Some(path);
        }
        sink.set_extras(extras);
        let (mut records, files) = sink.complete(&stream.source)?;
        for r in &mut records {
            r.source_file = stream.source_file(r.source, r.source_frame);
            if let Some(texts) = &subtitle_texts {
                r.subtitle_ms = subtitle_ms[r.position];
                r.subtitle = Some(texts[r.position].clone());
            }
        }
        let label_json = self.frames.label.map(|kind| {
            serde_json::json!({
                "kind": kind,
                "rule": "NumPro (github.com/yongliang-wu/NumPro, eval/qwen2_vl_7b_mr.py, \
                         annotate_frame_with_pil with its defaults): the text at \
                         x = W - tw, y = H - th - th/3 (PIL textbbox ink box, anchor la), no \
                         margin, no background, drawn on the frame as decoded before any resize",
                "font": "DejaVu Sans Bold",
                "em_px": crate::frames::draw::numpro::EM_PX,
                "colour": crate::frames::draw::numpro::COLOUR.to_string(),
                "position": "bottom_right",
            })
        });
        let mut warnings = stream.warnings.clone();
        if let Some(note) = &sampled.note {
            warnings.push(format!("sampling: {note}"));
        }
        let count = records.len();
        let summary = format!(
            "{}: {} frames ({} of {} by {}), frames.json{}{}{}{}",
            folder
                .as_deref()
                .map_or("(in memory)".into(), |f| f.display().to_string()),
            count,
            sampled.formula,
            stream.frame_count(),
            sampled.sampler,
            files
                .strip
                .as_ref()
                .map(|s| format!(", {s}"))
                .unwrap_or_default(),
            files
                .payload
                .as_ref()
                .map(|s| format!(", {s}"))
                .unwrap_or_default(),
            files
                .jsonl
                .as_ref()
                .map(|s| format!(", {s}"))
                .unwrap_or_default(),
            if audio_json.is_some() {
                ", audio.wav"
            } else {
                ""
            },
        );
        let json = FramesJson {
            vidprep_version: VERSION,
            sources: stream.source_records(),
            request: serde_json::to_value(&stream.plan).expect("a plan serialises"),
            export: serde_json::to_value(&self.spec).expect("an export serialises"),
            resolved: stream.resolved_json(),
            total_frames: stream.frame_count(),
            sampled,
            order: arranged,
            format: self.frames.format,
            frames: records,
            strip: files.strip,
            payload: files.payload,
            jsonl: files.jsonl,
            profile: self
                .applied
                .take()
                .map(|a| serde_json::to_value(a).expect("a profile's record serialises")),
            follow_package: self.followed.take(),
            label: label_json,
            subtitles: subtitles_json,
            audio: audio_json,
            request_tokens: files.request_tokens,
            warnings: warnings.clone(),
        };
        if let Some(temp) = &temp {
            write_json(&temp.join("frames.json"), &json)?;
        } else {
            self.made = Some(MemoryFrames::new(
                self.spec.name(),
                json,
                images,
                &stream.source,
            )?);
        }
        Ok(ExportReport {
            name: self.spec.name().to_string(),
            kind: "frames",
            files: folder.into_iter().collect(),
            summary,
            frames: count,
            warnings,
        })
    }
}
