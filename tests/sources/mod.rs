//! Sources: image sequences and other shapes, URLs (servers users have, TLS trust), and inputs
//! that change while they are read.

mod changes;
mod network;
mod shapes;
mod tls;
