"""The shared GRPO path under ``accelerate launch``: two CPU processes (gloo), one step.

Slow: each process imports transformers' trainer (about 30 CPU-seconds on 2 cores).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("trl", reason="needs icml26-shared[rl]")
pytest.importorskip("accelerate", reason="needs icml26-shared[llm]")

SCRIPT = Path(__file__).with_name("accelerate_grpo_step.py")


@pytest.mark.slow
def test_two_processes_one_step_same_weights_and_the_configured_prompts(tmp_path: Path) -> None:
    """``accelerate launch --multi_gpu --num_processes 2`` on the CPU: after one GRPO step both ranks hold
    identical weights (changed by the step), the ranks together saw the configured 4
    prompts x 4 generations (8 completions each), not 4 prompts per process."""
    launcher = shutil.which("accelerate", path=str(Path(sys.executable).parent))
    assert launcher, "accelerate's launcher is not installed beside this Python"
    # --multi_gpu selects accelerate's torchrun launcher; without CUDA the processes pair over
    # gloo because the GRPO config sets use_cpu (accelerate's --cpu would start one process).
    flags = (
        "--multi_gpu --num_processes 2 --num_machines 1 --mixed_precision no --dynamo_backend no"
    )
    command = [launcher, "launch", *flags.split(), str(SCRIPT), str(tmp_path)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TRL_EXPERIMENTAL_SILENCE": "1"}
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - start
    assert done.returncode == 0, done.stderr[-4000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    print(f"accelerate launch, 2 CPU processes, one GRPO step: {wall:.1f} s wall")
    for r in ranks:
        print({k: r[k] for k in ("rank", "world_size", "backend", "completions", "seconds")})
    assert [r["world_size"] for r in ranks] == [2, 2]
    assert {r["backend"] for r in ranks} == {"gloo"}
    assert ranks[0]["weights_before"] == ranks[1]["weights_before"]
    assert ranks[0]["weights_after"] == ranks[1]["weights_after"]
    assert ranks[0]["weights_after"] != ranks[0]["weights_before"]
    assert [r["completions"] for r in ranks] == [8, 8]
    assert len(set(ranks[0]["prompts"]) | set(ranks[1]["prompts"])) == 4
    assert [r["steps_logged"] for r in ranks] == [1, 1]
