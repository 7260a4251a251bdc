//! The outputs of one request, committed as one group: every file and folder is written under
//! a short temporary name beside its final place, checked, and only then renamed into place,
//! all of them or none (a failure midway restores what was there). An output that replaces an
//! earlier one exchanges names with it in one step where the file system can (Linux's
//! `RENAME_EXCHANGE`), so its name never stands empty, even if the process is killed there;
//! the earlier one is then set aside and removed by its record. Before anything is
//! written, each output is checked: it may not be an input, lie inside an input folder, be
//! another output of the same request, or replace something that is not a regular file (a
//! device, a FIFO, a folder).
//!
//! Temporary names are held by the call's [`CancelToken`] while they exist, so an interrupt
//! (SIGINT, SIGTERM) can remove them ([`CancelToken::remove_temporaries`], called by the
//! command line's signal handler before it exits; it waits for a commit under way, which
//! holds the token's commit lock, so a signal never leaves half a group), and a later run recognises leftovers of a killed one by their prefix ([`TEMP_PREFIX`](super::temporaries::TEMP_PREFIX)). A
//! temporary's name carries its writer's host tag and process id
//! (`.vidprep-tmp-<tag>-<pid>-<n>.<what>`, [`crate::call::host`]): a run removes another's
//! temporaries only when they are provably dead (its own host and a dead process), or
//! untouched for [`crate::call::host::STALE_TEMPORARY`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[cfg(doc)]
use crate::call::cancel::CancelToken;
use crate::call::context::CallContext;
use crate::call::output::temporaries::{remove_dead_temporaries, remove_path, temp_name};
use crate::error::{Error, Result};

/// What an output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Folder,
}

#[derive(Debug)]
struct Entry {
    target: PathBuf,
    temp: PathBuf,
    kind: Kind,
    /// A folder whose contents are claimed one by one inside its temporary folder (an item
    /// folder of a batch: replaced as a whole).
    container: bool,
}

/// The outputs of one request, not yet in place.
#[derive(Debug)]
pub struct OutputGroup {
    inputs: Vec<PathBuf>,
    /// Canonical forms of the inputs (and of the folders among them), for comparisons.
    input_keys: Vec<(PathBuf, bool)>,
    entries: Vec<Entry>,
    /// Scratch files (attempts) removed at the end either way.
    scratch: Vec<PathBuf>,
    claimed: HashSet<PathBuf>,
    created_dirs: Vec<PathBuf>,
    committed: bool,
    /// The call this group works for: its token holds the group's temporaries while they
    /// exist, so that a signal handler can remove them ([`CancelToken::remove_temporaries`]).
    call: CallContext,
}

/// An absolute, normalised form of `p` (through symlinks where it exists), for comparing
/// paths that may be spelt differently.
pub(crate) fn canonical(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    // Not there yet: canonicalise the parent and keep the name.
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => {
            canonical(parent).join(name)
        }
        _ => std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()),
    }
}

/// `target` with a last component to name temporaries after: `.` and `..` become the
/// folder they stand for.
fn named(target: &Path) -> Result<PathBuf> {
    if target.file_name().is_some() {
        return Ok(target.to_path_buf());
    }
    let resolved = canonical(target);
    if resolved.file_name().is_none() {
        return Err(Error::Usage(format!(
            "{} is not a file or folder name vidprep can write",
            target.display()
        )));
    }
    Ok(resolved)
}

#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_a: &Path, _b: &Path) -> bool {
    false
}

impl OutputGroup {
    /// A group for a request that reads `inputs` (files or folders), made by the call `ctx`:
    /// its temporaries are the call's (its token's: see [`CancelToken::remove_temporaries`]),
    /// and it does not commit once the call is cancelled.
    pub fn new(inputs: &[PathBuf], ctx: &CallContext) -> OutputGroup {
        OutputGroup {
            inputs: inputs.to_vec(),
            input_keys: inputs.iter().map(|p| (canonical(p), p.is_dir())).collect(),
            entries: Vec::new(),
            scratch: Vec::new(),
            claimed: HashSet::new(),
            created_dirs: Vec::new(),
            committed: false,
            call: ctx.clone(),
        }
    }

