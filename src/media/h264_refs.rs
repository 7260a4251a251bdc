//! Which pictures of an H.264 stream a picture may be predicted from, read from the slice
//! headers alone (no macroblock is parsed), so that sparse reading decodes only what its
//! targets depend on.
//!
//! The frame table's scan feeds every packet (decoding order) to an [`Analyser`]. It keeps the
//! decoder's list of short-term reference frames as the standard defines it (8.2.4: the
//! initial lists by frame number or picture order count, the slice's
//! `ref_pic_list_modification`, `num_ref_idx_active`; 8.2.5: sliding-window marking and
//! MMCO 1), and records for each picture a superset of the frames its slices can name: the
//! first `num_ref_idx_active` entries of each initial list (two at least for list 1 when it
//! equals list 0, since its first two are then swapped) and every frame a modification names.
//! A frame a target does not depend on, directly or through others, can then be left out of
//! the decoder's input: a missing reference frame is a gap in `frame_num`, which the decoder
//! fills the way the standard does (8.2.5.2: FFmpeg's `h264_field_start` puts a copy of the
//! last frame in its place), so in a P slice's lists (ordered by frame number) every frame the
//! target depends on sits where it would. A B slice's lists are ordered by picture order
//! count, which a filled-in frame does not have (FFmpeg gives it the previous frame's plus 2),
//! so every frame held as a reference when a needed B picture is decoded is sent (decoded,
//! though nothing needed refers to it), and its lists are the full decode's. Only frames whose
//! packets hold nothing but non-IDR slices, SEI, delimiters or filler and that mark no
//! references explicitly (no MMCO) are ever left out.
//!
//! Whatever the analysis does not model makes it give up for the whole stream (sparse reading
//! then skips only non-reference frames, as before): field pictures, long-term references,
//! MMCO other than 1, picture order count type 1, gaps in `frame_num` in the stream itself,
//! several pictures in one packet, a slice header that does not parse. Picture order counts
//! must also come out the same from the frames that are decoded as from all of them: the
//! most significant part of a type 0 count is derived from the previous *decoded* reference
//! frame (8.2.1.1), so [`RefGraph::droppable_for`] replays that derivation over the frames it
//! would send and keeps a left-out reference frame wherever the count would change (x264's
//! counts wrap every few frames); an IDR period with another intra picture in it (where a
//! seek could start without the IDR's reset) or an IDR whose count does not start at 0 keeps
//! all its frames, and so does a type 2 period in which `frame_num` wraps.

use std::collections::{HashMap, HashSet};

use crate::media::h264::{nal_type, AvcC, Bits, Sps, NAL_IDR, NAL_PPS, NAL_SPS};

type Result<T> = std::result::Result<T, String>;

/// The PPS fields a slice header's syntax depends on.
#[derive(Clone, Debug)]
struct Pps {
    sps_id: u32,
    bottom_field_pic_order_in_frame_present: bool,
    num_ref_idx_default: [u32; 2],
    weighted_pred: bool,
    weighted_bipred_idc: u32,
    redundant_pic_cnt_present: bool,
}

fn parse_pps(nal: &[u8]) -> Result<(u32, Pps)> {
    let mut b = Bits::new(&nal[1..]);
    let id = b.ue()?;
    let sps_id = b.ue()?;
    b.u(1)?; // entropy_coding_mode_flag
    let bottom = b.flag()?;
    if b.ue()? != 0 {
        return Err("slice groups (FMO)".into());
    }
    let l0 = b.ue()? + 1;
    let l1 = b.ue()? + 1;
    let weighted_pred = b.flag()?;
    let weighted_bipred_idc = b.u(2)?;
    b.se()?; // pic_init_qp_minus26
    b.se()?; // pic_init_qs_minus26
    b.se()?; // chroma_qp_index_offset
    b.u(1)?; // deblocking_filter_control_present_flag
    b.u(1)?; // constrained_intra_pred_flag
    let redundant = b.flag()?;
    Ok((
        id,
        Pps {
            sps_id,
            bottom_field_pic_order_in_frame_present: bottom,
            num_ref_idx_default: [l0, l1],
            weighted_pred,
            weighted_bipred_idc,
            redundant_pic_cnt_present: redundant,
        },
    ))
}

