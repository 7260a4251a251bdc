//! The call context: what one call carries through every function that needs it, passed by
//! reference (`&CallContext`) down the calls and cloned into every thread the call spawns.
//!
//! - [`CallContext::cancel`]: what stops the call ([`crate::call::cancel`]);
//! - [`CallContext::settings`]: its network timeouts, download limit, lock lease
//!   ([`crate::call::settings`]);
//! - [`CallContext::tally`]: what counts its work, if anything does ([`crate::call::tally`]).
//!
//! [`execute`](crate::execute), [`run_batch`](crate::run_batch) and the other entries build
//! theirs from [`ExecOptions`](crate::ExecOptions) (its `cancel`, `settings` and `tally`),
//! which stays the way a caller configures a call. Functions that read media outside a plan
//! ([`FrameReader`](crate::media::FrameReader), [`probe`](crate::media::probe), ...) run with a fresh
//! context (never cancelled, default settings, nothing counted), or with the one given to
//! their `*_in` form. Nothing is read from the calling thread: which token stops a call and
//! which tally counts it can be read from the signatures.

use crate::call::cancel::CancelToken;
use crate::call::settings::Settings;
use crate::call::tally::{DecoderHeld, Event, Tally};

/// What one call carries (see the module doc). Clones share the token and the tally.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CallContext {
    /// What stops the call: its frame loops, network waits and commits give up once it is
    /// cancelled.
    pub cancel: CancelToken,
    /// The call's network timeouts, download limit and lock lease.
    pub settings: Settings,
    /// Counts the call's work; `None` counts nothing.
    pub tally: Option<Tally>,
    /// The lock of the output folder the call works in (a batch run's), which must still
    /// be its own before each commit; `None` outside a run.
    pub(crate) held: Option<HeldLock>,
}

/// A lock the call holds, as a commit asks it: `check` says why it is no longer the call's
/// (taken over by another run, removed), or nothing while it is.
#[derive(Clone)]
pub(crate) struct HeldLock {
    pub(crate) path: std::path::PathBuf,
    pub(crate) check: std::sync::Arc<dyn Fn() -> Option<String> + Send + Sync>,
}

impl std::fmt::Debug for HeldLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeldLock")
            .field("path", &self.path)
            .finish()
    }
}

impl CallContext {
    /// A context that is never cancelled (unless its token is), with the default settings,
    /// counting nothing.
    pub fn new() -> CallContext {
        CallContext::default()
    }

    /// This context counting on `tally`.
    pub fn with_tally(mut self, tally: Tally) -> CallContext {
        self.tally = Some(tally);
        self
    }

    /// Fails when the call's lock ([`HeldLock`]) is no longer its own: a commit must then
    /// put nothing in place.
    pub(crate) fn check_held(&self) -> crate::error::Result<()> {
        match &self.held {
            Some(h) => match (h.check)() {
                Some(why) => Err(crate::error::Error::Concurrent {
                    path: h.path.clone(),
                    what: format!(
                        "this run no longer holds the lock ({why}), so it stopped before \
                         putting anything more in place; the run that holds it now makes the \
                         rest (run again with --resume once it has finished)"
                    ),
                }),
                None => Ok(()),
            },
            None => Ok(()),
        }
    }

    /// Whether the call was cancelled.
    pub(crate) fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Counts `event` on the call's tally, if it has one.
    pub(crate) fn count(&self, event: Event) {
        if let Some(t) = &self.tally {
            t.add(event);
        }
    }

    /// Counts an open decoder of `threads` (as given to FFmpeg) on the call's tally until the
    /// guard is dropped.
    pub(crate) fn decoder_opened(&self, threads: usize) -> DecoderHeld {
        DecoderHeld::new(self.tally.clone(), threads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_token_and_the_tally_and_two_calls_count_apart() {
        let a = CallContext::new().with_tally(Tally::new());
        let b = CallContext::new().with_tally(Tally::new());
        let in_thread = a.clone();
        std::thread::spawn(move || {
            in_thread.count(Event::Open);
            in_thread.cancel.cancel();
        })
        .join()
        .unwrap();
        b.count(Event::PlanCheck);
        assert!(a.cancelled() && !b.cancelled());
        let (ca, cb) = (a.tally.unwrap().counts(), b.tally.unwrap().counts());
        assert_eq!((ca.opens, ca.plan_checks), (1, 0));
        assert_eq!((cb.opens, cb.plan_checks), (0, 1));
        // Nothing is counted without a tally.
        CallContext::new().count(Event::Open);
    }
}
