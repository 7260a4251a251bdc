//! How far a decoded picture is from the one it should be: the squared error over all planes
//! of two YUV 4:2:0 pictures and over luma alone, and the PSNR each gives (smart encoding's
//! `verify`).

/// How two YUV 4:2:0 pictures differ: the squared error and sample count over all planes
/// (pooled Y, U and V samples) and over the luma plane alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Difference {
    pub sse: u64,
    pub count: u64,
    pub luma_sse: u64,
    pub luma_count: u64,
}

impl Difference {
    pub(crate) fn identical(&self) -> bool {
        self.sse == 0
    }
}

/// [`Difference`] of two YUV 4:2:0 pictures; `None` when their sizes differ.
pub(crate) fn compare(a: &crate::media::Picture, b: &crate::media::Picture) -> Option<Difference> {
    let (a, b) = (&a.0, &b.0);
    if a.width() != b.width() || a.height() != b.height() {
        return None;
    }
    let (w, h) = (a.width() as usize, a.height() as usize);
    let mut sse = 0u64;
    let mut count = 0u64;
    let mut luma = (0u64, 0u64);
    for plane in 0..3 {
        let (pw, ph) = if plane == 0 {
            (w, h)
        } else {
            (w.div_ceil(2), h.div_ceil(2))
        };
        let (da, sa) = (a.data(plane), a.stride(plane));
        let (db, sb) = (b.data(plane), b.stride(plane));
        for y in 0..ph {
            let ra = &da[y * sa..y * sa + pw];
            let rb = &db[y * sb..y * sb + pw];
            for (x, z) in ra.iter().zip(rb) {
                let d = *x as i64 - *z as i64;
                sse += (d * d) as u64;
            }
        }
        count += (pw * ph) as u64;
        if plane == 0 {
            luma = (sse, count);
        }
    }
    Some(Difference {
        sse,
        count,
        luma_sse: luma.0,
        luma_count: luma.1,
    })
}

/// The PSNR (dB, 8-bit samples) of a squared error over `count` samples (infinite for none).
pub(crate) fn psnr(sse: u64, count: u64) -> f64 {
    if sse == 0 {
        f64::INFINITY
    } else {
        10.0 * (255.0f64 * 255.0 / (sse as f64 / count as f64)).log10()
    }
}
