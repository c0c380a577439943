"""The markdown tables of the benchmark results and the check of the performance targets.

Pure Python over the benchmarks' JSON (no TensorFlow), so `run_all.py` can summarize a run
and the tests can check the arithmetic on hand-made results.
"""

from __future__ import annotations

from albert_lab.result_files import markdown_table

# The targets on a CPU machine (see docs/performance.md).
ORIGINAL_EXAMPLES_PER_SECOND = 400  # the original create_pretraining_data.py, seq 128, dupe 2
DATA_PREP_TIMES_ORIGINAL = 25
XLA_SPEEDUP_OVER_MODEL_GARDEN = 1.2
ALBERT_BASE_MFU = 0.5


def mode_name(row: dict) -> str:
    return "XLA" if row["xla"] else "plain"


def train_step_table(rows: list[dict]) -> str:
    return markdown_table(
        "model:l|implementation:l|mode:l|precision:l|batch:r|ms/step:r|examples/s:r|GFLOP/s:r"
        "|MFU:r|speed-up over Model Garden:r|peak RSS GiB:r",
        [[r["model"], r["implementation"], mode_name(r), r["precision"], str(r["batch_size"]),
          f"{r['step_seconds'] * 1e3:.1f}", f"{r['examples_per_second']:.1f}",
          f"{r['achieved_gflops']:.1f}", f"{r['mfu'] * 100:.1f}%",
          f"{r['speedup_over_model_garden']:.2f}x" if "speedup_over_model_garden" in r else "-",
          f"{r.get('peak_rss_gib_so_far', float('nan')):.2f}"] for r in rows])


def precision_choice_table(result: dict) -> str:
    """Float32 against mixed bfloat16 per size: ms/step of each mode and precision, the
    speed-up bfloat16 gives without XLA, the fastest variant and what `auto` picks (the
    rule as it is now, for the CPU flags the result records, XLA off)."""
    from albert_tf.config.precision import Device, choose_precision

    cpu = Device("CPU", cpu_flags=frozenset(result.get("cpu_bfloat16_flags", ())))
    def step(size: dict, xla: bool, precision: str) -> dict | None:
        return next((r for r in size["rows"] if (r["xla"], r["precision"]) == (xla, precision)),
                    None)

    def cell(row: dict | None) -> str:
        return "-" if row is None else f"{row['step_seconds'] * 1e3:,.0f} ({row['mfu']:.0%})"

    rows = []
    for name, size in result["sizes"].items():
        float32, bfloat16 = step(size, False, "float32"), step(size, False, "mixed_bfloat16")
        fastest = min(size["rows"], key=lambda r: r["step_seconds"])
        matmul = size["feed_forward_matmul_gflops"]
        rows.append([
            name, f"{size['hidden_size']} x {size['num_layers']}", str(size["batch_size"]),
            cell(float32), cell(bfloat16), cell(step(size, True, "float32")),
            cell(step(size, True, "mixed_bfloat16")),
            f"{float32['step_seconds'] / bfloat16['step_seconds']:.2f}x"
            if float32 and bfloat16 else "-",
            f"{mode_name(fastest)} {fastest['precision']}",
            choose_precision("auto", cpu, size["hidden_size"], False).policy,
            f"{matmul['float32']:.0f} / {matmul['bfloat16']:.0f}"])
    return markdown_table(
        "size:l|H x layers:l|batch:r|float32 ms/step (MFU):r|bfloat16 ms/step:r"
        "|float32 XLA:r|bfloat16 XLA:r|bfloat16 speed-up, plain:r|fastest:l|auto picks:l"
        "|feed-forward matmul GFLOP/s, float32 / bfloat16:r", rows)


