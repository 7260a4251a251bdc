//! What one call carries and touches: its [`CallContext`](context::CallContext) (cancel token,
//! settings, work tally), the host it runs on and the stable hash of its ids, the network it
//! may use ([`net`]: HTTP client, trust) and the files it commits as one group ([`output`]).

pub(crate) mod cancel;
pub(crate) mod context;
pub(crate) mod hash;
pub(crate) mod host;
pub(crate) mod net;
pub(crate) mod output;
pub(crate) mod settings;
pub(crate) mod tally;
