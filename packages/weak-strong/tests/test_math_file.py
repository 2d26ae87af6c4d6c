"""The long math stream shipped in the wheel: it loads, matches its hash and provenance, and
round-trips through the writer; tampered files are refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from icml26.weak_strong.tasks import math as wmath
from icml26.weak_strong.tasks import math_file as mfile

DATA = Path(mfile.__file__).resolve().parents[1] / "data" / mfile.STREAM_FILE


def test_shipped_stream_loads_and_matches_its_provenance() -> None:
    content = mfile.load_math_stream_file()  # checks format, sha256 and derived items
    assert content["sha256"] == mfile.content_hash(content)
    prov = content["provenance"]
    k, n = prov["k"], prov["problems"]
    # The problems are the generator's, in order, with their exact answers.
    expected = wmath.make_problems(n, seed=prov["seed"])
    got = [(p["question"], p["answer"], p["kind"]) for p in content["problems"]]
    assert got == [(p.question, p.answer, p.kind) for p in expected]
    # One sampling seed per shard of problems (the local prefix-cached sampler).
    starts = range(0, n, prov["shard_problems"])
    assert prov["shard_seeds"] == [wmath.shard_seed(prov["seed"], s) for s in starts]
    # The chat the file was sampled with is the package's: worked examples, the answer format.
    assert prov["chat"] == wmath.conversation("<question>")
    assert prov["instruction"] == wmath.INSTRUCTION
    assert prov["max_tokens"] >= 64
    # No demonstration is an evaluation item (by content).
    demo_questions = {q for q, _ in wmath.DEMONSTRATIONS}
    assert not demo_questions & {p["question"] for p in content["problems"]}
    assert prov["model"] in ("smollm2-135m-instruct", "smollm2-135m-instruct-q4_1")
    assert prov["date"]
    assert prov["command"].startswith("python -m icml26.weak_strong.tasks.math")
    for flag, value in (("--problems", n), ("--samples", k), ("--seed", prov["seed"])):
        assert f"{flag} {value} " in prov["command"]
    stream = mfile.math_file_stream()
    assert len(stream) == n * k
    assert stream.meta["sha256"] == content["sha256"]
    assert 0.02 < stream.labels.mean() < 0.98
    answers = [a for p in content["problems"] for a in p["answers"]]
    assert stream.meta["unparsed_share"] == sum(a is None for a in answers) / len(answers)
    assert stream.meta["unparsed_share"] < 0.1  # the answer format is followed
    assert set(np.unique(stream.scores * k).round(9)) <= set(range(k + 1))
    # Small enough for a wheel.
    assert DATA.stat().st_size < 1_000_000


def test_shipped_stream_is_the_math_source() -> None:
    stream = wmath.math_stream(
        source="shipped", model="", problems=1, k=1, temperature=0, max_tokens=1, seed=0
    )
    assert stream.meta["sha256"] == mfile.load_math_stream_file()["sha256"]


def _record(n: int = 6, k: int = 4) -> dict:
    problems = wmath.make_problems(n, seed=5)
    rng = np.random.default_rng(0)
    return {
        "model": "fake",
        "k": k,
        "temperature": 0.7,
        "max_tokens": 8,
        "seed": 5,
        "sample_seeds": wmath.sample_seeds(5, k),
        "dtype": "bfloat16",
        "batch_size": 64,
        "date": "2026-12-02",
        "problems": [
            {
                "question": p.question,
                "answer": p.answer,
                "kind": p.kind,
                "replies": [
                    ("no idea" if rng.random() < 0.2 else f"= {p.answer + int(rng.integers(2))}")
                    for _ in range(k)
                ],
            }
            for p in problems
        ],
    }


def test_writer_round_trip_equals_the_live_stream(tmp_path: Path) -> None:
    record = _record()
    path = tmp_path / "stream.json"
    content = mfile.write_math_stream_file(record, path)
    assert "--dtype bfloat16" in content["provenance"]["command"]
    back = mfile.math_file_stream(path)
    live = wmath.stream_from_samples(record)
    np.testing.assert_allclose(back.scores, live.scores)
    np.testing.assert_array_equal(back.labels, live.labels)
    # A path given as math_source is recognised as a stream file.
    again = wmath.math_stream(
        source=str(path), model="", problems=1, k=1, temperature=0, max_tokens=1, seed=0
    )
    np.testing.assert_array_equal(again.labels, live.labels)


def test_tampered_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "stream.json"
    content = mfile.write_math_stream_file(_record(), path)
    edited = json.loads(json.dumps(content))
    edited["problems"][0]["answer"] += 1
    (tmp_path / "a.json").write_text(json.dumps(edited))
    with pytest.raises(ValueError, match="sha256"):
        mfile.load_math_stream_file(tmp_path / "a.json")
    edited["items"]["correct"] = "1" * len(edited["items"]["correct"])
    edited["sha256"] = mfile.content_hash(edited)  # a consistent hash, inconsistent items
    (tmp_path / "b.json").write_text(json.dumps(edited))
    with pytest.raises(ValueError, match="do not follow"):
        mfile.load_math_stream_file(tmp_path / "b.json")
    (tmp_path / "c.json").write_text(json.dumps({"problems": []}))
    with pytest.raises(ValueError, match="is not a"):
        mfile.load_math_stream_file(tmp_path / "c.json")


def test_the_wheel_carries_the_stream_file() -> None:
    """Hatch's wheel target takes the whole ``src/icml26`` tree (data files included) and
    excludes nothing; checked on a built wheel once (``uv build --wheel``), here on the
    configuration that decides it."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    wheel = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["hatch"]["build"]
    wheel = wheel["targets"]["wheel"]
    assert "src/icml26" in wheel["packages"]
    assert not wheel.get("exclude")
    assert DATA.is_relative_to(root / "src" / "icml26")
