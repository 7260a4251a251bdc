//! Manifest files: JSONL (one [`Plan`] per line; blank lines and lines starting with `#` or
//! `//` skipped) or a JSON array of plans. Every entry is read and checked before any work
//! starts; a bad entry is reported with its line number and what was expected, and never
//! stops the others. Relative paths are taken from the manifest's folder.
//!
//! A JSONL manifest is read line by line. Read for one shard of a cluster job array
//! ([`read_manifest_shard_in`]), only that shard's entries are checked and kept; another
//! shard's entry is parsed as JSON for its id and let go, the id kept as a 16-byte key, so a
//! shard's memory follows its own items (a JSON-array manifest's text is read whole).
use std::collections::HashSet;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};

mod paths;

use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::plan::{CheckedPlan, Plan};

/// A checked plan with the manifest line it came from: what the batch runner runs (without
/// checking the plan again: [`CheckedPlan`] is the proof of its check).
#[derive(Clone, Debug, PartialEq)]
pub struct ManifestItem {
    /// 1-based line where the entry starts.
    pub line: usize,
    /// The entry's plan, checked, with relative paths resolved against the manifest's folder.
    pub plan: CheckedPlan,
}

impl ManifestItem {
    /// An item of `plan` (made by a door rather than read from a file: vidprep insert's
    /// hosts, detect's contact sheets, review's previews, a driver's item), checked now; a
    /// plan that fails its check is the [`BadItem`] the batch reports as failed.
    pub fn check(line: usize, plan: Plan) -> std::result::Result<ManifestItem, BadItem> {
        Self::check_in(line, plan, &CallContext::new())
    }

    /// [`ManifestItem::check`], counting the check on `ctx`'s tally. (Its error is
    /// [`ManifestItem::check`]'s, as large.)
    #[allow(clippy::result_large_err)]
    fn check_in(
        line: usize,
        plan: Plan,
        ctx: &CallContext,
    ) -> std::result::Result<ManifestItem, BadItem> {
        let id = plan.id.clone();
        match CheckedPlan::new_in(plan, ctx) {
            Ok(plan) => Ok(ManifestItem { line, plan }),
            Err(m) => Err(BadItem {
                line,
                error: Error::Usage(format!("item {id:?}: {m}")),
                id: Some(id),
            }),
        }
    }

    /// [`ManifestItem::check`] of each plan: the items that passed and the ones that did not.
    pub fn check_all(
        plans: impl IntoIterator<Item = (usize, Plan)>,
    ) -> (Vec<ManifestItem>, Vec<BadItem>) {
        Self::check_all_in(plans, &CallContext::new())
    }

    /// [`ManifestItem::check_all`], counting the checks on `ctx`'s tally.
    pub fn check_all_in(
        plans: impl IntoIterator<Item = (usize, Plan)>,
        ctx: &CallContext,
    ) -> (Vec<ManifestItem>, Vec<BadItem>) {
        let mut items = Vec::new();
        let mut bad = Vec::new();
        for (line, plan) in plans {
            match ManifestItem::check_in(line, plan, ctx) {
                Ok(i) => items.push(i),
                Err(b) => bad.push(b),
            }
        }
        (items, bad)
    }
}

/// An entry that cannot run.
#[derive(Debug)]
pub struct BadItem {
    /// 1-based line where the entry starts.
    pub line: usize,
    /// Its id, when it could be read.
    pub id: Option<String>,
    /// What is wrong: an [`Error::BadFile`] naming the manifest and line (for an item a door
    /// made, the [`Error::Usage`] of its check).
    pub error: Error,
}

/// A read manifest: the valid items and the bad ones, both in file order. Read for one shard
/// ([`read_manifest_shard_in`]), it holds that shard's entries only, and the ids of the other
/// shards' entries as compact keys ([`Elsewhere`]).
#[derive(Debug, Default)]
pub struct Manifest {
    /// The entries that can run.
    pub items: Vec<ManifestItem>,
    /// The entries that cannot (bad JSON, a bad plan, a missing input, a duplicate id).
    pub bad: Vec<BadItem>,
    /// The shard read (`I` of `N`, 0-based): `items` and `bad` are its entries only (an entry
    /// belongs to the shard of its id, [`shard_of`]; one without an id to
    /// the shard of its line, line modulo `N`). `None`: every entry.
    pub shard: Option<(usize, usize)>,
    /// The other shards' entries that name an id: the item folders they may write, which
    /// this shard's items must not read from (empty when every entry was read).
    pub elsewhere: Elsewhere,
}

