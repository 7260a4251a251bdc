//! The processed stream of one plan: its source opened once, its stages applied (span and
//! decision, needle insertion, boxes), and everything the exports need to know about it
//! (frame count and times, audio, timing, provenance, boxes) before a frame is decoded. It
//! hands out frame sources: the whole stream in order, or only chosen frames (sparse seeking,
//! for exports that sample), and can replay itself for an export that encodes again.

use std::path::PathBuf;
use std::sync::Arc;

use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::frames::overlay::{BoxRecorder, OverlayStage, SourceBoxes, Style};
use crate::frames::pipeline::{ClipSource, FrameSource, FrameStage, PipelineFrame};
use crate::frames::provenance::ProvenanceRecorder;
use crate::frames::sinks::StreamTiming;
use crate::frames::sparse::SparseSource;
use crate::frames::stages::builder::{NeedleSegment, StreamBuilder};
use crate::frames::stages::insert::{common_time_base, splice_audio, NeedleRenderer, SpliceSource};
use crate::frames::stages::resolve::{resolve_clip, ClipSpec, ResolvedClip};
use crate::media::audio::{AudioPlan, AudioSegment};
use crate::media::decode::{DecodeOptions, FrameReader};
use crate::media::input::{VideoInput, VideoStreamInfo};
use crate::media::pool::InputPool;
use crate::media::source::{ImageSequence, Source, SourceKind};
use crate::media::table::{FrameTable, TableCache, UsedInput};
use crate::plan::Plan;
use crate::records::sidecar::SourceRecord;
use crate::vocab::time::Time;
use crate::vocab::Ratio;

/// The processed stream of a plan.
pub(crate) struct ProcessedStream {
    pub plan: Plan,
    /// The source as given (it names the source in messages and sidecars).
    pub source: PathBuf,
    /// The source with its rate, as the media layer opens it.
    pub input: Source,
    /// What kind of source it is.
    pub kind: SourceKind,
    /// For an image sequence: its folder, naming and rate.
    pub sequence: Option<Arc<ImageSequence>>,
    /// For a URL: its size in bytes, when the server says.
    pub url_bytes: Option<u64>,
    pub table: Arc<FrameTable>,
    pub info: VideoStreamInfo,
    /// Size of the stream's frames: upright, stored pixels.
    pub size: (u32, u32),
    pub resolved: ResolvedClip,
    pub needle: Option<NeedleSegment>,
    pub box_sources: Vec<(usize, Arc<SourceBoxes>)>,
    pub draws: Vec<(usize, Arc<SourceBoxes>, Style)>,
    pub warnings: Vec<String>,
    pub threads: usize,
    /// The inputs the stream's readers share, and the call they read for: handed to every
    /// reader of the stream (the soundtrack's too, [`ProcessedStream::audio`]).
    pub inputs: Arc<InputPool>,
    /// The input the stream was opened with, until a reader takes it.
    used_input: std::sync::Mutex<Option<UsedInput>>,
    /// An export encodes the soundtrack while the whole stream is decoded: the full decode
    /// offers its input to the soundtrack's reader ([`crate::media::demux`]).
    audio_with_full_decode: std::sync::atomic::AtomicBool,
}

