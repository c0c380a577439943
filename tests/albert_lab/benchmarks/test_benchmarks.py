"""The benchmark suite's own logic: target checks, trace reading, device policy, Table 3
ratios and the entry point's bookkeeping (on fake benchmarks; the real ones take minutes)."""

from __future__ import annotations

import importlib
import json
import random
import sys

import numpy as np
import pytest
import tensorflow as tf
import tf_keras


@pytest.fixture(scope="module")
def bench():
    """The benchmark modules, by name."""
    return {name: importlib.import_module(f"albert_lab.benchmarks.{name}")
            for name in ("common", "summary", "trace_analysis", "run_all", "train_step",
                         "table_cost")}


def data_prep_result(per_worker: list[float]) -> dict:
    return {"rows": [{"workers": index + 1, "examples": 1000, "seconds": 1.0,
                      "examples_per_second": rate * (index + 1),
                      "examples_per_second_per_worker": rate,
                      "times_original_per_worker": rate / 400, "peak_rss_mib": 90.0}
                     for index, rate in enumerate(per_worker)],
            "microseconds_per_example_by_stage": {"masking": 20.0}}


def profile_result() -> dict:
    return {"modes": [{"xla": False, "profiled_step_seconds": 4.0, "op_ms_per_step": 4000.0,
                       "unattributed_ms_per_step": 40.0, "matmul_share": 0.8,
                       "by_type": [{"name": "MatMul", "ms_per_step": 3000, "share": 0.75,
                                    "matmul": True},
                                   {"name": "Mul", "ms_per_step": 400, "share": 0.1,
                                    "matmul": False},
                                   {"name": "AddV2", "ms_per_step": 80, "share": 0.02,
                                    "matmul": False}],
                       "by_site": []}]}


def test_targets_met_and_missed_by_how_much(bench):
    summary = bench["summary"]
    train = {"targets_albert_base": {"speedup_over_model_garden_xla": 1.26,
                                     "speedup_over_fastest_model_garden": 1.14, "mfu": 0.82},
             "rows": [{**step_row("albert_base", 5.0, "model_garden"), "mfu": 0.65}]}
    targets = summary.evaluate_targets({"data_prep": data_prep_result([10_000, 9_000]),
                                        "train_step": train,
                                        "profile_step": profile_result()})
    by_name = {t["target"]: t for t in targets}
    one, two = by_name["data prep, 1 worker(s)"], by_name["data prep, 2 worker(s)"]
    assert one["met"] and one["measured"] == pytest.approx(25.0)
    assert not two["met"] and two["measured"] == pytest.approx(22.5)
    assert two["missed_by"] == "10.0% short"
    xla = by_name["albert_base XLA train step vs Model Garden AlbertEncoder (XLA)"]
    fastest = by_name["albert_base XLA train step vs Model Garden's fastest mode"]
    assert xla["met"] and xla["margin"] == pytest.approx(0.05)
    assert not fastest["met"] and fastest["missed_by"] == "5.0% short"
    assert "80% of the op time in matmuls" in fastest["why"] and "Mul 10%" in fastest["why"]
    assert "2 workers run at 90% of one worker's rate each" in two["why"]
    assert by_name["albert_base XLA train step MFU"]["met"]
    assert "Model Garden's XLA step at 65%, so 1.2x would need ours at 78%" in fastest["why"]
    table = summary.targets_table(targets)
    assert "| 82.0% | yes |" in table and "no: 5.0% short" in table


def test_summary_lists_every_benchmark_and_its_failures(bench):
    summary = bench["summary"]
    run = {"machine": {"host": "box", "cpu": "cpu", "logical_cpus": 2}, "started": "now",
           "wall_seconds": 120.0, "command": "run_all.py", "tensorflow": "2.20.0",
           "device": {"device": "CPU", "device_name": "cpu", "mixed_precision": None,
                      "mixed_precision_reason": "no bf16"},
           "benchmarks": {
               "data_prep": {"returncode": 0, "wall_seconds": 60, "peak_rss_mib": 90,
                             "result": data_prep_result([12_000])},
               "serving": {"returncode": 1, "wall_seconds": 60, "peak_rss_mib": 500}},
           "targets": summary.evaluate_targets({"data_prep": data_prep_result([12_000])})}
    text = summary.summary_markdown(run)
    assert "| serving | failed (1) | 1.0 | 500 | not recorded (an earlier suite run) |" in text
    run["benchmarks"]["serving"].update(finished="2026-12-05T04:00:00", cpu_bfloat16_flags=[])
    run["benchmarks"]["data_prep"].update(finished="2026-12-05T04:01:00",
                                          cpu_bfloat16_flags=["avx512_bf16"])
    text = summary.summary_markdown(run)
    assert "| 500 | 2026-12-05T04:00:00 (none) |" in text
    assert "| 90 | 2026-12-05T04:01:00 (avx512_bf16) |" in text
    assert "## Data prep" in text and "| 1 | 1,000 | 1.00 | 12,000 | 12,000 | 30.0 | 90 |" in text
    assert "## Serving" not in text  # no result to show