/// A short-term reference frame as the decoder holds it.
#[derive(Clone, Copy, Debug)]
struct Held {
    frame_num: u32,
    poc: i64,
    /// Decoding-order index of its picture.
    pic: u32,
}

/// One slice header's facts.
struct Slice {
    kind: u32, // 0 P, 1 B, 2 I, 3 SP, 4 SI
    frame_num: u32,
    poc_lsb: u32,
    delta_bottom: i32,
    active: [u32; 2],
    /// `(list, modification_of_pic_nums_idc, value)` in order.
    modifications: Vec<(usize, u32, u32)>,
    long_term_reference: bool,
    /// MMCO 1 differences; `None` when marking is by sliding window.
    mmco: Option<Vec<u32>>,
}

/// A picture's facts, decoding order.
#[derive(Clone, Copy, Debug)]
struct Pic {
    pts: i64,
    refs_start: u32,
    refs_len: u16,
    /// The frames held as references when it is decoded (B pictures only; see the module
    /// comment), in [`RefGraph::held`].
    held_start: u32,
    held_len: u16,
    /// Its packet holds nothing the decoder needs but the picture (see the module comment).
    plain: bool,
    /// IDR period (pictures since the last IDR); periods whose order counts are unsafe keep
    /// all frames.
    period: u32,
    idr: bool,
    reference: bool,
    /// Type 0 order count: `pic_order_cnt_lsb` and the most significant part derived from
    /// every frame before it.
    poc_lsb: u32,
    poc_msb: i64,
}

/// The reference structure of one stream.
#[derive(Debug, Default)]
pub(crate) struct RefGraph {
    pics: Vec<Pic>,
    refs: Vec<u32>,
    held: Vec<u32>,
    by_pts: HashMap<i64, u32>,
    /// Per IDR period: may frames be left out?
    period_safe: Vec<bool>,
    /// `MaxPicOrderCntLsb` for type 0 order counts (the derivation [`Self::droppable_for`]
    /// replays); `None` for type 2.
    max_poc_lsb: Option<i64>,
}

impl RefGraph {
    /// Pictures recorded.
    pub fn len(&self) -> usize {
        self.pics.len()
    }