def command_precision_table(result: dict) -> str:
    """The commands' step times per setting (the fastest run of each) and auto's speed-up
    over float32."""
    best: dict[tuple[str, str], dict] = {}
    for run in result["runs"]:
        key = (run["command"], run["setting"])
        if key not in best or run["step_seconds"] < best[key]["step_seconds"]:
            best[key] = run
    rows = []
    for (command, setting), run in best.items():
        float32 = best.get((command, "float32"))
        rows.append([f"`{command}`", setting, run["policy"],
                     f"{run['step_seconds'] * 1e3:,.0f}",
                     f"{float32['step_seconds'] / run['step_seconds']:.2f}x" if float32 else "-"])
    return markdown_table("command:l|train.precision:l|computed in:l|ms/step:r"
                          "|speed over float32:r", rows)


PRECISION_BENCHMARKS = ("precision_small", "precision_base", "precision_large")


def precision_section(result: dict) -> str:
    """The matmul peaks each size's run measured, then `precision_choice_table`."""
    peaks = sorted({(round(size["matmul_peak_gflops"]["float32"]),
                     round(size["matmul_peak_gflops"]["bfloat16"]))
                    for size in result["sizes"].values()})
    return ("A 2048-cube matmul in the same runs, float32 / bfloat16: " + ", ".join(
        f"{float32} / {bfloat16} GFLOP/s" for float32, bfloat16 in peaks)
        + " (each step's MFU is against its own compute type's peak).\n\n"
        + precision_choice_table(result))


def accumulation_table(result: dict) -> str:
    """Gradient accumulation: one row per way of making the same update."""
    return markdown_table(
        f"update of {result['batch_size']} ({result['model']}) as:l|ms/update:r|examples/s:r"
        "|GFLOP/s:r|peak RSS GiB:r|device peak GiB:r",
        [[f"{r['micro_batches']} x {r['micro_batch_size']}", f"{r['step_seconds'] * 1e3:.0f}",
          f"{r['examples_per_second']:.1f}", f"{r['achieved_gflops']:.1f}",
          f"{r['peak_rss_gib']:.2f}",
          "-" if r["device_peak_memory_gib"] is None else f"{r['device_peak_memory_gib']:.2f}"]
         for r in result["rows"]])


def small_model_table(result: dict) -> str:
    table = markdown_table(
        "variant:l|ms/step:r|examples/s:r|MFU:r|x trainer:r|setting:l",
        [[r["variant"], f"{1000 * r['seconds_per_step']:.1f}",
          f"{r['examples_per_second']:,.0f}", f"{r['mfu']:.1%}",
          f"{r['times_trainer']:.2f}", r["description"]] for r in result["rows"]])
    shapes = result.get("matmul_shape_flops_per_second", {})
    return table + ("\n\nA lone float32 matmul of the model's shapes: " + ", ".join(
        f"{name} {rate / 1e9:.0f} GFLOP/s" for name, rate in shapes.items()) if shapes else "")


def fine_tune_workers_table(result: dict) -> str:
    return markdown_table(
        "workers:r|threads each:r|seconds:r|runs per hour:r|x one worker:r",
        [[str(r["workers"]), str(r["threads_per_worker"]), f"{r['seconds']:.1f}",
          f"{r['runs_per_hour']:.1f}", f"{r['times_one_worker']:.2f}"]
         for r in result["rows"]])


def table3_table(ratios: list[dict]) -> str:
    return markdown_table(
        "size:l|mode:l|precision:l|ALBERT ms/step:r|BERT ms/step:r|ALBERT / BERT speed-up:r"
        "|paper (Table 3):r",
        [[r["size"], mode_name(r), r["precision"], f"{r['albert_step_seconds'] * 1e3:.0f}",
          f"{r['bert_step_seconds'] * 1e3:.0f}", f"{r['albert_over_bert_speedup']:.2f}x",
          f"{r['paper_albert_over_bert_speedup']:.2f}x"] for r in ratios])


def data_prep_table(rows: list[dict]) -> str:
    return markdown_table(
        "workers:r|examples:r|seconds:r|examples/s:r|per worker:r|x original (400/s):r"
        "|peak RSS MiB:r",
        [[str(r["workers"]), f"{r['examples']:,}", f"{r['seconds']:.2f}",
          f"{r['examples_per_second']:,.0f}", f"{r['examples_per_second_per_worker']:,.0f}",
          f"{r['times_original_per_worker']:.1f}", f"{r['peak_rss_mib']:.0f}"] for r in rows])


