//! Keeping only the boxes a request can use, for readers of frame-keyed rows (plain and Waymo
//! CSV/JSON, GOT-10k), as the MOT reader does: with [`ReadOptions::frame_count`], rows past the
//! video's last frame are counted ([`ROWS_PAST_THE_VIDEO`]) and dropped but for each track's
//! first key after the end; with [`ReadOptions::span`], rows outside the span are counted
//! ([`ROWS_OUTSIDE_THE_SPAN`]) and dropped but for each track's last key before the span and
//! first after it (what filling a gap that reaches into the span needs). Memory then follows
//! the boxes of the span and the number of tracks, not the file. Rows keyed by time are all
//! kept (a time is placed on a frame only against the video's clock, after the read).
//!
//! A row that is dropped is not checked against the others (a second box for the same track
//! and frame, or another label for its track, is refused only among the rows kept), as in MOT.

use std::collections::HashMap;
use std::ops::Range;

use super::error::{AnnotationError, Location};
use super::model::{Extras, Key, Meta, Track, TrackSet};
use super::mot::{ROWS_OUTSIDE_THE_SPAN, ROWS_PAST_THE_VIDEO};
use super::{Entry, ReadOptions};

/// A row held back as a track's nearest outside the span or past the end.
struct Held {
    frame: usize,
    label: Option<String>,
    entry: Entry,
    extras: Extras,
    at: Location,
    order: usize,
}

/// The filter over a reader's rows, in file order (see the module's doc).
pub(crate) struct SpanFilter {
    frame_count: Option<usize>,
    span: Option<Range<usize>>,
    order: usize,
    beyond: usize,
    outside: usize,
    after_end: HashMap<String, Held>,
    before: HashMap<String, Held>,
    after: HashMap<String, Held>,
    first_row: HashMap<String, usize>,
}

impl SpanFilter {
    /// The filter of `options` (it keeps everything when neither a frame count nor a span
    /// is given).
    pub(crate) fn new(options: &ReadOptions) -> SpanFilter {
        SpanFilter {
            frame_count: options.frame_count,
            span: options.span.clone(),
            order: 0,
            beyond: 0,
            outside: 0,
            after_end: HashMap::new(),
            before: HashMap::new(),
            after: HashMap::new(),
            first_row: HashMap::new(),
        }
    }

    /// Adds a row to `set` when the request can use it; else counts it, holding it back when
    /// it is its track's nearest on its side.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add(
        &mut self,
        set: &mut TrackSet,
        id: &str,
        label: Option<&str>,
        key: Key,
        entry: Entry,
        extras: Extras,
        at: Location,
    ) -> Result<(), AnnotationError> {
        self.order += 1;
        let Key::Frame(frame) = key else {
            return set.add(id, label, key, entry, extras, at);
        };
        let held = |order| Held {
            frame,
            label: label.map(str::to_string),
            entry,
            extras,
            at,
            order,
        };
        if self.frame_count.is_some_and(|n| frame >= n) {
            self.beyond += 1;
            keep_nearest(&mut self.after_end, id, held(self.order), |k, f| f < k);
            return Ok(());
        }
        if self.span.is_some() && !self.first_row.contains_key(id) {
            self.first_row.insert(id.to_string(), self.order);
        }
        if let Some(s) = self.span.as_ref().filter(|s| !s.contains(&frame)) {
            self.outside += 1;
            if frame < s.start {
                keep_nearest(&mut self.before, id, held(self.order), |k, f| f > k);
            } else {
                keep_nearest(&mut self.after, id, held(self.order), |k, f| f < k);
            }
            return Ok(());
        }
        let h = held(self.order);
        set.add(id, h.label.as_deref(), key, h.entry, h.extras, h.at)
    }

    /// Counts a row its reader knows the request cannot use, not even as its track's nearest
    /// outside the span (a reader of consecutive frames drops those without building them).
    pub(crate) fn count_dropped(&mut self, id: &str, frame: usize) {
        self.order += 1;
        if self.frame_count.is_some_and(|n| frame >= n) {
            self.beyond += 1;
            return;
        }
        if self.span.is_some() && !self.first_row.contains_key(id) {
            self.first_row.insert(id.to_string(), self.order);
        }
        if self.span.as_ref().is_some_and(|s| !s.contains(&frame)) {
            self.outside += 1;
        }
    }

    /// Adds the rows held back, in file order, and records the counts in `meta`; `tracks`
    /// (the set's, taken after this) keep the order of their first rows inside the video.
    pub(crate) fn finish(mut self, set: &mut TrackSet) -> Result<FilterCounts, AnnotationError> {
        let mut held: Vec<(String, Held, bool)> = self
            .before
            .drain()
            .chain(self.after.drain())
            .map(|(id, h)| (id, h, false))
            .chain(self.after_end.drain().map(|(id, h)| (id, h, true)))
            .collect();
        held.sort_by_key(|(_, h, past)| (*past, h.order));
        for (id, h, past) in held {
            if past {
                self.beyond -= 1;
            } else {
                self.outside -= 1;
            }
            set.add(
                &id,
                h.label.as_deref(),
                Key::Frame(h.frame),
                h.entry,
                h.extras,
                h.at,
            )?;
        }
        Ok(FilterCounts {
            beyond: self.beyond,
            outside: self.outside,
            first_row: self.span.is_some().then_some(self.first_row),
        })
    }
}

/// What [`SpanFilter::finish`] counted.
pub(crate) struct FilterCounts {
    beyond: usize,
    outside: usize,
    first_row: Option<HashMap<String, usize>>,
}

impl FilterCounts {
    /// Puts the tracks in the order of their first rows inside the video (with a span) and
    /// the counts of rows not kept in `meta`.
    pub(crate) fn apply(self, tracks: &mut [Track], meta: &mut Meta) {
        if let Some(first) = &self.first_row {
            tracks.sort_by_key(|t| first.get(&t.id).map_or((1, 0), |&o| (0, o)));
        }
        if self.beyond > 0 {
            meta.fields
                .insert(ROWS_PAST_THE_VIDEO.into(), self.beyond.into());
        }
        if self.outside > 0 {
            meta.fields
                .insert(ROWS_OUTSIDE_THE_SPAN.into(), self.outside.into());
        }
    }
}

/// Holds `row` for `id` unless a row held already is nearer (`nearer(kept, frame)` says the
/// new frame is nearer; of equals, the first in the file stays).
fn keep_nearest(
    map: &mut HashMap<String, Held>,
    id: &str,
    row: Held,
    nearer: fn(usize, usize) -> bool,
) {
    match map.get_mut(id) {
        Some(kept) if !nearer(kept.frame, row.frame) => {}
        Some(kept) => *kept = row,
        None => {
            map.insert(id.to_string(), row);
        }
    }
}
