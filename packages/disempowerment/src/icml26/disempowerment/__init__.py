"""Privacy-preserving measurement of situational disempowerment potential in assistant
conversations (after "Who's in charge?", arXiv 2601.19062, with a Clio-style privacy layer).

Give :func:`measure` a log of conversations, a classifier (TF-IDF + logistic regression,
the staged classifier, or the rubric :class:`LLMJudge`) and a labelled audit set: it scrubs
PII, classifies, corrects the rates with the classifier's confusion matrices on the audit set,
and releases only k-anonymous (optionally differentially private) aggregates with intervals.
"""

from importlib.metadata import PackageNotFoundError, version

from icml26.disempowerment.classifiers import StagedClassifier, TfidfClassifier
from icml26.disempowerment.config import RunConfig
from icml26.disempowerment.conversations import read_jsonl
from icml26.disempowerment.datasets import (
    LabelledConversations,
    read_labelled_jsonl,
    synthetic_labelled,
)
from icml26.disempowerment.judge import LLMJudge
from icml26.disempowerment.measurement import (
    IntervalSettings,
    Measurement,
    PrivacySettings,
    measure,
)
from icml26.disempowerment.scrub import Scrubber
from icml26.disempowerment.synthetic import generate_log, null_spec

try:
    __version__ = version("icml26-disempowerment")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "IntervalSettings",
    "LLMJudge",
    "LabelledConversations",
    "Measurement",
    "PrivacySettings",
    "RunConfig",
    "Scrubber",
    "StagedClassifier",
    "TfidfClassifier",
    "__version__",
    "generate_log",
    "measure",
    "null_spec",
    "read_jsonl",
    "read_labelled_jsonl",
    "synthetic_labelled",
]
