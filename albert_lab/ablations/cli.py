"""`albert-experiment`: the paper's ablation tables (4-12) from `experiments/*.yaml`.

    albert-experiment run experiments/table6_sentence_objective.yaml --scale mini
    albert-experiment run experiments/table5_sharing.yaml --scale mini --variants e128_all
    albert-experiment params experiments/table5_sharing.yaml --scale paper
    albert-experiment report experiments/table6_sentence_objective.yaml --scale mini
    albert-experiment downstream runs/my_run --tasks_dir tasks   # albert-data task folders
    albert-experiment summary --scale mini   # every table's report on one page
    albert-experiment summary --scale small --against mini   # and how each verdict moved
    albert-experiment summary --scale mini --readme docs/results.md   # and a page's rows
    albert-experiment probe runs/my_run --tasks_dir tasks   # frozen features, no fine-tuning
    albert-experiment check quickstart/run --task_dir quickstart/tasks/bbc-news   # one task

`run` makes the corpus, tokenizer and TFRecords it needs (once, shared by all experiments),
pretrains every variant (a finished variant is skipped, an interrupted one resumes), scores
each on held-out MLM / NSP / SOP, and writes results.json, results.md (the paper's table
with our numbers beside its figures) and PNG plots. `params` prints the parameter counts of
each variant's built model without training; `report` rewrites the report from the
finished variants; `summary` writes one page over every table's report (variants run,
ranges, each claim's verdict; with `--readme`, a page's headline rows); `downstream`
fine-tunes one pretraining run and a random start of the same sizes on every task folder
and writes `downstream.json` / `downstream.md` into the run (`downstream-<digest>.*` with a
changed recipe, `--override`); `probe` fits a linear model on the frozen encoder outputs of
the run and of random encoders of its sizes, per task folder, and writes `probe.json` /
`probe.md` (seconds, where the fine-tunes take an hour); `check` is the quickstart's
downstream check: the run and a random start fine-tuned on one task folder, three seeds of
300 steps by default, `downstream_check.json` written into the run and a warning printed
when the run is no better a start. The fine-tunes of `run` and
`downstream` go two at a time on a machine with two or more cores and no GPU, each with its
share of the cores; `ALBERT_FINE_TUNE_WORKERS=N` sets how many.
"""

from __future__ import annotations

import argparse
import glob
import os
import shlex
import sys
from typing import Sequence

from albert_tf.cli.command import fail, run_command
from albert_tf.config import ConfigError
from albert_tf.io.console import add_verbose_flag


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="albert-experiment", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (("run", "pretrain and score the variants, then report"),
                       ("report", "rewrite the report from the finished variants"),
                       ("params", "parameter counts of every variant's built model")):
        command = commands.add_parser(name, help=text)
        command.add_argument("experiment", help="an experiments/*.yaml file")
        add_verbose_flag(command)
        command.add_argument("--scale", default="mini",
                             help="a scale the file defines: paper, mini, ... (default: mini)")
        command.add_argument("--override", action="append", default=[],
                             metavar="SECTION.FIELD=VALUE",
                             help="change one field of the scale's settings, e.g. "
                                  "pretrain.train.train_steps=200; may be repeated")
        if name == "params":
            continue
        command.add_argument("--work_dir", help="variant runs (default: "
                             "runs/experiments/<name>/<scale>)")
        command.add_argument("--results_dir", help="report and plots (default: "
                             "experiments/results/<name>/<scale>)")
        if name == "run":
            command.add_argument("--data_dir", default=os.path.join("runs", "experiments",
                                                                    "data"),
                                 help="corpus, tokenizer and shards, shared by experiments")
            command.add_argument("--variants", nargs="+", default=[],
                                 help="run only these variants (default: all)")
            command.add_argument("--no_progress", action="store_true",
                                 help="no progress bars while building shards")
            command.add_argument("--reuse_from", nargs="+", default=None, metavar="WORK_DIR",
                                 help="other tables' work folders: a variant run there with "
                                      "the same settings is copied, not pretrained again "
                                      "(default: runs/experiments/*/<scale> when --work_dir "
                                      "is not given, else none)")
            command.add_argument("--no_reuse", action="store_true",
                                 help="pretrain every variant here even if another table "
                                      "has run it (its work folder, or its record beside "
                                      "its report)")
    summary = commands.add_parser(
        "summary", help="one page over every table's report at a scale: variants run, "
                        "ranges, the claims and their verdicts")
    summary.add_argument("--scale", default="mini", help="the scale (default: mini)")
    summary.add_argument("--experiments_dir", default="experiments",
                         help="where the table*.yaml files are (default: experiments)")
    summary.add_argument("--results_root", default=os.path.join("experiments", "results"),
                         help="where the reports are; the summary is written there as "
                              "summary-<scale>.md (default: experiments/results)")
    summary.add_argument("--readme", metavar="PAGE.md",
                         help="also rewrite this Markdown page's block of headline rows for "
                              "the scale, between its `<!-- albert-experiment summary --scale "
                              "SCALE: begin -->` and `...: end -->` lines (the repository's "
                              "page: docs/results.md)")
    summary.add_argument("--against", metavar="SCALE",
                         help="also compare each claim's verdict with this scale's (e.g. "
                              "--scale small --against mini): toward the paper, away, same")
    add_verbose_flag(summary)
    downstream = commands.add_parser(
        "downstream", help="fine-tune a pretraining run and a random start of its sizes on "
                           "every task folder, beside a bag-of-words baseline")
    downstream.add_argument("run_dir", help="an albert-pretrain run folder")
    downstream.add_argument("--tasks_dir", required=True,
                            help="a folder of task folders written by `albert-data task`")
    downstream.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5],
                            help="fine-tuning seeds per task and start (default: 1 2 3 4 5)")
    downstream.add_argument("--override", action="append", default=[],
                            metavar="SECTION.FIELD=VALUE",
                            help="change the fixed recipe for every run, e.g. "
                                 "train.train_steps=300; may be repeated")
    downstream.add_argument("--random_starts",
                            help="where random starts are fine-tuned, shared by every run of "
                                 "the same sizes, tokenizer and recipe (default: "
                                 "<tasks_dir>/random_starts)")
    downstream.add_argument("--random_records", metavar="DIR",
                            help="a folder kept in git: each finished random-start seed is "
                                 "recorded there, and seeds recorded there are not "
                                 "fine-tuned again (another machine goes on from them)")
    downstream.add_argument("--max_seq_length", type=int,
                            help="the fine-tunes' sequence length (default: the run's "
                                 "pretraining length; at most its position table's)")
    add_verbose_flag(downstream)
    probe = commands.add_parser(
        "probe", help="a linear model on a run's frozen encoder outputs and on random "
                      "encoders' of its sizes, per task folder: what pretraining put into "
                      "the features, before any fine-tuning")
    probe.add_argument("run_dir", help="an albert-pretrain run folder")
    probe.add_argument("--tasks_dir", required=True,
                       help="a folder of task folders written by `albert-data task`")
    probe.add_argument("--tasks", nargs="+", metavar="NAME",
                       help="only these task folders (default: every single-label one)")
    probe.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3],
                       help="seeds of the random encoders (default: 1 2 3)")
    probe.add_argument("--output_dir", help="where probe.json and probe.md go (default: the "
                                            "run folder)")
    add_verbose_flag(probe)
    _add_check_command(commands)
    return parser


