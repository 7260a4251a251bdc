//! JSON Schemas (draft 2020-12) of what vidprep reads and writes, generated from the types
//! themselves by `schemars`, so they cannot drift from the code: a plan (one manifest line),
//! the sidecar of a video output (`clip`, `video`, `preview`), `frames.json`, a batch item's
//! `item.json`, a line of `report.jsonl`, the report of `vidprep check --json` and the record
//! of `vidprep parity --profile P --out`.
//!
//! The plan's schema describes what deserialisation accepts (unknown fields refused, the text
//! forms of times, sizes and names as patterns or lists); the others describe what vidprep
//! writes. Types whose serde is hand-written implement `JsonSchema` by hand beside that serde
//! (`plan/text.rs`, `vocab/time.rs`, ...). `vidprep schema KIND` prints one; `docs/schema/` holds
//! them all, checked against this module by `tests/schema.rs`.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;

/// Which document a schema describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SchemaKind {
    /// A plan: one line of a manifest (`docs/manifest.md`).
    Plan,
    /// The sidecar `NAME.json` beside a video output (`docs/sidecar.md`).
    Sidecar,
    /// `frames.json` in a frames export's folder (`docs/export.md`).
    Frames,
    /// `item.json` in a batch item's folder: what `--resume` compares.
    Item,
    /// One line of `report.jsonl` (`docs/manifest.md`, Running).
    Report,
    /// What `vidprep check --json` prints (`docs/check.md`).
    Check,
    /// The record `vidprep parity --profile P --out` writes, which `--follow-package` reads
    /// (`docs/profiles.md`).
    Parity,
}

impl SchemaKind {
    /// Every kind, in the order `vidprep schema` lists them.
    pub const ALL: [SchemaKind; 7] = [
        SchemaKind::Plan,
        SchemaKind::Sidecar,
        SchemaKind::Frames,
        SchemaKind::Item,
        SchemaKind::Report,
        SchemaKind::Check,
        SchemaKind::Parity,
    ];

    /// The kind's name (`plan`, `sidecar`, `frames`, `item`, `report`).
    pub fn name(self) -> &'static str {
        match self {
            SchemaKind::Plan => "plan",
            SchemaKind::Sidecar => "sidecar",
            SchemaKind::Frames => "frames",
            SchemaKind::Item => "item",
            SchemaKind::Report => "report",
            SchemaKind::Check => "check",
            SchemaKind::Parity => "parity",
        }
    }

    /// The file in `docs/schema/` that holds its schema (`plan.schema.json`, ...).
    pub fn file_name(self) -> String {
        format!("{}.schema.json", self.name())
    }
}

impl std::fmt::Display for SchemaKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SchemaKind {
    type Err = String;
    fn from_str(s: &str) -> Result<SchemaKind, String> {
        SchemaKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = SchemaKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown schema {s:?}; expected one of: {}",
                    names.join(", ")
                )
            })
    }
}

/// The JSON Schema of `kind`, as a JSON value (`docs/schema/<kind>.schema.json` holds it,
/// pretty-printed with a final newline).
pub fn json_schema(kind: SchemaKind) -> serde_json::Value {
    let settings = SchemaSettings::draft2020_12();
    // The plan is read (what serde accepts); the rest is written (what serde produces).
    let generator = match kind {
        SchemaKind::Plan => settings.for_deserialize(),
        _ => settings.for_serialize(),
    }
    .into_generator();
    let (title, mut schema) = match kind {
        SchemaKind::Plan => (
            "vidprep plan (one manifest line)",
            root::<crate::plan::Plan>(generator),
        ),
        SchemaKind::Sidecar => (
            "vidprep sidecar of a video output",
            root::<crate::records::sidecar::Sidecar>(generator),
        ),
        SchemaKind::Frames => (
            "vidprep frames.json",
            root::<crate::records::frames_json::FramesJson>(generator),
        ),
        SchemaKind::Item => (
            "vidprep item.json",
            root::<crate::records::item_json::ItemRecord>(generator),
        ),
        SchemaKind::Report => (
            "vidprep report.jsonl line",
            root::<crate::records::report::ItemReport>(generator),
        ),
        SchemaKind::Check => (
            "vidprep check report",
            root::<crate::records::check_report::CheckReport>(generator),
        ),
        SchemaKind::Parity => (
            "vidprep parity record (of a profile)",
            root::<crate::records::parity::ParityRecord>(generator),
        ),
    };
    // `$schema`, the title and the description first, as a reader expects them.
    let map = schema.ensure_object();
    map.insert("title".into(), title.into());
    let mut ordered = serde_json::Map::new();
    for key in ["$schema", "title", "description"] {
        if let Some(v) = map.remove(key) {
            ordered.insert(key.into(), v);
        }
    }
    ordered.append(map);
    serde_json::Value::Object(ordered)
}

fn root<T: JsonSchema>(generator: schemars::SchemaGenerator) -> schemars::Schema {
    generator.into_root_schema_for::<T>()
}

/// The text of `docs/schema/<kind>.schema.json`: the schema, pretty-printed, with a final
/// newline.
pub fn json_schema_text(kind: SchemaKind) -> String {
    let mut text =
        serde_json::to_string_pretty(&json_schema(kind)).expect("a JSON value serialises");
    text.push('\n');
    text
}
