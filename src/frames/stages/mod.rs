//! Stages: what a plan does to the stream between the source and the exports. Each stage is a
//! file here implementing [`Stage`] (in [`builder`], with the [`builder::StreamBuilder`] a
//! stage shapes), and [`stages_of`] is the one registry that turns a plan into its stages, in
//! the order they apply:
//!
//! - `span` ([`span`]): which source frames, and where the output ends (decision point; the
//!   rules: [`resolve`]);
//! - `insert` ([`insert`]): a GOT-10k needle ([`needle`]) spliced into the clip;
//! - `boxes` ([`boxes`]): the source's annotations, carried into every output and drawn.
//!
//! Per-export resizing and frame-rate reduction ([`resize`]) are frame stages the exports add
//! for themselves. [`stream`] holds the processed stream the stages shape and the exports
//! read. Imports go one way: `resolve`, `needle` <- `builder` <- the stages <- `stream`.
//! Adding a stage: a file with a `Stage` implementation, a plan field, one line in
//! [`stages_of`] (the steps: `docs/architecture.md`, "Adding things", "A stage").

pub(crate) mod boxes;
pub(crate) mod builder;
pub(crate) mod insert;
pub(crate) mod needle;
pub(crate) mod resize;
pub(crate) mod resolve;
pub(crate) mod span;
pub(crate) mod stream;

use crate::frames::stages::builder::Stage;
use crate::frames::stages::resolve::ClipSpec;
use crate::plan::Plan;

/// The stages of `plan`, in the order they apply (the registry of stages).
pub(crate) fn stages_of(plan: &Plan) -> Vec<Box<dyn Stage>> {
    let (start, end) = plan.span();
    let mut stages: Vec<Box<dyn Stage>> = vec![Box::new(span::SpanStage {
        spec: ClipSpec {
            start,
            end,
            decision: plan.decision,
        },
    })];
    if let Some(spec) = &plan.insert {
        stages.push(Box::new(insert::InsertStage { spec: spec.clone() }));
    }
    if let Some(request) = crate::frames::overlay::BoxesRequest::of_plan(plan) {
        stages.push(Box::new(boxes::BoxesStage { request }));
    }
    stages
}
