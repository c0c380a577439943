"""`data_prep.beam` on runners with worker processes: Dask's, on a cluster of two worker
processes the tests start, and the DirectRunner in multi-processing mode. Both must write the
bytes `albert-data build` writes, and a worker killed in the middle of the pipeline must leave
a run that the runner's retry, or a rerun, completes with those bytes and no partial shard."""

import gc
import os
import signal
import threading
import time

import distributed.client
import psutil
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from data_helpers import english_like_text
from distributed import Client, LocalCluster

from albert_tf.text.options import DataPrepOptions
from albert_tf.text.vocabulary import train_sentencepiece
from data_prep import pipeline
from data_prep.beam import build_with_beam
from data_prep.cli import main as data_main

pytestmark = pytest.mark.slow

# dupe_factor 6 over ~900 documents: each shard takes a worker a few tenths of a second, so
# a worker can be caught in the middle of one.
OPTIONS = DataPrepOptions(max_seq_length=64, dupe_factor=6, max_predictions_per_seq=10)
SHARDS = 6
DASK = "--runner=apache_beam.runners.dask.dask_runner.DaskRunner"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("beam_corpus")
    for seed, name in enumerate(("a.txt", "b.txt", "c.txt")):
        (folder / name).write_text(english_like_text(300, seed=seed))
    sentences = (line for name in ("a.txt", "b.txt", "c.txt")
                 for line in (folder / name).read_text().lower().splitlines() if line)
    return folder, train_sentencepiece(sentences, str(folder / "spm"), vocab_size=200)


@pytest.fixture(scope="module")
def reference(corpus, tmp_path_factory):
    """The folder `albert-data build` writes (file name -> bytes)."""
    folder, spm_model = corpus
    output = tmp_path_factory.mktemp("beam_reference")
    assert data_main(["build", "--input", str(folder / "*.txt"), "--spm_model", spm_model,
                      "--output_dir", str(output), "--num_shards", str(SHARDS),
                      "--max_seq_length", "64", "--dupe_factor", "6",
                      "--max_predictions_per_seq", "10", "--no_progress"]) == 0
    return folder_bytes(output)


