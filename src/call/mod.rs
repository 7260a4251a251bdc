//! What one call carries: its [`CallContext`](context::CallContext) of cancel token
//! ([`cancel`]), settings ([`settings`]) and work tally ([`tally`]), and the facts about the
//! process it runs in: who it is ([`host`]) and the stable hash of its ids ([`hash`]).

pub(crate) mod cancel;
pub(crate) mod context;
pub(crate) mod hash;
pub(crate) mod host;
pub(crate) mod net;
pub(crate) mod output;
pub(crate) mod settings;
pub(crate) mod tally;
