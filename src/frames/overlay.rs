//! Boxes on video: loading a source's annotations and resolving them onto its frames
//! ([`SourceBoxes`]), the pipeline stage that draws them on the YUV planes ([`OverlayStage`]),
//! and the recorder that carries them into an output's own frames and pixels
//! ([`BoxRecorder`]), so annotations stay true through cuts, truncation and resizing.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::annotations::{
    self, Annotations, BBox, BoxSource, Coords, Detection, Entry, Fill, FrameClock, Key,
    ReadOptions, ResolvedBoxes, TimestampClock, Track,
};
use crate::error::{Error, Result};
use crate::frames::draw::{make_writable, rgb_to_yuv, Canvas, Matrix, TextRenderer, PALETTE};
use crate::frames::pipeline::{FrameStage, PipelineFrame};
use crate::media::table::FrameTable;
use crate::plan::Plan;
use crate::records::frames_json::ImageBox;
use crate::vocab::time::Time;
use crate::vocab::Rgb;

/// How boxes are drawn.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Style {
    /// Line width in pixels; by default it scales with the frame (2 px at 360p, 6 px at 1080p).
    pub thickness: Option<u32>,
    /// One colour for every box instead of a palette colour per track.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<(u8, u8, u8)>,
    /// Draw a label tab (track label and id) above each box.
    pub labels: bool,
}

impl Style {
    /// Line width for a `width x height` frame.
    pub fn thickness_for(&self, width: u32, height: u32) -> i64 {
        match self.thickness {
            Some(t) => t.max(1) as i64,
            None => ((width.min(height) as f64 / 180.0).round() as i64).max(2),
        }
    }

    /// Label text height for a `width x height` frame.
    pub fn text_height_for(width: u32, height: u32) -> u32 {
        ((width.min(height) as f64 / 28.0).round() as u32).max(10)
    }

    fn color_of(&self, source: BoxSource, tracks: usize) -> Rgb {
        if let Some((r, g, b)) = self.color {
            return Rgb(r, g, b);
        }
        match source {
            BoxSource::Track(i) => PALETTE[i % PALETTE.len()],
            // Untracked detections share the colour after the tracks'.
            BoxSource::Detection(_) => PALETTE[tracks % PALETTE.len()],
        }
    }
}

/// Which annotation file to use for a source and how.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxesRequest {
    pub path: PathBuf,
    pub format: annotations::Format,
    pub read: ReadOptions,
    pub fill: Fill,
    /// The pixel grid the file's pixel boxes are on (they are moved onto the stored grid,
    /// the one frames are decoded, drawn and tracked on).
    pub grid: annotations::Grid,
    /// Draw the boxes (`None`: only carry them into the sidecar).
    pub draw: Option<Style>,
}

impl BoxesRequest {
    /// The boxes request for the annotation readers from `plan`, if it has boxes.
    pub fn of_plan(plan: &Plan) -> Option<BoxesRequest> {
        let b = plan.boxes.as_ref()?;
        let o = plan.box_options();
        Some(BoxesRequest {
            path: b.path.clone(),
            format: o.format,
            read: ReadOptions {
                min_confidence: o.min_confidence,
                item: o.item.clone(),
                prefer_keys: o.keys,
                units: o.units,
                camera: o.camera.clone(),
                frame_count: None,
                span: None,
                boxes_only: false,
            },
            fill: o.fill,
            grid: o.grid,
            draw: o.draw.then(|| Style {
                thickness: o.thickness,
                color: o.color.map(|c| (c.0, c.1, c.2)),
                labels: o.labels,
            }),
        })
    }

    pub fn new(path: PathBuf) -> BoxesRequest {
        BoxesRequest {
            path,
            format: annotations::Format::Auto,
            read: ReadOptions::default(),
            fill: Fill::Linear,
            grid: annotations::Grid::Stored,
            draw: None,
        }
    }
}

/// A video's frames as annotation resolution sees them.
pub struct VideoClock<'a> {
    pub table: &'a FrameTable,
    pub width: u32,
    pub height: u32,
}

impl FrameClock for VideoClock<'_> {
    fn frame_count(&self) -> usize {
        self.table.len()
    }

    fn frame_time(&self, index: usize) -> Time {
        self.table.time(index)
    }

    fn end_time(&self) -> Time {
        self.table.end_time()
    }

    fn frame_size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    fn frame_shown_at(&self, t: Time) -> Option<usize> {
        self.table.shown_at(t)
    }
}

/// A source's annotations resolved onto its frames.
pub struct SourceBoxes {
    pub request: BoxesRequest,
    /// The file's tracks (ids and labels, without their keys: those live on resolved in
    /// `resolved`), detections and meta.
    pub annotations: Annotations,
    pub resolved: ResolvedBoxes,
    pub warnings: Vec<String>,
    /// With `fill: track`: what was done to each gap of each track (source frames).
    pub tracked: Vec<crate::frames::tracking::GapRecord>,
}

