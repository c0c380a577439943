"""The checkpoint formats the converters read and write (names only: no TensorFlow here, so
the run configs can validate a format name without loading it)."""

# What a model can be read from (`albert-convert --from`, `init.checkpoint_format`,
# `albert-finetune --from`, `albert-export --from`).
CHECKPOINT_FORMATS = ("ours", "original", "huggingface", "model_garden", "keras_hub")
# What a model can be written as (`albert-convert --to`); Model Garden is a source only.
TARGET_FORMATS = ("ours", "original", "huggingface", "keras_hub")
