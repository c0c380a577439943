"""The lab's commands of `albert-data`: `corpus` and `task`, added through the entry points of
the group `albert_data.commands` (setup.cfg), so the writer's CLI knows nothing of them.

    albert-data corpus --source python-docs --output corpus/python-docs.txt
    albert-data task --source rotten-tomatoes --output tasks/rotten-tomatoes

Each function below adds its command's parser to `albert-data`'s subparsers and returns the
function that runs it.
"""

from __future__ import annotations


def corpus_command(commands):
    from albert_lab.corpora.local_corpus import SOURCES

    corpus = commands.add_parser("corpus", help="write an English corpus from text already "
                                 "on this machine (original input format)")
    corpus.add_argument("--source", choices=SOURCES, default="python-docs", metavar="SOURCE",
                        help="python-docs: Debian's python3.11-doc sources; stdlib-docstrings: "
                             "the docstrings of this Python's standard library; debian-prose: "
                             "every installed Debian source of docs/data.md, or one of them: "
                             f"{', '.join(n for n in SOURCES[2:-1] if n != 'debian-prose')}; "
                             "none: only the --task_text folders")
    corpus.add_argument("--output", required=True)
    corpus.add_argument("--max_mb", type=float, default=None, help="stop after this many MB")
    corpus.add_argument("--heldout_output", default=None,
                        help="also write a held-out set of whole documents here")
    corpus.add_argument("--heldout_every", type=int, default=20,
                        help="with --heldout_output: every n-th document is held out")
    corpus.add_argument("--task_text", action="append", default=[], metavar="TASK_DIR",
                        help="also take the training texts of this task folder (albert-data "
                             "task; labels, dev and test never read): task-adaptive "
                             "pretraining; repeatable")
    return _corpus


def _corpus(args) -> None:
    from albert_lab.corpora.local_corpus import make_corpus

    limit = int(args.max_mb * 1e6) if args.max_mb else None
    written = make_corpus(args.source, args.output, limit, args.heldout_output,
                          args.heldout_every if args.heldout_output else 0, args.task_text)
    print(f"wrote {written['documents']:,} documents, {written['bytes'] / 1e6:.1f} MB, from "
          f"{written['source']} to {written['path']}")
    if args.heldout_output:
        print(f"held out {written['heldout_documents']:,} documents to "
              f"{written['heldout_path']}")


def task_command(commands):
    from albert_lab.task_folders import DEFAULT_SEED, TASK_NAMES

    task = commands.add_parser("task", help="write a labelled task folder for albert-finetune "
                               "from data an installed package ships")
    task.add_argument("--source", choices=TASK_NAMES, required=True,
                      help="the task (docs/finetuning.md lists their packages)")
    task.add_argument("--output", required=True, help="the task folder to write")
    task.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the split's seed")
    return _task


def _task(args) -> None:
    from albert_lab.task_folders import summary_lines, write_task

    record = write_task(args.source, args.output, args.seed)
    for line in summary_lines(record):
        print(line)
    package = record["package"]
    print(f"wrote {args.output} from {package['name']} {package['version']} (albert-finetune "
          f"--task {record['albert_finetune']['task']}; source.json has the details)")
