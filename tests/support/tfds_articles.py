"""A TensorFlow Datasets builder of articles a test makes (prepared locally; nothing is
downloaded). It lives in a plain module on the path, not in a test file: TFDS finds a
builder's source from its class's module name, and a test file imported by path has a
dotted name (`tests.data_prep...`) whose first part TFDS cannot read as a package."""


def articles_builder(texts):
    """A `GeneratorBasedBuilder` named `albert_test_articles` of `texts` (title, text)."""
    import tensorflow_datasets as tfds

    class AlbertTestArticles(tfds.core.GeneratorBasedBuilder):
        VERSION = tfds.core.Version("1.0.0")

        def _info(self):
            return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict(
                {"title": tfds.features.Text(), "text": tfds.features.Text()}))

        def _split_generators(self, dl_manager):
            return {"train": self._generate_examples()}

        def _generate_examples(self):
            for index, text in enumerate(texts):
                yield index, {"title": f"article {index}", "text": text}

    return AlbertTestArticles
