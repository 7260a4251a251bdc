//! What one call carries and touches: its [`CallContext`] (cancel token [`CancelToken`],
//! [`Settings`], work [`Tally`]), the host it runs on and the stable hash of its ids, the
//! network it may use (`net/`: HTTP client, trust) and the files it commits as one group
//! (`output/`).

pub(crate) mod cancel;
pub(crate) mod context;
pub(crate) mod hash;
pub(crate) mod host;
pub(crate) mod net;
pub(crate) mod output;
pub(crate) mod settings;
pub(crate) mod tally;

pub use cancel::CancelToken;
pub use context::CallContext;
pub use settings::{
    FfmpegLog, NetworkSettings, Settings, DEFAULT_DOWNLOAD_LIMIT, DEFAULT_LEASE,
    DEFAULT_NETWORK_DEADLINE, DEFAULT_NETWORK_TIMEOUT,
};
pub use tally::{Counts, Tally};
