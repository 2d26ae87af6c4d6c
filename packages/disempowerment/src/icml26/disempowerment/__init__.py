"""Privacy-preserving measurement of situational disempowerment potential in assistant
conversations (after "Who's in charge?", arXiv 2601.19062, with a Clio-style privacy layer).

Give :func:`measure` a log of conversations, a classifier (TF-IDF + logistic regression,
the staged classifier, or the rubric :class:`LLMJudge`) and a labelled audit set: it scrubs
PII, classifies, corrects the rates with the classifier's confusion matrices on the audit set,
and releases only k-anonymous (optionally differentially private) aggregates with intervals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

if TYPE_CHECKING:  # what type checkers and IDEs see; nothing is imported at run time
    from .classifiers import StagedClassifier as StagedClassifier
    from .classifiers import TfidfClassifier as TfidfClassifier
    from .config import RunConfig as RunConfig
    from .conversations import read_jsonl as read_jsonl
    from .datasets import LabelledConversations as LabelledConversations
    from .datasets import read_labelled_jsonl as read_labelled_jsonl
    from .datasets import synthetic_labelled as synthetic_labelled
    from .judge import LLMJudge as LLMJudge
    from .measurement import IntervalSettings as IntervalSettings
    from .measurement import Measurement as Measurement
    from .measurement import PrivacySettings as PrivacySettings
    from .measurement import measure as measure
    from .scrub import Scrubber as Scrubber
    from .synthetic import generate_log as generate_log
    from .synthetic import null_spec as null_spec

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "IntervalSettings": ".measurement",
        "LLMJudge": ".judge",
        "LabelledConversations": ".datasets",
        "Measurement": ".measurement",
        "PrivacySettings": ".measurement",
        "RunConfig": ".config",
        "Scrubber": ".scrub",
        "StagedClassifier": ".classifiers",
        "TfidfClassifier": ".classifiers",
        "generate_log": ".synthetic",
        "measure": ".measurement",
        "null_spec": ".synthetic",
        "read_jsonl": ".conversations",
        "read_labelled_jsonl": ".datasets",
        "synthetic_labelled": ".datasets",
    },
)
