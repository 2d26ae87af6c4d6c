"""Analysis: prevalence per dimension and severity, per domain, trend over months, and the
association of disempowerment potential with user approval — all from released count tables
(k-anonymous groups, optionally DP-noised), corrected with the classifier's confusion matrices.

Metric keys (the issue's contract)::

    rate.<dim|any>.<severity>[.lo|.hi]                 corrected share of conversations
    domain_rate.<domain>.severe_or_moderate[.lo|.hi]   share with any dimension >= moderate
    trend_slope.<dim|any>[.lo|.hi]                     per month, share with severity >= mild
    approval_association[.lo|.hi]                      P(up | any >= moderate) - P(up | none)
    approval_regression.level_coef[.lo|.hi]            logit per severity level, domain controls
    amplifier_rate.<factor>[.lo|.hi]
    privacy.*                                          k, smallest group, suppressions, epsilon
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from icml26.disempowerment.calibration import (
    check_identifiable,
    confusion_counts,
    draw_confusions,
    rate_draws,
)
from icml26.disempowerment.labels import Labels
from icml26.disempowerment.privacy import PrivacyLedger, cap_contributions
from icml26.disempowerment.taxonomy import AMPLIFIERS, DOMAIN_LABELS, SEVERITIES, VARIABLES
from icml26.shared.stats import z_quantile

__all__ = [
    "AnalysisInputs",
    "AnalysisResult",
    "Calibration",
    "analyse",
    "calibration_from_labels",
    "grouped_logistic",
]

#: Released count tables (overall and per month per variable, domain x severity, the approval
#: table, one per amplifier) plus the four k-anonymity gates (log, domains, months, approval
#: groups), which are noisy under DP.
N_TABLES = 2 * len(VARIABLES) + 2 + len(AMPLIFIERS) + 4


@dataclass
class Calibration:
    """A classifier's confusion counts on a labelled set.

    Attributes:
        severity: per variable (:data:`VARIABLES`), ``(4, 4)`` counts, rows = truth.
        amplifiers: per factor, ``(2, 2)`` counts, rows = truth.
        n: labelled conversations.
    """

    severity: dict[str, np.ndarray]
    amplifiers: dict[str, np.ndarray]
    n: int

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict (lists of lists)."""
        return {
            "severity": {k: v.tolist() for k, v in self.severity.items()},
            "amplifiers": {k: v.tolist() for k, v in self.amplifiers.items()},
            "n": self.n,
        }

    @classmethod
    def from_json(cls, obj: dict[str, object]) -> Calibration:
        """The inverse of :meth:`to_json`."""
        sev = obj["severity"]
        amp = obj["amplifiers"]
        assert isinstance(sev, dict)
        assert isinstance(amp, dict)
        return cls(
            {k: np.asarray(v, float) for k, v in sev.items()},
            {k: np.asarray(v, float) for k, v in amp.items()},
            int(obj["n"]),  # type: ignore[call-overload]
        )


def calibration_from_labels(
    truth: Labels, pred: Labels, weights: np.ndarray | None = None
) -> Calibration:
    """Confusion counts of ``pred`` against ``truth`` on a labelled set (``weights``: its
    inverse inclusion probabilities when it was enriched; see :func:`confusion_counts`)."""
    sev = {v: confusion_counts(truth.variable(v), pred.variable(v), 4, weights) for v in VARIABLES}
    amp = {
        a: confusion_counts(truth.amplifiers[:, i], pred.amplifiers[:, i], 2, weights)
        for i, a in enumerate(AMPLIFIERS)
    }
    return Calibration(sev, amp, len(truth))


@dataclass
class AnalysisInputs:
    """One log's predictions and the fields the analysis groups by.

    Attributes:
        pred: classifier labels of every conversation.
        user_ids, conv_ids: per conversation.
        month: ``(n,)`` month index (0 = first month of the log).
        feedback: ``(n,)`` 1 = thumbs up, 0 = down, -1 = no rating.
    """

    pred: Labels
    user_ids: np.ndarray
    conv_ids: Sequence[str]
    month: np.ndarray
    feedback: np.ndarray


@dataclass
class AnalysisResult:
    metrics: dict[str, float]
    monthly: dict[str, np.ndarray] = field(default_factory=dict)  # var -> (M, 3) point/lo/hi
    suppressed: list[str] = field(default_factory=list)


