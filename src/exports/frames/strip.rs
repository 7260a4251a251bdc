//! The strip of a frames export: every frame as a thumbnail in one captioned grid
//! (`strip.jpg` or `strip.png`), in position order.

use image::RgbImage;

use crate::records::frames_json::FrameRecord;

/// The strip's tile of one frame: `rgb` resized to `tile_w` pixels wide, aspect kept.
pub(super) fn thumbnail(rgb: &RgbImage, tile_w: u32) -> RgbImage {
    let th = (rgb.height() as f64 * tile_w as f64 / rgb.width() as f64)
        .round()
        .max(1.0) as u32;
    image::imageops::resize(rgb, tile_w, th, image::imageops::FilterType::Triangle)
}

/// The captioned grid of every frame, in position order.
pub(super) fn render_strip(
    thumbs: &[Option<RgbImage>],
    records: &[FrameRecord],
    columns: usize,
) -> RgbImage {
    let n = thumbs.len().max(1);
    let cols = if columns == 0 {
        n.min(4)
    } else {
        columns.min(n)
    };
    let rows = n.div_ceil(cols);
    let tile_w = thumbs
        .iter()
        .flatten()
        .map(|t| t.width())
        .max()
        .unwrap_or(1);
    let tile_h = thumbs
        .iter()
        .flatten()
        .map(|t| t.height())
        .max()
        .unwrap_or(1);
    let caption = ((tile_w as f32 / 16.0).clamp(12.0, 28.0)) as u32;
    let band = caption + caption / 2;
    let gap = 4;
    let width = cols as u32 * tile_w + (cols as u32 + 1) * gap;
    let height = rows as u32 * (tile_h + band) + (rows as u32 + 1) * gap;
    let mut strip = RgbImage::from_pixel(width, height, image::Rgb([255, 255, 255]));
    let font = crate::frames::draw::font();
    for (i, (thumb, rec)) in thumbs.iter().zip(records).enumerate() {
        let (c, r) = ((i % cols) as u32, (i / cols) as u32);
        let x = gap + c * (tile_w + gap);
        let y = gap + r * (tile_h + band + gap);
        if let Some(t) = thumb {
            image::imageops::overlay(&mut strip, t, x as i64, y as i64);
        }
        let text = format!(
            "#{} t={:.2}s (frame {})",
            rec.position, rec.time_s, rec.source_frame
        );
        imageproc::drawing::draw_text_mut(
            &mut strip,
            image::Rgb([0, 0, 0]),
            x as i32,
            (y + tile_h + caption / 4) as i32,
            ab_glyph::PxScale::from(caption as f32),
            &font,
            &text,
        );
    }
    strip
}
