"""The claim rules on hand-made metrics: each decides on the figure it names."""

from __future__ import annotations

from icml26.ecg_r1.paper import PAPER
from icml26.shared.claims import evaluate_rule


def _claim(name: str):
    return next(c for c in PAPER.claims if c.id == name)


def _halluc(gap: float, seed_se: float) -> dict[str, float]:
    return {
        "hallucination_rate.ecg_r1": 0.3,
        "hallucination_rate.sft_only": 0.3 + gap,
        "hallucination_gap.sft_only_minus_ecg_r1": gap,
        "hallucination_gap_seed_se.sft_only_minus_ecg_r1": seed_se,
        "z.hallucination_sft_only_minus_ecg_r1": 5.0,  # record bootstrap: always "significant"
        "diagnosis_jaccard.both.ecg_r1": 0.5,
        "diagnosis_jaccard.both.sft_only": 0.5,
    }


def test_hallucination_claim_needs_the_gap_beyond_seed_noise() -> None:
    claim = _claim("evidence_rewards_lower_hallucination")
    assert evaluate_rule(claim.rule, _halluc(0.1, 0.03))[0] is True
    # the record-bootstrap z alone does not decide: seeds disagree more than the gap
    assert evaluate_rule(claim.rule, _halluc(0.1, 0.065))[0] is False
    assert claim.under_placebo(_halluc(0.1, 0.03))[0] is False


def test_truncation_rate_counts_unclosed_answers_per_method() -> None:
    import numpy as np

    from icml26.ecg_r1.evaluate import score_method
    from icml26.ecg_r1.protocol import protocol_answer
    from icml26.ecg_r1.wavemodel import sample_params, simulate

    rng = np.random.default_rng(0)
    feats = simulate(sample_params(rng, 4), rng).features
    done = [protocol_answer(f) for f in feats]
    capped = [t[: len(t) // 2] for t in done]  # cut mid-answer, as at the generation cap
    both = done[:3] + capped[3:]
    m = score_method({"both": both, "signal_only": done}, feats).metrics("m")
    assert m["truncation_rate.m"] == 1 / 8


def test_answers_not_truncated_reads_the_truncation_rate() -> None:
    claim = _claim("answers_not_truncated")
    ok = {
        "answer_tokens_p95.ecg_r1": 183.0,
        "generation_cap.ecg_r1": 229.0,
        "truncation_rate.sft_only": 0.0,
        "truncation_rate.ecg_r1": 0.05,
        "format_rate.sft_only": 0.9,
    }
    assert evaluate_rule(claim.rule, ok)[0] is True
    # every answer capped: fails whatever the cap is relative to the answers' length
    capped = ok | {"truncation_rate.ecg_r1": 1.0}
    assert evaluate_rule(claim.rule, capped)[0] is False
    # a cap lowered below the answers' p95 (max_new_tokens) fails the precondition
    assert evaluate_rule(claim.rule, ok | {"generation_cap.ecg_r1": 24.0})[0] is False


def test_llm_answers_not_truncated_needs_the_cap_over_p95_and_stops() -> None:
    claim = _claim("llm_answers_not_truncated")
    assert claim.profiles == ("full",)  # the SmolLM2 stage runs in `full` only
    ok = {
        "answer_tokens_p95.ecg_r1_llm": 192.0,
        "generation_cap.ecg_r1_llm": 240.0,
        "truncation_rate.ecg_r1_llm": 0.0,
    }
    assert evaluate_rule(claim.rule, ok)[0] is True
    # a cap under the answers' p95 fails, whatever the truncation rate
    assert evaluate_rule(claim.rule, ok | {"generation_cap.ecg_r1_llm": 150.0})[0] is False
    assert evaluate_rule(claim.rule, ok | {"truncation_rate.ecg_r1_llm": 0.5})[0] is False


def test_an_answer_that_runs_on_after_its_close_counts_as_truncated() -> None:
    import numpy as np

    from icml26.ecg_r1.evaluate import score_method
    from icml26.ecg_r1.protocol import protocol_answer
    from icml26.ecg_r1.wavemodel import sample_params, simulate

    rng = np.random.default_rng(1)
    feats = simulate(sample_params(rng, 2), rng).features
    done = [protocol_answer(f) for f in feats]
    looping = [done[0], done[1] + "<answer>rbbb</answer><answer>rb"]  # runs on to the cap
    assert score_method({"both": looping}, feats).metrics("m")["truncation_rate.m"] == 0.5


def _free_text(trunc_sft: float, trunc_ft: float) -> dict[str, float]:
    return {
        "evidence_accuracy.sft_only": 0.2,  # the mean over seeds: not what the claim reads
        "evidence_accuracy.sft_only_seed0": 0.6,
        "evidence_accuracy.free_text": 0.3,
        "z.evidence_sft_only_minus_free_text": 4.0,
        "truncation_rate.sft_only_seed0": trunc_sft,
        "truncation_rate.free_text": trunc_ft,
    }


def test_protocol_claim_compares_seed_0_and_needs_finished_answers() -> None:
    claim = _claim("protocol_beats_free_text")
    assert claim.evaluate(_free_text(0.0, 0.05))["holds"] is True
    assert claim.under_placebo(_free_text(0.0, 0.05))[0] is False
    # mostly truncated answers on either side: undecided, not held
    for trunc in ((0.8, 0.0), (0.0, 1.0)):
        entry = claim.evaluate(_free_text(*trunc))
        assert entry["holds"] is None
        assert "not decidable" in entry["note"]
    # the seed-0 figure decides, whatever the mean over seeds says
    low = _free_text(0.0, 0.0) | {"evidence_accuracy.sft_only_seed0": 0.32}
    assert claim.evaluate(low | {"evidence_accuracy.sft_only": 0.9})["holds"] is False


def _readout(head: float, drop: float) -> dict[str, float]:
    return {
        "diagnosis_jaccard.both.sft_only": 0.1,  # the mean over seeds: not what the claim reads
        "diagnosis_jaccard.both.sft_only_seed0": 0.5,
        "diagnosis_jaccard.both.no_readout": 0.5 - drop,
        "diagnosis_jaccard.both.signal_cnn": head,
        "truncation_rate.sft_only_seed0": 0.0,
        "truncation_rate.no_readout": 0.0,
    }


def test_readout_claim_is_undecided_when_the_encoder_head_cannot_diagnose() -> None:
    claim = _claim("decoder_reads_the_classifier")
    assert claim.evaluate(_readout(0.8, 0.2))["holds"] is True
    assert claim.evaluate(_readout(0.8, 0.05))["holds"] is False
    assert claim.under_placebo(_readout(0.8, 0.2))[0] is False
    weak = claim.evaluate(_readout(0.067, 0.2))  # quick's signal_cnn: nothing to lean on
    assert weak["holds"] is None
    assert "signal_cnn" in weak["note"]
    looping = _readout(0.8, 0.2) | {"truncation_rate.no_readout": 1.0}
    assert claim.evaluate(looping)["holds"] is None


def test_table_rows_only_for_measured_methods_with_the_smollm2_stage() -> None:
    from icml26.ecg_r1.tables import tables_markdown

    m = {"diagnosis_jaccard.both.ecg_r1": 0.5, "format_rate.ecg_r1_llm": 0.75}
    rows = tables_markdown(m).splitlines()
    assert [r.split(" | ")[0] for r in rows[2:]] == ["| ecg_r1", "| ecg_r1_llm"]
    assert "0.750" in rows[-1]
    m["truncation_rate.sft_llm"] = 0.0
    assert "| sft_llm |" in tables_markdown(m)
