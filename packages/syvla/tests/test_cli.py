"""A smoke run of ``icml26 run syvla``: contract keys, claims decidable, resume, bad input."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper
from icml26.syvla.config import METHODS, SPLIT_NAMES
from icml26.syvla.paper import PAPER


def test_smoke_run_writes_the_contract_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / "run"
    opt_out = ["--set", "cache_pretrain=false"]  # no pretrained backbone kept outside the run
    assert main(["run", "syvla", "--profile", "smoke", "--out", str(out), *opt_out]) == 0
    check_paper(PAPER, out)
    m = load_results(out / "results.json")["metrics"]
    assert m["pretrain.from_cache"] == 0
    assert not list((tmp_path / "cache").rglob("pretrain-*.pt"))
    env = json.loads((out / "env.json").read_text())
    assert env["pretrain_cache_seed0"] == {
        "from_cache": False,
        "cache_key": None,
        "cache_path": None,
        "from_shipped": False,  # no shipped backbone has the smoke profile's settings
        "shipped_file": None,
    }
    assert m["pretrain.from_shipped"] == 0
    for method in METHODS:
        for split in SPLIT_NAMES:
            assert 0.0 <= m[f"success.{split}.{method}"] <= 1.0
        assert 0.0 <= m[f"vqa_accuracy.{method}"] <= 1.0
        if method != "bc":
            assert m[f"update_kl.{method}"] >= 0.0
            assert m[f"update_kl_sd.{method}"] >= 0.0
    assert 0 <= m["retrieved_fraction.syvla"] < 1  # the gate never lets everything through
    assert m["retrieved_fraction.no_similar"] == 0
    assert 0 <= m["vqa_pretrained"] <= 1
    assert m["vqa_pretrain_steps"] >= 1
    for tag in ("decoupled", "joint"):  # held-out VQA right after BC
        assert 0 <= m[f"vqa_after_bc.{tag}"] <= 1
    curve = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert {r["method"] for r in curve if "return_curve" in r} == set(METHODS) - {"bc"}
    fractions = [r["retrieved_fraction"] for r in curve if r.get("method") == "syvla"]
    assert len(fractions) == 2
    assert all(0 <= f < 1 for f in fractions)
    for plot in ("success_per_split", "vqa_before_after_rl", "rollout_strip", "return_curve"):
        assert (out / "plots" / f"{plot}.png").is_file()
    # the embeddings were cached: a resumed run reloads stages and needs no sentence model
    assert (tmp_path / "cache" / "icml26" / "syvla").is_dir()
    assert main(["run", "syvla", "--profile", "smoke", "--out", str(out), *opt_out]) == 0
    assert load_results(out / "results.json")["metrics"] == m


def test_babyai_profile_runs_registry_levels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``babyai`` profile at toy size: a registry level (PutNextLocal: pickup and drop),
    per seed its own bot demonstrations and BC, RL and success; the pretrained backbone is
    reloaded from the user cache next time."""
    monkeypatch.setenv("ICML26_QUIET", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    tiny = [
        "levels=BabyAI-PutNextLocal-v0",
        "methods=syvla,bc,bc_ppo,no_decoupling,no_cotrain",
        "seeds=2",
        "demo_episodes=4",
        "vqa_train_states=60",
        "vqa_val=20",
        "vqa_eval=20",
        "vqa_max_steps=2",
        "bc_steps=2",
        "bc_batch=8",
        "rl_updates=1",
        "n_envs=2",
        "n_steps=4",
        "minibatch=8",
        "eval_episodes=2",
        "rgb_steps=2",
        "rgb_frames=8",
    ]
    args = [a for kv in tiny for a in ("--set", kv)]
    out = tmp_path / "run"
    assert main(["run", "syvla", "--profile", "babyai", "--out", str(out), *args]) == 0
    check_paper(PAPER, out)
    m = load_results(out / "results.json")["metrics"]
    for method in ("syvla", "bc"):
        assert 0 <= m[f"babyai.putnextlocal.{method}"] <= 1
        assert m[f"babyai_se.putnextlocal.{method}"] >= 0
        assert m[f"babyai.mean.{method}"] == m[f"babyai.putnextlocal.{method}"]
    assert m["babyai_demo_steps.putnextlocal"] > 0
    assert m["rl_frames_per_seed"] == 8
    # per-seed figures and paired gaps (seed i of syvla against seed i of the baseline)
    for b in ("bc_ppo", "no_decoupling"):
        per_seed = [m[f"babyai.mean.syvla.seed{k}"] - m[f"babyai.mean.{b}.seed{k}"] for k in (0, 1)]
        assert m[f"gap.babyai.mean.syvla.{b}"] == pytest.approx(np.mean(per_seed))
        assert m[f"gap_margin.babyai.mean.syvla.{b}"] == pytest.approx(
            12.7062 * m[f"gap_se.babyai.mean.syvla.{b}"], rel=1e-4
        )  # t(0.975, 1)
        assert m[f"gap.babyai.mean.{b}.{b}"] == pytest.approx(0.0)  # the placebo's figure
    # the final models' held-out VQA accuracy, for the decoupling claim
    for method in ("syvla", "bc", "bc_ppo", "no_decoupling"):
        assert 0 <= m[f"vqa_accuracy.{method}"] <= 1
    assert "gap.vqa_accuracy.syvla.no_decoupling" in m
    # the syvla models read minigrid's RGB view through the tile encoder (a wiring check)
    assert 0 <= m["babyai_rgb.putnextlocal.syvla"] <= 1
    assert "babyai_rgb.putnextlocal.bc_ppo" not in m
    assert 0 <= m["rgb_tile_accuracy.cell"] <= 1
    # each seed its own demonstrations (its demos stream) and its own BC models
    tag = "BabyAI-PutNextLocal-v0"
    demos = [
        pickle.loads((out / "stages" / f"demos-{tag}-seed{s}.pkl").read_bytes()) for s in (0, 1)
    ]
    assert demos[0].views.tobytes() != demos[1].views.tobytes()
    assert {4} <= set(demos[0].actions.tolist()) | set(demos[1].actions.tolist())  # drop
    bcs = [
        pickle.loads((out / "stages" / f"bc-{tag}-decoupled-seed{s}.pkl").read_bytes())
        for s in (0, 1)
    ]
    head = "intention.queries"
    assert not torch.equal(bcs[0]["state"][head], bcs[1]["state"][head])
    assert len(list((tmp_path / "cache" / "icml26" / "syvla").glob("pretrain-*.pt"))) == 1
    assert m["pretrain.from_cache"] == 0  # trained here: the run's times include it
    again = tmp_path / "again"
    assert main(["run", "syvla", "--profile", "babyai", "--out", str(again), *args]) == 0
    loaded = load_results(again / "results.json")["metrics"]
    assert loaded["vqa_pretrained"] == m["vqa_pretrained"]
    assert loaded["pretrain.from_cache"] == 1  # loaded: the provenance says so
    first = json.loads((out / "env.json").read_text())["pretrain_cache_seed0"]
    second = json.loads((again / "env.json").read_text())["pretrain_cache_seed0"]
    assert not first["from_cache"]
    assert second["from_cache"]
    assert second["cache_key"] == first["cache_key"]
    assert Path(second["cache_path"]).is_file()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("methods=syvla,ppo", "methods must be a non-empty subset"),
        ("methods=syvla", "must include 'bc'"),
        ("view_size=12", "view_size must be odd"),
        ("view_size=11", "view_size must be >= 13"),
        ("seeds=0", "seeds"),
        ("clip=1.5", "clip"),
        ("guide_quantile=1.5", "guide_quantile"),
        ("guide_floor_quantile=-0.1", "guide_floor_quantile"),
        ("vqa_patience=0", "vqa_patience"),
        ("rgb_methods=ppo", "rgb_methods"),
        ("text_model=", "text_model must name"),
        ("demos_path=/nonexistent.npz", "does not exist"),
        ("device=tpu", "device must be"),
    ],
)
def test_bad_config_is_refused(
    override: str, message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "o"
    assert main(["run", "syvla", "--profile", "smoke", "--out", str(out), "--set", override]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_bad_demos_file_and_empty_instruction_fail_clearly(tmp_path: Path) -> None:
    from icml26.syvla.language import TextEncoder
    from icml26.syvla.steps import load_demos

    bad = tmp_path / "d.npz"
    np.savez(bad, views=np.zeros((2, 13, 13, 3), np.uint8), actions=np.zeros(2))
    with pytest.raises(ValueError, match="lacks the arrays"):
        load_demos(bad, 13)
    np.savez(
        bad,
        views=np.zeros((2, 9, 9, 3), np.uint8),
        missions=np.array(["a", "b"]),
        actions=np.zeros(2),
    )
    with pytest.raises(ValueError, match="views must have shape"):
        load_demos(bad, 13)
    with pytest.raises(ValueError, match="non-empty text"):
        TextEncoder(cache_dir=None).encode(["go to the red ball", "  "])


def test_paper_object_is_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, icml26.syvla.paper; print('torch' in sys.modules, 'minigrid' in sys.modules)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "False False"


@pytest.mark.slow
def test_bench_smoke_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "bench"
    assert main(["bench", "syvla", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out, kind="bench")
    m = load_results(out / "results.json")["metrics"]
    assert m["env_steps_per_s"] > 0
    assert m["ppo_update_s"] > 0
