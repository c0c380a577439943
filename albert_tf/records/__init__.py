"""The record contract between the writer (`data_prep`) and the readers (`albert_tf.data`):
the features of a pretraining example and the shard manifest's name (`features`), and
TFRecord framing (`tfrecord`). No TensorFlow at module level."""
