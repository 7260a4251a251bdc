//! vidprep's own HTTP: the small client that asks an http(s) server for a URL source's
//! validators and downloads a file whose server ignores ranges (`remote`), and the
//! certificate authorities every https connection trusts (`trust`), its own and FFmpeg's.
//! Below `media/`, which opens URLs with them; nothing here knows FFmpeg.

pub(crate) mod remote;
pub(crate) mod trust;
