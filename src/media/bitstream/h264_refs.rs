//! Which pictures of an H.264 stream a picture may be predicted from, read from the slice
//! headers alone (no macroblock is parsed), so that sparse reading decodes only what its
//! targets depend on.
//!
//! The frame table's scan feeds every packet (decoding order) to an [`Analyser`]. It keeps the
//! decoder's list of short-term reference frames as the standard defines it (8.2.4: the
//! initial lists by frame number or picture order count, the slice's
//! `ref_pic_list_modification`, `num_ref_idx_active`; 8.2.5: sliding-window marking and
//! MMCO 1), and records for each picture a superset of the frames its slices can name (the
//! first `num_ref_idx_active` entries of each initial list, two at least for list 1, every
//! frame a modification names) and the exact lists the full decode gives each slice. A frame
//! no target depends on, directly or through others, is a candidate to be left out of the
//! decoder's input. What its absence does to the decoder is then replayed
//! ([`RefGraph::droppable_for`]) as FFmpeg (5.1, the version the tests run) handles it: a missing reference frame is a gap
//! in `frame_num`, filled with a copy of the newest reference frame whose order count is that
//! frame's plus 2 (`h264_field_start`), marked by sliding window; a sent frame's MMCO 1 that
//! names a frame the decoder no longer holds does nothing. Every needed picture must get
//! exactly the full decode's reference lists (so a made-up frame never stands in a list a
//! needed picture uses) and its own order count, and every decoded picture a full set of
//! references; FFmpeg's error paths (a frame number held twice, more frames than
//! `max_num_ref_frames`, a made-up frame kept past `max_num_ref_frames` frame numbers) count as
//! a difference. Where the replay differs, the last reference frame left out before that point
//! is sent after all (decoded for its marking and order count; its pixels, which no needed
//! picture reads, may differ from the full decode's) and the period is replayed again. On
//! x264's B-pyramid streams (its reference B-frames carry MMCO 1 and the P-frames name the
//! P-frame before them) that leaves a target the P-frames before it and, for a B-frame, its
//! reference B-frame and the one before. Only frames whose packets hold nothing but non-IDR
//! slices, SEI, delimiters or filler are ever left out.
//!
//! Whatever the analysis does not model makes it give up for the whole stream (sparse reading
//! then skips only non-reference frames, as before): field pictures, long-term references,
//! MMCO other than 1, picture order count type 1, gaps in `frame_num` in the stream itself,
//! several pictures in one packet, a slice header that does not parse. An IDR period with
//! another intra picture in it (where a seek could start without the IDR's reset), an IDR
//! whose order count does not start at 0, a type 2 period in which `frame_num` wraps, and a
//! period whose full decode itself misses a reference keep all their frames.

use std::collections::{HashMap, HashSet};

use crate::media::bitstream::h264::{
    in_range, nal_type, AvcC, Bits, Sps, NAL_IDR, NAL_PPS, NAL_SPS,
};

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
    let id = in_range(b.ue()?, 255, "pic_parameter_set_id")?;
    let sps_id = in_range(b.ue()?, 31, "seq_parameter_set_id")?;
    b.u(1)?; // entropy_coding_mode_flag
    let bottom = b.flag()?;
    if b.ue()? != 0 {
        return Err("slice groups (FMO)".into());
    }
    let l0 = in_range(b.ue()?, 31, "num_ref_idx_l0_default_active_minus1")? + 1;
    let l1 = in_range(b.ue()?, 31, "num_ref_idx_l1_default_active_minus1")? + 1;
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
    /// Its packet holds nothing the decoder needs but the picture (see the module comment).
    plain: bool,
    /// IDR period (pictures since the last IDR); periods whose order counts are unsafe keep
    /// all frames.
    period: u32,
    idr: bool,
    reference: bool,
    frame_num: u32,
    /// Picture order count (the smaller of its fields').
    poc: i64,
    /// Type 0 order count: `pic_order_cnt_lsb` and the most significant part derived from
    /// every frame before it.
    poc_lsb: u32,
    poc_msb: i64,
    /// Marking by MMCO (`None`: sliding window): the frame numbers MMCO 1 unmarks, in
    /// [`RefGraph::mmco`].
    explicit: bool,
    mmco_start: u32,
    mmco_len: u16,
    /// Its P and B slices, in [`RefGraph::slices`].
    slices_start: u32,
    slices_len: u16,
}

