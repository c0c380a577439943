"""A multiple-choice row in the graph, packed as `albert-finetune --task race` packs it:
`[CLS] context [SEP] question+option [SEP]`, the question+option (`option_texts`) cut to
its last `max_qa_length` pieces before the pair is truncated as the original
`run_classifier.py` truncated pairs. The raw-text model (`TextMultipleChoice`) and the
SavedModel's `serving_choices` signature both pack with `pack_option_rows`.
"""

from __future__ import annotations

from typing import Callable

import tensorflow as tf


def option_texts(question: tf.Tensor, option: tf.Tensor) -> tf.Tensor:
    """`albert_tf.task_data.race.option_text` in the graph, on two string vectors
    `(rows,)`: every "_" of a cloze question replaced by the option, else question + " " +
    option."""
    parts = tf.strings.split(question, "_")  # ragged (rows, (parts))
    lengths = parts.row_lengths()
    options = tf.RaggedTensor.from_row_lengths(tf.repeat(option, lengths), lengths)
    # Every part is followed by the option; the last part's copy is cut off again.
    joined = tf.strings.reduce_join(tf.strings.join([parts, options]), axis=-1)
    kept = tf.strings.length(joined) - tf.strings.length(option)
    filled = tf.strings.substr(joined, tf.zeros_like(kept), kept)
    is_cloze = tf.strings.regex_full_match(question, "(?s).*_.*")
    return tf.where(is_cloze, filled, tf.strings.join([question, option], separator=" "))


def pack_option_rows(tokenize: Callable[[tf.Tensor], tf.RaggedTensor],
                     packer: Callable[[list[tf.RaggedTensor]], dict[str, tf.Tensor]],
                     contexts: tf.Tensor, questions: tf.Tensor, options: tf.Tensor,
                     max_qa_length: int) -> dict[str, tf.Tensor]:
    """One packed row per (context, question, option), string vectors `(rows,)` each.

    Args:
        tokenize: text `(rows,)` -> ragged piece ids `(rows, (pieces))`.
        packer: `AlbertInputPacker` (or its function) on the two segments.
        max_qa_length: pieces of question+option kept (the last ones; 128 in RACE).

    Returns the packer's int32 `(rows, seq_length)` `input_word_ids`, `input_mask`,
    `input_type_ids`.
    """
    qa_ids = tokenize(option_texts(questions, options))[:, -max_qa_length:]
    return packer([tokenize(contexts), qa_ids])
