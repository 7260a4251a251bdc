//! Where a smart clip may cut the source: from its packets in decoding order (as the frame
//! table's scan recorded them), the map between decoding and display order, and the *clean
//! cut points*: IDR pictures decoded where they are shown, with nothing before them shown
//! after them, so that nothing on either side refers across.

use crate::media::table::{CodedPacket, FrameTable};

/// The source's decoding order against its display order, and where a copy may start.
pub(crate) struct SourceIndex {
    /// Display index -> decoding position.
    pub dec_of_disp: Vec<usize>,
    /// Decoding position -> display index.
    pub disp_of_dec: Vec<usize>,
    /// Display indices where the stream can be split cleanly, increasing, ending with the
    /// frame count.
    pub cut_points: Vec<usize>,
}

impl SourceIndex {
    /// The index of `packets` (in decoding order), which must be the frames of `table`;
    /// `Err(why)` when they are not.
    pub(crate) fn of(
        packets: &[CodedPacket],
        table: &FrameTable,
    ) -> std::result::Result<SourceIndex, String> {
        if packets.len() != table.len() {
            return Err(format!(
                "the file has {} video packets for {} frames",
                packets.len(),
                table.len()
            ));
        }
        let mut dec_of_disp: Vec<usize> = (0..packets.len()).collect();
        dec_of_disp.sort_by_key(|&d| packets[d].pts);
        let mut disp_of_dec = vec![0; packets.len()];
        for (disp, &dec) in dec_of_disp.iter().enumerate() {
            if packets[dec].pts != table.pts(disp) {
                return Err(format!(
                    "packet timestamps do not match the frame table at frame {disp}"
                ));
            }
            disp_of_dec[dec] = disp;
        }
        let mut cut_points = Vec::new();
        let mut shown_before: Option<usize> = None;
        for (dec, p) in packets.iter().enumerate() {
            let disp = disp_of_dec[dec];
            if p.idr && disp == dec && shown_before.is_none_or(|m| m < disp) {
                cut_points.push(disp);
            }
            shown_before = Some(shown_before.map_or(disp, |m| m.max(disp)));
        }
        cut_points.push(packets.len());
        Ok(SourceIndex {
            dec_of_disp,
            disp_of_dec,
            cut_points,
        })
    }

    /// The first cut point after `c`.
    pub(crate) fn next_cut(&self, c: usize) -> Option<usize> {
        let i = self.cut_points.partition_point(|&x| x <= c);
        self.cut_points.get(i).copied()
    }

    pub(crate) fn is_cut(&self, c: usize) -> bool {
        self.cut_points.binary_search(&c).is_ok()
    }
}