def _put(m: dict[str, float], key: str, point: float, draws: np.ndarray, level: float) -> None:
    a = (1 - level) / 2
    m[key] = float(point)
    m[f"{key}.lo"] = float(np.quantile(draws, a))
    m[f"{key}.hi"] = float(np.quantile(draws, 1 - a))


def grouped_logistic(
    x: np.ndarray, successes: np.ndarray, trials: np.ndarray, *, iters: int = 50
) -> tuple[np.ndarray, np.ndarray]:
    """Binomial logistic regression on grouped data by IRLS: ``(coef, standard errors)``.

    ``x``: ``(G, P)`` design (include an intercept column); ``successes``/``trials``: ``(G,)``.
    """
    beta = np.zeros(x.shape[1])
    keep = trials > 0
    x, s, t = x[keep], successes[keep], trials[keep]
    for _ in range(iters):
        eta = x @ beta
        mu = 1 / (1 + np.exp(-eta))
        w = t * mu * (1 - mu) + 1e-9
        grad = x.T @ (s - t * mu)
        hess = (x * w[:, None]).T @ x + 1e-8 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    mu = 1 / (1 + np.exp(-(x @ beta)))
    hess = (x * (t * mu * (1 - mu))[:, None]).T @ x + 1e-8 * np.eye(x.shape[1])
    return beta, np.sqrt(np.diag(np.linalg.inv(hess)))


