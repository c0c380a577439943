"""In-graph preprocessing against the Python tokenizer: same normalized text, same ids, same
packing.

The Python side (`albert_tf.text.normalize`, `AlbertTokenizer`, `truncate_pair`) is the reference:
it follows the original ALBERT code line by line, while the graph side is built from
tensorflow-text ops, regexes and gathers.
"""

import random
import unicodedata

import pytest
import tensorflow as tf
import tf_keras

from albert_tf.preprocessing import AlbertInputPacker, AlbertTextTokenizer
from albert_tf.preprocessing.graph_normalization import normalize_text as graph_normalize
from albert_tf.preprocessing.graph_normalization import valid_utf8
from albert_tf.text.normalize import normalize_document, normalize_text
from albert_tf.tokenization import AlbertTokenizer, truncate_pair

TRICKY_TEXTS = [
    "  Caf\u00e9 ``au lait''\t ", "\u03a3\u0391\u03a3 Stra\u00dfe \u0130stanbul \u01c5 \u216b",
    "\ufb01 \uff40\uff40x", "a\u2028b\x1cc\x85d\u3000e\u00a0f\u2009g",
    "\ud55c\uad6d\uc5b4 \uff8a\uff9d",
    "x\u0301\u0327 \u00b4 \u02d8", "\u00c5NGSTR\u00d6M \u24b6 \u3392 \u00bc", "\uff21\uff22\uff23",
    "\u0915\u0941 \u0928\u093f", "IN 1990, THE (CAFE) \"X\" - \u00a35 \u20ac3.", "", "   \n\t ",
    "\U0001d400\U0001d7d9 \u2126 \u212a \u212b", "tab\tnew\nline\r\nend", "''``''", "\x00nul",
]
# Scripts whose letters all predate Unicode 14 (TensorFlow's case tables are older than
# Python 3.11's; the normalization module docstring names the one known gap).
_RANGES = [(0x20, 0x250), (0x370, 0x530), (0x900, 0x980), (0x1e00, 0x2000), (0x2000, 0x2bff),
           (0x3000, 0x30ff), (0x4e00, 0x4f00), (0xac00, 0xad00), (0xff00, 0xffef),
           (0x1d400, 0x1d800), (0x300, 0x370)]


def random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        chars = [chr(rng.randrange(*rng.choice(_RANGES))) for _ in range(rng.randrange(1, 30))]
        texts.append("".join(chars))
    return texts


def test_graph_normalization_equals_the_python_one():
    texts = TRICKY_TEXTS + random_texts(2000, seed=0)
    graph = [text.decode("utf-8") for text in
             graph_normalize(tf.constant(texts), lower_case=True).numpy()]
    mismatches = [(text, got, normalize_text(text, True))
                  for text, got in zip(texts, graph) if got != normalize_text(text, True)]
    assert not mismatches
    cased = graph_normalize(tf.constant(TRICKY_TEXTS), lower_case=False).numpy()
    assert [text.decode() for text in cased] == [normalize_text(t, False) for t in TRICKY_TEXTS]


def test_a_document_normalizes_as_its_lines_one_by_one():
    # normalize_document maps each distinct character once over a whole document and skips
    # collapsing single-spaced text: it must equal normalize_text line by line on any text.
    rng = random.Random(3)
    lines = TRICKY_TEXTS + random_texts(600, seed=1) + [
        "plain single spaced", "ends with a space ", " starts", "\u03a3\u039f\u03a3 \u03c3\u03a3.",
        "\U0001d6ba x", "a\u00a0 b", "no\u2028break", "\u00c6sop", "it''s ``so''\r"]
    for _ in range(300):
        document = "\n".join(rng.sample(lines, rng.randint(1, 6))) + rng.choice(["", "\n"])
        for lower_case in (True, False):
            expected = [normalize_text(line, lower_case) for line in document.split("\n")]
            assert normalize_document(document.encode(), lower_case) == \
                [line for line in expected if line], repr(document)
    with pytest.raises(UnicodeDecodeError):
        normalize_document(b"caf\xe9\n", True)


def test_every_assigned_character_normalizes_as_in_python():
    characters = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF
                  and unicodedata.category(chr(code)) not in ("Cn", "Co")]
    for lower_case in (False, True):
        graph = graph_normalize(tf.constant(characters), lower_case).numpy()
        different = [char for char, got in zip(characters, graph)
                     if got.decode("utf-8") != normalize_text(char, lower_case)]
        if not lower_case:
            assert not different
            continue
        # The one gap: capitals added in Unicode 14 (Python 3.11's tables), which TF's
        # older case tables leave upper-case (Vithkuqi, one Glagolitic, four Latin).
        assert 0 < len(different) <= 40
        assert all(unicodedata.category(char) == "Lu" and
                   graph_normalize(tf.constant([char]), True).numpy()[0].decode() == char
                   for char in different)


