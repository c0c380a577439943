"""A stand-in for the downstream suite's fine-tunes: the seed loop and the suite run for
real, each fine-tune is replaced by one that scores by its seed and keeps what it was asked."""

from __future__ import annotations

import pytest

from albert_lab.comparison import suite


@pytest.fixture
def stand_in_fine_tunes(monkeypatch, fine_tunes_here):
    """`install(describe)`: from then on every fine-tune appends `describe(its overrides,
    its seed)` to the list `install` returns; the bag-of-words baseline scores 0.9."""
    def install(describe):
        asked = []

        def fake_fine_tune(task, overrides, metric=None, label=None):
            seed = int(next(item for item in overrides if item.startswith("train.seed="))
                       .split("=")[1])
            asked.append(describe(overrides, seed))
            return {"metric": "accuracy", "value": 0.5 + seed / 100, "test": 0.4 + seed / 100,
                    "best_step": 600, "constant": 0.25, "constant_test": 0.25}

        fine_tunes_here(fake_fine_tune)
        monkeypatch.setattr(suite, "baseline_score", lambda *args, **kwargs: 0.9)
        return asked

    return install
