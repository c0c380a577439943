"""Records: our hand-written Example bytes and TFRecord framing against TensorFlow's own.

Also the compatibility promise: records built the way the original create_pretraining_data
builds them (tf.train.Example objects) decode through our pipeline, and ours parse as
tf.train.Example with the same values.
"""

import collections
import hashlib
import random
import struct

import numpy as np
import pytest
import tensorflow as tf
from bounded_process import refusal

from albert_tf.data.pretraining import PretrainingDataConfig, pretraining_dataset
from albert_tf.records.features import FEATURE_NAMES, decode_record
from albert_tf.records.tfrecord import (
    count_records,
    frame,
    masked_crc32c,
    read_records,
    write_records,
)
from albert_tf.text.options import DataPrepError
from data_prep.example_encoding import ExampleEncoder, varint, varint_bytes

SEQ, PREDICTIONS, VOCAB = 24, 5, 30000


def random_example(rng):
    length = rng.randint(5, SEQ)
    first = rng.randint(1, length - 4)
    ids = [2] + [rng.randrange(5, VOCAB) for _ in range(length - 2)] + [3]
    ids[first + 1] = 3
    segments = [0] * (first + 2) + [1] * (length - first - 2)
    boundary = [rng.randint(0, 1) for _ in range(length)]
    count = rng.randint(1, PREDICTIONS)
    positions = sorted(rng.sample(range(1, length - 1), min(count, length - 2)))
    originals = [rng.randrange(5, VOCAB) for _ in positions]
    return ids, bytes(segments), bytes(boundary), positions, originals, rng.randint(0, 1)


def original_style_example(ids, segments, boundary, positions, originals, label):
    """A tf.train.Example made as the original script makes it, padded the same way."""
    def ints(values, size):
        return tf.train.Feature(int64_list=tf.train.Int64List(
            value=list(values) + [0] * (size - len(values))))
    features = collections.OrderedDict()
    features["input_ids"] = ints(ids, SEQ)
    features["input_mask"] = ints([1] * len(ids), SEQ)
    features["segment_ids"] = ints(list(segments), SEQ)
    features["token_boundary"] = ints(list(boundary), SEQ)
    features["masked_lm_positions"] = ints(positions, PREDICTIONS)
    features["masked_lm_ids"] = ints(originals, PREDICTIONS)
    features["masked_lm_weights"] = tf.train.Feature(float_list=tf.train.FloatList(
        value=[1.0] * len(positions) + [0.0] * (PREDICTIONS - len(positions))))
    features["next_sentence_labels"] = ints([label], 1)
    return tf.train.Example(features=tf.train.Features(feature=features))


def encode(examples):
    """Our bytes for a list of `random_example`s, through the batch encoder."""
    batch = len(examples)
    arrays = {name: np.zeros((batch, SEQ), np.int64) for name in ("ids", "segments", "bounds")}
    positions, originals = np.zeros((batch, PREDICTIONS), np.int64), \
        np.zeros((batch, PREDICTIONS), np.int64)
    lengths, counts, labels = (np.zeros(batch, np.int64) for _ in range(3))
    for row, (ids, segments, boundary, where, what, label) in enumerate(examples):
        arrays["ids"][row, :len(ids)] = ids
        arrays["segments"][row, :len(ids)] = list(segments)
        arrays["bounds"][row, :len(ids)] = list(boundary)
        positions[row, :len(where)], originals[row, :len(what)] = where, what
        lengths[row], counts[row], labels[row] = len(ids), len(where), label
    return ExampleEncoder(SEQ, PREDICTIONS).encode_batch(
        arrays["ids"], lengths, arrays["segments"], arrays["bounds"], positions, originals,
        counts, labels)


@pytest.fixture(scope="module")
def examples():
    rng = random.Random(0)
    return [random_example(rng) for _ in range(50)]


def test_varint_matches_protobuf():
    values = [0, 1, 127, 128, 300, 16383, 16384, 2**21, 2**35 + 5]
    for value in values:
        message = tf.train.Int64List(value=[value]).SerializeToString()
        assert message == b"\x0a" + varint(len(varint(value))) + varint(value)
    rng = np.random.default_rng(0)
    matrix = rng.integers(0, 2**40, size=(7, 9)) >> rng.integers(0, 40, size=(7, 9))
    slots, real = varint_bytes(matrix)
    for row, values in enumerate(matrix.tolist()):
        packed = tf.train.Int64List(value=values).SerializeToString()
        assert packed[2 if len(packed) < 130 else 3:] == slots[row][real[row]].tobytes()


def test_encoded_bytes_are_the_original_examples(examples):
    for serialized, example in zip(encode(examples), examples):
        ours = tf.train.Example.FromString(serialized)
        assert ours == original_style_example(*example)
    # Features are written in the spec's order (protobuf maps do not keep it on parsing).
    serialized = encode(examples[:1])[0]
    offsets = [serialized.index(name.encode()) for name in FEATURE_NAMES]
    assert offsets == sorted(offsets)


def test_original_records_and_ours_decode_the_same_through_the_pipeline(examples, tmp_path):
    ours = encode(examples)
    theirs = [original_style_example(*example).SerializeToString() for example in examples]
    for mine, original, example in zip(ours, theirs, examples):
        decoded = decode_record(tf.constant(mine), SEQ, PREDICTIONS)
        expected = decode_record(tf.constant(original), SEQ, PREDICTIONS)
        for name in decoded:
            np.testing.assert_array_equal(decoded[name], expected[name])
        ids, segments, _, positions, originals, label = example
        np.testing.assert_array_equal(decoded["input_word_ids"][:len(ids)], ids)
        assert int(tf.reduce_sum(decoded["input_mask"])) == len(ids)
        np.testing.assert_array_equal(decoded["input_type_ids"][:len(ids)], list(segments))
        np.testing.assert_array_equal(decoded["masked_lm_positions"][:len(positions)], positions)
        np.testing.assert_array_equal(decoded["masked_lm_ids"][:len(positions)], originals)
        assert float(tf.reduce_sum(decoded["masked_lm_weights"])) == len(positions)
        assert int(decoded["next_sentence_labels"][0]) == label
        assert decoded["input_word_ids"].dtype == tf.int32