/// The ids of a manifest's entries in other shards, as 128-bit keys (16 bytes an entry, not
/// the entry): what the layout check of a shard's run needs to refuse an item that reads
/// inside another item's output folder ([`Elsewhere::writes`]).
#[derive(Debug, Default)]
pub struct Elsewhere {
    /// Sorted keys of the ids ([`id_key`]).
    keys: Vec<u128>,
    /// The manifest they were read from, read again to confirm a match.
    manifest: Option<PathBuf>,
}

impl Elsewhere {
    /// How many entries of other shards name an id.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no entry of another shard names an id.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether an entry of another shard is an item with id `id` (an item whose checks pass,
    /// as a whole run reads it): one that writes `OUT_DIR/<id>/`. A key that matches is
    /// confirmed by reading the manifest again and checking that id's entries in full (a
    /// rare case: the run is refused when it is so), so neither a hash collision nor an
    /// entry that cannot run counts; when the manifest cannot be read again, it counts.
    pub fn writes(&self, id: &str) -> bool {
        if self.keys.binary_search(&id_key(id)).is_err() {
            return false;
        }
        let Some(manifest) = &self.manifest else {
            return true;
        };
        let base = manifest.parent().unwrap_or(Path::new("."));
        let ctx = CallContext::new();
        let mut found = false;
        let read = visit_entries(manifest, |line, entry, column| {
            if found {
                return;
            }
            let place = EntryPlace { line, column };
            let Ok(value) = entry_value(entry, place) else {
                return;
            };
            if value.get("id").and_then(|v| v.as_str()) == Some(id) {
                found = parse_plan(entry, &value, base, place, &ctx).is_ok();
            }
        });
        found || read.is_err()
    }
}

/// The 128-bit key of an item id kept for the other shards' entries (the first 16 bytes of
/// its MD5, as a number): two ids of a manifest sharing a key is a chance of about 1 in
/// 10^26 for a million ids, and a match is confirmed anyway ([`Elsewhere::writes`]).
fn id_key(id: &str) -> u128 {
    use md5::{Digest, Md5};
    u128::from_le_bytes(Md5::digest(id.as_bytes()).into())
}

/// The shard (0..count) of an item id (`vidprep run --shard I/N` runs the items whose id
/// falls in shard `I`).
pub fn shard_of(id: &str, count: usize) -> usize {
    (crate::call::hash::fnv1a(id.as_bytes()) % count.max(1) as u64) as usize
}

/// Largest manifest read (a guard against being pointed at a video or a device).
const MAX_MANIFEST_BYTES: u64 = 1 << 30;

/// Reads and checks the manifest at `path`. Fails as a whole only when the file cannot be
/// read or is neither JSONL nor a JSON array.
pub fn read_manifest(path: &Path) -> Result<Manifest> {
    read_manifest_in(path, &CallContext::new())
}

/// [`read_manifest`], counting the checks of its entries on `ctx`'s tally.
pub fn read_manifest_in(path: &Path, ctx: &CallContext) -> Result<Manifest> {
    read_manifest_shard_in(path, None, ctx)
}

