//! Writing a smart clip as its plan says: the parts in order (copied GOPs moved across,
//! re-encoded stretches decoded from the processed stream, drawn, and given to x264 matched
//! to the source) into one stream (`media::smart_parts`), the provenance and boxes of every
//! output frame recorded, then the sidecar and the boxes file.

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use serde_json::json;

use crate::error::{Error, Result};
use crate::exports::claimed::{video_sidecar, write_boxes_file, Claimed};
use crate::exports::smart::parts::Part;
use crate::exports::smart::verify::verify_output;
use crate::exports::smart::SmartPlan;
use crate::exports::ExportReport;
use crate::frames::pipeline::FrameSource;
use crate::frames::pipeline::{FrameOrigin, Geometry, PipelineFrame, Progress};
use crate::frames::provenance::FrameNote;
use crate::frames::sinks::EncodedOutput;
use crate::frames::stages::stream::ProcessedStream;
use crate::media::encode::{Container, WriteReport};
use crate::media::smart_parts::mux::{SpliceMuxer, SpliceTiming};
use crate::media::smart_parts::sink::{PacketBuffer, PacketSink};
use crate::media::smart_parts::x264::{Matched, PartEncoder};
use crate::media::table::UsedInput;
use crate::plan::ExportSpec;
use crate::vocab::time::{Rounding, Time};
use crate::vocab::EncodeSettings;