@pytest.fixture(scope="module")
def cluster():
    """A Dask cluster of two single-threaded worker processes (each restarted by its nanny
    when killed) and a client to watch it; closed even when a test fails."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as local, Client(local) as client:
        yield local, client
        close_pipeline_clients()


def close_pipeline_clients(keep=None):
    """Closes the clients Beam's DaskRunner left open, one a pipeline (distributed keeps them
    in a registry with no public list), all but `keep`. A closed client releases its tasks:
    an in-process rerun of the same pipeline (the same task keys) would otherwise be handed the
    failed run's error; and at the end, they do not try to reconnect to the closed cluster at
    exit and fill the log with tracebacks."""
    gc.collect()
    for open_client in list(distributed.client._global_clients.values()):
        if open_client is not keep:
            open_client.close()


def folder_bytes(folder):
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


def plan_for(corpus, output):
    folder, spm_model = corpus
    return pipeline.make_plan([str(folder / "*.txt")], str(output), spm_model, OPTIONS, SHARDS)


def dask_options(cluster):
    return PipelineOptions([DASK, f"--dask_client_address={cluster[0].scheduler_address}"])


def test_dask_runner_on_two_worker_processes_writes_the_same_folder(corpus, reference, cluster,
                                                                    tmp_path):
    build_with_beam(plan_for(corpus, tmp_path / "dask"), dask_options(cluster))
    assert folder_bytes(tmp_path / "dask") == reference  # shards, sidecars and manifest


def test_direct_runner_in_multi_processing_mode_writes_the_same_folder(corpus, reference,
                                                                       tmp_path):
    options = PipelineOptions(["--runner=DirectRunner", "--direct_running_mode=multi_processing",
                               "--direct_num_workers=2"])
    build_with_beam(plan_for(corpus, tmp_path / "direct"), options)
    assert folder_bytes(tmp_path / "direct") == reference


def executing_tasks(dask_worker):
    """Tasks running on a worker, counting those the scheduler has cancelled: a failed
    pipeline's tasks leave the scheduler at once, but a worker cannot stop a running task and
    it goes on (writing its shard's temporary file) until it returns."""
    return dask_worker.state.executing_count


def pid_if_executing(dask_worker):
    return os.getpid() if executing_tasks(dask_worker) else None


class WorkerKiller(threading.Thread):
    """Kills, by its pid, the first Dask worker seen building a shard. Each worker says itself
    whether a task is running in it, and the kill follows at once (asking the scheduler which
    worker has tasks, then that worker for its pid, left time for its task to end first, and
    a worker killed idle fails nothing)."""

    def __init__(self, client: Client, output):
        super().__init__(daemon=True)
        self.client, self.output = client, output
        self.pid = None
        self.sidecars_at_kill = None

    def run(self):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.pid is None:
            pids = [pid for pid in self.client.run(pid_if_executing).values() if pid]
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                self.pid = pids[0]
                self.sidecars_at_kill = len(list(self.output.glob("*.tfrecord.json")))
            time.sleep(0.005)


def wait_until_idle(client, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (any(client.processing().values())
                                           or any(client.run(executing_tasks).values())):
        time.sleep(0.05)


def build_killing_a_worker(corpus, cluster, output, allowed_failures):
    """Builds on the cluster while a `WorkerKiller` kills a worker; returns the killer and
    the build's error (None when it completed)."""
    local, client = cluster
    client.wait_for_workers(2, timeout=120)  # a nanny restarted the one killed before
    local.scheduler.allowed_failures = allowed_failures  # 0: the task fails with its worker
    killer = WorkerKiller(client, output)
    killer.start()
    try:
        build_with_beam(plan_for(corpus, output), dask_options(cluster))
        failed = None
    except Exception as error:  # noqa: BLE001 (the runner's own error type is Dask's)
        failed = error
    finally:
        local.scheduler.allowed_failures = 3
    killer.join(timeout=130)
    return killer, failed


@pytest.mark.parametrize("allowed_failures", [3, 0], ids=["retried", "rerun"])
def test_a_worker_killed_mid_pipeline_leaves_a_run_that_completes_the_same(
        corpus, reference, cluster, tmp_path, allowed_failures):
    client = cluster[1]
    for attempt in range(3):
        output = tmp_path / f"killed-{attempt}"
        killer, failed = build_killing_a_worker(corpus, cluster, output, allowed_failures)
        assert killer.pid is not None, "no worker was seen building a shard"
        assert killer.sidecars_at_kill < SHARDS, "the pipeline had finished before the kill"
        assert not psutil.pid_exists(killer.pid) or \
            psutil.Process(killer.pid).status() == psutil.STATUS_ZOMBIE
        if allowed_failures:
            assert failed is None, f"the retry did not complete the build: {failed!r}"
        if allowed_failures or failed is not None:
            break
        # The worker's task ended between its word and the kill, so nothing failed: that
        # build must be whole, and the kill is tried again on a new folder.
        assert folder_bytes(output) == reference
    if not allowed_failures:
        assert "KilledWorker" in type(failed).__name__, repr(failed)
        wait_until_idle(client)  # the other worker's shard goes on after the failure
        # What the failed run left: whole shards only (no temporaries, nothing truncated),
        # no manifest; then the same command again completes the build.
        left = folder_bytes(output)
        assert "manifest.json" not in left
        assert not [name for name in left if ".tmp-" in name]
        for name, data in left.items():
            if name.endswith(".tfrecord"):
                assert data == reference[name], f"{name} is not the whole shard"
        client.wait_for_workers(2, timeout=120)
        close_pipeline_clients(keep=client)  # as a rerun in a new process would start
        build_with_beam(plan_for(corpus, output), dask_options(cluster))
    assert folder_bytes(output) == reference
