"""What the command-line tools show: TensorFlow's start-up chatter hidden, everything else
kept in order, `--verbose` to see it all, and no tool loads TensorFlow to parse its flags."""

import configparser
import os
import subprocess
import sys
import textwrap

import pytest
from repository import REPOSITORY

from albert_tf.io.console import CHATTER

ROOT = REPOSITORY

# Lines of the kinds TensorFlow 2.20 writes to descriptor 2 on a CPU-only machine.
CHATTER_LINES = [
    "2026-11-25 10:25:06.471666: E external/local_xla/xla/stream_executor/cuda/"
    "cuda_platform.cc:51] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: "
    "UNKNOWN ERROR (303)",
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1795602341.601071    6606 device_compiler.h:196] Compiled cluster using XLA!"
    "  This line is logged at most once for the lifetime of the process.",
    "2026-11-25 10:27:00.211340: E tensorflow/core/util/util.cc:131] oneDNN supports DT_INT64 "
    "only on platforms with AVX-512. Falling back to the default Eigen-based implementation.",
    "W0000 00:00:1796441591.078609   29386 tf_tfl_flatbuffer_helpers.cc:364] Ignored "
    "output_format.",
    "W0000 00:00:1796441591.078656   29386 tf_tfl_flatbuffer_helpers.cc:367] Ignored "
    "drop_control_dependency.",
    "fully_quantize: 0, inference_type: 6, input_inference_type: FLOAT32, "
    "output_inference_type: FLOAT32",
]
REAL_LINES = [
    "2026-11-25 10:27:00.211340: E tensorflow/core/framework/op_kernel.cc:1857] "
    "OP_REQUIRES failed at save_restore_v2_ops.cc: NOT_FOUND: checkpoint missing",
    "Traceback (most recent call last):",
    "ValueError: a real problem",
]

SCRIPT = textwrap.dedent("""
    import os, subprocess, sys, time
    from albert_tf.io.console import quiet_tensorflow
    chatter, real, verbose = {chatter!r}, {real!r}, {verbose!r}
    with quiet_tensorflow(verbose):
        os.write(2, (chatter[0] + "\\n" + real[0] + "\\n").encode())
        print(real[1], file=sys.stderr, flush=True)
        os.write(2, (chatter[1] + "\\n").encode())
        os.write(2, b"\\r progress 10%")  # a bar redrawn in place, no newline yet
        time.sleep(0.3)
        os.write(2, b"\\r progress 100%\\n")
        subprocess.run([sys.executable, "-c", "import os; os.write(2, (%r + '\\\\n' + %r "
                        "+ '\\\\n').encode())" % (chatter[2], real[2])], check=True)
        os.write(2, "".join(line + "\\n" for line in chatter[3:]).encode())
    print("after the block", file=sys.stderr)
    """)


def _run(verbose: bool) -> str:
    script = SCRIPT.format(chatter=CHATTER_LINES, real=REAL_LINES, verbose=verbose)
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True,
                          capture_output=True, timeout=60).stderr.decode()  # keeps the \r


def test_the_chatter_is_hidden_and_everything_else_passes_in_order():
    shown = _run(verbose=False)
    assert shown == (f"{REAL_LINES[0]}\n{REAL_LINES[1]}\n\r progress 10%\r progress 100%\n"
                     f"{REAL_LINES[2]}\nafter the block\n")


def test_verbose_shows_everything():
    shown = _run(verbose=True)
    for line in CHATTER_LINES + REAL_LINES:
        assert line in shown


@pytest.mark.parametrize("line", CHATTER_LINES)
def test_each_chatter_pattern_matches_only_its_line(line):
    assert CHATTER.search(line.encode())
    for real in REAL_LINES:
        assert not CHATTER.search(real.encode())


def _console_scripts() -> dict[str, str]:
    parser = configparser.ConfigParser()
    parser.read(os.path.join(ROOT, "setup.cfg"))
    entries = parser["options.entry_points"]["console_scripts"].strip().splitlines()
    return dict(tuple(part.strip() for part in entry.split("=")) for entry in entries)


def test_every_tool_has_verbose_and_parses_its_flags_without_tensorflow():
    """Each tool's flags are parsed before the chatter filter starts, so building its parser
    must not import TensorFlow (whose import prints the first lines of chatter)."""
    scripts = _console_scripts()
    assert len(scripts) >= 8
    check = textwrap.dedent("""
        import importlib, sys
        for target in sys.argv[1:]:
            module = importlib.import_module(target.split(":")[0])
            parser = module._parser()
            assert "--verbose" in parser.format_help() or all(
                "--verbose" in command.format_help()
                for action in parser._subparsers._group_actions
                for command in action.choices.values()), target
        assert "tensorflow" not in sys.modules, "TensorFlow loaded"
        """)
    subprocess.run([sys.executable, "-c", check, *scripts.values()], cwd=ROOT, check=True,
                   timeout=120)


def test_a_tool_that_runs_tensorflow_prints_no_chatter():
    environment = {name: value for name, value in os.environ.items()
                   if name != "TF_CPP_MIN_LOG_LEVEL"}
    result = subprocess.run(
        [sys.executable, "-m", "albert_tf.cli.model", "--preset", "tiny", "--forward"],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300, check=True)
    assert "forward" in result.stdout
    for line in result.stderr.splitlines():
        assert not CHATTER.search(line.encode()), line
        assert "cudart_stub" not in line and "cpu_feature_guard" not in line, line
