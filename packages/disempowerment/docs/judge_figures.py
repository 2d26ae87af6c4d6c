"""The rubric judge's figures from an ``llm`` run, extracted (never typed) into
``judge-llm.json``: the run's ``judge.*`` metrics, its command, commit, wall and CPU time.

The judge's figures are not claims, so ``icml26 readme`` (claims only) does not carry them;
this file does. Run from the package folder after the run:
``uv run python docs/judge_figures.py /tmp/dis_llm [docs/judge-llm.json]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    run = Path(sys.argv[1])
    dest = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).with_name("judge-llm.json")
    results = json.loads((run / "results.json").read_text())
    env = json.loads((run / "env.json").read_text())
    m = results["metrics"]
    judge = {k: v for k, v in sorted(m.items()) if k.startswith(("judge.", "judge_tfidf."))}
    cfg = results["config"]
    out = {
        "what": (
            f"the {results['profile']} profile: judge {cfg['judge']} (decoding {cfg['judge_decoding']}, "
            f"calibration {cfg['judge_calibration']}) on {cfg['judge_audit_n']} audit + "
            f"{cfg['judge_log_n']} log conversations; extracted from results.json, not typed"
        ),
        "command": " ".join(["icml26", *env.get("argv", [])[1:]]),
        "commit": env.get("git"),
        "date": env.get("time"),
        "wall_s_run": results.get("seconds"),
        "cpu_s_run": results.get("cpu_seconds"),
        "claims": {c["id"]: c["holds"] for c in results["claims"]},
        "judge": judge,
    }
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(dest)


if __name__ == "__main__":
    main()