impl SourceBoxes {
    /// Reads `request.path` and resolves it onto the frames of the video described by `table`,
    /// whose upright stored pictures are `width x height` and whose square-pixel size is
    /// `display`: the boxes end on the stored grid, moved there from `request.grid`. With
    /// `span`, only the boxes of those frames (and each track's nearest keys on either side)
    /// are kept. The read is counted on the call's tally (`ctx`).
    pub fn load(
        request: &BoxesRequest,
        table: &FrameTable,
        (width, height): (u32, u32),
        display: (u32, u32),
        span: Option<std::ops::Range<usize>>,
        ctx: &crate::call::context::CallContext,
    ) -> Result<SourceBoxes> {
        // Rows past the video's end, and outside the span, are not even kept (a MOT file far
        // longer than the span costs what the span's part of it costs).
        let read = ReadOptions {
            frame_count: Some(table.len()),
            span,
            boxes_only: true,
            ..request.read.clone()
        };
        ctx.count(crate::call::tally::Event::AnnotationRead);
        let mut annotations = annotations::read(&request.path, request.format, &read)?;
        let (sx, sy) = request.grid.to_stored((width, height), display);
        annotations.rescale_pixels(sx, sy);
        let clock = VideoClock {
            table,
            width,
            height,
        };
        let resolved = annotations.resolve(&clock, request.fill)?;
        let mut annotations = annotations;
        // The resolved boxes are all that is drawn and recorded from here on: the keyed
        // boxes and extras of the tracks (most of a large file's memory) are let go, the
        // tracks' ids and labels kept.
        for track in &mut annotations.tracks {
            track.keys = Default::default();
            track.extras = Default::default();
        }
        let dropped = annotations
            .meta
            .fields
            .get(annotations::mot::ROWS_PAST_THE_VIDEO)
            .and_then(|v| v.as_u64())
            .unwrap_or(0) as usize;
        let outside = resolved.keys_outside_video + dropped;
        let mut warnings = Vec::new();
        if outside > 0 {
            warnings.push(format!(
                "{}: {} annotation keys fall outside the video ({} frames, {:.3}s) and were not drawn",
                request.path.display(),
                outside,
                table.len(),
                table.end_time().as_secs_f64()
            ));
        }
        if let Some(serde_json::Value::Array(noticed)) =
            annotations.meta.fields.get(annotations::READ_WARNINGS)
        {
            warnings.extend(
                noticed
                    .iter()
                    .filter_map(|w| w.as_str())
                    .map(|w| format!("{}: {w}", request.path.display())),
            );
        }
        let outside_span = annotations
            .meta
            .fields
            .contains_key(annotations::mot::ROWS_OUTSIDE_THE_SPAN);
        if resolved.is_empty() && !annotations.is_empty() && !outside_span {
            warnings.push(format!(
                "{}: no annotation lands on any frame of the video",
                request.path.display()
            ));
        }
        Ok(SourceBoxes {
            request: request.clone(),
            annotations,
            resolved,
            warnings,
            tracked: Vec::new(),
        })
    }

    /// The text of a box's label tab, if it has one.
    fn label(&self, source: BoxSource) -> Option<String> {
        match source {
            BoxSource::Track(i) => {
                let t = &self.annotations.tracks[i];
                Some(match &t.label {
                    Some(l) if l != &t.id => format!("{l} {}", t.id),
                    Some(l) => l.clone(),
                    None => format!("id {}", t.id),
                })
            }
            BoxSource::Detection(i) => {
                let d = &self.annotations.detections[i];
                match (&d.label, d.score) {
                    (Some(l), _) => Some(l.clone()),
                    _ => None,
                }
            }
        }
    }
}

/// Rounds a box to whole pixels (half-open), at least one pixel wide and tall.
fn pixel_rect(b: &BBox) -> (i64, i64, i64, i64) {
    let (x0, y0) = (b.x1.round() as i64, b.y1.round() as i64);
    let (x1, y1) = (
        (b.x2.round() as i64).max(x0 + 1),
        (b.y2.round() as i64).max(y0 + 1),
    );
    (x0, y0, x1, y1)
}

/// Draws a source's boxes on the frames that come from it.
pub struct OverlayStage {
    boxes: Arc<SourceBoxes>,
    source: usize,
    style: Style,
    text: TextRenderer,
}

impl OverlayStage {
    pub fn new(boxes: Arc<SourceBoxes>, source: usize, style: Style) -> OverlayStage {
        OverlayStage {
            boxes,
            source,
            style,
            text: TextRenderer::new(),
        }
    }
}

