//! The lock of a batch's output folder, safe on a folder that many hosts share
//! (`docs/cluster.md`): one run per folder, or shards of one manifest with one shard count,
//! each shard at most once.
//!
//! - **Who.** A lock (`.vidprep-lock`, `.vidprep-lock.shard-I-of-N`) records its holder:
//!   pid, host name, boot id, PID namespace ([`crate::call::host`]), a random token, the
//!   manifest, the shard (with its count) and its lease.
//! - **Atomic.** It is written whole under a temporary name and then hard-linked to its name,
//!   which fails if the name exists: a crash or a full disk leaves at most a temporary (removed
//!   later as dead), never an empty lock; two runs racing for one name cannot both win.
//! - **Lease.** While the run lives, a thread renews the lock (its modification time) every
//!   quarter lease. A lock not renewed for its lease (the call's [`crate::call::Settings::lock_lease`],
//!   120 s by default; the doors read `VIDPREP_LOCK_LEASE_SECONDS`) is dead wherever its holder ran.
//! - **Dead or alive.** A lock of this host (same host name, boot id and PID namespace) is
//!   judged by its process alone, never by its lease: alive while `kill(pid, 0)` finds it
//!   (`EPERM`, another user's process hidden by `hidepid`, is alive) with the start time the
//!   lock recorded, so a run suspended past its lease (SIGSTOP, `scontrol suspend`) keeps
//!   its folder; gone (no such process, a zombie, or a pid reused by a later process) is
//!   taken over at once. A lock of another host is taken over once its lease expires: a new
//!   run waits (at most that lease) to see whether it is renewed, and is refused if it is.
//!   An empty or unreadable lock, or one of an older vidprep, is taken over when older than
//!   the lease, and refused before. Taking over a dead holder removes the temporaries it
//!   left at the top of the folder.
//! - **One winner.** A take-over renames the dead lock to a name of the taker's own and
//!   checks that what it renamed is the very file it judged (device, inode, text, age): two
//!   runs taking over one dead lock at once cannot both remove it, and one that renamed a
//!   fresh lock by mistake puts it back. Only then is the new lock linked into place.
//! - **Held, or stop.** A holder checks that the lock is still its own (its token) before
//!   each item, before each commit of an output group and before it writes the report: one
//!   that finds it gone (taken over while it was suspended, or removed) stops before its next
//!   side effect and never writes the shared report.
//! - **Compatible.** Shards may share a folder only with shards of the same manifest and the
//!   same shard count (0/2 beside 1/3 would write one item twice); a whole run shares it with
//!   nobody. After creating its lock a run looks again, so two incompatible runs starting at
//!   once both back off rather than both run.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::call::context::{CallContext, HeldLock};
use crate::call::host;
use crate::call::output::group::canonical;
use crate::call::output::temporaries::{remove_temporaries_of, temp_name};
use crate::error::{Error, Result};

/// The lock file's name (shards add `.shard-I-of-N`).
pub(crate) const LOCK_NAME: &str = ".vidprep-lock";

/// Who holds an output folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct LockHolder {
    pub pid: u32,
    pub host: String,
    /// `/proc/sys/kernel/random/boot_id` of the holder's host (absent in older locks).
    #[serde(default)]
    pub boot_id: String,
    /// The holder's PID namespace (absent in older locks).
    #[serde(default)]
    pub pid_ns: String,
    /// A random token naming this holder (absent in older locks).
    #[serde(default)]
    pub token: String,
    #[serde(default)]
    pub manifest: Option<String>,
    /// `I/N`.
    #[serde(default)]
    pub shard: Option<String>,
    /// The one item a single-item run makes (`vidprep.ray` workers; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    #[serde(default)]
    pub started_unix: u64,
    /// How long the lock lives without being renewed (absent in older locks).
    #[serde(default)]
    pub lease_seconds: Option<u64>,
    /// The holder process's start time (clock ticks after boot, `/proc/PID/stat`), which
    /// tells it from a later process given the same pid (absent in older locks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_start: Option<u64>,
}

