"""Serve raw text from an exported ALBERT SavedModel with nothing but TensorFlow and TF Text.

    python scripts/serve_text.py quickstart/export/saved_model "The [MASK] of the module."

Prints the encoder outputs' shapes for the texts and, for models exported with their masked-LM
head, the top predictions for each [MASK]. This script never imports albert_tf: it is what a
client of the SavedModel needs.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
import tensorflow_text  # noqa: E402,F401  (registers the SentencePiece and trimming ops)


def main(path: str, texts: list[str]) -> None:
    model = tf.saved_model.load(path)
    outputs = model.signatures["serving_default"](text=tf.constant(texts))
    lengths = outputs["input_mask"].numpy().sum(axis=1)
    print(f"serving_default: pooled_output {outputs['pooled_output'].shape}, sequence_output "
          f"{outputs['sequence_output'].shape}, tokens per text {lengths.tolist()}")
    if "fill_mask" not in model.signatures:
        return
    predictions = model.signatures["fill_mask"](text=tf.constant(texts))
    for text, positions, pieces, scores in zip(
            texts, predictions["mask_positions"].numpy(), predictions["top_k_pieces"].numpy(),
            predictions["top_k_probabilities"].numpy()):
        for position, row_pieces, row_scores in zip(positions, pieces, scores):
            if position < 0:
                continue
            guesses = ", ".join(f"{piece.decode()} {score:.3f}"
                                for piece, score in zip(row_pieces, row_scores))
            print(f"fill_mask {text!r} at {position}: {guesses}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
