"""Reading a TensorFlow profiler trace back: self time per event, grouped by op type and site.

The trace is the XSpace protobuf `tf.profiler.experimental` writes (`*.xplane.pb`, the file
TensorBoard's Profile tab opens), parsed with the `xplane_pb2` module TensorFlow ships. Events
on one thread nest (a function call holds its ops); an event's self time is its duration minus
that of the events directly inside it, so summing self times counts every picosecond once.
"""

from __future__ import annotations

import collections
import pathlib
import re

from tensorflow.tsl.profiler.protobuf import xplane_pb2

# Threads that run a step's ops: TensorFlow's inter-op pool and Eigen's intra-op pool.
OP_THREADS = ("tf_Compute", "tf_numa")
# Matrix-multiply op types: TensorFlow's own (MatMul, BatchMatMulV2/V3, _FusedMatMul, Einsum),
# the oneDNN rewrites of them on CPUs where oneDNN is on (_MklMatMul, _MklNativeFusedMatMul,
# _MklBatchMatMulV2, ...), and XLA's dot thunks.
MATMUL_TYPE = re.compile(r"_?(Mkl)?(Native)?(Fused)?(Batch)?MatMul(V\d)?"
                         r"|(_Mkl(Native)?)?Einsum|dot")


def is_matmul(kind: str) -> bool:
    """Whether an op type (as `op_type` returns it) is a matrix multiply."""
    return MATMUL_TYPE.fullmatch(kind) is not None


def read_space(logdir: str) -> xplane_pb2.XSpace:
    """The newest trace under `logdir`."""
    paths = sorted(pathlib.Path(logdir).rglob("*.xplane.pb"), key=lambda p: p.stat().st_mtime)
    if not paths:
        raise FileNotFoundError(f"no *.xplane.pb trace under {logdir}")
    space = xplane_pb2.XSpace()
    space.ParseFromString(paths[-1].read_bytes())
    return space


def self_times(space: xplane_pb2.XSpace, threads=OP_THREADS) -> collections.Counter:
    """Picoseconds of self time (duration minus that of the events nested in it) per event
    name, over the host threads whose names start with one of `threads`."""
    totals: collections.Counter = collections.Counter()
    for plane in space.planes:
        names = {key: meta.name for key, meta in plane.event_metadata.items()}
        for line in plane.lines:
            if not line.name.startswith(threads):
                continue
            events = sorted(((e.offset_ps, e.offset_ps + e.duration_ps, names[e.metadata_id])
                             for e in line.events), key=lambda e: (e[0], -e[1]))
            add_self_times(events, totals)
    return totals


def add_self_times(events, totals: collections.Counter) -> None:
    """Adds to `totals` the self time of each (start, end, name) of one thread, sorted by
    start and then longest first, where an event inside another is its child."""
    stack: list[list] = []  # [end, name, start, time of children]

    def close():
        end, name, start, children = stack.pop()
        totals[name] += end - start - children
        if stack:
            stack[-1][3] += end - start

    for start, end, name in events:
        while stack and stack[-1][0] <= start:
            close()
        stack.append([end, name, start, 0])
    while stack:
        close()


def op_type(name: str) -> str:
    """`scope/op_name:OpType` (a TensorFlow op) -> OpType; `fusion.12.clone` (an XLA thunk)
    -> fusion; anything else (executor bookkeeping) -> its name in angle brackets."""
    if re.fullmatch(r"[^:]+:[A-Za-z_]\w*", name):
        return name.rsplit(":", 1)[1]
    if re.fullmatch(r"[a-z][\w\-]*(\.(\d+|clone))*", name):
        return re.sub(r"(\.(\d+|clone))+$", "", name)
    return f"<{name}>"


def op_site(name: str) -> str:
    """A TensorFlow op's name with loop prefixes and layer/repeat indices removed, so every
    application of a shared layer adds up: `.../group_0_inner_0_ffn/output/Tensordot_7/
    MatMul:MatMul` -> `.../group_inner_ffn/output/Tensordot/MatMul:MatMul`."""
    name = re.sub(r"^(while/body/_\d+/)?", "", name).replace("gradient_tape/", "grad/")
    name = name.replace("while/", "")
    return re.sub(r"_\d+(?=[/:_]|$)", "", name)


def breakdown(totals: collections.Counter, steps: int, top: int) -> dict:
    """Per-step milliseconds and shares of op time by op type and by op site, and the matmul
    share. Op time is that of events naming a TensorFlow op or an XLA thunk; the rest
    (executor bookkeeping, threads waiting, XLA work run inline without an event of its own)
    is reported as unattributed and left out of the shares. Rows under 0.1% are dropped."""
    by_type: collections.Counter = collections.Counter()
    by_site: collections.Counter = collections.Counter()
    unattributed = 0
    for name, picoseconds in totals.items():
        kind = op_type(name)
        if kind.startswith("<"):
            unattributed += picoseconds
            continue
        by_type[kind] += picoseconds
        if ":" in name:
            by_site[op_site(name)] += picoseconds
    total = sum(by_type.values()) or 1

    def rows(counter):
        return [{"name": name, "ms_per_step": value / 1e9 / steps, "share": value / total,
                 "matmul": is_matmul(name.rsplit(":", 1)[-1])}
                for name, value in counter.most_common(top) if value >= total / 1000]

    matmul = sum(value for kind, value in by_type.items() if is_matmul(kind))
    return {"op_ms_per_step": total / 1e9 / steps,
            "unattributed_ms_per_step": unattributed / 1e9 / steps,
            "matmul_share": matmul / total, "by_type": rows(by_type), "by_site": rows(by_site)}
