from __future__ import annotations

import pytest
import torch
from torch import nn


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


class Linear(nn.Module):
    """logits = x.flatten() @ W.T + b: a classifier whose worst case in a box is exact."""

    def __init__(self, w: torch.Tensor, b: torch.Tensor) -> None:
        super().__init__()
        self.w = nn.Parameter(w.clone())
        self.b = nn.Parameter(b.clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1) @ self.w.T + self.b


def exact_linear_robust(
    model: Linear, x: torch.Tensor, y: torch.Tensor, eps: float
) -> torch.Tensor:
    """Closed-form L-inf robustness of a linear classifier inside [0, 1]: for every wrong class
    j the pairwise margin a.(x+δ) + c, a = w_y - w_j, is minimised coordinate-wise by moving
    each coordinate by eps against sign(a), clipped to the box."""
    w, b = model.w.detach(), model.b.detach()
    xf = x.flatten(1)
    robust = torch.ones(len(y), dtype=torch.bool)
    for j in range(w.shape[0]):
        a = w[y] - w[j]  # [N, d]
        c = b[y] - b[j]
        worst = torch.where(a > 0, (xf - eps).clamp(min=0), (xf + eps).clamp(max=1))
        margin = (a * worst).sum(1) + c
        robust &= (margin > 0) | (y == j)
    return robust


@pytest.fixture
def linear_problem() -> tuple[Linear, torch.Tensor, torch.Tensor]:
    """A 2-class linear model on 6x6 'images' and inputs labelled by the model itself."""
    g = torch.Generator().manual_seed(0)
    w = torch.randn(2, 36, generator=g)
    model = Linear(w, torch.zeros(2)).eval()
    x = torch.rand(200, 1, 6, 6, generator=g)
    with torch.no_grad():
        y = model(x).argmax(-1)
    return model, x, y