impl LockHolder {
    fn of_this_process(
        shard: Option<(usize, usize)>,
        manifest: Option<&Path>,
        lease: Duration,
    ) -> LockHolder {
        let id = host::identity();
        LockHolder {
            pid: std::process::id(),
            host: id.host.clone(),
            boot_id: id.boot_id.clone(),
            pid_ns: id.pid_ns.clone(),
            token: host::random_token(),
            manifest: manifest.map(|m| canonical(m).display().to_string()),
            shard: shard.map(|(i, n)| format!("{i}/{n}")),
            item: None,
            started_unix: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            lease_seconds: Some(lease.as_secs()),
            process_start: host::process_start(std::process::id()),
        }
    }

    /// Whether the holder ran on this host and PID namespace (so its pid can be asked of
    /// this `/proc`). Older locks, without a boot id, never are.
    fn here(&self) -> bool {
        let id = host::identity();
        !self.boot_id.is_empty()
            && self.host == id.host
            && self.boot_id == id.boot_id
            && self.pid_ns == id.pid_ns
    }

    /// The host tag of its temporaries.
    fn tag(&self) -> Option<String> {
        (!self.boot_id.is_empty()).then(|| {
            host::Identity {
                host: self.host.clone(),
                boot_id: self.boot_id.clone(),
                pid_ns: self.pid_ns.clone(),
            }
            .tag()
        })
    }

    fn shard_count(&self) -> Option<usize> {
        self.shard.as_ref()?.split_once('/')?.1.parse().ok()
    }

    fn describe(&self) -> String {
        format!(
            "pid {} on {}{}",
            self.pid,
            if self.host.is_empty() {
                "an unnamed host"
            } else {
                &self.host
            },
            self.shard
                .as_ref()
                .map(|s| format!(", shard {s}"))
                .or_else(|| self.item.as_ref().map(|i| format!(", item {i:?}")))
                .unwrap_or_default()
        )
    }
}

/// A lock file as found: its text, holder (when it parses) and age.
#[derive(Clone, Debug)]
struct Found {
    path: PathBuf,
    text: String,
    holder: Option<LockHolder>,
    modified: Option<SystemTime>,
    /// Device and inode: which file it was (a lock replaced under the same name is another).
    file_id: Option<(u64, u64)>,
    /// The lease of this run's call, for a lock that does not say its own.
    own_lease: Duration,
}

/// Device and inode of `meta`.
fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

impl Found {
    /// The lock at `path`, judged by `own_lease` (this call's) when it does not say its own.
    fn read(path: &Path, own_lease: Duration) -> Option<Found> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        // Never open what is not a regular file (a FIFO would block the read).
        let text = if meta.is_file() {
            std::fs::read_to_string(path).unwrap_or_default()
        } else {
            String::new()
        };
        Some(Found {
            path: path.to_path_buf(),
            holder: serde_json::from_str(&text).ok(),
            text,
            modified: meta.modified().ok(),
            file_id: file_id(&meta),
            own_lease,
        })
    }

    fn age(&self) -> Duration {
        self.modified
            .and_then(|m| m.elapsed().ok())
            .unwrap_or(Duration::ZERO)
    }

    /// The lease to judge it by: its own, else this call's.
    fn lease(&self) -> Duration {
        self.holder
            .as_ref()
            .and_then(|h| h.lease_seconds)
            .map(|s| Duration::from_secs(s.max(1)))
            .unwrap_or(self.own_lease)
    }

    fn same_as(&self, other: &Found) -> bool {
        self.text == other.text && self.modified == other.modified && self.file_id == other.file_id
    }
}

/// What a found lock says about its holder.
#[derive(Debug, PartialEq)]
enum State {
    /// Provably gone: the reason.
    Dead(String),
    /// Provably alive (a live process of this host), or a lock that cannot be judged yet.
    Alive,
    /// Held from another host with a lease not yet expired: alive if renewed in time.
    Renewable,
}

