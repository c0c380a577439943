"""Generated corpora and vocabularies for the data-prep tests (no downloads, fixed seeds)."""

from __future__ import annotations

import dataclasses
import json
import random

import numpy as np

from albert_tf.text.pair_rows import pair_rows, with_specials
from albert_tf.text.vocabulary import Vocabulary

WORDS = ("time year people way day man thing woman life child world school state family "
         "student group country problem hand part place case week company system program "
         "question work government number night point home water room mother area money "
         "story fact month lot right study book eye job word business issue side kind head "
         "house service friend father power hour game line end member law car city "
         "community name president team minute idea kid body information back parent face "
         "others level office door health person art war history party result change "
         "morning reason research girl guy moment air teacher force education").split()


SYLLABLES = ("ka ri to mon el sa vin dor pe lu ga nes tra bo qui fen har ost ul zem "
             "pra dis cor lam").split()


def _word(rng: random.Random) -> str:
    """A common word, or (one time in three) a made-up word of 2-4 syllables, so that
    SentencePiece learns sub-word pieces and words span several pieces."""
    if rng.random() < 2 / 3:
        return rng.choice(WORDS)
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def english_like_text(num_documents: int, seed: int, sentences=(2, 9), words=(4, 16)) -> str:
    """Documents of random sentences, one per line, blank lines between documents."""
    rng = random.Random(seed)
    documents = []
    for _ in range(num_documents):
        lines = []
        for _ in range(rng.randint(*sentences)):
            sentence = " ".join(_word(rng) for _ in range(rng.randint(*words)))
            lines.append(sentence.capitalize() + rng.choice(".!?"))
        documents.append("\n".join(lines))
    return "\n\n".join(documents) + "\n"


def unique_token_documents(num_documents: int, seed: int, sentences=(2, 12),
                           length=(3, 30)) -> list[list[list[int]]]:
    """Documents whose every piece id is unique and increasing through the corpus.

    So a segment's ids say which document it came from and in what order: ids of one document
    form one contiguous range, and a sentence comes before another iff its ids are smaller.
    Ids start at 5, after the special pieces.
    """
    rng = random.Random(seed)
    next_id, documents = 5, []
    for _ in range(num_documents):
        document = []
        for _ in range(rng.randint(*sentences)):
            size = rng.randint(*length)
            document.append(list(range(next_id, next_id + size)))
            next_id += size
        documents.append(document)
    return documents


def vocabulary(size: int, word_start_every: int = 2, seed: int = 0) -> Vocabulary:
    """A vocabulary of `size` ids: 0-4 special, every `word_start_every`-th id starts a word
    on average (at random), so words have one or more pieces."""
    rng = random.Random(seed)
    word_start = bytearray(size)
    for piece_id in range(size):
        word_start[piece_id] = piece_id < 5 or rng.random() < 1 / word_start_every
    return Vocabulary(size, bytes(word_start), np.arange(5, size, dtype=np.int64))


def document_bounds(documents: list[list[list[int]]]) -> list[tuple[int, int]]:
    """(first id, last id + 1) of each document of `unique_token_documents`."""
    return [(document[0][0], document[-1][-1] + 1) for document in documents]


def ordered_documents(num_documents: int, seed: int) -> str:
    """Documents with structure a tiny model learns in a few hundred steps: each opens with
    "once upon a time ." and closes with "the end .", and in between every sentence about the
    document's topic T reads "the T <word> the T ." So a masked topic is predictable from the
    rest of the sentence (MLM), and swapped segments show as the opening after the closing
    (SOP)."""
    rng = random.Random(seed)
    words = WORDS[:24]
    documents = []
    for _ in range(num_documents):
        topic = rng.choice(words)
        middle = [f"the {topic} {rng.choice(words)} the {topic} ."
                  for _ in range(rng.randint(2, 5))]
        documents.append("\n".join(["once upon a time .", *middle, "the end ."]))
    return "\n\n".join(documents) + "\n"


POSITIVE, NEGATIVE = ("splendid", "wonderful"), ("dreadful", "horrible")


def sentiment_rows(count, seed):
    """(sentence, label): ordinary words around one positive (1) or negative (0) word."""
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        label = rng.randrange(2)
        words = [rng.choice(WORDS) for _ in range(rng.randint(4, 10))]
        words.insert(rng.randint(0, len(words)), rng.choice(POSITIVE if label else NEGATIVE))
        rows.append((" ".join(words), label))
    return rows


def write_tsv(path, header, rows):
    path.write_text("\n".join(["\t".join(header)] + ["\t".join(map(str, row))
                                                     for row in rows]) + "\n")


def write_task_folder(folder, rows, source):
    """A GLUE-style task folder: `rows` {"train", "dev", "test"} of (sentence, label) as
    train.tsv and dev.tsv, test.tsv (index, sentence) with its labels apart in
    test_labels.tsv, and `source` as source.json."""
    folder.mkdir(parents=True, exist_ok=True)
    for split in ("train", "dev"):
        write_tsv(folder / f"{split}.tsv", ["sentence", "label"], rows[split])
    write_tsv(folder / "test.tsv", ["index", "sentence"],
              [(index, sentence) for index, (sentence, _) in enumerate(rows["test"])])
    write_tsv(folder / "test_labels.tsv", ["index", "label"],
              [(index, label) for index, (_, label) in enumerate(rows["test"])])
    (folder / "source.json").write_text(json.dumps(source))
    return folder


def write_sentiment_task(folder, seed=0, counts=(200, 64, 40), task="sst2"):
    """A GLUE-style task folder of `sentiment_rows` naming `task` in its source.json: train,
    dev and test (with test_labels.tsv) of `counts` rows, each split drawn from `seed`."""
    splits = dict(zip(("train", "dev", "test"), counts))
    rows = {split: sentiment_rows(count, 1 + offset + 3 * seed)
            for offset, (split, count) in enumerate(splits.items())}
    return write_task_folder(folder, rows, {"albert_finetune": {"task": task}})


@dataclasses.dataclass(slots=True)
class SegmentPair:
    """Segments A and B as piece ids (already trimmed to fit) and the sentence label."""

    first: list[int]
    second: list[int]
    label: int
    short_target: bool = False

    def __len__(self) -> int:
        """Tokens of `[CLS] A [SEP] B [SEP]`."""
        return len(self.first) + len(self.second) + 3


def segment_pairs(shard, pairs) -> list[SegmentPair]:
    """Pairs of `shard` (`data_prep.instances.Pair`'s fields) with their segments as lists
    of piece ids."""
    def ids(start, length):
        return shard.ids[start:start + length].tolist()
    return [SegmentPair(ids(first_start, first_length), ids(second_start, second_length),
                        label, bool(short_target))
            for first_start, first_length, second_start, second_length, label, short_target
            in pairs]


def segment_rows(segments, max_seq_length: int):
    """`[CLS] A [SEP] B [SEP]` rows, lengths and first [SEP]s of (A, B) lists of piece ids,
    through the data-prep workers' own layout (`pair_rows`), as the masker takes them."""
    ids = np.array([piece for pair in segments for side in pair for piece in side], np.int32)
    sizes = np.array([[len(first), len(second)] for first, second in segments], np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes.ravel())[:-1]]).reshape(-1, 2)
    ranges = np.stack([starts[:, 0], sizes[:, 0], starts[:, 1], sizes[:, 1]], axis=1)
    return pair_rows(with_specials(ids, max_seq_length), ranges, max_seq_length)