    /// The packets (by pts) that need not reach the decoder for it to decode the pictures
    /// with the `targets` pts exactly: those that no target depends on, and that may be left
    /// out (see the module comment).
    pub fn droppable_for(&self, targets: &HashSet<i64>) -> HashSet<i64> {
        let mut needed = vec![false; self.pics.len()];
        let mut stack: Vec<u32> = targets
            .iter()
            .filter_map(|p| self.by_pts.get(p).copied())
            .collect();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut needed[i as usize], true) {
                continue;
            }
            let p = self.pics[i as usize];
            let refs =
                &self.refs[p.refs_start as usize..p.refs_start as usize + p.refs_len as usize];
            stack.extend(refs.iter().copied().filter(|&r| !needed[r as usize]));
        }
        // A needed B picture's lists are the full decode's only with every frame it holds.
        let mut sent = needed.clone();
        for (p, _) in self.pics.iter().zip(&needed).filter(|(_, &n)| n) {
            for &h in &self.held[p.held_start as usize..p.held_start as usize + p.held_len as usize]
            {
                sent[h as usize] = true;
            }
        }
        let mut drop: Vec<bool> = self
            .pics
            .iter()
            .zip(&sent)
            .map(|(p, &n)| !n && p.plain && self.period_safe[p.period as usize])
            .collect();
        if let Some(max) = self.max_poc_lsb {
            self.keep_order_counts(&mut drop, max);
        }
        self.pics
            .iter()
            .zip(&drop)
            .filter(|(_, &d)| d)
            .map(|(p, _)| p.pts)
            .collect()
    }

    /// Replays the type 0 order count derivation (8.2.1.1) over the frames that would be
    /// decoded; where a count would differ from the full decode's, the last reference frame
    /// left out before it (and what it refers to) is decoded after all, and the period is
    /// replayed.
    fn keep_order_counts(&self, drop: &mut [bool], max: i64) {
        let n = self.pics.len();
        let mut i = 0;
        let mut period_start = 0;
        let mut prev = (0i64, 0i64);
        let mut last_dropped_ref: Option<usize> = None;
        while i < n {
            let p = self.pics[i];
            if p.idr {
                period_start = i;
                prev = (0, 0);
                last_dropped_ref = None;
            }
            if drop[i] {
                if p.reference {
                    last_dropped_ref = Some(i);
                }
                i += 1;
                continue;
            }
            let lsb = p.poc_lsb as i64;
            let (pm, pl) = prev;
            let msb = if lsb < pl && pl - lsb >= max / 2 {
                pm + max
            } else if lsb > pl && lsb - pl > max / 2 {
                pm - max
            } else {
                pm
            };
            if msb != p.poc_msb {
                match last_dropped_ref {
                    Some(j) => {
                        let mut stack = vec![j as u32];
                        while let Some(k) = stack.pop() {
                            if std::mem::replace(&mut drop[k as usize], false) {
                                let q = self.pics[k as usize];
                                stack.extend_from_slice(
                                    &self.refs[q.refs_start as usize
                                        ..q.refs_start as usize + q.refs_len as usize],
                                );
                            }
                        }
                    }
                    None => {
                        // (Cannot happen: with no reference frame left out since the last
                        // decoded one, the derivation is the full decode's.) Keep the period.
                        let period = self.pics[period_start].period;
                        for (k, q) in self.pics.iter().enumerate().skip(period_start) {
                            if q.period != period {
                                break;
                            }
                            drop[k] = false;
                        }
                    }
                }
                i = period_start;
                prev = (0, 0);
                last_dropped_ref = None;
                continue;
            }
            if p.reference {
                prev = (msb, lsb);
                last_dropped_ref = None;
            }
            i += 1;
        }
    }

    /// The decoding-order indices of the pictures `pic` may refer to (tests).
    #[cfg(test)]
    fn refs_of(&self, pic: usize) -> Vec<u32> {
        let p = self.pics[pic];
        self.refs[p.refs_start as usize..p.refs_start as usize + p.refs_len as usize].to_vec()
    }
}

/// Builds a [`RefGraph`] from the packets of a stream in decoding order.
pub(crate) struct Analyser {
    sps: HashMap<u32, Sps>,
    pps: HashMap<u32, Pps>,
    held: Vec<Held>,
    prev_ref_frame_num: Option<u32>,
    prev_poc_msb: i64,
    prev_poc_lsb: i64,
    prev_frame_num: u32,
    frame_num_offset: i64,
    prev_frame_num_offset: i64,
    graph: RefGraph,
    failed: Option<String>,
    /// No IDR seen yet: the first period (before one) is never safe.
    in_idr_period: bool,
}

impl Analyser {
    /// An analyser for a stream whose sample entry holds `avcc`.
    pub fn new(avcc: &AvcC) -> Analyser {
        let mut a = Analyser {
            sps: HashMap::new(),
            pps: HashMap::new(),
            held: Vec::new(),
            prev_ref_frame_num: None,
            prev_poc_msb: 0,
            prev_poc_lsb: 0,
            prev_frame_num: 0,
            frame_num_offset: 0,
            prev_frame_num_offset: 0,
            graph: RefGraph {
                period_safe: vec![false],
                ..Default::default()
            },
            failed: None,
            in_idr_period: false,
        };
        for nal in avcc.sps.iter().chain(&avcc.pps) {
            if let Err(e) = a.parameter_set(nal) {
                a.failed = Some(e);
            }
        }
        a
    }

