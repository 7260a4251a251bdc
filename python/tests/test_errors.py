"""Bad input raises a VidprepError naming the file; nothing crashes the interpreter."""

import os

import pytest

import vidprep


def test_missing_file(tmp_path):
    p = tmp_path / "nope.mp4"
    with pytest.raises(vidprep.InputError) as e:
        vidprep.sample(p)
    assert str(p) in str(e.value) and "not found" in str(e.value)
    with pytest.raises(vidprep.InputError):
        vidprep.probe(p)


def test_not_a_video(tmp_path):
    p = tmp_path / "text.mp4"
    p.write_text("hello, not a video\n" * 100)
    with pytest.raises(vidprep.InputError) as e:
        vidprep.sample(p)
    assert str(p) in str(e.value)


def test_truncated_video(street, tmp_path):
    p = tmp_path / "cut.mp4"
    p.write_bytes(street.read_bytes()[: os.path.getsize(street) // 3])
    # A truncated MP4 either raises or samples what decodes; it never crashes.
    try:
        frames, facts = vidprep.sample(p, n=8)
    except vidprep.VidprepError as e:
        assert str(p) in str(e)
    else:
        assert frames.shape[0] == len(facts["frames"])


def test_empty_file(tmp_path):
    p = tmp_path / "empty.mp4"
    p.write_bytes(b"")
    with pytest.raises(vidprep.VidprepError) as e:
        vidprep.sample(p)
    assert str(p) in str(e.value)


@pytest.mark.parametrize("kw", [dict(n=0), dict(sampler="nope"), dict(order="sideways"), dict(size="0x0"),
                                dict(fps=-1.0), dict(start="50%"), dict(n=400)])
def test_bad_requests(street, kw):
    with pytest.raises(vidprep.VidprepError) as e:
        vidprep.sample(street, **kw)
    assert str(e.value)


def test_directory_is_not_a_video(tmp_path):
    with pytest.raises(vidprep.VidprepError):
        vidprep.sample(tmp_path)


def test_error_hierarchy():
    for cls in (vidprep.UsageError, vidprep.InputError, vidprep.OutputError, vidprep.EncodeError,
                vidprep.TrackerError, vidprep.InternalError, vidprep.CancelledError):
        assert issubclass(cls, vidprep.VidprepError) and issubclass(cls, Exception)
        assert cls.__name__ in vidprep.__all__


def test_every_error_kind_has_its_own_class():
    # The library's kinds by their report names (`error_kind` in report.jsonl): each raises
    # the class named after it, never the bare base class.
    classes = dict(vidprep._native.error_classes())
    assert set(classes) == {"usage", "input", "output", "encode", "tracker", "internal", "cancelled"}
    for kind, cls in classes.items():
        assert cls is getattr(vidprep, kind.capitalize() + "Error"), kind
        assert cls is not vidprep.VidprepError and issubclass(cls, vidprep.VidprepError)
    assert classes["tracker"] is vidprep.TrackerError


def test_memory_refuses_file_only_options(street):
    plan = vidprep.Plan("x", street, exports=[vidprep.frames_export(count=4, strip=True)])
    with pytest.raises(vidprep.UsageError) as e:
        plan.sample()
    assert "strip" in str(e.value)
    plan = vidprep.Plan("x", street, exports=[vidprep.clip_export()])
    with pytest.raises(vidprep.UsageError) as e:
        plan.sample()
    assert "only frames exports" in str(e.value)


def test_a_bytes_path_is_a_path_and_values_json_cannot_say_are_named(street, tmp_path):
    # #52: a bytes path failed with "Object of type bytes is not JSON serializable"; NaN and
    # infinity with "bad plan: expected value at line 1 column 117".
    frames, facts = vidprep.sample(os.fsencode(street), n=2)
    want, _ = vidprep.sample(street, n=2)
    assert (frames == want).all() and facts["total_frames"] == 300
    plan = vidprep.Plan("a", os.fsencode(street), exports=[vidprep.frames_export(count=2)])
    assert plan.source == str(street)
    for kw, name, value in [
        ({"fps": float("nan")}, "fps", "nan"),
        ({"n": 4, "start": float("inf")}, "start", "inf"),
        ({"n": 4, "end": float("-inf")}, "end", "-inf"),
    ]:
        with pytest.raises(vidprep.UsageError) as e:
            vidprep.sample(street, **kw)
        text = str(e.value)
        assert name in text and value in text and "finite" in text, text
    with pytest.raises(vidprep.UsageError) as e:
        vidprep.Plan("a", b"/tmp/\xff.mp4", exports=[vidprep.frames_export(count=2)])
    assert "not valid UTF-8" in str(e.value) and "source" in str(e.value)