    /// The input checks alone (for outputs inside a container folder, written fresh).
    fn check_inputs_only(&self, target: &Path, kind: Kind) -> Result<()> {
        let key = canonical(target);
        for (input, (input_key, is_dir)) in self.inputs.iter().zip(&self.input_keys) {
            if key == *input_key
                || (*is_dir && key.starts_with(input_key))
                || (kind == Kind::Folder && input_key.starts_with(&key))
            {
                return Err(Error::Usage(format!(
                    "output {} would replace or lie inside the input {}",
                    target.display(),
                    input.display()
                )));
            }
        }
        Ok(())
    }

    /// Checks that `target` may be written by this request; the error says why not.
    fn check(&self, target: &Path, kind: Kind) -> Result<PathBuf> {
        if target.file_name().is_none() {
            return Err(Error::Usage(format!(
                "{} is not a file name",
                target.display()
            )));
        }
        let key = canonical(target);
        for (input, (input_key, is_dir)) in self.inputs.iter().zip(&self.input_keys) {
            if key == *input_key || same_file(target, input) {
                return Err(Error::Usage(format!(
                    "output {} is the input {}: refusing to overwrite an input",
                    target.display(),
                    input.display()
                )));
            }
            if *is_dir && key.starts_with(input_key) {
                return Err(Error::Usage(format!(
                    "output {} is inside the input folder {}: refusing to write into an input",
                    target.display(),
                    input.display()
                )));
            }
            if kind == Kind::Folder && input_key.starts_with(&key) {
                return Err(Error::Usage(format!(
                    "output folder {} holds the input {}: refusing to replace it",
                    target.display(),
                    input.display()
                )));
            }
        }
        if self.claimed.contains(&key) {
            return Err(Error::Usage(format!(
                "two outputs of this request would both be {}; give them different names",
                target.display()
            )));
        }
        for other in &self.claimed {
            if key.starts_with(other) || other.starts_with(&key) {
                return Err(Error::Usage(format!(
                    "outputs {} and {} would be one inside the other",
                    target.display(),
                    other.display()
                )));
            }
        }
        if kind == Kind::Folder
            && std::fs::symlink_metadata(target).is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(Error::Usage(format!(
                "{} is a symbolic link; refusing to replace it with a folder (vidprep never \
                 writes or deletes through a link): remove the link or choose another name",
                target.display()
            )));
        }
        if kind == Kind::Folder && target.is_dir() {
            let foreign = super::ownership::foreign_files(target);
            if !foreign.is_empty() {
                return Err(super::ownership::refusal(target, &foreign));
            }
        }
        if let Ok(meta) = std::fs::symlink_metadata(target) {
            let ft = meta.file_type();
            let fine = match kind {
                Kind::File => ft.is_file() || (ft.is_symlink() && target.is_file()),
                Kind::Folder => ft.is_dir(),
            };
            if !fine {
                let what = if ft.is_dir() {
                    "a folder"
                } else if ft.is_file() {
                    "a file"
                } else {
                    "not a regular file (a device, FIFO or socket)"
                };
                return Err(Error::Usage(format!(
                    "{} exists and is {what}; refusing to replace it with {}",
                    target.display(),
                    match kind {
                        Kind::File => "a file",
                        Kind::Folder => "a folder",
                    }
                )));
            }
        }
        Ok(key)
    }

    /// Makes sure the folder `dir` exists, remembering what was created (removed again if
    /// the group is dropped uncommitted).
    fn ensure_dir(&mut self, dir: &Path) -> Result<()> {
        if dir.as_os_str().is_empty() || dir.is_dir() {
            return Ok(());
        }
        let mut missing = Vec::new();
        let mut d = dir.to_path_buf();
        while !d.as_os_str().is_empty() && !d.exists() {
            missing.push(d.clone());
            match d.parent() {
                Some(p) => d = p.to_path_buf(),
                None => break,
            }
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        missing.reverse();
        self.created_dirs.extend(missing);
        Ok(())
    }

    fn parent_of(target: &Path) -> PathBuf {
        target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// The temporary path of `target` when it lies inside a claimed container folder.
    fn inside_container(&self, target: &Path) -> Option<PathBuf> {
        let key = canonical(target);
        self.entries.iter().find_map(|e| {
            let root = canonical(&e.target);
            (e.container && key != root)
                .then(|| key.strip_prefix(&root).ok().map(|rel| e.temp.join(rel)))
                .flatten()
        })
    }

    /// What to tell the caller about the folders this group created for its outputs (an
    /// output's missing parent folders are made, never silently): `None` when it made none.
    pub fn created_warning(&self) -> Option<String> {
        match self.created_dirs.as_slice() {
            [] => None,
            [one] => Some(format!(
                "created the folder {} for the output (it did not exist)",
                one.display()
            )),
            many => Some(format!(
                "created the missing folders {} for the output (check the path if that was not \
                 meant)",
                many.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// Claims `target` inside a container folder: no entry of its own (the folder carries it).
    fn claim_inside(&mut self, target: &Path, kind: Kind, temp: PathBuf) -> Result<PathBuf> {
        let key = canonical(target);
        if self.claimed.contains(&key) {
            return Err(Error::Usage(format!(
                "two outputs of this request would both be {}; give them different names",
                target.display()
            )));
        }
        if let Some(parent) = temp.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(target, e))?;
        }
        if kind == Kind::Folder {
            std::fs::create_dir(&temp).map_err(|e| Error::io(target, e))?;
        }
        self.claimed.insert(key);
        Ok(temp)
    }

    /// Claims `target` as a folder whose outputs are claimed inside it afterwards, and
    /// replaced as a whole on commit (old files in it disappear).
    pub(crate) fn container(&mut self, target: &Path) -> Result<PathBuf> {
        let target = &named(target)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // The item's name in its temporary name: a resumed shard finds its own leftovers.
        let temp = self.folder_named(target, &format!("{name}.tmpdir"))?;
        if let Some(e) = self.entries.last_mut() {
            e.container = true;
        }
        // Its own key must not block the files inside it.
        self.claimed.remove(&canonical(target));
        Ok(temp)
    }

    /// Claims `target` as a file output; returns the temporary path to write it at.
    pub fn file(&mut self, target: &Path) -> Result<PathBuf> {
        let target = &named(target)?;
        remove_dead_temporaries(&Self::parent_of(target));
        if let Some(temp) = self.inside_container(target) {
            self.check_inputs_only(target, Kind::File)?;
            return self.claim_inside(target, Kind::File, temp);
        }
        let key = self.check(target, Kind::File)?;
        let dir = Self::parent_of(target);
        self.ensure_dir(&dir)?;
        let temp = temp_name(&dir, "tmp");
        self.call.cancel.hold_temporary(&temp);
        self.claimed.insert(key);
        self.entries.push(Entry {
            target: target.to_path_buf(),
            temp: temp.clone(),
            kind: Kind::File,
            container: false,
        });
        Ok(temp)
    }

    /// Claims `target` as a file output that replaces an existing file only when `ours(target)`
    /// proves vidprep wrote it (`writer`: what writes such files, for the refusal); otherwise
    /// as [`file`](Self::file). The input and collision checks come first (their messages say
    /// more than "not ours").
    pub fn owned_file(
        &mut self,
        target: &Path,
        ours: &dyn Fn(&Path) -> bool,
        writer: &str,
    ) -> Result<PathBuf> {
        let named = named(target)?;
        if self.inside_container(&named).is_none() {
            self.check(&named, Kind::File)?;
            if named.is_file() && !ours(&named) {
                return Err(super::ownership::file_refusal(&named, writer));
            }
        }
        self.file(target)
    }

    /// Claims `target` as a folder output (replaced as a whole); returns the temporary folder
    /// (created, empty) to fill.
    pub(crate) fn folder(&mut self, target: &Path) -> Result<PathBuf> {
        self.folder_named(target, "tmpdir")
    }

    fn folder_named(&mut self, target: &Path, what: &str) -> Result<PathBuf> {
        let target = &named(target)?;
        remove_dead_temporaries(&Self::parent_of(target));
        if let Some(temp) = self.inside_container(target) {
            self.check_inputs_only(target, Kind::Folder)?;
            return self.claim_inside(target, Kind::Folder, temp);
        }
        let key = self.check(target, Kind::Folder)?;
        let dir = Self::parent_of(target);
        self.ensure_dir(&dir)?;
        let temp = temp_name(&dir, what);
        std::fs::create_dir(&temp).map_err(|e| Error::io(target, e))?;
        self.call.cancel.hold_temporary(&temp);
        self.claimed.insert(key);
        self.entries.push(Entry {
            target: target.to_path_buf(),
            temp: temp.clone(),
            kind: Kind::Folder,
            container: false,
        });
        Ok(temp)
    }

    /// A scratch file beside `near` (removed when the group ends, committed or not).
    pub(crate) fn scratch(&mut self, near: &Path) -> Result<PathBuf> {
        let dir = Self::parent_of(near);
        self.ensure_dir(&dir)?;
        let temp = temp_name(&dir, "scratch");
        self.call.cancel.hold_temporary(&temp);
        self.scratch.push(temp.clone());
        Ok(temp)
    }

    /// Puts every output in place: each existing target is moved aside, each temporary is
    /// renamed to its target, then what was moved aside is removed. If a rename fails, what
    /// was renamed is taken back and what was moved aside restored, so either every output of
    /// the request is new or none is. Returns the targets, and what deserves a word (an
    /// earlier folder that could not be removed whole, kept under a name it says).
    ///
    /// Other processes (see the module doc): commits of groups that share a folder take
    /// turns under that folder's commit lock ([`COMMIT_LOCK`]), so two writers of one output
    /// name leave the whole group of one of them, never a mix; a folder set aside is looked
    /// at again for files vidprep did not write (a person's, made while the run worked), and
    /// then put back, failing the commit; the lock of the run this call works for (if any)
    /// must still be its own.
    pub fn commit(self) -> Result<Committed> {
        let cancel = self.call.cancel.clone();
        let _committing = cancel.committing();
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        self.commit_held()
    }

    /// [`commit`](Self::commit) that goes ahead after a cancel: for the record of an
    /// interrupted run (its report), never for an item's outputs.
    pub(crate) fn commit_even_if_cancelled(self) -> Result<Committed> {
        let cancel = self.call.cancel.clone();
        let _committing = cancel.committing();
        self.commit_held()
    }

    /// One filesystem step of the commit (`what` of `path`), through the test-only fault
    /// injection's pause or failure where the build has it.
    fn fs<T>(
        &self,
        what: &str,
        path: &Path,
        op: impl FnOnce() -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        self.call
            .cancel
            .fs_step(&self.call.settings, what, path, op)
    }

    /// The folders whose commit locks this group takes: each target's parent, sorted (every
    /// writer takes them in one order, so two never wait for each other).
    fn lock_folders(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .entries
            .iter()
            .map(|e| canonical(&Self::parent_of(&e.target)))
            .collect();
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// The commit itself, under the call's commit lock ([`CancelToken::committing`]): a
    /// signal handler's removal of temporaries waits for it, so the earlier outputs it sets
    /// aside are never removed while the new ones are not all in place.
    fn commit_held(mut self) -> Result<Committed> {
        // Scratch files are done with: none may be renamed into place inside a folder.
        for s in self.scratch.drain(..) {
            remove_path(&s);
            self.call.cancel.release_temporary(&s);
        }
        for e in &self.entries {
            let ok = match e.kind {
                Kind::File => e.temp.is_file(),
                Kind::Folder => e.temp.is_dir(),
            };
            if !ok {
                return Err(Error::internal(format!(
                    "{} was not written before its group was committed",
                    e.target.display()
                )));
            }
        }
        // Other writers of these folders wait (and this one waits for them).
        let mut folder_locks = Vec::new();
        for dir in self.lock_folders() {
            let lock = dir.join(COMMIT_LOCK);
            self.fs("take the commit lock", &lock, || Ok(()))
                .map_err(|e| Error::io(&lock, e))?;
            folder_locks.push(super::FileLock::exclusive(&lock)?);
        }
        // A run that lost its folder to another (suspended past its lease) stops here.
        self.call.check_held()?;
        let placed_ids: Vec<Option<(u64, u64)>> =
            self.entries.iter().map(|e| file_id(&e.temp)).collect();
        let mut set_aside: Vec<(PathBuf, PathBuf, Kind)> = Vec::new();
        let mut placed: Vec<usize> = Vec::new();
        let mut failure = None;
        for (i, e) in self.entries.iter().enumerate() {
            if std::fs::symlink_metadata(&e.target).is_ok() {
                let dir = Self::parent_of(&e.target);
                let old = temp_name(&dir, "old");
                self.call.cancel.hold_temporary(&old);
                // Where the file system exchanges two names in one step, the new output takes
                // the earlier one's place so (never a moment without either: a reader, or a
                // kill, finds one of them whole), and the earlier one, now at the new one's
                // temporary name, is then set aside.
                match self.fs("put in place", &e.target, || exchange(&e.temp, &e.target)) {
                    Ok(true) => {
                        if let Err(err) =
                            self.fs("set aside", &e.target, || std::fs::rename(&e.temp, &old))
                        {
                            // Exchanged back: the earlier one in place, the new one at its
                            // temporary name.
                            let _ = exchange(&e.temp, &e.target);
                            self.call.cancel.release_temporary(&old);
                            failure = Some(Error::io(&e.target, err));
                            break;
                        }
                        set_aside.push((e.target.clone(), old.clone(), e.kind));
                        placed.push(i);
                        if e.kind == Kind::Folder
                            && std::fs::symlink_metadata(&old).is_ok_and(|m| m.is_dir())
                        {
                            let foreign = super::ownership::foreign_files(&old);
                            if !foreign.is_empty() {
                                failure = Some(super::ownership::refusal_during_commit(
                                    &e.target, &foreign,
                                ));
                                break;
                            }
                        }
                        continue;
                    }
                    Ok(false) => {}
                    Err(err) => {
                        self.call.cancel.release_temporary(&old);
                        failure = Some(Error::io(&e.target, err));
                        break;
                    }
                }
                if let Err(err) =
                    self.fs("set aside", &e.target, || std::fs::rename(&e.target, &old))
                {
                    self.call.cancel.release_temporary(&old);
                    failure = Some(Error::io(&e.target, err));
                    break;
                }
                set_aside.push((e.target.clone(), old.clone(), e.kind));
                // Set aside, nothing more can land in it by its name: look again for what
                // vidprep did not write (a person's file, made since the group was claimed).
                if e.kind == Kind::Folder
                    && std::fs::symlink_metadata(&old).is_ok_and(|m| m.is_dir())
                {
                    let foreign = super::ownership::foreign_files(&old);
                    if !foreign.is_empty() {
                        failure =
                            Some(super::ownership::refusal_during_commit(&e.target, &foreign));
                        break;
                    }
                }
            }
            if let Err(err) = self.fs("put in place", &e.target, || {
                std::fs::rename(&e.temp, &e.target)
            }) {
                failure = Some(Error::io(&e.target, err));
                break;
            }
            placed.push(i);
        }
        if let Some(err) = failure {
            // Take back what was placed, restore what was set aside.
            let mut unrestored = Vec::new();
            for &i in placed.iter().rev() {
                let e = &self.entries[i];
                let _ = self.fs("take back", &e.target, || {
                    std::fs::rename(&e.target, &e.temp)
                });
            }
            for (target, old, _) in set_aside.iter().rev() {
                match self.fs("restore", target, || std::fs::rename(old, target)) {
                    Ok(()) => self.call.cancel.release_temporary(old),
                    Err(e) => unrestored.push(format!(
                        "{} could not be put back ({e}): it is at {}",
                        target.display(),
                        old.display()
                    )),
                }
            }
            if unrestored.is_empty() {
                return Err(err);
            }
            // Never removed as a temporary: say where it is.
            return Err(Error::Concurrent {
                path: self.entries[0].target.clone(),
                what: format!("{err}; and {}", unrestored.join("; ")),
            });
        }
        let mut warnings = Vec::new();
        for (target, old, kind) in &set_aside {
            if let Some(w) = self.remove_earlier(target, old, *kind) {
                warnings.push(w);
            }
            self.call.cancel.release_temporary(old);
        }
        for e in &self.entries {
            self.call.cancel.release_temporary(&e.temp);
        }
        self.committed = true;
        // Every output is the one this group wrote (a writer that took no commit lock, an
        // older vidprep or another program, may still have replaced one meanwhile).
        for (e, id) in self.entries.iter().zip(&placed_ids) {
            let now = file_id(&e.target);
            if id.is_some() && now != *id {
                return Err(Error::Concurrent {
                    path: e.target.clone(),
                    what: "was replaced by another writer while this request put its outputs \
                           in place, so they may not belong together: run the request again, \
                           with one writer per output"
                        .into(),
                });
            }
        }
        drop(folder_locks);
        Ok(Committed {
            targets: self.entries.iter().map(|e| e.target.clone()).collect(),
            warnings,
        })
    }

    /// Removes the earlier `target`, set aside at `old`: a file; a folder only by what its
    /// record lists (and vidprep's temporaries and empty folders), so a file that appeared in
    /// it after it was looked at is never removed. What is left (such a file, or one vidprep
    /// cannot remove: another user's) is kept under a visible name, and the warning says
    /// where.
    fn remove_earlier(&self, target: &Path, old: &Path, kind: Kind) -> Option<String> {
        let removed = self.fs("remove the earlier", target, || match kind {
            Kind::File => std::fs::remove_file(old).or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            }),
            Kind::Folder => super::ownership::remove_owned(old),
        });
        let err = match removed {
            Ok(()) => return None,
            Err(e) => e,
        };
        if std::fs::symlink_metadata(old).is_err() {
            return None;
        }
        let kept = kept_name(target);
        match std::fs::rename(old, &kept) {
            Ok(()) => Some(format!(
                "the earlier {} could not be removed whole ({err}); what is left of it is kept \
                 at {}: look at it and remove it",
                target.display(),
                kept.display()
            )),
            Err(e) => Some(format!(
                "the earlier {} could not be removed whole ({err}) nor renamed ({e}); what is \
                 left of it is at {}: look at it and remove it",
                target.display(),
                old.display()
            )),
        }
    }
}

/// Exchanges the names `a` and `b` (both exist) in one step (Linux's `renameat2` with
/// `RENAME_EXCHANGE`): `Ok(false)` where the file system or the system cannot (the caller
/// then sets `b` aside and renames `a` into its place, two steps).
fn exchange(a: &Path, b: &Path) -> std::io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        use rustix::io::Errno;
        match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
            Ok(()) => Ok(true),
            Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (a, b);
        Ok(false)
    }
}