    fn parameter_set(&mut self, nal: &[u8]) -> Result<()> {
        match nal_type(nal) {
            NAL_SPS => {
                let s = Sps::parse(nal)?;
                self.sps.insert(s.id, s);
            }
            NAL_PPS => {
                let (id, p) = parse_pps(nal)?;
                self.pps.insert(id, p);
            }
            _ => {}
        }
        Ok(())
    }

    /// Records the packet with presentation time `pts` and NAL units `nals`.
    pub fn packet(&mut self, pts: i64, nals: &[&[u8]]) {
        if self.failed.is_some() {
            return;
        }
        if let Err(e) = self.try_packet(pts, nals) {
            self.failed = Some(e);
        }
    }

    /// The graph, or why the stream's references could not be followed.
    pub fn finish(self) -> Result<RefGraph> {
        match self.failed {
            Some(e) => Err(e),
            None => Ok(self.graph),
        }
    }

    fn try_packet(&mut self, pts: i64, nals: &[&[u8]]) -> Result<()> {
        let mut plain = true;
        let mut slices: Vec<(u8, u8, Slice)> = Vec::new(); // (nal type, nal_ref_idc, slice)
        for nal in nals {
            let t = nal_type(nal);
            match t {
                1 | NAL_IDR => {
                    if t == NAL_IDR {
                        plain = false;
                    }
                    let ref_idc = (nal.first().copied().unwrap_or(0) >> 5) & 3;
                    let s = self.slice_header(nal, t, ref_idc)?;
                    slices.push((t, ref_idc, s));
                }
                NAL_SPS | NAL_PPS => {
                    plain = false;
                    self.parameter_set(nal)?;
                }
                6 | 9 | 12 => {}
                // Data partitions, auxiliary pictures, extensions: not modelled.
                2..=4 | 19 | 20 | 21 => return Err(format!("NAL unit type {t}")),
                _ => plain = false,
            }
        }
        if slices.is_empty() {
            // No picture in this packet (parameter sets only): nothing to record.
            return Ok(());
        }
        let (t, ref_idc, first) = &slices[0];
        let (t, ref_idc) = (*t, *ref_idc);
        if slices.iter().any(|(t2, r2, s)| {
            *t2 != t || (*r2 != 0) != (ref_idc != 0) || s.frame_num != first.frame_num
        }) {
            return Err("a packet holds more than one picture".into());
        }
        let sps = self.sps_of(first)?.clone();
        let idr = t == NAL_IDR;
        let max_frame_num = 1u32 << sps.log2_max_frame_num;
        let frame_num = first.frame_num;
        // Gaps in the stream itself are not modelled.
        if idr {
            self.held.clear();
            self.in_idr_period = true;
            self.graph.period_safe.push(true);
        } else if let Some(prev) = self.prev_ref_frame_num {
            if frame_num != prev && frame_num != (prev + 1) % max_frame_num {
                return Err("a gap in frame_num".into());
            }
        }
        if !self.in_idr_period {
            // Before the first IDR the decoder's state is unknown here.
            *self.graph.period_safe.last_mut().expect("one period") = false;
        }
        let period = (self.graph.period_safe.len() - 1) as u32;
        let (poc, poc_msb) = self.order_count(&sps, idr, ref_idc != 0, first)?;
        let all_intra = slices
            .iter()
            .all(|(_, _, s)| s.kind % 5 == 2 || s.kind % 5 == 4);
        let safe = match sps.poc_type {
            // A seek may start at another intra picture, without the IDR's reset; an IDR
            // whose count does not start at 0 is derived differently by FFmpeg.
            0 => !(idr && first.poc_lsb != 0) && (idr || !all_intra),
            _ => idr || self.frame_num_offset == 0,
        };
        if !safe {
            *self.graph.period_safe.last_mut().expect("one period") = false;
        }
        self.graph.max_poc_lsb = (sps.poc_type == 0).then(|| 1i64 << sps.log2_max_poc_lsb);
        // What the slices may refer to, and for a B picture what it holds.
        let held_start = self.graph.held.len() as u32;
        let mut held_len = 0u16;
        if slices.iter().any(|(_, _, s)| s.kind % 5 == 1) {
            self.graph.held.extend(self.held.iter().map(|h| h.pic));
            held_len = self.held.len() as u16;
        }
        let mut refs: Vec<u32> = Vec::new();
        for (_, _, s) in &slices {
            if s.kind % 5 == 2 || s.kind % 5 == 4 {
                continue;
            }
            for r in self.candidates(s, frame_num, max_frame_num, poc)? {
                if !refs.contains(&r) {
                    refs.push(r);
                }
            }
        }
        let index = self.graph.pics.len() as u32;
        let explicit = first.mmco.is_some();
        self.graph.pics.push(Pic {
            pts,
            refs_start: self.graph.refs.len() as u32,
            refs_len: refs.len() as u16,
            held_start,
            held_len,
            plain: plain && !explicit,
            period,
            idr,
            reference: ref_idc != 0,
            poc_lsb: first.poc_lsb,
            poc_msb,
        });
        self.graph.refs.extend(refs);
        if self.graph.by_pts.insert(pts, index).is_some() {
            return Err("two packets share a presentation timestamp".into());
        }
        // Marking (8.2.5).
        if ref_idc != 0 {
            if idr {
                if first.long_term_reference {
                    return Err("long-term references".into());
                }
            } else if let Some(diffs) = &first.mmco {
                for d in diffs {
                    let pic_num = frame_num as i64 - (*d as i64 + 1);
                    let before = self.held.len();
                    self.held
                        .retain(|h| wrap(h.frame_num, frame_num, max_frame_num) != pic_num);
                    if self.held.len() == before {
                        return Err("MMCO names no reference frame".into());
                    }
                }
            } else if self.held.len() >= sps.max_num_ref_frames.max(1) as usize {
                let oldest = (0..self.held.len())
                    .min_by_key(|&i| wrap(self.held[i].frame_num, frame_num, max_frame_num))
                    .expect("held frames");
                self.held.remove(oldest);
            }
            self.held.push(Held {
                frame_num,
                poc,
                pic: index,
            });
            self.prev_ref_frame_num = Some(frame_num);
        }
        Ok(())
    }

