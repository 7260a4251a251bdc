//! What vidprep itself asks an http(s) server, beside FFmpeg's own reads of a URL source:
//!
//! - **Validators.** Before FFmpeg opens a URL, one `GET` with `Range: bytes=0-0` (a `HEAD`
//!   is refused by URLs signed for `GET`) takes the resource's validators (`ETag`,
//!   `Last-Modified`, its size from `Content-Range`); every later open of the same
//!   [`Source`](crate::media::Source) and the end of the item ([`Remote::check_unchanged`])
//!   take them again. A resource that changed between them would give outputs mixing two
//!   files, so the read fails naming the URL and what changed. FFmpeg's http protocol does
//!   not expose these headers, hence this small client (`ureq`).
//! - **Downloads.** A server that answers the range request with the whole file (`200`, as
//!   Python's `http.server` does) cannot serve the seeks vidprep makes, so the file is
//!   downloaded once into an unnamed temporary file (in the system temporary folder,
//!   `TMPDIR`), bounded by the download limit ([`crate::call::NetworkSettings::download_limit`]), and FFmpeg reads that copy. The copy lives as
//!   long as the `Source` (and its clones); on Linux it never has a name, so nothing is left
//!   behind even by `kill -9`.
//!
//! A server that gives neither ranges nor a size (a live or looping stream) is refused.
//!
//! Every request asks for the bytes as they are (`Accept-Encoding: identity`, FFmpeg's too:
//! [`crate::media::source::url_recipe`]), and an answer whose body is encoded anyway
//! (`Content-Encoding: gzip`) is refused: its size says nothing of what it unpacks to (a 1 MB
//! gzip bomb unpacks to 1 GiB), and it cannot be read in ranges. A download that the server
//! sends slower than the minimum rate ([`crate::call::NetworkSettings::min_rate`]) fails, naming the
//! URL and the rate, as FFmpeg's reads of a URL do.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::call::context::CallContext;
use crate::error::{bytes_text, Error, Result};

/// What identifies one version of a remote resource (as `item.json` records it for a URL
/// source, so that `--resume` can ask the server whether it is still that version).
#[derive(
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub(crate) struct Validators {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_modified: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

/// The resource's validators now (one 1-byte range request), whatever was seen before.
pub(crate) fn current_validators(url: &Path, ctx: &CallContext) -> Result<Validators> {
    let response = request(url, ctx.settings.network.timeout, ctx)?;
    Ok(Validators::of(&response))
}

impl Validators {
    /// Whether these name one version of the resource: an ETag or a Last-Modified date (a
    /// size alone does not: a file rewritten with as many bytes keeps it).
    pub(crate) fn identify_a_version(&self) -> bool {
        self.etag.is_some() || self.last_modified.is_some()
    }

    fn of(response: &ureq::http::Response<ureq::Body>) -> Validators {
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(|v| v.trim().to_string())
        };
        let size = match response.status().as_u16() {
            // `Content-Range: bytes 0-0/TOTAL` (TOTAL may be `*`).
            206 => header("content-range")
                .and_then(|r| r.rsplit_once('/').and_then(|(_, t)| t.trim().parse().ok())),
            _ => header("content-length").and_then(|l| l.parse().ok()),
        };
        Validators {
            etag: header("etag"),
            last_modified: header("last-modified"),
            size,
        }
    }

    /// What differs from `before`, in words.
    fn changes_since(&self, before: &Validators) -> Vec<String> {
        let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
        let mut out = Vec::new();
        if self.etag != before.etag {
            out.push(format!(
                "its ETag was {} and is now {}",
                text(&before.etag),
                text(&self.etag)
            ));
        }
        if self.last_modified != before.last_modified {
            out.push(format!(
                "its Last-Modified was {} and is now {}",
                text(&before.last_modified),
                text(&self.last_modified)
            ));
        }
        if self.size != before.size {
            let size = |s: Option<u64>| s.map_or("unknown".into(), bytes_text);
            out.push(format!(
                "its size was {} and is now {}",
                size(before.size),
                size(self.size)
            ));
        }
        out
    }
}

/// A whole-file copy of a URL in an unnamed temporary file.
#[derive(Debug)]
struct Download {
    /// Keeps the copy alive (an unnamed file exists while a descriptor is open).
    _file: std::fs::File,
    /// Where FFmpeg opens it: `/proc/self/fd/N` (a fresh descriptor of the unnamed file).
    path: PathBuf,
    /// Off Linux: the named temporary, removed when dropped.
    _named: Option<tempfile::TempPath>,
}

#[derive(Debug)]
struct Contact {
    validators: Validators,
    download: Option<Download>,
}

