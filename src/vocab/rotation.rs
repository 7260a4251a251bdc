//! [`Rotation`]: the clockwise turn that shows a stored picture upright (from a stream's
//! display matrix), and what it does to a picture's size.

/// Clockwise rotation that turns the stored picture upright, as players show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Rotation {
    /// Stored upright (no display matrix, or one that does not rotate).
    None,
    /// Turn the stored picture 90 degrees clockwise to show it.
    Clockwise90,
    /// Turn the stored picture upside down (180 degrees).
    Rotate180,
    /// Turn the stored picture 270 degrees clockwise (90 anticlockwise) to show it.
    Clockwise270,
}

impl Rotation {
    /// From the clockwise angle in degrees (any multiple of 90 after rounding).
    pub fn from_degrees_cw(degrees: f64) -> Rotation {
        let d = (((degrees / 90.0).round() as i64 * 90) % 360 + 360) % 360;
        match d {
            90 => Rotation::Clockwise90,
            180 => Rotation::Rotate180,
            270 => Rotation::Clockwise270,
            _ => Rotation::None,
        }
    }

    /// The clockwise angle in degrees: 0, 90, 180 or 270.
    pub fn degrees_cw(self) -> u32 {
        match self {
            Rotation::None => 0,
            Rotation::Clockwise90 => 90,
            Rotation::Rotate180 => 180,
            Rotation::Clockwise270 => 270,
        }
    }

    /// Whether width and height trade places.
    pub fn swaps_axes(self) -> bool {
        matches!(self, Rotation::Clockwise90 | Rotation::Clockwise270)
    }

    /// The displayed size of a stored `width x height` picture.
    pub fn displayed_size(self, width: u32, height: u32) -> (u32, u32) {
        if self.swaps_axes() {
            (height, width)
        } else {
            (width, height)
        }
    }
}
