//! A plan's paths on the file system: relative paths taken from a manifest's folder
//! ([`Plan::resolve_paths`]) and the local files and folders a plan reads ([`Plan::inputs`]),
//! which the output group never writes over. They are here, above `media`, because telling a
//! URL from a file and an image sequence's folders from its pattern is the sources' knowledge
//! (`crate::media::source`), which the plan's schema does not need.

use std::path::{Path, PathBuf};

use crate::media::source::{has_scheme, input_paths};
use crate::plan::{CheckedPlan, ExportSpec, Plan};

impl Plan {
    /// Joins relative paths (source, boxes, sequence) to `base` (a manifest's folder); a URL
    /// source (anything starting `scheme:` that is not a file there) stays as it is.
    pub fn resolve_paths(&mut self, base: &Path) {
        let join = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        // A URL (or what looks like one: its error names the scheme) is not a relative path.
        let url_like = has_scheme(&self.source) && !base.join(&self.source).exists();
        if !url_like {
            join(&mut self.source);
        }
        if let Some(b) = self.boxes.as_mut() {
            join(&mut b.path);
        }
        if let Some(i) = self.insert.as_mut() {
            join(&mut i.sequence);
        }
        for e in &mut self.exports {
            if let ExportSpec::Frames(f) = e {
                if let Some(s) = f.subtitles.as_mut() {
                    join(s);
                }
                if let Some(r) = f.follow_package.as_mut() {
                    join(r);
                }
            }
        }
    }

    /// The local files and folders the plan reads (never to be written): the source (an
    /// image sequence's folder; nothing for a URL), boxes and needle, a frames export's
    /// subtitles and parity record.
    pub fn inputs(&self) -> Vec<PathBuf> {
        let mut inputs = input_paths(&self.source);
        if let Some(b) = &self.boxes {
            inputs.push(b.path.clone());
        }
        if let Some(i) = &self.insert {
            inputs.push(i.sequence.clone());
        }
        for e in &self.exports {
            if let ExportSpec::Frames(f) = e {
                inputs.extend(f.subtitles.iter().cloned());
                inputs.extend(f.follow_package.iter().cloned());
            }
        }
        inputs
    }
}

impl CheckedPlan {
    /// Takes the plan's relative paths from `base` (a manifest's folder; see
    /// [`Plan::resolve_paths`]), checking them again.
    pub(crate) fn resolve_paths(&mut self, base: &Path) -> Result<(), String> {
        self.change_paths(|plan| plan.resolve_paths(base))
    }
}
