//! Progress display for the CLI: an indicatif bar on a terminal, nothing otherwise.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use vidprep::Progress;

/// Draws frames done / total with speed and ETA when stderr is a terminal.
pub struct BarProgress {
    bar: Option<ProgressBar>,
}

impl BarProgress {
    pub fn new(label: &str) -> BarProgress {
        if !std::io::stderr().is_terminal() {
            return BarProgress { bar: None };
        }
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} frames {per_sec} eta {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        bar.set_prefix(label.to_string());
        BarProgress { bar: Some(bar) }
    }

    pub fn done(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Progress for BarProgress {
    fn set_length(&mut self, frames: u64) {
        if let Some(b) = &self.bar {
            b.set_length(frames);
        }
    }

    fn advance(&mut self, frames: u64) -> bool {
        if let Some(b) = &self.bar {
            b.inc(frames);
        }
        true
    }
}

impl Drop for BarProgress {
    fn drop(&mut self) {
        self.done();
    }
}
