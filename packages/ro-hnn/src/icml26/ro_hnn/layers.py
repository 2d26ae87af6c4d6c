"""Small building blocks shared by the autoencoders and the Hamiltonian networks."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import jax
import jax.numpy as jnp
from flax import nnx

__all__ = ["MLP", "Fixed"]


class Fixed(nnx.Variable):
    """A non-trainable array (PSD basis, reference state): split away from ``nnx.Param``."""


class MLP(nnx.Module):
    """A tanh MLP ``R^a -> R^b``; the last layer is scaled by ``last_scale`` at init."""

    def __init__(
        self,
        sizes: Sequence[int],
        *,
        rngs: nnx.Rngs,
        last_scale: float = 1.0,
        dtype: jnp.dtype = jnp.float64,
    ) -> None:
        if len(sizes) < 2 or any(s < 1 for s in sizes):
            raise ValueError(f"MLP sizes must be >= 2 positive widths, got {list(sizes)}")
        self.linears = nnx.List(
            [
                nnx.Linear(a, b, rngs=rngs, dtype=dtype, param_dtype=dtype)
                for a, b in itertools.pairwise(sizes)
            ]
        )
        last = self.linears[-1]
        last.kernel[...] = last.kernel[...] * last_scale

    def __call__(self, x: jax.Array) -> jax.Array:
        for layer in self.linears[:-1]:
            x = jnp.tanh(layer(x))
        return self.linears[-1](x)
