"""Every benchmark in one run: one JSON per machine, a markdown summary, the targets checked.

    python -m albert_lab.benchmarks.run_all             # the full suite, over an hour on 2 cores
    python -m albert_lab.benchmarks.run_all --quick     # small settings, a smoke run of minutes
    python -m albert_lab.benchmarks.run_all --only train_step profile_step
    python -m albert_lab.benchmarks.run_all --strategy tpu --tpu my-tpu   # train steps on a TPU
    python -m albert_lab.benchmarks.run_all --resume    # after a crash: skips finished ones
    python -m albert_lab.benchmarks.run_all --resume --only data_prep   # one again, keep the rest

Each benchmark is its own script (run alone, each prints its table and documents its method)
and runs here as its own process, so one's memory does not count against the next and its
peak RSS (the largest process of its tree, from `wait4`) is its own. The suite writes
`benchmarks/results/<machine>.json` (every benchmark's full JSON, its command, minutes and
peak RSS, the device, the targets) after each benchmark, atomically, and at the end
`benchmarks/results/<machine>.md`: the targets (met, or missed by how much and what the
profile shows), then a table per benchmark. `--quick` writes `<machine>-quick.*` instead.

The train steps take `--strategy`/`--tpu` (the device: the default strategy runs on the GPU
when there is one, else the CPU); the device, and the mixed-precision policy it runs fast
(bf16 on TPUs, recent GPUs and CPUs with AVX512-BF16 or AMX, fp16 on older tensor-core
GPUs: `albert_tf.config.precision.device_policy`), are recorded; the `precision_*` runs time
both precisions per model size, plain and with XLA.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile
import time

from albert_lab.benchmarks.common import RESULTS, machine
from albert_lab.benchmarks.summary import evaluate_targets, summary_markdown
from albert_lab.result_files import write_result
from albert_tf.config.precision import CPU_BFLOAT16_FLAGS
from albert_tf.io.machine import cpu_flags

PACKAGE = "albert_lab.benchmarks"  # where the suite's modules are


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """One module of the suite (`PACKAGE.<module>`) with its arguments for the
    full and the quick run (None: not in the quick run); `on_strategy`: it takes
    `--strategy`/`--tpu`."""

    name: str
    module: str
    full: tuple[str, ...]
    quick: tuple[str, ...] | None
    on_strategy: bool = False


SUITE = (
    # 16 copies of the corpus: a build of half a minute, so a worker's start (0.4 s) counts
    # about as little as in a real build of hours.
    Benchmark("data_prep", "data_build", ("--copies", "16", "--num_shards", "32"),
              ("--copies", "1", "--num_shards", "4", "--vocab_size", "4000")),
    Benchmark("train_step", "train_step",
              ("--models", "tiny", "albert_base", "bert_base"),
              ("--models", "tiny", "--steps", "5", "--executions", "1"), on_strategy=True),
    Benchmark("train_step_large", "train_step",
              ("--models", "albert_large", "bert_large", "--implementations", "albert_tf",
               "--modes", "xla", "--steps", "2", "--executions", "2"), None, on_strategy=True),
    # Float32 against bfloat16 by model size, in three runs of under 10 minutes each.
    Benchmark("precision_small", "precision_choice",
              ("--sizes", "tiny", "small_h64", "small_h128", "small_h256"),
              ("--sizes", "tiny", "--steps", "2", "--executions", "1")),
    Benchmark("precision_base", "precision_choice", ("--sizes", "h384", "h512", "albert_base"),
              None),
    Benchmark("precision_large", "precision_choice",
              ("--sizes", "albert_large", "--steps", "2", "--executions", "2"), None),
    Benchmark("profile_step", "profile_step", (),
              ("--model", "tiny", "--batch_size", "16", "--steps", "2")),
    Benchmark("encoder_step", "encoder_step", (),
              ("--presets", "tiny", "--steps", "3", "--warmup", "1")),
    Benchmark("serving", "serving", (),
              ("--presets", "tiny", "--requests", "tiny:1=20,32=5")),
    Benchmark("finetune", "finetune", (),
              ("--presets", "tiny", "--pairs", "2000", "--questions", "500", "--steps", "2")),
    Benchmark("convert", "convert", (), ("--presets", "tiny")),
    Benchmark("small_model_step", "small_model_step", (),
              ("--variants", "trainer", "plain", "--executions", "1")),
    Benchmark("fine_tune_workers", "fine_tune_workers", (),
              ("--runs", "2", "--steps", "20")),
    Benchmark("accumulation", "accumulation", ("--xla",),
              ("--model", "tiny", "--batch_size", "64", "--steps", "3", "--executions", "1")),
)


def command_for(benchmark: Benchmark, args, output: str) -> list[str]:
    arguments = benchmark.quick if args.quick else benchmark.full
    command = [sys.executable, "-m", f"{PACKAGE}.{benchmark.module}", *arguments, "--output",
               output]
    if benchmark.on_strategy:
        command += ["--strategy", args.strategy] + (["--tpu", args.tpu] if args.tpu else [])
    return command


def run_benchmark(command: list[str], name: str) -> dict:
    """Runs `command`, echoing its output line by line; returns its exit code, minutes, peak
    RSS of its process tree, the last lines it printed, when it finished and the bfloat16
    flags of the CPU it ran on (a resumed suite's benchmarks may come from different days
    and machines)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    tail: list[str] = []
    for line in process.stdout:
        print(f"[{name}] {line}", end="", flush=True)
        tail = (tail + [line.rstrip()])[-30:]
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return {"command": shlex.join(command), "returncode": process.returncode,
            "wall_seconds": time.perf_counter() - start,
            "peak_rss_mib": usage.ru_maxrss / 1024,  # KiB on Linux; the tree's largest
            "finished": datetime.datetime.now().isoformat(timespec="seconds"),
            "cpu_bfloat16_flags": sorted(cpu_flags() & set(CPU_BFLOAT16_FLAGS)),
            "output_tail": tail if process.returncode else tail[-3:]}