def _add_check_command(commands) -> None:
    check = commands.add_parser(
        "check", help="is a pretraining run a better start than a random one on one task "
                      "folder? (the quickstart's check)")
    check.add_argument("run_dir", help="an albert-pretrain run folder")
    check.add_argument("--task_dir", required=True,
                       help="a task folder written by `albert-data task`, e.g. bbc-news")
    check.add_argument("--train_steps", type=int, default=300,
                       help="fine-tuning steps of each start (default: 300)")
    check.add_argument("--seed", type=int, default=1, help="the first seed (default: 1)")
    check.add_argument("--num_seeds", type=int, default=3,
                       help="seeds per start, paired (default: 3)")
    add_verbose_flag(check)


def _folders(args, spec):
    from albert_lab.ablations.runner import Folders
    tables_root = os.path.join("runs", "experiments")
    results_dir = args.results_dir or os.path.join("experiments", "results", spec.name,
                                                   spec.scale)
    return Folders(
        work_dir=args.work_dir or os.path.join(tables_root, spec.name, spec.scale),
        data_dir=getattr(args, "data_dir", ""),
        results_dir=results_dir,
        reuse_dirs=_reuse_dirs(args, os.path.join(tables_root, "*", spec.scale)),
        reuse_records=_reuse_records(args, results_dir))


def _reuse_dirs(args, default_pattern: str) -> tuple[str, ...]:
    if getattr(args, "no_reuse", False):
        return ()
    if getattr(args, "reuse_from", None):
        for folder in args.reuse_from:
            if not os.path.isdir(folder):
                raise ConfigError(f"--reuse_from {folder}: not a folder (give other tables' "
                                  f"work folders, e.g. runs/experiments/table5_sharing/mini)")
        return tuple(args.reuse_from)
    if args.work_dir or not hasattr(args, "reuse_from"):
        return ()
    return tuple(sorted(glob.glob(default_pattern)))


def _reuse_records(args, results_dir: str) -> tuple[str, ...]:
    """The records folders of the other tables at the same scale, found beside the report's
    folder as the tables lay them out (`<results root>/<table>/<scale>/records`)."""
    from albert_lab.ablations.records import RECORDS_DIR
    if getattr(args, "no_reuse", False):
        return ()
    table_dir, scale = os.path.split(os.path.normpath(results_dir))
    own = os.path.realpath(os.path.join(results_dir, RECORDS_DIR))
    return tuple(folder for folder in sorted(glob.glob(os.path.join(
        os.path.dirname(table_dir), "*", scale, RECORDS_DIR)))
        if os.path.realpath(folder) != own)


