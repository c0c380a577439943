"""The masking recipe of the masked-LM objective (paper section 4.1): which pieces are chosen
and what they become. One dataclass for every place that masks: `albert-data build`'s flags
and the shards' manifest (`DataPrepOptions` extends it), a run's `data` section for dynamic
re-masking (`DataConfig` extends it) and the reader's re-masking itself
(`PretrainingDataConfig.masking`).

How many pieces a sequence holds and how many predictions it has room for are facts of the
shards (`max_seq_length`, `max_predictions_per_seq`), not of the recipe.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from albert_tf.config.schema import ConfigError


@dataclasses.dataclass(frozen=True)
class MaskingRecipe:
    """How pieces are masked (defaults: the original create_pretraining_data, except where
    said).

    Attributes:
        masked_lm_prob: share of a sequence's pieces to mask (the budget; at most the
            sequence's prediction slots).
        ngram: longest masked span, in words (3 in the paper).
        favor_shorter_ngram: span length n drawn with p(n) proportional to 1/n (else
            uniform over 1..ngram).
        whole_word_mask: spans are made of whole words, not single pieces.
        mask_token_rate: share of the chosen pieces shown as `[MASK]` (the paper's 80%).
        random_token_rate: share replaced by a random piece (10%); the rest keep their piece.
        random_from_ordinary: random replacements are ordinary pieces only, never a control,
            unknown or unused one; false: any id, as the original code draws them.
    """

    masked_lm_prob: float = 0.15
    ngram: int = 3
    favor_shorter_ngram: bool = True
    whole_word_mask: bool = True
    mask_token_rate: float = 0.8
    random_token_rate: float = 0.1
    random_from_ordinary: bool = True

    def __post_init__(self):
        checks = (
            ("masked_lm_prob", 0.0 < self.masked_lm_prob < 1.0, "must be in (0, 1)"),
            ("ngram", self.ngram >= 1, "must be at least 1"),
            ("mask_token_rate", 0.0 <= self.mask_token_rate <= 1.0, "must be in [0, 1]"),
            ("random_token_rate", 0.0 <= self.random_token_rate <= 1.0, "must be in [0, 1]"),
            ("random_token_rate", self.mask_token_rate + self.random_token_rate <= 1.0,
             f"must be at most 1 - mask_token_rate ({1.0 - self.mask_token_rate:g})"),
        )
        for name, ok, expected in checks:
            if not ok:
                raise self.masking_error(name, f"{expected}, got {getattr(self, name)!r}")

    def masking_error(self, name: str, problem: str) -> Exception:
        """The error for field `name` of the recipe (a class that extends the recipe names
        the field as its users know it)."""
        return ConfigError(f"masking field '{name}' {problem}")

    def masking_recipe(self) -> MaskingRecipe:
        """The recipe alone, from this instance or from a class that extends it."""
        return MaskingRecipe(**{name: getattr(self, name) for name in recipe_fields()})

    @property
    def kept_token_rate(self) -> float:
        """Share of the chosen pieces left as they are."""
        return 1.0 - self.mask_token_rate - self.random_token_rate


def recipe_fields() -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(MaskingRecipe))


# Fields added after shard folders first recorded the recipe (manifest.json, build.json and
# their fingerprint): recorded only when set away from their defaults, which are the
# behaviour before them, so a folder built before them keeps its fingerprint and a new build
# with the defaults writes the same bytes.
LATER_FIELDS = ("mask_token_rate", "random_token_rate", "random_from_ordinary")


def recorded_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """`fields` (a recipe's or an extending class's, by name) as shard folders record them:
    the later fields left out while at their defaults."""
    defaults = MaskingRecipe()
    return {name: value for name, value in fields.items()
            if name not in LATER_FIELDS or value != getattr(defaults, name)}
