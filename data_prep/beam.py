"""The build as an Apache Beam pipeline (extra `[beam]`), for corpora beyond one machine.

It runs the same plan and the same `ShardBuilder` as `albert-data build`: the shard indices
are distributed over Beam workers (after a Reshuffle, so a runner spreads them), each worker
loads the tokenizer once (`DoFn.setup`) and builds, writes and marks complete whole shards.
Since a shard is a pure function of the plan, the files are byte-identical to the
multiprocessing path's, complete shards are skipped on a rerun, and a retried bundle
rewrites the same bytes. A worker killed in the middle of a shard leaves at most a temporary
file (shards are renamed into place whole, then marked complete by their sidecar): the
runner's retry or a rerun builds that shard again, and the launching process, which holds the
folder for the whole pipeline, deletes such temporaries once it has finished. It then writes
the manifest. (When a pipeline fails, a task already running on another worker goes on to the
end of its shard, since a runner cannot stop it: a temporary it leaves after that is deleted
when the next run starts, and the shard it renames into place is whole.)

Runners tried here: the DirectRunner (in one process, or with `--direct_running_mode=
multi_processing --direct_num_workers=N`) and Dask's (`--runner=apache_beam.runners.dask.
dask_runner.DaskRunner`, extra `[beam]`; a `distributed.LocalCluster` of its own, or the
cluster at `--dask_client_address`); see docs/data.md for Dataflow, Flink and Spark.

Inputs, tokenizer and output folder may be local (for the DirectRunner, or a filesystem every
worker mounts) or on any filesystem TensorFlow reaches (`gs://` on Dataflow, `hdfs://`), see
`albert_tf.io.files`.

    python -m data_prep.beam --input 'gs://bucket/corpus/*.txt' --spm_model gs://bucket/spm.model \\
        --output_dir gs://bucket/shards --num_shards 1024 -- --runner=DataflowRunner ...
"""

from __future__ import annotations

import sys
from typing import Sequence

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from albert_tf.io import files
from albert_tf.io.owned_folder import FolderError
from albert_tf.text.options import DataPrepError
from data_prep import manifest as manifest_files
from data_prep.pipeline import build_and_record_shard, shard_builder_for


class BuildShard(beam.DoFn):
    """Builds, writes and marks complete the shard of each index it is given."""

    def __init__(self, plan: manifest_files.BuildPlan):
        super().__init__()
        self.plan = plan
        self.builder = None

    def setup(self):
        self.builder = shard_builder_for(self.plan)

    def process(self, index: int):
        yield index, build_and_record_shard(self.plan, self.builder, index)


def build_with_beam(plan: manifest_files.BuildPlan,
                    pipeline_options: PipelineOptions | None = None) -> dict:
    """Builds the incomplete shards of `plan` on Beam; returns the manifest."""
    with manifest_files.owned_output(plan):  # the launching process holds the folder
        manifest_files.start_build(plan)
        files.remove_stale_temporaries(plan.output_dir)
        todo = manifest_files.incomplete_shards(plan)
        if todo:
            options = _one_task_per_shard(pipeline_options or PipelineOptions(), len(todo))
            try:
                with beam.Pipeline(options=options) as pipeline:
                    _ = (pipeline
                         | "ShardIndices" >> beam.Create(todo)
                         | "Spread" >> beam.Reshuffle()
                         | "BuildShards" >> beam.ParDo(BuildShard(plan)))
            finally:
                # Workers killed in the middle of a shard leave their temporaries behind.
                files.remove_stale_temporaries(plan.output_dir)
        return manifest_files.finish_build(plan)


def _one_task_per_shard(options: PipelineOptions, shards: int) -> PipelineOptions:
    """`options`, with one Dask task per shard when the runner is Dask's and the partitioning
    is not given: that runner puts up to 128 elements in one task and keeps `Reshuffle` as a
    no-op, so otherwise one worker would build every shard in turn."""
    runner = options.view_as(StandardOptions).runner
    name = runner if isinstance(runner, str) else type(runner).__name__
    if not (name or "").endswith("DaskRunner"):
        return options
    from apache_beam.runners.dask.dask_runner import DaskOptions
    dask_options = options.view_as(DaskOptions)
    if dask_options.npartitions is None and dask_options.partition_size is None:
        dask_options.npartitions = shards
    return options


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m data_prep.beam <build flags> -- <Beam pipeline flags>`."""
    from data_prep.cli import _options, _parser
    from data_prep.pipeline import make_plan

    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = _parser().parse_args(["build", *argv[:split]])
    try:
        plan = make_plan(args.input, args.output_dir, args.spm_model, _options(args),
                         args.num_shards, (), args.prefix)
        manifest = build_with_beam(plan, PipelineOptions(argv[split + 1:]))
    except (DataPrepError, FolderError) as error:
        print(f"data_prep.beam: error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {manifest['total_examples']:,} examples in {plan.num_shards} shards to "
          f"{plan.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
