"""ECO under DistributedDataParallel: 2 CPU processes on the gloo backend."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import torch
    import torch.distributed as dist
    from torch import nn

    from icml26.eco import ECOAdamW

    rank, world, init_file, out_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    torch.manual_seed(rank)  # different initial weights: DDP must broadcast rank 0's
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
    ddp = nn.parallel.DistributedDataParallel(model)
    # build the optimizer after DDP (DDP broadcasts the weights at construction), on the
    # parameters: DDP owns them, so each keeps a dense working copy of its quantized weights
    opt = ECOAdamW(ddp.parameters(), lr=1e-2, fmt="int4", rounding="sr", seed=5)
    gen = torch.Generator().manual_seed(100 + rank)  # each rank its own data shard
    losses = []
    for _ in range(6):
        x = torch.randn(16, 8, generator=gen)
        loss = (ddp(x) - x[:, :2]).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    state = {
        i: {k: v for k, v in opt.state[p].items() if k in ("qdata", "qscale")}
        for i, p in enumerate(ddp.parameters())
    }
    dense = [bool(torch.equal(p.detach(), opt.dequantized(p))) for p in ddp.parameters()]
    torch.save({"state": state, "losses": losses, "dense": dense}, Path(out_dir) / f"rank{rank}.pt")
    dist.destroy_process_group()
    """
)


@pytest.mark.slow  # two processes importing torch: a minute on a loaded 2-core machine
@pytest.mark.skipif(
    not dist.is_available() or sys.platform == "win32", reason="needs torch.distributed"
)
def test_ddp_two_processes_keep_identical_quantized_weights(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    init_file = tmp_path / "init"
    env = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(rank), "2", str(init_file), str(tmp_path)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in range(2)
    ]
    outputs = [p.communicate(timeout=240)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), "\n".join(outputs)
    r0 = torch.load(tmp_path / "rank0.pt", weights_only=True)
    r1 = torch.load(tmp_path / "rank1.pt", weights_only=True)
    assert all(r0["dense"])  # each parameter holds exactly its stored (dequantized) weights
    assert all(r1["dense"])
    assert r0["losses"] != r1["losses"]  # the ranks did see different data
    for i in r0["state"]:
        # all-reduced gradients + the same stochastic-rounding stream: bit-identical replicas
        assert torch.equal(r0["state"][i]["qdata"], r1["state"][i]["qdata"])
        assert torch.equal(r0["state"][i]["qscale"], r1["state"][i]["qscale"])