impl ProcessedStream {
    /// Opens the plan's source (once: the stream's description and, unless `tables` has it,
    /// the frame table come from one input) and applies its stages (see
    /// [`crate::frames::stages::stages_of`]), for the call `ctx`: its readers open, count and stop as
    /// the call's (the stream's [`InputPool`] carries it to them).
    pub fn open(
        plan: &Plan,
        threads: usize,
        tables: &TableCache,
        ctx: &CallContext,
    ) -> Result<ProcessedStream> {
        let source = plan.source.clone();
        let input = Source::new(source.clone(), plan.source_fps);
        // What the container says, read before the table's scan reads its packets.
        let describe = |opened: &VideoInput| {
            // A URL's size is what its server says.
            let url_bytes = (opened.kind == SourceKind::Url)
                .then(|| opened.byte_size())
                .flatten();
            (
                opened.video.clone(),
                opened.kind,
                opened.sequence.clone(),
                url_bytes,
            )
        };
        let mut described = None;
        let (table, mut used_input) = tables.table_or_scan(&input, ctx, |source| {
            let opened = VideoInput::open(source, ctx)?;
            described = Some(describe(&opened));
            Ok(Some(opened))
        })?;
        if plan.strict && !table.damage.is_empty() {
            return Err(Error::corrupt(
                &source,
                "(strict)",
                format!("the video is damaged: {}", table.damage.summary()),
            ));
        }
        let (info, kind, sequence, url_bytes) = match described {
            Some(d) => d,
            None => {
                // The table was the cache's: the input opened for the description is unread.
                let opened = VideoInput::open(&input, ctx)?;
                let d = describe(&opened);
                used_input = Some(UsedInput {
                    input: opened,
                    read: false,
                });
                d
            }
        };
        let size = info.upright_stored_size();
        let resolved = resolve_clip(&source, &table, &ClipSpec::default())?;
        let mut builder = StreamBuilder {
            source,
            input,
            table,
            info,
            size,
            resolved,
            needle: None,
            box_sources: Vec::new(),
            draws: Vec::new(),
            warnings: Vec::new(),
            call: ctx.clone(),
        };
        for stage in crate::frames::stages::stages_of(plan) {
            stage.shape(&mut builder)?;
        }
        if !builder.table.damage.is_empty() {
            builder.warnings.push(format!(
                "{}: damaged source: {}",
                builder.source.display(),
                builder.table.damage.summary()
            ));
        }
        Ok(ProcessedStream {
            plan: plan.clone(),
            source: builder.source,
            input: builder.input,
            kind,
            sequence,
            url_bytes,
            table: builder.table,
            info: builder.info,
            size: builder.size,
            resolved: builder.resolved,
            needle: builder.needle,
            box_sources: builder.box_sources,
            draws: builder.draws,
            warnings: builder.warnings,
            threads,
            inputs: InputPool::new(ctx.clone()),
            used_input: std::sync::Mutex::new(used_input),
            audio_with_full_decode: Default::default(),
        })
    }

