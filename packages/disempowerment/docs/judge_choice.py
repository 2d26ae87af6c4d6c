"""The judge's decoding, chosen once on a validation split of the ``llm`` profile's audit set
(issue 46, step 5), then measured on the profile's test rows. Writes ``judge-choice.json``
(or the path given as the first argument).

Run from the package folder: ``OMP_NUM_THREADS=1 uv run python docs/judge_choice.py``
(about 14 minutes on a loaded 2-core machine).

Validation: 40 calibration-set conversations outside the test rows, half with any severity
above none (``judge_choice_study``). Rule, fixed before the run (and tightened by review 46,
finding 10): ``plain`` (no calibration) is the default; ``content_free`` is chosen only if its
mean Cohen's kappa over the three dimensions beats plain's by more than two paired-bootstrap
standard errors of that difference on the validation rows. (The first version chose the
higher mean kappa outright: content_free by +0.016 on 40 rows, well inside the noise.)
Test: the 60 rows ``judge_study`` rates in the ``llm`` profile (``judge_rows``), every
variant, for the record; the test rows never enter the choice.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from icml26.disempowerment.config import PROFILES
from icml26.disempowerment.datasets import synthetic_labelled
from icml26.disempowerment.judge import LLMJudge
from icml26.disempowerment.scrub import Scrubber
from icml26.disempowerment.validation import judge_agreement, judge_choice_study, judge_rows
from icml26.shared import seed_for
from icml26.shared.llm import LocalChatModel

VARIANTS = {"plain": "none", "content_free": "content_free"}


def main() -> None:
    cfg = PROFILES["llm"]
    cal = synthetic_labelled(
        cfg.n_calibration,
        seed=seed_for(cfg.seed, "calibration"),
        share=cfg.calibration_positive_share,
    )
    test_rows, _, _ = judge_rows(
        cal.labels.any_severity > 0,
        cfg.n_conversations,
        cfg.judge_audit_n,
        cfg.judge_log_n,
        seed=seed_for(cfg.seed, "judge"),
    )
    backend = LocalChatModel.from_spec(cfg.judge)
    judges = {k: LLMJudge(backend, calibration=v) for k, v in VARIANTS.items()}
    out = judge_choice_study(
        judges, cal, exclude=test_rows, n=40, seed=seed_for(cfg.seed, "judge_choice")
    )
    margin, se = (
        out["choice.content_free.mean_kappa_diff"],
        out["choice.content_free.mean_kappa_diff_se"],
    )
    out["rule"] = "content_free only if its mean kappa beats plain's by > 2 paired-bootstrap SEs"
    out["chosen"] = "content_free" if margin > 2 * se else "plain"
    test = cal.subset(test_rows)
    scrub = Scrubber()
    texts = [scrub(c.text()) for c in test.conversations]
    for name, calibration in VARIANTS.items():
        res = LLMJudge(backend, calibration=calibration).judge(texts)
        for k, v in judge_agreement(test.labels, res.labels).items():
            out[f"test.{name}.{k[len('judge.') :]}"] = v
        out[f"test.{name}.malformed_rate"] = float(np.mean(~res.ok))
        out[f"test.{name}.severity_counts"] = np.bincount(
            res.labels.severity.ravel(), minlength=4
        ).tolist()
    out["test.truth.severity_counts"] = np.bincount(
        test.labels.severity.ravel(), minlength=4
    ).tolist()
    out["test.n"] = len(test_rows)
    dest = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("judge-choice.json")
    dest.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
