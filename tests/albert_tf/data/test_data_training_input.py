"""The training input: resuming at a data position, dynamic re-masking, checks before training.

Shards are built here from known documents with data prep's own segmenting, masking and
encoding (`unique_token_documents`: every piece id is unique, so an example is known by its
ids), then read back through `pretraining_dataset`.
"""

import collections
import dataclasses
import json
import os
import random
import re
import types

import numpy as np
import pytest
import tensorflow as tf
from data_helpers import segment_pairs, unique_token_documents, vocabulary
from scipy import stats as scipy_stats
from thresholds import above, below

from albert_tf.config.masking import MaskingRecipe
from albert_tf.data.pretraining import PretrainingDataConfig, pretraining_dataset
from albert_tf.data.remasking import restore_original_ids
from albert_tf.data.validation import DataError, check_pretraining_files
from albert_tf.records.tfrecord import digest_records, read_records, write_records
from albert_tf.text.options import DataPrepOptions
from albert_tf.text.statistics import ExampleStatistics
from albert_tf.text.vocabulary import CLS_ID, MASK_ID, SEP_ID
from data_prep.instances import ShardTokens, document_pairs
from data_prep.shard import ShardBuilder

SEQ, PREDICTIONS, SHARDS = 48, 8, 4
OPTIONS = DataPrepOptions(max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
                          dupe_factor=1)
SIGNIFICANCE = 1e-4  # as data prep's tests: 50 seeds gave p >= 0.006 (check_thresholds.py)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, seed):
    """SHARDS shards of masked examples; `originals` maps each example's unmasked ids (a
    tuple of its real tokens) to its segment ids."""
    documents = unique_token_documents(80, seed=3 + seed)
    vocab = vocabulary(documents[-1][-1][-1] + 1, word_start_every=2)
    shard, rng, stats, made = ShardTokens.from_documents(documents), random.Random(seed), \
        ExampleStatistics(), []
    for index in range(shard.num_documents):
        document_pairs(shard, index, OPTIONS, rng, stats, made)
    builder = ShardBuilder(OPTIONS, types.SimpleNamespace(vocabulary=vocab))
    records = builder.encode_pairs(shard, made, np.random.default_rng(seed), stats)
    pairs = list(segment_pairs(shard, made))
    folder = tmp_path_factory.mktemp("shards")
    paths = [str(folder / f"train-{i}.tfrecord") for i in range(SHARDS)]
    for index, path in enumerate(paths):
        write_records(path, records[index::SHARDS])
    originals = {(CLS_ID, *pair.first, SEP_ID, *pair.second, SEP_ID):
                 [0] * (len(pair.first) + 2) + [1] * (len(pair.second) + 1) for pair in pairs}
    return types.SimpleNamespace(paths=paths, folder=folder, vocab=vocab, originals=originals,
                                 records=records)


def make_config(corpus, paths=None, **changes):
    settings = dict(file_patterns=paths or corpus.paths, max_seq_length=SEQ,
                    max_predictions_per_seq=PREDICTIONS, global_batch_size=16,
                    shuffle_buffer=64, cycle_length=2, seed=7, vocab_size=corpus.vocab.size)
    return PretrainingDataConfig(**(settings | changes))


def numpy_batches(dataset, count):
    return [{name: tensor.numpy() for name, tensor in batch.items()}
            for batch in dataset.take(count)]


def assert_same_batches(first, second):
    assert len(first) == len(second)
    for one, other in zip(first, second):
        assert one.keys() == other.keys()
        for name in one:
            np.testing.assert_array_equal(one[name], other[name], err_msg=name)


def examples(batches):
    """(ids, input_mask, segment_ids, positions, masked ids, weights) per example."""
    names = ("input_word_ids", "input_mask", "input_type_ids", "masked_lm_positions",
             "masked_lm_ids", "masked_lm_weights")
    for batch in batches:
        yield from zip(*(batch[name] for name in names))


def unmasked(ids, positions, originals, weights):
    """The example's real tokens with its masked positions given back their originals."""
    restored = restore_original_ids(ids[None], positions[None], originals[None], weights[None])
    return tuple(restored[0][ids > 0].tolist())


