//! The frame tables of one caller ([`TableCache`]: a batch's items, one Python call), built
//! once per file version, and the rerun of a job whose table a decoder proved wrong
//! ([`retry_on_table_mismatch`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::FrameTable;
use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::media::input::VideoInput;
use crate::media::source::{Source, SourceKind};

/// Runs `job` with the table of `source` from `cache`, and once more with a table built by
/// decoding if a decoder disagreed with the one from packets. Jobs write their outputs only
/// when complete, so running again is safe. It must run again, not carry on: the table says
/// how many frames there are and when each is shown, and everything a job planned (spans,
/// samples, claims, sizes) was planned from it.
pub fn retry_on_table_mismatch<T>(
    cache: &TableCache,
    source: &Source,
    ctx: &CallContext,
    mut job: impl FnMut() -> Result<T>,
) -> Result<T> {
    match job() {
        Err(Error::TableMismatch { .. }) => {
            cache.distrust_in(source, ctx);
            job()
        }
        other => other,
    }
}

/// The input a frame table was built from, handed on so that one reader decodes from it
/// instead of opening the source again ([`FrameReader::from_used_input`]).
///
/// [`FrameReader::from_used_input`]: crate::media::decode::FrameReader::from_used_input
pub(crate) struct UsedInput {
    /// The input, its video stream chosen.
    pub input: VideoInput,
    /// Whether its packets were read (the scan read to the end): a reader must position it
    /// by a seek, or open the source again where decoding from a seek would not be exact.
    pub read: bool,
}

/// Identifies one version of a file: a rewritten or replaced file gets a new table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FileKey {
    path: PathBuf,
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
    /// The rate a request gave (image sequences).
    fps: Option<crate::vocab::FrameRate>,
    /// A URL's ETag, Last-Modified and size.
    validators: Option<crate::call::net::remote::Validators>,
}

impl FileKey {
    /// A file by its identity and version; an image sequence by its folder's (adding or
    /// removing images changes the folder) and the pattern; a URL by its text and validators.
    fn of(source: &Source, ctx: &CallContext) -> Result<FileKey> {
        let path = source.path();
        let fps = source.fps();
        let stat_path = match source.kind()? {
            SourceKind::Url => {
                // A URL by its text and the validators its first open saw: a changed
                // resource gets a new table.
                let validators = match source.remote() {
                    Some(r) => Some(r.validators(path, ctx)?),
                    None => None,
                };
                return Ok(FileKey {
                    path: path.to_path_buf(),
                    len: 0,
                    modified: None,
                    inode: 0,
                    fps,
                    validators,
                });
            }
            SourceKind::Images if !path.is_dir() => match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            },
            _ => path.to_path_buf(),
        };
        let meta = std::fs::metadata(&stat_path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound {
                path: stat_path.clone(),
            },
            _ => Error::read(&stat_path, e),
        })?;
        #[cfg(unix)]
        let inode = {
            use std::os::unix::fs::MetadataExt;
            meta.ino() ^ meta.dev().rotate_left(32)
        };
        #[cfg(not(unix))]
        let inode = 0;
        let canonical = std::fs::canonicalize(&stat_path).unwrap_or_else(|_| stat_path.clone());
        Ok(FileKey {
            path: if stat_path == path {
                canonical
            } else {
                canonical.join(path.file_name().unwrap_or_default())
            },
            len: meta.len(),
            modified: meta.modified().ok(),
            inode,
            fps,
            validators: None,
        })
    }
}

/// Frame tables of sources, built once per file version (a rewritten or replaced file gets a
/// new one) and shared by everything that holds this cache: a batch's items (a batch opens
/// the same source many times), one Python call. It is the caller's: it travels in
/// [`ExecOptions::tables`](crate::ExecOptions), clones share it, and nothing outside it
/// remembers a table. A table the decoder found wrong is [`distrust`](Self::distrust)ed by
/// whoever met the [`Error::TableMismatch`] and rebuilt by decoding when next asked for.
#[derive(Clone, Debug, Default)]
pub struct TableCache(Arc<Mutex<CacheState>>);

