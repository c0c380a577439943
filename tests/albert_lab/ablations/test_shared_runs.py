"""A variant another table already pretrained with the same settings is copied, not run again:
which runs count as the same, and what the copy holds."""

import glob
import json
import os

import pytest
from repository import REPOSITORY

from albert_lab.ablations.result_store import copy_folder, copy_run
from albert_lab.ablations.shared_runs import (
    find_identical_record,
    find_identical_run,
    find_random_start,
)
from albert_lab.ablations.table_spec import load_experiment
from albert_lab.ablations.variant_config import variant_config, what_it_computes

ROOT = REPOSITORY

SETTINGS = {"model": {"hidden_size": 128, "sharing": "all"}, "train": {"train_steps": 1500},
            "training_data": {"sources": ["stdlib-docstrings"], "shards": {"dupe_factor": 1}}}
WHOLE_SETS = {"max_batches": None}


def _finished_run(folder, settings=SETTINGS, tokenizer=b"pieces", scope=None, name="e128_all"):
    os.makedirs(os.path.join(folder, "checkpoints"))
    with open(os.path.join(folder, "checkpoints", "ckpt-1500.index"), "w") as f:
        f.write("weights")
    with open(os.path.join(folder, "spm.model"), "wb") as f:
        f.write(tokenizer)
    result = {"name": name, "label": "all-shared", "group": "E=128", "settings": settings,
              "metrics": {"mlm_accuracy": 0.15},
              "checkpoint": os.path.join(folder, "checkpoints", "ckpt-1500"),
              "downstream": {"bbc-news": {"folder": "finetune/bbc-news-1", "value": 0.6}},
              "trend": [{"step": 1500}], "sentence_probe": {"steps": 300}}
    if scope is not None:
        result["heldout_scope"] = scope
    with open(os.path.join(folder, "result.json"), "w") as f:
        json.dump(result, f)
    return folder


@pytest.fixture
def tables(tmp_path):
    tokenizer = tmp_path / "data" / "spm.model"
    tokenizer.parent.mkdir()
    tokenizer.write_bytes(b"pieces")
    return {"root": tmp_path / "runs", "tokenizer": str(tokenizer),
            "own": str(tmp_path / "runs" / "table4" / "mini" / "all_e128")}


def _find(tables, work_dirs, settings=SETTINGS, scope=WHOLE_SETS):
    return find_identical_run([str(tables["root"] / d) for d in work_dirs], tables["own"],
                              settings, tables["tokenizer"], scope)


def test_only_a_finished_run_of_the_same_settings_tokenizer_and_scope_is_found(tables):
    root = tables["root"]
    same = _finished_run(str(root / "table5" / "mini" / "e128_all"))
    _finished_run(str(root / "table7" / "mini" / "other_steps"),
                  settings={**SETTINGS, "train": {"train_steps": 3000}})
    _finished_run(str(root / "table8" / "mini" / "other_pieces"), tokenizer=b"other pieces")
    _finished_run(str(root / "table9" / "mini" / "subset"), scope={"max_batches": 4})
    os.makedirs(root / "table10" / "mini" / "running" / "checkpoints")  # no result yet

    assert _find(tables, ["table5/mini", "table7/mini"]) == same
    for others in (["table7/mini"], ["table8/mini"], ["table9/mini"], ["table10/mini"],
                   ["table11/mini"]):  # the last does not exist
        assert _find(tables, others) is None
    assert _find(tables, ["table9/mini"], scope={"max_batches": 4}) is not None
    # A result without a stored scope (written before it was stored) counts as whole sets.
    assert _find(tables, ["table5/mini"], scope={"max_batches": 4}) is None


def test_the_variants_own_folder_half_made_copies_and_unreadable_results_are_skipped(tables):
    root = tables["root"]
    _finished_run(tables["own"])
    _finished_run(str(root / "table4" / "mini" / "other.copying"))
    broken = root / "table4" / "mini" / "broken"
    broken.mkdir()
    (broken / "result.json").write_text('{"settings": ')
    assert _find(tables, ["table4/mini"]) is None


