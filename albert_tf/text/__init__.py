"""Text to masked pieces, without TensorFlow at module level: the SentencePiece vocabulary
with ALBERT's id layout (`vocabulary`), Unicode normalization (`normalize`), the data-prep
options and the masking recipe (`options`, `masking`) and what masking counts
(`statistics`, which the shard manifests record).

It stands on `albert_tf.io`; the record contract (`albert_tf.records`) stands on it.
`data_prep` (the writer) and `albert_tf.data`, `albert_tf.export` and
`albert_tf.preprocessing` (the readers) are built on these three; they import nothing from
either.
"""
