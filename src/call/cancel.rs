//! Cancellation: a [`CancelToken`] that one call carries, so that stopping one call (the CLI's
//! Ctrl-C, a Python `KeyboardInterrupt`) stops that call's work and nothing else, and the next
//! call starts with a fresh token.
//!
//! A call's token travels in [`ExecOptions::cancel`](crate::ExecOptions) (and so in
//! [`BatchOptions::exec`](crate::BatchOptions)). While the work runs, the call hands it down
//! in its [`CallContext`](crate::call::context::CallContext), cloned into every thread the call
//! spawns: a frame loop asks its context, FFmpeg's interrupt callback the token its input
//! was opened with.
//!
//! The token also holds the temporaries the call's output groups have on disk at the moment,
//! so that a signal handler about to end the process can remove them
//! ([`CancelToken::remove_temporaries`]): state of one call, not of the process. And it
//! orders that removal with the call's commits: an output group renames its outputs into
//! place under the token's commit lock ([`CancelToken::committing`]), the removal takes the
//! same lock, and a handler about to end the process waits until no commit has run for a
//! grace period and then keeps the lock until the end ([`CancelToken::settle`]). So a signal
//! during a commit ends with the whole earlier group or the whole new group, never a mix:
//! the commit, once started, finishes (or rolls back) under its own control.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

/// A flag shared by everything working for one call: once [`cancel`](Self::cancel)led, frame
/// loops end with [`Error::Cancelled`](crate::Error::Cancelled), no output group commits,
/// batch items not yet started are not started, and network waits give up. Clones share the
/// flag. A token is never reset: a new call takes a new token.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    cancelled: AtomicBool,
    /// The temporary files and folders of the call's output groups that exist now.
    temporaries: Mutex<HashSet<PathBuf>>,
    /// Held by an output group while it renames its outputs into place, and by the removal
    /// of temporaries (a handler ending the process keeps it to the end).
    commit: Mutex<()>,
    /// Commits ended so far (a handler's grace restarts when this moves).
    commits_ended: AtomicU64,
    /// Filesystem steps of commits taken so far (test-only fault injection numbers them).
    #[cfg(feature = "fault-injection")]
    steps: AtomicU64,
}

