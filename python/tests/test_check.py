"""`vidprep.check`: the report `vidprep check --json` prints, as a dict, through the same
library call; its reference frames agree with the ffmpeg CLI (`-f framemd5`)."""

import json
import subprocess
from pathlib import Path

import pytest

import vidprep
from conftest import REPO, make_video


def _without_seconds(report):
    for s in report["sources"]:
        s.pop("seconds")
    return report


def test_the_example_reads_exactly_and_its_md5s_are_ffmpegs(street):
    report = vidprep.check(street, list_frames=True)
    assert report["exact"] is True and report["bad_lines"] == []
    [s] = report["sources"]
    assert s["verdict"] == "exact", s
    md5s = [line.rsplit(",", 1)[1].strip() for line in subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(street), "-map", "0:v:0", "-pix_fmt", "yuv420p",
         "-f", "framemd5", "-"], check=True, capture_output=True, text=True).stdout.splitlines()
        if line and not line.startswith("#")]
    assert [f["md5"] for f in s["frames"]] == md5s


def test_the_same_report_as_the_command_line(street, tmp_path):
    exe = REPO / "target" / "debug" / "vidprep"
    if not exe.is_file():
        pytest.skip("target/debug/vidprep is not built")
    other = make_video(tmp_path / "b.mkv", "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25",
                       "-frames:v", "20", "-c:v", "libx264", "-bf", "2")
    cli = json.loads(subprocess.run([str(exe), "check", str(street), str(other), "--jobs", "2", "--json"],
                                    capture_output=True, check=True).stdout)
    py = vidprep.check([street, other], jobs=2)
    py.pop("bad_lines")
    assert _without_seconds(py) == _without_seconds(cli)


def test_a_missing_source_fails_naming_it(tmp_path):
    report = vidprep.check(tmp_path / "gone.mp4")
    [s] = report["sources"]
    assert report["exact"] is False and s["verdict"] == "failed"
    assert "gone.mp4" in s["error"]


def test_no_source_is_a_usage_error():
    with pytest.raises(vidprep.UsageError):
        vidprep.check([])