    /// The input the stream was opened with (its table's scan, or its description), for the
    /// first reader that can decode from it instead of opening the source again; `None` once
    /// taken, or when it is not to be read again (see [`TableCache::table_or_scan`]).
    pub(crate) fn take_used_input(&self) -> Option<UsedInput> {
        self.used_input
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// The square-pixel size players show for the stream's frames (rotation and sample
    /// aspect ratio applied).
    pub fn display_size(&self) -> (u32, u32) {
        self.info.displayed_size()
    }

    /// Frames in the stream.
    pub fn frame_count(&self) -> usize {
        self.resolved.kept.len() + self.needle.as_ref().map_or(0, |n| n.prepared.frames)
    }

    /// The stream's duration (to its end: the decision point, or the end of its last frame).
    pub fn duration(&self) -> Time {
        self.resolved.duration()
            + self
                .needle
                .as_ref()
                .map_or(Time::ZERO, |n| n.prepared.duration)
    }

    /// Presentation time of every frame of the stream, from 0.
    pub fn times(&self) -> Vec<Time> {
        let start = self.resolved.start_time();
        let host: Vec<Time> = (self.resolved.kept.start..self.resolved.kept.end)
            .map(|i| self.table.time(i) - start)
            .collect();
        match &self.needle {
            None => host,
            Some(n) => {
                let mut t = host[..n.at].to_vec();
                t.extend((0..n.prepared.frames).map(|k| n.time + n.prepared.step * k as i64));
                t.extend(host[n.at..].iter().map(|&h| h + n.prepared.duration));
                t
            }
        }
    }

    /// Each frame's time on its own source's timeline, the time `cut --start` takes to begin
    /// with it: a video frame's time from the input's start (as ffmpeg's `-ss` counts), an
    /// inserted sequence's frame the time of the image it shows at the sequence's rate.
    pub fn source_timeline_times(&self) -> Vec<Time> {
        let host = (self.resolved.kept.start..self.resolved.kept.end).map(|i| self.table.time(i));
        match &self.needle {
            None => host.collect(),
            Some(n) => {
                let host: Vec<Time> = host.collect();
                let rate = n.prepared.anno_fps;
                let mut t = host[..n.at].to_vec();
                t.extend(
                    n.prepared
                        .map
                        .iter()
                        .map(|&s| Time::from_secs(s as i64) / rate),
                );
                t.extend_from_slice(&host[n.at..]);
                t
            }
        }
    }

    /// The output soundtrack: the source's audio of the kept span (ending where the video
    /// ends), with silence under a needle.
    pub fn audio(&self) -> AudioPlan {
        let origin = self.table.origin();
        let last = self.resolved.kept.end - 1;
        let video_end =
            (self.table.time(last) + self.table.duration_of(last)).min(self.resolved.end_time());
        match &self.needle {
            None => AudioPlan {
                segments: vec![AudioSegment::Source {
                    source: self.input.clone(),
                    start: origin + self.resolved.start_time(),
                    end: origin + video_end,
                    inputs: self.inputs.clone(),
                }],
            },
            Some(n) => splice_audio(
                &self.input,
                &self.inputs,
                origin,
                self.resolved.start_time(),
                video_end,
                n.time,
                n.prepared.duration,
            ),
        }
    }

    /// Encoder timing: the source's time base and rate (with a needle, a time base that also
    /// holds the needle's frame grid).
    pub fn timing(&self) -> StreamTiming {
        let swapped = self.info.rotation.swaps_axes();
        let sar = self.info.sample_aspect_ratio;
        let sar = if sar.is_valid() && swapped {
            Ratio::new(sar.den, sar.num)
        } else {
            sar
        };
        let base = StreamTiming {
            time_base: self.info.time_base,
            frame_rate: self.info.best_frame_rate(),
            sample_aspect_ratio: sar,
        };
        match &self.needle {
            None => base,
            Some(n) => {
                let fps = Time::from_secs(1) / n.prepared.step;
                StreamTiming {
                    time_base: common_time_base(base.time_base, fps),
                    frame_rate: Some(Ratio::new(fps.numer() as i32, fps.denom() as i32)),
                    sample_aspect_ratio: base.sample_aspect_ratio,
                }
            }
        }
    }

    /// A recorder of provenance runs for one output.
    pub fn provenance(&self) -> ProvenanceRecorder {
        let mut sources = vec![(self.table.origin(), self.table.time_base)];
        if let Some(n) = &self.needle {
            sources.push((Time::ZERO, n.prepared.time_base()));
        }
        ProvenanceRecorder::new(&sources)
    }

    /// A recorder of the boxes of one output, when the stream has boxes.
    pub fn box_recorder(&self) -> Option<BoxRecorder> {
        (!self.box_sources.is_empty()).then(|| {
            BoxRecorder::for_sources(self.box_sources.clone())
                .with_sample_aspect_ratio(self.timing().sample_aspect_ratio)
        })
    }

    /// The frame stages that draw boxes, for one export (after its resize).
    pub fn draw_stages(&self) -> Vec<Box<dyn FrameStage + Send>> {
        self.draws
            .iter()
            .map(|(source, boxes, style)| {
                Box::new(OverlayStage::new(boxes.clone(), *source, style.clone()))
                    as Box<dyn FrameStage + Send>
            })
            .collect()
    }

    /// The inputs as sidecars describe them.
    pub fn source_records(&self) -> Vec<SourceRecord> {
        let mut first = SourceRecord::new(&self.source, &self.info, &self.table, true)
            .with_images(self.sequence.as_deref());
        if let Some(bytes) = self.url_bytes {
            first.size_bytes = bytes;
        }
        let mut records = vec![first];
        if let Some(n) = &self.needle {
            records.push(n.prepared.record());
        }
        records
    }

    /// The image file pipeline source `source` shows as its frame `index`, when that source
    /// is an image sequence (0: the source; 1: an inserted GOT-10k sequence).
    pub fn source_file(&self, source: usize, index: usize) -> Option<String> {
        match source {
            0 => self.sequence.as_ref().map(|s| s.file_name(index)),
            crate::frames::stages::insert::NEEDLE_SOURCE => self.needle.as_ref().and_then(|n| {
                n.prepared
                    .images
                    .get(index)
                    .and_then(|p| p.file_name())
                    .map(|f| f.to_string_lossy().into_owned())
            }),
            _ => None,
        }
    }

    /// What the stages resolved, for sidecars: the source frames of the cut and of the output
    /// (`cut`, `kept`), the exact start and end, the decision point, the stream's frame count
    /// and the insertion.
    pub fn resolved_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.resolved).expect("a resolved clip serialises");
        v["frames"] = self.frame_count().into();
        if let Some(n) = &self.needle {
            v["insert"] = serde_json::json!({
                "sequence": n.prepared.dir.display().to_string(),
                "seed": n.seed,
                "fit": n.fit,
                // The needle sits before this frame of the clip (its frame count: appended).
                "insert_frame": n.at,
                "insert_time": crate::vocab::time::decimal_text(n.time),
                // Output frames [needle_start, needle_end) are the needle.
                "needle_start": n.at,
                "needle_end": n.at + n.prepared.frames,
                "needle_frames": n.prepared.frames,
                "needle_duration": crate::vocab::time::decimal_text(n.prepared.duration),
                "sequence_frames": n.prepared.images.len(),
                "anno_fps": crate::vocab::time::decimal_text(n.prepared.anno_fps),
                "fps": crate::vocab::time::decimal_text(Time::from_secs(1) / n.prepared.step),
                "placement": n.prepared.placement,
            });
        }
        v
    }

    fn decode_options(&self) -> DecodeOptions {
        DecodeOptions {
            threads: self.threads,
            strict: self.plan.strict,
            ..DecodeOptions::default()
        }
    }

    /// Says that an export encodes the stream's soundtrack ([`ProcessedStream::audio`])
    /// while the whole stream is decoded: the audio packets then come from the full decode's
    /// input (see [`FrameReader::open_sharing_audio`]).
    pub fn audio_with_full_decode(&self) {
        self.audio_with_full_decode
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// A reader of the stream's source, positioned by its caller's seeks: it decodes from the
    /// input the stream was opened with while that is not taken (see
    /// [`FrameReader::from_used_input`]), else from an input opened now. For a pass that
    /// seeks on its own over the whole source (the tracker's frames, `crate::exec::track`).
    pub(crate) fn source_reader(&self) -> Result<FrameReader> {
        match self.take_used_input() {
            Some(used) => {
                FrameReader::from_used_input(used, self.decode_options(), self.table.clone())
            }
            None => FrameReader::open_with_table_in(
                &self.input,
                self.decode_options(),
                self.table.clone(),
                self.inputs.call(),
            ),
        }
    }

    /// The whole stream, in order.
    pub fn full_source(&self) -> Result<Box<dyn FrameSource>> {
        // A full decode reads from the start of the file. It reads the input the stream was
        // opened with where that is proven to read as a fresh input would: one not read yet
        // (the table was the cache's), or the table's scanned one rewound to its start where
        // the demuxer's seek there is exact and the first packets read after it are each
        // stream's first (MP4, MOV, Matroska, MPEG-TS: `media::rewind`), so that the item
        // opens its source once.
        // Elsewhere a seek back to the first keyframe is not always the same as reading from
        // the start (the decoder's state where the stream does not start on a keyframe first
        // in decoding order, concealment of damage the packets did not show, the audio
        // stream's position and priming where the soundtrack reads along, a demuxer's own
        // seeking rules): the kept input is let go and the source opened again.
        let reader = FrameReader::for_full_decode(
            &self.input,
            self.take_used_input(),
            self.decode_options(),
            self.table.clone(),
            self.audio_with_full_decode
                .load(std::sync::atomic::Ordering::SeqCst)
                .then_some(&self.inputs),
            self.inputs.call(),
        )?;
        let clip = ClipSource::new(
            reader,
            self.table.clone(),
            self.resolved.kept,
            self.resolved.end_time(),
            0,
        );
        Ok(match &self.needle {
            None => Box::new(clip),
            Some(n) => Box::new(SpliceSource::new(
                clip,
                self.resolved.kept.len(),
                n.at,
                n.time,
                &n.prepared,
                self.inputs.call(),
            )),
        })
    }

    /// The stream frames `range`, in order, with their stream indices, times and provenance
    /// (as the whole stream has them), reading only what they need: host frames are decoded
    /// from the keyframe before each run of them, needle frames rendered.
    pub fn range_source(&self, range: std::ops::Range<usize>) -> Result<Box<dyn FrameSource>> {
        self.range_source_with(range, self.threads)
    }

    /// [`range_source`](Self::range_source) with a decoder of `threads` threads (0: FFmpeg's
    /// automatic count), for ranges read side by side within the stream's budget.
    pub fn range_source_with(
        &self,
        range: std::ops::Range<usize>,
        threads: usize,
    ) -> Result<Box<dyn FrameSource>> {
        Ok(Box::new(self.range_reader(range, threads, None)?))
    }

    /// [`range_source_with`](Self::range_source_with) whose first run of host frames reads
    /// `input` (an input of this stream's source, positioned by the run's seek, or opened
    /// again where that seek would not decode as a fresh reader does: see
    /// [`FrameReader::from_used_input`]) instead of opening the source; the input of its last
    /// run can be had back ([`StreamRange::into_input`]).
    pub(crate) fn range_reader(
        &self,
        range: std::ops::Range<usize>,
        threads: usize,
        input: Option<UsedInput>,
    ) -> Result<StreamRange> {
        let options = DecodeOptions {
            threads,
            ..self.decode_options()
        };
        self.range_reader_decoding(range, options, input)
    }

    /// [`range_reader`](Self::range_reader) for an analysis of the stream's pictures (detect's
    /// pass): H.264's deblocking filter is skipped ([`DecodeOptions::skip_loop_filter`]), a
    /// cheaper decode whose pictures differ slightly from the true ones. Never for outputs.
    pub(crate) fn analysis_reader(
        &self,
        range: std::ops::Range<usize>,
        threads: usize,
        input: Option<UsedInput>,
    ) -> Result<StreamRange> {
        let options = DecodeOptions {
            threads,
            skip_loop_filter: true,
            ..self.decode_options()
        };
        self.range_reader_decoding(range, options, input)
    }

    fn range_reader_decoding(
        &self,
        range: std::ops::Range<usize>,
        options: DecodeOptions,
        input: Option<UsedInput>,
    ) -> Result<StreamRange> {
        if range.end > self.frame_count() || range.start > range.end {
            return Err(Error::internal(format!(
                "stream frames {}..{} asked of a stream of {} frames",
                range.start,
                range.end,
                self.frame_count()
            )));
        }
        let (at, k) = self
            .needle
            .as_ref()
            .map_or((usize::MAX, 0), |n| (n.at, n.prepared.frames));
        Ok(StreamRange {
            next: range.start,
            end: range.end,
            host: None,
            first_input: input,
            needle: self
                .needle
                .as_ref()
                .map(|n| NeedleRenderer::new(&n.prepared, n.at, n.time, self.inputs.call())),
            kept_start: self.resolved.kept.start,
            needle_at: at,
            needle_frames: k,
            times: self.times(),
            input: self.input.clone(),
            call: self.inputs.call().clone(),
            options,
            table: self.table.clone(),
            end_time: self.resolved.end_time(),
        })
    }

    /// Only the stream frames `wanted` (stream indices, any order): source frames are read by
    /// seeking (several workers), needle frames rendered. Frames come out in any order, each
    /// with its stream index, time and provenance.
    pub fn sparse_source(&self, wanted: &[usize], workers: usize) -> Result<Box<dyn FrameSource>> {
        let kept = self.resolved.kept;
        let (at, k) = self
            .needle
            .as_ref()
            .map_or((usize::MAX, 0), |n| (n.at, n.prepared.frames));
        let mut host = Vec::new();
        let mut needle = Vec::new();
        for &s in wanted {
            if s >= self.frame_count() {
                return Err(Error::internal(format!(
                    "stream frame {s} asked of a stream of {} frames",
                    self.frame_count()
                )));
            }
            if s < at {
                host.push(kept.start + s);
            } else if s < at + k {
                needle.push(s - at);
            } else {
                host.push(kept.start + s - k);
            }
        }
        host.sort_unstable();
        host.dedup();
        needle.sort_unstable();
        needle.dedup();
        let host_source = if host.is_empty() {
            None
        } else {
            Some(SparseSource::start_with(
                &self.input,
                self.table.clone(),
                &host,
                workers,
                self.decode_options(),
                self.take_used_input(),
                self.inputs.call(),
            )?)
        };
        Ok(Box::new(StreamSparse {
            host: host_source,
            needle: self.needle.as_ref().map(|n| {
                let renderer = NeedleRenderer::new(&n.prepared, n.at, n.time, self.inputs.call());
                (renderer, needle)
            }),
            table: self.table.clone(),
            kept_start: kept.start,
            start_time: self.resolved.start_time(),
            end_time: self.resolved.end_time(),
            needle_at: at,
            needle_frames: k,
            needle_duration: self
                .needle
                .as_ref()
                .map_or(Time::ZERO, |n| n.prepared.duration),
            count: wanted.len(),
        }))
    }
}

