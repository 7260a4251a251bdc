"""The `vidprep` command that every install path of the package gives (`pip install ./python`,
maturin, the bundled wheel): beside the interpreter, the same command line as the Rust binary,
with its exit codes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def command() -> Path:
    path = Path(sys.executable).parent / "vidprep"
    if not path.exists():
        pytest.fail(f"the package installed no `vidprep` command beside {sys.executable}")
    return path


def test_the_command_probes_as_the_binary_does(street):
    out = subprocess.run([str(command()), "probe", "--json", str(street)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["video"]["width"] == 320 and info["video"]["height"] == 240
    binary = ROOT / "target" / "debug" / "vidprep"
    if binary.exists():
        theirs = subprocess.run([str(binary), "probe", "--json", str(street)], capture_output=True, text=True)
        assert json.loads(theirs.stdout) == info


def test_the_command_keeps_the_exit_codes(tmp_path):
    usage = subprocess.run([str(command()), "probe"], capture_output=True, text=True)
    assert usage.returncode == 2 and "FILE" in usage.stderr
    missing = subprocess.run([str(command()), "probe", str(tmp_path / "nope.mp4")], capture_output=True, text=True)
    assert missing.returncode == 1 and "nope.mp4" in missing.stderr
    version = subprocess.run([str(command()), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("vidprep ")


def test_the_command_writes_an_export(street, tmp_path):
    out = subprocess.run(
        [str(command()), "export", "frames", str(street), "--count", "3", "--out-dir", str(tmp_path / "f")],
        capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    facts = json.loads((tmp_path / "f" / "frames.json").read_text())
    assert len(facts["frames"]) == 3