def test_self_time_subtracts_nested_events(bench):
    totals = __import__("collections").Counter()
    events = [(0, 10, "step"), (2, 5, "op_a"), (3, 4, "op_b"), (6, 8, "op_a"), (12, 15, "c")]
    bench["trace_analysis"].add_self_times(events, totals)
    assert totals == {"step": 5, "op_a": 4, "op_b": 1, "c": 3}


@pytest.mark.parametrize("name, kind, site", [
    ("while/body/_1/gradient_tape/while/m/group_0_inner_1_ffn/output/Tensordot_7/MatMul:MatMul",
     "MatMul", "grad/m/group_inner_ffn/output/Tensordot/MatMul:MatMul"),
    ("bitcast_concatenate_fusion.7.clone", "bitcast_concatenate_fusion", None),
    ("reduce-window.2", "reduce-window", None),
    ("ExecutorState::Process", "<ExecutorState::Process>", None),
])
def test_op_type_and_site(bench, name, kind, site):
    analysis = bench["trace_analysis"]
    assert analysis.op_type(name) == kind
    if site:
        assert analysis.op_site(name) == site


@pytest.mark.parametrize("kind, expected", [
    ("MatMul", True), ("BatchMatMulV3", True), ("_FusedMatMul", True), ("Einsum", True),
    ("_MklMatMul", True), ("_MklNativeFusedMatMul", True), ("_MklBatchMatMulV2", True),
    ("dot", True), ("MatrixInverse", False), ("Mul", False), ("dot-fusion", False),
])
def test_matmul_types_include_the_onednn_rewrites(bench, kind, expected):
    assert bench["trace_analysis"].is_matmul(kind) is expected


def test_profiler_trace_is_read_back_with_the_matmul_in_it(bench, tmp_path):
    analysis = bench["trace_analysis"]
    a = tf.random.normal((256, 256), seed=1)

    @tf.function
    def work(x):
        return tf.reduce_sum(tf.matmul(x, x) * 2.0)

    work(a).numpy()
    tf.profiler.experimental.start(str(tmp_path))
    for _ in range(3):
        work(a).numpy()
    tf.profiler.experimental.stop()
    result = analysis.breakdown(analysis.self_times(analysis.read_space(str(tmp_path))),
                                steps=3, top=10)
    # oneDNN renames the op (_MklMatMul) on CPUs where it is on; either way it is the matmul.
    matmuls = [row for row in result["by_type"] if row["name"] in ("MatMul", "_MklMatMul")]
    assert len(matmuls) == 1 and matmuls[0]["matmul"] and matmuls[0]["ms_per_step"] > 0
    assert 0 < result["matmul_share"] <= 1
    assert sum(row["share"] for row in result["by_type"]) == pytest.approx(1, abs=0.01)
    with pytest.raises(FileNotFoundError, match="no .*xplane.pb"):
        analysis.read_space(str(tmp_path / "empty"))


def test_device_info_on_this_machine(bench):
    info = bench["common"].device_info(tf.distribute.get_strategy())
    assert info["device"] in ("CPU", "GPU", "TPU") and info["replicas"] == 1
    assert info["mixed_precision_reason"]


def step_row(model, seconds, implementation="albert_tf", xla=True, batch_size=8):
    return {"model": model, "implementation": implementation, "xla": xla,
            "precision": "float32", "batch_size": batch_size, "step_seconds": seconds}


