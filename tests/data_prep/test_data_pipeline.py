"""The whole build: determinism over worker counts, resume after a crash, manifest, Beam, CLI."""

import io
import json
import os
import re

import pytest
import sentencepiece as spm
from data_helpers import english_like_text
from thresholds import above, below

from albert_tf.io.owned_folder import LOCK_FILE, RECORD_FILE, FolderError, FolderLock
from albert_tf.records.tfrecord import read_records
from albert_tf.text.options import DataPrepError, DataPrepOptions
from albert_tf.text.vocabulary import SPECIAL_PIECES, SentencePieceTokenizer, train_sentencepiece
from data_prep import pipeline
from data_prep.cli import main
from data_prep.inspect_shards import RecordStatistics, read_batches
from data_prep.manifest import read_manifest
from data_prep.sentences import split_sentences

OPTIONS = DataPrepOptions(max_seq_length=64, dupe_factor=2, max_predictions_per_seq=10)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "a.txt").write_text(english_like_text(150, seed=1))
    (folder / "b.txt").write_text(english_like_text(150, seed=2))
    return folder


@pytest.fixture(scope="module")
def spm_model(corpus):
    sentences = (line for name in ("a.txt", "b.txt")
                 for line in (corpus / name).read_text().lower().splitlines() if line)
    return train_sentencepiece(sentences, str(corpus / "spm"), vocab_size=200)


def build(corpus, spm_model, output_dir, options=OPTIONS, workers=1, shards=5, **kwargs):
    plan = pipeline.make_plan([str(corpus / "*.txt")], str(output_dir), spm_model, options,
                              shards)
    return plan, pipeline.build_shards(plan, workers, progress=False, **kwargs)


def folder_bytes(folder):
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


@pytest.fixture(scope="module")
def reference(corpus, spm_model, tmp_path_factory):
    output = tmp_path_factory.mktemp("reference")
    plan, manifest = build(corpus, spm_model, output)
    return plan, manifest, folder_bytes(output)


def test_trained_tokenizer_has_the_albert_layout(spm_model):
    tokenizer = SentencePieceTokenizer(spm_model)
    assert tokenizer.pieces(range(5)) == list(SPECIAL_PIECES)
    assert tokenizer.vocab_size == 200
    assert all(not tokenizer.vocabulary.word_start[i] or i < 5 or
               tokenizer.pieces([i])[0].startswith("\u2581") or len(tokenizer.pieces([i])[0]) == 1
               for i in range(tokenizer.vocab_size))
    assert min(tokenizer.vocabulary.ordinary_ids) == 5
    # Control symbols in the text stay text.
    assert 3 not in tokenizer.encode(["a [sep] b [SEP]"])[0]


def test_models_without_the_albert_layout_are_refused(tmp_path, corpus):
    model = io.BytesIO()
    text = (corpus / "a.txt").read_text().splitlines()
    spm.SentencePieceTrainer.train(sentence_iterator=iter([t for t in text if t]),
                                   model_writer=model, vocab_size=100, minloglevel=2)
    path = tmp_path / "plain.model"
    path.write_bytes(model.getvalue())
    with pytest.raises(DataPrepError, match=r"plain.model: not an ALBERT SentencePiece model: "
                                            r"id 0 must be '<pad>' but is '<unk>'"):
        SentencePieceTokenizer(path)
    (tmp_path / "junk.model").write_bytes(b"not a model")
    with pytest.raises(DataPrepError, match="junk.model: not a SentencePiece model"):
        SentencePieceTokenizer(tmp_path / "junk.model")


def test_manifest_lists_shards_counts_options_checksums_and_statistics(reference, spm_model):
    plan, manifest, files = reference
    assert [shard["file"] for shard in manifest["shards"]] == \
        [f"train-{i:05d}-of-00005.tfrecord" for i in range(5)]
    assert manifest["total_examples"] == sum(s["examples"] for s in manifest["shards"]) > 500
    assert manifest["options"] == OPTIONS.to_dict()
    assert manifest["tokenizer"]["checksum"] == SentencePieceTokenizer(spm_model).checksum
    assert manifest["statistics"]["examples"]["documents"] == 300
    assert json.loads(files["manifest.json"]) == manifest