def reading_line(result: dict) -> str:
    rates = result.get("input_pipeline_examples_per_second")
    if not rates:
        return ""
    line = ("\n\nThe training input pipeline reading these shards (batch 256): " + ", ".join(
        f"{name.replace('_', ' ')} {rate:,.0f} examples/s" for name, rate in rates.items()))
    inspecting = result.get("inspect_statistics")
    if inspecting:
        line += (f". `albert-data inspect` statistics over a shard of "
                 f"{inspecting['records']:,} records: "
                 f"{inspecting['batched_records_per_second']:,.0f} records/s (decoding one "
                 f"record at a time: {inspecting['one_record_at_a_time_records_per_second']:,.0f})")
    return line


def hot_functions_table(rows: list[dict]) -> str:
    if not rows:
        return ""
    return ("\n\nThe hot loop under cProfile (one shard of the whole corpus; cProfile's own "
            "cost inflates Python calls):\n\n" + markdown_table(
                "function:l|calls:r|self us/example:r|cumulative us/example:r",
                [[f"`{r['function']}`", f"{r['calls']:,}", f"{r['self_us_per_example']:.1f}",
                  f"{r['cumulative_us_per_example']:.1f}"] for r in rows]))


def serving_table(rows: list[dict]) -> str:
    return markdown_table(
        "preset:l|mode:l|batch:r|p50 ms:r|p99 ms:r|first request ms:r|tokenization:r"
        "|texts/s:r|MFU:r",
        [[r["preset"], mode_name(r), str(r["batch_size"]), f"{r['p50_ms']:.2f}",
          f"{r['p99_ms']:.2f}", f"{r['first_request_ms']:.0f}",
          f"{r['tokenization_share']:.0%}", f"{r['texts_per_second']:.1f}", f"{r['mfu']:.1%}"]
         for r in rows])


def encoder_step_table(rows: list[dict]) -> str:
    return markdown_table(
        "preset:l|implementation:l|mode:l|ms/step:r|examples/s:r|MFU:r",
        [[r["preset"], r["implementation"], mode_name(r), f"{r['step_seconds'] * 1e3:.1f}",
          f"{r['examples_per_second']:.1f}", f"{r['mfu']:.1%}"] for r in rows])


def profile_table(mode: dict) -> str:
    def shares(title, rows):
        return markdown_table(f"{title}:l|ms/step:r|share:r", [
            [f"`{r['name']}`", f"{r['ms_per_step']:.1f}", f"{r['share']:.1%}"] for r in rows])

    text = (f"{mode_name(mode)}: {mode['profiled_step_seconds']:.2f} s/step under the "
            f"profiler; op time {mode['op_ms_per_step']:.0f} ms/step (summed over threads), "
            f"unattributed {mode['unattributed_ms_per_step']:.0f} ms/step; matmuls "
            f"{mode['matmul_share']:.1%} of the op time\n\n" + shares("op type", mode["by_type"]))
    if mode.get("by_site"):
        text += "\n\n" + shares("op (all layer applications summed)", mode["by_site"])
    return text


def profile_note(profile: dict | None, xla: bool = False) -> str:
    """What the profile of our step shows: the matmul share and the largest other costs.
    The plain step's profile by default: every op there has its own event, while XLA on a
    CPU runs much of its program inline without one (see trace_analysis.breakdown)."""
    modes = [m for m in (profile or {}).get("modes", []) if m["xla"] == xla]
    if not modes:
        return "no profile in this run"
    mode = modes[0]
    others = [r for r in mode["by_type"] if not r["matmul"]][:3]
    return (f"the {mode_name(mode)} profile puts {mode['matmul_share']:.0%} of the op time in "
            f"matmuls; the largest other costs are "
            + ", ".join(f"{r['name']} {r['share']:.0%}" for r in others))


