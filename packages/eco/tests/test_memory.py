"""Static and peak memory: measured from the tensors held and the allocations made."""

from __future__ import annotations

import torch
from torch import nn

from icml26.eco import ECOAdamW, peak_memory, static_memory


def test_peak_memory_sees_every_allocation_of_the_step() -> None:
    def step() -> torch.Tensor:
        a = torch.empty(1_000_000)  # 4 MB
        b = torch.empty(2_000_000)  # 8 MB, both alive: 12 MB
        del a
        c = torch.empty(500_000)  # 8 + 2 MB alive
        return b.add_(1.0) if c.numel() else b  # in place: nothing new

    out, mem = peak_memory(step, [], None)
    assert out.numel() == 2_000_000
    assert mem.source == "cpu profiler"
    assert 12_000_000 <= mem.transient < 12_500_000
    assert mem.peak == mem.transient  # nothing held before


def test_peak_of_a_training_step_counts_activations_and_dequantized_copies() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256))
    opt = ECOAdamW(model, lr=1e-3, fmt="fp8")
    x = torch.randn(64, 256)

    def step() -> None:
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()  # the moments exist from here on
    _, mem = peak_memory(step, model.parameters(), opt)
    static = static_memory(model.parameters(), opt)
    assert mem.static == static.total
    n_weights = 256 * 512 * 2
    # at least one dequantized float32 copy and the float32 gradients of the matrices
    assert mem.transient > 2 * 4 * n_weights
    assert mem.peak > static.total + 4 * n_weights
