"""`DataPrepOptions`: the flags of `albert-data build`, with the original script's defaults."""

from __future__ import annotations

import dataclasses

from albert_tf.config.masking import MaskingRecipe, recorded_fields
from albert_tf.config.model import SENTENCE_OBJECTIVES

SINGLE_SENTENCE_CHUNKS = ("split", "random_next")
# What the sentence label of an example (`next_sentence_labels`) says, by objective.
SENTENCE_LABELS = {
    "sop": "0 = A before B as written, 1 = swapped",
    "nsp": "0 = B is the text after A, 1 = B is random, from another document",
    "none": "always 0 (no sentence task)",
}


class DataPrepError(ValueError):
    """Bad input or options; the message names the file, line or flag and what was expected."""


@dataclasses.dataclass(frozen=True)
class DataPrepOptions(MaskingRecipe):
    """How examples are made from documents (defaults: the original create_pretraining_data):
    the masking recipe (`albert_tf.config.masking.MaskingRecipe`, whose fields it has) and
    the rest.

    Attributes:
        max_seq_length: tokens per example, `[CLS]`/`[SEP]` included.
        dupe_factor: passes over each document, each with fresh random segments and masks.
        short_seq_prob: probability that an example targets a length uniform in
            [2, max_seq_length - 3] instead of the maximum.
        max_predictions_per_seq: cap on masked positions (the record's prediction length).
        sentence_objective: `sop` (swap A and B half the time), `nsp` (B from another
            document half the time) or `none` (A and B always in order, label 0).
        single_sentence_chunks: what a chunk of one sentence becomes. `split` (default): the
            sentence is cut at a random token into A and B, then labelled by the objective.
            `random_next`: what the original script does, for studying the paper's numbers:
            A is the sentence and B comes from another document with label 1, in SOP mode
            too, so a share of the "SOP" examples are NSP negatives.
        random_seed: the output is a pure function of inputs, options and this seed.
        lower_case: lower-case text before SentencePiece (match how the model was trained).
        max_line_chars: longer lines are skipped as not being sentences (counted, or an error
            with `strict`).
        strict: fail on invalid UTF-8, NUL bytes and over-long lines instead of skipping them.
    """

    max_seq_length: int = 512
    dupe_factor: int = 40
    short_seq_prob: float = 0.1
    max_predictions_per_seq: int = 20
    sentence_objective: str = "sop"
    single_sentence_chunks: str = "split"
    random_seed: int = 12345
    lower_case: bool = True
    max_line_chars: int = 100_000
    strict: bool = False

    def __post_init__(self):
        super().__post_init__()
        checks = [
            (self.max_seq_length >= 5, "max_seq_length must be at least 5"),
            (self.dupe_factor >= 1, "dupe_factor must be at least 1"),
            (0.0 <= self.short_seq_prob <= 1.0, "short_seq_prob must be in [0, 1]"),
            (self.max_predictions_per_seq >= 1, "max_predictions_per_seq must be at least 1"),
            (self.sentence_objective in SENTENCE_OBJECTIVES,
             f"sentence_objective must be one of {', '.join(SENTENCE_OBJECTIVES)}, "
             f"got {self.sentence_objective!r}"),
            (self.single_sentence_chunks in SINGLE_SENTENCE_CHUNKS,
             f"single_sentence_chunks must be one of {', '.join(SINGLE_SENTENCE_CHUNKS)}, "
             f"got {self.single_sentence_chunks!r}"),
            (self.single_sentence_chunks == "split" or self.sentence_objective != "none",
             "single_sentence_chunks random_next makes label-1 examples; it needs "
             "sentence_objective sop or nsp"),
            (self.max_line_chars >= 1, "max_line_chars must be at least 1"),
        ]
        for ok, message in checks:
            if not ok:
                raise DataPrepError(f"option {message}")

    def masking_error(self, name: str, problem: str) -> Exception:
        return DataPrepError(f"option {name} {problem}")

    def to_dict(self) -> dict:
        """The options as `manifest.json` and `build.json` record them (and fingerprint)."""
        return recorded_fields(dataclasses.asdict(self))

    @property
    def max_tokens_per_pair(self) -> int:
        """Room for segments A and B: the sequence minus `[CLS]`, `[SEP]`, `[SEP]`."""
        return self.max_seq_length - 3