# 1. Deterministic order and data position.

@pytest.mark.parametrize("pipelines, shards, dynamic", [(1, SHARDS, False), (1, SHARDS, True),
                                                        (2, SHARDS, True), (2, 1, False)])
def test_start_batch_yields_the_rest_of_the_uninterrupted_stream(corpus, pipelines, shards,
                                                                 dynamic):
    skipped, kept = 5, 6
    for pipeline in range(pipelines):
        context = (tf.distribute.InputContext(num_input_pipelines=pipelines,
                                              input_pipeline_id=pipeline,
                                              num_replicas_in_sync=pipelines)
                   if pipelines > 1 else None)
        config = make_config(corpus, corpus.paths[:shards], dynamic_masking=dynamic)
        uninterrupted = numpy_batches(pretraining_dataset(config, context), skipped + kept)
        resumed = dataclasses.replace(config, start_batch=skipped)
        assert_same_batches(uninterrupted[skipped:],
                            numpy_batches(pretraining_dataset(resumed, context), kept))


def read_examples(config, count, context=None):
    """The first `count` examples of the training stream, each as its ids' bytes."""
    batch_size = (context.get_per_replica_batch_size(config.global_batch_size) if context
                  else config.global_batch_size)
    batches = numpy_batches(pretraining_dataset(config, context), -(-count // batch_size))
    return [ids.tobytes() for batch in batches for ids in batch["input_word_ids"]][:count]


@pytest.mark.parametrize("shards, cycle_length, pipelines", [(2, 8, 1), (3, 8, 1), (4, 2, 1),
                                                              (4, 8, 2)])
def test_every_pass_reads_each_example_once(corpus, shards, cycle_length, pipelines):
    """Fewer shards than interleave slots must not open a shard twice at once (that fed each
    example 2-4 times within a few thousand examples, and a small model memorized them).
    Unshuffled, the first two passes hold every example exactly twice; shuffled, the first
    pass less one shuffle buffer holds no example twice."""
    records = corpus.records
    for pipeline in range(pipelines):
        context = (tf.distribute.InputContext(num_input_pipelines=pipelines,
                                              input_pipeline_id=pipeline,
                                              num_replicas_in_sync=pipelines)
                   if pipelines > 1 else None)
        mine = [index for index in range(shards) if index % pipelines == pipeline]
        expected = sum(len(records[index::SHARDS]) for index in mine)
        config = make_config(corpus, corpus.paths[:shards], cycle_length=cycle_length,
                             shuffle_buffer=1, global_batch_size=8)
        counts = collections.Counter(read_examples(config, 2 * expected, context))
        assert len(counts) == expected and set(counts.values()) == {2}
        shuffled = dataclasses.replace(config, shuffle_buffer=64)
        first_pass = read_examples(shuffled, expected - 64, context)
        assert len(set(first_pass)) == len(first_pass)


def test_skipped_batches_are_never_parsed_or_masked(corpus, tmp_path):
    """Records that would fail to parse are skipped without error: skipping happens on the
    serialized records."""
    path = str(tmp_path / "head-is-garbage.tfrecord")
    write_records(path, [b"not an example"] * 16 + corpus.records[:40])
    config = make_config(corpus, [path], shuffle_buffer=1, cycle_length=1,
                         dynamic_masking=True)
    with pytest.raises(tf.errors.InvalidArgumentError):
        numpy_batches(pretraining_dataset(config), 1)
    resumed = dataclasses.replace(config, start_batch=1)
    ids = numpy_batches(pretraining_dataset(resumed), 2)[0]["input_word_ids"]
    assert ids.shape == (16, SEQ)


def test_config_errors_name_the_field():
    with pytest.raises(ValueError, match="start_batch must be at least 0, got -1"):
        PretrainingDataConfig(["x"], SEQ, PREDICTIONS, 16, start_batch=-1)
    with pytest.raises(ValueError, match="vocab_size must be set when dynamic_masking is on"):
        PretrainingDataConfig(["x"], SEQ, PREDICTIONS, 16, dynamic_masking=True)
    with pytest.raises(ValueError, match="masking field 'masked_lm_prob' must be in"):
        PretrainingDataConfig(["x"], SEQ, PREDICTIONS, 16, dynamic_masking=True,
                              vocab_size=100, masking=MaskingRecipe(masked_lm_prob=1.5))
    with pytest.raises(ValueError, match="dynamic_predictions_per_seq needs dynamic_masking"):
        PretrainingDataConfig(["x"], SEQ, PREDICTIONS, 16, dynamic_predictions_per_seq=24)


# 2. Dynamic re-masking.

def test_static_masks_restore_to_the_original_sequences(corpus):
    config = make_config(corpus, is_training=False)
    batches = numpy_batches(pretraining_dataset(config), 100)
    restored = [unmasked(ids, *masks) for ids, _, _, *masks in examples(batches)]
    assert sorted(restored) == sorted(corpus.originals)


def test_dynamic_masks_have_the_static_shapes_and_undo_to_the_originals(corpus, seed,
                                                                        record_property):
    static = pretraining_dataset(make_config(corpus, seed=seed + 7))
    dynamic = pretraining_dataset(make_config(corpus, dynamic_masking=True, seed=seed + 7))
    assert dynamic.element_spec == static.element_spec
    seen = set()
    for ids, mask, segments, *masks in examples(numpy_batches(dynamic, 30)):
        original = unmasked(ids, *masks)
        assert original in corpus.originals
        length = len(original)
        assert mask.sum() == length
        np.testing.assert_array_equal(segments[:length], corpus.originals[original])
        seen.add(original)
    above(record_property, "share of the examples seen in 30 batches",
          len(seen) / len(corpus.originals), 0.9)


def masking_statistics(batches, word_start, slots=PREDICTIONS, rate=OPTIONS.masked_lm_prob):
    """Counts over dynamically masked batches (`slots` prediction slots, masking `rate`):
    budget, replacements, spans in words, and the most predictions of one sequence."""
    counts = dict(tokens=0, masked=0, budget=0, mask=0, kept=0, random=0, partial_words=0,
                  control_masked=0, most=0, spans=np.zeros(SEQ + 1, np.int64))
    for ids, mask, _, positions, originals, weights in examples(batches):
        length, count = int(mask.sum()), int(weights.sum())
        tokens = ids.copy()
        tokens[positions[:count]] = originals[:count]
        counts["tokens"] += length
        counts["masked"] += count
        counts["budget"] += min(slots, max(1, round(length * rate)))
        counts["most"] = max(counts["most"], count)
        shown = ids[positions[:count]]
        counts["mask"] += int((shown == MASK_ID).sum())
        counts["kept"] += int((shown == originals[:count]).sum())
        counts["random"] += int(((shown != MASK_ID) & (shown != originals[:count])).sum())
        masked = np.zeros(SEQ, bool)
        masked[positions[:count]] = True
        control = (tokens == CLS_ID) | (tokens == SEP_ID) | (mask == 0)
        counts["control_masked"] += int((masked & control).sum())
        # Words as the masker sees them: starts at word-start pieces and segment starts.
        starts = (word_start[tokens] == 1) | np.roll(control, 1)
        word = np.cumsum(starts) - 1
        real = ~control
        covered = np.bincount(word[real], weights=masked[real], minlength=SEQ + 1)
        sizes = np.bincount(word[real], minlength=SEQ + 1)
        counts["partial_words"] += int(((covered > 0) & (covered < sizes)).sum())
        run = 0  # masked words in a row; a control piece or an unmasked word ends a run
        for size, hit in zip(sizes, covered):
            if size and hit:
                run += 1
                continue
            counts["spans"][run] += run > 0
            run = 0
    return counts


def test_dynamic_masking_follows_the_recipe(corpus, seed, record_property):
    word_start = np.frombuffer(corpus.vocab.word_start, np.uint8)
    config = make_config(corpus, dynamic_masking=True, global_batch_size=64, seed=seed + 7)
    counts = masking_statistics(numpy_batches(pretraining_dataset(config), 60), word_start)
    # The budget of the recipe, spent (nearly always) in whole words.
    assert counts["masked"] <= counts["budget"]
    above(record_property, "masked / budget", counts["masked"] / counts["budget"], 0.98)
    below(record_property, "|masked share - 0.15|",
          abs(counts["masked"] / counts["tokens"] - OPTIONS.masked_lm_prob), 0.02)
    assert counts["control_masked"] == 0 and counts["partial_words"] == 0
    # 80% [MASK], 10% kept, 10% random (a random pick equal to the original counts as kept).
    observed = [counts["mask"], counts["kept"], counts["random"]]
    expected = np.array([0.8, 0.1, 0.1]) * counts["masked"]
    above(record_property, "replacements' chi-square p-value",
          scipy_stats.chisquare(observed, expected).pvalue, SIGNIFICANCE)
    # Runs of masked words: spans of 1-3 words, neighbouring spans sometimes merged.
    spans = counts["spans"]
    above(record_property, "runs of 3 words", spans[3], 0)
    above(record_property, "runs of 2 words / runs of 3", spans[2] / spans[3], 1)
    above(record_property, "runs of 1 word / runs of 2", spans[1] / spans[2], 1)
    mean = (spans * np.arange(len(spans))).sum() / spans.sum()
    above(record_property, "mean masked run (words), low bound", mean, 1.3)
    below(record_property, "mean masked run (words), high bound", mean, 1.9)
    # The same distribution of runs as the masks data prep wrote into the shards.
    static = masking_statistics(numpy_batches(pretraining_dataset(
        make_config(corpus, is_training=False)), 100), word_start)["spans"]
    table = [[row[1], row[2], row[3], row[4:].sum()] for row in (spans, static)]
    above(record_property, "runs against the shards' chi-square p-value",
          scipy_stats.chi2_contingency(table).pvalue, SIGNIFICANCE)


def test_more_prediction_slots_let_dynamic_masking_mask_at_a_higher_rate(corpus, seed,
                                                                         record_property):
    word_start = np.frombuffer(corpus.vocab.word_start, np.uint8)
    slots, rate = 3 * PREDICTIONS, 0.4
    config = make_config(corpus, dynamic_masking=True, global_batch_size=64, seed=seed + 7,
                         masking=MaskingRecipe(masked_lm_prob=rate),
                         dynamic_predictions_per_seq=slots)
    assert config.predictions_per_seq == slots
    dataset = pretraining_dataset(config)
    for name in ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights"):
        assert dataset.element_spec[name].shape.as_list() == [64, slots]
    assert dataset.element_spec["input_word_ids"].shape.as_list() == [64, SEQ]
    batches = numpy_batches(dataset, 30)
    counts = masking_statistics(batches, word_start, slots, rate)
    # 40% of each sequence's pieces, past the shards' own 8 slots, in whole words.
    assert counts["budget"] >= counts["masked"]
    above(record_property, "masked / budget", counts["masked"] / counts["budget"], 0.97)
    below(record_property, "|masked share - 0.4|", abs(counts["masked"] / counts["tokens"] - rate),
          0.03)
    assert PREDICTIONS < counts["most"] <= slots
    assert counts["control_masked"] == 0 and counts["partial_words"] == 0
    assert all(unmasked(ids, *masks) in corpus.originals for ids, _, _, *masks in
               examples(batches))


def masked_piece_runs(batches) -> np.ndarray:
    """How many runs of 1, 2, ... consecutive masked pieces the batches hold."""
    runs = np.zeros(SEQ + 1, np.int64)
    for _, _, _, positions, _, weights in examples(batches):
        masked = np.zeros(SEQ + 2, bool)
        masked[positions[:int(weights.sum())] + 1] = True
        edges = np.flatnonzero(np.diff(masked.astype(np.int8)))
        np.add.at(runs, edges[1::2] - edges[::2], 1)
    return runs


def test_a_run_yaml_sets_the_masking_recipe_of_dynamic_masking(corpus, tmp_path, seed,
                                                                record_property):
    """`data.whole_word_mask` and `data.favor_shorter_ngram` in a run's YAML reach the
    re-masking of its training stream (as `albert-pretrain` builds it): without whole words
    a word's pieces are masked apart, and uniform span lengths make longer runs of masked
    pieces than 1/n ones."""
    from albert_tf.config.pretraining import load_pretrain_config
    from albert_tf.training.trainer import input_config

    def stream(**recipe):
        path = tmp_path / "run.yaml"
        path.write_text(json.dumps({  # JSON is YAML
            "model": {"preset": "tiny", "vocab_size": corpus.vocab.size},
            "data": {"train_files": corpus.paths, "max_seq_length": SEQ,
                     "max_predictions_per_seq": PREDICTIONS, "shuffle_buffer": 64,
                     "cycle_length": 2, "dynamic_masking": True, **recipe},
            "optimizer": {"warmup_steps": 1},
            "train": {"global_batch_size": 64, "train_steps": 10, "steps_per_epoch": 10,
                      "seed": seed + 7}}))
        config = load_pretrain_config(str(path))
        assert all(getattr(config.data, name) == value for name, value in recipe.items())
        return numpy_batches(pretraining_dataset(input_config(config, corpus.paths, True)), 30)

    word_start = np.frombuffer(corpus.vocab.word_start, np.uint8)
    whole_words = stream()
    pieces = stream(whole_word_mask=False)
    uniform = stream(whole_word_mask=False, favor_shorter_ngram=False)
    assert masking_statistics(whole_words, word_start)["partial_words"] == 0
    parted = masking_statistics(pieces, word_start)
    above(record_property, "share of masked pieces in partly masked words",
          parted["partial_words"] / parted["masked"], 0.2)
    favored, flat = masked_piece_runs(pieces), masked_piece_runs(uniform)
    lengths = np.arange(SEQ + 1)
    above(record_property, "mean masked run, uniform / 1-over-n spans",
          ((flat * lengths).sum() / flat.sum()) / ((favored * lengths).sum() / favored.sum()),
          1.0)
    table = [[row[1], row[2], row[3:].sum()] for row in (favored, flat)]
    below(record_property, "run lengths' chi-square p-value, uniform vs 1-over-n",
          scipy_stats.chi2_contingency(table).pvalue, SIGNIFICANCE)


def test_random_replacements_are_ordinary_ids_below_vocab_size(corpus, seed, record_property):
    config = make_config(corpus, dynamic_masking=True, vocab_size=corpus.vocab.size + 1000,
                         seed=seed + 7)
    replaced = []
    for ids, _, _, positions, originals, weights in examples(
            numpy_batches(pretraining_dataset(config), 20)):
        count = int(weights.sum())
        shown = ids[positions[:count]]
        replaced.extend(shown[(shown != MASK_ID) & (shown != originals[:count])].tolist())
    assert replaced and min(replaced) >= 5 and max(replaced) < config.vocab_size
    # Drawn from the configured vocabulary, past the corpus's own.
    above(record_property, "replacements past the corpus's vocabulary",
          sum(piece >= corpus.vocab.size for piece in replaced), 0)


def mask_sets(batches):
    """Masked positions of every occurrence of each example, by its original ids."""
    occurrences = {}
    for ids, _, _, positions, originals, weights in examples(batches):
        count = int(weights.sum())
        occurrences.setdefault(unmasked(ids, positions, originals, weights), []).append(
            frozenset(positions[:count].tolist()))
    return occurrences


def test_masks_are_fresh_every_pass_and_reproducible_with_the_seed(corpus, seed,
                                                                  record_property):
    config = make_config(corpus, dynamic_masking=True, seed=seed + 7)
    batches = numpy_batches(pretraining_dataset(config), 60)
    repeated = [masks for masks in mask_sets(batches).values() if len(masks) > 1]
    above(record_property, "examples seen twice in 60 batches", len(repeated), 50)
    fresh = sum(masks[0] != masks[1] for masks in repeated)
    above(record_property, "share of them masked afresh", fresh / len(repeated), 0.8)
    again = numpy_batches(pretraining_dataset(config), 10)
    assert_same_batches(batches[:10], again)
    other_seed = numpy_batches(pretraining_dataset(
        make_config(corpus, dynamic_masking=True, seed=seed + 8)), 10)
    assert any(not np.array_equal(one["masked_lm_positions"], other["masked_lm_positions"])
               for one, other in zip(batches, other_seed))


# 3. Checks before training.

def test_check_returns_the_matched_files(corpus):
    pattern = str(corpus.folder / "train-*.tfrecord")
    assert check_pretraining_files(make_config(corpus, [pattern])) == corpus.paths


def test_a_pattern_matching_nothing_is_named(corpus, tmp_path):
    missing = str(tmp_path / "nothing-*.tfrecord")
    with pytest.raises(DataError, match=re.escape(f"data.eval_files: no files match "
                                                  f"'{missing}'")):
        check_pretraining_files(make_config(corpus, [corpus.paths[0], missing]),
                                field="data.eval_files")


def built_folder(corpus, folder) -> list[str]:
    """The corpus's shards in `folder` with the manifest albert-data build writes beside
    them (name, examples, bytes, checksum of each); returns their paths."""
    folder.mkdir(exist_ok=True)
    shards = []
    for index, source in enumerate(corpus.paths):
        name = f"train-{index:05d}-of-{SHARDS:05d}.tfrecord"
        (folder / name).write_bytes(open(source, "rb").read())
        examples, checksum = digest_records(str(folder / name))
        shards.append({"file": name, "examples": examples, "checksum": checksum,
                       "bytes": (folder / name).stat().st_size})
    (folder / "manifest.json").write_text(json.dumps({"options": OPTIONS.to_dict(),
                                                      "shards": shards}))
    return [str(folder / shard["file"]) for shard in shards]


def checked(corpus, patterns, **arguments):
    notes = []
    found = check_pretraining_files(make_config(corpus, patterns), note=notes.append,
                                    **arguments)
    return found, notes


def test_a_whole_shard_folder_passes_and_a_subset_on_purpose_is_said(corpus, tmp_path):
    paths = built_folder(corpus, tmp_path)
    assert checked(corpus, [str(tmp_path / "*.tfrecord")], verify_checksums=True) == (
        paths, [])
    assert checked(corpus, paths[1:3]) == (paths[1:3], [
        f"data.train_files reads 2 of the 4 shards {tmp_path}/manifest.json names (its "
        "patterns select them)"])


def test_a_folder_that_lost_a_shard_is_refused(corpus, tmp_path):
    paths = built_folder(corpus, tmp_path)
    os.remove(paths[2])
    pattern = str(tmp_path / "train-*.tfrecord")
    with pytest.raises(DataError, match=re.escape(
            f"{paths[2]}: missing; {tmp_path}/manifest.json names it among its 4 shards and "
            f"data.train_files ('{pattern}') would read it: the folder lost a shard")):
        checked(corpus, [pattern])


def test_a_shard_cut_at_a_record_boundary_is_refused(corpus, tmp_path):
    paths = built_folder(corpus, tmp_path)
    records = list(read_records(paths[1]))
    kept = sum(16 + len(record) for record in records[:-3])
    with open(paths[1], "r+b") as file:
        file.truncate(kept)
    assert list(read_records(paths[1])) == records[:-3]  # a valid TFRecord file, just short
    manifest = tmp_path / "manifest.json"
    full = json.loads(manifest.read_text())["shards"][1]["bytes"]
    with pytest.raises(DataError, match=re.escape(
            f"{paths[1]}: {kept:,} bytes, but {manifest} records {full:,} (the shard was cut "
            "short or changed after the build); build the shards again")):
        checked(corpus, [str(tmp_path / "*.tfrecord")])
    record = json.loads(manifest.read_text())  # a manifest written before sizes were kept
    for shard in record["shards"]:
        del shard["bytes"]
    manifest.write_text(json.dumps(record))
    with pytest.raises(DataError, match=re.escape(
            f"{paths[1]}: {len(records) - 3:,} records, but {manifest} records "
            f"{len(records):,}")):
        checked(corpus, [str(tmp_path / "*.tfrecord")])


def test_a_changed_shard_is_found_by_its_checksum_on_request(corpus, tmp_path):
    paths = built_folder(corpus, tmp_path)
    data = bytearray(open(paths[1], "rb").read())
    data[30] ^= 1  # inside the first record's data: its size and count stay
    open(paths[1], "wb").write(bytes(data))
    assert checked(corpus, [str(tmp_path / "*.tfrecord")])[0] == paths
    with pytest.raises(DataError, match=re.escape(
            f"{paths[1]}: its checksum is sha256:")) as refused:
        checked(corpus, [str(tmp_path / "*.tfrecord")], verify_checksums=True)
    assert "(the shard changed after the build)" in str(refused.value)


def test_a_file_the_manifest_does_not_name_is_refused(corpus, tmp_path):
    built_folder(corpus, tmp_path)
    stray = tmp_path / "train-extra.tfrecord"
    stray.write_bytes(open(corpus.paths[0], "rb").read())
    with pytest.raises(DataError, match=re.escape(
            f"{stray} (matched by data.train_files) is not one of the 4 shards "
            f"{tmp_path}/manifest.json names")):
        checked(corpus, [str(tmp_path / "*.tfrecord")])


def test_a_manifest_shard_name_with_a_path_is_refused(corpus, tmp_path):
    paths = built_folder(corpus, tmp_path)
    manifest = tmp_path / "manifest.json"
    record = json.loads(manifest.read_text())
    record["shards"][0]["file"] = "../elsewhere.tfrecord"
    manifest.write_text(json.dumps(record))
    with pytest.raises(DataError, match=re.escape(
            f"{manifest}: shards[0].file: '../elsewhere.tfrecord' is not a plain file name")):
        checked(corpus, paths)


def test_manifest_lengths_must_match_the_config(corpus, tmp_path):
    built_folder(corpus, tmp_path)
    manifest = tmp_path / "manifest.json"
    config = make_config(corpus, [str(tmp_path / "*.tfrecord")])
    assert check_pretraining_files(config) == sorted(map(str, tmp_path.glob("*.tfrecord")))
    for name, wrong in (("max_seq_length", 64), ("max_predictions_per_seq", 12)):
        config = make_config(corpus, [str(tmp_path / "*.tfrecord")], **{name: wrong})
        built = getattr(OPTIONS, name)
        with pytest.raises(DataError, match=(
                rf"{manifest}: the shards of data.train_files were built with {name}={built}, "
                rf"but data.{name} is {wrong}; set data.{name} to {built}")):
            check_pretraining_files(config)


@pytest.mark.parametrize("feature, name, wrong, found", [
    ("input_ids", "max_seq_length", 64, SEQ),
    ("masked_lm_positions", "max_predictions_per_seq", 12, PREDICTIONS)])
def test_first_record_lengths_must_match_the_config(corpus, feature, name, wrong, found):
    config = make_config(corpus, **{name: wrong})  # no manifest beside these shards
    with pytest.raises(DataError, match=(
            rf"{corpus.paths[0]} \(matched by data.train_files\): {feature} of the first record "
            rf"has length {found} but data.{name} is {wrong}; set data.{name} to {found}")):
        check_pretraining_files(config)


def test_files_that_are_not_pretraining_tfrecords_are_named(corpus, tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("these are notes, not records\n" * 10)
    with pytest.raises(DataError, match=rf"{text} \(matched by data.train_files\) is not a "
                                        "TFRecord file"):
        check_pretraining_files(make_config(corpus, [str(text)]))
    other = tmp_path / "other.tfrecord"
    write_records(str(other), [tf.train.Example().SerializeToString()])
    with pytest.raises(DataError, match=rf"{other} .*has no feature 'input_ids'"):
        check_pretraining_files(make_config(corpus, [str(other)]))
