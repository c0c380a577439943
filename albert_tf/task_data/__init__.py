"""The paper's downstream tasks as files and scores, without TensorFlow: readers for GLUE,
SQuAD and RACE, feature conversion, metrics, SQuAD post-processing and the leaderboards'
prediction files. `albert_tf.finetuning` trains on them."""
