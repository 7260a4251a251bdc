//! `vidprep schema KIND`: prints the JSON Schema of a plan (a manifest line), a video
//! output's sidecar, `frames.json`, `item.json`, a `report.jsonl` line or a check report, as the library
//! generates it ([`vidprep::records::json_schema_text`]; `docs/schema/` holds the same text).

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;

use vidprep::records::SchemaKind;

#[derive(Args)]
pub struct SchemaArgs {
    /// Which document: plan (one manifest line), sidecar (beside a video output), frames
    /// (frames.json), item (item.json), report (a report.jsonl line) or check (what
    /// `vidprep check --json` prints).
    #[arg(value_parser = kinds())]
    kind: SchemaKind,
}

fn kinds() -> impl TypedValueParser<Value = SchemaKind> {
    let names: Vec<&'static str> = SchemaKind::ALL.iter().map(|k| k.name()).collect();
    PossibleValuesParser::new(names).map(|name| {
        name.parse::<SchemaKind>()
            .expect("the possible values are the kinds' names")
    })
}

pub fn run(args: SchemaArgs) -> anyhow::Result<u8> {
    let text = vidprep::records::json_schema_text(args.kind);
    crate::print_out(&text)?;
    Ok(crate::EXIT_OK)
}