/// What vidprep learnt of one URL source: shared by the clones of one
/// [`Source`](crate::media::Source), so that every open of it (the frame table, the decoders)
/// is checked against the first one and reads the same download.
#[derive(Debug, Default)]
pub(crate) struct Remote {
    first: Mutex<Option<Arc<Contact>>>,
}

impl Remote {
    /// The first contact with `url`, made once.
    fn first(&self, url: &Path, ctx: &CallContext) -> Result<Arc<Contact>> {
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = &*first {
            return Ok(c.clone());
        }
        let contact = Arc::new(first_contact(url, ctx)?);
        *first = Some(contact.clone());
        Ok(contact)
    }

    /// The validators of the resource as first seen, if it was contacted (no request).
    pub(crate) fn seen(&self) -> Option<Validators> {
        let first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        first.as_ref().map(|c| c.validators.clone())
    }

    /// The validators of the resource as first seen.
    pub(crate) fn validators(&self, url: &Path, ctx: &CallContext) -> Result<Validators> {
        Ok(self.first(url, ctx)?.validators.clone())
    }

    /// Called before FFmpeg opens `url`: the local copy to open instead (a server without
    /// range requests), or `None` to open the URL, after checking that the resource is the
    /// one first seen.
    pub(crate) fn open(&self, url: &Path, ctx: &CallContext) -> Result<Option<PathBuf>> {
        let seen = self
            .first
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        let contact = self.first(url, ctx)?;
        if let Some(d) = &contact.download {
            return Ok(Some(d.path.clone()));
        }
        if seen {
            self.compare(url, &contact.validators, ctx)?;
        }
        Ok(None)
    }

    /// Checks, once the reads are done, that the resource is still the one first seen (a
    /// downloaded copy cannot change).
    pub(crate) fn check_unchanged(&self, url: &Path, ctx: &CallContext) -> Result<()> {
        let first = self.first.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match first {
            Some(c) if c.download.is_none() => self.compare(url, &c.validators, ctx),
            _ => Ok(()),
        }
    }

    fn compare(&self, url: &Path, before: &Validators, ctx: &CallContext) -> Result<()> {
        match self.changes(url, before, ctx)? {
            None => Ok(()),
            Some(changes) => Err(changed(url, &changes)),
        }
    }

    /// What changed in the resource since `before`, or `None` if nothing did.
    fn changes(
        &self,
        url: &Path,
        before: &Validators,
        ctx: &CallContext,
    ) -> Result<Option<Vec<String>>> {
        let response = request(url, ctx.settings.network.timeout, ctx)?;
        let now = Validators::of(&response);
        drop(response);
        let changes = now.changes_since(before);
        Ok((!changes.is_empty()).then_some(changes))
    }

    /// After FFmpeg failed to open or read `url`: the error saying the file changed, if it
    /// did (a change in the middle of FFmpeg's own range requests shows as data FFmpeg cannot
    /// read), or `None` (the failure has another cause, or the server cannot be asked).
    pub(crate) fn change_behind_failure(&self, url: &Path, ctx: &CallContext) -> Option<Error> {
        let first = self
            .first
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()?;
        if first.download.is_some() {
            return None;
        }
        match self.changes(url, &first.validators, ctx) {
            Ok(Some(changes)) => Some(changed(url, &changes)),
            _ => None,
        }
    }
}

fn changed(url: &Path, changes: &[String]) -> Error {
    network(
        url,
        format!(
            "the file changed while vidprep read it ({}); outputs would mix two versions \
             of it, so none were written: run again once it stays the same",
            changes.join("; ")
        ),
    )
}

fn network(url: &Path, message: impl Into<String>) -> Error {
    Error::Network {
        url: url.display().to_string(),
        message: message.into(),
    }
}

/// An agent with vidprep's network bounds: connect and every read or write within the
/// network timeout, the whole exchange (a download included) within `total`; https trusting
/// the system's certificate authorities ([`crate::call::net::trust`]).
fn agent(url: &Path, total: std::time::Duration, ctx: &CallContext) -> Result<ureq::Agent> {
    let t = Some(ctx.settings.network.timeout);
    let roots = crate::call::net::trust::Trust::of(&ctx.settings)
        .root_certs()
        .map_err(|e| network(url, e))?;
    let mut tls = ureq::tls::TlsConfig::builder();
    if let Some(roots) = roots {
        tls = tls.root_certs(roots);
    }
    Ok(ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(t)
        .timeout_per_read(t)
        .timeout_per_write(t)
        .timeout_global(Some(total))
        // The answer's head within the network timeout (a server dripping its headers).
        .timeout_recv_response(t)
        // The bytes as they are: never an encoded body (see the module doc).
        .accept_encoding("identity")
        .user_agent(format!("vidprep/{}", env!("CARGO_PKG_VERSION")))
        .tls_config(tls.build())
        .build()
        .into())
}

