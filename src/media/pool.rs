//! The input pool of one processed stream: the inputs its readers share, and the call they
//! read for. The stream owns it and hands it to its readers: a full decode of the video
//! offers its input to the soundtrack's reader of the same source through it
//! ([`crate::media::demux`]), and the soundtrack's reader takes it from there, so that who
//! shares what is the pool's business and no [`Source`] carries an input.
//!
//! An offer is kept for one source (two sources never read each other's input); a reader
//! takes it at most once, and the video side withdraws an offer not taken when it is done.

use std::sync::{Arc, Mutex};

use crate::call::context::CallContext;
use crate::media::demux::SharedDemuxer;
use crate::media::source::Source;

/// The inputs one stream's readers share, and the call they read for (see the module doc).
pub(crate) struct InputPool {
    call: CallContext,
    /// Inputs offered by a full decode to the soundtrack's reader of the same source.
    offers: Mutex<Vec<(Source, Arc<SharedDemuxer>)>>,
}

impl std::fmt::Debug for InputPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputPool").finish_non_exhaustive()
    }
}

/// Two pools are equal only when they are the same pool (a soundtrack's plan compares its
/// segments, and a segment reads through its stream's pool).
impl PartialEq for InputPool {
    fn eq(&self, other: &InputPool) -> bool {
        std::ptr::eq(self, other)
    }
}

impl InputPool {
    /// An empty pool of readers working for the call `call`.
    pub(crate) fn new(call: CallContext) -> Arc<InputPool> {
        Arc::new(InputPool {
            call,
            offers: Mutex::new(Vec::new()),
        })
    }

    /// The call the readers work for: their opens count on its tally and stop when it is
    /// cancelled.
    pub(crate) fn call(&self) -> &CallContext {
        &self.call
    }

    fn offers(&self) -> std::sync::MutexGuard<'_, Vec<(Source, Arc<SharedDemuxer>)>> {
        self.offers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Offers the input a full decode of `source` reads to the soundtrack's reader of the
    /// same source (replacing an offer not taken).
    pub(crate) fn offer(&self, source: &Source, shared: Arc<SharedDemuxer>) {
        let mut offers = self.offers();
        offers.retain(|(s, _)| s != source);
        offers.push((source.clone(), shared));
    }

    /// Takes the input offered for `source`, if any (one reader takes it).
    pub(crate) fn take(&self, source: &Source) -> Option<Arc<SharedDemuxer>> {
        let mut offers = self.offers();
        let at = offers.iter().position(|(s, _)| s == source)?;
        Some(offers.swap_remove(at).1)
    }

    /// Withdraws `shared` if it is still on offer (its video side is done: a reader taking it
    /// now would only find the packets queued for it).
    pub(crate) fn withdraw(&self, shared: &Arc<SharedDemuxer>) {
        self.offers().retain(|(_, o)| !Arc::ptr_eq(o, shared));
    }
}
