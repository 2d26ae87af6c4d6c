"""One GRPO step of the shared path under ``accelerate launch`` (run by test_llm_accelerate.py).

Each process builds the same tiny model (same seed), trains one step with
:func:`icml26.shared.llm.grpo.train_grpo`, and writes ``<out>/rank<k>.json``: the SHA-256 of
its weights before and after, and the prompts and completions its reward function saw.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26.shared.llm.grpo import GRPOSettings, train_grpo
from icml26.shared.llm.tasks import ReverseDigits, digit_accuracy
from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_lm


def weights_sha(model: Any) -> str:
    digest = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(p.detach().to(torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()


def main(out: Path) -> None:
    start = time.perf_counter()
    torch.set_num_threads(1)
    task = ReverseDigits(3, 5)
    rng = np.random.default_rng(0)  # the same on every rank: same model, same data
    config = TinyModelConfig(hidden_size=32, intermediate_size=64)
    model, tok = make_tiny_lm(task.corpus(rng), vocab_size=300, config=config, seed=0)
    before = weights_sha(model)
    seen: list[tuple[str, str]] = []

    def reward(prompts: list[Any], completions: list[Any], **kw: Any) -> list[float]:
        seen.extend((p[-1]["content"], str(c)) for p, c in zip(prompts, completions, strict=True))
        # An untrained model scores 0 everywhere (no gradient): add a signal every group has.
        parity = [0.5 * (i % 2) for i in range(len(completions))]
        graded = digit_accuracy(prompts, completions, kw["answer"])
        return [a + b for a, b in zip(graded, parity, strict=True)]

    settings = GRPOSettings(
        steps=1, prompts_per_step=4, num_generations=4, max_completion_length=8, lr=1e-2
    )
    history = train_grpo(
        model, tok, [reward], task.dataset(64, rng), settings, output_dir=out / "trl"
    )
    rank = int(os.environ.get("RANK", "0"))
    record = {
        "rank": rank,
        "world_size": int(os.environ.get("WORLD_SIZE", "1")),
        "backend": torch.distributed.get_backend() if torch.distributed.is_initialized() else None,
        "weights_before": before,
        "weights_after": weights_sha(model),
        "completions": len(seen),
        "prompts": sorted({p for p, _ in seen}),
        "steps_logged": len(history),
        "seconds": time.perf_counter() - start,
    }
    (out / f"rank{rank}.json").write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
