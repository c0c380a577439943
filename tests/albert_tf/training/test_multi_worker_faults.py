"""Two `albert-pretrain` worker processes under MultiWorkerMirroredStrategy (TF_CONFIG on free
localhost ports), with faults: the whole cluster killed at a step drawn from a seeded generator
and started again, one worker killed alone, and a worker that differs from the chief; and,
while a cluster runs, who holds the run folder. Every process a test starts is killed when the
test ends, pass or fail."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
import yaml
from data_helpers import ordered_documents
from process_helpers import child_environment

from albert_tf.io.owned_folder import LOCK_FILE, RECORD_FILE, FolderError, FolderLock
from albert_tf.loop.backup import backup_step
from data_prep.cli import main as data_main

pytestmark = pytest.mark.slow

SEQ, PREDICTIONS, VOCAB = 64, 10, 48
STEPS, STEPS_PER_EPOCH, BACKUP_EVERY = 40, 20, 4
# How long a worker whose peer died may take to fail: 11-13 s measured (TensorFlow's
# coordination service reports the crashed task; its health check would, every 30 s).
PEER_LOSS_SECONDS = 90


def build_shards(folder, text, seed):
    folder.mkdir()
    (folder / "text.txt").write_text(text)
    assert data_main(["train-spm", "--input", str(folder / "text.txt"), "--model_prefix",
                      str(folder / "spm"), "--vocab_size", str(VOCAB), "--seed", str(seed)]) == 0
    assert data_main(["build", "--input", str(folder / "text.txt"), "--spm_model",
                      str(folder / "spm.model"), "--output_dir", str(folder / "shards"),
                      "--max_seq_length", str(SEQ), "--max_predictions_per_seq",
                      str(PREDICTIONS), "--num_shards", "2", "--no_progress"]) == 0


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    """Two 'hosts' (working folders) holding shards under the same relative name,
    `shards/`: built from the same text on the first, from other text with another tokenizer
    on the second."""
    root = tmp_path_factory.mktemp("multi_worker_hosts")
    build_shards(root / "host0", ordered_documents(300, seed=1), seed=1)
    build_shards(root / "host1", ordered_documents(300, seed=5), seed=5)
    return root


def run_config(path, model_dir, **train) -> str:
    mapping = {
        "model": {"vocab_size": VOCAB, "embedding_size": 16, "hidden_size": 32,
                  "num_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
                  "max_position_embeddings": SEQ},
        "sentence_objective": "sop",
        "data": {"train_files": ["shards/*.tfrecord"], "max_seq_length": SEQ,
                 "max_predictions_per_seq": PREDICTIONS, "shuffle_buffer": 200},
        "optimizer": {"type": "adamw", "learning_rate": 0.002, "warmup_steps": 5},
        "train": {"model_dir": str(model_dir), "global_batch_size": 16, "train_steps": STEPS,
                  "steps_per_epoch": STEPS_PER_EPOCH, "steps_per_execution": 1,
                  "backup_every_steps": BACKUP_EVERY, "eval_steps": 0,
                  "log_every_steps": 10, "verbose": 0, **train},
        "distribution": {"strategy": "multi_worker"},
    }
    path.write_text(yaml.safe_dump(mapping))
    return str(path)


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("localhost", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


class Cluster:
    """The worker processes of one run (worker 0 is the chief), worker i in the folder
    `folders[i]` with the extra flags `flags[i]`; all killed on leaving the `with` block,
    whatever happened in it."""

    def __init__(self, config, folders, tmp_path, flags=((), ())):
        addresses = [f"localhost:{port}" for port in free_ports(len(folders))]
        self.processes = []
        for index, (folder, extra) in enumerate(zip(folders, flags)):
            tf_config = {"cluster": {"worker": addresses},
                         "task": {"type": "worker", "index": index}}
            env = {**child_environment(tmp_path), "TF_CONFIG": json.dumps(tf_config)}
            self.processes.append(subprocess.Popen(
                [sys.executable, "-m", "albert_tf.cli.pretrain", "--config", config, *extra],
                cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True))

    def __enter__(self):
        return self

    def __exit__(self, *_):
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.communicate()

    def finish(self, timeout=600):
        outputs = [process.communicate(timeout=timeout)[0] for process in self.processes]
        return [process.returncode for process in self.processes], outputs

    def kill(self):
        for process in self.processes:
            process.send_signal(signal.SIGKILL)
        for process in self.processes:
            process.wait()


def model_weights(checkpoint):
    """Weights and optimizer state of a checkpoint (not the metrics' running sums, which a
    resumed epoch starts again)."""
    reader = tf.train.load_checkpoint(checkpoint)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if name.startswith("model/") and "/_trackers/" not in name}


def wait_for_step(backup_dir, step, processes, timeout=300):
    """Waits until the run's backup is at `step` or later (or a process ends)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and all(p.poll() is None for p in processes):
        try:
            if backup_step(str(backup_dir), STEPS_PER_EPOCH) >= step:
                return
        except (tf.errors.OpError, ValueError):  # a backup being written
            pass
        time.sleep(0.05)
    raise AssertionError(f"the run never reached step {step}")


def assert_same_weights(checkpoint, reference):
    ours = model_weights(checkpoint)
    assert ours.keys() == reference.keys() and any("optimizer" in name for name in ours)
    for name, value in reference.items():
        np.testing.assert_allclose(ours[name], value, rtol=1e-4, atol=1e-5, err_msg=name)


def host_copy(host, folder):
    """A 'host' of its own reading `host`'s shards (a link to them): a run folder named
    relatively is a separate folder on each, as on machines with local disks."""
    folder.mkdir()
    (folder / "shards").symlink_to(host / "shards", target_is_directory=True)
    return folder