def headroom_note(train: dict, goals: dict) -> str:
    """How close to the measured matmul peak our step already is, and what the target needs."""
    garden = [r["mfu"] for r in train.get("rows", []) if r["model"] == "albert_base"
              and r["implementation"] == "model_garden" and r["xla"]
              and r["precision"] == "float32"]
    if not garden:
        return ""
    needed = garden[0] * XLA_SPEEDUP_OVER_MODEL_GARDEN
    return (f"ours runs at {goals['mfu']:.0%} of the measured matmul peak and Model Garden's "
            f"XLA step at {garden[0]:.0%}, so {XLA_SPEEDUP_OVER_MODEL_GARDEN}x would need ours "
            f"at {needed:.0%}")


def check(name: str, requirement: str, measured: float, threshold: float, unit: str,
          why_missed: str = "") -> dict:
    met = measured >= threshold
    result = {"target": name, "requirement": requirement, "measured": measured,
              "threshold": threshold, "unit": unit, "met": met,
              "margin": measured / threshold - 1}
    if not met:
        result["missed_by"] = f"{(1 - measured / threshold):.1%} short"
        result["why"] = why_missed
    return result


def evaluate_targets(results: dict) -> list[dict]:
    """The issue's three targets checked against a run's results (those it has)."""
    targets = []
    data_prep = results.get("data_prep")
    if data_prep:
        single = next((r for r in data_prep["rows"] if r["workers"] == 1), None)
        for row in data_prep["rows"]:
            scaling = ""
            if single and row is not single:
                each = row["examples_per_second_per_worker"] / single["examples_per_second"]
                scaling = (f"{row['workers']} workers run at {each:.0%} of one worker's rate "
                           f"each (one alone: {single['times_original_per_worker']:.1f}x)")
            targets.append(check(
                f"data prep, {row['workers']} worker(s)",
                f">= {DATA_PREP_TIMES_ORIGINAL}x the original script per worker "
                f"({DATA_PREP_TIMES_ORIGINAL * ORIGINAL_EXAMPLES_PER_SECOND:,} examples/s)",
                row["examples_per_second_per_worker"] / ORIGINAL_EXAMPLES_PER_SECOND,
                DATA_PREP_TIMES_ORIGINAL, "x",
                "; ".join(part for part in (scaling, "see the stage costs and the cProfile "
                                                     "table under Data prep") if part)))
    train = results.get("train_step")
    goals = (train or {}).get("targets_albert_base")
    if goals:
        note = "; ".join(part for part in (headroom_note(train, goals),
                                           profile_note(results.get("profile_step"))) if part)
        targets.append(check(
            "albert_base XLA train step vs Model Garden AlbertEncoder (XLA)",
            f">= {XLA_SPEEDUP_OVER_MODEL_GARDEN}x in the same run",
            goals["speedup_over_model_garden_xla"], XLA_SPEEDUP_OVER_MODEL_GARDEN, "x", note))
        targets.append(check(
            "albert_base XLA train step vs Model Garden's fastest mode",
            f">= {XLA_SPEEDUP_OVER_MODEL_GARDEN}x in the same run",
            goals["speedup_over_fastest_model_garden"], XLA_SPEEDUP_OVER_MODEL_GARDEN, "x",
            note))
        targets.append(check("albert_base XLA train step MFU",
                             f">= {ALBERT_BASE_MFU:.0%} of the measured matmul peak",
                             goals["mfu"], ALBERT_BASE_MFU, "of peak", note))
    return targets


def format_measured(target: dict) -> str:
    if target["unit"] == "of peak":
        return f"{target['measured']:.1%}"
    return f"{target['measured']:.2f}x"


def targets_table(targets: list[dict]) -> str:
    return markdown_table("target:l|requirement:l|measured:r|met:l", [
        [t["target"], t["requirement"], format_measured(t),
         "yes" if t["met"] else f"no: {t['missed_by']}; {t['why']}"] for t in targets])


