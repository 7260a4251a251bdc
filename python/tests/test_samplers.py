"""The samplers equal the toolkits' formulas: numpy's own arithmetic here, and the golden table
made with the real toolkits (fixtures/sampling/golden.json, see fixtures/sampling/reference.py)."""

import json

import numpy as np
import pytest

import vidprep
from conftest import REPO

GOLDEN = json.loads((REPO / "fixtures" / "sampling" / "golden.json").read_text())


def indices(street, total, **kw):
    _, facts = vidprep.sample(street, end=total, **kw)
    assert facts["total_frames"] == total
    return facts["sampled"]["indices"]


@pytest.mark.parametrize("total,n", [(300, 16), (300, 7), (97, 8), (50, 32), (17, 16), (300, 1)])
def test_numpy_formulas(street, total, n):
    # uniform: numpy.round(numpy.linspace(0, total - 1, n)).astype(int)
    assert indices(street, total, n=n) == np.round(np.linspace(0, total - 1, n)).astype(int).tolist()
    # lmms-eval (read_video_pyav, load_video_decord): numpy.linspace(0, total - 1, n, dtype=int)
    assert indices(street, total, n=n, sampler="lmms-eval") == np.linspace(0, total - 1, n, dtype=int).tolist()
    # VLMEvalKit save_video_frames: step = total / (n + 1); [int(i * step) for i in 1..n]
    step = total / (n + 1)
    assert indices(street, total, n=n, sampler="vlmevalkit") == [int(i * step) for i in range(1, n + 1)]


CASES = [c for c in GOLDEN["cases"] if c["t"] == 300 and "i" in c and "oor" not in c
         and ("n" in c or c.get("vfps") == 25.0 or c.get("rate") == [25, 1])
         and (len(c["i"]) == len(set(c["i"])))]


@pytest.mark.parametrize("case", CASES, ids=lambda c: json.dumps(c, separators=(",", ":"))[:60])
def test_golden_table(street, case):
    kw = {"sampler": case["s"]}
    if "n" in case:
        kw["n"] = case["n"]
    else:
        kw["fps"] = case["fps"]
        if "max" in case:
            kw["max_frames"] = case["max"]
    _, facts = vidprep.sample(street, size=(32, 32), **kw)
    assert facts["sampled"]["indices"] == case["i"]


ERRORS = [c for c in GOLDEN["cases"] if c["t"] == 300 and "e" in c and "n" in c]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: f'{c["s"]}-{c["n"]}')
def test_toolkit_refusals_raise(street, case):
    with pytest.raises(vidprep.VidprepError):
        vidprep.sample(street, n=case["n"], sampler=case["s"])
