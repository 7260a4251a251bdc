//! Many hosts, one output folder (`docs/cluster.md`): temporaries and locks carry their
//! host's identity, so a run removes only what is provably dead; locks have a lease that
//! another host takes over once it expires; shards of different counts never share a folder;
//! a lock is created whole or not at all.
//!
//! The multi-host test runs shards in their own PID and UTS namespaces (`unshare`), with
//! other host names, on one folder, kills one with SIGKILL and requeues it on a third "host".

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use super::*;

/// This process's host identity as a lock records it (the vidprep it starts shares it).
fn here() -> serde_json::Value {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    serde_json::json!({
        "host": read("/proc/sys/kernel/hostname"),
        "boot_id": read("/proc/sys/kernel/random/boot_id"),
        "pid_ns": std::fs::read_link("/proc/self/ns/pid").unwrap().display().to_string(),
    })
}

/// A lock at `out/NAME` held by `pid` with `identity`, for `manifest` and `shard`.
fn lock(d: &Path, name: &str, pid: u32, identity: serde_json::Value, shard: &str, lease: u64) {
    let mut l = identity;
    l["pid"] = pid.into();
    l["token"] = "0123456789abcdef".into();
    l["manifest"] = std::fs::canonicalize(d.join("m.jsonl"))
        .unwrap()
        .display()
        .to_string()
        .into();
    l["shard"] = shard.into();
    l["started_unix"] = 0.into();
    l["lease_seconds"] = lease.into();
    std::fs::create_dir_all(d.join("out")).unwrap();
    std::fs::write(d.join("out").join(name), l.to_string()).unwrap();
}

/// A manifest of `n` small clips of the base video, ids `i0..`.
fn items(d: &Path, n: usize) {
    let lines: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"id": "i{i}", "source": "g.mp4", "end": 10, "exports": [{{"kind": "clip", "preset": "ultrafast"}}]}}"#))
        .collect();
    manifest(d, "m.jsonl", &lines);
}

/// Sets the modification time of `p` to `ago` before now.
fn age(p: &Path, ago: Duration) {
    std::fs::File::options()
        .append(true)
        .open(p)
        .unwrap()
        .set_modified(SystemTime::now() - ago)
        .unwrap();
}

#[test]
fn shards_of_another_count_are_refused() {
    check(
        case(
            "shard 1/3 beside a live 0/2",
            &["run", "m.jsonl", "--out-dir", "out", "--shard", "1/3"],
            &[2],
        )
        .says("another shard count")
        .with(|d| {
            items(d, 4);
            // Shard 0/2, held by a live process of this host (pid 1).
            lock(d, ".vidprep-lock.shard-0-of-2", 1, here(), "0/2", 120);
        }),
    );
}

#[test]
fn shards_of_one_count_share_the_folder() {
    check(
        case(
            "shard 1/2 beside a live 0/2",
            &["run", "m.jsonl", "--out-dir", "out", "--shard", "1/2"],
            &[0],
        )
        .writes("out/i0")
        .writes("out/i1")
        .writes("out/i2")
        .writes("out/i3")
        .writes("out/report.shard-1-of-2.jsonl")
        .with(|d| {
            items(d, 4);
            lock(d, ".vidprep-lock.shard-0-of-2", 1, here(), "0/2", 120);
        }),
    );
}

#[test]
fn an_empty_lock_is_refused_while_young() {
    check(
        case(
            "a fresh empty lock",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[2],
        )
        .says("an empty lock")
        .says(".vidprep-lock")
        .with(|d| {
            items(d, 1);
            std::fs::create_dir(d.join("out")).unwrap();
            std::fs::write(d.join("out/.vidprep-lock"), "").unwrap();
        }),
    );
}

#[test]
fn an_empty_lock_older_than_the_lease_is_taken_over() {
    check(
        case(
            "an empty lock an hour old",
            &["run", "m.jsonl", "--out-dir", "out"],
            &[0],
        )
        .writes("out")
        .with(|d| {
            items(d, 1);
            std::fs::create_dir(d.join("out")).unwrap();
            std::fs::write(d.join("out/.vidprep-lock"), "").unwrap();
            age(&d.join("out/.vidprep-lock"), Duration::from_secs(3600));
        })
        .then(|d| {
            let left = d.join("out/.vidprep-lock").exists();
            (!left && d.join("out/i0/item.json").is_file())
                .then_some(())
                .ok_or("the lock was not taken over".to_string())
        }),
    );
}

#[test]
fn another_hosts_lock_is_taken_over_after_its_lease() {
    let started = Instant::now();
    check(
        case(
            "another host's lock, not renewed",
            &["run", "m.jsonl", "--out-dir", "out", "--shard", "0/2"],
            &[0],
        )
        .says("waiting up to")
        .writes("out")
        .with(|d| {
            items(d, 4);
            let mut elsewhere = here();
            elsewhere["host"] = "node-17".into();
            lock(d, ".vidprep-lock.shard-0-of-2", 1, elsewhere, "0/2", 2);
        })
        .then(|d| {
            let report = std::fs::read_to_string(d.join("out/report.shard-0-of-2.jsonl"))
                .map_err(|e| e.to_string())?;
            (!report.contains("failed")).then_some(()).ok_or(report)
        }),
    );
    assert!(started.elapsed() >= Duration::from_millis(1500));
}

