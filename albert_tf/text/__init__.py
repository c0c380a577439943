"""The bottom layer: text and the record format, without TensorFlow at module level.

The SentencePiece vocabulary with ALBERT's id layout (`vocabulary`), Unicode normalization
(`normalize`), the masking recipe (`options`, `masking`), the example feature spec and the
shard manifest's name (`features`), TFRecord framing (`tfrecord`) and file I/O on local
paths or, loaded only when a remote path is used, TensorFlow filesystems (`files`).

`data_prep` (the writer) and `albert_tf.data`, `albert_tf.export` and
`albert_tf.preprocessing` (the readers) are built on it; it imports nothing from either.
"""
