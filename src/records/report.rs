//! One line of a batch's report (`report.jsonl`, the same schema for every batch door): the
//! item's id and manifest line, how it ended, its outputs and its error (`vidprep schema
//! report`). The batch runner (`crate::batch`) writes them; resume and merges read them.

use serde::{Deserialize, Serialize};

use crate::error::ErrorKind;

/// How an item ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Made (`"ok"` in the report).
    Ok,
    /// Failed; the report line's `error` says why (`"failed"`).
    Failed,
    /// Complete and current from an earlier run (`resume`), not redone.
    Skipped,
    /// Not started because `fail_fast` stopped the run.
    NotRun,
}

/// One line of the report (the same schema for every batch door).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct ItemReport {
    /// The item's id; `null` for a manifest entry so broken that no id could be read.
    pub id: Option<String>,
    /// The 1-based manifest line (0 for items a command generated).
    pub line: usize,
    /// How the item ended: `ok`, `failed`, `skipped` or `not_run`.
    pub status: Status,
    /// Every file and folder the item has (final paths).
    pub outputs: Vec<String>,
    /// The whole error message (manifest, line and id first) when the item failed, or why it
    /// was not run; `null` otherwise.
    pub error: Option<String>,
    /// `usage`, `input`, `output`, `encode`, `internal` or `cancelled` when the item failed;
    /// absent otherwise (also for `not_run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// Wall-clock seconds spent making the item (0 for manifest errors, skipped and
    /// not-run items).
    pub seconds: f64,
    /// Frames of the processed stream decoded for the item (for a failed item, those decoded
    /// before it failed).
    pub frames: usize,
    /// Damage found in the source ("3 damaged packets near 12.4 s").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damage: Option<String>,
    /// Things that did not stop the item but deserve a look (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}
