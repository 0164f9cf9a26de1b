"""The local cluster's watcher (``dicegraph.store.backends.spark.cluster.stop_when_gone``), which needs no Java: it stops whatever
processes a cluster folder names once the process it waits on has ended."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from dicegraph.store.backends.spark.cluster import Cluster, stop_when_gone


def test_the_watcher_stops_the_cluster_only_once_the_process_it_waits_on_has_ended(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, 0)
    master = subprocess.Popen(["sleep", "120"], start_new_session=True)  # stands for the cluster's master
    cluster.pid_file("master").write_text(str(master.pid))
    waited_on = subprocess.Popen(["sleep", "3"])
    watcher = stop_when_gone(cluster, waited_on.pid)
    time.sleep(1.5)
    assert master.poll() is None and watcher.poll() is None  # the process it waits on still runs
    waited_on.wait()
    deadline = time.monotonic() + 30
    while master.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert master.poll() is not None, "the watcher did not stop the cluster"
    assert watcher.wait(timeout=30) == 0
    assert not cluster.pid_file("master").exists()