fn judge(f: &Found) -> State {
    // A holder of this host is alive while its process is, whatever its lease says (a run
    // suspended past its lease still holds the folder); gone, it is dead at once.
    if let Some(h) = f.holder.as_ref().filter(|h| h.here()) {
        return match host::liveness(h.pid, h.process_start) {
            host::Liveness::Alive => State::Alive,
            host::Liveness::Dead(why) => State::Dead(why),
        };
    }
    let lease = f.lease();
    let age = f.age();
    if age > lease {
        return State::Dead(format!(
            "not renewed for {} s, longer than its {} s lease",
            age.as_secs(),
            lease.as_secs()
        ));
    }
    match &f.holder {
        // A current lock of another host: its lease says.
        Some(h) if h.lease_seconds.is_some() && !h.token.is_empty() => State::Renewable,
        // Empty, unreadable, or an older vidprep's: only its age can prove it dead.
        _ => State::Alive,
    }
}

/// One run per output folder at a time (shards of one manifest and count may share it):
/// a lock file naming the holder, renewed while the run lives, removed when it ends.
pub(crate) struct OutDirLock {
    path: PathBuf,
    token: String,
    stop: Option<mpsc::Sender<()>>,
    renewer: Option<std::thread::JoinHandle<()>>,
    /// Set by the renewer when the lock is no longer ours (taken over after this run failed
    /// to renew it in time: a suspended process, a partitioned host).
    lost: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Dead locks renamed away that could not be removed then: removed as the run ends.
    leftovers: Vec<PathBuf>,
}

fn lock_name(shard: Option<(usize, usize)>) -> String {
    match shard {
        None => LOCK_NAME.to_string(),
        Some((i, n)) => format!("{LOCK_NAME}.shard-{i}-of-{n}"),
    }
}

/// The lock of a single-item run (item ids are folder names, so they fit a file name).
fn item_lock_name(id: &str) -> String {
    format!("{LOCK_NAME}.item-{id}")
}

/// Every lock file in `dir` (not temporaries).
fn locks_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with(LOCK_NAME))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

impl OutDirLock {
    /// Takes the lock of `dir` for a run (a shard `I/N` when `shard`) of `manifest`.
    /// `notice` hears about waits (a lock of another host whose lease is not over). The lock
    /// has the call's lease (`call.settings.lock_lease`), and is renewed every quarter of it.
    pub(crate) fn acquire(
        dir: &Path,
        shard: Option<(usize, usize)>,
        manifest: Option<&Path>,
        notice: &dyn Fn(&str),
        call: &CallContext,
    ) -> Result<OutDirLock> {
        let me = LockHolder::of_this_process(shard, manifest, call.settings.lock_lease);
        OutDirLock::acquire_as(dir, lock_name(shard), me, notice, call)
    }

    /// Takes the lock of one item `id` in `dir` (`.vidprep-lock.item-<id>`), for a run that
    /// makes only that item (a `vidprep.ray` worker): it shares the folder with the locks of
    /// other items, never with a whole run or a shard (which would write the same item), and
    /// a second holder of the same item is refused while the first lives.
    pub(crate) fn acquire_item(
        dir: &Path,
        id: &str,
        manifest: Option<&Path>,
        notice: &dyn Fn(&str),
        call: &CallContext,
    ) -> Result<OutDirLock> {
        let mut me = LockHolder::of_this_process(None, manifest, call.settings.lock_lease);
        me.item = Some(id.to_string());
        OutDirLock::acquire_as(dir, item_lock_name(id), me, notice, call)
    }

