"""https sources: a local TLS server (Python's http.server and ssl, a self-signed certificate for
localhost made with `openssl req -x509`) serving the example video with range requests.

- Trusted (SSL_CERT_FILE names the certificate): probe and sample read it, the same frames as
  the local file, and FFmpeg itself read over TLS (its open-ended range requests reached the
  server, not only vidprep's first one-byte request). The wheel's FFmpeg has TLS through GnuTLS
  (scripts/build-wheel.sh); vidprep hands it `ca_file` from SSL_CERT_FILE (or the system's
  bundle) with verification on.
- Not trusted (no SSL_CERT_FILE, or one naming another certificate): an InputError naming the
  URL and the reason (the certificate).
- Under vidprep, its FFmpeg (the wheel's bundled one, or the system's) opens the URL itself
  (avio_open2 through ctypes) with `ca_file` and `tls_verify=1`, and refuses another
  certificate: the wheel's TLS, whatever vidprep's own handling.
"""

import ctypes
import re
import shutil
import socket
import ssl
import subprocess
import threading
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

import vidprep
from conftest import STREET


def make_certificate(folder, name):
    """A self-signed certificate (and key) for localhost and 127.0.0.1: (cert, key) paths."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed (it makes the test's certificate)")
    cert, key, config = folder / f"{name}.pem", folder / f"{name}-key.pem", folder / f"{name}.cnf"
    # A server's certificate (not a CA's: rustls refuses a CA certificate as the server's own,
    # and openssl's default configuration would make one); GnuTLS and rustls both trust it when
    # it is itself in the trusted file.
    config.write_text(
        "[req]\ndistinguished_name = dn\nx509_extensions = ext\nprompt = no\n"
        "[dn]\nCN = localhost\n"
        "[ext]\nsubjectAltName = DNS:localhost,IP:127.0.0.1\nbasicConstraints = critical,CA:FALSE\n"
        "keyUsage = critical,digitalSignature,keyEncipherment\nextendedKeyUsage = serverAuth\n")
    subprocess.run(
        ["openssl", "req", "-x509", "-config", str(config), "-newkey", "rsa:2048", "-nodes",
         "-sha256", "-days", "2", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True)
    return cert, key


class RangeHandler(BaseHTTPRequestHandler):
    """Serves one file at any path with GET/HEAD and single `bytes=` ranges (206), as a CDN."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.answer(body=False)

    def do_GET(self):
        self.answer(body=True)

    def answer(self, body):
        data = self.server.data
        self.server.ranges.append(self.headers.get("Range"))
        start, end, status = 0, len(data) - 1, 200
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range") or "")
        if m:
            start = int(m.group(1))
            end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        self.send_response(status)
        self.send_header("Content-Type", "video/mp4")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", '"street-1"')
        self.send_header("Last-Modified", formatdate(0, usegmt=True))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        if body:
            try:
                self.wfile.write(data[start:end + 1])
            except (ConnectionError, ssl.SSLError):
                pass  # the client closed early (FFmpeg reads what it needs, then seeks)


class TLSServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client refusing the certificate aborts the handshake: expected here


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    return {"server": make_certificate(folder, "server"), "other": make_certificate(folder, "other")}


@pytest.fixture(scope="module")
def server(street, certificates):
    cert, key = certificates["server"]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    httpd = TLSServer(("127.0.0.1", 0), RangeHandler)
    # The handshake in each connection's thread (on its first read), not in the accepting loop.
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
    httpd.data = street.read_bytes()
    httpd.ranges = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    # "localhost" as the certificate names it, where this machine resolves it (a bare chroot
    # may have no /etc/hosts); else the address, which the certificate names too.
    try:
        host = "localhost" if "127.0.0.1" in {a[4][0] for a in socket.getaddrinfo("localhost", None)} else "127.0.0.1"
    except socket.gaierror:
        host = "127.0.0.1"
    httpd.url = f"https://{host}:{httpd.server_address[1]}/street.mp4"
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def trust(monkeypatch):
    """Sets (or, with None, removes) SSL_CERT_FILE for one test; SSL_CERT_DIR is removed."""
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)

    def set_to(path):
        if path is None:
            monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        else:
            monkeypatch.setenv("SSL_CERT_FILE", str(path))
    return set_to


