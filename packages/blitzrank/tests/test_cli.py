"""The package through the umbrella CLI: a smoke run writes results, plots and claims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.blitzrank.config import BenchConfig, RunConfig
from icml26.blitzrank.methods import method
from icml26.blitzrank.paper import PAPER
from icml26.shared.cli import main
from icml26.shared.testing import check_paper


def test_smoke_run_and_bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "run"
    assert main(["run", "blitzrank", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    res = json.loads((out / "results.json").read_text())
    m = res["metrics"]
    for meth in ("blitzrank_k10", "sliding_window", "setwise", "pairwise", "tourrank"):
        for key in ("ndcg10", "calls", "tokens", "rounds"):
            assert f"{key}.sim_pl.{meth}" in m
    assert m["certified_rate.sim_pl.blitzrank_k10"] == 1.0
    assert m["calls_perfect.k10"] < m["calls_perfect.k5"]
    assert (out / "plots" / "pareto_ndcg_vs_tokens.png").is_file()
    ids = {c["id"] for c in res["claims"]}
    assert "pareto_vs_sliding_window" in ids
    # A killed run resumes: finished stages load from <run>/stages/, the rest is computed.
    stages = out / "stages"
    assert {"sim_pl.json", "sim_persist100.json", "calls_perfect.json"} <= {
        p.name for p in stages.iterdir()
    }
    (stages / "sim_cyclic.json").unlink()
    assert main(["run", "blitzrank", "--profile", "smoke", "--out", str(out)]) == 0
    assert json.loads((out / "results.json").read_text())["metrics"] == m
    bench = tmp_path / "bench"
    assert main(["bench", "blitzrank", "--profile", "smoke", "--out", str(bench)]) == 0
    check_paper(PAPER, bench)
    b = json.loads((bench / "results.json").read_text())["metrics"]
    assert b["engine_ms_per_call.n100"] > 0


def test_bad_override_is_refused(tmp_path: Path) -> None:
    code = main(
        ["run", "blitzrank", "--profile", "smoke", "--out", str(tmp_path / "x"), "--set", "ks=1"]
    )
    assert code == 2
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ks": (1,)}, "k must be >= 2"),
        ({"stride": 0}, "stride"),
        ({"noises": ("gauss",)}, "noises"),
        ({"llm_mode": "x"}, "llm_mode"),
        ({"llm_endpoint": "localhost"}, "http"),
        ({"sim_n": 5}, "sim_n"),
    ],
)
def test_config_validation(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RunConfig(**kwargs)
    with pytest.raises(ValueError, match="n must be"):
        BenchConfig(ns=(5,))


def test_unknown_method() -> None:
    with pytest.raises(ValueError, match="unknown method"):
        method("bm42")
    with pytest.raises(ValueError, match="needs k"):
        method("blitzrank")


def test_user_jsonl_through_the_llm_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--set data=...`` with a scripted chat back end standing in for the model."""
    from dataclasses import dataclass

    import icml26.blitzrank.oracles.backends as backends

    @dataclass
    class Reply:
        text: str
        prompt_tokens: int
        completion_tokens: int

    class ByNumber:
        """Ranks passages "doc <r>" by the number r (smaller is better)."""

        def complete(self, conversations, *, max_tokens=64, temperature=0.0):  # type: ignore[no-untyped-def]
            out = []
            for conv in conversations:
                lines = [ln for ln in conv[-1]["content"].splitlines() if ln.startswith("[")]
                ids = sorted(lines, key=lambda ln: int(ln.split()[-1]))
                out.append(Reply(" > ".join(ln[: ln.index("]") + 1] for ln in ids), 80, 12))
            return out

    monkeypatch.setattr(backends, "make_backend", lambda **kw: ByNumber())
    monkeypatch.setenv("ICML26_QUIET", "1")
    cands = [
        {"id": f"d{i}", "text": f"doc {r}", "relevance": int(r < 3)}
        for i, r in enumerate([7, 2, 9, 0, 5, 1, 8, 3, 6, 4, 10, 11])
    ]
    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps({"qid": "q", "query": "best doc?", "candidates": cands}) + "\n")
    out = tmp_path / "run"
    args = ["run", "blitzrank", "--profile", "smoke", "--out", str(out), "--set", f"data={data}"]
    args += ["--set", "llm_queries=1", "--set", "llm_mode=generate", "--set", "llm_n=12"]
    assert main(args) == 0
    m = json.loads((out / "results.json").read_text())["metrics"]
    assert m["ndcg10.user.blitzrank_k4"] == pytest.approx(1.0)
    assert m["certified_rate.user.blitzrank_k4"] == 1.0
    assert m["tokens_in.user.blitzrank_k4"] == 80 * m["calls.user.blitzrank_k4"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["data=/nonexistent"], "used only by the LLM task"),
        (["llm_queries=1", "data=/nonexistent"], "does not exist"),
        (["llm_queries=1", "llm_endpoint_model=m"], "used only with llm_endpoint"),
    ],
)
def test_cli_rejects_bad_or_unused_inputs_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], overrides: list[str], message: str
) -> None:
    out = tmp_path / "run"
    argv = ["run", "blitzrank", "--profile", "smoke", "--out", str(out)]
    for item in overrides:
        argv += ["--set", item]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_config_checks_a_trec_folder(tmp_path: Path) -> None:
    (tmp_path / "run").write_text("")
    with pytest.raises(ValueError, match=r"missing qrels, queries\.tsv, passages\.tsv"):
        RunConfig(llm_queries=1, data=str(tmp_path))
