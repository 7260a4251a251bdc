"""Plans (manifest lines) round-trip; vidprep.run is `vidprep run`."""

import json

import pytest

import vidprep
from conftest import REPO

BENCH = REPO / "fixtures" / "example" / "benchmark.jsonl"


def lines():
    return [l for l in BENCH.read_text().splitlines() if l.strip() and not l.startswith(("#", "//"))]


@pytest.mark.parametrize("line", lines())
def test_manifest_lines_round_trip(line):
    plan = vidprep.Plan.from_json(line)
    again = vidprep.Plan.from_json(plan.to_json())
    assert again == plan
    assert json.loads(plan.to_json())["id"] == json.loads(line)["id"]
    assert "\n" not in plan.to_json()
    # The normalized form is a fixed point.
    assert plan.normalized().normalized() == plan.normalized()


def test_plan_fields_and_checks(street):
    plan = vidprep.Plan("a", street, start="1s", end=100, decision="75%",
                        exports=[vidprep.frames_export(count=4), vidprep.clip_export(preset="ultrafast")])
    assert plan.id == "a" and plan.decision == "75%" and len(plan.exports) == 2
    with pytest.raises(vidprep.UsageError) as e:
        vidprep.Plan.from_json('{"id": "a", "source": "x.mp4", "strat": 5}')
    assert "strat" in str(e.value)
    with pytest.raises(vidprep.UsageError):
        vidprep.Plan("a/b", street)  # an id must be a folder name


def test_run_a_list_of_plans(street, tmp_path):
    plans = [
        vidprep.Plan("one", street, end=50, exports=[vidprep.frames_export(count=4)]),
        {"id": "two", "source": str(street), "start": 100, "end": 150,
         "exports": [{"kind": "frames", "count": 3, "format": "png"}]},
        {"id": "bad", "source": str(tmp_path / "missing.mp4"), "exports": [{"kind": "frames"}]},
    ]
    result = vidprep.run(plans, tmp_path / "out", jobs=2)
    assert (result["items"], result["ok"], result["failed"]) == (3, 2, 1)
    by_id = {r["id"]: r for r in result["reports"]}
    assert by_id["one"]["status"] == "ok" and by_id["bad"]["status"] == "failed"
    assert "missing.mp4" in by_id["bad"]["error"]
    facts = json.loads((tmp_path / "out" / "one" / "frames" / "frames.json").read_text())
    _, mem = vidprep.sample(street, n=4, end=50)
    assert facts["frames"] == mem["frames"]
    # resume skips what is current
    again = vidprep.run(plans[:2], tmp_path / "out", resume=True)
    assert again["skipped"] == 2


def test_run_a_manifest_file(tmp_path):
    (tmp_path / "m.jsonl").write_text(json.dumps(
        {"id": "x", "source": str(REPO / "fixtures/example/street.mp4"), "end": 25,
         "exports": [{"kind": "frames", "count": 2}]}) + "\n")
    result = vidprep.run(tmp_path / "m.jsonl", tmp_path / "out")
    assert result["ok"] == 1 and (tmp_path / "out" / "report.jsonl").is_file()


def test_run_warns_of_folders_it_made_above_out_dir(tmp_path):
    (tmp_path / "m.jsonl").write_text(json.dumps(
        {"id": "x", "source": str(REPO / "fixtures/example/street.mp4"), "end": 25,
         "exports": [{"kind": "frames", "count": 1}]}) + "\n")
    with pytest.warns(RuntimeWarning, match="created the folder .*typo for the output folder"):
        result = vidprep.run(tmp_path / "m.jsonl", tmp_path / "typo" / "out")
    assert result["ok"] == 1
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vidprep.run(tmp_path / "m.jsonl", tmp_path / "typo" / "out2")


def test_run_missing_manifest(tmp_path):
    with pytest.raises(vidprep.InputError):
        vidprep.run(tmp_path / "nope.jsonl", tmp_path / "out")


def test_plan_execute(street, tmp_path):
    plan = vidprep.Plan("e", street, end=30, exports=[vidprep.frames_export(count=2)])
    outcome = plan.execute(tmp_path / "e")
    assert outcome["id"] == "e" and (tmp_path / "e" / "frames" / "frames.json").is_file()
