//! Test helpers for the annotation module: where the hand-written fixtures and the shared real
//! data live. Change [`shared_data_root`] if the real data moves.

use std::path::{Path, PathBuf};

/// `fixtures/annotations/` of this crate.
pub(crate) fn fixtures_dir() -> PathBuf {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/annotations");
    if local.is_dir() {
        local
    } else {
        // A scratch crate that compiles these sources from the main checkout.
        PathBuf::from("/work/main/fixtures/annotations")
    }
}

/// A fixture file or folder by its path under `fixtures/annotations/`.
pub(crate) fn fixture(relative: &str) -> PathBuf {
    fixtures_dir().join(relative)
}

/// The real test data folder (`../shared/data` from the crate root).
pub(crate) fn shared_data_root() -> PathBuf {
    let relative = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    if relative.is_dir() {
        relative
    } else {
        PathBuf::from("/work/shared/data")
    }
}

/// The shared data root when `sub` exists under it; otherwise prints why the test is skipped
/// and returns `None` (a failure instead where `VIDPREP_REQUIRE_DATA` or `VIDPREP_REQUIRE_ALL`
/// was set, not empty, when the test was built: as `tests/common/skip.rs` reads them).
pub(crate) fn shared_data(sub: &str) -> Option<PathBuf> {
    let root = shared_data_root();
    if root.join(sub).exists() {
        Some(root)
    } else {
        // (`cfg(test)` only: the library itself reads no environment.)
        let set = |v: Option<&str>| v.is_some_and(|v| !v.is_empty());
        let required =
            set(option_env!("VIDPREP_REQUIRE_DATA")) || set(option_env!("VIDPREP_REQUIRE_ALL"));
        assert!(
            !required || sub.starts_with("no/such"),
            "real data {} not found, but VIDPREP_REQUIRE_DATA (or _ALL) was set when this test was built",
            root.join(sub).display()
        );
        eprintln!("skipping: real data {} not found", root.join(sub).display());
        None
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn absent_real_data_is_skipped_not_failed() {
        assert_eq!(super::shared_data("no/such/folder"), None);
    }
}
