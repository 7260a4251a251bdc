//! Bad time syntax (bad usage) and spans that do not fit the video (a failed request, nothing written).

use super::*;

fn bad_start(bad: &str) -> Case {
    case(
        &format!("start {bad:?}"),
        &["cut", "g.mp4", "--start", bad, "-o", "o.mp4"],
        &[2],
    )
}

cases!(bad_start:
    start_5x => ("5x"),
    start_minus_1 => ("-1"),
    start_1e999 => ("1e999"),
    start_past_u64 => ("99999999999999999999"),
    start_61_minutes => ("00:61:00"),
    start_divide_by_zero => ("1/0"),
    start_nan => ("NaN"),
    start_empty => (""),
    start_dashes => ("--"),
);

fn bad_decision(bad: &str) -> Case {
    case(
        &format!("decision {bad:?}"),
        &["cut", "g.mp4", "--decision", bad, "-o", "o.mp4"],
        &[2],
    )
}

cases!(bad_decision:
    decision_abc => ("abc"),
    decision_negative => ("-5s"),
    decision_150_percent => ("150%"),
    decision_four_fields => ("1:2:3:4"),
);

#[test]
fn percent_start() {
    check(
        case(
            "percent start",
            &["cut", "g.mp4", "--start", "10%", "-o", "o.mp4"],
            &[2],
        )
        .says("percentage"),
    );
}

#[test]
fn percent_end() {
    check(
        case(
            "percent end",
            &["cut", "g.mp4", "--end", "10%", "-o", "o.mp4"],
            &[2],
        )
        .says("percentage"),
    );
}

fn bad_span(start: &str, end: &str) -> Case {
    let mut a = vec!["cut", "g.mp4", "--start", start];
    if !end.is_empty() {
        a.extend(["--end", end]);
    }
    a.extend(["-o", "o.mp4"]);
    case(&format!("span {start}..{end}"), &a, &[1]).says("g.mp4")
}

cases!(bad_span:
    span_100_200 => ("100", "200"),
    span_reversed => ("20", "10"),
    span_empty => ("5", "5"),
    span_past_the_end => ("0", "41"),
    span_reversed_seconds => ("2s", "1s"),
    span_starts_after_the_end => ("9s", ""),
);

fn decision_outside(decision: &str) -> Case {
    case(
        &format!("decision {decision} outside"),
        &[
            "cut",
            "g.mp4",
            "--start",
            "10",
            "--end",
            "20",
            "--decision",
            decision,
            "-o",
            "o.mp4",
        ],
        &[1],
    )
    .says("g.mp4")
}

cases!(decision_outside:
    decision_0_outside => ("0"),
    decision_0_percent_outside => ("0%"),
    decision_41_outside => ("41"),
    decision_2s_outside => ("2s"),
);