impl CancelToken {
    /// A token not cancelled.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Asks the work carrying this token to stop (callable from any thread, a signal handler's
    /// included).
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
    }

    /// Whether [`cancel`](Self::cancel) was called on this token (or a clone).
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Whether two handles share one flag.
    pub fn same_as(&self, other: &CancelToken) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Removes every temporary file and folder the call's output groups have on disk now:
    /// for a signal handler that is about to end the process (the command line's, when the
    /// work has not stopped within seconds of a Ctrl-C), so that nothing half-written
    /// survives. A call that ends by itself removes its own temporaries. Waits for a commit
    /// that is renaming outputs into place to end first (its set-aside earlier outputs are
    /// temporaries only until it ends).
    pub fn remove_temporaries(&self) {
        let _commits = self.commit_lock();
        self.remove_temporaries_held();
    }

    /// For a signal handler about to end the process: waits until no output group of the
    /// call has been committing for `grace` (the work's own chance to stop, and to write its
    /// record, a batch's report), then removes the temporaries and returns the commit lock,
    /// to be held until the process ends so that no commit starts (or half-runs) after.
    pub fn settle(&self, grace: Duration) -> Settled<'_> {
        let poll = Duration::from_millis(50).min(grace);
        let mut quiet_since = Instant::now();
        let mut ended = self.0.commits_ended.load(Ordering::SeqCst);
        let guard = loop {
            let now_ended = self.0.commits_ended.load(Ordering::SeqCst);
            let running = match self.0.commit.try_lock() {
                Ok(g) => Some(g),
                Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
                Err(TryLockError::WouldBlock) => None,
            };
            match running {
                Some(g) if now_ended == ended && quiet_since.elapsed() >= grace => break g,
                Some(_) if now_ended == ended => {}
                _ => {
                    // A commit runs now, or ended since the last look: the grace starts again.
                    quiet_since = Instant::now();
                    ended = now_ended;
                }
            }
            std::thread::sleep(poll);
        };
        self.remove_temporaries_held();
        Settled { _commits: guard }
    }

    /// Held while an output group renames its outputs into place (see the module doc).
    pub(crate) fn committing(&self) -> Committing<'_> {
        Committing {
            token: self,
            _lock: self.commit_lock(),
        }
    }

    /// Test-only fault injection: the filesystem step `what` (of a commit, of a lock's
    /// creation or take-over) is about to happen. With `VIDPREP_FAULT_COMMIT_STEP` set (the
    /// call's settings, [`crate::call::settings::FaultSteps`]), each step is numbered from 1 and
    /// said on stderr, and at the step with that number the process first pauses: for
    /// `VIDPREP_FAULT_COMMIT_PAUSE_MS` (default 3000), or, with `VIDPREP_FAULT_STEP_DIR`, until
    /// a test that saw the file `paused` appear there (it holds the step) writes `go` (an
    /// interleaving harness acts in between). With `VIDPREP_FAULT_STEP_FAIL=ERRNO` the step
    /// then fails with that error (`EXDEV`, `ENOSPC`, `EIO`, `EACCES`) instead of being taken.
    #[cfg(feature = "fault-injection")]
    pub(crate) fn fault_step(
        &self,
        settings: &crate::call::settings::Settings,
        what: &str,
        path: &Path,
    ) -> Option<std::io::Error> {
        let faults = settings.fault_commit_step.as_ref()?;
        let n = self.0.steps.fetch_add(1, Ordering::SeqCst) + 1;
        eprintln!(
            "fault-injection: commit step {n}: {what} {}",
            path.display()
        );
        if n != faults.at {
            return None;
        }
        eprintln!("fault-injection: paused at commit step {n}");
        match &faults.handshake {
            None => std::thread::sleep(faults.pause),
            Some(dir) => {
                let go = dir.join("go");
                let _ = std::fs::write(
                    dir.join("paused.tmp"),
                    format!("{n}\t{what}\t{}\n", path.display()),
                );
                let _ = std::fs::rename(dir.join("paused.tmp"), dir.join("paused"));
                let until = Instant::now() + faults.pause.max(Duration::from_secs(60));
                while !go.exists() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
        faults.fail.map(std::io::Error::from_raw_os_error)
    }

    /// Runs the filesystem step `op` (`what` of `path`), with the test-only fault injection's
    /// pause or failure first ([`CancelToken::fault_step`]) in a build that has it.
    pub(crate) fn fs_step<T>(
        &self,
        settings: &crate::call::settings::Settings,
        what: &str,
        path: &Path,
        op: impl FnOnce() -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        #[cfg(feature = "fault-injection")]
        if let Some(e) = self.fault_step(settings, what, path) {
            return Err(e);
        }
        #[cfg(not(feature = "fault-injection"))]
        let _ = (settings, what, path);
        op()
    }

    fn commit_lock(&self) -> MutexGuard<'_, ()> {
        self.0.commit.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn remove_temporaries_held(&self) {
        let live: Vec<PathBuf> = self.temporaries().drain().collect();
        for p in live {
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.is_dir() => {
                    let _ = std::fs::remove_dir_all(&p);
                }
                Ok(_) => {
                    let _ = std::fs::remove_file(&p);
                }
                Err(_) => {}
            }
        }
    }

    /// Records a temporary that now exists (an output group's).
    pub(crate) fn hold_temporary(&self, p: &Path) {
        self.temporaries().insert(p.to_path_buf());
    }

    /// Forgets a temporary that was renamed into place or removed.
    pub(crate) fn release_temporary(&self, p: &Path) {
        self.temporaries().remove(p);
    }

    fn temporaries(&self) -> std::sync::MutexGuard<'_, HashSet<PathBuf>> {
        self.0.temporaries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The guard of [`CancelToken::settle`]: while it lives, no commit of the call starts.
#[must_use = "commits are held off only while the guard lives"]
pub struct Settled<'a> {
    _commits: MutexGuard<'a, ()>,
}

/// The guard of [`CancelToken::committing`].
pub(crate) struct Committing<'a> {
    token: &'a CancelToken,
    _lock: MutexGuard<'a, ()>,
}

impl Drop for Committing<'_> {
    fn drop(&mut self) {
        self.token.0.commits_ended.fetch_add(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_call_leaves_the_next_one_alone() {
        let first = CancelToken::new();
        let in_thread = first.clone();
        std::thread::spawn(move || in_thread.cancel())
            .join()
            .unwrap();
        assert!(first.is_cancelled());
        let second = CancelToken::new();
        assert!(!second.is_cancelled());
        assert!(!second.same_as(&first));
    }
}