/// Writes a smart clip of `stream` as `plan` says; returns its report (the sidecar and
/// boxes file written at their temporary paths).
pub(crate) fn write(
    stream: &ProcessedStream,
    spec: &ExportSpec,
    claimed: &Claimed,
    plan: SmartPlan,
    settings: &EncodeSettings,
    verify: bool,
    progress: &mut dyn Progress,
) -> Result<ExportReport> {
    let path = claimed.main.as_path();
    let container = Container::for_output(path)?;
    let n = plan.pts.len();
    progress.set_length(n as u64);
    let mut smart = plan.describe();
    let copied = plan.copied_frames();
    let matched = plan.matched(stream, settings);
    let ps_id = plan.ps_id;
    // The encoder the plan opened, for the first part encoded on this thread.
    let mut opened = plan.opened;

    // The sample entry: the source's parameter sets and the re-encoded parts'.
    let encoder_sets = plan.encoder_sets.clone();
    let mut avcc = plan.source.avcc.clone();
    if let Some((sps, pps)) = &encoder_sets {
        avcc.compat &= sps.get(2).copied().unwrap_or(0xff);
        avcc.level = avcc.level.max(sps.get(3).copied().unwrap_or(0));
        avcc.sps.push(sps.clone());
        avcc.pps.push(pps.clone());
    }

    // The output: the source's video parameters with both parameter-set pairs, and AAC.
    let time_base = plan.time_base;
    let end_pts = stream
        .duration()
        .to_pts(time_base.num, time_base.den, Rounding::Nearest);
    let audio_plan = stream.audio();
    let mut source = plan.source;
    let mut muxer = SpliceMuxer::create(
        path,
        &claimed.main_temp,
        container,
        &source,
        &avcc,
        SpliceTiming {
            time_base,
            frame_rate: stream.timing().frame_rate,
            pts: &plan.pts,
            end_pts,
            delay: plan.delay,
        },
        settings
            .audio
            .then_some((&audio_plan, settings.audio_bit_rate)),
    )?;
    let index = &plan.index;
    let times = stream.times();
    let mut provenance = stream.provenance();
    let mut recorder = stream.box_recorder();
    let size = stream.size;
    let mut draw = stream.draw_stages();
    // With two cores in the item's budget and nothing drawn or recorded per frame, the last
    // re-encoded part (the tail) is decoded and encoded on a second thread while the parts
    // before it are written; its packets wait in a buffer until the output gets there (the
    // same packets in the same order: each part is its own x264 run). The tail's decoder then
    // has one of the budget's threads (it reads from the tail's keyframe on: at most a GOP),
    // the others the rest (FFmpeg's automatic count where the budget is automatic).
    let budget = crate::call::host::worker_count(stream.threads);
    let beside =
        beside_part(&plan.parts).filter(|_| budget >= 2 && draw.is_empty() && recorder.is_none());
    let (threads, tail_threads) = match (beside, stream.threads) {
        (None, t) => (t, t),
        (Some(_), 0) => (0, 1),
        (Some(_), t) => (t - 1, 1),
    };
    let stop = AtomicBool::new(false);
    let failed = AtomicBool::new(false);
    let (pts, length_size) = (&plan.pts[..], avcc.length_size);
    // The call the stream's readers work for (the tail's thread reads for it too).
    let call = stream.inputs.call();
    std::thread::scope(|scope| -> Result<()> {
        let mut tail = beside.map(|k| {
            let output = plan.parts[k].output();
            let (sender, done) = mpsc::channel::<u64>();
            let (stop, failed, matched, encoder_sets) = (&stop, &failed, &matched, &encoder_sets);
            let handle = scope.spawn(move || {
                let mut buffer = PacketBuffer::new(path, pts, length_size);
                let mut notes = Vec::with_capacity(output.len());
                let result = encode_part(
                    stream,
                    matched,
                    encoder_sets,
                    None,
                    &output,
                    tail_threads,
                    None,
                    &mut buffer,
                    &mut |frame| {
                        notes.push(FrameNote::of(frame));
                        let _ = sender.send(1);
                        Ok(!stop.load(Ordering::SeqCst) && !call.cancelled())
                    },
                );
                // Stopped, or cut short by the cancel (an open or a read that FFmpeg's
                // interrupt callback ended): the cancel.
                let stopped = stop.load(Ordering::SeqCst) || call.cancelled();
                match result {
                    Ok(_) => Ok((buffer, notes)),
                    Err(_) if stopped => Err(Error::Cancelled),
                    Err(e) => {
                        failed.store(true, Ordering::SeqCst);
                        Err(e)
                    }
                }
            });
            Tail {
                part: k,
                output: plan.parts[k].output(),
                handle,
                done,
            }
        });
        let written = (|| -> Result<()> {
            for (k, part) in plan.parts.iter().enumerate() {
                match part {
                    Part::Copied {
                        output,
                        source: frames,
                    } => {
                        let first_dec = index.dec_of_disp[frames.start];
                        muxer.copy_packets(
                            &mut source,
                            first_dec..first_dec + frames.len(),
                            frames.start,
                            &|dec| output.start + (index.disp_of_dec[dec] - frames.start),
                        )?;
                        for (i, s) in frames.clone().enumerate() {
                            let o = output.start + i;
                            let origin = FrameOrigin {
                                source: 0,
                                index: s,
                                pts: stream.table.pts(s),
                            };
                            let shown = muxer.duration(o);
                            let duration = Time::from_pts(shown, time_base.num, time_base.den);
                            provenance.record_parts(o, times[o], origin);
                            if let Some(r) = recorder.as_mut() {
                                r.record_parts(
                                    o,
                                    times[o],
                                    duration,
                                    origin,
                                    Geometry::IDENTITY,
                                    size,
                                )?;
                            }
                        }
                        let beside_done = tail.as_ref().map_or(0, Tail::frames_done);
                        if !progress.advance(output.len() as u64 + beside_done) {
                            return Err(Error::Cancelled);
                        }
                    }
                    Part::Encoded { .. } if tail.as_ref().is_some_and(|t| t.part == k) => {
                        let t = tail.take().expect("the tail's thread");
                        for k in t.done.iter() {
                            if !progress.advance(k) {
                                stop.store(true, Ordering::SeqCst);
                                return Err(Error::Cancelled);
                            }
                        }
                        let (buffer, notes) = t.join(path)?;
                        for note in &notes {
                            provenance.record_note(note);
                        }
                        muxer.write_buffer(buffer)?;
                    }
                    Part::Encoded { output } => {
                        // Read from the source's input, lent and given back for the copies.
                        let lent = source.lend_input();
                        let back = encode_part(
                            stream,
                            &matched,
                            &encoder_sets,
                            opened.take(),
                            output,
                            threads,
                            lent,
                            &mut muxer,
                            &mut |frame| {
                                for stage in draw.iter_mut() {
                                    stage.apply(frame)?;
                                }
                                provenance.record(frame);
                                if let Some(r) = recorder.as_mut() {
                                    r.record(frame, size.0, size.1)?;
                                }
                                let beside_done = tail.as_ref().map_or(0, Tail::frames_done);
                                // The tail's failure stops this part: its error is the item's.
                                Ok(progress.advance(1 + beside_done)
                                    && !failed.load(Ordering::SeqCst))
                            },
                        )?;
                        source.give_back(back);
                    }
                }
            }
            Ok(())
        })();
        // Whatever ended the parts, the tail's thread stops and is joined here; where it
        // failed first, its error is the item's.
        stop.store(true, Ordering::SeqCst);
        match (written, tail.map(|t| t.join(path))) {
            (Err(Error::Cancelled), Some(Err(e))) if failed.load(Ordering::SeqCst) => Err(e),
            (Err(_), _) if call.cancelled() => Err(Error::Cancelled),
            (written, _) => written,
        }
    })?;
    if muxer.written() != n {
        return Err(Error::internal(format!(
            "{}: wrote {} video packets for {n} frames",
            path.display(),
            muxer.written()
        )));
    }
    let (video_bytes, audio) = muxer.finish()?;
    drop(source);

    let (runs, damaged_frames) = provenance.into_parts();
    let encoded = EncodedOutput {
        report: WriteReport {
            frames: n,
            width: size.0,
            height: size.1,
            cropped_right: 0,
            cropped_bottom: 0,
            duration: stream.duration(),
            audio,
            video_bytes,
            // Copied GOPs keep the source's description, re-encoded parts are given it.
            colour: crate::media::encode::file_colour(&claimed.main_temp),
        },
        frames: runs,
        damaged_frames,
        boxes: recorder.map(|r| r.finish()).transpose()?,
    };
    smart["encode"] = json!({"crf": settings.crf, "preset": settings.preset, "bframes": 0,
                            "parameter_set_id": ps_id});
    let mut warnings = Vec::new();
    if verify {
        let report = verify_output(&claimed.main_temp, stream, &plan.parts)?;
        smart["verify"] = serde_json::to_value(&report).expect("serialises");
    }
    let mut extra = serde_json::Map::new();
    extra.insert("smart".into(), smart);
    if copied * 2 < n {
        warnings.push(format!(
            "smart encoding copied only {copied} of {n} frames (the source's GOPs are long for this clip)"
        ));
    }
    let sidecar = video_sidecar(
        "clip",
        stream,
        spec,
        claimed,
        &encoded,
        Some(settings),
        extra,
        warnings,
    )?;
    write_boxes_file(claimed, &encoded, stream)?;
    Ok(ExportReport {
        name: spec.name().to_string(),
        kind: "clip",
        files: claimed.files(),
        summary: format!(
            "{}; smart: {copied} frames copied, {} re-encoded",
            crate::exports::claimed::clip_summary(&claimed.main, stream, n),
            n - copied
        ),
        frames: n,
        warnings: sidecar.warnings,
    })
}

