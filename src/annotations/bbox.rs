//! The box type of the annotation model ([`BBox`]): pixel (or normalised) corners `x1,y1,x2,y2`
//! on the upright stored grid, and the arithmetic on it (conversion from `x,y,w,h` and
//! centre forms, clamping to a frame, scaling, translation, linear interpolation).

use serde::{Deserialize, Serialize};

/// An axis-aligned box by its corners: `x1 <= x2`, `y1 <= y2` for a proper box (not enforced:
/// readers turn empty or non-finite boxes into `Entry::Absent` before they get here).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BBox {
    /// Left edge: pixels from the frame's left side (or a fraction of its width when the
    /// annotations are `Coords::Normalized`).
    pub x1: f64,
    /// Top edge: pixels down from the frame's top (or a fraction of its height).
    pub y1: f64,
    /// Right edge, same unit as `x1`; the box's width is `x2 - x1`.
    pub x2: f64,
    /// Bottom edge, same unit as `y1`; the box's height is `y2 - y1`.
    pub y2: f64,
}

impl BBox {
    /// The box with corners `(x1, y1)` (top left) and `(x2, y2)` (bottom right), as given.
    pub fn new(x1: f64, y1: f64, x2: f64, y2: f64) -> BBox {
        BBox { x1, y1, x2, y2 }
    }

    /// From the top-left corner and size (GOT-10k, MOT, COCO `x,y,w,h`).
    pub fn from_xywh(x: f64, y: f64, w: f64, h: f64) -> BBox {
        BBox {
            x1: x,
            y1: y,
            x2: x + w,
            y2: y + h,
        }
    }

    /// From the centre and size (Waymo camera boxes: `w` = length along x, `h` = width along
    /// y).
    pub fn from_center(cx: f64, cy: f64, w: f64, h: f64) -> BBox {
        BBox {
            x1: cx - w / 2.0,
            y1: cy - h / 2.0,
            x2: cx + w / 2.0,
            y2: cy + h / 2.0,
        }
    }

    /// `[x, y, w, h]` of this box.
    pub fn xywh(&self) -> [f64; 4] {
        [self.x1, self.y1, self.width(), self.height()]
    }

    /// `x2 - x1` (negative for a box with its corners swapped).
    pub fn width(&self) -> f64 {
        self.x2 - self.x1
    }

    /// `y2 - y1` (negative for a box with its corners swapped).
    pub fn height(&self) -> f64 {
        self.y2 - self.y1
    }

    /// The centre point `(x, y)`.
    pub fn center(&self) -> (f64, f64) {
        ((self.x1 + self.x2) / 2.0, (self.y1 + self.y2) / 2.0)
    }

    /// True when all four coordinates are finite numbers.
    pub fn is_finite(&self) -> bool {
        self.x1.is_finite() && self.y1.is_finite() && self.x2.is_finite() && self.y2.is_finite()
    }

    /// True when the box is finite and has positive width and height.
    pub fn has_area(&self) -> bool {
        self.is_finite() && self.width() > 0.0 && self.height() > 0.0
    }

    /// The part of this box inside a `frame_w` x `frame_h` frame, or `None` when nothing
    /// (no positive area) is left inside, or the box is not finite.
    pub fn clamped(&self, frame_w: f64, frame_h: f64) -> Option<BBox> {
        // Written so that NaN frame sizes also give None.
        let positive = |v: f64| v > 0.0;
        if !self.is_finite() || !positive(frame_w) || !positive(frame_h) {
            return None;
        }
        let b = BBox {
            x1: self.x1.clamp(0.0, frame_w),
            y1: self.y1.clamp(0.0, frame_h),
            x2: self.x2.clamp(0.0, frame_w),
            y2: self.y2.clamp(0.0, frame_h),
        };
        b.has_area().then_some(b)
    }

    /// Each x multiplied by `sx` and each y by `sy` (normalised -> pixels, or a resize).
    pub fn scaled(&self, sx: f64, sy: f64) -> BBox {
        BBox {
            x1: self.x1 * sx,
            y1: self.y1 * sy,
            x2: self.x2 * sx,
            y2: self.y2 * sy,
        }
    }

