"""An experiment file (`experiments/table*.yaml`) read at one scale.

One file describes one of the paper's ablation tables at every scale it runs at: `paper` (the
paper's sizes and recipe, for TPU pods), `mini` (a CPU in tens of minutes) and any other the
file declares. The layout:

    name: table6_sentence_objective
    title: ...
    paper: {table: 6, setting: ..., columns: [[mlm, MLM], [squad11, SQuAD1.1], ...]}
    report: {metrics: [mlm_accuracy, nsp_accuracy, sop_accuracy]}
    scales:
      mini:
        include: scales/mini.yaml        # defaults that the keys beside it change
        corpus: {sources: [python-docs], heldout_every: 20}
        tokenizer: {vocab_size: 1000}
        shards: {max_seq_length: 128, dupe_factor: 2, ...}   # albert-data build options
        evaluation: {batch_size: 64}
        downstream: [{task: sst2, data_dir: glue/SST-2}]   # optional fine-tuning
        pretrain: {model: ..., optimizer: ..., train: ...}   # an albert-pretrain config
      paper: ...
    variants:
      - name: sop
        label: SOP
        pretrain: {sentence_objective: sop}      # merged into the scale's pretrain section
        paper: {mlm: 54.0, nsp: 78.9, sop: 86.5}  # the paper's figures for this row

Anywhere in `variants`, a mapping whose keys are scale names gives one value per scale, e.g.
`embedding_size: {paper: 768, mini: 32}`. A variant may also replace `corpus.sources` (the
additional-data table trains on more text; every variant is evaluated on the held-out
documents of the scale's first source) and change how its training shards are made with
`shards: {<albert-data build option>: value}` (its held-out sets stay the scale's).
`include: <file>` may appear in any mapping of a scale, relative to the file that holds it.

A corpus source is a built-in one (`python-docs`, `stdlib-docstrings`: text already on the
machine, split into training and held-out documents here) or a mapping
`{name, train_files, heldout_files}` of text files in the original format (one sentence per
line, a blank line between documents) the user already has.

The package: `settings` (the typed settings an experiment file becomes), `scales` (one
scale's settings: includes, per-scale values, merging) and `reader` (the file read at a
scale, with errors that name the field).
"""

from albert_lab.ablations.table_spec.reader import (
    CUT_KEY,
    FALLBACK_KEY,
    NOT_RUN_KEY,
    experiment_from_mapping,
    load_experiment,
    not_run_reason,
    not_run_reasons,
    table_name,
)
from albert_lab.ablations.table_spec.scales import deep_merge, resolve_scale
from albert_lab.ablations.table_spec.settings import (
    DOWNSTREAM_RECIPES,
    METRICS,
    PAPER_KEYS,
    PAPER_SCALE,
    PERCENT_METRICS,
    CorpusSource,
    CorpusSpec,
    DownstreamSpec,
    EvaluationSpec,
    ExperimentError,
    ExperimentSpec,
    ShardSpec,
    TokenizerSpec,
    VariantSpec,
    row_name,
)

__all__ = ["CUT_KEY", "DOWNSTREAM_RECIPES", "FALLBACK_KEY", "METRICS", "NOT_RUN_KEY",
           "PAPER_KEYS", "PAPER_SCALE", "PERCENT_METRICS", "CorpusSource", "CorpusSpec",
           "DownstreamSpec", "EvaluationSpec", "ExperimentError", "ExperimentSpec", "ShardSpec",
           "TokenizerSpec", "VariantSpec", "deep_merge", "experiment_from_mapping",
           "load_experiment", "not_run_reason", "not_run_reasons", "resolve_scale", "row_name",
           "table_name"]