    fn acquire_as(
        dir: &Path,
        name: String,
        me: LockHolder,
        notice: &dyn Fn(&str),
        call: &CallContext,
    ) -> Result<OutDirLock> {
        let lease = call.settings.lock_lease;
        // Dead locks this run renamed away and could not remove yet (removed again as it
        // ends).
        let mut leftovers = Vec::new();
        let compatible = |file: &Path, holder: Option<&LockHolder>| -> bool {
            let Some(h) = holder else { return false };
            let other_name = file.file_name() != Some(std::ffi::OsStr::new(&name));
            let shards = me.shard.is_some()
                && h.shard.is_some()
                && h.manifest == me.manifest
                && h.shard_count() == me.shard_count();
            let items = me.item.is_some() && h.item.is_some();
            other_name && (shards || items)
        };
        for path in locks_in(dir) {
            let Some(found) = Found::read(&path, lease) else {
                continue;
            };
            if compatible(&path, found.holder.as_ref()) {
                continue;
            }
            match judge(&found) {
                State::Dead(why) => take_over(dir, &found, call, &why, &mut leftovers)?,
                State::Alive => return Err(in_use(dir, &found, &me)),
                State::Renewable => {
                    let h = found.holder.as_ref().expect("renewable locks parse");
                    let left = found.lease().saturating_sub(found.age());
                    notice(&format!(
                        "{} is locked by {}; waiting up to {} s to see whether that run renews its lease",
                        dir.display(),
                        h.describe(),
                        left.as_secs() + 1
                    ));
                    if wait_for_expiry(&found) {
                        take_over(dir, &found, call, "its lease expired", &mut leftovers)?;
                    } else {
                        return Err(in_use(dir, &found, &me));
                    }
                }
            }
        }
        let path = dir.join(&name);
        let text = serde_json::to_string(&me).expect("lock serializes");
        create_atomically(&path, &text, call).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => match Found::read(&path, lease) {
                Some(found) => in_use(dir, &found, &me),
                None => Error::Usage(format!(
                    "{} is in use by another vidprep run (it took {} just now); try again",
                    dir.display(),
                    path.display()
                )),
            },
            _ => Error::io(&path, e),
        })?;
        let lock = OutDirLock {
            path: path.clone(),
            token: me.token.clone(),
            stop: None,
            renewer: None,
            lost: Default::default(),
            leftovers,
        };
        // Look again: an incompatible run that started at the same moment.
        for other in locks_in(dir) {
            if other == path {
                continue;
            }
            let Some(found) = Found::read(&other, lease) else {
                continue;
            };
            if !compatible(&other, found.holder.as_ref())
                && !matches!(judge(&found), State::Dead(_))
            {
                return Err(in_use(dir, &found, &me));
            }
        }
        Ok(lock.renewed(lease))
    }

    /// Starts the thread that renews the lock every quarter `lease`.
    fn renewed(mut self, lease: Duration) -> OutDirLock {
        let (tx, rx) = mpsc::channel::<()>();
        let path = self.path.clone();
        let token = self.token.clone();
        let every = (lease / 4).max(Duration::from_millis(100));
        let lost = self.lost.clone();
        let renewer = std::thread::Builder::new()
            .name("vidprep-lock".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    // Renew only a lock that is still ours (one taken over stays taken).
                    let ours = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|t| serde_json::from_str::<LockHolder>(&t).ok())
                        .is_some_and(|h| h.token == token);
                    if !ours {
                        lost.store(true, std::sync::atomic::Ordering::SeqCst);
                        break;
                    }
                    let _ = std::fs::File::options()
                        .append(true)
                        .open(&path)
                        .and_then(|f| f.set_modified(SystemTime::now()));
                }
            })
            .ok();
        if renewer.is_some() {
            self.stop = Some(tx);
            self.renewer = renewer;
        }
        self
    }
}

impl OutDirLock {
    /// Whether another run took the lock over, or it is gone (start no new item then):
    /// asked of the file itself, not only of the renewer (which may not have run since the
    /// process was resumed).
    pub(crate) fn lost(&self) -> bool {
        if self.lost.load(std::sync::atomic::Ordering::SeqCst) {
            return true;
        }
        if lost_why(&self.path, &self.token).is_some() {
            self.lost.store(true, std::sync::atomic::Ordering::SeqCst);
            return true;
        }
        false
    }