/// What one P or B slice's reference lists are made of, and the lists the full decode gives
/// it (decoding-order picture indices in [`RefGraph::lists`]).
#[derive(Clone, Copy, Debug)]
struct SliceRefs {
    b: bool,
    active: [u8; 2],
    mods_start: u32,
    mods_len: u16,
    lists_start: u32,
    lists_len: [u8; 2],
}

/// A short-term reference frame as FFmpeg's decoder holds it (`short_ref`), for the lists
/// built from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    frame_num: u32,
    poc: i64,
    /// The picture (decoding-order index), or a negative number for a frame FFmpeg made up
    /// for a gap in `frame_num`.
    id: i64,
    /// The picture whose pixels it holds (a made-up frame shares its predecessor's buffer).
    buffer: i64,
}

/// The reference lists FFmpeg builds for a slice (`h264_refs.c`: `h264_initialise_ref_list`,
/// `ff_h264_build_ref_list`) from `dpb` (newest first, as `short_ref`), each cut to its
/// active length, as the `id`s of the frames; `None` where an entry would be missing (FFmpeg
/// then substitutes another frame and logs an error).
fn build_lists(
    dpb: &[Slot],
    s: &SliceRefs,
    mods: &[(u8, u8, u32)],
    frame_num: u32,
    max_frame_num: u32,
    poc: i64,
) -> Option<[Vec<i64>; 2]> {
    let mut lists: [Vec<Slot>; 2] = [Vec::new(), Vec::new()];
    if s.b {
        // add_sorted: at or below the current count, nearest first; then above, nearest first
        // (list 1 the other way round); equal counts keep one frame.
        let sorted = |limit: i64, below: bool| -> Vec<Slot> {
            let mut out = Vec::new();
            let mut limit = limit;
            loop {
                let mut best: Option<Slot> = None;
                for r in dpb {
                    let ok = if below {
                        r.poc <= limit && best.is_none_or(|b| r.poc >= b.poc)
                    } else {
                        r.poc > limit && best.is_none_or(|b| r.poc < b.poc)
                    };
                    if ok {
                        best = Some(*r);
                    }
                }
                match best {
                    Some(b) => {
                        limit = if below { b.poc - 1 } else { b.poc };
                        out.push(b);
                    }
                    None => return out,
                }
            }
        };
        for (n, list) in lists.iter_mut().enumerate() {
            list.extend(sorted(poc, n == 0));
            list.extend(sorted(poc, n != 0));
        }
        if lists[0].len() == lists[1].len()
            && lists[1].len() > 1
            && lists[0]
                .iter()
                .zip(&lists[1])
                .all(|(a, b)| a.buffer == b.buffer)
        {
            lists[1].swap(0, 1);
        }
    } else {
        lists[0].extend_from_slice(dpb);
    }
    let mut out: [Vec<i64>; 2] = [Vec::new(), Vec::new()];
    let max = max_frame_num as i64;
    for (n, initial) in lists.iter().enumerate() {
        let count = s.active[n] as usize;
        if count == 0 {
            continue;
        }
        let mut list: Vec<Option<Slot>> = (0..count).map(|i| initial.get(i).copied()).collect();
        let mut pred = frame_num as i64;
        let mut index = 0;
        for &(l, idc, value) in mods {
            if l as usize != n {
                continue;
            }
            if index >= count {
                return None;
            }
            let diff = value as i64 + 1;
            pred = if idc == 0 { pred - diff } else { pred + diff }.rem_euclid(max);
            let r = *dpb.iter().rev().find(|r| r.frame_num as i64 == pred)?;
            let mut i = index;
            while i + 1 < count && list[i].map(|x| x.frame_num) != Some(r.frame_num) {
                i += 1;
            }
            while i > index {
                list[i] = list[i - 1];
                i -= 1;
            }
            list[index] = Some(r);
            index += 1;
        }
        for e in list {
            out[n].push(e?.id);
        }
    }
    Some(out)
}

