//! What one call carries: its [`CallContext`] of cancel token ([`CancelToken`]), settings
//! ([`Settings`]) and work tally ([`Tally`]), and the facts about the process it runs in: who
//! it is (`host`) and the stable hash of its ids (`hash`).

pub(crate) mod cancel;
pub(crate) mod context;
pub(crate) mod hash;
pub(crate) mod host;
pub(crate) mod settings;
pub(crate) mod tally;

pub use cancel::CancelToken;
pub use context::CallContext;
pub use settings::{
    FfmpegLog, NetworkSettings, Settings, DEFAULT_DOWNLOAD_LIMIT, DEFAULT_LEASE,
    DEFAULT_NETWORK_DEADLINE, DEFAULT_NETWORK_TIMEOUT,
};
pub use tally::{Counts, Tally};