    /// The lock as the call's commits ask it ([`CallContext::check_held`]).
    pub(crate) fn held(&self) -> HeldLock {
        let (path, token, lost) = (self.path.clone(), self.token.clone(), self.lost.clone());
        HeldLock {
            path: self.path.clone(),
            check: std::sync::Arc::new(move || {
                let why = lost_why(&path, &token);
                if why.is_some() {
                    lost.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                why
            }),
        }
    }
}

/// Why the lock at `path` is no longer the holder `token`'s: gone, or another holder's.
fn lost_why(path: &Path, token: &str) -> Option<String> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Some(format!("{} was removed", path.display()))
        }
        // Cannot read it now (a network hiccup): not proof that it was lost.
        Err(_) => None,
        Ok(text) => match serde_json::from_str::<LockHolder>(&text) {
            Ok(h) if h.token == token => None,
            Ok(h) => Some(format!("{} now names {}", path.display(), h.describe())),
            Err(_) => Some(format!("{} now holds something else", path.display())),
        },
    }
}

impl Drop for OutDirLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.renewer.take() {
            let _ = t.join();
        }
        // Remove only our own lock (never one that another run took over).
        let ours = std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| serde_json::from_str::<LockHolder>(&t).ok())
            .is_some_and(|h| h.token == self.token);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
        for l in &self.leftovers {
            let _ = std::fs::remove_file(l);
        }
    }
}

/// Writes `text` to `path` whole and atomically, failing with `AlreadyExists` when `path`
/// exists: a temporary beside it, hard-linked to its name (a link never replaces).
fn create_atomically(path: &Path, text: &str, call: &CallContext) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp = temp_name(dir, "lock");
    let step = |what: &str, op: &mut dyn FnMut() -> std::io::Result<()>| {
        call.cancel.fs_step(&call.settings, what, path, op)
    };
    // The call's temporary while it exists: a signal handler ending the process removes it.
    call.cancel.hold_temporary(&temp);
    if let Err(e) = step("write the lock", &mut || std::fs::write(&temp, text)) {
        let _ = std::fs::remove_file(&temp);
        call.cancel.release_temporary(&temp);
        return Err(e);
    }
    let linked = step("link the lock", &mut || std::fs::hard_link(&temp, path));
    let _ = std::fs::remove_file(&temp);
    call.cancel.release_temporary(&temp);
    match linked {
        // A file system without hard links: exclusive creation, then the whole text (a
        // failure removes the file again).
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::Unsupported | std::io::ErrorKind::PermissionDenied
            ) =>
        {
            use std::io::Write as _;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)?;
            f.write_all(text.as_bytes())
                .and_then(|_| f.sync_all())
                .inspect_err(|_| {
                    let _ = std::fs::remove_file(path);
                })
        }
        other => other,
    }
}

/// Waits until the lease of `found` (a lock of another host) expires unrenewed (true) or it
/// is renewed or replaced (false).
fn wait_for_expiry(found: &Found) -> bool {
    let step = (found.lease() / 20).clamp(Duration::from_millis(50), Duration::from_secs(1));
    loop {
        std::thread::sleep(step);
        match Found::read(&found.path, found.own_lease) {
            // Gone: its holder ended (or another run took it over); look again from the top.
            None => return true,
            Some(now) if !now.same_as(found) => return false,
            Some(now) => {
                if matches!(judge(&now), State::Dead(_)) {
                    return true;
                }
            }
        }
    }
}

/// Removes a dead lock (if it is still the one judged) and its holder's temporaries: the
/// lock is renamed to a name of this process's first, and only the process whose rename
/// moved the very file judged dead goes on (two takers of one dead lock: the second renames
/// nothing, or the first one's fresh lock, which it then puts back).
fn take_over(
    dir: &Path,
    found: &Found,
    call: &CallContext,
    why: &str,
    leftovers: &mut Vec<PathBuf>,
) -> Result<()> {
    let still = Found::read(&found.path, found.own_lease).is_some_and(|now| now.same_as(found));
    if !still {
        return Ok(());
    }
    match claim_dead(dir, found, call) {
        Ok(leftover) => {
            leftovers.extend(leftover);
            Ok(())
        }
        Err(e) => Err(Error::Concurrent {
            path: found.path.clone(),
            what: format!(
                "the lock's holder is gone ({why}), but vidprep cannot take the lock over: \
                 {e}; remove it by hand if no run uses the folder"
            ),
        }),
    }
}