    fn sps_of(&self, s: &Slice) -> Result<&Sps> {
        let _ = s;
        // (slice_header resolved the PPS and SPS already; any SPS of the stream serves for the
        // fields the picture needs, which a stream keeps fixed.)
        self.sps.values().next().ok_or_else(|| "no SPS".to_string())
    }

    /// Picture order count (8.2.1) of a frame, types 0 and 2, with its most significant part
    /// (type 0).
    fn order_count(
        &mut self,
        sps: &Sps,
        idr: bool,
        reference: bool,
        s: &Slice,
    ) -> Result<(i64, i64)> {
        match sps.poc_type {
            0 => {
                if idr {
                    self.prev_poc_msb = 0;
                    self.prev_poc_lsb = 0;
                }
                let max = 1i64 << sps.log2_max_poc_lsb;
                let lsb = s.poc_lsb as i64;
                let (pm, pl) = (self.prev_poc_msb, self.prev_poc_lsb);
                let msb = if lsb < pl && pl - lsb >= max / 2 {
                    pm + max
                } else if lsb > pl && lsb - pl > max / 2 {
                    pm - max
                } else {
                    pm
                };
                if reference {
                    self.prev_poc_msb = msb;
                    self.prev_poc_lsb = lsb;
                }
                let top = msb + lsb;
                Ok((top.min(top + s.delta_bottom as i64), msb))
            }
            2 => {
                let max = 1i64 << sps.log2_max_frame_num;
                self.frame_num_offset = if idr {
                    0
                } else if self.prev_frame_num > s.frame_num {
                    self.prev_frame_num_offset + max
                } else {
                    self.prev_frame_num_offset
                };
                self.prev_frame_num_offset = self.frame_num_offset;
                self.prev_frame_num = s.frame_num;
                Ok((
                    if idr {
                        0
                    } else {
                        2 * (self.frame_num_offset + s.frame_num as i64) - (!reference) as i64
                    },
                    0,
                ))
            }
            t => Err(format!("picture order count type {t}")),
        }
    }

