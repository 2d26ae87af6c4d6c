"""ECG-R1 (ICML 2026): reliable ECG interpretation with Protocol-Guided Instruction Data, a
modality-decoupled signal + image language model with Interleaved Modality Dropout, and GRPO
with ECG Diagnostic Evidence Rewards. A research reproduction, not a medical device.

Light to import: the torch modules (:mod:`~icml26.ecg_r1.encoders`, :mod:`~icml26.ecg_r1.model`,
:mod:`~icml26.ecg_r1.train`) are imported on their own.
"""

from icml26.ecg_r1.labels import (
    LABELS,
    LEADS,
    THRESHOLDS,
    TOLERANCES,
    Features,
    jaccard,
    labels_from_features,
)
from icml26.ecg_r1.protocol import (
    evidence_score,
    free_text_answer,
    hallucinations,
    parse_interpretation,
    protocol_answer,
)
from icml26.ecg_r1.records import RecordError, load_record, validate_record
from icml26.ecg_r1.rewards import diagnosis_reward, ecg_rewards, evidence_reward, format_reward
from icml26.ecg_r1.wavemodel import sample_params, simulate

__all__ = [
    "LABELS",
    "LEADS",
    "THRESHOLDS",
    "TOLERANCES",
    "Features",
    "RecordError",
    "diagnosis_reward",
    "ecg_rewards",
    "evidence_reward",
    "evidence_score",
    "format_reward",
    "free_text_answer",
    "hallucinations",
    "jaccard",
    "labels_from_features",
    "load_record",
    "parse_interpretation",
    "protocol_answer",
    "sample_params",
    "simulate",
    "validate_record",
]
