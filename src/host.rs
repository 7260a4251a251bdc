//! Who a process is, across the hosts, pods and PID namespaces that may share one output
//! folder: the host name (`/proc/sys/kernel/hostname`, per UTS namespace), the boot id
//! (`/proc/sys/kernel/random/boot_id`, new at every boot) and the PID namespace
//! (`/proc/self/ns/pid`). A process id means something only with all three: two pods on one
//! node share a boot id but not a PID namespace, two nodes may both run a pid 4242.
//!
//! Temporaries carry a short tag of this identity in their names ([`tag`]) and locks record
//! it whole, so cleanup can tell "a dead process here" (removed at once) from "a process
//! elsewhere" (never judged by this machine's `/proc`; only by a lease or an age).

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

/// The identity of this process's host, as locks record it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    /// The host name (empty when the system does not say).
    pub host: String,
    /// The boot id (empty off Linux).
    pub boot_id: String,
    /// The PID namespace, `pid:[4026531836]` (empty off Linux).
    pub pid_ns: String,
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// This process's identity (read once).
pub(crate) fn identity() -> &'static Identity {
    static ID: OnceLock<Identity> = OnceLock::new();
    ID.get_or_init(|| {
        let mut host = read_trimmed("/proc/sys/kernel/hostname");
        if host.is_empty() {
            host = read_trimmed("/etc/hostname");
        }
        Identity {
            host,
            boot_id: read_trimmed("/proc/sys/kernel/random/boot_id"),
            pid_ns: std::fs::read_link("/proc/self/ns/pid")
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        }
    })
}

impl Identity {
    /// The tag temporaries carry: `h` and 8 hex digits of a hash of the identity.
    pub(crate) fn tag(&self) -> String {
        let text = format!("{}\0{}\0{}", self.host, self.boot_id, self.pid_ns);
        format!("h{:08x}", crate::hash::fnv1a(text.as_bytes()) as u32)
    }
}

/// This process's tag (see [`Identity::tag`]).
pub(crate) fn tag() -> &'static str {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| identity().tag())
}

/// Whether a process `pid` of *this* host and PID namespace is alive. Off Linux, where
/// there is no `/proc` to ask, every process counts as alive.
pub(crate) fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}

/// A random token (16 hex digits) that names one lock holder.
pub(crate) fn random_token() -> String {
    let mut bytes = [0u8; 8];
    let from_urandom = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .is_ok();
    if !from_urandom {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let text = format!("{now}-{}-{:p}", std::process::id(), &bytes);
        bytes = crate::hash::fnv1a(text.as_bytes()).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How long a temporary of another host (or another PID namespace) must lie untouched,
/// itself and everything in it, before any run removes it: a day. (A batch removes the
/// temporaries of a lock holder it took over at once.)
pub const STALE_TEMPORARY: Duration = Duration::from_secs(24 * 3600);

/// Parses a temporary's name (after the prefix): `(tag, pid)` for `h1a2b3c4d-PID-N.what`,
/// `(None, pid)` for the older `PID-N.what` (which names no host).
pub(crate) fn temp_owner(rest: &str) -> Option<(Option<&str>, u32)> {
    let mut parts = rest.split('-');
    let first = parts.next()?;
    if first.len() == 9 && first.starts_with('h') {
        let pid = parts.next()?.parse().ok()?;
        return Some((Some(first), pid));
    }
    Some((None, first.parse().ok()?))
}

/// Parallel workers for a setting where 0 means one per core.
pub(crate) fn worker_count(setting: usize) -> usize {
    if setting == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    } else {
        setting
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_and_names() {
        let t = tag();
        assert_eq!(t.len(), 9);
        assert!(t.starts_with('h'));
        assert_eq!(temp_owner(&format!("{t}-42-0.tmp")), Some((Some(t), 42)));
        assert_eq!(temp_owner("42-0.tmp"), Some((None, 42)));
        assert_eq!(temp_owner("x-0.tmp"), None);
        assert_ne!(random_token(), random_token());
        assert_eq!(random_token().len(), 16);
        assert!(process_alive(std::process::id()));
    }
}
