//! Hostile annotations.

use super::*;

#[test]
fn times_at_the_i64_limits() {
    check(
        case("times at the i64 limits", &["overlay", "g.mp4", "--boxes", "huge.csv", "--preset", "ultrafast", "-o", "o.mp4"], &[0]).writes("o.mp4").writes("o.json").with(|d| {
        std::fs::write(d.join("huge.csv"), "time,track,x1,y1,x2,y2\n-9223372036854775807/1,1,1,1,5,5\n9223372036854775807/1,1,1,1,5,5\n").unwrap();
    }),
    );
}

fn hostile_boxes(name: &str, body: &str) -> Case {
    let body = body.to_string();
    case(
        name,
        &[
            "overlay",
            "g.mp4",
            "--boxes",
            "b.csv",
            "--preset",
            "ultrafast",
            "-o",
            "o.mp4",
        ],
        &[0, 1],
    )
    .writes("o.mp4")
    .writes("o.json")
    .with(move |d| std::fs::write(d.join("b.csv"), &body).unwrap())
}

cases!(hostile_boxes:
    nan_boxes => ("nan boxes", "frame,track,x1,y1,x2,y2\n0,1,NaN,1,5,5\n"),
    inf_boxes => ("inf boxes", "frame,track,x1,y1,x2,y2\n0,1,inf,1,5,5\n"),
    huge_frame => (
        "huge frame",
        "frame,track,x1,y1,x2,y2\n18446744073709551615,1,1,1,5,5\n"
    ),
    negative_frame => ("negative frame", "frame,track,x1,y1,x2,y2\n-1,1,1,1,5,5\n"),
    ragged_rows => ("ragged rows", "frame,track,x1,y1,x2,y2\n0,1,1\n"),
    binary => ("binary", "\u{0}\u{1}\u{2}\u{ff}garbage"),
    only_a_header => ("only a header", "frame,track,x1,y1,x2,y2\n"),
);

#[test]
fn bom_csv() {
    check(
        case(
            "bom csv",
            &[
                "overlay",
                "g.mp4",
                "--boxes",
                "bom.csv",
                "--preset",
                "ultrafast",
                "-o",
                "o.mp4",
            ],
            &[0],
        )
        .writes("o.mp4")
        .writes("o.json")
        .with(|d| {
            std::fs::write(
                d.join("bom.csv"),
                "\u{feff}frame,track_id,x1,y1,x2,y2\n0,1,10,10,60,60\n",
            )
            .unwrap();
        }),
    );
}

#[test]
fn fifo_annotations() {
    check(
        case(
            "fifo annotations",
            &["overlay", "g.mp4", "--boxes", "b.csv", "-o", "o.mp4"],
            &[1],
        )
        .says("not a regular file")
        .with(|d| mkfifo(&d.join("b.csv"))),
    );
}

fn bad_anno_fps(rate: &str) -> Case {
    let rate = rate.to_string();
    case(
        &format!("anno_fps {rate}"),
        &[
            "insert",
            "--host",
            "g.mp4",
            "--sequence",
            "seq",
            "--at",
            "0",
            "--preset",
            "ultrafast",
            "-o",
            "a.mp4",
        ],
        &[1],
    )
    .says("anno_fps")
    .with(move |d| {
        std::fs::write(
            d.join("seq/meta_info.ini"),
            format!("[METAINFO]\nanno_fps: {rate}\n"),
        )
        .unwrap();
    })
}

cases!(bad_anno_fps:
    anno_fps_tiny => ("0.0001Hz"),
    anno_fps_one_per_31_000_years => ("1/1000000000000Hz"),
    anno_fps_zero => ("0Hz"),
    anno_fps_negative => ("-5Hz"),
    anno_fps_nan => ("NaNHz"),
    anno_fps_1e12 => ("1e12Hz"),
    anno_fps_100000 => ("100000Hz"),
);

#[test]
fn groundtruth_too_short() {
    check(
        case(
            "groundtruth too short",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "a.mp4",
            ],
            &[1],
        )
        .says("groundtruth.txt")
        .with(|d| std::fs::write(d.join("seq/groundtruth.txt"), "1,2,3,4\n").unwrap()),
    );
}

#[test]
fn broken_jpeg_in_sequence() {
    check(
        case(
            "broken jpeg in sequence",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "seq",
                "--at",
                "0",
                "-o",
                "a.mp4",
            ],
            &[1],
        )
        .says("00000003.jpg")
        .with(|d| std::fs::write(d.join("seq/00000003.jpg"), b"\xff\xd8broken").unwrap()),
    );
}

#[test]
fn sequence_without_images() {
    check(
        case(
            "sequence without images",
            &[
                "insert",
                "--host",
                "g.mp4",
                "--sequence",
                "empty",
                "--at",
                "0",
                "-o",
                "a.mp4",
            ],
            &[1],
        )
        .says("empty")
        .with(|d| std::fs::create_dir(d.join("empty")).unwrap()),
    );
}
