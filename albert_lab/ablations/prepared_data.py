"""The text, tokenizer and TFRecords an experiment trains and evaluates on, made once.

Everything lands under one data folder that experiments share (every mini table reuses the
same corpus, SentencePiece model and shards when their settings agree):

    <data_dir>/corpus/<source>-every<n>/{train,heldout}.txt   built-in sources, split
    <data_dir>/spm/<source>-<vocab>-<digest>.model           the SentencePiece model
    <data_dir>/shards/<split>-<sources>-<objective>-<digest>/  albert-data build output
    <data_dir>/tasks/<source>/                               albert-data task output

Folder names carry a digest of the settings that made them, so a changed setting makes new
data instead of mixing with old. Each step writes atomically or resumes (albert-data build
finds its finished shards), so a crash costs only the unfinished step.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from typing import Any, Mapping, Sequence

from albert_lab.ablations.table_spec import CorpusSource, DownstreamSpec, ExperimentSpec
from albert_lab.corpora.local_corpus import make_corpus
from albert_lab.task_folders import summary_lines, write_task
from albert_tf.io.files import file_digest
from albert_tf.task_data.glue_table import FOLDER_DESCRIPTION
from albert_tf.text.options import DataPrepOptions
from albert_tf.text.vocabulary import model_checksum
from data_prep.pipeline import build_shards, make_plan, train_tokenizer

HELDOUT_OBJECTIVES = ("sop", "nsp")  # every variant is scored on both held-out sets


def _digest(*parts) -> str:
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


class ExperimentData:
    """Makes (or finds) the files of `spec` under `data_dir`."""

    def __init__(self, spec: ExperimentSpec, data_dir: str, progress: bool = True):
        self.spec = spec
        # Absolute, since the files' names are digests of their inputs' paths: the same
        # folder named relatively would otherwise make the same tokenizer and shards again.
        self.data_dir = os.path.abspath(data_dir)
        self.progress = progress
        self._spm_model: str | None = None

    def text_files(self, source: CorpusSource) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(training files, held-out files) of one source; built-in ones are written here."""
        if not source.builtin:
            return source.train_files, source.heldout_files
        corpus = self.spec.corpus
        limit = f"-{corpus.max_mb:g}MB" if corpus.max_mb else ""
        folder = os.path.join(self.data_dir, "corpus",
                              f"{source.name}-every{corpus.heldout_every}{limit}")
        train, heldout = (os.path.join(folder, f"{split}.txt") for split in ("train", "heldout"))
        if not (os.path.exists(train) and os.path.exists(heldout)):
            written = make_corpus(source.name, train,
                                  int(corpus.max_mb * 1e6) if corpus.max_mb else None,
                                  heldout, corpus.heldout_every)
            print(f"albert-experiment: corpus {source.name}: {written['documents']:,} training "
                  f"and {written['heldout_documents']:,} held-out documents from "
                  f"{written['source']}")
        return (train,), (heldout,)

    def spm_model(self) -> str:
        """The given SentencePiece model, or one trained on the first source's training text."""
        if self._spm_model:
            return self._spm_model
        tokenizer = self.spec.tokenizer
        if tokenizer.spm_model:
            self._spm_model = tokenizer.spm_model
            return self._spm_model
        first = self.spec.corpus.sources[0]
        train_files, _ = self.text_files(first)
        lower_case = self.spec.shards.options.lower_case
        prefix = os.path.join(self.data_dir, "spm", f"{first.name}-{tokenizer.vocab_size}-"
                              f"{_digest(train_files, tokenizer.max_sentences, lower_case)}")
        if not os.path.exists(prefix + ".model"):
            options = dataclasses.replace(self.spec.shards.options, sentence_objective="sop")
            train_tokenizer(train_files, prefix, tokenizer.vocab_size, options,
                            tokenizer.max_sentences, num_threads=os.cpu_count() or 1)
        self._spm_model = prefix + ".model"
        return self._spm_model

    def _shards(self, split: str, sources, files, options: DataPrepOptions,
                num_shards: int) -> str:
        shard_spec = self.spec.shards
        objective = options.sentence_objective
        names = "+".join(source.name for source in sources)
        key = _digest(files, self.spm_model(), dataclasses.asdict(options), num_shards)
        folder = os.path.join(self.data_dir, "shards", f"{split}-{names}-{objective}-{key}")
        plan = make_plan(list(files), folder, self.spm_model(), options, num_shards,
                         prefix=split)
        build_shards(plan, shard_spec.num_workers, progress=self.progress)
        return os.path.join(folder, "*.tfrecord")

    def train_shards(self, sources: tuple[CorpusSource, ...], objective: str,
                     changes: Mapping[str, Any] | None = None) -> str:
        """A glob of training shards over `sources` built for `objective`, with a variant's
        `changes` to the data-prep options."""
        files = tuple(path for source in sources for path in self.text_files(source)[0])
        return self._shards("train", sources, files,
                            self.spec.shards.options_for(objective, changes),
                            self.spec.shards.num_shards)

    def heldout_shards(self, objective: str) -> str:
        """A glob of held-out shards (the first source's held-out documents) for `objective`."""
        first = self.spec.corpus.sources[0]
        options = self.spec.shards.options_for(
            objective, {"dupe_factor": self.spec.shards.heldout_dupe_factor})
        return self._shards("heldout", (first,), self.text_files(first)[1], options, 1)

    def provenance(self, sources: Sequence[CorpusSource]) -> dict[str, Any]:
        """What a run's data was made from, for its record: per corpus source, the Debian
        package and version each built-in part was read from (the corpus's `.sources.json`)
        or the SHA-256 of each of the user's files; and the SentencePiece model's checksum. Two
        machines with other package versions make other data from the same table file."""
        corpus = {}
        for source in sources:
            train_files, _ = self.text_files(source)
            if source.builtin:
                with open(train_files[0] + ".sources.json", encoding="utf-8") as f:
                    parts = json.load(f)["sources"]
                corpus[source.name] = {name: f"{part['package']} {part['version']}"
                                       for name, part in sorted(parts.items())}
            else:
                corpus[source.name] = {path: file_digest([path]) for path in train_files}
        return {"corpus": corpus, "tokenizer": self.tokenizer_checksum()}

    def tokenizer_checksum(self) -> str:
        """The SentencePiece model's checksum, as the shards' manifest and a run's
        `tokenizer.checksum` record it."""
        with open(self.spm_model(), "rb") as f:
            return model_checksum(f.read())

    def task_folder(self, task: DownstreamSpec) -> str:
        """The task's folder: its own `data_dir`, or its `albert-data task` source written
        under `<data_dir>/tasks/<source>` (once: `source.json` is written last)."""
        if task.data_dir:
            return task.data_dir
        folder = os.path.join(self.data_dir, "tasks", task.source)
        if not os.path.exists(os.path.join(folder, FOLDER_DESCRIPTION)):
            record = write_task(task.source, folder)
            print("\n".join(f"albert-experiment: {line}" for line in summary_lines(record)))
        return folder