/// The frames of [`ProcessedStream::range_source`]: host frames decoded in order from the
/// keyframe before them, needle frames rendered, each renumbered and timed as in the stream.
pub(crate) struct StreamRange {
    next: usize,
    end: usize,
    /// The open run of host frames: its source, the next frame it gives, where it ends.
    host: Option<(ClipSource, usize, usize)>,
    /// The input the first run of host frames reads, when one was given.
    first_input: Option<UsedInput>,
    needle: Option<NeedleRenderer>,
    kept_start: usize,
    needle_at: usize,
    needle_frames: usize,
    times: Vec<Time>,
    input: Source,
    /// The call the stream's readers work for.
    call: CallContext,
    options: DecodeOptions,
    table: Arc<FrameTable>,
    end_time: Time,
}

impl StreamRange {
    /// The input of the last run of host frames, when it has one of its own (see
    /// [`FrameReader::into_input`]), or the one given and never read.
    pub(crate) fn into_input(self) -> Option<UsedInput> {
        match (self.host, self.first_input) {
            (Some((clip, _, _)), _) => clip
                .into_reader()
                .into_input()
                .map(|input| UsedInput { input, read: true }),
            (None, given) => given,
        }
    }

    /// The host frame of stream frame `s`, when it is one.
    fn host_frame(&self, s: usize) -> Option<usize> {
        if s < self.needle_at {
            Some(self.kept_start + s)
        } else if s >= self.needle_at + self.needle_frames {
            Some(self.kept_start + s - self.needle_frames)
        } else {
            None
        }
    }
}

