"""Validation studies on synthetic worlds with planted truth.

* :func:`null_study`: the whole method (train, calibrate, measure) on each null world
  (:data:`icml26.disempowerment.synthetic.NULL_WORLDS`) over several seeds; every claim is
  evaluated on every null run, and a claim's *false-positive rate* is the share of the seeds
  of its own null world (its ``placebo``) on which it still holds.
* :func:`coverage_study`: interval coverage over fresh (log, calibration set) pairs of the
  planted world, for the corrected intervals and, as the no-correction comparator, Wilson
  intervals of the classifier's raw shares.
* :func:`scrub_study`: the scrubber's recall and span precision on the planted PII.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

import numpy as np
from sklearn.metrics import cohen_kappa_score

from icml26.disempowerment.conversations import Conversation
from icml26.disempowerment.datasets import (
    LabelledConversations,
    synthetic_data,
    synthetic_labelled,
)
from icml26.disempowerment.labels import Labels, macro_f1
from icml26.disempowerment.measurement import (
    IntervalSettings,
    PrivacySettings,
    classify,
    measure,
)
from icml26.disempowerment.pii import PlantedPII, fresh_frame_texts, scrub_scores
from icml26.disempowerment.scrub import Scrubber
from icml26.disempowerment.synthetic import NULL_WORLDS, generate_log, null_spec
from icml26.disempowerment.taxonomy import DIMENSIONS, SEVERITIES, VARIABLES
from icml26.shared import Claim, log, rng_for, seed_for
from icml26.shared.claims import evaluate_rule, rule_keys
from icml26.shared.stats import clopper_pearson_interval, wilson_interval

__all__ = [
    "NullSettings",
    "coverage_study",
    "judge_agreement",
    "judge_choice_study",
    "judge_rows",
    "judge_study",
    "null_study",
    "scrub_study",
]

#: ``train(train_set) -> classifier``: how a study fits the classifier on a world's data.
Trainer = Callable[[Any], Any]


@dataclass(frozen=True)
class NullSettings:
    """Sizes of one null-world run (those of the main run, so the claims decide alike).

    Attributes:
        n_log, n_train, n_calibration: log, training and calibration set sizes.
        positive_share, calibration_positive_share: the labelled sets' cue shares.
        privacy, intervals: as in :func:`icml26.disempowerment.measurement.measure`.
    """

    n_log: int
    n_train: int
    n_calibration: int
    positive_share: float
    calibration_positive_share: float
    privacy: PrivacySettings
    intervals: IntervalSettings


def null_study(
    claims: Sequence[Claim],
    train: Trainer,
    settings: NullSettings,
    *,
    seeds: int,
    seed: int,
    worlds: Sequence[str] = tuple(NULL_WORLDS),
    workers: int = 1,
) -> dict[str, float]:
    """Every claim on every null world, over ``seeds`` seeds (see the module docstring).

    The null worlds carry no planted PII (the scrubber is measured on the planted world and
    no null claim is about it), so their texts are not scrubbed.

    Args:
        claims: the claims (those whose ``placebo`` names a null world get a false-positive
            rate).
        train: fits the classifier on a world's training set (picklable when
            ``workers > 1``).
        settings: sizes and release settings of each run.
        seeds: seeds per world.
        seed: the run's seed (each (world, seed) pair has its own named stream).
        worlds: the null worlds to run.
        workers: processes running (world, seed) pairs side by side.

    Returns:
        ``null.<world>.<key>``: the first seed's values of every key the claims read (the
        metrics ``check_paper(..., nulls=...)`` takes); ``null.<world>.holds.<claim>``: the
        share of seeds on which a claim holds (only for claims a null run decides: not the
        coverage or scrubber claims, whose figures it does not make); ``null_fpr.<claim>``: that share on the
        claim's own null world; ``null.n_seeds``.
    """
    keys = sorted({k for c in claims for k in rule_keys(c.rule).keys})
    jobs = [(w, s) for w in worlds for s in range(seeds)]
    args = [(w, s, train, settings, seed_for(seed, f"null_{w}_{s}")) for w, s in jobs]
    if workers > 1:
        with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
            runs = list(pool.map(_null_run, *zip(*args, strict=True)))
    else:
        runs = [_null_run(*a) for a in args]
    out: dict[str, float] = {"null.n_seeds": float(seeds)}
    for world in worlds:
        mine = [m for (w, _), m in zip(jobs, runs, strict=True) if w == world]
        out.update({f"null.{world}.{k}": float(mine[0][k]) for k in keys if k in mine[0]})
        for c in claims:
            decided = [evaluate_rule(c.rule, m)[0] for m in mine]
            if any(d is None for d in decided):
                continue  # a claim whose figures a null run does not make is not reported
            held = float(np.mean(decided))
            out[f"null.{world}.holds.{c.id}"] = held
            if c.placebo == world:
                out[f"null_fpr.{c.id}"] = held
    return out


def _null_run(
    world: str, s: int, train: Trainer, settings: NullSettings, run_seed: int
) -> dict[str, float]:
    log(f"null world {world}, seed {s + 1}")
    spec = null_spec(world)
    data = synthetic_data(
        settings.n_log,
        settings.n_train,
        settings.n_calibration,
        seed=run_seed,
        positive_share=settings.positive_share,
        calibration_positive_share=settings.calibration_positive_share,
        spec=spec,
        with_pii=False,
    )
    classifier = train(data.train)
    res = measure(
        data.log,
        classifier,
        data.calibration,
        privacy=settings.privacy,
        intervals=settings.intervals,
        seed=seed_for(run_seed, "measure"),
        scrub=False,
    )
    return {**res.metrics, **{f"planted.{k}": v for k, v in data.planted.items()}}


_RATES = [f"{v}.{s}" for v in VARIABLES for s in SEVERITIES[1:]]


def coverage_study(
    classifier: Any,
    *,
    repeats: int,
    n_log: int,
    n_calibration: int,
    calibration_positive_share: float,
    privacy: PrivacySettings,
    intervals: IntervalSettings,
    seed: int,
) -> dict[str, float]:
    """Coverage of the planted values by the intervals, over fresh (log, calibration set)
    pairs of the planted world measured with one trained classifier.

    Returns:
        ``coverage.rate_intervals`` (the 12 rates, corrected intervals),
        ``coverage.naive_intervals`` (Wilson intervals of the raw predicted shares: no
        correction), each with the exact (Clopper-Pearson) interval of that share at the
        intervals' level (``.lo``/``.hi``; intervals counted as independent),
        ``coverage.trend_intervals`` (the 4 slopes),
        ``coverage.approval_intervals``, ``coverage.n_intervals`` and
        ``coverage.rate.<var>.<severity>``.
    """
    hits: dict[str, list[float]] = {k: [] for k in ("rate", "naive", "trend", "approval")}
    per_key: dict[str, list[float]] = {k: [] for k in _RATES}
    for r in range(repeats):
        rs = seed_for(seed, f"coverage_{r}")
        world = generate_log(n_log, seed=seed_for(rs, "log"))
        cal = synthetic_labelled(
            n_calibration, seed=seed_for(rs, "calibration"), share=calibration_positive_share
        )
        m = measure(
            world.conversations, classifier, cal, privacy=privacy, intervals=intervals, seed=rs
        ).metrics
        planted = world.planted
        n = m["n_conversations"]
        for key in _RATES:
            truth = planted[f"rate.{key}"]
            ok = float(m[f"rate.{key}.lo"] <= truth <= m[f"rate.{key}.hi"])
            hits["rate"].append(ok)
            per_key[key].append(ok)
            lo, hi = wilson_interval(m[f"observed.{key}"] * n, n, intervals.level)
            hits["naive"].append(float(lo <= truth <= hi))
        for v in VARIABLES:
            key = f"trend_slope.{v}"
            if f"{key}.lo" in m:
                hits["trend"].append(float(m[f"{key}.lo"] <= planted[key] <= m[f"{key}.hi"]))
        if "approval_association.lo" in m:
            truth = planted["approval_association"]
            hits["approval"].append(
                float(m["approval_association.lo"] <= truth <= m["approval_association.hi"])
            )
        log(f"coverage repeat {r + 1}/{repeats}: {np.mean(hits['rate']):.3f} so far")
    if not repeats:
        return {}
    out = {f"coverage.{k}_intervals": float(np.mean(v)) for k, v in hits.items() if v}
    out["coverage.n_intervals"] = float(len(hits["rate"]))
    for k in ("rate", "naive"):
        lo, hi = clopper_pearson_interval(int(sum(hits[k])), len(hits[k]), intervals.level)
        out[f"coverage.{k}_intervals.lo"], out[f"coverage.{k}_intervals.hi"] = lo, hi
    out.update({f"coverage.rate.{k}": float(np.mean(v)) for k, v in per_key.items()})
    return out


def scrub_study(
    conversations: Sequence[Conversation], planted: Sequence[PlantedPII], n: int
) -> dict[str, float]:
    """The scrubber on the first ``n`` conversations of a log with planted PII.

    Returns:
        ``scrub.recall.<all|dev|holdout|kind.split>`` (in the generator's sentences),
        ``scrub.fresh_recall.<all|dev|holdout|kind.split>`` (the same strings in :data:`FRESH_FRAMES`, wording
        the rules were not written against), ``scrub.precision`` (replaced spans that overlap
        planted PII, look-alike sentences included), ``scrub.n_items``, ``scrub.n_spans``.
    """
    n = min(n, len(conversations))
    texts = [c.text() for c in conversations[:n]]
    items = [p for p in planted if p.conversation < n]
    scores = scrub_scores(Scrubber(), texts, items)
    out = {f"scrub.recall.{k}": v for k, v in scores.recall.items()}
    fresh = scrub_scores(Scrubber(), *fresh_frame_texts(items, seed=0))
    out |= {f"scrub.fresh_recall.{k}": v for k, v in fresh.recall.items()}
    out["scrub.precision"] = scores.precision
    out["scrub.n_items"] = float(scores.n_items)
    out["scrub.n_spans"] = float(scores.n_spans)
    return out


def judge_study(
    judge: Any,
    baseline: Any,
    log_conversations: Sequence[Conversation],
    audit: LabelledConversations,
    planted: dict[str, float],
    *,
    n_audit: int,
    n_log: int,
    privacy: PrivacySettings,
    intervals: IntervalSettings,
    seed: int,
) -> dict[str, float]:
    """The rubric judge as the measuring instrument on a random subset of the log.

    The judge rates ``n_audit`` labelled conversations (the audit set, generator truth,
    stratified on it: :func:`judge_rows`) and ``n_log`` conversations of the log; its confusion matrices on the audit set correct its
    shares on the log subset (:func:`measure`). The baseline classifier measures the same
    subset with the same audit set, for comparison.

    Returns:
        ``judge.rate.*`` (with ``.lo``/``.hi``) and ``judge_tfidf.rate.*`` on the subset,
        ``judge.covered.<var>.<severity>`` (the planted rate inside the judge's interval),
        agreement with the audit labels (``judge.agreement.<dim>``, ``judge.kappa.<dim>``,
        ``judge.macro_f1``, ``judge.domain_accuracy``), ``judge.malformed_rate`` (after
        repair; 0 by construction under constrained decoding), ``judge.malformed_rate_first``,
        ``judge.n_audit``, ``judge.n_log``, ``judge.tokens``, ``judge.seconds_per_item``,
        ``judge.identified`` (0 when the judge predicted one class only on the audit rows
        for some variable or amplifier: its rates are then refused and not released, its
        agreement still is; the audit rows are rated a second time for it).
    """
    a_rows, l_rows, stratum_weights = judge_rows(
        audit.labels.any_severity > 0, len(log_conversations), n_audit, n_log, seed=seed
    )
    sub_audit = audit.subset(a_rows)
    base_weights = np.ones(len(a_rows)) if sub_audit.weights is None else sub_audit.weights
    sub_audit.weights = base_weights * stratum_weights
    sub_log = [log_conversations[i] for i in l_rows]
    base = measure(sub_log, baseline, sub_audit, privacy=privacy, intervals=intervals, seed=seed)
    out = {f"judge_tfidf.{k}": v for k, v in base.metrics.items() if k.startswith(_JUDGE_KEYS)}
    start = time.perf_counter()
    try:
        res = measure(sub_log, judge, sub_audit, privacy=privacy, intervals=intervals, seed=seed)
    except ValueError as exc:  # an uninformative judge: no rates, its agreement still reported
        if "carry no information" not in str(exc):
            raise
        log(f"the judge's rates are not identified, none released: {exc}")
        a_pred, a_ok = classify(judge, sub_audit.conversations, Scrubber())
        rows = np.flatnonzero(a_ok)
        out["judge.identified"] = 0.0
        out.update(judge_agreement(sub_audit.labels.subset(rows), a_pred.subset(rows), seed=seed))
    else:
        out["judge.identified"] = 1.0
        out.update({f"judge.{k}": v for k, v in res.metrics.items() if k.startswith(_JUDGE_KEYS)})
        for key in _RATES:
            if f"rate.{key}.lo" in res.metrics:
                truth = planted[f"rate.{key}"]
                out[f"judge.covered.{key}"] = float(
                    res.metrics[f"rate.{key}.lo"] <= truth <= res.metrics[f"rate.{key}.hi"]
                )
        out.update(
            judge_agreement(
                sub_audit.labels.subset(res.audit_rows), res.audit_predictions, seed=seed
            )
        )
        out["judge.dropped"] = float(sum(res.dropped.values()))
    seconds = time.perf_counter() - start
    n_items = len(a_rows) + len(l_rows)
    out["judge.malformed_rate"] = judge.malformed_rate
    out["judge.malformed_rate_first"] = judge.malformed_rate_first
    out["judge.n_audit"], out["judge.n_log"] = float(len(a_rows)), float(len(l_rows))
    out["judge.n_audit_positive"] = float(np.sum(sub_audit.labels.any_severity > 0))
    out["judge.tokens"] = float(judge.backend.usage.total_tokens)
    out["judge.seconds_per_item"] = seconds / n_items
    return out


_JUDGE_KEYS = (
    "rate.",
    "observed.",
    "domain_rate.",
    "trend_slope.",
    "approval_association",
    "privacy.dp_epsilon_spent",
)


def judge_rows(
    positive: np.ndarray, n_log_pool: int, n_audit: int, n_log: int, *, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows :func:`judge_study` rates, drawn from the study's own stream.

    The audit rows are stratified on the truth: half (or every one, when fewer) among the
    audit conversations with any severity above none, the rest among the others, so that
    the judge's errors on the rare positive classes rest on more than a handful of
    conversations (a uniform draw from a 15%-positive set gave 8 positives in 180). Each row
    carries its stratum's inverse inclusion probability, which keeps the confusion rows
    estimates of the whole audit set's.

    Args:
        positive: per audit conversation, whether its true label has any severity above none.
        n_log_pool: conversations in the log.
        n_audit: audit rows to draw (at most the audit set's size).
        n_log: log rows to draw (at most the log's size).
        seed: the study's seed.

    Returns:
        ``(audit rows, log rows, audit row weights)``.
    """
    rng = rng_for(seed, "judge_subsets")
    positive = np.asarray(positive, dtype=bool)
    pos, neg = np.flatnonzero(positive), np.flatnonzero(~positive)
    n_audit = min(n_audit, len(positive))
    n_pos = min(len(pos), n_audit // 2)
    n_neg = min(len(neg), n_audit - n_pos)
    n_pos = min(len(pos), n_audit - n_neg)
    a_rows = np.concatenate(
        [rng.choice(pos, size=n_pos, replace=False), rng.choice(neg, size=n_neg, replace=False)]
    )
    weights = np.concatenate(
        [np.full(n_pos, len(pos) / max(n_pos, 1)), np.full(n_neg, len(neg) / max(n_neg, 1))]
    )
    l_rows = rng.choice(n_log_pool, size=min(n_log, n_log_pool), replace=False)
    return a_rows, l_rows, weights


def judge_choice_study(
    judges: dict[str, Any],
    audit: LabelledConversations,
    *,
    exclude: np.ndarray,
    n: int,
    seed: int,
    n_resamples: int = 1000,
) -> dict[str, float]:
    """Judge variants on a *validation* split of the audit set, to choose one before the
    test split (:func:`judge_rows`) is rated.

    The split is ``n`` rows outside ``exclude`` (the test rows), half drawn among the
    conversations with any severity above none and half among the rest, so that agreement
    beyond chance is measurable on few rows. Each variant is scored by its mean Cohen's kappa
    over the three dimensions; every variant after the first (the reference) also gets its
    difference from the reference and that difference's paired-bootstrap standard error over
    the validation rows (``n_resamples`` resamples of the same rows for both variants), so
    that a choice can demand a margin beyond noise.

    Args:
        judges: name -> judge (``judge(texts) -> JudgeOutput``); the first is the reference.
        audit: the labelled audit set.
        exclude: rows the variants must not see (the test split).
        n: validation rows.
        seed: the split's seed.
        n_resamples: bootstrap resamples for the standard errors.

    Returns:
        ``choice.<name>.<agreement key>`` for every variant (see :func:`judge_study`),
        ``choice.<name>.mean_kappa``, ``choice.<name>.mean_kappa_se``,
        ``choice.<name>.malformed_rate``, ``choice.n``; for every variant but the first,
        ``choice.<name>.mean_kappa_diff`` and ``choice.<name>.mean_kappa_diff_se``.
    """
    rng = rng_for(seed, "judge_validation")
    free = np.setdiff1d(np.arange(len(audit.conversations)), exclude)
    positive = audit.labels.any_severity[free] > 0
    half = n // 2
    rows = np.concatenate(
        [
            rng.choice(free[positive], size=half, replace=False),
            rng.choice(free[~positive], size=n - half, replace=False),
        ]
    )
    sub = audit.subset(rows)
    scrubber = Scrubber()
    texts = [scrubber(c.text()) for c in sub.conversations]
    out: dict[str, float] = {"choice.n": float(n)}
    draws = rng_for(seed, "judge_choice_bootstrap").integers(0, n, size=(n_resamples, n))
    boots: dict[str, np.ndarray] = {}
    for name, judge in judges.items():
        start = time.perf_counter()
        res = judge.judge(texts)
        agreement = judge_agreement(sub.labels, res.labels)
        out.update({f"choice.{name}.{k[len('judge.') :]}": v for k, v in agreement.items()})
        kappas = [agreement[f"judge.kappa.{d}"] for d in DIMENSIONS]
        out[f"choice.{name}.mean_kappa"] = float(np.mean(kappas))
        boots[name] = _mean_kappa_draws(sub.labels.severity, res.labels.severity, draws)
        out[f"choice.{name}.mean_kappa_se"] = float(np.nanstd(boots[name], ddof=1))
        out[f"choice.{name}.malformed_rate"] = float(np.mean(~res.ok))
        out[f"choice.{name}.seconds_per_item"] = (time.perf_counter() - start) / n
        log(f"judge variant {name}: mean kappa {np.mean(kappas):.3f}")
    ref = next(iter(judges), None)
    for name in list(judges)[1:]:
        out[f"choice.{name}.mean_kappa_diff"] = (
            out[f"choice.{name}.mean_kappa"] - out[f"choice.{ref}.mean_kappa"]
        )
        out[f"choice.{name}.mean_kappa_diff_se"] = float(
            np.nanstd(boots[name] - boots[ref], ddof=1)
        )
    return out


def _mean_kappa_draws(truth: np.ndarray, pred: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Mean Cohen's kappa over the dimensions on each bootstrap draw of rows (NaN where a
    dimension's kappa is undefined on that draw)."""
    return np.array(
        [np.mean([_kappa(truth[r, k], pred[r, k]) for k in range(truth.shape[1])]) for r in draws]
    )


def judge_agreement(
    truth: Labels, pred: Labels, *, n_resamples: int = 1000, seed: int = 0
) -> dict[str, float]:
    """Unweighted agreement of the judge with the audit labels (the audit subset is enriched
    with cue conversations, so these are not population figures): ``judge.agreement.<dim>``,
    ``judge.kappa.<dim>`` (Cohen's) with its 95% percentile-bootstrap interval over the audit
    rows (``.lo``/``.hi``; resamples where kappa is undefined are skipped),
    ``judge.macro_f1``, ``judge.domain_accuracy``."""
    out: dict[str, float] = {}
    rng = rng_for(seed, "judge_kappa_bootstrap")
    n = len(truth.severity)
    draws = rng.integers(0, n, size=(n_resamples, n)) if n else np.zeros((0, 0), dtype=int)
    for k, dim in enumerate(DIMENSIONS):
        t, p = truth.severity[:, k], pred.severity[:, k]
        out[f"judge.agreement.{dim}"] = float(np.mean(t == p))
        out[f"judge.kappa.{dim}"] = float(cohen_kappa_score(t, p, labels=[0, 1, 2, 3]))
        boot = np.array([_kappa(t[r], p[r]) for r in draws])
        boot = boot[np.isfinite(boot)]
        lo, hi = np.quantile(boot, [0.025, 0.975]) if len(boot) else (np.nan, np.nan)
        out[f"judge.kappa.{dim}.lo"], out[f"judge.kappa.{dim}.hi"] = float(lo), float(hi)
    out["judge.macro_f1"] = float(
        np.mean([macro_f1(truth.severity[:, k], pred.severity[:, k], 4) for k in range(3)])
    )
    out["judge.domain_accuracy"] = float(np.mean(truth.domain == pred.domain))
    return out


def _kappa(t: np.ndarray, p: np.ndarray) -> float:
    """Cohen's kappa over the four severities; NaN where it is undefined (chance agreement 1)."""
    m = np.bincount(np.asarray(t) * 4 + np.asarray(p), minlength=16).reshape(4, 4) / max(len(t), 1)
    p_o, p_e = float(np.trace(m)), float(m.sum(1) @ m.sum(0))
    return (p_o - p_e) / (1 - p_e) if p_e < 1 and len(t) else float("nan")
