"""SentencePiece with the ALBERT id layout: train a model, load one, look up piece facts.

The released ALBERT vocabulary (`30k-clean.model`) puts `<pad>`=0, `<unk>`=1, `[CLS]`=2,
`[SEP]`=3, `[MASK]`=4; models trained here get the same layout, with `[CLS]`/`[SEP]`/`[MASK]`
as control symbols (text that happens to contain "[SEP]" never turns into the separator).
Loading refuses a model with another layout, since every id in the TFRecords would mean
something else to the model.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import os
import random
import string
from typing import Iterable, Sequence

import numpy as np
import sentencepiece as spm

from albert_tf.io.files import atomic_write_bytes, read_bytes
from albert_tf.text.options import DataPrepError

SPECIAL_PIECES = {"<pad>": 0, "<unk>": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}
PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID = range(5)
WORD_MARKER = "\u2581"  # SentencePiece's "a space came before this piece"
_PUNCTUATION = frozenset(string.punctuation)


@dataclasses.dataclass(frozen=True)
class Vocabulary:
    """Per-id facts the example builder needs, as flat tables indexed by piece id.

    Attributes:
        word_start: `word_start[id]` is 1 if the piece starts a word: it carries the word
            marker, is a lone punctuation mark, or is a control/unknown piece (the rule of the
            original's whole-word masking, which also splits "word" from a following ".").
        ordinary_ids: ids a random replacement may draw: not control, unknown or unused.
    """

    size: int
    word_start: bytes
    ordinary_ids: np.ndarray


IN_MEMORY = "(SentencePiece model given as bytes)"  # what messages call a model without a path


def model_checksum(proto: bytes) -> str:
    """`sha256:<hex>` of a SentencePiece model file's bytes, as the manifests record it."""
    return "sha256:" + hashlib.sha256(proto).hexdigest()


class SentencePieceTokenizer:
    """A loaded SentencePiece model checked for the ALBERT layout.

    Args:
        model_path: the `.model` file, or its bytes (a model that travels inside another
            file, such as a saved Keras model). Text given to `encode` must already be
            normalized (`albert_tf.text.normalize`), as the corpus readers do.

    Attributes:
        proto: the model's bytes.
    """

    def __init__(self, model_path: str | os.PathLike | bytes):
        if isinstance(model_path, bytes):
            self.model_path, proto = IN_MEMORY, model_path
        else:
            self.model_path = os.fspath(model_path)
            try:
                proto = read_bytes(self.model_path)
            except Exception as error:  # OSError locally, tf.errors.OpError on remote paths
                reason = (getattr(error, "strerror", None) or getattr(error, "message", None)
                          or error)
                raise DataPrepError(f"SentencePiece model {self.model_path}: {reason}") \
                    from None
        self.proto = proto
        self.checksum = model_checksum(proto)
        self.processor = _parsed(proto, self.model_path)
        self._encodes_to_buffers = _encodes_to_buffers(self.processor)
        self.vocabulary = _vocabulary(self.processor)
        # 1 for the pieces that follow a space (carry the word marker): where a sentence may
        # be cut between words.
        self.space_before = bytes(
            self.processor.id_to_piece(piece_id).startswith(WORD_MARKER)
            for piece_id in range(self.processor.get_piece_size()))
        self._digit_comma_ids = frozenset(
            piece_id for piece_id in range(self.processor.get_piece_size())
            if _is_digit_comma(self.processor.id_to_piece(piece_id)))
        self._digit_comma_table = np.zeros(self.processor.get_piece_size(), bool)
        self._digit_comma_table[list(self._digit_comma_ids)] = True

    @property
    def vocab_size(self) -> int:
        return self.vocabulary.size

    def encode(self, sentences: Sequence[str]) -> list[list[int]]:
        """Piece ids of each (already normalized) sentence; one C++ call for the batch.

        As the original tokenizer does, a piece that ends in a digit and a comma ("1990,")
        is split into the number's pieces and a separate ","; sentences without such a piece
        (nearly all) pass through untouched.
        """
        return [self.split_digit_commas(ids) for ids in self._pieces(sentences)]

    def encode_flat(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """`encode` laid out as one array: the sentences' piece ids end to end (int32) and
        each sentence's count (int64). The digit-comma pieces are found by one table lookup
        over the array instead of a set test per sentence; only the sentences holding one
        are taken apart and put back.
        """
        ids, lengths = self._flat_pieces(sentences)
        found = np.flatnonzero(self._digit_comma_table[ids])
        if not len(found):
            return ids, lengths
        ends = np.cumsum(lengths)
        parts, lengths, cursor = [], lengths.copy(), 0
        for index in np.unique(np.searchsorted(ends, found, side="right")).tolist():
            start = int(ends[index] - lengths[index])
            split = self.split_digit_commas(ids[start:ends[index]].tolist())
            parts += (ids[cursor:start], np.asarray(split, np.int32))
            lengths[index], cursor = len(split), int(ends[index])
        return np.concatenate([*parts, ids[cursor:]]), lengths

    def _pieces(self, sentences: Sequence[str]) -> list[list[int]]:
        """SentencePiece's ids of each sentence, in one C++ call for the batch. It runs the
        batch on one thread of its own (`num_threads=1`) while the calling thread waits, so
        a data-prep worker keeps to one core."""
        if not sentences:
            return []
        return self.processor.encode(list(sentences), out_type=int, num_threads=1)

    def _flat_pieces(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """`_pieces` end to end (int32) and each sentence's count (int64).

        SentencePiece 0.2.1 and later can hand back each sentence's ids as a buffer of C
        ints; joined, they are one array without a Python int made per piece (that
        conversion took 1.5 of the 13.4 us an example of this stage on the King James Bible).
        Its public `out_type="numpy"` wraps every buffer in an array in a Python loop, which
        costs more than it saves, so the buffers are asked for directly (`_encode_buffers`,
        checked against the public call when the model loaded).
        """
        if not sentences:
            return np.zeros(0, np.int32), np.zeros(0, np.int64)
        if not self._encodes_to_buffers:
            return flat_ids(self._pieces(sentences))
        buffers = _encode_buffers(self.processor, list(sentences))
        lengths = np.fromiter(map(len, map(memoryview, buffers)), np.int64, len(buffers))
        return np.frombuffer(b"".join(buffers), np.int32), lengths

    @property
    def digit_comma_ids(self) -> frozenset[int]:
        """Ids of the pieces that end in a digit and a comma ("1990,")."""
        return self._digit_comma_ids

    def split_digit_commas(self, ids: list[int]) -> list[int]:
        """`ids` with each digit-comma piece replaced by its number's pieces and ","."""
        if self._digit_comma_ids.isdisjoint(ids):
            return ids
        result = []
        for piece_id in ids:
            if piece_id in self._digit_comma_ids:
                result.extend(self._digit_comma_parts(piece_id))
            else:
                result.append(piece_id)
        return result

    def _digit_comma_parts(self, piece_id: int) -> list[int]:
        processor = self.processor
        piece = processor.id_to_piece(piece_id)
        number = processor.encode(piece[:-1].replace(WORD_MARKER, ""), out_type=str)
        if not piece.startswith(WORD_MARKER) and number and number[0].startswith(WORD_MARKER):
            # The piece continued a word, so its number must not start a new one.
            number = number[1:] if number[0] == WORD_MARKER else [number[0][1:], *number[1:]]
        return [processor.piece_to_id(part) for part in (*number, piece[-1])]

    def pieces(self, ids: Iterable[int]) -> list[str]:
        return [self.processor.id_to_piece(int(piece_id)) for piece_id in ids]


def flat_ids(sentences: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """The piece ids of `sentences` end to end (int32) and each sentence's count (int64)."""
    lengths = np.fromiter(map(len, sentences), np.int64, len(sentences))
    return (np.fromiter(itertools.chain.from_iterable(sentences), np.int32, int(lengths.sum())),
            lengths)


def _encode_buffers(processor: spm.SentencePieceProcessor, sentences: list[str]) -> list:
    """Each sentence's ids as a buffer of C ints: SentencePiece's batch call behind the public
    `encode(sentences, out_type=int, num_threads=1)`, `_EncodeAsBufferBatch` (sentencepiece
    0.2.1 and later), given what that passes it: one thread (no pool of ours), no sampling
    (nbest_size, alpha unused), no bos, eos or reversal."""
    return processor._processor._EncodeAsBufferBatch(sentences, 1, None, False, -1, 0.0, False,
                                                     False, False)


def _encodes_to_buffers(processor: spm.SentencePieceProcessor) -> bool:
    """Whether `_encode_buffers` works with this sentencepiece: the call exists and answers a
    probe exactly as the public `encode` does (its name is not public, so a release may
    change it; the public call serves then)."""
    if not hasattr(getattr(processor, "_processor", None), "_EncodeAsBufferBatch"):
        return False
    probe = ["a probe: 1990, the caf\u00e9's pieces", "x", " "]
    try:
        answer = [list(memoryview(buffer)) for buffer in _encode_buffers(processor, probe)]
    except (TypeError, ValueError, RuntimeError):
        return False
    return answer == processor.encode(probe, out_type=int)


def _is_digit_comma(piece: str) -> bool:
    return len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit()


def _parsed(proto: bytes, path: str) -> spm.SentencePieceProcessor:
    """A processor for the model bytes read from `path`, checked for the ALBERT layout."""
    processor = spm.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(proto)
    except Exception as error:  # sentencepiece raises RuntimeError/OSError by version
        raise DataPrepError(f"{path}: not a SentencePiece model ({error})") from None
    _check_layout(processor, path)
    return processor


def check_model_file(proto: bytes, path: str, recorded: str | None, where: str,
                     vocab_size: int | None = None) -> str:
    """The checksum of the SentencePiece model bytes read from `path`, a path some file
    (`where`) gave, checked before the model is used or copied: it is the checksum recorded
    beside the path (`recorded`); it parses as a SentencePiece model with the ALBERT layout;
    and when no checksum is recorded, its vocabulary has the model's `vocab_size` (what can
    still be told of it: a model of another size would index the embedding out of range or
    leave rows unused). Raises DataPrepError naming `path`, `where` and what differs."""
    found = model_checksum(proto)
    if recorded and found != recorded:
        raise DataPrepError(f"{path}: its checksum is {found}, but {where} records {recorded} "
                            f"for it; the file changed, or the path names another model")
    pieces = _parsed(proto, path).get_piece_size()
    if not recorded and vocab_size is not None and pieces != vocab_size:
        raise DataPrepError(f"{path}: a SentencePiece model of {pieces} pieces, but the model "
                            f"has vocab_size {vocab_size} ({where} records no checksum for it)")
    return found


def _check_layout(processor, path: str) -> None:
    problems = []
    size = processor.get_piece_size()
    for piece, expected in SPECIAL_PIECES.items():
        found = processor.piece_to_id(piece)
        actual = processor.id_to_piece(expected) if expected < size else "(no such id)"
        if actual != piece:
            where = f"it has {piece!r} at id {found}" if processor.id_to_piece(found) == piece \
                else f"it has no {piece!r}"
            problems.append(f"id {expected} must be {piece!r} but is {actual!r} ({where})")
    if problems:
        raise DataPrepError(
            f"{path}: not an ALBERT SentencePiece model: " + "; ".join(problems)
            + ". Train one with `albert-data train-spm`, which uses the ALBERT layout.")


def _vocabulary(processor) -> Vocabulary:
    size = processor.get_piece_size()
    word_start = bytearray(size)
    ordinary = []
    for piece_id in range(size):
        special = (processor.is_control(piece_id) or processor.is_unknown(piece_id)
                   or processor.is_unused(piece_id))
        piece = processor.id_to_piece(piece_id)
        if special or piece.startswith(WORD_MARKER) or piece in _PUNCTUATION:
            word_start[piece_id] = 1
        if not special:
            ordinary.append(piece_id)
    return Vocabulary(size, bytes(word_start), np.asarray(ordinary, dtype=np.int64))


def train_sentencepiece(sentences: Iterable[str], model_prefix: str, vocab_size: int = 30000,
                        max_sentences: int = 2_000_000, seed: int = 12345,
                        character_coverage: float = 0.99995, num_threads: int = 1) -> str:
    """Trains a unigram SentencePiece model with the ALBERT layout; returns the .model path.

    Args:
        sentences: normalized sentences, streamed; a uniform sample of at most `max_sentences`
            of them (reservoir sampling, seeded) is kept, so any corpus size fits in memory.
        model_prefix: writes `<prefix>.model` and `<prefix>.vocab` (each atomically).
    """
    sample = reservoir_sample(sentences, max_sentences, random.Random(seed))
    if not sample:
        raise DataPrepError("train-spm: the inputs hold no sentences to train on")
    model = _train_unigram(sample, vocab_size, seed, character_coverage, num_threads)
    atomic_write_bytes(model_prefix + ".model", model)
    processor = spm.SentencePieceProcessor(model_proto=model)
    vocab = "".join(f"{processor.id_to_piece(i)}\t{processor.get_score(i):g}\n"
                    for i in range(processor.get_piece_size()))
    atomic_write_bytes(model_prefix + ".vocab", vocab.encode("utf-8"))
    return model_prefix + ".model"


def reservoir_sample(items: Iterable[str], capacity: int, rng: random.Random) -> list[str]:
    """A uniform random sample of `capacity` items from a stream (all of them if fewer)."""
    sample: list[str] = []
    for seen, item in enumerate(items):
        if seen < capacity:
            sample.append(item)
        else:
            slot = rng.randrange(seen + 1)
            if slot < capacity:
                sample[slot] = item
    return sample


def _train_unigram(sample, vocab_size, seed, character_coverage, num_threads) -> bytes:
    import io
    model = io.BytesIO()
    spm.set_random_generator_seed(seed)
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sample), model_writer=model, model_type="unigram",
            vocab_size=vocab_size, pad_id=SPECIAL_PIECES["<pad>"],
            unk_id=SPECIAL_PIECES["<unk>"], bos_id=-1, eos_id=-1,
            control_symbols=["[CLS]", "[SEP]", "[MASK]"], character_coverage=character_coverage,
            input_sentence_size=0, shuffle_input_sentence=False, num_threads=num_threads,
            minloglevel=2)
    except RuntimeError as error:
        message = str(error)
        if "Vocabulary size is too high" in message or "vocab_size" in message:
            raise DataPrepError(f"train-spm: the corpus is too small for vocab_size={vocab_size} "
                                f"({message.strip()}); pass a smaller --vocab_size") from None
        raise DataPrepError(f"train-spm: SentencePiece failed: {message.strip()}") from None
    return model.getvalue()