/// `GET url` for its first byte; an error for a refused connection, a timeout, or a server
/// that answers neither 200 nor 206 (nor 416, an empty file, left to FFmpeg to report).
fn request(
    url: &Path,
    total: std::time::Duration,
    ctx: &CallContext,
) -> Result<ureq::http::Response<ureq::Body>> {
    let text = url.to_str().unwrap_or_default();
    let response = agent(url, total, ctx)?
        .get(text)
        .header("Range", "bytes=0-0")
        .call()
        .map_err(|e| contact_error(url, e, ctx))?;
    let encoding = response
        .headers()
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty() && !v.eq_ignore_ascii_case("identity"));
    if let Some(encoding) = encoding {
        return Err(network(
            url,
            format!(
                "the server sent the file encoded (Content-Encoding: {encoding}) although \
                 vidprep asked for it as it is (Accept-Encoding: identity); an encoded body's \
                 size says nothing of what it unpacks to, and it cannot be read in ranges, so \
                 it was not read: serve the file without compression"
            ),
        ));
    }
    match response.status().as_u16() {
        200 | 206 | 416 => Ok(response),
        404 => Err(network(url, "the server answered 404 Not Found")),
        code => Err(network(
            url,
            format!(
                "the server refused the request (HTTP {code}{})",
                response
                    .status()
                    .canonical_reason()
                    .map(|r| format!(" {r}"))
                    .unwrap_or_default()
            ),
        )),
    }
}

/// The error for a request that got no answer, in the words FFmpeg's failures get
/// ([`crate::media::source::network_error`]).
fn contact_error(url: &Path, e: ureq::Error, ctx: &CallContext) -> Error {
    if ctx.cancelled() {
        return Error::Cancelled;
    }
    let timeout = ctx.settings.network.timeout.as_secs_f64();
    let message = match &e {
        ureq::Error::Timeout(ureq::Timeout::Global) => format!(
            "the transfer did not finish within the {} s deadline (a server sending too \
             slowly?); VIDPREP_NETWORK_DEADLINE sets it",
            ctx.settings.network.deadline.as_secs_f64()
        ),
        ureq::Error::Timeout(_) => format!(
            "the server did not answer within {timeout} s (the network timeout; \
             VIDPREP_NETWORK_TIMEOUT sets it)"
        ),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "the connection was refused (is the server running, is the port right?)".into()
        }
        ureq::Error::HostNotFound => "the host name does not resolve".into(),
        _ if is_certificate_error(&e) && e.to_string().contains("CaUsedAsEndEntity") => format!(
            "the secure connection failed ({e}): the server presents a certificate authority's \
             certificate as its own (a self-signed certificate made with CA:TRUE, as `openssl \
             req -x509` makes by default), which TLS verifiers refuse; give the server a \
             certificate signed by that authority (or one with basicConstraints CA:FALSE)"
        ),
        _ if is_certificate_error(&e) => format!(
            "the secure connection failed ({e}): the server's certificate is not signed by an \
             authority this system trusts (or names another host); add its authority to the \
             system's store, or name a PEM bundle with SSL_CERT_FILE"
        ),
        other => format!("cannot read it over the network ({other})"),
    };
    network(url, message)
}

/// Whether a request failed on the server's certificate.
fn is_certificate_error(e: &ureq::Error) -> bool {
    match e {
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => true,
        ureq::Error::Io(io) => io.to_string().to_lowercase().contains("certificate"),
        _ => false,
    }
}

/// The first contact: the validators, and the download when the server ignores ranges.
fn first_contact(url: &Path, ctx: &CallContext) -> Result<Contact> {
    let response = request(url, ctx.settings.network.deadline, ctx)?;
    let validators = Validators::of(&response);
    if response.status().as_u16() != 200 {
        return Ok(Contact {
            validators,
            download: None,
        });
    }
    let Some(size) = validators.size else {
        return Err(network(
            url,
            "the server gives neither a size nor range requests (a live or endless stream?); \
             vidprep reads finite files: record a part first (ffmpeg -i URL -t 60 -c copy \
             part.ts)",
        ));
    };
    let limit = ctx.settings.network.download_limit;
    if size > limit {
        return Err(network(
            url,
            format!(
                "the server does not accept range requests (it answered one with the whole \
                 file), so vidprep would download it first, but it is {} and the download \
                 limit is {}: raise VIDPREP_DOWNLOAD_LIMIT (bytes, or with K, M, G), or serve \
                 it with a server that supports ranges (nginx, `npx http-server`, `rclone \
                 serve http`)",
                bytes_text(size),
                bytes_text(limit)
            ),
        ));
    }
    let download = download(url, response.into_body(), size, ctx)?;
    Ok(Contact {
        validators,
        download: Some(download),
    })
}