def test_a_copy_stands_for_its_new_variant_and_leaves_the_original_alone(tables):
    source = _finished_run(str(tables["root"] / "table5" / "mini" / "e128_all"))
    before = open(os.path.join(source, "result.json")).read()
    names = {"name": "all_e128", "label": "all-shared E=32", "group": "all-shared"}

    result = copy_run(source, tables["own"], names)

    with open(os.path.join(tables["own"], "result.json")) as f:
        assert json.load(f) == result
    assert {key: result[key] for key in names} == names
    assert result["copied_from"] == source
    assert result["checkpoint"] == os.path.join(tables["own"], "checkpoints", "ckpt-1500")
    assert os.path.exists(result["checkpoint"] + ".index")
    assert result["metrics"] == {"mlm_accuracy": 0.15}
    assert result["downstream"]["bbc-news"]["value"] == 0.6
    # Scores made under the other table's evaluation settings are made again if wanted.
    assert "trend" not in result and "sentence_probe" not in result
    assert open(os.path.join(source, "result.json")).read() == before
    assert not os.path.exists(tables["own"] + ".copying")
    with pytest.raises(FileExistsError, match="all_e128: exists"):
        copy_run(source, tables["own"], names)


DATA = {"corpus": {"debian-prose": {"bible-kjv": "bible-kjv-text 4.53"}},
        "tokenizer": "sha256:abc"}


def _record(folder, data=DATA, outcomes=True, settings=SETTINGS, scope=None):
    """A table's record (`albert_lab.ablations.records`): a finished run's result and held-out
    outcomes, without the run's checkpoints or tokenizer copy."""
    os.makedirs(folder)
    result = {"name": "not_shared_e128", "label": "not-shared", "group": "E=128",
              "settings": settings, "metrics": {"mlm_accuracy": 0.15},
              "checkpoint": "/machine/gone/table4/small/not_shared_e128/checkpoints/ckpt-1500",
              "downstream": {"bbc-news": {"folder": "finetune/bbc-news-1", "value": 0.6}},
              "trend": [{"step": 1500}]}
    if scope is not None:
        result["heldout_scope"] = scope
    if data is not None:
        result["data"] = data
    with open(os.path.join(folder, "result.json"), "w") as f:
        json.dump(result, f)
    if outcomes:
        with open(os.path.join(folder, "heldout_outcomes.npz"), "wb") as f:
            f.write(b"outcomes")
    return folder


def test_a_record_of_the_same_settings_scope_and_data_is_found_and_copied(tables, tmp_path):
    """Another machine: the run folders are gone, the tables' records (kept in git) are not."""
    results = tmp_path / "results"
    same = _record(str(results / "table4" / "small" / "records" / "not_shared_e128"))
    _record(str(results / "table7" / "small" / "records" / "other_steps"),
            settings={**SETTINGS, "train": {"train_steps": 3000}})
    _record(str(results / "table8" / "small" / "records" / "other_tokenizer"),
            data={**DATA, "tokenizer": "sha256:def"})
    _record(str(results / "table9" / "small" / "records" / "no_data_recorded"), data=None)
    _record(str(results / "table10" / "small" / "records" / "no_outcomes"), outcomes=False)
    _record(str(results / "table12" / "small" / "records" / "subset"),
            scope={"max_batches": 4})
    own = str(results / "table5" / "small" / "records" / "e128_none")

    def find(*tables_searched, data=DATA, scope=WHOLE_SETS):
        return find_identical_record(
            [str(results / name / "small" / "records") for name in tables_searched], own,
            SETTINGS, data, scope)

    assert find("table7", "table4") == same
    for other in ("table7", "table8", "table9", "table10", "table11", "table12"):
        assert find(other) is None
    assert find("table12", scope={"max_batches": 4}) is not None
    assert find("table4", data={**DATA, "corpus": {}}) is None  # another corpus
    _record(own)
    assert find("table5") is None  # the variant's own record

    names = {"name": "e128_none", "label": "not-shared E=32", "group": "E=32"}
    copied = copy_run(same, tables["own"], names)
    assert copied["copied_from"] == same and {key: copied[key] for key in names} == names
    # No checkpoint came along: the record's path still says where the run was made.
    assert copied["checkpoint"].startswith("/machine/gone/")
    assert copied["data"] == DATA and copied["downstream"]["bbc-news"]["value"] == 0.6
    assert "trend" not in copied
    assert open(os.path.join(tables["own"], "heldout_outcomes.npz"), "rb").read() == \
        b"outcomes"