def test_table3_ratio_is_bert_over_albert_step_time(bench):
    train_step = bench["train_step"]
    rows = [step_row("albert_base", 2.0), step_row("bert_base", 2.5),
            step_row("albert_base", 3.0, xla=False), step_row("albert_large", 5.0),
            step_row("bert_large", 6.0, batch_size=4)]
    ratios = train_step.table3_ratios(rows)
    assert len(ratios) == 1  # plain base has no BERT row; large batches differ
    assert ratios[0]["albert_over_bert_speedup"] == pytest.approx(1.25)
    assert ratios[0]["paper_albert_over_bert_speedup"] == pytest.approx(21.1 / 17.7)


def test_speedups_compare_the_same_mode_and_the_fastest(bench):
    train_step = bench["train_step"]
    rows = [step_row("albert_base", 4.0), step_row("albert_base", 5.0, "model_garden"),
            step_row("albert_base", 4.6, "model_garden", xla=False)]
    for row in rows:
        row["mfu"] = 0.8
    rows.append(step_row("bert_base", 4.2))
    train_step.add_speedups(rows)
    assert "speedup_over_model_garden" not in rows[-1]  # Model Garden has no BERT preset here
    assert rows[0]["speedup_over_model_garden"] == pytest.approx(1.25)
    assert rows[0]["speedup_over_fastest_model_garden"] == pytest.approx(1.15)
    assert train_step.target_summary(rows)["met"] is False


FAKE_BENCHMARK = """
import argparse, json, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--output")
parser.add_argument("--value", type=float)
args = parser.parse_args()
print("measuring")
if os.environ.get("FAKE_FAIL") == "yes":
    sys.exit("broken on purpose")
with open(args.output, "w") as file:
    json.dump({"benchmark": "fake", "value": args.value}, file)
"""


def test_run_all_collects_results_and_resumes(bench, tmp_path, monkeypatch, capsys):
    run_all = bench["run_all"]
    package = tmp_path / "fake_benchmarks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "fake.py").write_text(FAKE_BENCHMARK)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(run_all, "PACKAGE", "fake_benchmarks")
    monkeypatch.setattr(run_all, "SUITE", (
        run_all.Benchmark("first", "fake", ("--value", "1"), ("--value", "0.5")),
        run_all.Benchmark("second", "fake", ("--value", "2"), None)))
    results = tmp_path / "results"
    arguments = ["run_all.py", "--machine", "box", "--results", str(results)]

    monkeypatch.setenv("FAKE_FAIL", "yes")
    monkeypatch.setattr(sys, "argv", arguments)
    with pytest.raises(SystemExit, match="failed: first, second"):
        run_all.main()
    failed = json.loads((results / "box.json").read_text())
    assert failed["benchmarks"]["first"]["returncode"] == 1
    assert "broken on purpose" in failed["benchmarks"]["first"]["output_tail"][-1]

    monkeypatch.setenv("FAKE_FAIL", "no")
    monkeypatch.setattr(run_all, "cpu_flags", lambda: {"avx2", "avx512_bf16"})
    run_all.main()
    run = json.loads((results / "box.json").read_text())
    assert run["complete"] and run["benchmarks"]["second"]["result"]["value"] == 2
    assert run["benchmarks"]["first"]["peak_rss_mib"] > 1
    assert run["benchmarks"]["first"]["cpu_bfloat16_flags"] == ["avx512_bf16"]  # made up
    assert run["benchmarks"]["first"]["finished"].startswith("20")
    assert "| first | ok |" in (results / "box.md").read_text()

    monkeypatch.setattr(sys, "argv", arguments + ["--resume", "--quick"])
    run_all.main()  # the quick run has its own files; nothing of it finished before
    quick = json.loads((results / "box-quick.json").read_text())
    assert list(quick["benchmarks"]) == ["first"]
    assert quick["benchmarks"]["first"]["result"]["value"] == 0.5

    monkeypatch.setenv("FAKE_FAIL", "yes")  # would fail if it ran again
    monkeypatch.setattr(sys, "argv", arguments + ["--resume"])
    run_all.main()
    assert "resuming: first, second finished before" in capsys.readouterr().out

    monkeypatch.setattr(sys, "argv", arguments + ["--summarize"])
    (results / "box.md").unlink()
    run_all.main()  # runs nothing (FAKE_FAIL is still set) and writes the summary again
    assert "| first | ok |" in (results / "box.md").read_text()

    monkeypatch.setenv("FAKE_FAIL", "no")
    monkeypatch.setattr(run_all, "SUITE", (
        run_all.Benchmark("first", "fake", ("--value", "3"), None),
        run_all.Benchmark("second", "fake", ("--value", "4"), None)))
    monkeypatch.setattr(sys, "argv", arguments + ["--resume", "--only", "second"])
    run_all.main()  # measures `second` again and keeps `first` from before
    again = json.loads((results / "box.json").read_text())
    assert again["benchmarks"]["first"]["result"]["value"] == 1
    assert again["benchmarks"]["second"]["result"]["value"] == 4