def test_a_build_masks_15_percent_and_gives_half_its_examples_label_1(
        corpus, spm_model, tmp_path, seed, record_property):
    options = DataPrepOptions(**{**OPTIONS.to_dict(), "random_seed": OPTIONS.random_seed + seed})
    plan, manifest = build(corpus, spm_model, tmp_path, options, shards=2)
    summary = manifest["statistics"]["summary"]
    below(record_property, "|masked share - 0.15|",
          abs(summary["masked_fraction_of_tokens"] - 0.15), 0.01)
    below(record_property, "|label-1 share - 0.5|", abs(summary["label_1_share"] - 0.5), 0.05)
    # A random replacement that drew the original piece looks kept in the records.
    built, stats = manifest["statistics"]["examples"], RecordStatistics()
    for index in range(plan.num_shards):
        for batch in read_batches(plan.shard_path(index), 64, 10):
            stats.add(batch)
    below(record_property, "kept originals the records show too many / masked",
          (stats.counts.kept_original - built["kept_original"]) / built["masked_tokens"], 0.02)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 4])
def test_same_bytes_for_any_number_of_workers(reference, corpus, spm_model, tmp_path, workers):
    build(corpus, spm_model, tmp_path, workers=workers)
    assert folder_bytes(tmp_path) == reference[2]


def test_another_seed_gives_other_shards(reference, corpus, spm_model, tmp_path):
    options = DataPrepOptions(**{**OPTIONS.to_dict(), "random_seed": 99})
    build(corpus, spm_model, tmp_path, options)
    files = folder_bytes(tmp_path)
    for name, data in reference[2].items():
        if name.endswith(".tfrecord"):
            assert files[name] != data


def test_resume_after_a_crash_rebuilds_only_what_is_missing(reference, corpus, spm_model,
                                                            tmp_path, monkeypatch):
    real = pipeline._build_one

    def crash_on_third(index):
        if index == 2:
            raise KeyboardInterrupt("killed")
        return real(index)
    monkeypatch.setattr(pipeline, "_build_one", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        build(corpus, spm_model, tmp_path)
    done = sorted(name for name in os.listdir(tmp_path) if name.endswith(".tfrecord"))
    assert done == ["train-00000-of-00005.tfrecord", "train-00001-of-00005.tfrecord"]
    assert not any(name.startswith(".") for name in os.listdir(tmp_path)
                   if name != RECORD_FILE)  # no temporary left, and the lock released
    assert "manifest.json" not in os.listdir(tmp_path)
    stamps = {name: os.stat(tmp_path / name).st_mtime_ns for name in done}
    # A leftover temporary and a shard whose sidecar never got written are redone.
    (tmp_path / ".train-00003-of-00005.tfrecord.tmp-123").write_bytes(b"half")
    (tmp_path / "train-00004-of-00005.tfrecord").write_bytes(b"written, never marked done")
    monkeypatch.setattr(pipeline, "_build_one", real)
    build(corpus, spm_model, tmp_path)
    assert folder_bytes(tmp_path) == reference[2]
    assert {name: os.stat(tmp_path / name).st_mtime_ns for name in done} == stamps


def test_a_rerun_checks_the_finished_shards_and_builds_a_damaged_one_again(
        reference, corpus, spm_model, tmp_path, capsys):
    """A rerun trusts no sidecar blindly: a shard cut at a record boundary (a valid, shorter
    file) and one with a changed byte (same size and count) are built again, with a warning;
    the others are left as they are."""
    build(corpus, spm_model, tmp_path)
    cut, changed, kept = (tmp_path / f"train-0000{index}-of-00005.tfrecord" for index in (1, 3, 4))
    records = list(read_records(str(cut)))
    with open(cut, "r+b") as file:
        file.truncate(sum(16 + len(record) for record in records[:-1]))
    data = bytearray(changed.read_bytes())
    data[-10] ^= 1
    changed.write_bytes(bytes(data))
    stamp = kept.stat().st_mtime_ns
    capsys.readouterr()
    build(corpus, spm_model, tmp_path)
    assert folder_bytes(tmp_path) == reference[2]
    assert kept.stat().st_mtime_ns == stamp
    warnings = capsys.readouterr().err
    size = len(reference[2][cut.name])
    assert (f"albert-data build: warning: {cut}: {size - 16 - len(records[-1]):,} bytes, but "
            f"{cut}.json records {size:,} (the shard was cut short or changed after the build); "
            "building it again") in warnings
    assert f"albert-data build: warning: {changed}: its checksum is sha256:" in warnings
    assert warnings.count("warning") == 2


def test_a_different_build_into_the_same_folder_is_refused(reference, corpus, spm_model,
                                                           tmp_path):
    build(corpus, spm_model, tmp_path)
    other = DataPrepOptions(**{**OPTIONS.to_dict(), "dupe_factor": 3})
    with pytest.raises(FolderError, match=r"another albert-data build run; its settings "
                                          r"differ in 1 field\(s\): options.dupe_factor: 2 -> 3"):
        build(corpus, spm_model, tmp_path, other)
    build(corpus, spm_model, tmp_path, other, overwrite=True)
    assert read_manifest(str(tmp_path))["options"]["dupe_factor"] == 3


def _cli_build(corpus, spm_model, output_dir, *flags):
    return main(["build", "--input", str(corpus / "a.txt"), "--spm_model", spm_model,
                 "--output_dir", str(output_dir), "--max_seq_length", "48", "--dupe_factor",
                 "1", "--num_shards", "1", "--no_progress", *flags])


def test_overwrite_never_deletes_a_users_file(corpus, spm_model, tmp_path, capsys):
    """The issue's case: a folder holding only the user's precious.txt, built into with
    --overwrite; then a folder the build owns, where the user later put a file of theirs."""
    (tmp_path / "precious.txt").write_text("mine")
    assert _cli_build(corpus, spm_model, tmp_path, "--overwrite") == 2
    error = capsys.readouterr().err
    assert "holds files albert-data build did not write: precious.txt" in error
    assert os.listdir(tmp_path) == ["precious.txt"]
    owned = tmp_path / "shards"
    assert _cli_build(corpus, spm_model, owned) == 0
    (owned / "notes.txt").write_text("mine too")
    assert _cli_build(corpus, spm_model, owned, "--overwrite", "--random_seed", "7") == 0
    assert "--overwrite deleted 4 file(s)" in capsys.readouterr().out
    assert (owned / "notes.txt").read_text() == "mine too"
    assert read_manifest(str(owned))["options"]["random_seed"] == 7


def test_output_dir_dot_is_refused_without_touching_anything(corpus, spm_model, tmp_path,
                                                             monkeypatch, capsys):
    (tmp_path / "setup.cfg").write_text("[metadata]")
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path)
    assert _cli_build(corpus, spm_model, ".", "--overwrite") == 2
    assert "did not write: setup.cfg, src" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["setup.cfg", "src"]


