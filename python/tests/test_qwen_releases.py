"""The qwen-vl-utils drop-ins against every release users pin (0.0.8 to 0.0.14), each release's
own code: ``VIDPREP_QWEN_WHEELS`` names a folder of its wheels (``scripts/test.sh`` downloads
them), and a fresh interpreter per release runs ``qwen_release_check.py`` with that release
first on its path. Needs torch and torchvision (Debian's, in scripts/test.sh's second venv);
skips without them, and fails instead where ``VIDPREP_REQUIRE_PARITY`` is set.
"""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# What each release's backends return (read from its fetch_video's signature by the loader;
# written out here from the releases' own code as the expectation).
RETURNS = {"0.0.8": 1, "0.0.9": 2, "0.0.10": 2, "0.0.11": 2, "0.0.13": 3, "0.0.14": 3}


def _missing(why: str):
    if os.environ.get("VIDPREP_REQUIRE_PARITY") or os.environ.get("VIDPREP_REQUIRE_ALL"):
        pytest.fail(f"{why}, but VIDPREP_REQUIRE_PARITY or VIDPREP_REQUIRE_ALL is set")
    pytest.skip(why)


def _wheels():
    folder = os.environ.get("VIDPREP_QWEN_WHEELS")
    if not folder:
        return {}
    return {p.name.split("-")[1]: p for p in Path(folder).glob("qwen_vl_utils-*.whl")}


@pytest.mark.parametrize("version", sorted(RETURNS, key=lambda v: tuple(map(int, v.split(".")))))
def test_loaders_follow_the_release(version, street, tmp_path):
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError:
        _missing("torch and torchvision are not installed (scripts/test.sh runs this in Debian's python)")
    wheel = _wheels().get(version)
    if wheel is None:
        _missing(f"qwen-vl-utils {version} is not in VIDPREP_QWEN_WHEELS (scripts/test.sh downloads it)")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path / "site")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run(
        [sys.executable, str(HERE / "qwen_release_check.py"), str(street), str(RETURNS[version])],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert run.returncode == 0, f"qwen-vl-utils {version}:\n{run.stdout}\n{run.stderr[-4000:]}"
    facts = json.loads(run.stdout.strip().splitlines()[-1])
    assert facts["returns"] == RETURNS[version]
    assert facts["fallback_refused"]
