"""Answer and evidence scores: SQuAD-style exact match and token F1, and the Filter's
precision and recall of kept passages against the gold evidence (no framework imports)."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

__all__ = ["exact_match", "kept_precision_recall", "normalize_answer", "token_f1"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, drop punctuation and the articles a/an/the,
    collapse whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, answers: Iterable[str]) -> float:
    """1.0 when the normalised prediction equals a normalised answer, else 0.0."""
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(a) for a in answers))


def _f1(pred: str, gold: str) -> float:
    p, g = normalize_answer(pred).split(), normalize_answer(gold).split()
    if not p or not g:
        return float(p == g)
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, answers: Iterable[str]) -> float:
    """The best bag-of-tokens F1 of the prediction against any answer (SQuAD)."""
    answers = list(answers)
    if not answers:
        raise ValueError("token_f1 needs at least one answer")
    return max(_f1(prediction, a) for a in answers)


def kept_precision_recall(
    kept: Sequence[str], gold: Collection[str], retrieved: Collection[str] | None = None
) -> tuple[float, float]:
    """Precision and recall of the kept passage ids against the gold ids.

    Recall is over the gold passages that were retrievable: ``gold & retrieved`` when
    ``retrieved`` is given (a Filter cannot keep what the search never returned), else all of
    ``gold``. Conventions for empty sets: keeping nothing has precision 1 (no noise kept);
    nothing to recall has recall 1.
    """
    kept_set, gold_set = set(kept), set(gold)
    target = gold_set & set(retrieved) if retrieved is not None else gold_set
    hits = len(kept_set & gold_set)
    precision = hits / len(kept_set) if kept_set else 1.0
    recall = len(kept_set & target) / len(target) if target else 1.0
    return precision, recall
