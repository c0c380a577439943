"""A stuck fine-tune: one whose best dev score is within a point of what a constant answer
scores (the majority class's share, for accuracy).

Small models fine-tuned on a few thousand examples can end where they started: the
classifier settles on one class for every input and dev evaluation keeps that checkpoint.
Such a run says nothing about its encoder, so every report names it instead of averaging
it in silently.

    is_stuck(0.239, 0.239)  # True: BBC News at its majority class
    is_stuck(0.468, 0.239)  # False
"""

from __future__ import annotations

# A score at most this far above the constant answer's counts as stuck (one point).
STUCK_MARGIN = 0.01


def is_stuck(score: float, constant: float | None) -> bool:
    """Whether `score` is within `STUCK_MARGIN` of `constant` (or below it); never when the
    task has no constant-answer floor (`constant` None)."""
    return constant is not None and score <= constant + STUCK_MARGIN


def stuck_note(metric: str, score: float, constant: float | None, split: str = "dev"
               ) -> str | None:
    """The line a report prints for a stuck fine-tune, or None when it is not stuck."""
    if not is_stuck(score, constant):
        return None
    return (f"stuck: the best {split} {metric} {100 * score:.1f} is within "
            f"{100 * STUCK_MARGIN:.0f} point of what one answer for every example scores "
            f"({100 * constant:.1f}); the fine-tune learned nothing from its encoder")
