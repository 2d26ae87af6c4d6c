"""Privacy-preserving measurement of situational disempowerment potential in assistant
conversations (after "Who's in charge?", arXiv 2601.19062, with a Clio-style privacy layer).

Give it a JSONL log of conversations and a labelled set; it scrubs PII, classifies every
conversation on the paper's taxonomy in stages (hashed TF-IDF screen, MiniLM second stage,
LLM judge on an audit sample), corrects the rates with the classifier's confusion matrices,
and releases only k-anonymous (optionally differentially private) aggregates with intervals.
"""

from icml26.disempowerment.analysis import Calibration, analyse, calibration_from_labels
from icml26.disempowerment.calibration import confusion_counts, correct_shares, rate_draws
from icml26.disempowerment.classifiers import (
    Classifier,
    MiniLMClassifier,
    StagedClassifier,
    TfidfClassifier,
)
from icml26.disempowerment.clusters import ClusterSummary, cluster_patterns
from icml26.disempowerment.config import BenchConfig, DisempowermentConfig
from icml26.disempowerment.conversations import (
    Conversation,
    LogReadReport,
    MalformedLogError,
    read_jsonl,
    write_jsonl,
)
from icml26.disempowerment.embeddings import MiniLMEmbedder
from icml26.disempowerment.engine import ProcessedLog, process_log
from icml26.disempowerment.judge import RUBRIC, LLMJudge, parse_judgement
from icml26.disempowerment.labels import Labels, macro_f1
from icml26.disempowerment.privacy import (
    DEFAULT_K,
    KAnonymity,
    PrivacyLedger,
    cap_contributions,
    laplace_noise,
    pii_leak_audit,
)
from icml26.disempowerment.scrub import Scrubber, scrub_text
from icml26.disempowerment.synthetic import (
    GeneratorSpec,
    generate_labelled,
    generate_log,
    planted_truth,
)
from icml26.disempowerment.taxonomy import AMPLIFIERS, DIMENSIONS, DOMAINS, SEVERITIES

__all__ = [
    "AMPLIFIERS",
    "DEFAULT_K",
    "DIMENSIONS",
    "DOMAINS",
    "RUBRIC",
    "SEVERITIES",
    "BenchConfig",
    "Calibration",
    "Classifier",
    "ClusterSummary",
    "Conversation",
    "DisempowermentConfig",
    "GeneratorSpec",
    "KAnonymity",
    "LLMJudge",
    "Labels",
    "LogReadReport",
    "MalformedLogError",
    "MiniLMClassifier",
    "MiniLMEmbedder",
    "PrivacyLedger",
    "ProcessedLog",
    "Scrubber",
    "StagedClassifier",
    "TfidfClassifier",
    "analyse",
    "calibration_from_labels",
    "cap_contributions",
    "cluster_patterns",
    "confusion_counts",
    "correct_shares",
    "generate_labelled",
    "generate_log",
    "laplace_noise",
    "macro_f1",
    "parse_judgement",
    "pii_leak_audit",
    "planted_truth",
    "process_log",
    "rate_draws",
    "read_jsonl",
    "scrub_text",
    "write_jsonl",
]