# A real build whose shards wait for the file argv[2] before being built.
_PAUSED_BUILD = """
import os, sys, time
from data_prep import pipeline
real = pipeline._build_one
def paused(index):
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.05)
    return real(index)
pipeline._build_one = paused
plan = pipeline.make_plan([sys.argv[3]], sys.argv[1], sys.argv[4], pipeline.DataPrepOptions(
    max_seq_length=48, dupe_factor=1), 1)
pipeline.build_shards(plan, progress=False)
"""


def test_two_builds_started_on_one_folder_one_builds_and_one_is_refused(corpus, spm_model,
                                                                      tmp_path):
    import subprocess
    import sys
    import time

    output, go = tmp_path / "out", tmp_path / "go"
    first = subprocess.Popen([sys.executable, "-c", _PAUSED_BUILD, str(output), str(go),
                              str(corpus / "a.txt"), spm_model])
    while not (output / LOCK_FILE).exists():  # the first holds the folder
        assert first.poll() is None, "the first build ended early"
        time.sleep(0.05)
    second = subprocess.run([os.path.join(os.path.dirname(sys.executable), "albert-data"),
                             "build", "--input", str(corpus / "a.txt"), "--spm_model",
                             spm_model, "--output_dir", str(output), "--max_seq_length", "48",
                             "--dupe_factor", "1", "--num_shards", "1", "--overwrite"],
                            capture_output=True, text=True)
    assert second.returncode == 2
    assert f"is in use by albert-data build (pid {first.pid} on host" in second.stderr
    go.write_text("")
    assert first.wait(timeout=120) == 0
    assert sorted(os.listdir(output)) == [RECORD_FILE, "build.json", "manifest.json",
                                          "train-00000-of-00001.tfrecord",
                                          "train-00000-of-00001.tfrecord.json"]
    assert read_manifest(str(output))["total_examples"] > 0


