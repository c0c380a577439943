"""Data prep for ALBERT pretraining: text -> SentencePiece ids -> masked MLM + SOP/NSP TFRecords.

The flow, one module per step: `corpus` (inputs split into shard-sized parts, read as
documents), `normalize`, `tokenizer` (SentencePiece), `instances` (segments A/B and the
sentence label), `masking` (n-gram MLM masking), `example_encoding` + `tfrecord` (serialized
tf.train.Example records), `shard` (one part -> one shard), `pipeline` (all shards, in
parallel, resumable, with a manifest), `beam` (the same shards on Apache Beam), `cli`
(`albert-data`). Nothing here imports TensorFlow except `inspect_shards` and `tfds_source`.
"""
