"""The workers of a multi-worker run agree before step 1, and a lost peer ends a run clearly.

`MultiWorkerMirroredStrategy` trusts every worker to run the same program on the same data;
a worker started with another config, other shards or another tokenizer would still join the
all-reduce and silently average gradients of two different runs. `agree_with_chief` makes each
worker describe what it is about to run (`describe`: the resolved config, the shard files and
their sizes, the tokenizer's checksum), gathers the descriptions through the strategy's own
collectives (no extra port, no shared folder), and refuses the run on every worker when one
differs from the chief's, naming each differing field. A worker whose own checks failed sends
its error instead, so its peers stop with it rather than wait for it in the first all-reduce.

When a peer dies in the middle of training, TensorFlow aborts the collectives (its
coordination service reports the crashed task, about 10 s after the death on localhost; the
strategy's health check, every 30 s, would too) and `fit` raises `UnavailableError` or a
similar low-level error; `peer_loss_reported` turns that into `PeerLostError`, which says a
peer is gone and how to resume (start every worker again with the same command: the run
resumes from its backup).
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Callable, Iterator, TypeVar

import numpy as np
import tensorflow as tf

Result = TypeVar("Result")

# What TensorFlow raises in a worker whose peer died: the collective or the health check
# aborted (Unavailable), a transfer that timed out (DeadlineExceeded), or the executor
# cancelled after the abort (Cancelled, Internal with the peer named).
_PEER_ERRORS = (tf.errors.UnavailableError, tf.errors.DeadlineExceededError,
                tf.errors.CancelledError, tf.errors.AbortedError, tf.errors.InternalError)


class ClusterError(ValueError):
    """The workers of a multi-worker run do not run the same thing; names what differs."""


class PeerLostError(RuntimeError):
    """A worker of the cluster died or became unreachable during training."""


def worker_count(strategy: tf.distribute.Strategy) -> int:
    """Workers of a multi-worker strategy (1 for any single-process strategy)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return 1
    spec = resolver.cluster_spec().as_dict()
    return sum(len(tasks) if isinstance(tasks, list) else len(dict(tasks))
               for job, tasks in spec.items() if job in ("chief", "worker"))


def gather_from_workers(strategy: tf.distribute.Strategy, data: bytes) -> list[bytes]:
    """`data` of every replica of the cluster, in replica order (the chief's first), through
    the strategy's collectives: the lengths first, then the bytes padded to the longest."""
    def gathered(value: np.ndarray) -> np.ndarray:
        per_replica = strategy.experimental_distribute_values_from_function(
            lambda _: tf.constant(value[None]))
        return strategy.gather(per_replica, axis=0).numpy()

    lengths = gathered(np.array([len(data)], np.int64))[:, 0]
    padded = np.zeros(int(lengths.max()), np.int32)
    padded[:len(data)] = np.frombuffer(data, np.uint8)
    rows = gathered(padded)
    return [row[:length].astype(np.uint8).tobytes() for row, length in zip(rows, lengths)]


def _flattened(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        flat = {}
        for key, item in value.items():
            flat.update(_flattened(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value}


def differences(chief: dict, worker: dict, name: str) -> list[str]:
    """`field: chief X, <name> Y` for each dotted field whose values differ (or is missing on
    one side: `(none)`), in sorted order."""
    ours, theirs = _flattened(chief), _flattened(worker)
    return [f"{field}: chief {ours.get(field, '(none)')!r}, {name} {theirs.get(field, '(none)')!r}"
            for field in sorted(set(ours) | set(theirs)) if ours.get(field) != theirs.get(field)]


def _problems(descriptions: list[dict], replicas_per_worker: int) -> list[str]:
    """What stops the run: each worker's error, then each worker's differences from the
    chief's description."""
    def worker(index: int) -> str:
        return "the chief (worker 0)" if index == 0 else f"worker {index}"

    by_worker = descriptions[::replicas_per_worker]
    problems = [f"{worker(index)} could not start: {description['error']}"
                for index, description in enumerate(by_worker) if "error" in description]
    if problems:
        return problems
    for index, description in enumerate(by_worker[1:], start=1):
        found = differences(by_worker[0], description, worker(index))
        if found:
            problems.append(f"{worker(index)} differs from the chief in {len(found)} "
                            f"field(s): " + "; ".join(found))
    return problems


def agree_with_chief(strategy: tf.distribute.Strategy, check: Callable[[], Result],
                     describe: Callable[[Result], dict]) -> Result:
    """Runs this worker's own `check` and, under a multi-worker strategy, makes every worker
    agree before any step: each one's `describe(result)` (JSON data) must equal the chief's.

    Raises:
        ClusterError: on every worker, when a worker's check failed or its description
            differs from the chief's (each differing field named with both values).
        ValueError: this worker's own check failed (its error as raised).
    """
    try:
        result, failure = check(), None
    except ValueError as error:  # ConfigError, DataError and the other input errors
        result, failure = None, error
    if worker_count(strategy) == 1:
        if failure is not None:
            raise failure
        return result
    mine = {"error": str(failure)} if failure is not None else describe(result)
    with peer_loss_reported(strategy):
        gathered = gather_from_workers(strategy, json.dumps(mine, sort_keys=True).encode())
    descriptions = [json.loads(data) for data in gathered]
    if failure is not None:
        raise failure
    problems = _problems(descriptions, strategy.num_replicas_in_sync // worker_count(strategy))
    if problems:
        raise ClusterError("the workers of this multi-worker run must run the same config on "
                           "the same shards with the same tokenizer; refused before step 1: "
                           + " | ".join(problems))
    return result


@contextlib.contextmanager
def peer_loss_reported(strategy: tf.distribute.Strategy,
                       backup_dir: str | None = None) -> Iterator[None]:
    """Turns the error TensorFlow raises in a worker whose peer died into `PeerLostError`
    (only under a multi-worker strategy; anything else passes through unchanged);
    `backup_dir`: where a restarted run resumes from (None before training)."""
    try:
        yield
    except _PEER_ERRORS as error:
        if worker_count(strategy) == 1:
            raise
        raise PeerLostError(
            f"a peer of this {worker_count(strategy)}-worker cluster is gone "
            f"({_what_tensorflow_said(error)}); this worker stopped too. Start every worker "
            f"again with the same command"
            + (f": the run resumes from its backup in {backup_dir}" if backup_dir else "")
        ) from error


def _what_tensorflow_said(error: tf.errors.OpError) -> str:
    """The peer TensorFlow names (`/job:worker/replica:0/task:1`) and its first line that
    says something ("Graph execution error:" says nothing)."""
    lines = [line.strip() for line in (error.message or str(error)).splitlines()]
    told = [line for line in lines if line and not line.startswith("Graph execution error")
            and not re.fullmatch(r"/job:\S+", line)]
    peer = re.search(r"/job:\w+/replica:\d+/task:\d+", error.message or "")
    return (f"TensorFlow: {type(error).__name__}"
            + (f" from {peer.group(0)}" if peer else "")
            + (f": {told[0][:300]}" if told else ""))