#[test]
fn another_hosts_live_lock_is_refused() {
    // A lock renewed while the run waits: its holder lives, wherever it is.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    items(d, 2);
    let mut elsewhere = here();
    elsewhere["host"] = "node-17".into();
    lock(d, ".vidprep-lock", 1, elsewhere, "0/1", 5);
    let path = d.join("out/.vidprep-lock");
    let renewing = std::sync::atomic::AtomicBool::new(true);
    std::thread::scope(|s| {
        s.spawn(|| {
            while renewing.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(300));
                age(&path, Duration::ZERO);
            }
        });
        let out = vidprep()
            .current_dir(d)
            .args(["run", "m.jsonl", "--out-dir", "out"])
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        renewing.store(false, std::sync::atomic::Ordering::SeqCst);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("in use") && stderr.contains("node-17"),
            "{stderr}"
        );
    });
    assert!(path.is_file() && !d.join("out/i0").exists());
}

#[test]
fn live_temporaries_of_another_host_are_kept() {
    // Another host's shard is writing item i1 (its temporary names a pid this host does not
    // have): a shard run here never removes it.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    items(d, 6);
    let theirs = [
        d.join("out/.vidprep-tmp-h0badbeef-4000000-0.i1.tmpdir"),
        d.join("out/.vidprep-tmp-h0badbeef-4000000-1.tmp"),
    ];
    std::fs::create_dir_all(&theirs[0]).unwrap();
    std::fs::write(theirs[0].join("clip.mp4"), b"half an mp4").unwrap();
    std::fs::write(&theirs[1], b"half a report").unwrap();
    for shard in ["0/2", "1/2"] {
        vidprep()
            .current_dir(d)
            .args(["run", "m.jsonl", "--out-dir", "out", "--shard", shard])
            .assert()
            .success();
    }
    for t in &theirs {
        assert!(t.exists(), "{t:?} was removed");
    }
}

