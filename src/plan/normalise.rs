//! The plan's one canonical form ([`Plan::normalized`]): what sidecars record and `--resume`
//! hashes, the same whichever door a request came in by.

use super::schema::{BoxOptions, ExportSpec, Plan};
use super::text::BoxesOut;

impl Plan {
    /// The plan in its one canonical form: the box options with the boxes (a bare path when
    /// they are all defaults), and every encoding export's
    /// CRF, preset and audio filled in from `defaults`. The same request normalises to the
    /// same plan whichever door it came in by (a command, a manifest line, the library):
    /// sidecars record this form and `--resume` hashes it.
    pub fn normalized(&self, defaults: &crate::vocab::EncodeSettings) -> Plan {
        let mut plan = self.clone();
        let options = self.box_options();
        if let Some(boxes) = plan.boxes.as_mut() {
            boxes.options = (options != BoxOptions::default()).then_some(options);
        }
        for export in &mut plan.exports {
            match export {
                ExportSpec::Clip(c) => {
                    if self.insert.is_some() {
                        // An insertion's video carries its needle's V-STaR annotations.
                        c.boxes_out.get_or_insert(BoxesOut::Vstar);
                    }
                    if !c.copy {
                        c.crf.get_or_insert(defaults.crf);
                        c.preset.get_or_insert_with(|| defaults.preset.clone());
                    }
                    c.audio.get_or_insert(defaults.audio);
                }
                ExportSpec::Video(v) => {
                    if self.insert.is_some() {
                        v.boxes_out.get_or_insert(BoxesOut::Vstar);
                    }
                    v.preset.get_or_insert_with(|| defaults.preset.clone());
                    v.audio.get_or_insert(defaults.audio);
                }
                ExportSpec::Frames(f) => {
                    // Frames given are the explicit sampler's, whether it is named or not.
                    f.sampler = f.effective_sampler();
                }
                ExportSpec::Preview(_) => {}
            }
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::FramesExport;
    use crate::vocab::time::TimeSpec;

    #[test]
    fn a_plan_built_in_code_equals_its_manifest_line_once_normalised() {
        // The README's example: the same item built field by field and read from JSON.
        let mut built = Plan::new(
            "event-1",
            "raw.mp4",
            vec![
                ExportSpec::Clip(Default::default()),
                ExportSpec::Frames(FramesExport {
                    count: Some(16),
                    ..Default::default()
                }),
            ],
        );
        built.start = Some(TimeSpec::parse("5s").unwrap());
        built.end = Some(TimeSpec::parse("250").unwrap());
        built.decision = Some(TimeSpec::parse("75%").unwrap());
        let line: Plan = serde_json::from_str(
            r#"{"id": "event-1", "source": "raw.mp4", "start": "5s", "end": 250,
                "decision": "75%", "exports": [{"kind": "clip"}, {"kind": "frames", "count": 16}]}"#,
        )
        .unwrap();
        let defaults = crate::vocab::EncodeSettings::default();
        assert_eq!(built, line);
        assert_eq!(built.normalized(&defaults), line.normalized(&defaults));
        // Normalising twice changes nothing, and the form survives a round trip through JSON.
        let once = line.normalized(&defaults);
        assert_eq!(once.normalized(&defaults), once);
        let text = serde_json::to_string(&once).unwrap();
        assert_eq!(serde_json::from_str::<Plan>(&text).unwrap(), once);
    }
}
