"""Pretraining data: the TFRecord feature spec (shared with `data_prep`) and the tf.data reader.

`albert_tf.data.features` imports no TensorFlow, so the data-prep workers can use the spec
without loading it; `albert_tf.data.pretraining` builds the `tf.data` pipeline.
"""