def _print_parameters(spec) -> None:
    from albert_lab.ablations.report import millions, paper_scale_parameters
    from albert_lab.ablations.variant_config import variant_config
    from albert_tf.models.parameters import count_parameters

    print(f"{spec.title or spec.name}: parameters of each variant's encoder at the "
          f"{spec.scale} scale (built model, pooler included, heads excluded)")
    print(f"{'variant':<28}{'parameters':>14}{'':>8}{'paper sizes':>14}{'paper':>8}")
    for variant in spec.variants:
        config = variant_config(spec, variant, model_dir="")
        count = count_parameters(config.model).total
        paper_sizes = paper_scale_parameters(spec, variant.name)
        print(f"{variant.name:<28}{count:>14,}{millions(count):>8}"
              f"{millions(paper_sizes):>14}{str(variant.paper.get('params', '–')):>8}")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_command("albert-experiment", _parser(), lambda args: _run(args, argv), argv,
                       _user_errors)


def _user_errors() -> tuple[type[Exception], ...]:
    from albert_tf.checkpoints.reading import CheckpointError
    from albert_tf.data.validation import DataError
    from albert_tf.text.options import DataPrepError

    return (DataPrepError, DataError, CheckpointError, OSError)


def _run(args, argv: list[str]) -> int:
    from albert_lab.ablations.table_spec import load_experiment

    if args.command == "downstream":
        return _downstream(args)
    if args.command == "probe":
        return _probe(args)
    if args.command == "check":
        return _check(args)
    if args.command == "summary":
        from albert_lab.ablations.summary import write_readme_block, write_summary
        print(write_summary(args.experiments_dir, args.results_root, args.scale,
                            args.against), end="")
        if args.readme:
            write_readme_block(args.readme, args.experiments_dir, args.results_root,
                               args.scale, args.against)
            print(f"albert-experiment: rewrote the {args.scale} headline rows in "
                  f"{args.readme}")
        return 0
    spec = load_experiment(args.experiment, args.scale, args.override)
    if args.command == "params":
        _print_parameters(spec)
        return 0
    folders = _folders(args, spec)
    if args.command == "report":
        from albert_lab.ablations.report import check_no_row_is_lost, write_report
        from albert_lab.ablations.runner import sync_records
        from albert_tf.io.owned_folder import FolderLock
        os.makedirs(folders.results_dir, exist_ok=True)
        with FolderLock(folders.results_dir, "albert-experiment"):
            sync_records(spec, folders)  # runs made on another machine, and records to keep
            check_no_row_is_lost(spec, folders)
            write_report(spec, folders, command="")
        return 0
    from albert_lab.ablations.runner import run_experiment
    from albert_lab.ablations.work_folder import experiment_folders
    command = "albert-experiment " + " ".join(shlex.quote(part) for part in argv)
    with experiment_folders(spec, folders):
        report = run_experiment(spec, folders, args.variants, command, not args.no_progress)
    waiting = [name for name in report["not_run"] if name not in report["cut"]]
    if waiting:
        print(f"albert-experiment: not run yet: {', '.join(waiting)}")
    return 0


def _downstream(args) -> int:
    from albert_lab.comparison.suite import downstream_markdown, run_downstream

    if not os.path.isdir(args.tasks_dir):
        return fail("albert-experiment downstream", f"--tasks_dir {args.tasks_dir}: no such "
                    f"folder (write tasks with `albert-data task --source NAME`)")
    report = run_downstream(args.run_dir, args.tasks_dir, args.seeds, args.override,
                            args.random_starts, args.random_records, args.max_seq_length)
    print(downstream_markdown(report))
    return 0


def _probe(args) -> int:
    from albert_lab.comparison.probe import probe_markdown, probe_run

    if not os.path.isdir(args.tasks_dir):
        return fail("albert-experiment probe", f"--tasks_dir {args.tasks_dir}: no such "
                    f"folder (write tasks with `albert-data task --source NAME`)")
    try:
        report = probe_run(args.run_dir, args.tasks_dir, args.seeds, args.tasks,
                           args.output_dir)
    except ValueError as error:
        return fail("albert-experiment probe", str(error))
    print(probe_markdown(report), end="")
    return 0


def _check(args) -> int:
    from albert_lab.comparison.check import CheckConfig, missing_task_note, run_downstream_check

    name = "albert-experiment check"
    if not os.path.isdir(args.task_dir):
        return fail(name, f"--task_dir: {missing_task_note(args.task_dir)}")
    try:
        check = run_downstream_check(args.run_dir, CheckConfig(
            args.task_dir, args.train_steps, args.seed, args.num_seeds))
    except ValueError as error:  # what albert-finetune reports (ConfigError too)
        return fail(name, str(error))
    print(f"albert-experiment: {check.summary()}")
    if check.warning():
        print(f"albert-experiment: {check.warning()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
