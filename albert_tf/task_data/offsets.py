"""Character offsets through ALBERT's tokenization: for every piece of a text, the span of
the original characters it came from.

The tokenizer normalizes text (whitespace collapsed, LaTeX quotes, NFKD without combining
marks, lower-casing) and then runs SentencePiece and the digit-comma split; both steps keep a
map back to the source here, so a span predicted over pieces (a SQuAD answer) is cut from
the original text character for character. No TensorFlow.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import numpy as np

from albert_tf.text.vocabulary import WORD_MARKER
from albert_tf.tokenization import AlbertTokenizer

# Where normalization can change more than case: LaTeX quotes and any non-ASCII character.
_SPECIAL_CHARACTERS = re.compile(r"``|''|[^\x00-\x7f]")
# No whitespace code point lies above U+3000; the last slot stands for all of them.
_IS_SPACE = np.array([chr(code).isspace() for code in range(0x3002)], dtype=bool)


def normalize_with_offsets(text: str, lower_case: bool) -> tuple[str, np.ndarray, np.ndarray]:
    """`normalize_text(text, lower_case)` (`albert_tf.text.normalize`) and where each
    character came from.

    Returns:
        (normalized, source_start, source_end): `normalized` is exactly `normalize_text`'s
        result; int64 arrays of shape (len(normalized),) give, for each normalized character,
        the [start, end) span of `text` it came from (a collapsed space spans the whitespace
        it replaced; the `"` of a LaTeX quote spans both quote characters; the characters NFKD
        makes of one source character ("ﬁ" -> "fi") all span that character). Both arrays are
        non-decreasing.
    """
    if text.isascii() and "``" not in text and "''" not in text:
        characters = text.lower() if lower_case else text  # one to one on ASCII
        starts = np.arange(len(text), dtype=np.int64)
        ends = starts + 1
    else:
        characters, starts, ends = _characters_with_offsets(text, lower_case)
    return _collapse_whitespace(characters, starts, ends)


def _characters_with_offsets(text: str, lower_case: bool):
    """`normalize_text` before whitespace collapsing, with per-character source spans."""
    decompose = not text.isascii()
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    for match in _SPECIAL_CHARACTERS.finditer(text):
        begin, stop = match.span()
        pieces.append(text[position:begin])
        starts.extend(range(position, begin))
        ends.extend(range(position + 1, begin + 1))
        found = match.group()
        replacement = '"' if len(found) == 2 else _decomposed(found) if decompose else found
        pieces.append(replacement)
        starts.extend([begin] * len(replacement))
        ends.extend([stop] * len(replacement))
        position = stop
    pieces.append(text[position:])
    starts.extend(range(position, len(text)))
    ends.extend(range(position + 1, len(text) + 1))
    characters = "".join(pieces)
    starts_array, ends_array = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
    if lower_case:
        lowered = characters.lower()  # whole-string, for Greek final sigma
        if len(lowered) != len(characters):  # no such character today; kept for safety
            counts = [len(character.lower()) for character in characters]
            starts_array, ends_array = np.repeat(starts_array, counts), np.repeat(ends_array,
                                                                                  counts)
        characters = lowered
    return characters, starts_array, ends_array


@functools.lru_cache(maxsize=None)
def _decomposed(character: str) -> str:
    # Per character equals whole-text NFKD here: decomposition needs no context, and the
    # canonical reordering it does only moves combining marks, which are all dropped.
    return "".join(part for part in unicodedata.normalize("NFKD", character)
                   if not unicodedata.combining(part))


def _collapse_whitespace(characters: str, starts: np.ndarray, ends: np.ndarray):
    normalized = " ".join(characters.split())
    codes = _code_points(characters)
    if codes.dtype != np.uint8:
        codes = np.minimum(codes, len(_IS_SPACE) - 1)
    kept = np.flatnonzero(~_IS_SPACE[codes])
    source_start = np.empty(len(normalized), np.int64)
    source_end = np.empty(len(normalized), np.int64)
    if kept.size:
        space_before = np.diff(kept) > 1  # one space before kept[j + 1]
        positions = np.arange(kept.size) + np.concatenate([[0], np.cumsum(space_before)])
        source_start[positions] = starts[kept]
        source_end[positions] = ends[kept]
        # A space spans the source of the whitespace run it replaced.
        spaces = positions[1:][space_before] - 1
        source_start[spaces] = starts[kept[:-1][space_before] + 1]
        source_end[spaces] = ends[kept[1:][space_before] - 1]
    return normalized, source_start, source_end


def _code_points(text: str) -> np.ndarray:
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), np.uint8)
    return np.frombuffer(text.encode("utf-32-le"), np.uint32)


# ------------------------------------------------------------------------ offsets of pieces

def tokenize_with_offsets(tokenizer: AlbertTokenizer, text: str
                          ) -> tuple[list[int], list[int], list[int]]:
    """Piece ids of `text` (exactly `tokenizer.encode(text)`) and each piece's character span.

    Returns:
        (ids, char_start, char_end): the [start, end) span of `text` each piece came from,
        without the space before a word-start piece (a lone word marker gets an empty span
        where the next character starts); the pieces the digit-comma rule makes of a "1990,"
        piece get sub-spans, the "," its last character. Starts never decrease, nor do the
        ends of non-empty spans; pieces overlap only when they split what one character
        became ("ﬁ" -> "f", "i": both span the ligature).
    """
    ids, starts, ends = token_spans(tokenizer, text)
    return ids.tolist(), starts.tolist(), ends.tolist()


def token_spans(tokenizer: AlbertTokenizer, text: str):
    """`tokenize_with_offsets` as int64 arrays of shape (num_pieces,)."""
    normalized, source_start, source_end = normalize_with_offsets(text, tokenizer.lower_case)
    model = tokenizer.piece_model
    pieces = [(piece.id, piece.begin, piece.end)
              for piece in _encode_as_proto(model.processor, normalized).pieces]
    if not pieces:
        return (np.zeros(0, np.int64),) * 3
    ids, begins, ends = np.array(pieces, np.int64).T
    if not normalized.isascii():  # SentencePiece counts UTF-8 bytes
        codes = _code_points(normalized)
        widths = 1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000)
        char_of_byte = np.repeat(np.arange(len(normalized) + 1), np.append(widths, 1))
        begins, ends = char_of_byte[begins], char_of_byte[ends]
    is_space = np.append(_code_points(normalized) == 32, False)
    begins = begins + (is_space[begins] & (begins < ends))
    if not model.digit_comma_ids.isdisjoint(ids.tolist()):
        ids, begins, ends = _split_digit_comma_spans(model, ids, begins, ends)
    start_of = np.append(source_start, len(text))
    starts = start_of[begins]
    stops = np.where(ends > begins, source_end[np.maximum(ends - 1, 0)], starts)
    return ids, starts, stops


def _encode_as_proto(processor, text: str):
    try:
        return processor.encode(text, out_type="proto")
    except ValueError:  # sentencepiece 0.2.0 calls it "immutable_proto"
        return processor.encode(text, out_type="immutable_proto")


def _split_digit_comma_spans(model, ids, begins, ends):
    """Applies `SentencePieceTokenizer.split_digit_commas` to pieces and their
    normalized-text spans."""
    table = np.stack([ids, begins, ends], axis=1)  # (num_pieces, 3)
    blocks, previous = [], 0
    for index in np.flatnonzero(np.isin(ids, list(model.digit_comma_ids))).tolist():
        piece_id, begin, end = table[index].tolist()
        parts = model.split_digit_commas([piece_id])
        lengths = _number_part_lengths(model, piece_id, len(parts) - 1)
        spans, cursor = [], begin
        for number_index, part in enumerate(parts[:-1]):
            last = number_index == len(parts) - 2
            stop = end - 1 if last else min(cursor + lengths[number_index], end - 1)
            spans.append((part, cursor, stop))
            cursor = stop
        spans.append((parts[-1], end - 1, end))
        blocks += [table[previous:index], np.array(spans, np.int64)]
        previous = index + 1
    blocks.append(table[previous:])
    return tuple(np.concatenate(blocks).T)


@functools.lru_cache(maxsize=4096)
def _number_part_lengths(model, piece_id: int, count: int) -> tuple[int, ...]:
    """Characters of each number piece the split makes of a digit-comma piece."""
    number = model.processor.id_to_piece(piece_id)[:-1].replace(WORD_MARKER, "")
    lengths = [len(piece.surface) for piece in _encode_as_proto(model.processor, number).pieces]
    # The split drops a lone leading word marker (empty surface) when the piece continued a word.
    lengths = lengths[len(lengths) - count:] if len(lengths) > count else lengths
    return tuple(lengths) + (0,) * (count - len(lengths))
