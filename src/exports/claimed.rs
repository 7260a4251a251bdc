//! What one output video claims and writes beside itself, shared by every export that writes
//! a video (clip, its stream copy and smart encoding, video, preview): the claimed paths
//! ([`Claimed`]: the file, its sidecar, its boxes file), the sidecar, the boxes file and the
//! summary line.

use std::path::{Path, PathBuf};

use crate::annotations::{self, Fill, FrameClock};
use crate::call::output::group::OutputGroup;
use crate::error::Result;
use crate::exports::ExportTarget;
use crate::frames::sinks::EncodedOutput;
use crate::frames::stages::stream::ProcessedStream;
use crate::plan::{BoxesOut, ExportSpec, Plan};
use crate::records::sidecar::{write_json, OutputRecord, Sidecar, VERSION};
use crate::vocab::EncodeSettings;

/// Files claimed for one output video: where it will be and where it is being written.
pub(crate) struct Claimed {
    pub main: PathBuf,
    pub main_temp: PathBuf,
    pub sidecar: PathBuf,
    pub sidecar_temp: PathBuf,
    /// The boxes file: its format, final and temporary paths.
    pub boxes: Option<(BoxesOut, PathBuf, PathBuf)>,
}

/// The boxes file an output writes: asked for, or V-STaR for an insertion.
pub(crate) fn boxes_out_of(asked: Option<BoxesOut>, plan: &Plan) -> Option<BoxesOut> {
    asked.or(plan.insert.as_ref().map(|_| BoxesOut::Vstar))
}

impl Claimed {
    /// Claims a video file, its sidecar and (if any) its boxes file.
    pub fn claim(
        target: &ExportTarget,
        boxes_out: Option<BoxesOut>,
        group: &mut OutputGroup,
    ) -> Result<Claimed> {
        let main = target.main.clone();
        crate::media::encode::Container::for_output(&main)?;
        let main_temp = group.file(&main)?;
        let sidecar = target.sidecar_path();
        let sidecar_temp = group.file(&sidecar)?;
        // Written in place (not inside an item folder replaced as a whole): the sidecar must
        // not be another output's or a file vidprep did not write.
        if written_in_place(&sidecar_temp, &sidecar) {
            crate::records::sidecar::check_sidecar_owner(&sidecar, &main)?;
        }
        let boxes = match boxes_out {
            None => None,
            Some(format) => {
                let path = target.boxes.clone().unwrap_or_else(|| {
                    target.beside(match format {
                        BoxesOut::Vidprep => ".boxes.json",
                        BoxesOut::Vstar => ".vstar.json",
                    })
                });
                let temp = group.file(&path)?;
                // The boxes file beside a clip (`NAME.vstar.json` may well be a person's own
                // annotations): only the one this output's sidecar records is replaced.
                if written_in_place(&temp, &path) {
                    check_side_file_owner(&path, &sidecar, &main, SideFile::Boxes)?;
                }
                Some((format, path, temp))
            }
        };
        Ok(Claimed {
            main,
            main_temp,
            sidecar,
            sidecar_temp,
            boxes,
        })
    }

    /// The final paths, in order.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut f = vec![self.main.clone(), self.sidecar.clone()];
        if let Some((_, p, _)) = &self.boxes {
            f.push(p.clone());
        }
        f
    }
}

/// "out.mp4: 94 frames (source frames 125..219), ends at the decision point: 3.75s into the
/// output (source time 8.75s)".
pub(crate) fn clip_summary(
    main: &std::path::Path,
    stream: &ProcessedStream,
    frames: usize,
) -> String {
    let kept = stream.resolved.kept;
    let mut line = format!(
        "{}: {} frames (source frames {}..{})",
        main.display(),
        frames,
        kept.start,
        kept.end
    );
    if let Some(n) = &stream.needle {
        line.push_str(&format!(
            ", needle at output frames {}..{} ({}s)",
            n.at,
            n.at + n.prepared.frames,
            crate::vocab::time::human_secs(n.time)
        ));
    }
    if stream.resolved.decision.is_some() {
        // What the file holds: its end on its own timeline (from its first frame), and where
        // that is on the source's (the time `cut --end` would take).
        line.push_str(&format!(
            ", ends at the decision point: {}s into the output (source time {}s)",
            crate::vocab::time::human_secs(stream.duration()),
            crate::vocab::time::human_secs(stream.resolved.end_time())
        ));
    }
    line
}

/// Whether `temp`, the temporary of the output file `path`, is written in `path`'s own
/// folder (a single command's output, replaced file by file) rather than inside an item folder
/// replaced as a whole (whose record proves what vidprep wrote).
pub(crate) fn written_in_place(temp: &Path, path: &Path) -> bool {
    let folder = |p: &Path| {
        p.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf()
    };
    folder(temp) == folder(path)
}

/// A file vidprep writes beside a video output, named in the output's sidecar.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SideFile {
    /// `--base64 PATH` (`budget.base64`).
    Base64,
    /// The request body of `--payload` (`payload.file`).
    Payload,
    /// The boxes file (`boxes_file`).
    Boxes,
}

impl SideFile {
    fn what(self) -> &'static str {
        match self {
            SideFile::Base64 => "Base64 text",
            SideFile::Payload => "request body",
            SideFile::Boxes => "boxes file",
        }
    }

    /// Where a sidecar records this file.
    fn recorded(self, sidecar: &serde_json::Value) -> Option<&str> {
        match self {
            SideFile::Base64 => sidecar["budget"]["base64"].as_str(),
            SideFile::Payload => sidecar["payload"]["file"].as_str(),
            SideFile::Boxes => sidecar["boxes_file"].as_str(),
        }
    }
}