impl FrameStage for OverlayStage {
    fn apply(&mut self, frame: &mut PipelineFrame) -> Result<()> {
        if frame.origin.source != self.source {
            return Ok(());
        }
        let list = self.boxes.resolved.boxes_at(frame.origin.index);
        if list.is_empty() {
            return Ok(());
        }
        make_writable(&mut frame.image)
            .map_err(|e| Error::Usage(format!("cannot draw on frame {}: {e}", frame.index)))?;
        // Boxes are drawn in YUV: this frame's RGB outputs are made from the drawn picture.
        frame.rgb = None;
        let (w, h) = (frame.image.width(), frame.image.height());
        let matrix = Matrix::of(&frame.image);
        let thickness = self.style.thickness_for(w, h);
        let text_px = Style::text_height_for(w, h);
        let tracks = self.boxes.annotations.tracks.len();
        let mut canvas = Canvas::new(&mut frame.image);
        for d in list {
            let Some(b) = frame.geometry.apply(&d.bbox).clamped(w as f64, h as f64) else {
                continue;
            };
            let rgb = self.style.color_of(d.source, tracks);
            let color = rgb_to_yuv(rgb, matrix);
            let (x0, y0, x1, y1) = pixel_rect(&b);
            canvas.stroke_rect(x0, y0, x1, y1, thickness, color);
            if !self.style.labels {
                continue;
            }
            let Some(text) = self.boxes.label(d.source) else {
                continue;
            };
            let mask = self.text.render(&text, text_px);
            let pad = (text_px as i64 / 5).max(2);
            let (tab_w, tab_h) = (mask.width as i64 + 2 * pad, mask.height as i64 + pad);
            let tx = x0.min(w as i64 - tab_w).max(0);
            let ty = if y0 - tab_h >= 0 { y0 - tab_h } else { y0 };
            canvas.fill_rect(tx, ty, tx + tab_w, ty + tab_h, color);
            let ink = if rgb.luma() > 140.0 {
                Rgb(0, 0, 0)
            } else {
                Rgb(255, 255, 255)
            };
            canvas.blend_mask(tx + pad, ty + pad / 2, mask, rgb_to_yuv(ink, matrix));
        }
        Ok(())
    }
}

/// The boxes of `frame` from `sources`, mapped into its pixels (`width x height`) and clipped
/// to them; boxes entirely outside are left out.
pub fn boxes_on(
    frame: &PipelineFrame,
    sources: &[(usize, Arc<SourceBoxes>)],
    width: u32,
    height: u32,
) -> Vec<ImageBox> {
    let mut out = Vec::new();
    for (id, boxes) in sources {
        if frame.origin.source != *id {
            continue;
        }
        for d in boxes.resolved.boxes_at(frame.origin.index) {
            let Some(b) = frame
                .geometry
                .apply(&d.bbox)
                .clamped(width as f64, height as f64)
            else {
                continue;
            };
            let (track, label) = match d.source {
                BoxSource::Track(i) => {
                    let t = &boxes.annotations.tracks[i];
                    (Some(t.id.clone()), t.label.clone())
                }
                BoxSource::Detection(i) => (None, boxes.annotations.detections[i].label.clone()),
            };
            let r = |v: f64| (v * 100.0).round() / 100.0;
            out.push(ImageBox {
                source: *id,
                track,
                label,
                x1: r(b.x1),
                y1: r(b.y1),
                x2: r(b.x2),
                y2: r(b.y2),
            });
        }
    }
    out
}

/// Collects the boxes of the frames an output receives, in the output's frames and pixels,
/// from one or more sources' annotations (e.g. a host's and an inserted sequence's).
pub struct BoxRecorder {
    /// (pipeline source id, its boxes, index of its first track in `out.tracks`).
    sources: Vec<(usize, Arc<SourceBoxes>, usize)>,
    out: Annotations,
    times: Vec<Time>,
    end: Time,
    size: (u32, u32),
    /// The shape of the output's pixels (`1:1` square), which its boxes' grid has.
    sample_aspect_ratio: crate::vocab::Ratio,
}

impl BoxRecorder {
    /// For an output whose pixels have this shape (the file's sample aspect ratio): its
    /// boxes are on its stored grid, and the annotations say so.
    pub fn with_sample_aspect_ratio(mut self, sar: crate::vocab::Ratio) -> BoxRecorder {
        self.sample_aspect_ratio = sar;
        self
    }

    /// Boxes of several sources; their tracks are listed one source after the other.
    pub fn for_sources(sources: Vec<(usize, Arc<SourceBoxes>)>) -> BoxRecorder {
        let mut out = Annotations::new(Coords::Pixels);
        let mut listed = Vec::new();
        for (id, boxes) in sources {
            let first = out.tracks.len();
            out.tracks
                .extend(boxes.annotations.tracks.iter().map(|t| Track {
                    id: t.id.clone(),
                    label: t.label.clone(),
                    ..Track::new(t.id.clone())
                }));
            listed.push((id, boxes, first));
        }
        BoxRecorder {
            sources: listed,
            out,
            times: Vec::new(),
            end: Time::ZERO,
            size: (0, 0),
            sample_aspect_ratio: crate::vocab::Ratio::new(1, 1),
        }
    }