def test_round_trip_through_the_training_input_pipeline(examples, tmp_path):
    path = str(tmp_path / "shard.tfrecord")
    count, checksum = write_records(path, encode(examples))
    assert count == len(examples) and checksum.startswith("sha256:")
    config = PretrainingDataConfig([path], SEQ, PREDICTIONS, global_batch_size=8,
                                   is_training=False)
    batches = list(pretraining_dataset(config))
    assert [int(batch["input_word_ids"].shape[0]) for batch in batches] == [8] * 6 + [2]
    words = np.concatenate([batch["input_word_ids"].numpy() for batch in batches])
    labels = np.concatenate([batch["next_sentence_labels"].numpy() for batch in batches])
    for row, example in enumerate(examples):
        ids, *_, label = example
        np.testing.assert_array_equal(words[row, :len(ids)], ids)
        assert not words[row, len(ids):].any() and labels[row, 0] == label


def test_training_pipeline_batches_statically_and_splits_between_replicas(examples, tmp_path):
    path = str(tmp_path / "shard.tfrecord")
    write_records(path, encode(examples))
    config = PretrainingDataConfig([path], SEQ, PREDICTIONS, global_batch_size=4, seed=1)
    seen = []
    for pipeline in range(2):
        context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=pipeline,
                                             num_replicas_in_sync=2)
        dataset = pretraining_dataset(config, context)
        assert dataset.element_spec["input_word_ids"].shape.as_list() == [2, SEQ]
        # The shuffle buffer holds many passes over the pipeline's 25 records, so each row is
        # close to a uniform draw from them: 1,000 rows miss a given record with probability
        # (24/25)**1000 < 1e-17 (60 batches, 120 rows, missed one at some global seeds).
        first_ids = {tuple(row) for batch in dataset.take(500)
                     for row in batch["input_word_ids"].numpy()}
        seen.append(first_ids)
    assert not seen[0] & seen[1]  # one file, two replicas: disjoint halves of its records
    assert len(seen[0] | seen[1]) == len(examples)


def test_tfrecord_framing_reads_and_writes_like_tensorflow(tmp_path):
    records = [bytes([i % 256]) * (i % 300) for i in range(2500)]  # framed 1,024 a block
    ours = str(tmp_path / "ours.tfrecord")
    count, checksum = write_records(ours, records)
    assert count == len(records)
    assert checksum == "sha256:" + hashlib.sha256(open(ours, "rb").read()).hexdigest()
    assert [r.numpy() for r in tf.data.TFRecordDataset(ours)] == records
    theirs = str(tmp_path / "theirs.tfrecord")
    with tf.io.TFRecordWriter(theirs) as writer:
        for record in records:
            writer.write(record)
    assert list(read_records(theirs)) == records
    with open(ours, "rb") as a, open(theirs, "rb") as b:
        assert a.read() == b.read()


def test_corrupt_and_truncated_files_are_named(tmp_path):
    path = tmp_path / "bad.tfrecord"
    write_records(str(path), [b"x" * 100, b"y" * 100])
    data = bytearray(path.read_bytes())
    data[130] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(DataPrepError, match=r"bad.tfrecord: record 1 \(at byte 116\): corrupt "
                                            r"data \(CRC mismatch\)"):
        list(read_records(str(path)))
    assert count_records(str(path)) == 2  # headers only
    path.write_bytes(bytes(data[:170]))
    for read in (list, count_records):
        with pytest.raises(DataPrepError, match=r"bad.tfrecord: record 1 \(at byte 116\): a "
                                                r"length of 100 bytes, but only 38 are left"):
            read(read_records(str(path)) if read is list else str(path))


def test_a_record_header_claiming_2_to_the_60_bytes_is_refused_without_allocating(tmp_path):
    """A header whose length (and its CRC) says 2**60 bytes: read in a child with 96 MB of
    address space, the reader names the record and byte; it used to ask for the 2**60 bytes
    (MemoryError)."""
    path = tmp_path / "hostile.tfrecord"
    length = struct.pack("<Q", 1 << 60)
    path.write_bytes(frame(b"first") + length + struct.pack("<I", masked_crc32c(length)) + b"x")
    said = refusal(f"""
        from albert_tf.records.tfrecord import count_records, read_records
        from albert_tf.text.options import DataPrepError
        for read in (lambda path: list(read_records(path)), count_records):
            try:
                read({str(path)!r})
            except DataPrepError as error:
                print("refused:", error)
        """)
    message = (f"refused: {path}: record 1 (at byte 21): a length of 1,152,921,504,606,846,976 "
               "bytes, but only 0 are left in the file (truncated or corrupt)")
    assert said == f"{message}\n{message}"


def test_writes_are_atomic(tmp_path):
    path = tmp_path / "shard.tfrecord"

    def failing():
        yield b"first"
        raise RuntimeError("worker died")
    with pytest.raises(RuntimeError):
        write_records(str(path), failing())
    assert list(tmp_path.iterdir()) == []  # neither the shard nor a temporary
