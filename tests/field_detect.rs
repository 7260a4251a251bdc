//! `vidprep detect` on edits as they come in the field: hard cuts in letterboxed and
//! pillarboxed footage (the black bars must not dilute the change), and a cut two frames
//! before damaged frames (whose changes must not hide it). Each video is made with the ffmpeg
//! CLI from two shots joined at a known frame: that frame is the oracle.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::cmd;
use serde_json::Value;
use support::vidprep;

/// The frame where the second shot starts.
const CUT: u64 = 50;

/// Two low-contrast textured shots (grain on, 25 fps, 50 frames each) of `w x h`, joined by
/// a hard cut at frame [`CUT`], then `after` (a filter chain over the joined video: bars,
/// damage), encoded with x264 (B-frames, one GOP).
fn two_shots(dir: &Path, name: &str, (w, h): (u32, u32), after: &str) -> PathBuf {
    let out = dir.join(format!("{name}.mp4"));
    let shot = |lum: &str| {
        format!(
            "color=gray:s={w}x{h}:r=25,geq=lum='{lum}':cb=128:cr=128,noise=alls=4:allf=t+u,\
             trim=end_frame={CUT},format=yuv420p,settb=1/25,setpts=N"
        )
    };
    let graph = format!(
        "{}[a];{}[b];[a][b]concat=n=2:v=1,{after},format=yuv420p[v]",
        shot("128+40*sin(X/23+Y/31)*cos(Y/11)"),
        shot("128+40*cos(X/17-Y/29)*sin(X/13)")
    );
    cmd::ffmpeg(&[
        "-filter_complex",
        &graph,
        "-map",
        "[v]",
        "-c:v",
        "libx264",
        "-g",
        "250",
        "-bf",
        "3",
        "-pix_fmt",
        "yuv420p",
        &cmd::p(&out),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    out
}

/// `vidprep detect VIDEO --json`'s boundaries as (kind, start, end).
fn boundaries(video: &Path) -> Vec<(String, u64, u64)> {
    let dir = video.parent().unwrap();
    let out = vidprep()
        .arg("detect")
        .arg(video)
        .arg("-o")
        .arg(dir.join(format!(
            "{}.jsonl",
            video.file_stem().unwrap().to_string_lossy()
        )))
        .arg("--json")
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    v["boundaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["kind"].as_str().unwrap().to_string(),
                b["start"].as_u64().unwrap(),
                b["end"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn assert_one_cut(video: &Path) {
    let found = boundaries(video);
    assert_eq!(
        found,
        vec![("cut".to_string(), CUT, CUT)],
        "{}: want exactly the hard cut at frame {CUT}",
        video.display()
    );
}

#[test]
fn a_hard_cut_in_pillarboxed_footage_is_found() {
    // A 9:16 phone picture (202x360) in a 640x360 frame: two thirds of the frame are bars.
    let dir = tempfile::tempdir().unwrap();
    let video = two_shots(
        dir.path(),
        "pillarbox",
        (202, 360),
        "pad=640:360:(ow-iw)/2:0:black",
    );
    assert_one_cut(&video);
}

#[test]
fn a_hard_cut_in_letterboxed_footage_is_found() {
    // A 2.76:1 picture (640x232) in a 640x480 frame: half of the frame is bars.
    let dir = tempfile::tempdir().unwrap();
    let video = two_shots(
        dir.path(),
        "letterbox",
        (640, 232),
        "pad=640:480:0:(oh-ih)/2:black",
    );
    assert_one_cut(&video);
}

#[test]
fn a_cut_two_frames_before_damaged_frames_is_found() {
    // Frames CUT+2 .. CUT+5 are damaged as a broken stream decodes: half the picture is
    // replaced by a flat green or magenta block, alternating, then the shot is back.
    let dir = tempfile::tempdir().unwrap();
    let (d0, d1) = (CUT + 2, CUT + 5);
    let damage = format!(
        "drawbox=x=0:y=0:w=640:h=180:color=0x00FF00:t=fill:enable='eq(n,{d0})+eq(n,{})',\
         drawbox=x=0:y=180:w=640:h=180:color=0xFF00FF:t=fill:enable='eq(n,{})+eq(n,{d1})'",
        d0 + 2,
        d0 + 1
    );
    let video = two_shots(dir.path(), "damaged", (640, 360), &damage);
    assert_one_cut(&video);
}