/// The name of each folder's commit lock (see [`OutputGroup::commit`]); removed by its holder
/// before it lets go, so nothing stays beside the outputs.
pub(crate) const COMMIT_LOCK: &str = ".vidprep-commit.lock";

/// What a commit did: the outputs in place and what deserves a word.
#[derive(Debug)]
#[non_exhaustive]
pub struct Committed {
    /// Every output, at its final path.
    pub targets: Vec<PathBuf>,
    /// What did not stop the commit but must be said (an earlier folder kept, and where).
    pub warnings: Vec<String>,
}

/// Device and inode of the file at `p` (not following a link).
fn file_id(p: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        std::fs::symlink_metadata(p)
            .ok()
            .map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        None
    }
}

/// A free, visible name beside `target` for what is left of its earlier version:
/// `NAME.kept-1`, `NAME.kept-2`, ...
fn kept_name(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    (1..)
        .map(|n| target.with_file_name(format!("{name}.kept-{n}")))
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .expect("some name is free")
}

impl Drop for OutputGroup {
    fn drop(&mut self) {
        for s in &self.scratch {
            remove_path(s);
            self.call.cancel.release_temporary(s);
        }
        if self.committed {
            return;
        }
        for e in &self.entries {
            remove_path(&e.temp);
            self.call.cancel.release_temporary(&e.temp);
        }
        // Folders created for outputs that never came.
        for d in self.created_dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// Writes `bytes` to `path` atomically, outside an item's output group (a batch report,
/// written even when the run was interrupted, to say what did not run): under a short
/// temporary name beside it, then renamed into place, so a reader never sees half a file and
/// an interrupt leaves none. Refuses to replace anything but a regular file.
pub fn write_file_atomically(path: &Path, bytes: &[u8], ctx: &CallContext) -> Result<()> {
    let mut group = OutputGroup::new(&[], ctx);
    let temp = group.file(path)?;
    std::fs::write(&temp, bytes).map_err(|e| Error::io(path, e))?;
    // A batch report is written even when the run was interrupted: it says what did not run.
    group.commit_even_if_cancelled()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::cancel::CancelToken;

    #[test]
    fn a_calls_temporaries_are_its_own() {
        // Two calls write at once; the signal handler of one removes that call's temporaries
        // and leaves the other's (there is no process-wide registry).
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (CancelToken::new(), CancelToken::new());
        let (first_call, second_call) = (
            CallContext {
                cancel: first.clone(),
                ..CallContext::new()
            },
            CallContext {
                cancel: second.clone(),
                ..CallContext::new()
            },
        );
        let (a, a_temp) = {
            let mut a = OutputGroup::new(&[], &first_call);
            let t = a.file(&dir.path().join("a.txt")).unwrap();
            std::fs::write(&t, b"a").unwrap();
            (a, t)
        };
        let (b, b_temp) = {
            let mut b = OutputGroup::new(&[], &second_call);
            let t = b.folder(&dir.path().join("b")).unwrap();
            std::fs::write(t.join("x"), b"b").unwrap();
            (b, t)
        };
        first.remove_temporaries();
        assert!(!a_temp.exists() && b_temp.join("x").is_file());
        // The group that lost its temporary fails to commit; the other commits.
        assert!(a.commit().is_err());
        b.commit().unwrap();
        assert!(dir.path().join("b/x").is_file() && !dir.path().join("a.txt").exists());
        second.remove_temporaries();
        assert!(
            dir.path().join("b/x").is_file(),
            "a committed output is not a temporary"
        );
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn all_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("old.json"), b"old sidecar").unwrap();
        {
            let mut g = OutputGroup::new(&[], &CallContext::new());
            let a = g.file(&d.join("old.mp4")).unwrap();
            let b = g.file(&d.join("old.json")).unwrap();
            std::fs::write(a, b"video").unwrap();
            std::fs::write(b, b"sidecar").unwrap();
            // dropped uncommitted: nothing new, the old sidecar untouched
        }
        assert_eq!(names(d), vec!["old.json"]);
        assert_eq!(std::fs::read(d.join("old.json")).unwrap(), b"old sidecar");
        let mut g = OutputGroup::new(&[], &CallContext::new());
        std::fs::write(g.file(&d.join("old.mp4")).unwrap(), b"video").unwrap();
        std::fs::write(g.file(&d.join("old.json")).unwrap(), b"sidecar").unwrap();
        let f = g.folder(&d.join("frames")).unwrap();
        std::fs::write(f.join("0.jpg"), b"jpg").unwrap();
        // vidprep's record, listing the folder's files (an earlier `stale.jpg` among them).
        std::fs::write(
            f.join("frames.json"),
            r#"{"vidprep_version": "0", "sources": [], "total_frames": 2,
                "frames": [{"file": "0.jpg"}, {"file": "stale.jpg"}]}"#,
        )
        .unwrap();
        g.commit().unwrap();
        assert_eq!(names(d), vec!["frames", "old.json", "old.mp4"]);
        assert_eq!(std::fs::read(d.join("old.json")).unwrap(), b"sidecar");
        // A folder is replaced as a whole: old files inside it are gone.
        std::fs::write(d.join("frames/stale.jpg"), b"x").unwrap();
        let mut g = OutputGroup::new(&[], &CallContext::new());
        let f = g.folder(&d.join("frames")).unwrap();
        std::fs::write(f.join("1.jpg"), b"jpg").unwrap();
        g.commit().unwrap();
        assert_eq!(names(&d.join("frames")), vec!["1.jpg"]);
        // A folder vidprep did not write is never replaced.
        let mut g = OutputGroup::new(&[], &CallContext::new());
        let e = g.folder(&d.join("frames")).unwrap_err().to_string();
        assert!(e.contains("did not write"), "{e}");
    }