def _random_start(folder, seq_length=64, tokenizer=b"pieces", finished=True, seeds=(1, 2)):
    for seed in seeds:
        run = os.path.join(folder, "finetune", "bbc-news-1", f"seed{seed}")
        os.makedirs(run)
        with open(os.path.join(run, "finetune.yaml"), "w") as f:
            f.write(f"task: classify\ndata:\n  max_seq_length: {seq_length}\n")
        with open(os.path.join(run, "spm.model"), "wb") as f:
            f.write(tokenizer)
        if finished:
            with open(os.path.join(run, "eval_results.json"), "w") as f:
                json.dump({"best_step": 600, "dev_metrics": {"dev": {"accuracy": 0.4}}}, f)
    return folder


def test_a_random_start_is_copied_only_from_finished_fine_tunes_of_the_same_settings(tables):
    root = tables["root"]
    own = str(root / "table11" / "mini" / "random_start" / "model-1234abcd")
    folder = os.path.join("random_start", "model-1234abcd")
    same = _random_start(str(root / "table6" / "mini" / folder))
    _random_start(str(root / "table7" / "mini" / folder), seq_length=128)
    _random_start(str(root / "table8" / "mini" / folder), tokenizer=b"other pieces")
    _random_start(str(root / "table9" / "mini" / folder), finished=False)
    _random_start(str(root / "table10" / "mini" / "random_start" / "model-99999999"))

    def find(*tables_searched):
        return find_random_start([str(root / name / "mini") for name in tables_searched], own,
                                 tables["tokenizer"], 64)

    assert find("table7", "table6") == same
    for other in ("table7", "table8", "table9", "table10", "table11"):
        assert find(other) is None
    _random_start(own)
    assert find("table11") is None  # its own folder

    target = str(root / "table12" / "mini" / folder)
    copy_folder(same, target)
    assert find("table12") == target
    assert not os.path.exists(target + ".copying")
    with pytest.raises(FileExistsError, match="model-1234abcd: exists"):
        copy_folder(same, target)


def test_the_mini_tables_share_the_variants_the_docs_name():
    """docs/experiments.md promises six mini variants pretrained once for two tables."""
    by_settings = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "experiments", "table*.yaml"))):
        spec = load_experiment(path, "mini")
        for variant in spec.variants:
            config = variant_config(spec, variant, "run", vocab_size=1000)
            key = json.dumps(what_it_computes(spec, variant, config), sort_keys=True)
            by_settings.setdefault(key, []).append(f"{spec.name}:{variant.name}")
    shared = sorted(sorted(names) for names in by_settings.values() if len(names) > 1)
    assert shared == [
        ["table11_additional_data:without", "table12_dropout:without_dropout"],
        ["table4_embedding_size:all_shared_e128", "table5_sharing:e128_all"],
        ["table4_embedding_size:all_shared_e768", "table5_sharing:e768_all"],
        ["table4_embedding_size:not_shared_e128", "table5_sharing:e128_none"],
        ["table4_embedding_size:not_shared_e768", "table5_sharing:e768_none"],
        ["table7_depth:layers6", "table8_width:h2048"]]
