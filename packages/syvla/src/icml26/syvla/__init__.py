"""SyVLA: a vision-language-action model with Intention Decoupling and similar-sample guided
RL, on BabyAI (minigrid) with out-of-distribution splits.

The policy (:class:`SyVLA`, :class:`ModelConfig`), its training steps (:func:`pretrain_vqa`,
:func:`train_bc`, :func:`train_rl` with :class:`RLConfig`), the guidance gate
(:func:`select_guides`), the evaluations, the RGB path (:class:`TileEncoder` trained by
:func:`train_tile_encoder` on :func:`tile_data`; :func:`rgb_observer` reads a minigrid
environment's partial RGB view into the model's codes), and the run's configs
(:class:`RunConfig`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BCConfig": ".bc",
        "ModelConfig": ".model",
        "Policy": ".policy",
        "RLConfig": ".ppo",
        "RunConfig": ".config",
        "SyVLA": ".model",
        "TextBank": ".data",
        "TextEncoder": ".language",
        "TileEncoder": ".rgb",
        "TileEncoderConfig": ".rgb",
        "VQAPretrainConfig": ".pretrain",
        "collect_demos": ".data",
        "evaluate_success": ".evaluate",
        "pretrain_vqa": ".pretrain",
        "rgb_observer": ".rgb",
        "select_guides": ".guidance",
        "shipped_backbone": ".backbone",
        "train_bc": ".bc",
        "tile_data": ".rgb",
        "train_rl": ".ppo",
        "train_tile_encoder": ".rgb",
        "vqa_accuracy": ".evaluate",
    },
)

if TYPE_CHECKING:
    from icml26.syvla.backbone import shipped_backbone as shipped_backbone
    from icml26.syvla.bc import BCConfig as BCConfig
    from icml26.syvla.bc import train_bc as train_bc
    from icml26.syvla.config import RunConfig as RunConfig
    from icml26.syvla.data import TextBank as TextBank
    from icml26.syvla.data import collect_demos as collect_demos
    from icml26.syvla.evaluate import evaluate_success as evaluate_success
    from icml26.syvla.evaluate import vqa_accuracy as vqa_accuracy
    from icml26.syvla.guidance import select_guides as select_guides
    from icml26.syvla.language import TextEncoder as TextEncoder
    from icml26.syvla.model import ModelConfig as ModelConfig
    from icml26.syvla.model import SyVLA as SyVLA
    from icml26.syvla.policy import Policy as Policy
    from icml26.syvla.ppo import RLConfig as RLConfig
    from icml26.syvla.ppo import train_rl as train_rl
    from icml26.syvla.pretrain import VQAPretrainConfig as VQAPretrainConfig
    from icml26.syvla.pretrain import pretrain_vqa as pretrain_vqa
    from icml26.syvla.rgb import TileEncoder as TileEncoder
    from icml26.syvla.rgb import TileEncoderConfig as TileEncoderConfig
    from icml26.syvla.rgb import rgb_observer as rgb_observer
    from icml26.syvla.rgb import tile_data as tile_data
    from icml26.syvla.rgb import train_tile_encoder as train_tile_encoder