/// Whether this machine lets us make PID, UTS and mount namespaces.
fn unshare_works() -> bool {
    std::process::Command::new("unshare")
        .args([
            "--pid",
            "--uts",
            "--fork",
            "--mount-proc",
            "hostname",
            "probe",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `vidprep ARGS` in new PID, UTS and mount namespaces under the host name `host`, in its
/// own process group (so SIGKILL reaches all of it).
fn on_host(d: &Path, host: &str, args: &[&str], lease: &str) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    std::process::Command::new("unshare")
        // --kill-child: a SIGKILL of unshare itself takes its namespace down with it.
        .args([
            "--pid",
            "--uts",
            "--fork",
            "--kill-child",
            "--mount-proc",
            "sh",
            "-c",
        ])
        .arg("hostname \"$0\" && exec \"$@\"")
        .arg(host)
        .arg(bin)
        .args(args)
        .current_dir(d)
        .env("VIDPREP_LOCK_LEASE_SECONDS", lease)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap()
}

fn report_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn shards_on_several_hosts_share_one_folder() {
    if !unshare_works() {
        crate::common::skip::skip(
            crate::common::skip::Needs::Fleet,
            "unshare --pid --uts --fork --mount-proc is not permitted here",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = SynthVideo::new(320, 240).frames(120).cached();
    let n = 12;
    let lines: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id": "i{i}", "source": {:?}, "exports": [{{"kind": "clip", "preset": "medium"}}]}}"#,
                src.path
            )
        })
        .collect();
    manifest(d, "m.jsonl", &lines);
    let run = |shard: &'static str| {
        [
            "run",
            "m.jsonl",
            "--out-dir",
            "out",
            "--shard",
            shard,
            "--jobs",
            "1",
            "--resume",
        ]
    };
    // Shard 0 on host-a, shard 1 on host-b; the lease is short (2 s) so the test is quick.
    let shard0 = on_host(d, "host-a", &run("0/2"), "2");
    let shard1 = on_host(d, "host-b", &run("1/2"), "2");
    // Kill host-b's shard once it has finished one item (and is in the middle of the next).
    let out = d.join("out");
    let t0 = Instant::now();
    let ids1: Vec<String> = (0..n)
        .map(|i| format!("i{i}"))
        .filter(|id| vidprep::batch::shard_of(id, 2) == 1)
        .collect();
    assert!(ids1.len() >= 3, "{ids1:?}");
    while !ids1
        .iter()
        .any(|id| out.join(id).join("item.json").is_file())
        && t0.elapsed() < Duration::from_secs(120)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut shard1 = shard1;
    assert!(support::send_signal("KILL", &format!("-{}", shard1.id())));
    // And unshare itself (its --kill-child ends the namespace), in case the group kill did
    // not reach it.
    let _ = shard1.kill();
    let killed = shard1.wait_with_output().unwrap();
    assert!(
        out.join(".vidprep-lock.shard-1-of-2").is_file(),
        "the killed shard left no lock ({:?}): {}",
        killed.status,
        String::from_utf8_lossy(&killed.stderr)
    );
    // Requeued on host-c: it waits out host-b's lease, takes the lock over, finishes.
    let requeued = on_host(d, "host-c", &run("1/2"), "2")
        .wait_with_output()
        .unwrap();
    let stderr1 = String::from_utf8_lossy(&requeued.stderr).to_string();
    assert_eq!(
        requeued.status.code(),
        Some(0),
        "requeued shard 1: {stderr1}"
    );
    assert!(stderr1.contains("waiting up to"), "{stderr1}");
    let done0 = shard0.wait_with_output().unwrap();
    let stderr0 = String::from_utf8_lossy(&done0.stderr).to_string();
    assert_eq!(done0.status.code(), Some(0), "shard 0 on host-a: {stderr0}");
    // Every item done once, by its own shard; nothing failed; nothing temporary left.
    let r0 = report_lines(&out.join("report.shard-0-of-2.jsonl"));
    let r1 = report_lines(&out.join("report.shard-1-of-2.jsonl"));
    assert_eq!(r0.len() + r1.len(), n, "{r0:?} {r1:?}");
    for r in r0.iter().chain(&r1) {
        let id = r["id"].as_str().unwrap();
        assert!(r["status"] == "ok" || r["status"] == "skipped", "{id}: {r}");
        let dir = out.join(id);
        assert!(
            dir.join("clip.mp4").is_file() && dir.join("item.json").is_file(),
            "{id}"
        );
        assert_eq!(
            common::oracle::count_frames(&dir.join("clip.mp4")),
            120,
            "{id}"
        );
    }
    assert!(r0.iter().all(|r| r["status"] == "ok"), "{r0:?}");
    let left: Vec<String> = walkdir::WalkDir::new(&out)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("vidprep-tmp") || n.starts_with(".vidprep-lock"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_full_disk_never_leaves_an_empty_lock() {
    // The output folder on a full 256 KiB tmpfs (in a private mount namespace): the run
    // fails naming the lock, and leaves no lock (empty or not) and no temporary.
    let probe = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("d=$(mktemp -d) && mount -t tmpfs -o size=256k none \"$d\" && umount \"$d\"; rmdir \"$d\"")
        .stderr(std::process::Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        crate::common::skip::skip(
            crate::common::skip::Needs::Fleet,
            "unshare --mount / mount -t tmpfs is not permitted here",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    base(d);
    items(d, 1);
    std::fs::create_dir(d.join("out")).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    let script = r#"mount -t tmpfs -o size=256k none out || exit 99
dd if=/dev/zero of=out/fill bs=4k 2>/dev/null
"$0" run m.jsonl --out-dir out
echo "exit=$?"
rm out/fill
ls -A out
"#;
    let out = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", script])
        .arg(&bin)
        .current_dir(d)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut lines = stdout.lines();
    let code = lines.next().unwrap_or_default();
    let left: Vec<&str> = lines.collect();
    assert!(code == "exit=2" || code == "exit=1", "{stdout}\n{stderr}");
    assert!(stderr.contains(".vidprep-lock"), "{stderr}");
    assert!(left.is_empty(), "left on the full disk: {left:?}\n{stderr}");
}

#[test]
fn a_shard_in_its_own_pid_namespace_keeps_the_other_shards_temporaries() {
    // The issue's case: shard 0/2 runs plainly, shard 1/2 under `unshare --pid --fork
    // --mount-proc` (same host name, other PID namespace) on one folder. Shard 1 must not
    // take shard 0's live temporaries for a dead process's.
    if !unshare_works() {
        crate::common::skip::skip(
            crate::common::skip::Needs::Fleet,
            "unshare --pid --fork --mount-proc is not permitted here",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = SynthVideo::new(320, 240).frames(120).cached();
    let lines: Vec<String> = (0..10)
        .map(|i| {
            format!(
                r#"{{"id": "i{i}", "source": {:?}, "exports": [{{"kind": "clip", "preset": "medium"}}]}}"#,
                src.path
            )
        })
        .collect();
    manifest(d, "m.jsonl", &lines);
    let bin = assert_cmd::cargo::cargo_bin("vidprep");
    let shard = |s: &str| {
        [
            "run",
            "m.jsonl",
            "--out-dir",
            "out",
            "--shard",
            s,
            "--jobs",
            "1",
        ]
        .map(String::from)
    };
    let plain = std::process::Command::new(&bin)
        .args(shard("0/2"))
        .current_dir(d)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let namespaced = std::process::Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc"])
        .arg(&bin)
        .args(shard("1/2"))
        .current_dir(d)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for (name, child) in [
        ("shard 0/2", plain),
        ("shard 1/2 (own PID namespace)", namespaced),
    ] {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for i in 0..10 {
        let clip = d.join(format!("out/i{i}/clip.mp4"));
        assert_eq!(common::oracle::count_frames(&clip), 120, "i{i}");
    }
}
