"""ECG-R1 (ICML 2026): reliable ECG interpretation with Protocol-Guided Instruction Data, a
modality-decoupled signal + image language model with Interleaved Modality Dropout, and GRPO
with ECG Diagnostic Evidence Rewards. A research reproduction, not a medical device.

Importing this package imports neither torch nor any submodule: each name below is loaded on
first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

if TYPE_CHECKING:  # what type checkers see; nothing is imported at run time
    from icml26.shared.llm.grpo import GRPOSettings as GRPOSettings

    from . import baselines as baselines
    from .config import RunConfig as RunConfig
    from .data import make_dataset as make_dataset
    from .delineate import measure_features as measure_features
    from .encoders import ImageEncoder as ImageEncoder
    from .encoders import SignalEncoder as SignalEncoder
    from .encoders import load_encoders as load_encoders
    from .encoders import save_encoders as save_encoders
    from .labels import LEADS as LEADS
    from .labels import Features as Features
    from .methods import PolicySettings as PolicySettings
    from .methods import measured_targets as measured_targets
    from .methods import new_policy as new_policy
    from .methods import save_policy as save_policy
    from .methods import sft_targets as sft_targets
    from .model import ECGR1ForCausalLM as ECGR1ForCausalLM
    from .model import EncodedBank as EncodedBank
    from .model import ModalityDropout as ModalityDropout
    from .protocol import protocol_answer as protocol_answer
    from .records import RecordError as RecordError
    from .records import load_record as load_record
    from .report import interpret_record as interpret_record
    from .rewards import ecg_rewards as ecg_rewards
    from .rewards import reward_functions as reward_functions
    from .train import SFTSettings as SFTSettings
    from .train import train_grpo as train_grpo
    from .train import train_sft as train_sft

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ECGR1ForCausalLM": ".model",
        "EncodedBank": ".model",
        "Features": ".labels",
        "GRPOSettings": "icml26.shared.llm.grpo",
        "ImageEncoder": ".encoders",
        "LEADS": ".labels",
        "PolicySettings": ".methods",
        "SignalEncoder": ".encoders",
        "make_dataset": ".data",
        "measured_targets": ".methods",
        "new_policy": ".methods",
        "save_policy": ".methods",
        "sft_targets": ".methods",
        "ModalityDropout": ".model",
        "RecordError": ".records",
        "RunConfig": ".config",
        "SFTSettings": ".train",
        "ecg_rewards": ".rewards",
        "interpret_record": ".report",
        "load_encoders": ".encoders",
        "load_record": ".records",
        "save_encoders": ".encoders",
        "measure_features": ".delineate",
        "protocol_answer": ".protocol",
        "reward_functions": ".rewards",
        "train_grpo": ".train",
        "train_sft": ".train",
    },
    submodules=["baselines"],
)