    /// The frames a P or B slice may name (a superset; see the module comment).
    fn candidates(
        &self,
        s: &Slice,
        frame_num: u32,
        max_frame_num: u32,
        poc: i64,
    ) -> Result<Vec<u32>> {
        let b = s.kind % 5 == 1;
        let mut out: Vec<u32> = Vec::new();
        let mut lists: Vec<Vec<Held>> = Vec::new();
        if b {
            let mut before: Vec<Held> = self.held.iter().copied().filter(|h| h.poc < poc).collect();
            let mut after: Vec<Held> = self.held.iter().copied().filter(|h| h.poc > poc).collect();
            before.sort_by_key(|h| std::cmp::Reverse(h.poc));
            after.sort_by_key(|h| h.poc);
            lists.push(before.iter().chain(&after).copied().collect());
            lists.push(after.iter().chain(&before).copied().collect());
        } else {
            let mut l: Vec<Held> = self.held.clone();
            l.sort_by_key(|h| std::cmp::Reverse(wrap(h.frame_num, frame_num, max_frame_num)));
            lists.push(l);
        }
        let swapped = b && lists[0].len() > 1 && {
            let (a, c) = (&lists[0], &lists[1]);
            a.iter().map(|h| h.pic).eq(c.iter().map(|h| h.pic))
        };
        if swapped {
            lists[1].swap(0, 1);
        }
        // Modifications (8.2.4.3.1): each names a frame by picture number; the final list is
        // the named frames, then the initial list without them, `num_ref_idx_active` long.
        let max = max_frame_num as i64;
        let curr = frame_num as i64;
        let mut pred = [curr, curr];
        let mut named: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        for &(list, idc, value) in &s.modifications {
            let no_wrap = match idc {
                0 => {
                    let v = pred[list] - (value as i64 + 1);
                    if v < 0 {
                        v + max
                    } else {
                        v
                    }
                }
                1 => {
                    let v = pred[list] + (value as i64 + 1);
                    if v >= max {
                        v - max
                    } else {
                        v
                    }
                }
                _ => return Err("long-term references".into()),
            };
            pred[list] = no_wrap;
            let pic_num = if no_wrap > curr {
                no_wrap - max
            } else {
                no_wrap
            };
            match self
                .held
                .iter()
                .find(|h| wrap(h.frame_num, frame_num, max_frame_num) == pic_num)
            {
                Some(h) => named[list].push(h.pic),
                None => return Err("a modification names no reference frame".into()),
            }
        }
        for (n, list) in lists.iter().enumerate() {
            let active = s.active[n] as usize;
            let names = &named[n];
            out.extend(names.iter().take(active).copied());
            out.extend(
                list.iter()
                    .map(|h| h.pic)
                    .filter(|p| !names.contains(p))
                    .take(active.saturating_sub(names.len())),
            );
        }
        Ok(out)
    }