    /// Moved by `dx`, `dy`.
    pub fn translated(&self, dx: f64, dy: f64) -> BBox {
        BBox {
            x1: self.x1 + dx,
            y1: self.y1 + dy,
            x2: self.x2 + dx,
            y2: self.y2 + dy,
        }
    }

    /// The box a fraction `t` of the way from `a` to `b`, coordinate by coordinate.
    /// `t = 0` gives `a` and `t = 1` gives `b` exactly; `t = 0.5` gives the exact midpoint
    /// (rounded once).
    pub fn lerp(a: &BBox, b: &BBox, t: f64) -> BBox {
        let mix = |p: f64, q: f64| p * (1.0 - t) + q * t;
        BBox {
            x1: mix(a.x1, b.x1),
            y1: mix(a.y1, b.y1),
            x2: mix(a.x2, b.x2),
            y2: mix(a.y2, b.y2),
        }
    }

    /// Intersection over union with `other` (0 when either has no area).
    pub fn iou(&self, other: &BBox) -> f64 {
        let iw = self.x2.min(other.x2) - self.x1.max(other.x1);
        let ih = self.y2.min(other.y2) - self.y1.max(other.y1);
        if iw <= 0.0 || ih <= 0.0 {
            return 0.0;
        }
        let inter = iw * ih;
        let union = self.width() * self.height() + other.width() * other.height() - inter;
        if union > 0.0 {
            inter / union
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn iou_by_hand() {
        let a = BBox::new(0.0, 0.0, 10.0, 10.0);
        assert_eq!(a.iou(&a), 1.0);
        // Overlap 5x10 = 50 of a union 100 + 100 - 50 = 150.
        assert!((a.iou(&BBox::new(5.0, 0.0, 15.0, 10.0)) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(a.iou(&BBox::new(10.0, 0.0, 20.0, 10.0)), 0.0);
        assert_eq!(a.iou(&BBox::new(3.0, 3.0, 3.0, 9.0)), 0.0);
    }

    #[test]
    fn conversions() {
        let b = BBox::from_xywh(10.0, 20.0, 30.0, 40.0);
        assert_eq!(b, BBox::new(10.0, 20.0, 40.0, 60.0));
        assert_eq!(b.width(), 30.0);
        assert_eq!(b.height(), 40.0);
        assert_eq!(b.xywh(), [10.0, 20.0, 30.0, 40.0]);
        assert_eq!(
            BBox::from_center(100.0, 50.0, 20.0, 10.0),
            BBox::new(90.0, 45.0, 110.0, 55.0)
        );
        assert_eq!(b.center(), (25.0, 40.0));
    }

    #[test]
    fn clamping() {
        let b = BBox::new(-10.0, -5.0, 50.0, 500.0);
        assert_eq!(
            b.clamped(100.0, 100.0),
            Some(BBox::new(0.0, 0.0, 50.0, 100.0))
        );
        assert_eq!(
            BBox::new(120.0, 0.0, 150.0, 10.0).clamped(100.0, 100.0),
            None
        );
        assert_eq!(
            BBox::new(f64::NAN, 0.0, 150.0, 10.0).clamped(100.0, 100.0),
            None
        );
        assert_eq!(BBox::new(0.0, 0.0, 10.0, 10.0).clamped(0.0, 100.0), None);
    }

    #[test]
    fn lerp_endpoints_and_midpoint() {
        let a = BBox::new(0.0, 10.0, 20.0, 30.0);
        let b = BBox::new(10.0, 30.0, 60.0, 31.0);
        assert_eq!(BBox::lerp(&a, &b, 0.0), a);
        assert_eq!(BBox::lerp(&a, &b, 1.0), b);
        assert_eq!(BBox::lerp(&a, &b, 0.5), BBox::new(5.0, 20.0, 40.0, 30.5));
    }

    fn coord() -> impl Strategy<Value = f64> {
        -1e6f64..1e6
    }

    fn any_box() -> impl Strategy<Value = BBox> {
        (coord(), coord(), 0.0f64..1e5, 0.0f64..1e5)
            .prop_map(|(x, y, w, h)| BBox::from_xywh(x, y, w, h))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
    }

    proptest! {
        #[test]
        fn xywh_round_trips(x in coord(), y in coord(), w in 0.0f64..1e5, h in 0.0f64..1e5) {
            let [x2, y2, w2, h2] = BBox::from_xywh(x, y, w, h).xywh();
            prop_assert_eq!((x2, y2), (x, y));
            prop_assert!(close(w2, w) && close(h2, h));
        }

        #[test]
        fn center_form_keeps_center_and_size(cx in coord(), cy in coord(), w in 0.0f64..1e5, h in 0.0f64..1e5) {
            let b = BBox::from_center(cx, cy, w, h);
            let (cx2, cy2) = b.center();
            prop_assert!(close(cx2, cx) && close(cy2, cy));
            prop_assert!(close(b.width(), w) && close(b.height(), h));
        }

        #[test]
        fn clamped_lies_inside_and_is_idempotent(b in any_box(), fw in 1.0f64..4000.0, fh in 1.0f64..4000.0) {
            if let Some(c) = b.clamped(fw, fh) {
                prop_assert!(c.x1 >= 0.0 && c.y1 >= 0.0 && c.x2 <= fw && c.y2 <= fh);
                prop_assert!(c.x1 >= b.x1 && c.y1 >= b.y1 && c.x2 <= b.x2 && c.y2 <= b.y2);
                prop_assert!(c.has_area());
                prop_assert_eq!(c.clamped(fw, fh), Some(c));
            } else {
                // Nothing left: the box misses the frame or is empty.
                let inside_w = b.x2.min(fw) - b.x1.max(0.0);
                let inside_h = b.y2.min(fh) - b.y1.max(0.0);
                prop_assert!(inside_w <= 0.0 || inside_h <= 0.0);
            }
        }

        #[test]
        fn scaling_by_powers_of_two_inverts_exactly(b in any_box(), e in -8i32..8) {
            let s = 2f64.powi(e);
            prop_assert_eq!(b.scaled(s, s).scaled(1.0 / s, 1.0 / s), b);
        }

        #[test]
        fn scaling_normalised_boxes(x1 in 0.0f64..1.0, y1 in 0.0f64..1.0, w in 1u32..8000, h in 1u32..8000) {
            let b = BBox::new(x1, y1, 1.0, 1.0).scaled(w as f64, h as f64);
            prop_assert!(b.x1 >= 0.0 && b.x1 <= w as f64 && b.y1 <= h as f64);
            prop_assert_eq!((b.x2, b.y2), (w as f64, h as f64));
        }

        #[test]
        fn translation_inverts(b in any_box(), dx in -1e4f64..1e4, dy in -1e4f64..1e4) {
            let back = b.translated(dx, dy).translated(-dx, -dy);
            prop_assert!(close(back.x1, b.x1) && close(back.y1, b.y1) && close(back.x2, b.x2) && close(back.y2, b.y2));
        }

        #[test]
        fn lerp_stays_between_and_hits_ends(a in any_box(), b in any_box(), t in 0.0f64..=1.0) {
            prop_assert_eq!(BBox::lerp(&a, &b, 0.0), a);
            prop_assert_eq!(BBox::lerp(&a, &b, 1.0), b);
            let m = BBox::lerp(&a, &b, 0.5);
            prop_assert_eq!(m.x1, (a.x1 + b.x1) / 2.0);
            prop_assert_eq!(m.y2, (a.y2 + b.y2) / 2.0);
            let l = BBox::lerp(&a, &b, t);
            for (v, p, q) in [(l.x1, a.x1, b.x1), (l.y1, a.y1, b.y1), (l.x2, a.x2, b.x2), (l.y2, a.y2, b.y2)] {
                let slack = 1e-9 * (1.0 + p.abs().max(q.abs()));
                prop_assert!(v >= p.min(q) - slack && v <= p.max(q) + slack);
            }
        }
    }
}