def test_presets_of_one_size_are_timed_together(bench):
    groups = bench["train_step"].size_groups(["tiny", "albert_base", "albert_large",
                                              "bert_base", "bert_large"])
    assert groups == [["tiny"], ["albert_base", "bert_base"], ["albert_large", "bert_large"]]


@pytest.fixture
def seeds_put_back():
    """`compiled_trainer` seeds Python, numpy and TensorFlow (tf_keras.utils.set_random_seed);
    later tests (shuffled pipelines) must see the seeds they would have seen without it."""
    from tensorflow.python.eager import context

    python_state, numpy_state = random.getstate(), np.random.get_state()
    global_seed = context.global_seed()
    yield
    random.setstate(python_state)
    np.random.set_state(numpy_state)
    tf.random.set_seed(global_seed)


@pytest.mark.parametrize("implementation", ["albert_tf", "model_garden"])
def test_both_trainers_take_a_mixed_precision_step(bench, implementation, seeds_put_back):
    """The path a bf16 device takes: each benchmarked trainer builds and trains under the
    mixed_bfloat16 policy (emulated, so slowly, on a CPU) with float32 losses."""
    train_step = bench["train_step"]
    from albert_tf.config.presets import load_preset

    config = load_preset("tiny")
    batch = train_step.random_pretraining_batch(config, batch_size=2, seq_length=16,
                                                num_predictions=3)
    model = train_step.compiled_trainer(implementation, config, batch, jit_compile=False,
                                        steps=1, precision="mixed_bfloat16")
    outputs = model(batch, training=False)
    assert outputs["mlm_logits"].dtype == tf.float32
    history = model.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=1,
                        steps_per_epoch=1, verbose=0).history
    assert all(np.isfinite(values[-1]) for values in history.values())
    assert tf_keras.mixed_precision.global_policy().name == "float32"  # put back


class FixedClock:
    """Step times without timing: 0.1 s per pretraining step, 0.05 s per fine-tuning step."""

    def pretraining_step(self, config, objective):
        return 0.1

    def fine_tuning_step(self, model_config, batch_size, seq_length):
        assert (batch_size, seq_length) == (32, 64)
        return 0.05


def test_a_tables_cost_is_its_steps_times_their_times_and_random_starts_count_once(
        bench, tmp_path):
    import yaml
    from experiment_tables import micro_table_document

    document = micro_table_document(tmp_path, steps=20, downstream=[
        {"source": "bbc-news", "recipe": "small_model_v2", "seeds": [1, 2]},
        {"source": "lee-pairs", "recipe": "small_model_v2", "seeds": [1, 2, 3],
         "overrides": ["train.train_steps=300"]}])
    document["scales"]["micro"]["evaluation"]["random_start"] = True
    path = tmp_path / "micro.yaml"
    path.write_text(yaml.safe_dump(document))
    seen: set = set()
    cost = bench["table_cost"].table_cost(str(path), "micro", FixedClock(), seen, False)
    assert [plan["train_steps"] for plan in cost["downstream"]] == [600, 300]
    fine_tunes = (2 * 600 + 3 * 300) * 0.05 / 3600  # one start's fine-tunes, in hours
    row = cost["variants"][0]
    assert row["pretraining_hours"] == pytest.approx(20 * 0.1 / 3600)
    assert row["fine_tunes"] == 5 and row["fine_tuning_hours"] == pytest.approx(fine_tunes)
    assert cost["hours"] == pytest.approx(2 * (20 * 0.1 / 3600 + fine_tunes) + fine_tunes)
    again = bench["table_cost"].table_cost(str(path), "micro", FixedClock(), seen, False)
    assert again["random_start"]["shared_with_an_earlier_table"]
    assert all(row["shared_with_an_earlier_table"] for row in again["variants"])
    assert again["hours"] == 0.0  # the same variants and random start: all copied
    assert "| random start |" in bench["table_cost"].markdown(again)
    document["scales"]["micro"]["cut_variants"] = {"nsp": "over the budget"}
    path.write_text(yaml.safe_dump(document))
    cut = bench["table_cost"].table_cost(str(path), "micro", FixedClock(), set(), False)
    assert cut["hours"] == pytest.approx(20 * 0.1 / 3600 + 2 * fine_tunes)
    assert cut["cut_hours"] == pytest.approx(20 * 0.1 / 3600 + fine_tunes)
    assert "cut: over the budget" in bench["table_cost"].markdown(cut)
    # A task given as a folder: its fine-tuning task is the one its source.json names.
    folder = tmp_path / "sentiment"
    folder.mkdir()
    (folder / "source.json").write_text(json.dumps({"albert_finetune": {"task": "sst2"}}))
    from albert_lab.ablations.table_spec import DownstreamSpec
    plan = bench["table_cost"].fine_tune_plan(
        DownstreamSpec(data_dir=str(folder), recipe="small_model_v3"), 64)
    assert (plan["train_steps"], plan["early_stopping"]) == (2400, True)


