"""Clio-style clusters of the conversations with disempowerment potential.

The conversations the staged classifier rates ``moderate`` or worse (any dimension) are
clustered by k-means on their MiniLM embeddings (computed once, in stage 2). A cluster is
released only when it holds at least ``k`` distinct users, and its summary is built so that
it cannot carry one user's words:

* the extractive summary keeps the cluster's most distinctive word uni/bi-grams (against the
  other clusters) among those used by at least ``k`` distinct users *of that cluster*; the
  PII placeholders are dropped;
* with an LLM judge, the model names the cluster from its allowed terms and its facet
  counts (never raw text); a name the scrubber would change is refused (the auditor step)
  and the extractive one is kept.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.cluster import KMeans
from sklearn.feature_extraction.text import CountVectorizer

from icml26.disempowerment.labels import Labels
from icml26.disempowerment.privacy import KAnonymity
from icml26.disempowerment.scrub import Scrubber
from icml26.disempowerment.taxonomy import DIMENSIONS, DOMAIN_LABELS, SEVERITIES

__all__ = ["ClusterSummary", "cluster_patterns"]

_ROLE = re.compile(r"(?m)^(?:user|assistant|system): ")


@dataclass(frozen=True)
class ClusterSummary:
    """One released cluster: no text but the k-user terms and the name built from them."""

    cluster: int
    n_users: int
    n_conversations: int
    name: str
    terms: tuple[str, ...]
    dimension_shares: dict[str, float]
    severe_share: float
    top_domain: str

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "n_users": self.n_users,
            "n_conversations": self.n_conversations,
            "name": self.name,
            "terms": list(self.terms),
            "dimension_shares": self.dimension_shares,
            "severe_share": self.severe_share,
            "top_domain": self.top_domain,
        }


def _terms(
    texts: Sequence[str], users: np.ndarray, assign: np.ndarray, cid: int, k: int, top: int
) -> list[str]:
    vec = CountVectorizer(ngram_range=(1, 2), stop_words="english", binary=True, min_df=1)
    x = vec.fit_transform([_ROLE.sub(" ", t) for t in texts])
    vocab = np.asarray(vec.get_feature_names_out())
    inside = assign == cid
    xin = x[inside]
    uin = users[inside]
    # distinct users per term inside the cluster
    coo = xin.tocoo()
    pairs = {(int(t), str(uin[r])) for r, t in zip(coo.row, coo.col, strict=True)}
    users_per_term = Counter(t for t, _ in pairs)
    allowed = np.array([users_per_term.get(t, 0) >= k for t in range(len(vocab))])
    allowed &= np.array(["[" not in w and "name" not in w.split() for w in vocab])
    f_in = np.asarray(xin.mean(axis=0)).ravel()
    f_out = np.asarray(x[~inside].mean(axis=0)).ravel() if (~inside).any() else 0 * f_in
    score = np.where(allowed, f_in - f_out, -np.inf)
    order = np.argsort(-score)
    return [str(vocab[i]) for i in order[:top] if np.isfinite(score[i]) and score[i] > 0]


def cluster_patterns(
    embeddings: np.ndarray,
    texts: Sequence[str],
    users: np.ndarray,
    labels: Labels,
    *,
    n_clusters: int,
    kanon: KAnonymity,
    seed: int,
    namer: Any = None,
    top_terms: int = 6,
) -> list[ClusterSummary]:
    """Cluster, gate by ``kanon`` and summarise (see the module docstring).

    Args:
        embeddings: ``(n, d)`` embeddings of the conversations to cluster.
        texts: their scrubbed texts (used only to count terms).
        users: their user ids.
        labels: their predicted labels.
        namer: optional chat back end naming clusters from allowed terms.
    """
    n = len(embeddings)
    if n != len(texts) or n != len(users) or n != len(labels):
        raise ValueError("embeddings, texts, users and labels must have one row per conversation")
    n_clusters = max(1, min(n_clusters, n // max(kanon.k, 1)))
    if n < max(2, kanon.k):
        return []
    km = KMeans(n_clusters=n_clusters, n_init=4, random_state=seed % 2**32).fit(embeddings)
    assign = km.labels_
    scrubber = Scrubber()
    out = []
    for cid in range(n_clusters):
        rows = np.nonzero(assign == cid)[0]
        if not kanon.allow(f"cluster.{cid}", users[rows]):
            continue
        terms = _terms(texts, users, assign, cid, kanon.k, top_terms)
        sub = labels.subset(rows)
        dim_share = {d: float(np.mean(sub.severity[:, i] >= 2)) for i, d in enumerate(DIMENSIONS)}
        dom = DOMAIN_LABELS[int(np.bincount(sub.domain, minlength=len(DOMAIN_LABELS)).argmax())]
        name = " / ".join(terms[:3]) if terms else "(no term used by k users)"
        if namer is not None and terms:
            name = _llm_name(namer, terms, dim_share, dom, scrubber) or name
        out.append(
            ClusterSummary(
                cluster=cid,
                n_users=len(set(users[rows].tolist())),
                n_conversations=len(rows),
                name=name,
                terms=tuple(terms),
                dimension_shares=dim_share,
                severe_share=float(np.mean(sub.any_severity == SEVERITIES.index("severe"))),
                top_domain=dom,
            )
        )
    return out


def _llm_name(
    backend: Any, terms: list[str], dims: dict[str, float], domain: str, scrubber: Scrubber
) -> str | None:
    prompt = (
        "Name a group of conversations in at most eight words, from aggregate facts only.\n"
        f"Frequent terms: {', '.join(terms)}. Domain: {domain}. Share with each distortion "
        f"(moderate or worse): {', '.join(f'{k} {v:.0%}' for k, v in dims.items())}.\nName:"
    )
    if not callable(getattr(backend, "complete", None)):
        raise TypeError(
            f"a cluster namer must be a chat back end with .complete(), got {type(backend).__name__}"
        )
    try:
        reply = backend.complete([[{"role": "user", "content": prompt}]], max_tokens=24)[0].text
    except Exception:  # a failing namer must not stop the release of the extractive name
        return None
    name = " ".join(reply.strip().splitlines()[0].split()[:8]) if reply.strip() else ""
    if not name or scrubber(name) != name:
        return None
    return name