    /// Parses a slice header (7.3.3) as far as this analysis needs.
    fn slice_header(&self, nal: &[u8], t: u8, ref_idc: u8) -> Result<Slice> {
        let mut b = Bits::prefix(&nal[1..], 512);
        b.ue()?; // first_mb_in_slice
        let kind = b.ue()?;
        let pps_id = b.ue()?;
        let pps = self
            .pps
            .get(&pps_id)
            .ok_or_else(|| format!("a slice names PPS {pps_id}, which is not there"))?
            .clone();
        let sps = self
            .sps
            .get(&pps.sps_id)
            .ok_or_else(|| format!("PPS {pps_id} names SPS {}, which is not there", pps.sps_id))?;
        if self.sps.len() > 1 {
            return Err("several SPS".into());
        }
        if sps.separate_colour_plane {
            b.u(2)?;
        }
        let frame_num = b.u(sps.log2_max_frame_num)?;
        if !sps.frame_mbs_only && b.flag()? {
            return Err("field pictures".into());
        }
        if t == NAL_IDR {
            b.ue()?; // idr_pic_id
        }
        let mut poc_lsb = 0;
        let mut delta_bottom = 0;
        if sps.poc_type == 0 {
            poc_lsb = b.u(sps.log2_max_poc_lsb)?;
            if pps.bottom_field_pic_order_in_frame_present {
                delta_bottom = b.se()?;
            }
        } else if sps.poc_type == 1 {
            return Err("picture order count type 1".into());
        }
        if pps.redundant_pic_cnt_present && b.ue()? != 0 {
            return Err("redundant pictures".into());
        }
        let k = kind % 5;
        let (is_p, is_b) = (k == 0 || k == 3, k == 1);
        if is_b {
            b.u(1)?; // direct_spatial_mv_pred_flag
        }
        let mut active = pps.num_ref_idx_default;
        if (is_p || is_b) && b.flag()? {
            active[0] = b.ue()? + 1;
            if is_b {
                active[1] = b.ue()? + 1;
            }
        }
        if !is_b {
            active[1] = 0;
        }
        if !(is_p || is_b) {
            active[0] = 0;
        }
        let mut modifications = Vec::new();
        for list in 0..(is_p as usize + 2 * is_b as usize).min(2) {
            if b.flag()? {
                loop {
                    let idc = b.ue()?;
                    if idc == 3 {
                        break;
                    }
                    if idc > 5 || modifications.len() > 64 {
                        return Err("a bad ref_pic_list_modification".into());
                    }
                    modifications.push((list, idc, b.ue()?));
                }
            }
        }
        if (pps.weighted_pred && is_p) || (pps.weighted_bipred_idc == 1 && is_b) {
            b.ue()?; // luma_log2_weight_denom
            let chroma = sps.chroma_format_idc != 0 && !sps.separate_colour_plane;
            if chroma {
                b.ue()?;
            }
            for list in 0..(1 + is_b as usize) {
                for _ in 0..active[list] {
                    if b.flag()? {
                        b.se()?;
                        b.se()?;
                    }
                    if chroma && b.flag()? {
                        for _ in 0..4 {
                            b.se()?;
                        }
                    }
                }
            }
        }
        let mut long_term_reference = false;
        let mut mmco = None;
        if ref_idc != 0 {
            if t == NAL_IDR {
                b.u(1)?; // no_output_of_prior_pics_flag
                long_term_reference = b.flag()?;
            } else if b.flag()? {
                let mut diffs = Vec::new();
                loop {
                    match b.ue()? {
                        0 => break,
                        1 => diffs.push(b.ue()?),
                        op => return Err(format!("memory management operation {op}")),
                    }
                    if diffs.len() > 64 {
                        return Err("too many memory management operations".into());
                    }
                }
                mmco = Some(diffs);
            }
        }
        Ok(Slice {
            kind,
            frame_num,
            poc_lsb,
            delta_bottom,
            active,
            modifications,
            long_term_reference,
            mmco,
        })
    }
}

/// FrameNumWrap (8.2.4.1) of a held frame for a picture with `frame_num`.
fn wrap(held: u32, frame_num: u32, max: u32) -> i64 {
    if held > frame_num {
        held as i64 - max as i64
    } else {
        held as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_num_wraps_below_the_current_frame() {
        assert_eq!(wrap(3, 5, 16), 3);
        assert_eq!(wrap(15, 1, 16), -1);
    }

    #[test]
    fn an_empty_graph_drops_nothing() {
        let g = RefGraph {
            period_safe: vec![false],
            ..Default::default()
        };
        assert!(g.droppable_for(&HashSet::from([1])).is_empty());
        assert_eq!(g.len(), 0);
        let _ = RefGraph::refs_of;
    }
}