/// The part encoded beside the others where the cores allow: the last re-encoded one, when
/// there are two or more.
fn beside_part(parts: &[Part]) -> Option<usize> {
    let encoded: Vec<usize> = (0..parts.len())
        .filter(|&k| matches!(parts[k], Part::Encoded { .. }))
        .collect();
    (encoded.len() >= 2).then(|| encoded[encoded.len() - 1])
}

/// The tail part being encoded on its own thread.
struct Tail<'s> {
    /// Its position in the plan's parts, and its output frames.
    part: usize,
    output: Range<usize>,
    handle: std::thread::ScopedJoinHandle<'s, Result<(PacketBuffer<'s>, Vec<FrameNote>)>>,
    /// Frames it has encoded (one message each), for the progress.
    done: mpsc::Receiver<u64>,
}

impl<'s> Tail<'s> {
    /// Frames encoded since last asked.
    fn frames_done(&self) -> u64 {
        self.done.try_iter().sum()
    }

    /// Waits for the thread: the part's packets and what to record of its frames, or the
    /// error that ended it (a panic becomes an error naming the part).
    fn join(self, path: &Path) -> Result<(PacketBuffer<'s>, Vec<FrameNote>)> {
        let output = self.output;
        self.handle.join().unwrap_or_else(|_| {
            Err(Error::internal(format!(
                "{}: the thread encoding output frames {}..{} panicked",
                path.display(),
                output.start,
                output.end
            )))
        })
    }
}

/// Re-encodes output frames `output` with a fresh x264 run matched to the source (`opened`,
/// an unused one opened with the same settings, or one opened now), read with a decoder of
/// `threads` threads (from `input`, an input of the source, where one is given: see
/// [`ProcessedStream::range_reader`]): `each` sees every frame before it is encoded (it may
/// draw on it; false: stop, with [`Error::Cancelled`]), `sink` gets the packets in output
/// order. Returns the reader's input for whatever reads the source next on this thread.
#[allow(clippy::too_many_arguments)]
fn encode_part(
    stream: &ProcessedStream,
    matched: &Matched,
    encoder_sets: &Option<(Vec<u8>, Vec<u8>)>,
    opened: Option<PartEncoder>,
    output: &Range<usize>,
    threads: usize,
    input: Option<UsedInput>,
    sink: &mut dyn PacketSink,
    each: &mut dyn FnMut(&mut PipelineFrame) -> Result<bool>,
) -> Result<Option<UsedInput>> {
    let path = sink.path().to_path_buf();
    let mut encoder = match opened {
        Some(e) => e.starting_at(output.start),
        None => PartEncoder::open(&stream.source, matched, output.start)?,
    };
    // Every part must use the parameter sets the sample entry carries.
    if encoder.parameter_sets().ok() != *encoder_sets {
        return Err(Error::internal(format!(
            "{}: x264 wrote other parameter sets for output frames {}..{}",
            path.display(),
            output.start,
            output.end
        )));
    }
    let mut frames = stream.range_reader(output.clone(), threads, input)?;
    while let Some(mut frame) = frames.next_frame()? {
        if !each(&mut frame)? {
            return Err(Error::Cancelled);
        }
        encoder.send(&frame.image, frame.index, sink)?;
    }
    let next_out = encoder.finish(sink)?;
    if next_out != output.end {
        return Err(Error::internal(format!(
            "{}: encoded {} of the {} frames of output frames {}..{}",
            path.display(),
            next_out - output.start,
            output.len(),
            output.start,
            output.end
        )));
    }
    Ok(frames.into_input())
}
