"""Where an experiment's data files go: named by digests of their inputs, so one folder named
two ways must give the same names."""

from __future__ import annotations

import os

import yaml
from experiment_tables import micro_table_document

from albert_lab.ablations import prepared_data
from albert_lab.ablations.table_spec import load_experiment


def test_a_data_folder_named_relatively_finds_the_tokenizer_made_under_its_absolute_name(
        tmp_path, monkeypatch):
    path = tmp_path / "micro.yaml"
    path.write_text(yaml.safe_dump(micro_table_document(tmp_path)))
    spec = load_experiment(str(path), "micro")
    trained = []

    def train_tokenizer(files, prefix, *args, **kwargs):  # stands in for SentencePiece
        trained.append(prefix)
        os.makedirs(os.path.dirname(prefix), exist_ok=True)
        with open(prefix + ".model", "wb") as f:
            f.write(b"pieces")

    monkeypatch.setattr(prepared_data, "train_tokenizer", train_tokenizer)
    monkeypatch.chdir(tmp_path)
    absolute = prepared_data.ExperimentData(spec, str(tmp_path / "data")).spm_model()
    relative = prepared_data.ExperimentData(spec, "data").spm_model()
    assert relative == absolute and absolute.startswith(str(tmp_path / "data" / "spm"))
    assert len(trained) == 1
