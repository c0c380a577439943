"""`albert-data`: train-spm, build, inspect, and the commands other installed packages add
(the lab's `corpus` and `task`). Only flag parsing here; the work is elsewhere.

    albert-data train-spm --input 'corpus/*.txt' --model_prefix spm/albert --vocab_size 30000
    albert-data build --input 'corpus/*.txt.gz' --spm_model spm/albert.model \\
        --output_dir shards --max_seq_length 512 --dupe_factor 40 --num_workers 8
    albert-data inspect shards/train-00000-of-00064.tfrecord --count 3

A package adds a command through an entry point of the group `albert_data.commands`: its
name is the command's, and it loads a function that adds the command's parser to the
subparsers it is given and returns the function that runs it on the parsed arguments. The
lab (`albert_lab.data_commands`) adds `corpus` and `task` so.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import os
import sys

from albert_tf.io.console import add_verbose_flag, quiet_tensorflow
from albert_tf.io.owned_folder import FolderError
from albert_tf.text.options import (
    SENTENCE_OBJECTIVES,
    SINGLE_SENTENCE_CHUNKS,
    DataPrepError,
    DataPrepOptions,
)
from albert_tf.text.statistics import format_summary
from data_prep.inspect_shards import DEFAULT_MAX_EXAMPLES

_DEFAULTS = DataPrepOptions()


def _add_text_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lower_case", "--do_lower_case", dest="lower_case",
                        action=argparse.BooleanOptionalAction, default=_DEFAULTS.lower_case,
                        help="lower-case text before SentencePiece (default: yes)")
    parser.add_argument("--strict", action="store_true",
                        help="fail on invalid UTF-8, NUL bytes and over-long lines instead of "
                             "skipping and counting them")
    parser.add_argument("--max_line_chars", type=int, default=_DEFAULTS.max_line_chars,
                        help="skip longer lines as not being sentences")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="albert-data", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    _add_train_spm_command(commands)
    _add_build_command(commands)
    _add_inspect_command(commands)
    for name, run in (("train-spm", _train_spm), ("build", _build), ("inspect", _inspect)):
        commands.choices[name].set_defaults(run=run)
    _add_installed_commands(commands)
    for command in commands.choices.values():
        add_verbose_flag(command)
    return parser


COMMAND_GROUP = "albert_data.commands"


def _add_installed_commands(commands) -> None:
    """The commands installed packages add (entry points of `COMMAND_GROUP`), by name."""
    for entry in sorted(importlib.metadata.entry_points(group=COMMAND_GROUP),
                        key=lambda entry: entry.name):
        run = entry.load()(commands)
        commands.choices[entry.name].set_defaults(run=run)


def _add_train_spm_command(commands) -> None:
    spm = commands.add_parser("train-spm", help="train a SentencePiece model (ALBERT ids)")
    spm.add_argument("--input", nargs="+", required=True, help="text files or globs")
    spm.add_argument("--model_prefix", required=True, help="writes <prefix>.model/.vocab")
    spm.add_argument("--vocab_size", type=int, default=30000)
    spm.add_argument("--max_sentences", type=int, default=2_000_000,
                     help="train on a uniform sample of at most this many sentences")
    spm.add_argument("--character_coverage", type=float, default=0.99995)
    spm.add_argument("--seed", type=int, default=12345)
    spm.add_argument("--num_threads", type=int, default=os.cpu_count() or 1)
    _add_text_options(spm)


def _add_build_command(commands) -> None:
    build = commands.add_parser("build", help="text -> masked MLM + SOP/NSP TFRecord shards")
    build.add_argument("--input", nargs="*", default=[],
                       help="text files or globs (.gz read as gzip): one sentence per line, "
                            "a blank line between documents")
    build.add_argument("--tfds", action="append", default=[], metavar="NAME",
                       help="a prepared TFDS dataset to read too (repeatable)")
    build.add_argument("--tfds_split", default="train")
    build.add_argument("--tfds_text_field", default="text")
    build.add_argument("--tfds_data_dir", default=None)
    build.add_argument("--spm_model", required=True)
    build.add_argument("--output_dir", required=True)
    _add_recipe_options(build)
    build.add_argument("--num_workers", type=int, default=1)
    build.add_argument("--num_shards", type=int, default=0,
                       help="output shards (0: one per ~32 MB of input x dupe_factor, at least "
                            "one per worker; when resuming, the build's own count)")
    build.add_argument("--prefix", default="train", help="shard file name prefix")
    build.add_argument("--overwrite", action="store_true",
                       help="delete the files of the earlier build recorded in --output_dir "
                            "first (only those) instead of resuming it")
    build.add_argument("--no_progress", action="store_true")
    _add_text_options(build)


def _add_recipe_options(build: argparse.ArgumentParser) -> None:
    """The original script's flags, with its defaults (see DataPrepOptions), and the rest of
    the masking recipe (`albert_tf.config.masking.MaskingRecipe`)."""
    build.add_argument("--max_seq_length", type=int, default=_DEFAULTS.max_seq_length)
    build.add_argument("--dupe_factor", type=int, default=_DEFAULTS.dupe_factor)
    build.add_argument("--short_seq_prob", type=float, default=_DEFAULTS.short_seq_prob)
    build.add_argument("--masked_lm_prob", type=float, default=_DEFAULTS.masked_lm_prob)
    build.add_argument("--max_predictions_per_seq", type=int,
                       default=_DEFAULTS.max_predictions_per_seq)
    build.add_argument("--ngram", type=int, default=_DEFAULTS.ngram)
    build.add_argument("--favor_shorter_ngram", action=argparse.BooleanOptionalAction,
                       default=_DEFAULTS.favor_shorter_ngram)
    build.add_argument("--whole_word_mask", "--do_whole_word_mask", dest="whole_word_mask",
                       action=argparse.BooleanOptionalAction, default=_DEFAULTS.whole_word_mask)
    build.add_argument("--mask_token_rate", type=float, default=_DEFAULTS.mask_token_rate,
                       help="share of the masked pieces shown as [MASK] (default: 0.8)")
    build.add_argument("--random_token_rate", type=float, default=_DEFAULTS.random_token_rate,
                       help="share replaced by a random piece (default: 0.1); the rest keep "
                            "their piece")
    build.add_argument("--random_from_ordinary", action=argparse.BooleanOptionalAction,
                       default=_DEFAULTS.random_from_ordinary,
                       help="random pieces are never control, unknown or unused ones "
                            "(default: yes; --no-random_from_ordinary draws any id, as the "
                            "original)")
    build.add_argument("--sentence_objective", choices=SENTENCE_OBJECTIVES,
                       default=_DEFAULTS.sentence_objective)
    build.add_argument("--single_sentence_chunks", choices=SINGLE_SENTENCE_CHUNKS,
                       default=_DEFAULTS.single_sentence_chunks,
                       help="split: cut a one-sentence chunk into A and B (default); "
                            "random_next: the original script's way, B from another document "
                            "with label 1 even for SOP (to study the paper's numbers)")
    build.add_argument("--random_seed", type=int, default=_DEFAULTS.random_seed)


def _add_inspect_command(commands) -> None:
    show = commands.add_parser("inspect", help="decoded examples and statistics of a shard")
    show.add_argument("shard")
    show.add_argument("--count", type=int, default=3, help="examples to print")
    show.add_argument("--spm_model", default=None, help="default: the one in the manifest")
    show.add_argument("--max_seq_length", type=int, default=None,
                      help="default: from the manifest (give it for the original's files)")
    show.add_argument("--max_predictions_per_seq", type=int, default=None)
    show.add_argument("--max_examples", type=int, default=DEFAULT_MAX_EXAMPLES,
                      help="statistics over this many records from the start (default: "
                           "%(default)s)")
    show.add_argument("--all", action="store_true",
                      help="statistics over every record of the shard (with a progress bar)")
    show.add_argument("--no_progress", action="store_true")


def _options(args) -> DataPrepOptions:
    """The options of `build`'s flags: one flag a field, of the same name."""
    return DataPrepOptions(**{field.name: getattr(args, field.name)
                              for field in dataclasses.fields(DataPrepOptions)})