def analyse(
    inputs: AnalysisInputs,
    calibration: Calibration,
    *,
    k: int,
    epsilon: float | None,
    cap: int,
    draws: int,
    level: float,
    rng: np.random.Generator,
    n_months: int | None = None,
) -> AnalysisResult:
    """Every released figure of one log (see the module docstring).

    Args:
        inputs: the log's predictions, users, conversation ids, months and feedback.
        calibration: the classifier's confusion counts on the labelled set.
        k: minimum distinct users per released group.
        epsilon: user-level DP budget of this analysis (``None``: k-anonymity only).
        cap: conversations counted per user under DP.
        draws: bootstrap draws; level: the intervals' level.
        rng: the bootstrap's and the noise's random stream.
        n_months: the public month window (months ``0 .. n_months - 1`` of
            ``inputs.month``; conversations outside it are left out before anything is
            counted). Required under DP, where the window must not depend on the data;
            ``None`` without DP: the log's own months.

    Returns:
        The :class:`AnalysisResult`.

    Raises:
        ValueError: DP without a month window, or a log with fewer than ``k`` users.
    """
    pred = inputs.pred
    users = np.asarray(inputs.user_ids)
    month = np.asarray(inputs.month, dtype=int)
    feedback = np.asarray(inputs.feedback, dtype=int)
    conv_ids = list(inputs.conv_ids)
    if n_months is not None:
        if n_months < 1:
            raise ValueError(f"n_months must be at least 1, got {n_months}")
        inside = (month >= 0) & (month < n_months)
        pred, users, month, feedback = (
            pred.subset(inside),
            users[inside],
            month[inside],
            feedback[inside],
        )
        conv_ids = [c for c, i in zip(conv_ids, inside, strict=True) if i]
    elif epsilon is not None:
        raise ValueError(
            "under DP the month window must be public (not read from the log): pass n_months "
            "(PrivacySettings(first_month=..., months=...); config first_month, months)"
        )
    else:
        n_months = int(month.max()) + 1 if len(month) else 0
    if epsilon is not None:
        keep = cap_contributions(list(users), conv_ids, cap)
        pred, users, month, feedback = pred.subset(keep), users[keep], month[keep], feedback[keep]
    m = _condition_numbers(calibration)
    ledger = PrivacyLedger(epsilon, N_TABLES, cap, rng)
    gates = [ledger.gate(k, g) for g in (1, len(DOMAIN_LABELS), max(n_months, 1), 2)]
    conf_draws = {v: draw_confusions(calibration.severity[v], draws, rng) for v in VARIABLES}
    if not gates[0].allow("all", users):
        raise ValueError(
            f"the whole log has fewer than k={k} distinct users; nothing can be released"
        )

    # 1. prevalence per variable and severity
    overall: dict[str, np.ndarray] = {}
    for v in VARIABLES:
        table = ledger.release(f"overall.{v}", np.bincount(pred.variable(v), minlength=4)[None])
        if v == "any":
            overall_counts = np.clip(table, 0, None)
        rd = rate_draws(
            table,
            calibration.severity[v],
            draws=draws,
            rng=rng,
            dp_scale=ledger.scale,
            conf_draws=conf_draws[v],
        )
        overall[v] = rd.draws[:, 0, :]
        for s, name in enumerate(SEVERITIES):
            _put(m, f"rate.{v}.{name}", rd.point[0, s], rd.draws[:, 0, s], level)
            m[f"observed.{v}.{name}"] = float(rd.observed[0, s])

    # 2. per domain (predicted domain, "other" included), any dimension >= moderate
    any_pred = pred.any_severity
    dom_table = np.zeros((len(DOMAIN_LABELS), 4))
    np.add.at(dom_table, (pred.domain.astype(int), any_pred.astype(int)), 1)
    dom_table = ledger.release("domain.any", dom_table)
    rd = rate_draws(
        dom_table,
        calibration.severity["any"],
        draws=draws,
        rng=rng,
        dp_scale=ledger.scale,
        conf_draws=conf_draws["any"],
    )
    for di, d in enumerate(DOMAIN_LABELS):
        if not gates[1].allow(f"domain.{d}", users[pred.domain == di]):
            continue
        hi = rd.draws[:, di, 2:].sum(axis=1)
        _put(m, f"domain_rate.{d}.severe_or_moderate", rd.point[di, 2:].sum(), hi, level)

    # 3. trend over months: share with severity >= mild, least-squares slope per draw
    months_ok = [mi for mi in range(n_months) if gates[2].allow(f"month.{mi}", users[month == mi])]
    monthly: dict[str, np.ndarray] = {}
    x = np.asarray(months_ok, dtype=float)
    for v in VARIABLES:
        table = np.zeros((n_months, 4))
        np.add.at(table, (month, pred.variable(v).astype(int)), 1)
        table = ledger.release(f"month.{v}", table)
        if len(months_ok) < 2:
            continue
        rd = rate_draws(
            table[months_ok],
            calibration.severity[v],
            draws=draws,
            rng=rng,
            dp_scale=ledger.scale,
            conf_draws=conf_draws[v],
        )
        pos_point = 1 - rd.point[:, 0]
        pos_draws = 1 - rd.draws[:, :, 0]
        xc = x - x.mean()
        slope_point = float(xc @ (pos_point - pos_point.mean()) / (xc @ xc))
        slope_draws = (pos_draws - pos_draws.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)
        _put(m, f"trend_slope.{v}", slope_point, slope_draws, level)
        a = (1 - level) / 2
        monthly[v] = np.stack(
            [pos_point, np.quantile(pos_draws, a, axis=0), np.quantile(pos_draws, 1 - a, axis=0)],
            axis=1,
        )
        monthly[f"{v}.months"] = x

    # 4. approval association (rated conversations)
    rated = feedback >= 0
    ap = np.zeros((len(DOMAIN_LABELS), 4, 2))
    np.add.at(
        ap,
        (pred.domain[rated].astype(int), any_pred[rated].astype(int), feedback[rated]),
        1,
    )
    ap = np.clip(ledger.release("approval", ap), 0, None)
    hi_ok = gates[3].allow("approval.high", users[rated & (any_pred >= 2)])
    no_ok = gates[3].allow("approval.none", users[rated & (any_pred == 0)])
    if hi_ok and no_ok:
        _approval(m, ap, conf_draws["any"], calibration, level, rng, draws, ledger.scale)

    # 5. amplifying factors
    for i, a in enumerate(AMPLIFIERS):
        table = ledger.release(
            f"amplifier.{a}", np.bincount(pred.amplifiers[:, i].astype(int), minlength=2)[None]
        )
        rd = rate_draws(
            table, calibration.amplifiers[a], draws=draws, rng=rng, dp_scale=ledger.scale
        )
        _put(m, f"amplifier_rate.{a}", rd.point[0, 1], rd.draws[:, 0, 1], level)

    released = [size for g in gates for size in g.released_sizes]
    suppressed = [name for g in gates for name in g.suppressed]
    m["privacy.k"] = float(k)
    m["privacy.min_group_size"] = float(min(released))
    m["privacy.suppressed_groups"] = float(len(suppressed))
    m["privacy.dp_epsilon"] = float(epsilon or 0.0)
    m["privacy.dp_epsilon_spent"] = float(ledger.spent)
    m["privacy.dp_laplace_scale"] = float(ledger.scale)
    m["privacy.released_tables"] = float(len(ledger.tables))
    # under DP both counts are post-processing of noisy releases (the overall table, the gate)
    m["n_conversations"] = float(overall_counts.sum())
    m["n_users"] = float(gates[0].released_sizes[0])
    return AnalysisResult(m, monthly, suppressed)