/// Reads and checks the entries of shard `shard` (`I` of `N`, 0-based; `None`: every entry)
/// of the manifest at `path`, as [`read_manifest_in`] reads them, with the same errors and
/// the same duplicate ids (an id's entries are all in its shard), counting the checks on
/// `ctx`'s tally. A JSONL manifest is read line by line: an entry of another shard is
/// parsed as JSON for its id and let go, its id kept as a 16-byte key ([`Elsewhere`]), so
/// memory follows the shard's items, not the manifest. A JSON-array manifest is read whole
/// (its text, not the other shards' plans).
pub fn read_manifest_shard_in(
    path: &Path,
    shard: Option<(usize, usize)>,
    ctx: &CallContext,
) -> Result<Manifest> {
    crate::media::source::check_input_file(path).map_err(|e| match e {
        Error::Request { path, message } => {
            Error::bad_file(&path, None, message.replace("video file", "manifest"))
        }
        other => other,
    })?;
    let size = std::fs::metadata(path)
        .map_err(|e| Error::read(path, e))?
        .len();
    if size > MAX_MANIFEST_BYTES {
        return Err(Error::bad_file(
            path,
            None,
            format!("is {size} bytes; a manifest of more than 1 GiB is refused"),
        ));
    }
    let base = path.parent().unwrap_or(Path::new("."));
    // An entry without an id belongs to the shard of its line (as the batch places it).
    let in_shard = |id: Option<&str>, line: usize| match shard {
        None => true,
        Some((i, n)) => match id {
            Some(id) => shard_of(id, n) == i,
            None => line % n == i,
        },
    };
    let mut manifest = Manifest {
        shard,
        ..Manifest::default()
    };
    let mut seen = HashSet::new();
    let mut keys = Vec::new();
    visit_entries(path, |line, entry, column| {
        let place = EntryPlace { line, column };
        let bad = |id: Option<String>, message: String| BadItem {
            line,
            id,
            error: Error::bad_file(path, Some(line), message),
        };
        let value = match entry_value(entry, place) {
            Ok(value) => value,
            Err(message) => {
                if in_shard(None, line) {
                    manifest.bad.push(bad(None, message));
                }
                return;
            }
        };
        let id = value.get("id").and_then(|v| v.as_str());
        if !in_shard(id, line) {
            // Another shard's: its id is all this shard's run needs of it.
            keys.extend(id.map(id_key));
            return;
        }
        match parse_plan(entry, &value, base, place, ctx) {
            Ok(plan) => {
                if !seen.insert(plan.id.clone()) {
                    let id = plan.id.clone();
                    manifest
                        .bad
                        .push(bad(Some(id.clone()), format!("duplicate id {id:?}")));
                    return;
                }
                manifest.items.push(ManifestItem { line, plan });
            }
            Err((id, message)) => manifest.bad.push(bad(id, message)),
        }
    })?;
    keys.sort_unstable();
    keys.dedup();
    keys.shrink_to_fit();
    manifest.elsewhere = Elsewhere {
        keys,
        manifest: Some(path.to_path_buf()),
    };
    Ok(manifest)
}

/// Calls `visit` with each entry of the manifest at `path` (its 1-based line, its text, and
/// the bytes before it on its line), in file order. A JSONL manifest is read line by line (a
/// line at a time in memory); one whose first non-blank character is `[` is a JSON array,
/// read whole. Fails as a whole when the file cannot be read, is not UTF-8 (naming the first
/// line that is not) or is not a JSON array of items.
fn visit_entries(path: &Path, mut visit: impl FnMut(usize, &str, usize)) -> Result<()> {
    let file = std::fs::File::open(path).map_err(|e| Error::read(path, e))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut bytes = Vec::new();
    let mut line = 0usize;
    let mut started = false;
    loop {
        bytes.clear();
        let n = reader
            .read_until(b'\n', &mut bytes)
            .map_err(|e| Error::read(path, e))?;
        if n == 0 {
            return Ok(());
        }
        line += 1;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| Error::bad_file(path, Some(line), "is not UTF-8 text"))?;
        // A byte-order mark (Windows editors write one) is not part of the JSON.
        let text = if line == 1 {
            text.strip_prefix('\u{feff}').unwrap_or(text)
        } else {
            text
        };
        // As `str::lines` ends a line: at `\n`, or `\r\n`.
        let text = match text.strip_suffix('\n') {
            Some(t) => t.strip_suffix('\r').unwrap_or(t),
            None => text,
        };
        let t = text.trim();
        if !started {
            if t.is_empty() {
                continue;
            }
            started = true;
            if t.starts_with('[') {
                return visit_array(path, visit);
            }
        }
        if !t.is_empty() && !t.starts_with('#') && !t.starts_with("//") {
            visit(line, text, 0);
        }
    }
}

