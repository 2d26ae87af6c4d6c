"""ECO: an error-compensating optimizer that trains quantized weights without master weights.

Public API (torch is imported on first use of a name, never by ``icml26.eco.paper``)::

    from icml26.eco import ECOAdamW
    opt = ECOAdamW(model, lr=1e-3, fmt="fp8")   # the model's matrices become FP8 codes
    loss.backward(); opt.step(); opt.zero_grad()
    torch.save(model.state_dict(), "ckpt.pt")   # dense weights, as always

The baselines are :class:`MasterWeightAdamW` (an FP32 master copy) and
``ECOAdamW(error_feedback=False)`` (naive removal); :func:`make_optimizer` builds any scheme of
the experiments by name. See the README for memory accounting, DDP and checkpoints.
"""

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ECOAdamW": ".optim",
        "ECOSGD": ".optim",
        "MasterWeightAdamW": ".optim",
        "MasterWeightSGD": ".optim",
        "NonFiniteGradientError": ".optim",
        "QuantizedWeight": ".qweight",
        "dense_state_dict": ".qweight",
        "QuantFormat": ".quantize",
        "parameter_roles": ".roles",
        "role_groups": ".roles",
        "static_memory": ".memory",
        "peak_memory": ".memory",
        "make_optimizer": ".schemes",
        "RunConfig": ".config",
        "BenchConfig": ".config",
    },
)
