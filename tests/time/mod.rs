//! Time: the one timeline of annotations, cuts and sidecars (sources whose first frame is not at
//! 0), times beside sampled frames, what models and annotators receive, and percentage
//! decision points.

mod beside;
mod decision_percent;
mod field_cases;
mod model_outputs;