def finished_note(entry: dict) -> str:
    """When a suite entry finished and on a CPU with which bfloat16 flags; entries from
    before the suite recorded these say so."""
    if "finished" not in entry:
        return "not recorded (an earlier suite run)"
    return f"{entry['finished']} ({', '.join(entry['cpu_bfloat16_flags']) or 'none'})"


def summary_markdown(run: dict) -> str:
    """The whole run as markdown: where and how it ran, the targets, then each benchmark."""
    results = {name: entry["result"] for name, entry in run["benchmarks"].items()
               if entry.get("result")}
    device = run.get("device") or {}
    sizes = {size: row for name in PRECISION_BENCHMARKS if name in results
             for size, row in results[name]["sizes"].items()}
    if sizes:
        results["precision"] = {"sizes": sizes,
                                "cpu_bfloat16_flags": device.get("cpu_bfloat16_flags", [])}
    flags = device.get("cpu_bfloat16_flags")
    lines = [f"# Benchmarks on {run['machine']['host']}",
             "",
             f"- CPU: {run['machine']['cpu']} ({run['machine']['logical_cpus']} logical CPUs"
             + ("" if flags is None else f"; bfloat16 flags: {', '.join(flags) or 'none'}")
             + "); "
             f"device: {device.get('device', 'CPU')} ({device.get('device_name', '-')}); "
             f"mixed precision: {device.get('mixed_precision') or 'none'} "
             f"({device.get('mixed_precision_reason', '-')})",
             f"- TensorFlow {run.get('tensorflow', '?')}; started {run['started']}"
             + (f", resumed {run['resumed']}" if run.get("resumed") else "")
             + f"; {run['wall_seconds'] / 60:.1f} min of benchmarks; last command: "
             f"`{run['command']}`",
             "", "## Targets", "", targets_table(run["targets"]), "",
             "## Benchmarks run", "", markdown_table(
                 "benchmark:l|status:l|minutes:r|peak RSS MiB (process tree):r"
                 "|finished (the CPU's bfloat16 flags):l", [
                     [name, "ok" if entry["returncode"] == 0
                      else f"failed ({entry['returncode']})",
                      f"{entry['wall_seconds'] / 60:.1f}", f"{entry['peak_rss_mib']:.0f}",
                      finished_note(entry)]
                     for name, entry in run["benchmarks"].items()])]
    sections = [
        ("train_step", "Pretraining train step", lambda r: train_step_table(r["rows"])),
        ("train_step", "ALBERT vs BERT (Table 3)",
         lambda r: table3_table(r["table3"]) if r.get("table3") else ""),
        ("train_step_large", "Pretraining train step, large sizes",
         lambda r: train_step_table(r["rows"])),
        ("train_step_large", "ALBERT vs BERT, large (Table 3)",
         lambda r: table3_table(r["table3"]) if r.get("table3") else ""),
        ("precision", "Float32 against bfloat16, by model size", precision_section),
        ("encoder_step", "Encoder forward + backward", lambda r: encoder_step_table(r["rows"])),
        ("profile_step", "Profile of our train step",
         lambda r: "\n\n".join(profile_table(m) for m in r["modes"])),
        ("data_prep", "Data prep", lambda r: data_prep_table(r["rows"]) + "\n\nMicroseconds "
         "per example by stage (one process): " + ", ".join(
             f"{stage} {value:.1f}" for stage, value in
             r["microseconds_per_example_by_stage"].items()) + reading_line(r)
         + hot_functions_table(r.get("profile_hot_functions", []))),
        ("serving", "Serving latency (raw text in)", lambda r: serving_table(r["rows"])),
        ("accumulation", "Gradient accumulation", accumulation_table),
        ("small_model_step", "Small-model (mini scale) train step", small_model_table),
        ("fine_tune_workers", "Fine-tunes side by side (the seed loops)",
         fine_tune_workers_table),
    ]
    for name, title, render in sections:
        if name in results:
            body = render(results[name])
            if body:
                lines += ["", f"## {title}", "", body]
    return "\n".join(lines) + "\n"
