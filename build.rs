//! Build script: turns the FFmpeg version that ffmpeg-sys-next found (its `links = "ffmpeg"`
//! metadata, `DEP_FFMPEG_FFMPEG_7_0=true` and so on) into cfgs of this crate, `ffmpeg_5_0`,
//! `ffmpeg_7_0`, ..., the same version names ffmpeg-next keys its own code on. Only
//! `src/media/compat.rs` uses them: every FFmpeg difference lives there.

fn main() {
    // The versions ffmpeg-sys-next knows (it sets each to "true" or ""); declared even when
    // unset so that `#[cfg(ffmpeg_9_0)]` is never an unknown cfg.
    let mut known = Vec::new();
    for (name, value) in std::env::vars() {
        let Some(flag) = name.strip_prefix("DEP_FFMPEG_") else {
            continue;
        };
        let flag = flag.to_lowercase();
        if !flag.starts_with("ffmpeg_") || flag.ends_with("_is_defined") {
            continue;
        }
        if value == "true" {
            println!("cargo::rustc-cfg={flag}");
        }
        known.push(flag);
    }
    for flag in [
        "ffmpeg_4_3",
        "ffmpeg_4_4",
        "ffmpeg_5_0",
        "ffmpeg_5_1",
        "ffmpeg_6_0",
        "ffmpeg_6_1",
        "ffmpeg_7_0",
        "ffmpeg_7_1",
        "ffmpeg_8_0",
        "ffmpeg_9_0",
    ] {
        if !known.iter().any(|k| k == flag) {
            known.push(flag.to_string());
        }
    }
    for flag in known {
        println!("cargo::rustc-check-cfg=cfg({flag})");
    }
    println!("cargo::rerun-if-changed=build.rs");
    // The oldest FFmpeg vidprep is built and checked against (Debian 11). Older ones fail here
    // with what to install, rather than with a screen of type errors.
    if std::env::var("DEP_FFMPEG_FFMPEG_4_3").as_deref() != Ok("true") {
        eprintln!(
            "error: vidprep needs FFmpeg 4.3 or newer (libavcodec 58.91); the FFmpeg found by \
             pkg-config is older. Install newer FFmpeg development packages (Debian 11 or \
             Ubuntu 22.04 and later have them, or conda-forge's ffmpeg) and point \
             PKG_CONFIG_PATH at them."
        );
        std::process::exit(1);
    }
}