    #[test]
    fn refuses_inputs_collisions_and_devices() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("in.mp4"), b"x").unwrap();
        std::fs::create_dir(d.join("seq")).unwrap();
        let inputs = [d.join("in.mp4"), d.join("seq")];
        let mut g = OutputGroup::new(&inputs, &CallContext::new());
        let msg = |r: Result<PathBuf>| r.unwrap_err().to_string();
        assert!(msg(g.file(&d.join("./in.mp4"))).contains("is the input"));
        assert!(msg(g.file(&d.join("seq/groundtruth.txt"))).contains("inside the input folder"));
        assert!(msg(g.folder(d)).contains("holds the input"));
        g.file(&d.join("out.mp4")).unwrap();
        assert!(msg(g.file(&d.join("out.mp4"))).contains("both be"));
        assert!(msg(g.file(Path::new("/dev/null"))).contains("not a regular file"));
        std::fs::create_dir(d.join("adir")).unwrap();
        assert!(msg(g.file(&d.join("adir"))).contains("is a folder"));
        drop(g);
        assert_eq!(names(d), vec!["adir", "in.mp4", "seq"]);
    }

    #[test]
    fn missing_folders_are_created_and_removed_again_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/out.mp4");
        {
            let mut g = OutputGroup::new(&[], &CallContext::new());
            std::fs::write(g.file(&target).unwrap(), b"x").unwrap();
        }
        assert!(!dir.path().join("a").exists());
    }

    #[test]
    fn replaces_whole_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.jsonl");
        write_file_atomically(&p, b"one", &CallContext::new()).unwrap();
        write_file_atomically(&p, b"two", &CallContext::new()).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        std::fs::create_dir(dir.path().join("d")).unwrap();
        assert!(write_file_atomically(&dir.path().join("d"), b"x", &CallContext::new()).is_err());
    }
}