def _condition_numbers(calibration: Calibration) -> dict[str, float]:
    """``calibration.condition.<variable|amplifier>``, each checked identifiable."""
    return {
        f"calibration.condition.{name}": check_identifiable(counts, name)
        for name, counts in [*calibration.severity.items(), *calibration.amplifiers.items()]
    }


def _approval(
    m: dict[str, float],
    ap: np.ndarray,
    conf_draws: np.ndarray,
    calibration: Calibration,
    level: float,
    rng: np.random.Generator,
    draws: int,
    dp_scale: float,
) -> None:
    """Raw and calibrated approval association, and the logistic regression with domain
    controls (see :func:`analyse`).

    The calibrated association inverts ``E[up | pred j] = sum_i P(true i | pred j) a_i``
    among the *rated* conversations: ``P(true i | pred j)`` is formed from the confusion
    rows and the prevalence **of the rated subset** (corrected from its own predicted
    shares), because whether a conversation is rated may depend on its severity. It assumes
    the classifier's errors do not depend on the rating given the true severity.
    """
    by_level = ap.sum(axis=0)  # (4, 2): [down, up]
    up, tot = by_level[:, 1], by_level.sum(axis=1)
    hi_up, hi_tot = up[2:].sum(), tot[2:].sum()
    p_hi, p_no = hi_up / max(hi_tot, 1), up[0] / max(tot[0], 1)
    raw = p_hi - p_no
    se = np.sqrt(p_hi * (1 - p_hi) / max(hi_tot, 1) + p_no * (1 - p_no) / max(tot[0], 1))
    z = _z(level)
    m["approval_association_raw"] = float(raw)
    m["approval_association_raw.lo"] = float(raw - z * se)
    m["approval_association_raw.hi"] = float(raw + z * se)

    def assoc(conf: np.ndarray, prev: np.ndarray, b: np.ndarray) -> np.ndarray:
        w = conf * prev[..., :, None]  # (.., i, j) = P(pred j | i) p_i
        w = w / np.maximum(w.sum(axis=-2, keepdims=True), 1e-15)  # P(i | pred j)
        wt = np.swapaxes(w, -1, -2)  # (.., j, i)
        try:
            a = np.linalg.solve(wt, b[..., :, None])[..., 0]
        except np.linalg.LinAlgError:
            a = np.einsum("...ij,...j->...i", np.linalg.pinv(wt), b)
        a = np.clip(a, 0, 1)
        ph = prev[..., 2] + prev[..., 3]
        a_hi = (prev[..., 2] * a[..., 2] + prev[..., 3] * a[..., 3]) / np.maximum(ph, 1e-15)
        return a_hi - a[..., 0]

    # the rated subset's own prevalence, with the same confusion draws as every other table
    rated = rate_draws(
        tot[None],
        calibration.severity["any"],
        draws=draws,
        rng=rng,
        dp_scale=dp_scale,
        conf_draws=conf_draws,
    )
    conf_point = calibration.severity["any"] / np.maximum(
        calibration.severity["any"].sum(axis=1, keepdims=True), 1
    )
    b_point = (up + 0.5) / (tot + 1.0)
    point = float(assoc(conf_point, rated.point[0], b_point))
    b_draws = rng.beta(up + 0.5, tot - up + 0.5, size=(draws, 4))
    d = assoc(conf_draws, rated.draws[:, 0, :], b_draws)
    _put(m, "approval_association", point, d, level)

    # logistic regression: up ~ level + domain dummies, grouped over (domain, level) cells;
    # a domain with no rated conversation (e.g. "other" with no prediction) has no dummy
    present = [di for di in range(ap.shape[0]) if ap[di].sum() > 0]
    rows, succ, trials = [], [], []
    for di in present:
        for lv in range(4):
            dummies = [1.0 if di == dj else 0.0 for dj in present[1:]]
            rows.append([1.0, float(lv), *dummies])
            succ.append(ap[di, lv, 1])
            trials.append(ap[di, lv].sum())
    beta, se_b = grouped_logistic(np.array(rows), np.array(succ), np.array(trials))
    m["approval_regression.level_coef"] = float(beta[1])
    m["approval_regression.level_coef.lo"] = float(beta[1] - z * se_b[1])
    m["approval_regression.level_coef.hi"] = float(beta[1] + z * se_b[1])


def _z(level: float) -> float:
    return z_quantile(level)