/// [`visit_entries`] of a JSON-array manifest: read whole, each element with its line and
/// column.
fn visit_array(path: &Path, mut visit: impl FnMut(usize, &str, usize)) -> Result<()> {
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let line = bytes_line(e.as_bytes(), e.utf8_error().valid_up_to());
        Error::bad_file(path, Some(line), "is not UTF-8 text")
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    for (line, entry) in split_entries(path, text)? {
        // Where the entry begins on its line (an element of a JSON array may begin after `[`
        // or indentation): JSON errors give columns in that line.
        let offset = entry.as_ptr() as usize - text.as_ptr() as usize;
        let column = offset - text[..offset].rfind('\n').map_or(0, |i| i + 1);
        visit(line, entry, column);
    }
    Ok(())
}

fn bytes_line(bytes: &[u8], offset: usize) -> usize {
    bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Where an entry begins in its file: its 1-based line, and the bytes before it on that line.
#[derive(Clone, Copy)]
struct EntryPlace {
    line: usize,
    column: usize,
}

impl EntryPlace {
    /// A JSON error of the entry's text, placed in the file: serde_json counts lines and
    /// columns from the entry's first character, and the entry's line is already named (the
    /// error's `line N`), so its own "at line 1 column C" becomes the column on that line
    /// (and a later line of a multi-line entry is named as the file's line).
    fn json_error(self, e: &serde_json::Error) -> String {
        let text = e.to_string();
        if e.line() == 0 {
            return text;
        }
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let what = text.strip_suffix(&suffix).unwrap_or(&text);
        if e.line() == 1 {
            format!("{what} (at column {})", self.column + e.column())
        } else {
            format!(
                "{what} (at line {}, column {})",
                self.line + e.line() - 1,
                e.column()
            )
        }
    }
}

/// An entry's JSON, which must be an object; the message says what is wrong when it is not.
fn entry_value(entry: &str, place: EntryPlace) -> std::result::Result<serde_json::Value, String> {
    let value: serde_json::Value = serde_json::from_str(entry)
        .map_err(|e| format!("not valid JSON: {}", place.json_error(&e)))?;
    if !value.is_object() {
        return Err(
            "expected a JSON object like {\"id\": ..., \"source\": ..., \"exports\": [...]}"
                .to_string(),
        );
    }
    Ok(value)
}

/// One entry whose JSON is `value` (an object, [`entry_value`]): a plan, checked, paths
/// resolved, inputs present.
fn parse_plan(
    entry: &str,
    value: &serde_json::Value,
    base: &Path,
    place: EntryPlace,
    ctx: &CallContext,
) -> std::result::Result<CheckedPlan, (Option<String>, String)> {
    let id = value.get("id").and_then(|v| v.as_str()).map(str::to_string);
    let fail = |m: String| (id.clone(), m);
    // Read from the text (not the value) so errors say where in the line they are.
    let plan: Plan = serde_json::from_str(entry)
        .map_err(|e| fail(crate::plan::without_retired_fields(&place.json_error(&e))))?;
    let mut plan = CheckedPlan::new_in(plan, ctx).map_err(fail)?;
    plan.resolve_paths(base).map_err(fail)?;
    if let Err(e) = crate::media::source::check_source(&plan.source, plan.source_fps) {
        return Err(fail(e.to_string()));
    }
    if let Some(b) = &plan.boxes {
        if !b.path.exists() {
            return Err(fail(format!(
                "{}: file not found (the item's boxes)",
                b.path.display()
            )));
        }
    }
    if let Some(i) = &plan.insert {
        if !i.sequence.is_dir() {
            return Err(fail(format!(
                "{}: not a folder (expected a GOT-10k sequence folder)",
                i.sequence.display()
            )));
        }
    }
    Ok(plan)
}

/// The entries' texts with their 1-based line numbers: JSONL lines, or the elements of a JSON
/// array.
pub(crate) fn split_entries<'a>(path: &Path, text: &'a str) -> Result<Vec<(usize, &'a str)>> {
    let line_of = |offset: usize| bytes_line(text.as_bytes(), offset);
    if text.trim_start().starts_with('[') {
        let raw: Vec<&serde_json::value::RawValue> = serde_json::from_str(text).map_err(|e| {
            Error::bad_file(
                path,
                Some(e.line()),
                format!("not a JSON array of items: {e}"),
            )
        })?;
        return Ok(raw
            .into_iter()
            .map(|r| {
                let s = r.get();
                let offset = s.as_ptr() as usize - text.as_ptr() as usize;
                (line_of(offset), s)
            })
            .collect());
    }
    Ok(text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#') && !t.starts_with("//")
        })
        .map(|(i, l)| (i + 1, l))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ExportSpec;
    use crate::vocab::time::TimeSpec;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn jsonl_items_are_checked_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "v.mp4", "x");
        write(dir.path(), "gt.txt", "1,-1,1,2,3,4,1,-1,-1,-1\n");
        let m = write(
            dir.path(),
            "m.jsonl",
            concat!(
                "\u{feff}{\"id\": \"a\", \"source\": \"v.mp4\", \"start\": \"1s\", \"end\": 50, \"decision\": \"75%\", \"boxes\": {\"path\": \"gt.txt\", \"format\": \"mot\"}, \"exports\": [{\"kind\": \"clip\"}, {\"kind\": \"video\", \"max_base64_bytes\": 5000000}, {\"kind\": \"frames\", \"count\": 8, \"sampler\": \"qwen\", \"payload\": \"gemini\"}]}\n",
                "# a comment\n",
                "{\"id\": \"b\", \"source\": \"missing.mp4\"}\n",
                "{\"id\": \"c\", \"source\": \"v.mp4\", \"exports\": [{\"kind\": \"gif\"}]}\n",
                "{\"id\": \"d\", \"source\": \"v.mp4\", \"exports\": [{\"kind\": \"frames\", \"sampler\": \"decord\"}]}\n",
                "{\"id\": \"e\", \"source\": \"v.mp4\", \"boxes\": \"nope.txt\"}\n",
                "{\"id\": \"f\", \"source\": \"v.mp4\", \"exports\": [{\"kind\": \"clip\"}, {\"kind\": \"clip\"}]}\n",
                "{\"id\": \"g\", \"source\": \"v.mp4\", \"insert\": {\"sequence\": \".\", \"at\": \"1s\", \"seed\": 3}}\n",
                "{\"id\": \"h\", \"source\": \"v.mp4\", \"colour\": \"red\"}\n",
                "[1, 2]\n",
                "{\"id\": \"a\", \"source\": \"v.mp4\"}\n",
            ),
        );
        let parsed = read_manifest(&m).unwrap();
        assert_eq!(parsed.items.len(), 1, "{:?}", parsed.bad);
        let a = &parsed.items[0];
        assert_eq!(a.line, 1);
        assert_eq!(a.plan.exports.len(), 3);
        assert_eq!(a.plan.span().1, Some(TimeSpec::Frame(50)));
        assert_eq!(a.plan.source, dir.path().join("v.mp4"));
        let lines: Vec<usize> = parsed.bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 7, 8, 9, 10, 11]);
        let text: Vec<String> = parsed.bad.iter().map(|b| b.error.to_string()).collect();
        assert!(
            text[0].contains("missing.mp4: file not found"),
            "{}",
            text[0]
        );
        assert!(text[1].contains("gif"), "{}", text[1]);
        assert!(text[2].contains("uniform"), "{}", text[2]);
        assert!(text[3].contains("nope.txt: file not found"), "{}", text[3]);
        assert!(text[4].contains("used twice"), "{}", text[4]);
        assert!(text[5].contains("exactly one of"), "{}", text[5]);
        assert!(text[6].contains("colour"), "{}", text[6]);
        assert!(text[7].contains("expected a JSON object"), "{}", text[7]);
        assert!(text[8].contains("duplicate id"), "{}", text[8]);
        assert!(text.iter().all(|t| t.contains("m.jsonl line ")), "{text:?}");
    }

    #[test]
    fn json_arrays_keep_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "v.mp4", "x");
        let m = write(
            dir.path(),
            "m.json",
            "[\n  {\"id\": \"a\", \"source\": \"v.mp4\"},\n\n  {\"id\": \"b\",\n   \"source\": \"v.mp4\", \"exports\": []}\n]\n",
        );
        let parsed = read_manifest(&m).unwrap();
        assert_eq!(parsed.items.len(), 1);
        assert_eq!(parsed.items[0].line, 2);
        assert!(matches!(
            parsed.items[0].plan.exports[..],
            [ExportSpec::Clip(_)]
        ));
        assert_eq!(parsed.bad[0].line, 4);
        assert!(parsed.bad[0].error.to_string().contains("non-empty list"));
    }

    /// Each shard's read holds exactly the whole read's entries of that shard (items, bad
    /// lines and their errors, duplicate ids), and the ids of the others' entries.
    #[test]
    fn a_shard_reads_its_own_entries_as_the_whole_read_has_them() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "v.mp4", "x");
        let mut text = String::new();
        for i in 0..40 {
            text.push_str(&match i % 8 {
                0 => format!("{{\"id\": \"ok-{i}\", \"source\": \"v.mp4\"}}\n"),
                1 => format!("{{\"id\": \"gone-{i}\", \"source\": \"missing.mp4\"}}\n"),
                2 => "not json\n".to_string(),
                3 => "[1, 2]\n".to_string(),
                4 => format!("{{\"id\": \"ok-{}\", \"source\": \"v.mp4\"}}\n", i - 4),
                5 => "# a comment\n\n".to_string(),
                6 => format!("{{\"id\": {i}, \"source\": \"v.mp4\"}}\n"),
                _ => format!("{{\"id\": \"bad-{i}\", \"source\": \"v.mp4\", \"colour\": 1}}\n"),
            });
        }
        let m = write(dir.path(), "m.jsonl", &text);
        let whole = read_manifest(&m).unwrap();
        assert_eq!(whole.items.len(), 5);
        assert_eq!(whole.bad.len(), 30);
        assert!(whole.elsewhere.is_empty());
        let shown = |b: &BadItem| (b.line, b.id.clone(), b.error.to_string());
        for n in 1..=4 {
            let in_shard = |i: usize, id: Option<&str>, line: usize| match id {
                Some(id) => shard_of(id, n) == i,
                None => line % n == i,
            };
            let mut elsewhere = 0;
            for i in 0..n {
                let shard = read_manifest_shard_in(&m, Some((i, n)), &CallContext::new()).unwrap();
                let want: Vec<&ManifestItem> = whole
                    .items
                    .iter()
                    .filter(|it| in_shard(i, Some(&it.plan.id), it.line))
                    .collect();
                assert_eq!(shard.items.iter().collect::<Vec<_>>(), want, "{i}/{n}");
                let want: Vec<_> = whole
                    .bad
                    .iter()
                    .filter(|b| in_shard(i, b.id.as_deref(), b.line))
                    .map(shown)
                    .collect();
                assert_eq!(shard.bad.iter().map(shown).collect::<Vec<_>>(), want);
                elsewhere += shard.elsewhere.len();
                // Another shard's item writes its folder; its entry that cannot run does not.
                if shard_of("ok-0", n) != i {
                    assert!(shard.elsewhere.writes("ok-0"));
                }
                if shard_of("gone-1", n) != i {
                    assert!(!shard.elsewhere.writes("gone-1"));
                }
                assert!(!shard.elsewhere.writes("never-named"));
            }
            // Each entry with an id is another shard's in n - 1 of the n reads (the
            // duplicates of an id share one key).
            let named = whole.items.len() + 5 + 5;
            assert_eq!(elsewhere, named * (n - 1), "{n} shards");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Arbitrary bytes and JSON-shaped garbage: every line is an item or a reported bad
        /// line; the reader never panics.
        #[test]
        fn any_manifest_is_read_or_refused(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            text in "[{}\\[\\]\":, a-z0-9%.\\-\n]{0,200}",
        ) {
            let dir = tempfile::tempdir().unwrap();
            for (name, content) in [("a.jsonl", bytes.clone()), ("b.jsonl", text.clone().into_bytes())] {
                let p = dir.path().join(name);
                std::fs::write(&p, &content).unwrap();
                if let Ok(m) = read_manifest(&p) {
                    for item in &m.items {
                        proptest::prop_assert!(item.plan.check().is_ok());
                    }
                }
            }
        }
    }
}