/// The reference structure of one stream.
#[derive(Debug, Default)]
pub(crate) struct RefGraph {
    pics: Vec<Pic>,
    refs: Vec<u32>,
    slices: Vec<SliceRefs>,
    /// `(list, modification_of_pic_nums_idc, value)` of the slices.
    mods: Vec<(u8, u8, u32)>,
    /// The full decode's lists of the slices.
    lists: Vec<u32>,
    /// Frame numbers unmarked by MMCO 1.
    mmco: Vec<u32>,
    by_pts: HashMap<i64, u32>,
    /// Per IDR period: may frames be left out?
    period_safe: Vec<bool>,
    /// `MaxPicOrderCntLsb` for type 0 order counts (the derivation [`Self::droppable_for`]
    /// replays); `None` for type 2.
    max_poc_lsb: Option<i64>,
    max_frame_num: u32,
    /// `max_num_ref_frames` (FFmpeg's `ref_frame_count`).
    max_refs: u32,
}

/// Why the replay of a period stopped at a picture.
#[derive(Debug, PartialEq, Eq)]
struct Conflict(usize);

impl RefGraph {
    /// Pictures recorded.
    pub fn len(&self) -> usize {
        self.pics.len()
    }

    /// The packets (by pts) that need not reach the decoder for it to decode the pictures
    /// with the `targets` pts exactly: those that no target depends on, and whose absence
    /// the replay of FFmpeg's reference handling proves harmless (see the module comment).
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
        let mut drop: Vec<bool> = self
            .pics
            .iter()
            .zip(&needed)
            .map(|(p, &n)| !n && p.plain && self.period_safe[p.period as usize])
            .collect();
        // Replay each period that holds a needed picture, from its first picture to its last
        // needed one; where the replay differs from the full decode, send the last reference
        // frame left out before that point (decoded for its marking and order count only),
        // and replay again.
        let mut start = 0;
        while start < self.pics.len() {
            let period = self.pics[start].period;
            let end = (start..self.pics.len())
                .find(|&i| self.pics[i].period != period)
                .unwrap_or(self.pics.len());
            if let Some(last) = (start..end).rev().find(|&i| needed[i]) {
                if (start..=last).any(|i| drop[i]) {
                    while let Err(Conflict(at)) = self.replay(start..last + 1, &drop, &needed) {
                        match (start..at)
                            .rev()
                            .find(|&j| drop[j] && self.pics[j].reference)
                        {
                            Some(j) => drop[j] = false,
                            None => {
                                drop[start..end].iter_mut().for_each(|d| *d = false);
                                break;
                            }
                        }
                    }
                }
            }
            start = end;
        }
        self.pics
            .iter()
            .zip(&drop)
            .filter(|(_, &d)| d)
            .map(|(p, _)| p.pts)
            .collect()
    }

    /// Replays FFmpeg's reference handling (`h264_slice.c` `h264_field_start`: frames made up
    /// for gaps in `frame_num`, each a copy of the newest reference frame with its order
    /// count plus 2; `h264_refs.c`: sliding window, MMCO 1, the lists) over the pictures of
    /// `range` (one IDR period) that the decoder would decode with `drop` left out. Every
    /// needed picture must get the full decode's lists and order count, every decoded one a
    /// full set of references and its own order count, and nothing may take FFmpeg's error
    /// paths (a frame number held twice, more frames than `max_num_ref_frames`, a made-up
    /// frame outliving it); else the first picture where that fails.
    fn replay(
        &self,
        range: std::ops::Range<usize>,
        drop: &[bool],
        needed: &[bool],
    ) -> std::result::Result<(), Conflict> {
        let max = self.max_frame_num;
        let max_refs = self.max_refs.max(1) as usize;
        let mut dpb: Vec<Slot> = Vec::new();
        let mut prev_frame_num = 0u32;
        let mut prev_poc = (0i64, 0i64);
        let mut gaps = 0i64;
        let gap_too_old = |dpb: &[Slot], frame_num: u32| {
            dpb.iter().any(|r| {
                r.id < 0 && (frame_num.wrapping_sub(r.frame_num) & (max - 1)) > self.max_refs
            })
        };
        for i in range {
            let p = self.pics[i];
            if drop[i] || !(p.reference || needed[i]) {
                continue;
            }
            let fail = Err(Conflict(i));
            if p.idr {
                dpb.clear();
                prev_poc = (0, 0);
            } else {
                let fnum = p.frame_num;
                if fnum != prev_frame_num {
                    let mut unwrapped = prev_frame_num as i64;
                    if unwrapped > fnum as i64 {
                        unwrapped -= max as i64;
                    }
                    if fnum as i64 - unwrapped > self.max_refs as i64 {
                        prev_frame_num =
                            (fnum as i64 - self.max_refs as i64 - 1).rem_euclid(max as i64) as u32;
                    }
                }
                while fnum != prev_frame_num && fnum != (prev_frame_num + 1) % max {
                    let Some(newest) = dpb.first().copied() else {
                        return fail;
                    };
                    if dpb.len() >= max_refs {
                        dpb.pop();
                    }
                    prev_frame_num = (prev_frame_num + 1) % max;
                    if dpb.iter().any(|r| r.frame_num == prev_frame_num) {
                        return fail;
                    }
                    gaps += 1;
                    dpb.insert(
                        0,
                        Slot {
                            frame_num: prev_frame_num,
                            poc: newest.poc + 2,
                            id: -gaps,
                            buffer: newest.buffer,
                        },
                    );
                    if gap_too_old(&dpb, prev_frame_num) {
                        return fail;
                    }
                }
            }
            if let Some(max_lsb) = self.max_poc_lsb {
                let lsb = p.poc_lsb as i64;
                let (pm, pl) = prev_poc;
                let msb = if lsb < pl && pl - lsb >= max_lsb / 2 {
                    pm + max_lsb
                } else if lsb > pl && lsb - pl > max_lsb / 2 {
                    pm - max_lsb
                } else {
                    pm
                };
                if msb != p.poc_msb {
                    return fail;
                }
                if p.reference {
                    prev_poc = (msb, lsb);
                }
            }
            let slices = &self.slices
                [p.slices_start as usize..p.slices_start as usize + p.slices_len as usize];
            for s in slices {
                let mods =
                    &self.mods[s.mods_start as usize..s.mods_start as usize + s.mods_len as usize];
                let Some(lists) = build_lists(&dpb, s, mods, p.frame_num, max, p.poc) else {
                    return fail;
                };
                if needed[i] {
                    let full = &self.lists[s.lists_start as usize..];
                    let (a, b) = full.split_at(s.lists_len[0] as usize);
                    let b = &b[..s.lists_len[1] as usize];
                    let same = |ours: &[i64], theirs: &[u32]| {
                        ours.len() == theirs.len()
                            && ours.iter().zip(theirs).all(|(&x, &y)| x == y as i64)
                    };
                    if !same(&lists[0], a) || !same(&lists[1], b) {
                        return fail;
                    }
                }
            }
            if p.reference {
                if p.idr {
                    dpb.clear();
                } else if p.explicit {
                    let unmark = &self.mmco
                        [p.mmco_start as usize..p.mmco_start as usize + p.mmco_len as usize];
                    // (An MMCO naming a frame the decoder no longer holds does nothing.)
                    dpb.retain(|r| !unmark.contains(&r.frame_num));
                } else if !dpb.is_empty() && dpb.len() >= max_refs {
                    dpb.pop();
                }
                if dpb.iter().any(|r| r.frame_num == p.frame_num) {
                    return fail;
                }
                dpb.insert(
                    0,
                    Slot {
                        frame_num: p.frame_num,
                        poc: p.poc,
                        id: i as i64,
                        buffer: i as i64,
                    },
                );
                if dpb.len() > max_refs || gap_too_old(&dpb, p.frame_num) {
                    return fail;
                }
            }
            prev_frame_num = p.frame_num;
        }
        Ok(())
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
        self.graph.max_frame_num = max_frame_num;
        self.graph.max_refs = sps.max_num_ref_frames;
        // What the slices may refer to, and the lists the full decode gives them.
        let dpb: Vec<Slot> = self
            .held
            .iter()
            .rev()
            .map(|h| Slot {
                frame_num: h.frame_num,
                poc: h.poc,
                id: h.pic as i64,
                buffer: h.pic as i64,
            })
            .collect();
        let slices_start = self.graph.slices.len() as u32;
        let mut refs: Vec<u32> = Vec::new();
        for (_, _, s) in &slices {
            if s.kind % 5 == 2 || s.kind % 5 == 4 {
                continue;
            }
            let mods_start = self.graph.mods.len() as u32;
            self.graph.mods.extend(
                s.modifications
                    .iter()
                    .map(|&(l, idc, v)| (l as u8, idc as u8, v)),
            );
            let refs_of_slice = SliceRefs {
                b: s.kind % 5 == 1,
                active: [s.active[0].min(32) as u8, s.active[1].min(32) as u8],
                mods_start,
                mods_len: s.modifications.len() as u16,
                lists_start: self.graph.lists.len() as u32,
                lists_len: [0, 0],
            };
            let mods = &self.graph.mods[mods_start as usize..];
            match build_lists(&dpb, &refs_of_slice, mods, frame_num, max_frame_num, poc) {
                Some(lists) => {
                    let mut r = refs_of_slice;
                    r.lists_len = [lists[0].len() as u8, lists[1].len() as u8];
                    for &id in lists.iter().flatten() {
                        self.graph.lists.push(id as u32);
                        if !refs.contains(&(id as u32)) {
                            refs.push(id as u32);
                        }
                    }
                    self.graph.slices.push(r);
                }
                None => {
                    // The full decode itself misses a reference here (FFmpeg substitutes
                    // one): leave this period alone.
                    *self.graph.period_safe.last_mut().expect("one period") = false;
                    self.graph.slices.push(refs_of_slice);
                }
            }
            for r in self.candidates(s, frame_num, max_frame_num, poc)? {
                if !refs.contains(&r) {
                    refs.push(r);
                }
            }
        }
        let index = self.graph.pics.len() as u32;
        let explicit = first.mmco.is_some();
        let mmco_start = self.graph.mmco.len() as u32;
        if let Some(diffs) = &first.mmco {
            self.graph.mmco.extend(diffs.iter().map(|&d| {
                (frame_num as i64 - (d as i64 + 1)).rem_euclid(max_frame_num as i64) as u32
            }));
        }
        self.graph.pics.push(Pic {
            pts,
            refs_start: self.graph.refs.len() as u32,
            refs_len: refs.len() as u16,
            plain,
            period,
            idr,
            reference: ref_idc != 0,
            frame_num,
            poc,
            poc_lsb: first.poc_lsb,
            poc_msb,
            explicit,
            mmco_start,
            mmco_len: (self.graph.mmco.len() as u32 - mmco_start) as u16,
            slices_start,
            slices_len: (self.graph.slices.len() as u32 - slices_start) as u16,
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
                // (FFmpeg drops the frame held longest, `short_ref`'s last.)
                self.held.remove(0);
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
        let kind = in_range(b.ue()?, 9, "slice_type")?;
        let pps_id = in_range(b.ue()?, 255, "pic_parameter_set_id")?;
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
            active[0] = in_range(b.ue()?, 31, "num_ref_idx_l0_active_minus1")? + 1;
            if is_b {
                active[1] = in_range(b.ue()?, 31, "num_ref_idx_l1_active_minus1")? + 1;
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

    /// Slice headers (and the PPS fields they depend on) read as the independent `h264-reader`
    /// crate reads them, on x264 streams whose headers use what the reference analysis
    /// follows: B-pyramids, several references, weighted prediction (which makes x264 list a
    /// reference twice, through list modifications), slices, open GOPs, intra refresh,
    /// baseline. Needs the ffmpeg CLI with libx264 (skips without it).
    #[test]
    fn slice_headers_read_as_h264_reader_reads_them() {
        use h264_reader::nal::pps::PicParameterSet;
        use h264_reader::nal::slice::{
            DecRefPicMarking, MemoryManagementControlOperation, ModificationOfPicNums,
            NumRefIdxActive, PicOrderCountLsb, RefPicListModifications, SliceFamily, SliceHeader,
        };
        use h264_reader::nal::sps::SeqParameterSet;
        use h264_reader::nal::NalHeader;
        use h264_reader::rbsp::{decode_nal, BitReader};

        let configs: [(&str, &[&str]); 6] = [
            (
                "pyramid",
                &[
                    "-bf",
                    "3",
                    "-x264-params",
                    "b-pyramid=normal:ref=4:weightp=2",
                ],
            ),
            ("weightp", &["-bf", "0", "-x264-params", "ref=6:weightp=2"]),
            (
                "slices",
                &["-bf", "3", "-x264-params", "slices=4:b-pyramid=strict"],
            ),
            (
                "baseline",
                &["-profile:v", "baseline", "-x264-params", "ref=3"],
            ),
            (
                "open_gop",
                &["-bf", "2", "-x264-params", "keyint=10:open-gop=1"],
            ),
            (
                "refresh",
                &["-bf", "0", "-x264-params", "intra-refresh=1:keyint=20"],
            ),
        ];
        let work = tempfile::tempdir().unwrap();
        let (mut compared, mut modified, mut marked) = (0, 0, 0);
        for (name, options) in configs {
            let path = work.path().join(format!("{name}.h264"));
            let made = std::process::Command::new("ffmpeg")
                .args([
                    "-v",
                    "error",
                    "-f",
                    "lavfi",
                    "-i",
                    "testsrc2=size=320x240:rate=25",
                ])
                .args(["-frames:v", "48", "-c:v", "libx264", "-pix_fmt", "yuv420p"])
                .args(options)
                .args(["-f", "h264"])
                .arg(&path)
                .status();
            if !made.is_ok_and(|s| s.success()) {
                eprintln!("skipping: the ffmpeg CLI with libx264 could not make {name}");
                return;
            }
            let data = std::fs::read(&path).unwrap();
            let nals = crate::media::bitstream::h264::split_annexb(&data);
            let of_type = |t: u8| {
                nals.iter()
                    .filter(move |n| nal_type(n) == t)
                    .map(|n| n.to_vec())
            };
            let avcc = AvcC {
                profile: 100,
                compat: 0,
                level: 30,
                length_size: 4,
                sps: of_type(NAL_SPS).collect(),
                pps: of_type(NAL_PPS).collect(),
                ext: Vec::new(),
            };
            let ours = Analyser::new(&avcc);
            assert!(ours.failed.is_none(), "{name}: {:?}", ours.failed);
            let mut ctx = h264_reader::Context::new();
            for sps in &avcc.sps {
                let rbsp = decode_nal(sps).unwrap();
                ctx.put_seq_param_set(
                    SeqParameterSet::from_bits(BitReader::new(&rbsp[..])).unwrap(),
                );
            }
            for pps in &avcc.pps {
                let rbsp = decode_nal(pps).unwrap();
                ctx.put_pic_param_set(
                    PicParameterSet::from_bits(&ctx, BitReader::new(&rbsp[..])).unwrap(),
                );
            }
            for (k, nal) in nals.iter().enumerate() {
                let t = nal_type(nal);
                if t != 1 && t != NAL_IDR {
                    continue;
                }
                let ref_idc = (nal[0] >> 5) & 3;
                let mine = ours
                    .slice_header(nal, t, ref_idc)
                    .unwrap_or_else(|e| panic!("{name} NAL {k}: we refuse it: {e}"));
                let rbsp = decode_nal(nal).unwrap();
                let mut r = BitReader::new(&rbsp[..]);
                let (theirs, _, pps) =
                    SliceHeader::from_bits(&ctx, &mut r, NalHeader::new(nal[0]).unwrap())
                        .unwrap_or_else(|e| {
                            panic!("{name} NAL {k}: h264-reader refuses it: {e:?}")
                        });
                let at = format!("{name} NAL {k}");
                let family = match theirs.slice_type.family {
                    SliceFamily::P => 0,
                    SliceFamily::B => 1,
                    SliceFamily::I => 2,
                    SliceFamily::SP => 3,
                    SliceFamily::SI => 4,
                };
                assert_eq!(mine.kind % 5, family, "{at}: slice type");
                assert_eq!(mine.frame_num, theirs.frame_num as u32, "{at}: frame_num");
                let (lsb, bottom) = match theirs.pic_order_cnt_lsb {
                    Some(PicOrderCountLsb::Frame(l)) => (l, 0),
                    Some(PicOrderCountLsb::FieldsAbsolute {
                        pic_order_cnt_lsb,
                        delta_pic_order_cnt_bottom,
                    }) => (pic_order_cnt_lsb, delta_pic_order_cnt_bottom),
                    _ => (0, 0),
                };
                assert_eq!(
                    (mine.poc_lsb, mine.delta_bottom),
                    (lsb, bottom),
                    "{at}: POC"
                );
                let defaults = [
                    pps.num_ref_idx_l0_default_active_minus1 + 1,
                    pps.num_ref_idx_l1_default_active_minus1 + 1,
                ];
                let active = match (&theirs.num_ref_idx_active, family) {
                    (_, 2 | 4) => [0, 0],
                    (
                        Some(NumRefIdxActive::P {
                            num_ref_idx_l0_active_minus1,
                        }),
                        _,
                    ) => [num_ref_idx_l0_active_minus1 + 1, 0],
                    (
                        Some(NumRefIdxActive::B {
                            num_ref_idx_l0_active_minus1,
                            num_ref_idx_l1_active_minus1,
                        }),
                        _,
                    ) => [
                        num_ref_idx_l0_active_minus1 + 1,
                        num_ref_idx_l1_active_minus1 + 1,
                    ],
                    (None, 1) => defaults,
                    (None, _) => [defaults[0], 0],
                };
                assert_eq!(mine.active, active, "{at}: active references");
                let as_ours = |list: usize, m: &[ModificationOfPicNums]| {
                    m.iter()
                        .map(|m| match m {
                            ModificationOfPicNums::Subtract(v) => (list, 0, *v),
                            ModificationOfPicNums::Add(v) => (list, 1, *v),
                            ModificationOfPicNums::LongTermRef(v) => (list, 2, *v),
                        })
                        .collect::<Vec<_>>()
                };
                let modifications = match &theirs.ref_pic_list_modification {
                    Some(RefPicListModifications::P {
                        ref_pic_list_modification_l0,
                    }) => as_ours(0, ref_pic_list_modification_l0),
                    Some(RefPicListModifications::B {
                        ref_pic_list_modification_l0,
                        ref_pic_list_modification_l1,
                    }) => {
                        let mut all = as_ours(0, ref_pic_list_modification_l0);
                        all.extend(as_ours(1, ref_pic_list_modification_l1));
                        all
                    }
                    _ => Vec::new(),
                };
                assert_eq!(
                    mine.modifications, modifications,
                    "{at}: list modifications"
                );
                let (long_term, mmco) = match &theirs.dec_ref_pic_marking {
                    Some(DecRefPicMarking::Idr {
                        long_term_reference_flag,
                        ..
                    }) => (*long_term_reference_flag, None),
                    Some(DecRefPicMarking::Adaptive(ops)) => (
                        false,
                        Some(
                            ops.iter()
                                .map(|op| match op {
                                    MemoryManagementControlOperation::ShortTermUnusedForRef {
                                        difference_of_pic_nums_minus1,
                                    } => *difference_of_pic_nums_minus1,
                                    other => panic!("{at}: x264 wrote {other:?}"),
                                })
                                .collect(),
                        ),
                    ),
                    _ => (false, None),
                };
                assert_eq!(
                    mine.long_term_reference, long_term,
                    "{at}: long-term reference"
                );
                assert_eq!(mine.mmco, mmco, "{at}: memory management");
                compared += 1;
                modified += !mine.modifications.is_empty() as usize;
                marked += mine.mmco.is_some() as usize;
            }
        }
        // The streams must keep exercising what the analysis follows.
        assert!(
            compared > 200 && modified > 20 && marked > 20,
            "{compared} slices compared, {modified} with list modifications, {marked} with MMCOs"
        );
    }
}