def precision_size(hidden_size, milliseconds):
    """A size of `precision_choice.py`'s result: ms/step of (plain float32, plain bf16, XLA
    float32, XLA bf16)."""
    variants = [(False, "float32"), (False, "mixed_bfloat16"), (True, "float32"),
                (True, "mixed_bfloat16")]
    return {"hidden_size": hidden_size, "num_layers": 4, "batch_size": 8,
            "feed_forward_matmul_gflops": {"float32": 150.0, "bfloat16": 300.0},
            "rows": [{"xla": xla, "precision": precision, "step_seconds": ms / 1e3, "mfu": 0.5}
                     for (xla, precision), ms in zip(variants, milliseconds)]}


def test_the_precision_table_shows_each_variant_and_bfloat16s_speed_up(bench):
    sizes = {"tiny": precision_size(32, [80, 120, 90, 130]),
             "albert_base": precision_size(768, [3000, 1600, 3100, 3300])}
    table = bench["summary"].precision_choice_table({"cpu_bfloat16_flags": ["avx512_bf16"],
                                                     "sizes": sizes})
    lines = table.splitlines()
    assert lines[2] == ("| tiny | 32 x 4 | 8 | 80 (50%) | 120 (50%) | 90 (50%) | 130 (50%) | "
                        "0.67x | plain float32 | float32 | 150 / 300 |")
    assert lines[3].startswith("| albert_base | 768 x 4 | 8 | 3,000 (50%) | 1,600 (50%) |")
    assert "| 1.88x | plain mixed_bfloat16 | mixed_bfloat16 |" in lines[3]
    # The same sizes measured on a CPU without the flags: auto keeps float32.
    without = bench["summary"].precision_choice_table({"sizes": sizes}).splitlines()
    assert "| 1.88x | plain mixed_bfloat16 | float32 |" in without[3]


def test_a_precision_run_of_some_sizes_keeps_the_others(bench, tmp_path):
    choice = importlib.import_module("albert_lab.benchmarks.precision_choice")
    path = tmp_path / "precision_choice-box.json"
    path.write_text(json.dumps({"sizes": {"albert_base": {"old": 1}, "tiny": {"old": 2}}}))
    result = choice.merged(path, {"host": "box", "sizes": {"tiny": {"new": 3}}})
    assert result["sizes"] == {"tiny": {"new": 3}, "albert_base": {"old": 1}}  # SIZES order
    assert choice.merged(tmp_path / "none.json", result) == result


