"""Transport-geometry analogs of the KL divergence and well-posed KL-regularised control.

Public API (JAX, float64 inside every function)::

    from icml26.transport_kl import kl, wkl, kwkl, w2          # Gaussian closed forms
    from icml26.transport_kl import elliptic, flow, control, cartpole, kalman

See the package README for the formulas and the reproduction.
"""

from icml26.transport_kl.gaussian import kl, kwkl, w2, wkl

__all__ = ["kl", "kwkl", "w2", "wkl"]
__version__ = "0.1.0"