#[derive(Debug)]
struct CachedTable {
    table: Arc<FrameTable>,
    serial: u64,
}

#[derive(Debug, Default)]
struct CacheState {
    tables: HashMap<FileKey, CachedTable>,
    distrusted: HashMap<FileKey, ()>,
    serial: u64,
}

const CACHE_CAPACITY: usize = 64;

impl TableCache {
    /// An empty cache.
    pub fn new() -> TableCache {
        TableCache::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, CacheState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The table of `source`: the cached one, or one built now (from packets, or by decoding
    /// when this cache was told the packets lie) and kept.
    pub fn table(&self, source: &Source) -> Result<Arc<FrameTable>> {
        self.table_in(source, &CallContext::new())
    }

    /// [`table`](Self::table) for the call `ctx` (a table built now is counted on its tally,
    /// and stops when it is cancelled).
    pub fn table_in(&self, source: &Source, ctx: &CallContext) -> Result<Arc<FrameTable>> {
        self.table_or_scan(source, ctx, |_| Ok(None))
            .map(|(table, _)| table)
    }

    /// The table of `source` (see [`table`](Self::table)); when it must be built, `open`
    /// opens the source to build it from (`Ok(None)`: it is opened here). The executor opens
    /// the source once, takes the stream's description from that input, and the table is
    /// scanned from the same input, which comes back (as a [`UsedInput`]) when a table was
    /// built and its scan ended cleanly, for a reader to decode from instead of opening the
    /// source again.
    pub(crate) fn table_or_scan(
        &self,
        source: &Source,
        ctx: &CallContext,
        open: impl FnOnce(&Source) -> Result<Option<VideoInput>>,
    ) -> Result<(Arc<FrameTable>, Option<UsedInput>)> {
        let key = FileKey::of(source, ctx)?;
        let force_decode = {
            let cache = self.state();
            if let Some(entry) = cache.tables.get(&key) {
                return Ok((entry.table.clone(), None));
            }
            cache.distrusted.contains_key(&key)
        };
        let mut input = match open(source)? {
            Some(input) => input,
            None => VideoInput::open(source, ctx)?,
        };
        let table = Arc::new(if force_decode {
            FrameTable::scan_by_decoding(&mut input, "a decoder disagreed with the packets".into())?
        } else {
            FrameTable::scan_input(&mut input)?
        });
        // An input whose reading met damage or a read error is not read again: a reader opens
        // its own (a demuxer's error state may outlive a seek).
        let used = table.damage.is_empty().then(|| UsedInput {
            // An image sequence's table is made from its listing: nothing was read.
            read: input.sequence.is_none(),
            input,
        });
        let mut cache = self.state();
        if cache.tables.len() >= CACHE_CAPACITY {
            // Forget the oldest half; tables are cheap to rebuild from packets.
            let mut keys: Vec<(u64, FileKey)> = cache
                .tables
                .iter()
                .map(|(k, v)| (v.serial, k.clone()))
                .collect();
            keys.sort_by_key(|(serial, _)| *serial);
            for (_, k) in keys.into_iter().take(CACHE_CAPACITY / 2) {
                cache.tables.remove(&k);
            }
        }
        cache.serial += 1;
        let serial = cache.serial;
        cache.tables.insert(
            key,
            CachedTable {
                table: table.clone(),
                serial,
            },
        );
        Ok((table, used))
    }

    /// Forgets the table of `source` and remembers that its packets lie: the next
    /// [`table`](Self::table) builds it by decoding.
    pub fn distrust(&self, source: &Source) {
        self.distrust_in(source, &CallContext::new())
    }

    /// [`distrust`](Self::distrust) for the call `ctx` (a URL not contacted yet is asked with
    /// its settings).
    pub(crate) fn distrust_in(&self, source: &Source, ctx: &CallContext) {
        if let Ok(key) = FileKey::of(source, ctx) {
            let mut cache = self.state();
            cache.tables.remove(&key);
            cache.distrusted.insert(key, ());
        }
    }
}