    /// Records `frame`, which the output stores at `width x height` (after cropping to even).
    pub fn record(&mut self, frame: &PipelineFrame, width: u32, height: u32) -> Result<()> {
        self.record_parts(
            frame.index,
            frame.time,
            frame.duration,
            frame.origin,
            frame.geometry,
            (width, height),
        )
    }

    /// Records output frame `index` (shown at `time` for `duration`) made from `origin`'s
    /// pixels placed by `geometry` into a `size` picture: what [`BoxRecorder::record`] does
    /// for a frame that was copied rather than decoded.
    pub fn record_parts(
        &mut self,
        index: usize,
        time: Time,
        duration: Time,
        origin: crate::frames::pipeline::FrameOrigin,
        geometry: crate::frames::pipeline::Geometry,
        (width, height): (u32, u32),
    ) -> Result<()> {
        self.times.push(time);
        self.end = time + duration;
        self.size = (width, height);
        let key = Key::Frame(index);
        for (id, boxes, first) in &self.sources {
            if origin.source != *id {
                continue;
            }
            for d in boxes.resolved.boxes_at(origin.index) {
                let Some(b) = geometry.apply(&d.bbox).clamped(width as f64, height as f64) else {
                    continue;
                };
                match d.source {
                    BoxSource::Track(i) => {
                        self.out.tracks[first + i].insert(key, Entry::Present(b))?
                    }
                    BoxSource::Detection(i) => {
                        let src = &boxes.annotations.detections[i];
                        self.out.detections.push(Detection {
                            key,
                            bbox: b,
                            score: src.score,
                            label: src.label.clone(),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// The recorded annotations (tracks without any box in the output are dropped) and the
    /// output's clock.
    pub fn finish(mut self) -> Result<(Annotations, TimestampClock)> {
        // Which pipeline source each track comes from, in the order of `tracks`.
        let mut track_sources = Vec::new();
        for (id, boxes, _) in &self.sources {
            track_sources.extend(std::iter::repeat_n(*id, boxes.annotations.tracks.len()));
        }
        let mut keep = self.out.tracks.iter().map(|t| !t.keys.is_empty());
        track_sources.retain(|_| keep.next().unwrap_or(false));
        self.out.tracks.retain(|t| !t.keys.is_empty());
        self.out.meta.fields.insert(
            "track_sources".into(),
            serde_json::Value::from(track_sources),
        );
        let (w, h) = self.size;
        self.out.meta.frame_size = Some((w, h));
        // The grid the boxes are on: the output's stored pictures, whose pixels have this
        // shape (not square for a clip of non-square-pixel video, which keeps its pixels).
        let sar = self.sample_aspect_ratio;
        let sar = if sar.is_valid() && sar.num > 0 {
            format!("{}:{}", sar.num, sar.den)
        } else {
            "1:1".to_string()
        };
        self.out
            .meta
            .fields
            .insert("pixel_grid".into(), serde_json::Value::from("stored"));
        self.out
            .meta
            .fields
            .insert("sample_aspect_ratio".into(), serde_json::Value::from(sar));
        self.out.meta.frame_count = Some(self.times.len());
        self.out.meta.source_format = Some(annotations::Format::Vidprep);
        let from: Vec<serde_json::Value> = self
            .sources
            .iter()
            .map(|(_, b, _)| serde_json::Value::String(b.request.path.display().to_string()))
            .collect();
        self.out.meta.fields.insert(
            "remapped_from".into(),
            if from.len() == 1 {
                from[0].clone()
            } else {
                serde_json::Value::Array(from)
            },
        );
        // Gaps filled by a tracker: per source's track and gap, in the source's frames.
        let tracked: Vec<serde_json::Value> = self
            .sources
            .iter()
            .flat_map(|(_, b, _)| {
                let path = b.request.path.display().to_string();
                b.tracked.iter().map(move |g| {
                    let mut v = serde_json::to_value(g).unwrap_or_default();
                    v["annotations"] = serde_json::Value::String(path.clone());
                    v
                })
            })
            .collect();
        if !tracked.is_empty() {
            self.out
                .meta
                .fields
                .insert("tracked_gaps".into(), serde_json::Value::Array(tracked));
        }
        let clock = TimestampClock::new(self.times, self.end, w, h)?;
        self.out.meta.fps = clock.nominal_fps();
        Ok((self.out, clock))
    }
}
