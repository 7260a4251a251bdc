//! Who a process is, across the hosts, pods and PID namespaces that may share one output
//! folder: the host name (`/proc/sys/kernel/hostname`, per UTS namespace), the boot id
//! (`/proc/sys/kernel/random/boot_id`, new at every boot) and the PID namespace
//! (`/proc/self/ns/pid`). A process id means something only with all three: two pods on one
//! node share a boot id but not a PID namespace, two nodes may both run a pid 4242.
//!
//! Temporaries carry a short tag of this identity in their names ([`tag`]) and locks record
//! it whole, so cleanup can tell "a dead process here" (removed at once) from "a process
//! elsewhere" (never judged by this machine's `/proc`; only by a lease or an age).

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
        format!("h{:08x}", crate::call::hash::fnv1a(text.as_bytes()) as u32)
    }
}

/// This process's tag (see [`Identity::tag`]).
pub(crate) fn tag() -> &'static str {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| identity().tag())
}

/// What this host's kernel says of a process id, asked with `kill(pid, 0)` (which works
/// whoever owns the process) and, where `/proc` shows it, its start time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Liveness {
    /// The process exists (or may: "cannot tell" is never "dead"). Another user's process
    /// answers `EPERM` and counts here, also where `/proc` hides it (`hidepid=1|2`).
    Alive,
    /// Provably gone: the reason.
    Dead(String),
}

/// The start time of process `pid` (clock ticks after boot, field 22 of `/proc/PID/stat`),
/// or `None` where `/proc` does not show it (another system, `hidepid`, a process gone).
/// With the pid, it names one process for the life of the boot: a pid reused by a later
/// process has a later start.
pub(crate) fn process_start(pid: u32) -> Option<u64> {
    stat_fields(pid).and_then(|(_, start)| start)
}

/// The state letter and start time of `/proc/PID/stat` (`None` when unreadable).
fn stat_fields(pid: u32) -> Option<(char, Option<u64>)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) S ...`: the command may hold spaces and parentheses; the last `)` ends it.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // Fields 3.. are `rest`'s 0..; the start time is field 22.
    let start = fields.nth(22 - 4).and_then(|s| s.parse().ok());
    Some((state, start))
}

/// Whether process `pid` of *this* host and PID namespace lives, and is the one that
/// started at `start` (when the holder recorded it). `kill(pid, 0)`: success or `EPERM`
/// (another user's process, visible in `/proc` or not) is alive, `ESRCH` is gone; a zombie
/// (`Z` in `/proc/PID/stat`, a process killed and not yet reaped) is gone; a start time
/// `/proc` shows that differs from `start` is another process with the same pid. Anything
/// that cannot be asked is alive. Off Linux every process counts as alive.
pub(crate) fn liveness(pid: u32, start: Option<u64>) -> Liveness {
    if pid == std::process::id() {
        return Liveness::Alive;
    }
    if !cfg!(target_os = "linux") {
        return Liveness::Alive;
    }
    #[cfg(unix)]
    {
        let Some(p) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return Liveness::Dead(format!("{pid} is not a process id"));
        };
        match rustix::process::test_kill_process(p) {
            Ok(()) | Err(rustix::io::Errno::PERM) => {}
            Err(rustix::io::Errno::SRCH) => {
                return Liveness::Dead(format!("process {pid} of this host is gone"))
            }
            // Anything else: cannot tell, so alive.
            Err(_) => return Liveness::Alive,
        }
    }
    match stat_fields(pid) {
        Some(('Z' | 'X', _)) => {
            Liveness::Dead(format!("process {pid} of this host has ended (a zombie)"))
        }
        Some((_, Some(now))) if start.is_some_and(|s| s != now) => Liveness::Dead(format!(
            "process {pid} of this host is another process than the holder (started at tick \
             {now}, the holder at {})",
            start.unwrap_or_default()
        )),
        _ => Liveness::Alive,
    }
}

/// Whether a process `pid` of *this* host and PID namespace is alive ([`liveness`] with no
/// start time known).
pub(crate) fn process_alive(pid: u32) -> bool {
    liveness(pid, None) == Liveness::Alive
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
        bytes = crate::call::hash::fnv1a(text.as_bytes()).to_le_bytes();
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
        // This process's start time is readable and names it.
        let me = process_start(std::process::id()).expect("/proc/self shows it");
        assert_eq!(liveness(1, process_start(1)), Liveness::Alive);
        let child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let mut child = child;
        std::thread::sleep(std::time::Duration::from_millis(200));
        // Ended and not reaped: a zombie is gone.
        assert!(
            matches!(liveness(pid, None), Liveness::Dead(_)),
            "{:?}",
            liveness(pid, None)
        );
        child.wait().unwrap();
        assert!(matches!(liveness(pid, None), Liveness::Dead(_)));
        // A live pid whose start time differs is another process.
        let reused = liveness(
            std::os::unix::process::parent_id(),
            Some(me + 1_000_000_000),
        );
        assert!(
            matches!(reused, Liveness::Dead(ref m) if m.contains("another process")),
            "{reused:?}"
        );
    }
}