/// Copies the `size`-byte body into an unnamed temporary file.
fn download(url: &Path, body: ureq::Body, size: u64, ctx: &CallContext) -> Result<Download> {
    let dir = std::env::temp_dir();
    let failed = |e: std::io::Error| {
        network(
            url,
            format!(
                "downloading it into the temporary folder {} failed ({e}); TMPDIR sets the \
                 folder",
                dir.display()
            ),
        )
    };
    #[cfg(target_os = "linux")]
    let (mut file, path, named) = {
        use std::os::fd::AsRawFd;
        let file = tempfile::tempfile_in(&dir).map_err(failed)?;
        let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        (file, path, None)
    };
    #[cfg(not(target_os = "linux"))]
    let (mut file, path, named) = {
        let named = tempfile::Builder::new()
            .prefix(".vidprep-tmp-download-")
            .tempfile_in(&dir)
            .map_err(failed)?;
        let (file, temp) = named.into_parts();
        let path = temp.to_path_buf();
        (file, path, Some(temp))
    };
    let mut reader = body.into_reader();
    let mut buf = vec![0u8; 256 * 1024];
    let mut copied = 0u64;
    // The minimum rate, over windows of the time the copy takes (it only waits on the server).
    let rate = ctx.settings.network;
    let mut window = (std::time::Instant::now(), 0u64);
    loop {
        if ctx.cancelled() {
            return Err(Error::Cancelled);
        }
        let waited = window.0.elapsed();
        if waited >= rate.min_rate_window {
            let got = copied - window.1;
            if rate.too_slow(got, waited) {
                return Err(network(
                    url,
                    format!(
                        "{} (the download stopped after {copied} of {size} bytes)",
                        too_slow_text(got, waited, &rate)
                    ),
                ));
            }
            window = (std::time::Instant::now(), copied);
        }
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let inner = e
                    .get_ref()
                    .and_then(|i| i.downcast_ref::<ureq::Error>())
                    .map(|u| match u {
                        ureq::Error::Timeout(t) => ureq::Error::Timeout(*t),
                        _ => ureq::Error::Other(e.to_string().into()),
                    });
                return Err(match inner {
                    Some(u) => contact_error(url, u, ctx),
                    None if ctx.cancelled() => Error::Cancelled,
                    None => network(
                        url,
                        format!("the download stopped after {copied} of {size} bytes ({e})"),
                    ),
                });
            }
        };
        if n == 0 {
            break;
        }
        copied += n as u64;
        if copied > size {
            // Never more than the server said (and the limit allowed).
            break;
        }
        file.write_all(&buf[..n]).map_err(failed)?;
    }
    if copied != size {
        return Err(network(
            url,
            if copied > size {
                format!("the server said {size} bytes but sent more")
            } else {
                format!("the server said {size} bytes but sent {copied}")
            },
        ));
    }
    file.flush().map_err(failed)?;
    Ok(Download {
        _file: file,
        path,
        _named: named,
    })
}

/// What a server that sent `bytes` over `waited` of waiting, below the minimum rate `n`, is
/// told.
pub(crate) fn too_slow_text(
    bytes: u64,
    waited: std::time::Duration,
    n: &crate::call::settings::NetworkSettings,
) -> String {
    format!(
        "the server sent {bytes} bytes in {:.1} s of waiting ({:.1} bytes/s), below the \
         minimum transfer rate of {} bytes/s over {} s (a server sending too slowly?); \
         VIDPREP_NETWORK_MIN_RATE (bytes per second, 0 turns the check off) and \
         VIDPREP_NETWORK_MIN_RATE_SECONDS set it",
        waited.as_secs_f64(),
        bytes as f64 / waited.as_secs_f64().max(1e-3),
        n.min_rate,
        n.min_rate_window.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_named() {
        let a = Validators {
            etag: Some("\"a\"".into()),
            last_modified: None,
            size: Some(10),
        };
        let b = Validators {
            etag: Some("\"b\"".into()),
            last_modified: None,
            size: Some(12),
        };
        let c = b.changes_since(&a);
        assert_eq!(c.len(), 2);
        assert!(c[0].contains("ETag was \"a\" and is now \"b\""), "{c:?}");
        assert!(
            c[1].contains("10 bytes") && c[1].contains("12 bytes"),
            "{c:?}"
        );
        assert!(a.changes_since(&a).is_empty());
    }
}