def test_strict_build_fails_on_bad_input_and_leaves_no_partial_shard(spm_model, tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "bad.txt").write_bytes(b"fine line.\nalso fine.\n\nbroken \xff line.\n")
    options = DataPrepOptions(**{**OPTIONS.to_dict(), "strict": True})
    plan = pipeline.make_plan([str(tmp_path / "in" / "bad.txt")], str(tmp_path / "out"),
                              spm_model, options, 1)
    with pytest.raises(DataPrepError, match=r"bad.txt:4: invalid UTF-8"):
        pipeline.build_shards(plan, progress=False)
    assert sorted(os.listdir(tmp_path / "out")) == [RECORD_FILE, "build.json"]


def test_input_without_documents_is_a_clear_error(spm_model, tmp_path):
    (tmp_path / "blank.txt").write_text("\n\n   \n\n")
    plan = pipeline.make_plan([str(tmp_path / "blank.txt")], str(tmp_path / "out"), spm_model,
                              OPTIONS, 1)
    with pytest.raises(DataPrepError, match="no examples were made: the inputs hold no "
                                            "documents"):
        pipeline.build_shards(plan, progress=False)


@pytest.mark.slow
def test_beam_direct_runner_writes_the_same_shards(reference, corpus, spm_model, tmp_path):
    from data_prep import beam
    plan = pipeline.make_plan([str(corpus / "*.txt")], str(tmp_path / "api"), spm_model,
                              OPTIONS, 5)
    beam.build_with_beam(plan)
    assert folder_bytes(tmp_path / "api") == reference[2]
    # The command line: build flags, then the pipeline's after "--".
    assert beam.main(["--input", str(corpus / "*.txt"), "--spm_model", spm_model,
                      "--output_dir", str(tmp_path / "cli"), "--num_shards", "5",
                      "--max_seq_length", "64", "--dupe_factor", "2",
                      "--max_predictions_per_seq", "10", "--", "--runner=DirectRunner"]) == 0
    assert folder_bytes(tmp_path / "cli") == reference[2]


def test_a_beam_build_is_refused_while_another_command_holds_the_folder(corpus, spm_model,
                                                                       tmp_path, capsys):
    """The launching process takes the folder's lock before the pipeline starts, so a Beam
    build never writes into a folder a local build (or another launcher) holds."""
    from data_prep import beam
    output = tmp_path / "out"
    output.mkdir()
    with FolderLock(str(output), "albert-data build"):  # held by a live process (this one)
        assert beam.main(["--input", str(corpus / "a.txt"), "--spm_model", spm_model,
                          "--output_dir", str(output), "--max_seq_length", "48",
                          "--dupe_factor", "1", "--num_shards", "1", "--",
                          "--runner=DirectRunner"]) == 2
        assert f"{output} is in use by albert-data build (pid {os.getpid()} on host" in \
            capsys.readouterr().err
        assert os.listdir(output) == [LOCK_FILE]
    assert os.listdir(output) == []


def test_cli_train_build_inspect(corpus, tmp_path, capsys):
    assert main(["train-spm", "--input", str(corpus / "a.txt"), "--model_prefix",
                 str(tmp_path / "spm"), "--vocab_size", "150", "--num_threads", "1"]) == 0
    assert (tmp_path / "spm.model").exists() and (tmp_path / "spm.vocab").exists()
    assert main(["build", "--input", str(corpus / "a.txt"), "--spm_model",
                 str(tmp_path / "spm.model"), "--output_dir", str(tmp_path / "out"),
                 "--max_seq_length", "48", "--dupe_factor", "1", "--max_predictions_per_seq",
                 "8", "--num_shards", "2", "--no_progress", "--sentence_objective", "nsp",
                 "--single_sentence_chunks", "random_next"]) == 0
    assert "examples in 2 shards" in capsys.readouterr().out
    options = read_manifest(str(tmp_path / "out"))["options"]
    assert options["sentence_objective"] == "nsp"
    assert options["single_sentence_chunks"] == "random_next"
    assert main(["inspect", str(tmp_path / "out" / "train-00000-of-00002.tfrecord"),
                 "--count", "2"]) == 0
    out = capsys.readouterr().out
    assert len(re.findall(r"^example \d+: ", out, re.M)) == 2 and "[CLS]" in out and "<-" in out
    assert re.search(r"^masked +1\d\.\d% of tokens$", out, re.M)
    assert "1 = B is random, from another document" in out  # NSP, from the manifest


