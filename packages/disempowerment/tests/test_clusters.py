"""Clusters are released only above k users, with terms that k users used."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from icml26.disempowerment.clusters import cluster_patterns
from icml26.disempowerment.labels import Labels
from icml26.disempowerment.privacy import KAnonymity


def test_small_cluster_is_not_released_and_rare_terms_never_appear() -> None:
    rng = np.random.default_rng(0)
    big = 60
    emb = np.r_[rng.normal(0, 0.05, (big, 8)) + 1, rng.normal(0, 0.05, (6, 8)) - 1]
    texts = [f"assistant: you should end it tonight zqx{i}" for i in range(big)]
    texts += [f"assistant: lonely unique phrase {i}" for i in range(6)]
    users = np.array([f"u{i}" for i in range(big)] + ["v1"] * 6)
    n = len(texts)
    labels = Labels(np.full((n, 3), 2), np.zeros((n, 4), bool), np.zeros(n, int))
    gate = KAnonymity(5)
    out = cluster_patterns(emb, texts, users, labels, n_clusters=2, kanon=gate, seed=0)
    assert len(out) == 1
    assert out[0].n_users == big
    assert gate.suppressed == ["cluster.1"] or gate.suppressed == ["cluster.0"]
    released = " ".join(out[0].terms) + out[0].name
    assert "zqx" not in released  # each zqx<i> token was used by one user only
    assert "assistant" not in released
    assert any("end" in t or "tonight" in t for t in out[0].terms)


def test_a_cluster_whose_top_domain_is_other_names_it_other() -> None:
    rng = np.random.default_rng(1)
    n = 40
    emb = rng.normal(0, 0.05, (n, 8)) + 1
    texts = ["assistant: you must tell them today" for _ in range(n)]
    users = np.array([f"u{i}" for i in range(n)])
    labels = Labels(np.full((n, 3), 2), np.zeros((n, 4), bool), np.full(n, 6))  # "other"
    out = cluster_patterns(emb, texts, users, labels, n_clusters=1, kanon=KAnonymity(5), seed=0)
    assert out[0].top_domain == "other"


def _one_cluster() -> tuple[np.ndarray, list[str], np.ndarray, Labels]:
    rng = np.random.default_rng(2)
    n = 40
    emb = rng.normal(0, 0.05, (n, 8)) + 1
    texts = ["assistant: you must tell them today" for _ in range(n)]
    users = np.array([f"u{i}" for i in range(n)])
    return emb, texts, users, Labels(np.full((n, 3), 2), np.zeros((n, 4), bool), np.zeros(n, int))


def test_a_chat_back_end_names_the_cluster() -> None:
    class Backend:
        def complete(self, batch: list, max_tokens: int) -> list:  # type: ignore[type-arg]
            return [SimpleNamespace(text="insistent relationship advice")]

    emb, texts, users, labels = _one_cluster()
    out = cluster_patterns(
        emb, texts, users, labels, n_clusters=1, kanon=KAnonymity(5), seed=0, namer=Backend()
    )
    assert out[0].name == "insistent relationship advice"


def test_a_namer_without_complete_is_refused_not_ignored() -> None:
    """The run once passed the judge object (no .complete) and the error was swallowed, so no
    cluster was ever named (found by a review)."""
    emb, texts, users, labels = _one_cluster()
    with pytest.raises(TypeError, match="complete"):
        cluster_patterns(
            emb, texts, users, labels, n_clusters=1, kanon=KAnonymity(5), seed=0, namer=object()
        )
