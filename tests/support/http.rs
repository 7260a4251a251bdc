//! Loopback HTTP file servers for the URL-source and review-page tests, on `tiny_http`: one
//! file (whose content may change after a given request, to test that vidprep notices) or a
//! folder (each file with an ETag made of its modification time and size), with range requests (`206` and `Content-Range`, `Accept-Ranges: bytes`) or without
//! them (`200` and the whole file whatever the `Range:` asked, as Python's `http.server`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// One version of a served file: from which request on (0-based) it is served, and its
/// validators.
#[derive(Clone)]
pub struct Version {
    pub from_request: usize,
    pub bytes: Arc<Vec<u8>>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

impl Version {
    /// `bytes`, served from the first request, without validators.
    pub fn new(bytes: Vec<u8>) -> Version {
        Version {
            from_request: 0,
            bytes: Arc::new(bytes),
            etag: None,
            last_modified: None,
        }
    }

    /// Served from request `n` (0-based) on.
    pub fn from_request(mut self, n: usize) -> Version {
        self.from_request = n;
        self
    }

    pub fn etag(mut self, tag: &str) -> Version {
        self.etag = Some(tag.to_string());
        self
    }

    pub fn last_modified(mut self, date: &str) -> Version {
        self.last_modified = Some(date.to_string());
        self
    }
}

enum Content {
    /// One file at one path, in versions.
    File {
        path: String,
        versions: Vec<Version>,
    },
    /// The files under a folder.
    Folder(PathBuf),
}

/// A server on 127.0.0.1 until dropped.
pub struct Server {
    pub port: u16,
    /// Requests answered.
    pub requests: Arc<AtomicUsize>,
    /// Requests whose `Range:` starts after byte 0 (seeks).
    pub seeks: Arc<AtomicUsize>,
    server: Arc<tiny_http::Server>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

impl Server {
    /// Serves `versions` of one file at `path` (`/x.mp4`), 404 elsewhere.
    pub fn file(path: &str, versions: Vec<Version>, ranges: bool) -> Server {
        Self::start(
            Content::File {
                path: path.to_string(),
                versions,
            },
            ranges,
        )
    }

    /// Serves the files under `root` (percent-decoded paths, no `..`), 404 elsewhere.
    pub fn folder(root: &Path, ranges: bool) -> Server {
        Self::start(Content::Folder(root.to_path_buf()), ranges)
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn start(content: Content, ranges: bool) -> Server {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let seeks = Arc::new(AtomicUsize::new(0));
        let content = Arc::new(content);
        let (s, r, k) = (server.clone(), requests.clone(), seeks.clone());
        std::thread::spawn(move || {
            for request in s.incoming_requests() {
                let n = r.fetch_add(1, Ordering::SeqCst);
                let (content, seeks) = (content.clone(), k.clone());
                std::thread::spawn(move || answer(request, n, &content, ranges, &seeks));
            }
        });
        Server {
            port,
            requests,
            seeks,
            server,
        }
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).unwrap()
}

/// `Range: bytes=A-` or `bytes=A-B`.
fn range_of(request: &tiny_http::Request) -> Option<(u64, Option<u64>)> {
    let h = request.headers().iter().find(|h| h.field.equiv("Range"))?;
    let spec = h.value.as_str().trim().strip_prefix("bytes=")?;
    let (a, b) = spec.split_once('-')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()))
}

fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("00");
            out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn content_type(path: &str) -> &'static str {
    match Path::new(path).extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css",
        Some("mp4") => "video/mp4",
        Some("jpg") => "image/jpeg",
        Some("png") => "image/png",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

fn answer(
    request: tiny_http::Request,
    n: usize,
    content: &Content,
    ranges: bool,
    seeks: &AtomicUsize,
) {
    let url = request.url().to_string();
    let path = url.split(['?', '#']).next().unwrap_or("/").to_string();
    let found: Option<(Arc<Vec<u8>>, Option<String>, Option<String>)> = match content {
        Content::File { path: p, versions } if *p == path => versions
            .iter()
            .rfind(|v| v.from_request <= n)
            .map(|v| (v.bytes.clone(), v.etag.clone(), v.last_modified.clone())),
        Content::File { .. } => None,
        Content::Folder(root) => {
            let rel = percent_decoded(&path).trim_start_matches('/').to_string();
            // An ETag from the file's size and modification time, as nginx makes one.
            let etag = |p: &Path| {
                let m = std::fs::metadata(p).ok()?;
                let t = m
                    .modified()
                    .ok()?
                    .duration_since(std::time::UNIX_EPOCH)
                    .ok()?;
                Some(format!("\"{:x}-{:x}\"", t.as_nanos(), m.len()))
            };
            (!rel.contains(".."))
                .then(|| std::fs::read(root.join(&rel)).ok())
                .flatten()
                .map(|b| (Arc::new(b), etag(&root.join(&rel)), None))
        }
    };
    let Some((bytes, etag, modified)) = found else {
        let _ =
            request.respond(tiny_http::Response::from_string("not found").with_status_code(404));
        return;
    };
    let len = bytes.len() as u64;
    let mut headers = vec![header("Content-Type", content_type(&path))];
    if ranges {
        headers.push(header("Accept-Ranges", "bytes"));
    }
    if let Some(e) = etag {
        headers.push(header("ETag", &e));
    }
    if let Some(m) = modified {
        headers.push(header("Last-Modified", &m));
    }
    let (status, start, end) = match range_of(&request).filter(|_| ranges) {
        Some((a, _)) if a >= len => {
            headers.push(header("Content-Range", &format!("bytes */{len}")));
            (416, 0, 0)
        }
        Some((a, b)) => {
            if a > 0 {
                seeks.fetch_add(1, Ordering::SeqCst);
            }
            let end = b.map_or(len, |b| (b + 1).min(len));
            headers.push(header(
                "Content-Range",
                &format!("bytes {a}-{}/{len}", end - 1),
            ));
            (206, a, end)
        }
        None => (200, 0, len),
    };
    let mut response = tiny_http::Response::from_data(bytes[start as usize..end as usize].to_vec())
        .with_status_code(status)
        // A Content-Length always, as file servers send (tiny_http would chunk large bodies).
        .with_chunked_threshold(usize::MAX);
    for h in headers {
        response.add_header(h);
    }
    let _ = request.respond(response);
}