/// [`take_over`] once the lock was seen unchanged: what another taker may interleave with.
/// Fails when the dead lock cannot be renamed (for another reason than being gone); returns
/// the renamed dead lock when it could not be removed (the run removes it as it ends).
fn claim_dead(dir: &Path, found: &Found, call: &CallContext) -> std::io::Result<Option<PathBuf>> {
    let grave = temp_name(dir, "deadlock");
    let step = |what: &str, op: &mut dyn FnMut() -> std::io::Result<()>| {
        call.cancel.fs_step(&call.settings, what, &found.path, op)
    };
    call.cancel.hold_temporary(&grave);
    if let Err(e) = step("take over: rename the dead lock", &mut || {
        std::fs::rename(&found.path, &grave)
    }) {
        call.cancel.release_temporary(&grave);
        return match e.kind() {
            // Gone already: another run took it over.
            std::io::ErrorKind::NotFound => Ok(None),
            _ => Err(e),
        };
    }
    let moved = Found::read(&grave, found.own_lease);
    let judged = moved.as_ref().is_some_and(|m| {
        m.text == found.text && m.file_id == found.file_id && m.modified == found.modified
    });
    if !judged {
        // Another taker's fresh lock (or a renewed one): put it back where it was, unless
        // its name was taken again meanwhile (its holder then finds its lock gone, and
        // stops).
        let _ = step("take over: put back a lock not judged", &mut || {
            std::fs::hard_link(&grave, &found.path)
        });
        let _ = std::fs::remove_file(&grave);
        call.cancel.release_temporary(&grave);
        return Ok(None);
    }
    let removed = step("take over: remove the dead lock", &mut || {
        std::fs::remove_file(&grave)
    });
    call.cancel.release_temporary(&grave);
    if let Some(h) = &found.holder {
        if let Some(tag) = h.tag() {
            remove_temporaries_of(dir, &tag, h.pid);
        }
    }
    Ok(removed.is_err().then_some(grave))
}