def written_files(folder):
    return sorted(os.path.relpath(os.path.join(root, name), folder)
                  for root, _, names in os.walk(folder) for name in names)


def assert_only_the_chief_holds_the_run(cluster, chief_run, worker_run):
    """While `cluster` trains (past its first backup), the lock of the run folder is the
    chief's, and a second command is refused naming the chief; the worker's own view of
    the run folder (a separate folder, `host_copy`) holds no lock, no record and nothing
    but its temporary folders."""
    chief, worker = cluster.processes
    wait_for_step(chief_run / "backup", BACKUP_EVERY, cluster.processes)
    holder = json.loads((chief_run / LOCK_FILE).read_text())
    assert (holder["command"], holder["pid"], holder["host"]) == (
        "albert-pretrain", chief.pid, socket.gethostname())
    with pytest.raises(FolderError, match=rf"in use by albert-pretrain \(pid {chief.pid} on "
                                          rf"host {re.escape(socket.gethostname())},"):
        FolderLock(str(chief_run), "a second albert-pretrain").acquire()
    written = written_files(worker_run)
    assert written and all(
        {"workertemp_1", ".worker_1_scratch"} & set(name.split(os.sep)) for name in written
    ), written
    assert not any(os.path.basename(name) in (LOCK_FILE, RECORD_FILE) for name in written)
    assert chief.poll() is None and worker.poll() is None, "the run ended before the checks"


def finished(cluster):
    codes, outputs = cluster.finish()
    assert codes == [0, 0], outputs[0][-3000:] + outputs[1][-3000:]
    return outputs[0]


def test_a_run_that_loses_a_worker_then_the_whole_cluster_ends_as_if_uninterrupted(
        hosts, tmp_path):
    """One worker killed alone at a seeded step: the chief stops within PEER_LOSS_SECONDS
    saying a peer is gone. Restarted, the cluster resumes; killed whole (SIGKILL) at a later
    seeded step and restarted, it ends with the weights and optimizer state of the same
    config run uninterrupted (beside it, at the same time). The uninterrupted run's chief
    and worker run on hosts of their own: while it trains, only the chief holds its run
    folder, and the worker's temporary folders are gone at the end."""
    rng = np.random.default_rng(78)
    lone_kill = int(rng.integers(BACKUP_EVERY, STEPS // 2))
    cluster_kill = int(rng.integers(lone_kill + 2 * BACKUP_EVERY, STEPS - BACKUP_EVERY))
    machines = [hosts / "host0"] * 2
    straight_hosts = [host_copy(hosts / "host0", tmp_path / name)
                      for name in ("chief_host", "worker_host")]
    straight = run_config(tmp_path / "straight.yaml", "straight")
    config = run_config(tmp_path / "run.yaml", tmp_path / "run")
    backup = tmp_path / "run" / "backup"
    chief_run, worker_run = (host / "straight" for host in straight_hosts)
    with Cluster(straight, straight_hosts, tmp_path) as uninterrupted:
        with Cluster(config, machines, tmp_path) as cluster:
            chief, worker = cluster.processes
            assert_only_the_chief_holds_the_run(uninterrupted, chief_run, worker_run)
            wait_for_step(backup, lone_kill, cluster.processes)
            worker.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            output = chief.communicate(timeout=PEER_LOSS_SECONDS)[0]
            print(f"the chief stopped {time.monotonic() - killed:.1f} s after its peer was "
                  f"killed at step {lone_kill}")
        assert chief.returncode == 2, output[-3000:]
        assert "a peer of this 2-worker cluster is gone" in output, output[-3000:]
        assert "/job:worker/replica:0/task:1" in output
        assert "Start every worker again with the same command" in output

        with Cluster(config, machines, tmp_path) as cluster:
            wait_for_step(backup, cluster_kill, cluster.processes)
            cluster.kill()
            assert [p.returncode for p in cluster.processes] == [-signal.SIGKILL] * 2
        assert not (tmp_path / "run" / "checkpoints" / f"ckpt-{STEPS}.index").exists()

        with Cluster(config, machines, tmp_path) as cluster:
            output = finished(cluster)
        assert "resuming after step" in output and f"finished at step {STEPS}" in output
        finished(uninterrupted)
    assert written_files(worker_run) == []
    assert not (chief_run / LOCK_FILE).exists()
    assert_same_weights(str(tmp_path / "run" / "checkpoints" / f"ckpt-{STEPS}"),
                        model_weights(str(chief_run / "checkpoints" / f"ckpt-{STEPS}")))


def test_a_worker_that_differs_from_the_chief_is_refused_before_step_1(hosts, tmp_path):
    """Worker 1 runs on 'host1', whose shards/ were made from other text with another
    tokenizer, and with another learning rate: both processes stop before any step, and
    the error names all three differences."""
    config = run_config(tmp_path / "run.yaml", tmp_path / "run")
    with Cluster(config, [hosts / "host0", hosts / "host1"], tmp_path,
                 flags=((), ("--override", "optimizer.learning_rate=0.003"))) as cluster:
        codes, outputs = cluster.finish(timeout=300)
    assert codes == [2, 2], outputs[0][-3000:] + outputs[1][-3000:]
    for output in outputs:
        assert "refused before step 1" in output, output[-3000:]
        assert "worker 1 differs from the chief" in output
        assert "config.optimizer.learning_rate: chief 0.002, worker 1 0.003" in output
        assert "tokenizer.checksum: chief 'sha256:" in output
        assert re.search(r"shards\.\S*train-00000-of-00002\.tfrecord: chief \d+, worker 1 "
                         r"\d+", output), output[-3000:]
    assert not (tmp_path / "run" / "backup").exists()
    assert not list((tmp_path / "run").glob("checkpoints/ckpt-*"))
