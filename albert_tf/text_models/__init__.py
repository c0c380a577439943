"""Task models that take raw text: build from any checkpoint, `fit` on strings, `predict`
on strings, `save` as one `.keras` file that carries its tokenizer.

    from albert_tf.text_models import TextClassifier

    classifier = TextClassifier.from_checkpoint("runs/base", labels=["neg", "pos"])
    classifier.fit(train_texts, train_labels, validation_data=(dev_texts, dev_labels))
    classifier.predict(["a fine film"])["probabilities"]
    classifier.save("sentiment.keras")  # tf_keras.models.load_model reads it back

    TextClassifier      single texts or pairs -> one of `num_classes` classes
    TextRegressor       single texts or pairs -> a number
    TextSpanExtractor   (question, context) -> the answer's text in the context
    TextMultipleChoice  (context, question, options) -> which option

Each is the ids task model of `albert_tf.models` (`AlbertClassifier`, ...) with a
`TextPreprocessor` (`albert_tf.preprocessing`): the same in-graph tokenizer and packer the
exported SavedModel serves with.
"""

from albert_tf.text_models.classifier import TextClassifier, TextRegressor
from albert_tf.text_models.loading import load_text_model
from albert_tf.text_models.multiple_choice import TextMultipleChoice
from albert_tf.text_models.span_extractor import TextSpanExtractor
from albert_tf.text_models.starts import load_text_start

__all__ = ["TextClassifier", "TextRegressor", "TextSpanExtractor", "TextMultipleChoice",
           "load_text_model", "load_text_start"]