def device_of(run: dict) -> dict:
    for name in ("precision_small", "precision_base", "precision_large", "train_step",
                 "train_step_large"):
        result = run["benchmarks"].get(name, {}).get("result")
        if result:
            return {key: result.get(key) for key in ("device", "device_name", "replicas",
                                                     "cpu_bfloat16_flags", "mixed_precision",
                                                     "mixed_precision_reason")}
    return {}


def write_summary(run: dict, json_path: pathlib.Path) -> None:
    """Checks the targets against `run`'s results, writes the JSON and the markdown beside
    it."""
    run["targets"] = evaluate_targets({name: entry.get("result")
                                       for name, entry in run["benchmarks"].items()})
    page = summary_markdown(run)
    write_result(json_path, run, page=page)
    print(f"\n{page}\nwrote {json_path} and {json_path.with_suffix('.md')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small settings (a smoke run)")
    parser.add_argument("--only", nargs="+", choices=[b.name for b in SUITE],
                        help="run these benchmarks only")
    parser.add_argument("--strategy", default="default",
                        help="for the train steps: default, cpu, mirrored, tpu")
    parser.add_argument("--tpu", default="", help="with --strategy tpu: its name or address")
    parser.add_argument("--machine", default=machine()["host"],
                        help="names the result files (default: the host name)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the benchmarks a previous run of this machine finished")
    parser.add_argument("--results", default=str(RESULTS), help="folder of the result files")
    parser.add_argument("--summarize", action="store_true",
                        help="run nothing: check the targets and write the summary again "
                             "from the machine's JSON")
    args = parser.parse_args()
    stem = pathlib.Path(args.results) / (args.machine + ("-quick" if args.quick else ""))
    json_path = stem.with_suffix(".json")
    if args.summarize:
        write_summary(json.loads(json_path.read_text()), json_path)
        return
    suite = [b for b in SUITE if (not args.only or b.name in args.only)
             and (b.quick is not None or not args.quick)]
    run = {"machine": machine(), "quick": args.quick,
           "command": shlex.join(["python", "-m", f"{PACKAGE}.run_all", *sys.argv[1:]]),
           "started": datetime.datetime.now().isoformat(timespec="seconds"),
           "benchmarks": {}}
    if args.resume and json_path.exists():
        # Keeps what finished before, except the benchmarks --only names: those run again.
        previous = json.loads(json_path.read_text())
        run["benchmarks"] = {name: entry for name, entry in previous["benchmarks"].items()
                             if entry["returncode"] == 0 and name not in (args.only or ())}
        run.update(started=previous["started"], resumed=run["started"])
        print(f"resuming: {', '.join(run['benchmarks']) or 'nothing'} finished before")
    with tempfile.TemporaryDirectory(prefix="albert-benchmarks-") as folder:
        for benchmark in suite:
            if benchmark.name in run["benchmarks"]:
                continue
            output = os.path.join(folder, f"{benchmark.name}.json")
            print(f"\n=== {benchmark.name}", flush=True)
            entry = run_benchmark(command_for(benchmark, args, output), benchmark.name)
            if entry["returncode"] == 0 and os.path.exists(output):
                entry["result"] = json.loads(pathlib.Path(output).read_text())
            run["benchmarks"][benchmark.name] = entry
            write_result(json_path, {**run, "complete": False})
    run.update(wall_seconds=sum(entry["wall_seconds"] for entry in run["benchmarks"].values()),
               device=device_of(run), complete=True)
    run["tensorflow"] = next((entry["result"].get("tensorflow")
                              for entry in run["benchmarks"].values()
                              if entry.get("result", {}).get("tensorflow")), None)
    write_summary(run, json_path)
    failed = [name for name, entry in run["benchmarks"].items() if entry["returncode"]]
    if failed:
        sys.exit(f"failed: {', '.join(failed)} (their output is in {json_path})")


if __name__ == "__main__":
    main()
