"""Pretraining data readers: the tf.data pipeline (`pretraining`), dynamic re-masking
(`remasking`) and the checks of shards against a run config (`validation`), on top of the
record format of `albert_tf.text`."""
