//! https sources (issue 44): vidprep's own requests and FFmpeg's reads trust the system's
//! certificate authorities, `SSL_CERT_FILE` and `SSL_CERT_DIR` as Python's `ssl` and curl do,
//! and refuse a server whose certificate no trusted authority signed, naming the URL and why.
//!
//! The server is Python's `http.server` over `ssl` (`support/tls_server.py`, range requests, so
//! that FFmpeg reads the URL itself); its certificates are made here with the openssl CLI: a
//! test authority and a `localhost` certificate it signs, and a self-signed one made as
//! `openssl req -x509` makes it (CA:TRUE). Oracle: the same command on the local file.

use crate::common;
use crate::support;

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::synth::SynthVideo;
use support::vidprep;

/// `openssl ARGS` in `dir`, or `None` (with a message) without the openssl CLI.
fn openssl(dir: &Path, args: &[&str]) -> Option<()> {
    let out = match Command::new("openssl").args(args).current_dir(dir).output() {
        Ok(out) => out,
        Err(_) => {
            return crate::common::skip::skipped(
                crate::common::skip::Needs::Tools,
                "the openssl CLI is not installed",
            );
        }
    };
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(())
}

/// A test authority (`ca.pem`), a `localhost` certificate it signs (`leaf.pem`, `leaf.key`)
/// and a self-signed CA:TRUE one (`self.pem`, `self.key`), in `dir`.
fn certificates(dir: &Path) -> Option<()> {
    let subj_ca = "/CN=vidprep test authority";
    openssl(
        dir,
        &[
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
            "-days", "2", "-subj", subj_ca,
        ],
    )?;
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "leaf.key",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=localhost",
        ],
    )?;
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    )?;
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "self.key",
            "-out",
            "self.pem",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
    )
}

/// The https server on `root`'s files with `cert`/`key`, and its port.
struct TlsServer {
    child: Child,
    port: u16,
}

impl TlsServer {
    fn start(root: &Path, cert: &Path, key: &Path) -> TlsServer {
        let script = crate::repo_root().join("tests/support/tls_server.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(cert)
            .arg(key)
            .current_dir(root)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the server prints its port");
        TlsServer { child, port }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut cmd = vidprep();
    // No trust from the machine running the tests but what each case names.
    cmd.env_remove("SSL_CERT_FILE").env_remove("SSL_CERT_DIR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn https_trusts_the_named_authorities_and_refuses_others_naming_why() {
    if Command::new("python3").arg("--version").output().is_err() {
        crate::common::skip::skip(
            crate::common::skip::Needs::Tools,
            "python3 is not installed",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    if certificates(dir.path()).is_none() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let video = SynthVideo::new(320, 240).frames(50).gop(10).cached().path;
    std::fs::copy(&video, root.path().join("v.mp4")).unwrap();
    let server = TlsServer::start(
        root.path(),
        &dir.path().join("leaf.pem"),
        &dir.path().join("leaf.key"),
    );
    let url = format!("https://localhost:{}/v.mp4", server.port);
    let ca = dir.path().join("ca.pem");
    let ca = ca.to_str().unwrap();

    // SSL_CERT_FILE naming the authority: the URL reads as the file does (FFmpeg reads it in
    // ranges over TLS, verifying against the same bundle).
    let local = tempfile::tempdir().unwrap();
    let from_file = run(
        &[],
        &[
            "export",
            "frames",
            video.to_str().unwrap(),
            "--count",
            "4",
            "--out-dir",
            local.path().join("a").to_str().unwrap(),
        ],
    );
    assert!(from_file.status.success(), "{}", text(&from_file.stderr));
    let from_url = run(
        &[("SSL_CERT_FILE", ca)],
        &[
            "export",
            "frames",
            &url,
            "--count",
            "4",
            "--out-dir",
            local.path().join("b").to_str().unwrap(),
        ],
    );
    assert!(from_url.status.success(), "{}", text(&from_url.stderr));
    for i in 0..4 {
        let name = |d: &str| -> Vec<u8> {
            let mut names: Vec<_> = std::fs::read_dir(local.path().join(d))
                .unwrap()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jpg"))
                .collect();
            names.sort();
            std::fs::read(&names[i]).unwrap()
        };
        assert_eq!(
            name("a"),
            name("b"),
            "frame {i} over https differs from the file's"
        );
    }

    // SSL_CERT_DIR naming a folder with the authority: the same.
    let certs = tempfile::tempdir().unwrap();
    std::fs::copy(dir.path().join("ca.pem"), certs.path().join("test-ca.pem")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = run(
        &[
            ("SSL_CERT_DIR", certs.path().to_str().unwrap()),
            ("TMPDIR", tmp.path().to_str().unwrap()),
        ],
        &["probe", &url],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));

    // No trust in the test authority (only the system's): refused, naming the URL and why.
    let out = run(
        &[("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt")],
        &["probe", &url],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&url) && err.contains("not signed by an authority this system trusts"),
        "{err}"
    );
    assert!(err.contains("SSL_CERT_FILE"), "{err}");

    // An SSL_CERT_FILE that is not there is named.
    let out = run(
        &[("SSL_CERT_FILE", "/nonexistent/ca.pem")],
        &["probe", &url],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("SSL_CERT_FILE /nonexistent/ca.pem"), "{err}");
    drop(server);

    // A self-signed CA:TRUE certificate trusted by name: TLS verifiers refuse a CA
    // certificate as the server's own; the message says so and what to do.
    let server = TlsServer::start(
        root.path(),
        &dir.path().join("self.pem"),
        &dir.path().join("self.key"),
    );
    let url = format!("https://localhost:{}/v.mp4", server.port);
    let own = dir.path().join("self.pem");
    let out = run(
        &[("SSL_CERT_FILE", own.to_str().unwrap())],
        &["probe", &url],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&url) && err.contains("CA:TRUE") && err.contains("signed by that authority"),
        "{err}"
    );
}