def test_combining_marks_are_those_with_a_combining_class():
    # U+0941 is a non-spacing mark (Mn) with combining class 0: the original keeps it.
    assert unicodedata.category("\u0941") == "Mn" and unicodedata.combining("\u0941") == 0
    assert graph_normalize(tf.constant(["\u0915\u0941\u0301"]), True).numpy()[0].decode() == \
        "\u0915\u0941"


def test_invalid_utf8_becomes_replacement_characters():
    assert valid_utf8(tf.constant([b"a\xffb", b"ok"])).numpy().tolist() == \
        ["a\ufffdb".encode(), b"ok"]
    valid = [b"ok", "caf\u00e9 \U0001d400".encode(), b""]
    assert valid_utf8(tf.constant(valid)).numpy().tolist() == valid  # the fast path
    # Surrogates and code points past U+10FFFF are invalid too.
    for text in [b"a\xed\xa0\x80b", b"a\xf4\x90\x80\x80b", b"\xc0\xaf", b"caf\xc3"]:
        fixed = valid_utf8(tf.constant([b"ok", text])).numpy()[1]
        assert "\ufffd" in fixed.decode("utf-8")  # strict decoding succeeds


@pytest.fixture(scope="module")
def tokenizers(released_style_model):
    return AlbertTextTokenizer(released_style_model), AlbertTokenizer(released_style_model)


def test_graph_tokenizer_gives_the_python_ids(tokenizers):
    graph, python = tokenizers
    texts = TRICKY_TEXTS + [
        "In 1995, a cafe", "the year 1990, 1991,1992, and 5,5,",
        "THE CAF\u00c9 ``D\u00c9J\u00c0''",
        "x (was) \"he\" - \u00a35 \u20ac3.", "[SEP] is not a separator [CLS]",
    ] + random_texts(300, 1)
    ids = graph(tf.constant(texts)).to_list()
    assert ids == [python.encode(text) for text in texts]
    assert any(len(python.encode(t)) > len(python._tokenizer.processor.encode(
        python.normalize(t))) for t in texts), "the digit-comma split was exercised"


def test_cased_tokenizer(released_style_model):
    graph = AlbertTextTokenizer(released_style_model, lower_case=False)
    python = AlbertTokenizer(released_style_model, lower_case=False)
    texts = ["The Cafe WAS", "caf\u00c9 1990,"]
    assert graph(tf.constant(texts)).to_list() == [python.encode(t) for t in texts]


def test_a_reseed_leaves_a_built_tokenizer_working(released_style_model, tmp_path):
    """`tf_keras.utils.set_random_seed` (as `tf.random.set_seed` and
    `tf_keras.backend.clear_session`) clears TensorFlow's eager kernel cache. tensorflow-text
    made its SentencePiece resource the property of a cached kernel, so the resource went
    too, and every later call of a tokenizer built before failed with "Resource ...
    SentencepieceOp ... does not exist": eager, traced, in a `tf.data` pipeline. Both of the
    layer's tokenizers are exercised (text after a [MASK] uses the second). A SavedModel
    loaded before the reseed kept working even then (its resource's kernel is not in that
    cache); it is checked too, since a SavedModel now records the resource's shared name."""
    tokenizer = AlbertTextTokenizer(released_style_model)
    texts = tf.constant(["the cafe in 1995, a year", "un[MASK]able [MASK]. he was"])
    traced = tf.function(lambda text: tokenizer(text).to_tensor(-1))
    pipeline = tf.data.Dataset.from_tensor_slices(texts).batch(2).map(
        lambda text: tokenizer.tokenize_with_masks(text).to_tensor(-1))
    module = tf.Module()
    module.resources = list(tokenizer.resources)
    module.encode = tf.function(lambda text: tokenizer(text).to_tensor(-1),
                                input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, str(tmp_path / "saved"))
    loaded = tf.saved_model.load(str(tmp_path / "saved"))

    def outputs() -> dict[str, list]:
        ids = tokenizer(texts)
        return {"eager": ids.to_list(), "traced": traced(texts).numpy().tolist(),
                "with masks": [batch.numpy().tolist() for batch in pipeline],
                "pieces": tokenizer.id_to_piece(ids).to_list(),
                "loaded": loaded.encode(texts).numpy().tolist()}

    before = outputs()
    python = AlbertTokenizer(released_style_model)
    assert before["eager"] == [python.encode(text.decode()) for text in texts.numpy()]
    tf_keras.utils.set_random_seed(1)
    assert outputs() == before

def test_invalid_utf8_does_not_fail(tokenizers):
    graph, python = tokenizers
    ids = graph(tf.constant([b"the \xff\xfe cafe", b"\xc3", b"\x80" * 10])).to_list()
    assert ids[0] == python.encode("the \ufffd\ufffd cafe")
    assert len(ids) == 3