def test_default_shard_count_gives_every_worker_a_shard_and_resumes_with_any(corpus, spm_model,
                                                                            tmp_path, capsys):
    build = ["build", "--input", str(corpus / "a.txt"), "--spm_model", spm_model,
             "--output_dir", str(tmp_path / "out"), "--max_seq_length", "48", "--dupe_factor",
             "1", "--no_progress"]
    assert main([*build, "--num_workers", "2"]) == 0
    shown = capsys.readouterr()
    assert re.search(r"^wrote [\d,]+ examples in 2 shards to ", shown.out, re.M)
    assert "note:" not in shown.err
    # A rerun with one worker resumes the same two-shard build (nothing left to do).
    assert main([*build, "--num_workers", "1"]) == 0
    assert "in 2 shards" in capsys.readouterr().out
    assert main([*build, "--num_workers", "3", "--num_shards", "1", "--overwrite"]) == 0
    shown = capsys.readouterr()
    assert re.search(r"^wrote [\d,]+ examples in 1 shard to ", shown.out, re.M)
    assert "1 shard for 3 workers" in shown.err
    assert re.search(r"^sentence label 1 +\d+\.\d%  \(0 = A before B as written, "
                     r"1 = swapped\)$", shown.out, re.M)


def test_cli_reports_errors_by_name(tmp_path, capsys):
    assert main(["build", "--input", str(tmp_path / "missing.txt"), "--spm_model",
                 str(tmp_path / "none.model"), "--output_dir", str(tmp_path / "o")]) == 2
    assert "missing.txt" in capsys.readouterr().err
    (tmp_path / "x.txt").write_text("a.\nb.\n")
    assert main(["build", "--input", str(tmp_path / "x.txt"), "--spm_model",
                 str(tmp_path / "none.model"), "--output_dir", str(tmp_path / "o")]) == 2
    assert "none.model" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()  # inputs are checked before the folder is made


@pytest.mark.parametrize("prefix, message", [
    ("../outside", "option prefix: '../outside' is not a plain file name"),
    ("/tmp/x", "option prefix: '/tmp/x' is not a plain file name"),
    ("tr*", "option prefix: 'tr*' holds a glob character"),
])
def test_a_prefix_that_would_leave_the_output_folder_is_refused(corpus, spm_model, tmp_path,
                                                               capsys, prefix, message):
    assert _cli_build(corpus, spm_model, tmp_path / "out", "--prefix", prefix) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and sorted(os.listdir(tmp_path)) == []


@pytest.mark.slow
def test_tfds_datasets_are_read_as_documents(spm_model, tmp_path):
    pytest.importorskip("tensorflow_datasets")
    from tfds_articles import articles_builder
    texts = [english_like_text(1, seed=i, sentences=(3, 6)).replace("\n", " ").strip()
             for i in range(30)]

    data_dir = str(tmp_path / "tfds")
    articles_builder(texts)(data_dir=data_dir).download_and_prepare()
    from data_prep.tfds_source import tfds_split
    source = tfds_split("albert_test_articles", data_dir=data_dir)
    assert source.num_records == 30
    plan = pipeline.make_plan([], str(tmp_path / "out"), spm_model, OPTIONS, 3,
                              tfds_sources=[source])
    manifest = pipeline.build_shards(plan, progress=False)
    counts = manifest["statistics"]["examples"]
    assert counts["documents"] == 30
    assert counts["sentences"] == sum(len(split_sentences(text)) for text in texts)
    with pytest.raises(DataPrepError, match="no feature 'body'"):
        tfds_split("albert_test_articles", text_field="body", data_dir=data_dir)


