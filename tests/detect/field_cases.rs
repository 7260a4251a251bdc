//! `vidprep detect` on edits as they come in the field: hard cuts in letterboxed and
//! pillarboxed footage (the black bars must not dilute the change), a cut two frames
//! before damaged frames (whose changes must not hide it), a slow camera move opening a
//! video, a dissolve into a dark shot that then brightens, an animated title card, and a
//! caption (or banner, or exposure ramp) fading in 20 frames after a dissolve. Each
//! video is made with the ffmpeg CLI from shots joined at known frames: those frames are the
//! oracle.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};

use common::cmd;
use common::oracle;
use serde_json::Value;
use support::vidprep;

/// The frame where the second shot starts.
const CUT: u64 = 50;

/// Two low-contrast textured shots (grain on, 25 fps, 50 frames each) of `w x h`, joined by
/// a hard cut at frame [`CUT`], then `after` (a filter chain over the joined video: bars,
/// damage), encoded with x264 (B-frames, one GOP).
fn two_shots(dir: &Path, name: &str, (w, h): (u32, u32), after: &str) -> PathBuf {
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
    encode(dir, name, &[], &graph, 2 * CUT)
}

/// `vidprep detect VIDEO --json`'s boundaries as (kind, start, end).
fn boundaries(video: &Path) -> Vec<(String, u64, u64)> {
    detected(video).0
}