def test_long_texts_are_cut_at_a_word_boundary_without_changing_the_kept_pieces(
        released_style_model, tokenizers):
    _, python = tokenizers
    cut = AlbertTextTokenizer(released_style_model, max_input_bytes=200)
    long_text = " ".join(f"the cafe in {1990 + i % 9}, was" for i in range(20_000))  # 600 KB
    ids = cut(tf.constant([long_text, "short text"])).to_list()
    full = python.encode(long_text)
    assert len(ids[0]) >= 50 and ids[0] == full[:len(ids[0])]
    assert ids[1] == python.encode("short text")


MASKED_TEXTS = ["the [MASK] was he.", "[MASK]. of [MASK]the", "un[MASK]able [MASK]",
                "[MASK][MASK]", "no mask here", "", "year 1990,[MASK] 1991,", "[MASK]"]


def test_masks_in_text_become_mask_ids(tokenizers):
    graph, python = tokenizers
    ids = graph.tokenize_with_masks(tf.constant(MASKED_TEXTS)).to_list()
    assert ids == [python.encode_with_masks(text) for text in MASKED_TEXTS]
    assert ids[3] == [4, 4] and ids[7] == [4]
    # After a mask with no space, text continues the word: no word-start marker on ".".
    pieces = python._tokenizer.pieces(ids[1])
    assert pieces[:2] == ["[MASK]", "."]


PAIR_CASES = [  # (text, text_pair): singles, empty pairs, one long, both long
    ("the cafe was", ""), ("", "the year"), ("", ""), ("the " * 30, "he was"),
    ("he was", "the cafe " * 30), ("in 1990, the cafe was " * 5, "of and in to " * 7),
    ("   ", "x"), ("a b c d e f g", "h i j k l m n"),
]


@pytest.mark.parametrize("max_seq_length", [3, 4, 7, 16, 64])
def test_packing_equals_the_original_truncation_and_layout(tokenizers, max_seq_length):
    graph, python = tokenizers
    texts, pairs = [list(column) for column in zip(*PAIR_CASES)]
    packer = AlbertInputPacker(max_seq_length)
    packed = packer([graph(tf.constant(texts)), graph(tf.constant(pairs))])
    expected = python.encode_for_model(texts, pairs, max_seq_length)
    for name, value in expected.items():
        assert packed[name].numpy().tolist() == value.tolist(), name
    singles = packer([graph(tf.constant(texts))])
    expected = python.encode_for_model(texts, max_seq_length=max_seq_length)
    for name, value in expected.items():
        assert singles[name].numpy().tolist() == value.tolist(), name


def test_pair_layout_by_hand():
    packer = AlbertInputPacker(8)
    packed = packer([tf.ragged.constant([[10, 11, 12, 13, 14, 15], [10], [10]]),
                     tf.ragged.constant([[20, 21, 22], [20], []])])
    assert packed["input_word_ids"].numpy().tolist() == [
        [2, 10, 11, 12, 3, 20, 21, 3], [2, 10, 3, 20, 3, 0, 0, 0], [2, 10, 3, 0, 0, 0, 0, 0]]
    assert packed["input_type_ids"].numpy().tolist() == [
        [0, 0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0, 0], [0] * 8]
    assert packed["input_mask"].numpy().sum(axis=1).tolist() == [8, 5, 3]


def test_truncate_pair_is_the_original_rule():
    first, second = list(range(10)), list(range(3))
    truncate_pair(first, second, 8)
    assert (first, second) == ([0, 1, 2, 3, 4], [0, 1, 2])
    first, second = list(range(5)), list(range(5))
    truncate_pair(first, second, 5)
    assert (first, second) == ([0, 1, 2], [0, 1])


def test_padding_rounds_up_to_the_multiple_but_not_past_the_maximum():
    ids = tf.ragged.constant([[5] * 3, [5]])
    assert AlbertInputPacker(64, 8)([ids])["input_word_ids"].shape == (2, 8)
    assert AlbertInputPacker(6, 8)([ids])["input_word_ids"].shape == (2, 6)
    assert AlbertInputPacker(64)([tf.ragged.constant([[], []], tf.int32)])[
        "input_word_ids"].shape == (2, 2)


def test_layers_serialize(released_style_model):
    tokenizer = AlbertTextTokenizer(released_style_model, max_input_bytes=100)
    again = AlbertTextTokenizer.from_config(tokenizer.get_config())
    assert again(tf.constant(["the cafe"])).to_list() == tokenizer(
        tf.constant(["the cafe"])).to_list()
    packer = AlbertInputPacker.from_config(AlbertInputPacker(32, 4).get_config())
    assert (packer.max_seq_length, packer.pad_to_multiple_of) == (32, 4)
    with pytest.raises(ValueError, match="at least 3"):
        AlbertInputPacker(2)