def test_inspect_agrees_with_the_manifest_and_reads_files_without_one(reference, spm_model,
                                                                      tmp_path):
    from data_prep.inspect_shards import inspect_shard
    plan, manifest, files = reference
    shard = "train-00001-of-00005.tfrecord"
    sidecar = json.loads(files[shard + ".json"])
    built = sidecar["statistics"]["examples"]
    # The same shard copied where no manifest is: lengths and tokenizer given by hand.
    (tmp_path / shard).write_bytes(files[shard])
    with pytest.raises(ValueError, match="pass --spm_model, --max_seq_length"):
        next(inspect_shard(str(tmp_path / shard), 1))
    for batch_size in (7, 1024):  # counted a batch at a time: the batching changes nothing
        stats = RecordStatistics()
        for batch in read_batches(str(tmp_path / shard), 64, 10, batch_size=batch_size):
            stats.add(batch)
        counts = stats.counts
        assert (counts.examples, counts.tokens, counts.masked_tokens,
                counts.full_length_examples, counts.replaced_by_mask) == (
            sidecar["examples"], built["tokens"], built["masked_tokens"],
            built["full_length_examples"], built["replaced_by_mask"])
        assert counts.label_counts == {int(label): count
                                       for label, count in built["label_counts"].items()}
        # A random replacement that drew the original piece looks kept in the records.
        assert counts.kept_original + counts.replaced_by_random == \
            built["kept_original"] + built["replaced_by_random"]
    report = inspect_shard(str(tmp_path / shard), 2, spm_model, 64, 10, max_examples=50)
    header = next(report)
    assert "label 1 = swapped (SOP) or random (NSP)" in header  # no manifest to say which
    assert [block.split(":")[0] for block in report][:2] == ["example 0", "example 1"]


def test_inspect_streams_a_header_with_the_label_meaning_then_bounded_statistics(
        reference, capsys):
    plan, manifest, files = reference
    shard = os.path.join(plan.output_dir, "train-00002-of-00005.tfrecord")
    assert main(["inspect", shard, "--count", "1", "--max_examples", "100",
                 "--no_progress"]) == 0
    shown = capsys.readouterr().out
    examples = json.loads(files["train-00002-of-00005.tfrecord.json"])["examples"]
    assert shown.startswith(f"{shard}: {examples:,} examples, sequences of 64, up to 10 "
                            "predictions\nsentence objective sop: label 0 = A before B as "
                            "written, 1 = swapped\nexample 0: label ")
    assert "statistics over the first 100 records (--all for every one):" in shown
    assert re.search(r"^examples +100$", shown, re.M)
    assert main(["inspect", shard, "--count", "0", "--all", "--no_progress"]) == 0
    shown = capsys.readouterr().out
    assert "statistics over every record:" in shown and "example 0" not in shown
    assert re.search(rf"^examples +{examples:,}$", shown, re.M)


@pytest.mark.slow
def test_remote_filesystems_give_the_same_shards(reference, corpus, spm_model):
    """Inputs, tokenizer and output on a TensorFlow filesystem (`ram://`, in memory, standing
    in for gs:// or hdfs://), by `build` and by Beam: the same shard bytes as on local disk."""
    import tensorflow as tf

    from data_prep.beam import build_with_beam
    for name in ("a.txt", "b.txt"):
        tf.io.gfile.copy(str(corpus / name), f"ram://corpus/{name}", overwrite=True)
    tf.io.gfile.copy(spm_model, "ram://corpus/spm.model", overwrite=True)
    shards = {name: data for name, data in reference[2].items() if name.endswith(".tfrecord")}
    for output, run in (("ram://built", lambda plan: pipeline.build_shards(plan, progress=False)),
                        ("ram://beam", build_with_beam)):
        plan = pipeline.make_plan(["ram://corpus/*.txt"], output, "ram://corpus/spm.model",
                                  OPTIONS, 5)
        manifest = run(plan)
        assert manifest["total_examples"] == reference[1]["total_examples"]
        for name, data in shards.items():
            with tf.io.gfile.GFile(f"{output}/{name}", "rb") as file:
                assert file.read() == data, (output, name)


def test_reservoir_sample_is_uniform_and_capped(seed, record_property):
    import random

    from scipy import stats as scipy_stats

    from albert_tf.text.vocabulary import reservoir_sample
    rng = random.Random(seed)
    counts = [0] * 50
    for _ in range(4000):
        for item in reservoir_sample(iter(range(50)), 5, rng):
            counts[item] += 1
    assert sum(counts) == 4000 * 5
    above(record_property, "chi-square p-value", scipy_stats.chisquare(counts).pvalue, 1e-4)
    assert reservoir_sample(iter(range(3)), 5, rng) == [0, 1, 2]


def test_train_spm_on_a_capped_sample_is_deterministic(corpus, tmp_path):
    lines = [line for line in (corpus / "a.txt").read_text().lower().splitlines() if line]
    first = train_sentencepiece(iter(lines), str(tmp_path / "one"), 120, max_sentences=300)
    second = train_sentencepiece(iter(lines), str(tmp_path / "two"), 120, max_sentences=300)
    assert len(lines) > 300
    assert SentencePieceTokenizer(first).checksum == SentencePieceTokenizer(second).checksum