def test_the_command_table_compares_each_commands_fastest_runs(bench):
    runs = [{"command": command, "setting": setting, "policy": policy, "step_seconds": seconds}
            for command, setting, policy, seconds in [
                ("albert-pretrain", "auto", "mixed_bfloat16", 1.9),
                ("albert-pretrain", "float32", "float32", 3.2),
                ("albert-pretrain", "auto", "mixed_bfloat16", 1.8),
                ("albert-finetune", "auto", "mixed_bfloat16", 1.5),
                ("albert-finetune", "float32", "float32", 2.7)]]
    lines = bench["summary"].command_precision_table({"runs": runs}).splitlines()
    assert lines[2:] == [
        "| `albert-pretrain` | auto | mixed_bfloat16 | 1,800 | 1.78x |",
        "| `albert-pretrain` | float32 | float32 | 3,200 | 1.00x |",
        "| `albert-finetune` | auto | mixed_bfloat16 | 1,500 | 1.80x |",
        "| `albert-finetune` | float32 | float32 | 2,700 | 1.00x |"]


def test_the_summary_states_the_flags_and_both_peaks(bench):
    summary = bench["summary"]
    small, base = precision_size(64, [100, 90, 110, 120]), precision_size(768, [3, 1.7, 3, 3.3])
    for size, peaks in ((small, (210.4, 398.0)), (base, (214.6, 405.2))):
        size["matmul_peak_gflops"] = dict(zip(("float32", "bfloat16"), peaks))
    run = {"machine": {"host": "box", "cpu": "EPYC", "logical_cpus": 2}, "started": "now",
           "wall_seconds": 60.0, "command": "run_all.py", "targets": [],
           "device": {"device": "CPU", "device_name": "EPYC", "mixed_precision": "mixed_bfloat16",
                      "cpu_bfloat16_flags": ["avx512_bf16"],
                      "mixed_precision_reason": "CPU flags avx512_bf16"},
           "benchmarks": {name: {"returncode": 0, "wall_seconds": 30, "peak_rss_mib": 900,
                                 "result": {"sizes": {label: size}}}
                          for name, label, size in (("precision_small", "small_h64", small),
                                                    ("precision_base", "albert_base", base))}}
    text = summary.summary_markdown(run)
    assert "- CPU: EPYC (2 logical CPUs; bfloat16 flags: avx512_bf16); device: CPU" in text
    assert ("## Float32 against bfloat16, by model size\n\nA 2048-cube matmul in the same "
            "runs, float32 / bfloat16: 210 / 398 GFLOP/s, 215 / 405 GFLOP/s") in text
    assert "| small_h64 | 64 x 4 |" in text and "| albert_base | 768 x 4 |" in text


def test_data_prep_stage_costs_and_profile_run_on_a_small_corpus(tmp_path):
    # The stage timing replays ShardBuilder's steps one by one: it must follow their API.
    import argparse

    from data_helpers import english_like_text

    from albert_lab.benchmarks.data_build_stages import (
        hot_functions,
        stage_breakdown,
        worker_phases,
    )
    from albert_tf.text.vocabulary import train_sentencepiece

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(english_like_text(60, seed=0))
    model = train_sentencepiece(iter(corpus.read_text().lower().splitlines()),
                                str(tmp_path / "spm"), vocab_size=300)
    args = argparse.Namespace(max_seq_length=64, dupe_factor=2, max_predictions_per_seq=10)
    stages = stage_breakdown(args, str(corpus), model)
    assert list(stages) == ["read and normalize", "SentencePiece", "segments A/B", "masking",
                            "encoding", "shuffle", "framing and hashing"]
    assert all(value > 0 for value in stages.values())
    hot = hot_functions(args, str(corpus), model, top=5)
    assert len(hot) == 5 and all(row["calls"] > 0 for row in hot)
    # The phases follow build_and_record_shard: the shards they write are the build's.
    phases = worker_phases(args, str(corpus), model, str(tmp_path / "phases"), num_shards=3,
                           shards=2)
    assert phases["shards"] == 2 and phases["examples"] > 0
    assert list(phases["per_example"]) == ["build", "framing and hashing",
                                           "writing (write, fsync, rename)", "sidecar"]
    assert all(row["wall_us"] > 0 for row in phases["per_example"].values())
    from data_prep.cli import main as albert_data

    albert_data(["build", "--input", str(corpus), "--spm_model", model, "--output_dir",
                 str(tmp_path / "built"), "--num_shards", "3", "--max_seq_length", "64",
                 "--dupe_factor", "2", "--max_predictions_per_seq", "10", "--no_progress"])
    for index in range(2):
        name = f"train-{index:05d}-of-00003.tfrecord"
        built = (tmp_path / "built" / name).read_bytes()
        assert (tmp_path / "phases" / name).read_bytes() == built
