"""Sidecars record paths as given, whichever door: a list of plans run from Python names its
source as the command line and a manifest file in the current folder do, and ``sample``'s
subtitles are recorded as given, never made absolute."""

import json
import shutil

import vidprep


def test_a_list_of_plans_records_the_paths_as_given(street, tmp_path, monkeypatch):
    shutil.copy(street, tmp_path / "in.mp4")
    monkeypatch.chdir(tmp_path)
    summary = vidprep.run([{"id": "a", "source": "in.mp4", "end": 5}], "out", jobs=1)
    assert summary["ok"] == 1, summary
    side = json.loads((tmp_path / "out" / "a" / "clip.json").read_text())
    assert side["sources"][0]["path"] == "in.mp4"
    assert side["request"]["source"] == "in.mp4"
    # The same as a manifest file in the current folder gives.
    (tmp_path / "m.jsonl").write_text(json.dumps({"id": "a", "source": "in.mp4", "end": 5}) + "\n")
    vidprep.run("m.jsonl", "out2", jobs=1)
    other = json.loads((tmp_path / "out2" / "a" / "clip.json").read_text())
    assert other["sources"] == side["sources"] and other["request"] == side["request"]


def test_sample_records_subtitles_as_given(street, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.srt").write_text("1\n00:00:00,000 --> 00:00:06,000\nhello\n")
    _, facts = vidprep.sample(street, n=2, subtitles="s.srt")
    assert facts["subtitles"]["file"] == "s.srt"
