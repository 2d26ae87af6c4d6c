"""Questions are answered from the state: checked against the env's own objects."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.syvla.data import TextBank, all_instructions
from icml26.syvla.evaluate import question_family
from icml26.syvla.levels import egocentric_view, make_env
from icml26.syvla.vqa import ANSWERS, ask, objects_in_view, question_texts


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**20), level=st.sampled_from(["goto", "pickup"]))
def test_questions_agree_with_the_environment(seed: int, level: str) -> None:
    env = make_env(level, "train")
    env.reset(seed=seed)
    view = egocentric_view(env, 13)
    objs = objects_in_view(view)
    true = sorted(
        (o.color, o.type)
        for o in env.grid.grid
        if o is not None and o.type in ("ball", "box", "key")
    )
    assert sorted((c, t) for c, t, _, _ in objs) == true
    rng = np.random.default_rng(seed)
    for _ in range(5):
        q = ask(view, rng)
        assert q.answer in ANSWERS
        assert q.text in question_texts()
        if q.text.startswith("is there a"):
            colour, type_ = q.text.split()[3:5]
            assert (q.answer == "yes") == ((colour, type_) in true)
        if q.text.startswith("what colour is the"):
            type_ = q.text.split()[-1].rstrip("?")
            assert [c for c, t in true if t == type_] == [q.answer]


def test_where_question_uses_the_agent_frame() -> None:
    view = np.zeros((13, 13, 3), np.uint8)
    view[2, 6] = (6, 0, 0)  # red ball four cells ahead
    view[6, 9] = (7, 2, 0)  # blue box three cells to the right
    rng = np.random.default_rng(0)
    seen = {}
    for _ in range(200):
        q = ask(view, rng)
        seen[q.text] = q.answer
    assert seen["where is the red ball?"] == "ahead"
    assert seen["where is the blue box?"] == "right"


def test_bank_embeds_new_instructions_on_first_use() -> None:
    class Fake:
        dim = 4

        def __init__(self) -> None:
            self.calls: list[list[str]] = []

        def encode(self, texts: list[str]) -> np.ndarray:
            self.calls.append(list(texts))
            return np.stack([np.full(4, len(t), np.float32) for t in texts])

    enc = Fake()
    bank = TextBank(enc, texts=all_instructions()[:3])  # type: ignore[arg-type]
    ids = bank.ids(["fly to the moon", all_instructions()[0], "fly to the moon"])
    assert ids[0] == ids[2] == 3
    assert ids[1] == bank.index[all_instructions()[0]]
    assert bank.vectors[ids[0]].tolist() == [15.0] * 4
    assert enc.calls[-1] == ["fly to the moon"]  # embedded once, the known text not again


def test_every_question_has_one_family_and_other_text_fails() -> None:
    families = {question_family(q) for q in question_texts()}
    assert families == {"colour", "object", "exists", "where"}
    with pytest.raises(ValueError, match="not a question"):
        question_family("go to the red ball")
