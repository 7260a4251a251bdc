//! Time: the one timeline of annotations, cuts and sidecars (sources whose first frame is not at
//! 0), times beside sampled frames, what models and annotators receive, and percentage decision
//! points.

// time, text and sound beside sampled frames (was tests/beside.rs)
mod beside;
// one rule for a percentage decision point (was tests/decision_percent.rs)
mod decision_percent;
// sources whose first frame is not at 0, annotation times, sidecars (was tests/field_time.rs)
mod field_cases;
// times, decision points and metadata models and annotators receive (was tests/model_outputs.rs)
mod model_outputs;