impl FrameSource for StreamRange {
    fn next_frame(&mut self) -> Result<Option<PipelineFrame>> {
        if self.next >= self.end {
            return Ok(None);
        }
        let s = self.next;
        self.next += 1;
        let time = self.times[s];
        let mut frame = match self.host_frame(s) {
            None => {
                let n = self.needle.as_mut().expect("a needle frame has a needle");
                n.frame(s - self.needle_at)?
            }
            Some(src) => {
                // One forward decode per run of consecutive host frames.
                let fresh = match &self.host {
                    Some((_, expected, run_end)) => *expected != src || src >= *run_end,
                    None => true,
                };
                if fresh {
                    let mut run_end = src;
                    let mut t = s;
                    while t < self.end && self.host_frame(t) == Some(run_end) {
                        run_end += 1;
                        t += 1;
                    }
                    let mut reader = match self.first_input.take() {
                        Some(used) => FrameReader::from_used_input(
                            used,
                            self.options.clone(),
                            self.table.clone(),
                        )?,
                        None => FrameReader::open_with_table_in(
                            &self.input,
                            self.options.clone(),
                            self.table.clone(),
                            &self.call,
                        )?,
                    };
                    // Non-reference frames between the keyframe and the run are not decoded.
                    reader.want_only(&(src..run_end).collect::<Vec<_>>());
                    let clip = ClipSource::new(
                        reader,
                        self.table.clone(),
                        crate::vocab::time::FrameRange::new(src, run_end),
                        self.end_time,
                        0,
                    );
                    self.host = Some((clip, src, run_end));
                }
                let (clip, expected, _) = self.host.as_mut().expect("opened");
                *expected += 1;
                clip.next_frame()?.ok_or_else(|| {
                    Error::internal(format!("host frame {src} missing from its run"))
                })?
            }
        };
        frame.index = s;
        frame.time = time;
        Ok(Some(frame))
    }