def loaded_library(name):
    """The FFmpeg library `name` (libavformat, ...) as this process loaded it for vidprep: the
    wheel's bundled copy or the system's, found in /proc/self/maps after vidprep has run."""
    vidprep.probe(STREET)
    try:
        maps = open("/proc/self/maps").read().split("\n")
    except OSError:
        pytest.skip("no /proc/self/maps: cannot find the FFmpeg vidprep loaded")
    paths = sorted({line.split()[-1] for line in maps if f"/{name}" in line and ".so" in line})
    if not paths:
        pytest.skip(f"vidprep's {name} is not a shared library here (linked statically?)")
    return ctypes.CDLL(paths[0])


def ffmpeg_open(url, options):
    """Opens `url` for reading through the FFmpeg vidprep uses (avio_open2 with `options`):
    (0, the first 4 KiB) or (FFmpeg's negative error code, None)."""
    avformat, avutil = loaded_library("libavformat"), loaded_library("libavutil")
    avformat.avformat_network_init()
    opts = ctypes.c_void_p()
    for k, v in options.items():
        avutil.av_dict_set(ctypes.byref(opts), k.encode(), v.encode(), 0)
    pb = ctypes.c_void_p()
    avformat.avio_open2.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_int,
                                    ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    rc = avformat.avio_open2(ctypes.byref(pb), url.encode(), 1, None, ctypes.byref(opts))  # AVIO_FLAG_READ
    avutil.av_dict_free(ctypes.byref(opts))
    if rc < 0:
        return rc, None
    buf = ctypes.create_string_buffer(4096)
    avformat.avio_read.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    n = avformat.avio_read(pb, buf, 4096)
    avformat.avio_closep(ctypes.byref(pb))
    return 0, buf.raw[:max(n, 0)]


def test_ffmpeg_has_tls_and_verifies_certificates(server, certificates):
    # The layer under vidprep: its FFmpeg (the wheel's GnuTLS build, or the system's) opens the
    # https URL when the certificate is trusted (ca_file, tls_verify=1), and refuses it when
    # the trusted file is another certificate.
    cert, other = str(certificates["server"][0]), str(certificates["other"][0])
    rc, head = ffmpeg_open(server.url, {"ca_file": cert, "tls_verify": "1"})
    assert rc == 0, f"FFmpeg could not open {server.url} with its certificate trusted: error {rc} (no TLS?)"
    assert head == server.data[:4096]
    rc, _ = ffmpeg_open(server.url, {"ca_file": other, "tls_verify": "1"})
    assert rc < 0, "FFmpeg opened an https URL whose certificate it was told not to trust"


def test_https_with_the_certificate_trusted(server, certificates, trust, street):
    trust(certificates["server"][0])
    server.ranges.clear()
    info = vidprep.probe(server.url)
    local = vidprep.probe(street)
    assert info["video"]["frames"] == local["video"]["frames"] == 300
    frames, facts = vidprep.sample(server.url, n=8)
    ref, ref_facts = vidprep.sample(street, n=8)
    assert facts["sampled"]["indices"] == ref_facts["sampled"]["indices"]
    np.testing.assert_array_equal(frames, ref)
    # FFmpeg read it over TLS with ranges (open-ended `bytes=N-`), not only vidprep's first
    # one-byte request, nor a whole download.
    assert any(r and re.fullmatch(r"bytes=\d+-", r) for r in server.ranges), server.ranges


@pytest.mark.parametrize("cert_file", [None, "other"], ids=["no-SSL_CERT_FILE", "another-certificate"])
def test_https_with_the_certificate_not_trusted(server, certificates, trust, cert_file):
    trust(None if cert_file is None else certificates[cert_file][0])
    for call in (lambda: vidprep.probe(server.url), lambda: vidprep.sample(server.url, n=2)):
        with pytest.raises(vidprep.InputError) as e:
            call()
        message = str(e.value)
        assert server.url in message, message
        assert re.search(r"certificate|issuer|not trusted|verif", message, re.I), message
