//! Cancellation: a [`CancelToken`] that one call carries, so that stopping one call (the CLI's
//! Ctrl-C, a Python `KeyboardInterrupt`) stops that call's work and nothing else, and the next
//! call starts with a fresh token.
//!
//! A call's token travels in [`ExecOptions::cancel`](crate::ExecOptions) (and so in
//! [`BatchOptions::exec`](crate::BatchOptions)). While the work runs, the token is also the
//! *current* token of every thread working for the call: [`execute`](crate::execute) enters it
//! ([`CancelToken::enter`]), and each thread the library spawns enters its parent's
//! ([`CancelToken::current`]). Code deep in the stack (a frame loop, FFmpeg's interrupt
//! callback, which runs on the thread doing the I/O) asks [`cancelled`] without the token
//! having to be passed through every function.
//!
//! The token also holds the temporaries the call's output groups have on disk at the moment,
//! so that a signal handler about to end the process can remove them
//! ([`CancelToken::remove_temporaries`]): state of one call, not of the process.

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

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
}

thread_local! {
    static CURRENT: RefCell<Option<CancelToken>> = const { RefCell::new(None) };
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

    /// The token of the call this thread works for (a fresh, never-cancelled one when none was
    /// entered). `ExecOptions::default()` takes it, so a caller that entered its token (the
    /// CLI does once, in `main`) need not set it in every options struct.
    pub fn current() -> CancelToken {
        CURRENT.with(|c| c.borrow().clone()).unwrap_or_default()
    }

    /// Makes this token the current one of this thread until the guard is dropped (the
    /// previous one is restored then).
    pub fn enter(&self) -> Entered {
        let previous = CURRENT.with(|c| c.borrow_mut().replace(self.clone()));
        Entered { previous }
    }

    /// Whether two handles share one flag.
    pub fn same_as(&self, other: &CancelToken) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Removes every temporary file and folder the call's output groups have on disk now:
    /// for a signal handler that is about to end the process (the command line's, when the
    /// work has not stopped within seconds of a Ctrl-C), so that nothing half-written
    /// survives. A call that ends by itself removes its own temporaries.
    pub fn remove_temporaries(&self) {
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

/// Whether the current token of this thread (see [`CancelToken::current`]) is cancelled.
pub fn cancelled() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(CancelToken::is_cancelled))
}

/// The guard of [`CancelToken::enter`].
#[must_use = "the token is current only while the guard lives"]
pub struct Entered {
    previous: Option<CancelToken>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_call_leaves_the_next_one_alone() {
        let first = CancelToken::new();
        {
            let _g = first.enter();
            first.cancel();
            assert!(cancelled());
        }
        assert!(!cancelled());
        let second = CancelToken::new();
        let _g = second.enter();
        assert!(!cancelled());
        assert!(first.is_cancelled());
    }

    #[test]
    fn spawned_threads_carry_the_token_they_are_given() {
        let token = CancelToken::new();
        let _g = token.enter();
        let inherited = CancelToken::current();
        assert!(inherited.same_as(&token));
        token.cancel();
        let seen = std::thread::spawn(move || {
            let _g = inherited.enter();
            cancelled()
        })
        .join()
        .unwrap();
        assert!(seen);
        // A thread that entered nothing sees no cancellation.
        assert!(!std::thread::spawn(cancelled).join().unwrap());
    }
}