    fn len_hint(&self) -> Option<usize> {
        Some(self.end - self.next)
    }
}

/// The frames of [`ProcessedStream::sparse_source`].
struct StreamSparse {
    host: Option<SparseSource>,
    needle: Option<(NeedleRenderer, Vec<usize>)>,
    table: Arc<FrameTable>,
    kept_start: usize,
    start_time: Time,
    end_time: Time,
    needle_at: usize,
    needle_frames: usize,
    needle_duration: Time,
    count: usize,
}

impl FrameSource for StreamSparse {
    fn next_frame(&mut self) -> Result<Option<PipelineFrame>> {
        if let Some((renderer, ks)) = self.needle.as_mut() {
            if let Some(k) = ks.pop() {
                return renderer.frame(k).map(Some);
            }
        }
        let Some(host) = self.host.as_mut() else {
            return Ok(None);
        };
        let Some(mut f) = host.next_frame()? else {
            return Ok(None);
        };
        let t = f.origin.index;
        let shown_until = (self.table.time(t) + self.table.duration_of(t)).min(self.end_time);
        let mut s = t - self.kept_start;
        let mut time = self.table.time(t) - self.start_time;
        if s >= self.needle_at {
            s += self.needle_frames;
            time = time + self.needle_duration;
        }
        f.index = s;
        f.duration = (shown_until - self.table.time(t)).max(Time::ZERO);
        f.time = time;
        Ok(Some(f))
    }

    fn len_hint(&self) -> Option<usize> {
        Some(self.count)
    }
}
