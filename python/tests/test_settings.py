"""The settings the library takes in its options and the Python package fills from the
environment at each call (the library itself reads none): the network timeout, the download
limit; and the report merge of drivers sharing an output folder (`write_report`)."""

import json
import socket
import threading
import time

import pytest

import vidprep
from vidprep import _vidprep as native


def test_a_download_limit_that_is_not_a_size_is_a_usage_error(street, monkeypatch):
    monkeypatch.setenv("VIDPREP_DOWNLOAD_LIMIT", "lots")
    with pytest.raises(vidprep.UsageError, match='VIDPREP_DOWNLOAD_LIMIT="lots" is not a size'):
        vidprep.probe(str(street))
    # Read at each call: the next one, with the variable gone, works.
    monkeypatch.delenv("VIDPREP_DOWNLOAD_LIMIT")
    vidprep.probe(str(street))


def test_the_network_timeout_comes_from_the_environment(monkeypatch):
    # A server that accepts connections and never answers: the call fails after the
    # timeout set here (1 s), not the default 30 s.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        monkeypatch.setenv("VIDPREP_NETWORK_TIMEOUT", "1")
        url = f"http://127.0.0.1:{server.getsockname()[1]}/v.mp4"
        t0 = time.monotonic()
        with pytest.raises(vidprep.VidprepError):
            vidprep.probe(url)
        took = time.monotonic() - t0
        assert took < 12, f"took {took:.1f} s: the 1 s timeout was not used"
    finally:
        stop.set()
        t.join()
        for c in held:
            c.close()
        server.close()


def _row(item_id, line):
    return json.dumps({"id": item_id, "line": line, "status": "ok", "outputs": [],
                       "error": None, "seconds": 0.0, "frames": 0})


def test_write_report_merges_the_lines_of_two_drivers(tmp_path):
    native.write_report(str(tmp_path), [_row("b", 2), _row("a", 1)])
    native.write_report(str(tmp_path), [_row("c", 3), _row("a", 1)])
    lines = (tmp_path / "report.jsonl").read_text().splitlines()
    assert [json.loads(l)["id"] for l in lines] == ["a", "b", "c"]
    # A torn final line (a writer that died mid-line) is left out with a warning.
    (tmp_path / "report.jsonl").write_text(_row("a", 1) + "\n" + _row("b", 2)[:20])
    with pytest.warns(RuntimeWarning, match="cut short"):
        native.write_report(str(tmp_path), [_row("c", 3)])
    lines = (tmp_path / "report.jsonl").read_text().splitlines()
    assert [json.loads(l)["id"] for l in lines] == ["a", "c"]