/// Refuses to replace `path`, a file written beside the video `main`, unless it is the file
/// of that kind that `sidecar`, the output's vidprep sidecar, records: vidprep never replaces
/// a file it did not write.
pub(crate) fn check_side_file_owner(
    path: &Path,
    sidecar: &Path,
    main: &Path,
    kind: SideFile,
) -> Result<()> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    let record = std::fs::read_to_string(sidecar)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .filter(|v| v.get("vidprep_version").is_some());
    let recorded = record
        .as_ref()
        .and_then(|v| kind.recorded(v))
        .map(PathBuf::from);
    if recorded.as_deref().and_then(Path::file_name) == path.file_name() {
        return Ok(());
    }
    Err(crate::error::Error::request(
        path,
        format!(
            "is in the way of {}'s {} and is not one vidprep wrote (its sidecar {} does not \
             record it); vidprep does not replace files it did not write: move it, or name \
             the output differently",
            main.display(),
            kind.what(),
            sidecar.display()
        ),
    ))
}

/// Writes the sidecar of a video output made from `stream`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn video_sidecar(
    kind: &'static str,
    stream: &ProcessedStream,
    spec: &ExportSpec,
    claimed: &Claimed,
    out: &EncodedOutput,
    encode: Option<&EncodeSettings>,
    extra: serde_json::Map<String, serde_json::Value>,
    mut warnings: Vec<String>,
) -> Result<Sidecar> {
    let mut all = stream.warnings.clone();
    all.append(&mut warnings);
    let annotations = match &out.boxes {
        Some((boxes, _)) => {
            if boxes.box_count() == 0 {
                all.push("no annotated box falls inside this output".into());
            }
            // Embedded as the text the writer made (a tree of JSON values would cost several
            // times the boxes' own memory).
            let text = annotations::to_native_string(boxes)?;
            Some(serde_json::value::RawValue::from_string(text).expect("native JSON parses"))
        }
        None => None,
    };
    let mut extra = extra;
    if let Some((_, path, _)) = &claimed.boxes {
        extra.insert(
            "boxes_file".into(),
            serde_json::Value::String(path.display().to_string()),
        );
    }
    if let (Some((_, clock)), Some((BoxesOut::Vstar, path, _))) = (&out.boxes, &claimed.boxes) {
        if let Some(p) = annotations::index_time_parting(clock) {
            all.push(format!(
                "{}: V-STaR gives a box's time as frame_index / fps ({} fps), and so does this \
                 file; {} frame(s) of this output are shown half a frame or more from that \
                 time (first: frame {} at {}s, frame_index / fps {}s): use frame_index to \
                 find a box's frame",
                path.display(),
                p.fps,
                p.frames,
                p.first_frame,
                p.frame_time_s,
                p.index_time_s
            ));
            extra.insert(
                "vstar_times".into(),
                serde_json::to_value(&p).expect("a parting serialises"),
            );
        }
    }
    if !out.damaged_frames.is_empty() {
        all.push(format!(
            "{} output frame(s) come from source pictures the decoder marked as damaged (first: output frame {})",
            out.damaged_frames.len(),
            out.damaged_frames[0].output_frame
        ));
    }
    let sidecar = Sidecar {
        vidprep_version: VERSION,
        kind,
        output: OutputRecord::from_report(&claimed.main, &out.report),
        sources: stream.source_records(),
        request: serde_json::to_value(&stream.plan).expect("a plan serialises"),
        export: serde_json::to_value(spec).expect("an export serialises"),
        resolved: stream.resolved_json(),
        frames: out.frames.clone(),
        damaged_frames: out.damaged_frames.clone(),
        encode: encode.cloned(),
        annotations,
        extra,
        warnings: all,
    };
    write_json(&claimed.sidecar_temp, &sidecar)?;
    Ok(sidecar)
}

/// Writes the output's boxes beside it, when claimed: vidprep JSON, or V-STaR (one item per
/// track; for a needle insertion, the needle's item with its span and provenance).
pub(crate) fn write_boxes_file(
    claimed: &Claimed,
    out: &EncodedOutput,
    stream: &ProcessedStream,
) -> Result<()> {
    let Some((format, path, temp)) = &claimed.boxes else {
        return Ok(());
    };
    let vid = claimed
        .main
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some((boxes, clock)) = &out.boxes else {
        return Err(crate::error::Error::internal(format!(
            "{}: a boxes file was claimed for an output without boxes",
            path.display()
        )));
    };
    let text = match format {
        BoxesOut::Vidprep => annotations::to_native_string(boxes)?,
        BoxesOut::Vstar => match &stream.needle {
            Some(n) => {
                let provenance = serde_json::json!({
                    "host": stream.source.display().to_string(),
                    "sequence": n.prepared.dir.display().to_string(),
                    "insert_frame": n.at,
                    "insert_time": crate::vocab::time::decimal_text(n.time),
                    "needle_frames": [n.at, n.at + n.prepared.frames],
                    "seed": n.seed,
                    "fit": n.fit,
                    "vidprep_version": VERSION,
                });
                crate::frames::stages::insert::needle_vstar_text(boxes, clock, n, &vid, provenance)?
            }
            None => {
                let mut items = Vec::new();
                for i in 0..boxes.tracks.len() {
                    let mut item = annotations::vstar_item(boxes, i, clock, Fill::None, &vid)?;
                    if let Some(fps) = clock.nominal_fps() {
                        item.fps = fps.as_secs_f64();
                    }
                    items.push(item);
                }
                serde_json::to_string_pretty(&items).expect("V-STaR items serialize") + "\n"
            }
        },
    };
    std::fs::write(temp, text).map_err(|e| crate::error::Error::io(path, e))
}