fn in_use(dir: &Path, found: &Found, me: &LockHolder) -> Error {
    let lease = found.lease().as_secs();
    let age = found.age().as_secs();
    let mismatch = match &found.holder {
        Some(h) if h.shard.is_some() && me.shard.is_some() && h.manifest != me.manifest => {
            " with another manifest".to_string()
        }
        Some(h)
            if h.shard.is_some() && me.shard.is_some() && h.shard_count() != me.shard_count() =>
        {
            format!(
                " with another shard count ({} here, {} asked): shards of different counts would write the same items",
                h.shard.as_deref().unwrap_or("?"),
                me.shard.as_deref().unwrap_or("?")
            )
        }
        _ => String::new(),
    };
    let who = match &found.holder {
        Some(h) => h.describe(),
        None if found.text.trim().is_empty() => "an empty lock".to_string(),
        None => "a lock vidprep cannot read".to_string(),
    };
    Error::Usage(format!(
        "{} is in use by another vidprep run ({who}{mismatch}; {} renewed {age} s ago, lease {lease} s); wait for it, or remove {} if that run is gone (a lock not renewed for its lease is taken over)",
        dir.display(),
        found.path.display(),
        found.path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::settings::DEFAULT_LEASE;

    fn quiet(_: &str) {}

    fn acquire(d: &Path, shard: Option<(usize, usize)>, m: &Path) -> Result<OutDirLock> {
        OutDirLock::acquire(d, shard, Some(m), &quiet, &CallContext::new())
    }

    #[test]
    fn one_run_per_folder_but_shards_of_one_count_share() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let m = d.join("m.jsonl");
        let a = acquire(d, None, &m).unwrap();
        assert!(acquire(d, None, &m).is_err());
        assert!(acquire(d, Some((0, 2)), &m).is_err());
        drop(a);
        let s0 = acquire(d, Some((0, 2)), &m).unwrap();
        let s1 = acquire(d, Some((1, 2)), &m).unwrap();
        assert!(acquire(d, Some((1, 2)), &m).is_err());
        assert!(acquire(d, None, &m).is_err());
        let other = d.join("other.jsonl");
        assert!(acquire(d, Some((0, 3)), &other).is_err());
        // Another count of the same manifest.
        let e = acquire(d, Some((1, 3)), &m).err().unwrap().to_string();
        assert!(e.contains("another shard count"), "{e}");
        drop((s0, s1));
        // Nothing of the refused runs is left: no lock, no temporary.
        let left: Vec<_> = std::fs::read_dir(d).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn item_locks_share_a_folder_with_other_items_only() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let m = d.join("m.jsonl");
        let item =
            |id: &str| OutDirLock::acquire_item(d, id, Some(&m), &quiet, &CallContext::new());
        let a = item("a").unwrap();
        let b = item("b").unwrap();
        // The same item twice, a whole run and a shard are refused while items are held.
        let e = item("a").err().unwrap().to_string();
        assert!(e.contains("in use") && e.contains("item \"a\""), "{e}");
        assert!(acquire(d, None, &m).is_err());
        assert!(acquire(d, Some((0, 2)), &m).is_err());
        drop((a, b));
        // A whole run refuses items while it lives.
        let whole = acquire(d, None, &m).unwrap();
        assert!(item("a").is_err());
        drop(whole);
        // A dead holder of the item (this host, process gone) is taken over at once.
        let mut h = LockHolder::of_this_process(None, Some(&m), DEFAULT_LEASE);
        h.item = Some("a".into());
        h.pid = u32::MAX - 1;
        std::fs::write(
            d.join(item_lock_name("a")),
            serde_json::to_string(&h).unwrap(),
        )
        .unwrap();
        drop(item("a").unwrap());
        let left: Vec<_> = std::fs::read_dir(d).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn dead_locks_are_taken_over_live_ones_never() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let m = d.join("m.jsonl");
        let lock = d.join(LOCK_NAME);
        // A dead process of this host: at once.
        let mut h = LockHolder::of_this_process(None, Some(&m), DEFAULT_LEASE);
        h.pid = u32::MAX - 1;
        std::fs::write(&lock, serde_json::to_string(&h).unwrap()).unwrap();
        drop(acquire(d, None, &m).unwrap());
        // A live process of this host: never.
        h.pid = 1;
        h.process_start = host::process_start(1);
        std::fs::write(&lock, serde_json::to_string(&h).unwrap()).unwrap();
        assert!(acquire(d, None, &m).is_err());
        // An empty lock: refused while young, taken over when older than the lease.
        std::fs::write(&lock, "").unwrap();
        let e = acquire(d, None, &m).err().unwrap().to_string();
        assert!(e.contains("an empty lock"), "{e}");
        let old = SystemTime::now() - DEFAULT_LEASE - Duration::from_secs(5);
        std::fs::File::options()
            .append(true)
            .open(&lock)
            .unwrap()
            .set_modified(old)
            .unwrap();
        drop(acquire(d, None, &m).unwrap());
        // Another host's lock with a short lease, not renewed: taken over after it.
        let mut other = h.clone();
        other.host = "elsewhere".into();
        other.pid = 1;
        other.lease_seconds = Some(1);
        std::fs::write(&lock, serde_json::to_string(&other).unwrap()).unwrap();
        let t0 = std::time::Instant::now();
        let l = acquire(d, None, &m).unwrap();
        assert!(
            t0.elapsed() >= Duration::from_millis(900),
            "{:?}",
            t0.elapsed()
        );
        let held: LockHolder =
            serde_json::from_str(&std::fs::read_to_string(&lock).unwrap()).unwrap();
        assert_eq!(held.token, l.token);
        drop(l);
        assert!(!lock.exists());
    }

    #[test]
    fn a_held_lock_is_renewed_and_another_host_waiting_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let m = d.join("m.jsonl");
        let held = acquire(d, None, &m)
            .unwrap()
            .renewed(Duration::from_millis(400));
        // Pretend the holder is elsewhere with a 1 s lease: a waiter sees it renewed.
        let lock = d.join(LOCK_NAME);
        let mut h: LockHolder =
            serde_json::from_str(&std::fs::read_to_string(&lock).unwrap()).unwrap();
        h.host = "elsewhere".into();
        h.lease_seconds = Some(1);
        std::fs::write(&lock, serde_json::to_string(&h).unwrap()).unwrap();
        let e = acquire(d, None, &m).err().unwrap().to_string();
        assert!(e.contains("in use"), "{e}");
        assert!(!held.lost());
        // Taken over (another token): the holder learns it and leaves that lock alone.
        h.token = "another".into();
        std::fs::write(&lock, serde_json::to_string(&h).unwrap()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(held.lost());
        drop(held);
        assert!(lock.exists());
    }

    #[test]
    fn a_holder_of_this_host_suspended_past_its_lease_keeps_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let m = d.join("m.jsonl");
        let lock = d.join(LOCK_NAME);
        // A live process of this host (stopped, as `scontrol suspend` leaves it), whose lock
        // was not renewed for twice its 1 s lease.
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut h = LockHolder::of_this_process(None, Some(&m), Duration::from_secs(1));
        h.pid = pid;
        h.process_start = host::process_start(pid);
        std::fs::write(&lock, serde_json::to_string(&h).unwrap()).unwrap();
        let old = SystemTime::now() - Duration::from_secs(2);
        std::fs::File::options()
            .append(true)
            .open(&lock)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let e = acquire(d, None, &m)
            .err()
            .expect("a live holder keeps its lock")
            .to_string();
        assert!(e.contains(&format!("pid {pid}")), "{e}");
        // The same pid with another start time is a later process: the holder is gone.
        h.process_start = h.process_start.map(|s| s + 1);
        std::fs::write(&lock, serde_json::to_string(&h).unwrap()).unwrap();
        drop(acquire(d, None, &m).unwrap());
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn two_takers_of_one_dead_lock_leave_one_holder() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let m = d.join("m.jsonl");
        let lock = d.join(LOCK_NAME);
        let mut dead = LockHolder::of_this_process(None, Some(&m), DEFAULT_LEASE);
        dead.pid = u32::MAX - 1;
        std::fs::write(&lock, serde_json::to_string(&dead).unwrap()).unwrap();
        let call = CallContext::new();
        // Both judge it dead; the first takes over and holds the folder.
        let seen = Found::read(&lock, DEFAULT_LEASE).unwrap();
        assert!(matches!(judge(&seen), State::Dead(_)));
        let first = acquire(d, None, &m).unwrap();
        // The second acts on what it saw: it renames the first one's fresh lock, sees that
        // it is not the lock it judged, and puts it back.
        assert_eq!(claim_dead(d, &seen, &call).unwrap(), None);
        assert!(!first.lost(), "the first holder keeps its lock");
        let held: LockHolder =
            serde_json::from_str(&std::fs::read_to_string(&lock).unwrap()).unwrap();
        assert_eq!(held.token, first.token);
        assert!(acquire(d, None, &m).is_err());
        // Nothing else is left (no renamed lock).
        let names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec![LOCK_NAME.to_string()]);
        drop(first);
    }

    #[test]
    fn a_holder_sees_its_lock_gone_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let m = d.join("m.jsonl");
        let held = acquire(d, None, &m).unwrap();
        let check = held.held();
        assert!((check.check)().is_none());
        assert!(!held.lost());
        std::fs::remove_file(d.join(LOCK_NAME)).unwrap();
        // No renewal has run: the file itself says.
        let why = (check.check)().expect("gone");
        assert!(why.contains("was removed"), "{why}");
        assert!(held.lost());
    }
}
