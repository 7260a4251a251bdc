//! Sources: image sequences and other shapes, URLs (servers users have, TLS trust), and inputs
//! that change while they are read.

// inputs changed while read (was tests/source_changes.rs)
mod changes;
// URL sources against real servers (was tests/net_sources.rs)
mod network;
// image sequences and other source shapes (was tests/sources.rs)
mod shapes;
// TLS trust of https sources (was tests/net_tls.rs)
mod tls;