/// `vidprep detect VIDEO --json`'s boundaries as (kind, start, end) and its proposals as
/// (start, end).
fn detected(video: &Path) -> (Vec<(String, u64, u64)>, Vec<(u64, u64)>) {
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
    let boundaries = v["boundaries"]
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
        .collect();
    let proposals = v["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["start"].as_u64().unwrap(), p["end"].as_u64().unwrap()))
        .collect();
    (boundaries, proposals)
}

/// Encodes a filter graph (over `inputs`, each a file given to ffmpeg's `-i`) whose output
/// is `[v]` (25 fps) with x264 (B-frames, one GOP) and checks that it holds `frames` frames
/// (ffprobe).
fn encode(dir: &Path, name: &str, inputs: &[&Path], graph: &str, frames: u64) -> PathBuf {
    let out = dir.join(format!("{name}.mp4"));
    let mut args: Vec<String> = Vec::new();
    for input in inputs {
        args.extend(["-i".to_string(), cmd::p(input)]);
    }
    for a in [
        "-filter_complex",
        graph,
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
    ] {
        args.push(a.to_string());
    }
    args.push(cmd::p(&out));
    cmd::ffmpeg(&args).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(oracle::count_frames(&out), frames, "{}", out.display());
    out
}

/// A soft still (a Mandelbrot view, blurred) 1280x720, looped: a camera can pan over it.
const SOFT_STILL: &str = "mandelbrot=s=1280x720:r=25:start_scale=0.3:maxiter=200,trim=end_frame=1,\
                          gblur=sigma=12,loop=loop=-1:size=1,setpts=N/25/TB";

#[test]
fn a_slow_camera_move_opening_a_video_is_not_a_transition() {
    // Issue 40: a slow pan over a soft picture from frame 0 (4 and 5 pixels a frame, a third
    // of that downwards), then a hard cut to testsrc2 at frame 100. The 6-frames-back
    // difference first exists at frame 6; read against the frames before it (where it is
    // not measured) it looked like a dissolve at frames 9-14, and the first proposal began
    // there. The truth is the construction: one cut at 100, the first shot from frame 0.
    let dir = tempfile::tempdir().unwrap();
    for speed in [4, 5] {
        let graph = format!(
            "{SOFT_STILL},crop=640:360:x='n*{speed}':y='n*{speed}/3',trim=end_frame=100,\
             setpts=N/25/TB[a];testsrc2=s=640x360:r=25,trim=end_frame=60,setpts=N/25/TB[b];\
             [a][b]concat=n=2:v=1,format=yuv420p[v]"
        );
        let video = encode(dir.path(), &format!("pan{speed}"), &[], &graph, 160);
        let (b, p) = detected(&video);
        assert_eq!(b, vec![("cut".to_string(), 100, 100)], "speed {speed}");
        assert_eq!(p, vec![(0, 100), (100, 160)], "speed {speed}");
    }
}

#[test]
fn a_dissolve_into_a_dark_shot_that_brightens_is_one_dissolve() {
    // Issue 40: chaplin (real footage) cross-fades (xfade, 1.2 s = 30 frames from offset
    // 70: mixed frames 71..99, clean from 100) into bag, darkened (eq brightness -0.35) and
    // brightening within the shot over its frames 30..70 (frames 100..140 of the video).
    // Before, the detector reported the brightening [102, 149) as the dissolve and missed
    // the cross-fade. The brightening is not a transition; the dissolve ends where the mix
    // does (its first frames, mostly the bright shot, change little and may be left out).
    let (Some(chaplin), Some(bag)) = (
        support::shared("host/chaplin.mp4"),
        support::shared("host/bag.avi"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // 266 frames: chaplin's first 70, then bag's 196 (ffprobe of the joined file).
    let n = 266;
    let out = encode(
        dir.path(),
        "darkx",
        &[chaplin.as_path(), bag.as_path()],
        "[0]trim=end_frame=100,setpts=N/25/TB,scale=640:360,setsar=1,format=yuv444p,fps=25[a];\
         [1]trim=end_frame=200,setpts=N/25/TB,scale=640:360,setsar=1,\
         eq=brightness='-0.35*(1-clip((t-1.2)/1.6,0,1))':eval=frame,format=yuv444p,fps=25[b];\
         [a]tpad=stop=2:stop_mode=clone[ap];\
         [ap][b]xfade=transition=fade:duration=1.2:offset=2.8,format=yuv420p[v]",
        n,
    );
    let (b, p) = detected(&out);
    assert_eq!(b.len(), 1, "{b:?}");
    let (kind, s, e) = &b[0];
    assert_eq!(kind, "dissolve", "{b:?}");
    assert!((71..=78).contains(s) && e.abs_diff(100) <= 3, "{b:?}");
    assert_eq!(p, vec![(0, *s), (*e, n)]);
}

/// A still title card (dark blue, or dark red) 25 fps, on which a drawing appears in two
/// steps: white blocks over 15% of the picture at frame 25 and a yellow frame at frame 55,
/// while a small mark slides along the bottom.
fn title_card(background: &str, frames: u64) -> String {
    let mut blocks = String::new();
    for k in 0..6 {
        blocks.push_str(&format!(
            "drawbox=x={}:y=60:w=70:h=90:color=white:t=fill:enable='gte(n,25)',",
            60 + k * 90
        ));
    }
    format!(
        "color=c={background}:s=640x360:r=25,trim=end_frame={frames},{blocks}\
         drawbox=x=170:y=190:w=300:h=130:color=0xF0C040:t=fill:enable='gte(n,55)',\
         drawbox=x=200:y=215:w=240:h=80:color={background}:t=fill:enable='gte(n,55)'[card];\
         color=c=white:s=24x24:r=25[mark];[card][mark]overlay=x='60+n*4':y=330:shortest=1,\
         setpts=N/25/TB"
    )
}

#[test]
fn an_animated_title_card_is_one_shot_and_a_card_to_card_cut_is_a_cut() {
    // Issue 40 (and docs/detect.md, "what a cut is"): a cut changes at least a fifth of the
    // picture. The drawing appearing on the card (at frames 25 and 55) changes less, however
    // sharply; the card is one shot up to the cut to testsrc2 at 100. A cut from the card
    // to the same card on another background (a change of colour more than brightness) at
    // 100 is a cut.
    let dir = tempfile::tempdir().unwrap();
    let graph = format!(
        "{}[a];testsrc2=s=640x360:r=25,trim=end_frame=60,setpts=N/25/TB[b];\
         [a][b]concat=n=2:v=1,format=yuv420p[v]",
        title_card("0x182848", 100)
    );
    let video = encode(dir.path(), "card", &[], &graph, 160);
    assert_eq!(detected(&video).0, vec![("cut".to_string(), 100, 100)]);
    let graph = format!(
        "{}[a];{}[b];[a][b]concat=n=2:v=1,format=yuv420p[v]",
        title_card("0x182848", 100),
        title_card("0x601010", 60)
    );
    let video = encode(dir.path(), "cards", &[], &graph, 160);
    assert_eq!(detected(&video).0, vec![("cut".to_string(), 100, 100)]);
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

/// Chaplin (real footage) cross-fading into `second` (bag, or vtest) as in the trailer of
/// issue 52: xfade over 1.2 s (30 frames) from offset 70, so frames 71..99 are mixed and the
/// new shot is clean from 100, then `after` (a filter chain, or a second cross-fade, over
/// the joined video `[x]`, ending in `[v]`). `inputs` after the first two are given to
/// ffmpeg too.
fn after_cross_fade(
    dir: &Path,
    name: &str,
    inputs: &[&Path],
    second_frames: u64,
    after: &str,
    frames: u64,
) -> PathBuf {
    let graph = format!(
        "[0]trim=end_frame=100,setpts=N/25/TB,scale=640:360,setsar=1,format=yuv444p,fps=25[a];\
         [1]trim=end_frame={second_frames},setpts=N/25/TB,scale=640:360,setsar=1,format=yuv444p,\
         fps=25[b];[a]tpad=stop=2:stop_mode=clone[ap];\
         [ap][b]xfade=transition=fade:duration=1.2:offset=2.8[x];{after}"
    );
    encode(dir, name, inputs, &graph, frames)
}

/// An overlay of `w x h` in `colour` at `x, y` fading in (alpha) over 0.44 s from 4.8 s:
/// frames 121..131 of the video change, it stands from 131 on. Over `[x]`, out as `[v]`.
fn overlay_fading_in(colour: &str, (w, h): (u32, u32), (x, y): (u32, u32), frames: u64) -> String {
    format!(
        "color={colour}:s={w}x{h}:r=25,format=yuva444p,fade=in:st=4.8:d=0.44:alpha=1[o];\
         [x][o]overlay=x={x}:y={y}:eof_action=pass,trim=end_frame={frames},format=yuv420p[v]"
    )
}

/// `found` is a dissolve whose truth is mixed frames `start..end`, its start and end each
/// within `tolerance` frames of the truth's.
fn assert_dissolve(
    found: &(String, u64, u64),
    (start, end): (u64, u64),
    tolerance: u64,
    all: &[(String, u64, u64)],
) {
    let (kind, s, e) = found;
    assert_eq!(kind, "dissolve", "{all:?}");
    assert!(
        s.abs_diff(start) <= tolerance && e.abs_diff(end) <= tolerance,
        "want the dissolve [{start}, {end}) within {tolerance} frames at both ends: {all:?}"
    );
}

#[test]
fn a_caption_fading_in_after_a_dissolve_is_not_a_second_dissolve() {
    // Issue 52 (item 9): in a trailer a cross-fade (ending at frame 1134) was followed by a
    // false 11-frame dissolve (frames 1154-1165) where a caption faded in. Here chaplin
    // cross-fades into bag (mixed frames 71..99, bag clean from 100; the camera tilts down
    // fast over its first 50 frames) and 20 frames later a white caption over a tenth of the
    // picture fades in over frames 121..131. Before, the dissolve's stretch at lag 48 kept
    // bag's motion steps (it ended at 115), the tilt with the caption on it read as a
    // dissolve [105, 152) and the two merged into that one: the true dissolve was lost. The
    // truth is the construction: one dissolve [71, 100) and nothing else (no cut, no fade);
    // the dissolve found within 3 frames of it at both ends.
    // Neighbours: the caption over a calm shot (vtest), a lower-third banner over a quarter
    // of the picture fading in, the new shot brightening over the same frames (an exposure
    // ramp), and a second true cross-fade (bag into vtest, mixed frames 121..131).
    let (Some(chaplin), Some(bag), Some(vtest)) = (
        support::shared("host/chaplin.mp4"),
        support::shared("host/bag.avi"),
        support::shared("pets09/vtest.avi"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let two = [chaplin.as_path(), bag.as_path()];
    let calm = [chaplin.as_path(), vtest.as_path()];
    // 266 frames: chaplin's first 70, then bag's 196.
    let caption = overlay_fading_in("white", (204, 112), (404, 228), 266);
    let banner = overlay_fading_in("0x203050", (640, 92), (0, 268), 266);
    let ramp = "[x]eq=brightness='0.2*clip((t-4.8)/0.44,0,1)':eval=frame,format=yuv420p[v]";
    let cases: [(&str, &[&Path], &str); 4] = [
        ("caption", &two, &caption),
        ("caption_calm", &calm, &caption),
        ("banner_calm", &calm, &banner),
        ("ramp", &two, ramp),
    ];
    for (name, inputs, after) in cases {
        let video = after_cross_fade(dir.path(), name, inputs, 200, after, 266);
        let (b, p) = detected(&video);
        assert_eq!(
            b.len(),
            1,
            "{name}: want only the dissolve [71, 100): {b:?}"
        );
        assert_dissolve(&b[0], (71, 100), 3, &b);
        assert_eq!(p, vec![(0, b[0].1), (b[0].2, 266)], "{name}");
    }
    // Bag (80 frames: clean 100..149) cross-fades into vtest over 0.48 s (12 frames) from
    // 4.8 s: mixed frames 121..131, vtest clean from 132; 220 frames.
    let second = "[x]tpad=stop=2:stop_mode=clone[xp];\
                  [2]trim=end_frame=100,setpts=N/25/TB,scale=640:360,setsar=1,format=yuv444p,fps=25[c];\
                  [xp][c]xfade=transition=fade:duration=0.48:offset=4.8,format=yuv420p[v]";
    let video = after_cross_fade(
        dir.path(),
        "second",
        &[chaplin.as_path(), bag.as_path(), vtest.as_path()],
        80,
        second,
        220,
    );
    let (b, _) = detected(&video);
    assert_eq!(
        b.len(),
        2,
        "want the dissolves [71, 100) and [121, 132): {b:?}"
    );
    assert_dissolve(&b[0], (71, 100), 3, &b);
    // Out of a shot whose camera tilts fast, the mix's edges are less sharp: 5 frames.
    assert_dissolve(&b[1], (121, 132), 5, &b);
}