def _train_spm(args) -> None:
    from data_prep.pipeline import train_tokenizer

    options = DataPrepOptions(lower_case=args.lower_case, max_line_chars=args.max_line_chars,
                              strict=args.strict)
    path, report = train_tokenizer(args.input, args.model_prefix, args.vocab_size, options,
                                   args.max_sentences, args.seed, args.character_coverage,
                                   args.num_threads)
    _print_problems(report.counts, report.messages)
    print(f"wrote {path} and {args.model_prefix}.vocab ({args.vocab_size} pieces)")


def _build(args) -> None:
    from data_prep.pipeline import build_shards, make_plan
    from data_prep.tfds_source import tfds_split

    tfds_sources = [tfds_split(name, args.tfds_split, args.tfds_text_field, args.tfds_data_dir)
                    for name in args.tfds]
    plan = make_plan(args.input, args.output_dir, args.spm_model, _options(args),
                     args.num_shards, tfds_sources, args.prefix, args.num_workers,
                     resume=not args.overwrite)
    if plan.num_shards < args.num_workers:
        print(f"albert-data: note: {_count(plan.num_shards, 'shard')} for "
              f"{args.num_workers} workers: a worker builds whole shards, so only "
              f"{plan.num_shards} can work (--num_shards 0 makes at least one per worker)",
              file=sys.stderr)
    manifest = build_shards(plan, args.num_workers, args.overwrite, not args.no_progress)
    statistics = manifest["statistics"]
    _print_problems(statistics["input_problems"], statistics["input_messages"])
    print(f"wrote {_count(manifest['total_examples'], 'example')} in "
          f"{_count(plan.num_shards, 'shard')} to {plan.output_dir} (manifest.json has "
          f"the details)")
    print(format_summary({"examples": manifest["total_examples"], **statistics["summary"]},
                         args.sentence_objective))


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _print_problems(counts: dict, messages: list) -> None:
    for message in messages:
        print(f"albert-data: warning: {message}", file=sys.stderr)
    if counts:
        summary = ", ".join(f"{kind}: {count:,}" for kind, count in sorted(counts.items()))
        print(f"albert-data: input problems (see the first of each above): {summary}",
              file=sys.stderr)


def _inspect(args) -> None:
    from data_prep.inspect_shards import inspect_shard
    if args.max_examples < 1:
        raise DataPrepError(f"option max_examples must be >= 1, got {args.max_examples}")
    report = inspect_shard(args.shard, args.count, args.spm_model, args.max_seq_length,
                           args.max_predictions_per_seq,
                           None if args.all else args.max_examples, not args.no_progress)
    try:
        for block in report:
            print(block, flush=True)
    except ValueError as error:
        raise DataPrepError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        with quiet_tensorflow(args.verbose):
            args.run(args)
    except (DataPrepError, FolderError) as error:
        print(f"albert-data {args.command}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
