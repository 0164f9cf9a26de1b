"""A local Spark standalone cluster to run dicegraph on: a master, workers and the Spark Thrift server, on 127.0.0.1;
or, with no workers, the Thrift server alone in Spark's local mode (it runs the tasks itself, in threads).

Everything it writes stays in one folder: the processes' ids (``*.pid``), their logs (``logs/``), the warehouse
of Parquet files (``warehouse/``) and the metastore (``metastore_db/``). The processes come from PyPI's
``pyspark`` (``pip install -e '.[spark]'``), which carries Spark's jars, and need Java 17 or later
(Debian: ``apt-get install openjdk-17-jre-headless``). :func:`start` returns the ``--db`` URL once the Thrift
server answers; :func:`stop` stops them all, whatever state they are in; :func:`stop_when_gone` has a process
of its own stop them once a given process has ended, however it ended (the tests' fixture, killed by a signal).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dicegraph.graphs.errors import DicegraphError
from dicegraph.store.output import write_file
from dicegraph.store.backends.spark.processes import process_runs

DEFAULT_FOLDER = Path(".dicegraph-spark")
DEFAULT_PORT = 10000  # the Thrift server's (HiveServer2's usual port)
WORKERS = 2  # the default; each worker has one core, and 0 runs Spark's local mode with that many threads
WORKER_MEMORY_GB = 1  # each worker's, and its one executor's (local mode: the Thrift server's, once a thread)
PARTITIONS_PER_CORE = 2  # shuffle partitions; Spark's default, 200, makes every small grouping 200 tasks and files
# the JVMs that run statements collect garbage with the parallel collector rather than G1: checks on the local
# cluster take about 12 % less of the processors (docs/spark.md), which the test suite's other workers share
JAVA_OPTIONS = "-XX:+UseParallelGC"
# the Thrift server runs each statement on a thread of a pool this large, each new thread opening its own metastore
# connection (a Hive configuration parsed from XML): Hive's default of 100 makes a new thread for each of the first
# hundred statements while older ones sit idle; a few kept threads take 6 % less Java processor time a check
# (docs/spark.md), and more statements at once than this wait in the pool's queue
STATEMENT_THREADS = 8
# Spark's processes log their warnings and errors, and at INFO only which statement runs or is cancelled and the
# tasks an executor runs or kills: at Spark's own INFO a check of Jackpot logged 24,000 lines (5.2 MB; 1.1 GB of
# logs/thrift.log over a few days of use here) against about 4,500 (2.8 MB), the Java processor time the same
LOGGING = """\
rootLogger.level = warn
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.statements.name = org.apache.spark.sql.hive.thriftserver.SparkExecuteStatementOperation
logger.statements.level = info
logger.tasks.name = org.apache.spark.executor.Executor
logger.tasks.level = info
"""
STARTUP_SECONDS = 240  # how long the processes may take to answer before start gives up
THRIFT_SERVER = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
MOST_WORKERS = 16  # ``--workers`` goes up to this many
ROLES = ("thrift", *(f"worker{number}" for number in range(1, MOST_WORKERS + 1)), "master")  # stopped in this order


class ClusterError(DicegraphError):
    """A local cluster that cannot start, or a missing Java or Spark."""


@dataclass(frozen=True)
class Cluster:
    """A local cluster's folder, the port its Thrift server listens on and its number of workers (0: the Thrift
    server alone, in Spark's local mode, which spends a tenth to a third less time a statement on one machine)."""

    folder: Path = DEFAULT_FOLDER
    port: int = DEFAULT_PORT
    workers: int = WORKERS

    @property
    def url(self) -> str:
        """Return the ``--db`` URL of the cluster's default database.

        >>> Cluster(Path("x"), 10001).url
        'spark://127.0.0.1:10001/default'
        """
        return f"spark://127.0.0.1:{self.port}/default"

    @property
    def roles(self) -> tuple[str, ...]:
        """Return the processes the cluster runs, in the order they stop.

        >>> Cluster(workers=2).roles, Cluster(workers=0).roles
        (('thrift', 'worker1', 'worker2', 'master'), ('thrift',))
        """
        workers = tuple(f"worker{number}" for number in range(1, self.workers + 1))
        return ("thrift", *workers, "master") if workers else ("thrift",)

    @property
    def cores(self) -> int:
        """Return how many tasks the cluster runs at once: a core a worker, or local mode's threads.

        >>> Cluster(workers=3).cores, Cluster(workers=0).cores
        (3, 2)
        """
        return self.workers or WORKERS

    def pid_file(self, role: str) -> Path:
        """Return the file holding the process id of ``role`` (master, workerN, thrift)."""
        return self.folder / f"{role}.pid"

    def log_file(self, role: str) -> Path:
        """Return the file ``role``'s output goes to."""
        return self.folder / "logs" / f"{role}.log"


def spark_home() -> Path:
    """Return the folder of the Spark that pyspark installed; raise ClusterError naming what to install."""
    try:
        from pyspark.find_spark_home import _find_spark_home
    except ImportError:
        raise ClusterError("Spark is not installed: pip install -e '.[spark]' (pyspark brings Spark's jars)") from None
    return Path(_find_spark_home())


def java_found() -> bool:
    """Return whether a Java runtime is there to run Spark (``$JAVA_HOME/bin/java`` or ``java`` on the PATH)."""
    home = os.environ.get("JAVA_HOME")
    return bool(home and (Path(home) / "bin" / "java").exists()) or shutil.which("java") is not None


def java_property(name: str, path: Path) -> str:
    """Return the Java option that sets property ``name`` to ``path``, quoted as Spark splits its Java options (a
    folder's name may hold spaces and quotes).

    >>> print(java_property("derby.system.home", Path('/tmp/my "games"')))
    -Dderby.system.home="/tmp/my \\"games\\""
    """
    quoted = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'-D{name}="{quoted}"'


def _java_options(cluster: Cluster) -> str:
    """Return the options of every Java process of the cluster: :data:`JAVA_OPTIONS` and its logging, the folder's
    ``log4j2.properties`` (:data:`LOGGING` written there unless the file is there already, perhaps edited)."""
    logging = cluster.folder / "log4j2.properties"
    if not logging.exists():
        write_file(logging, LOGGING, new=True)
    return f"{JAVA_OPTIONS} {java_property('log4j2.configurationFile', logging)}"


def _environment(cluster: Cluster, java_options: str) -> dict[str, str]:
    """Return the environment the cluster's processes start in, the master's and workers' Java options among it."""
    if not java_found():
        raise ClusterError("Spark needs Java 17 or later and none was found: apt-get install openjdk-17-jre-headless "
                           "(or set JAVA_HOME)")
    return {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(cluster.folder / "logs"), "SPARK_WORKER_DIR": str(cluster.folder / "work"),
            "SPARK_DAEMON_JAVA_OPTS": java_options}


def _alive(pid: int) -> bool:
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False  # a child of this process, ended (and now reaped)
    except ChildProcessError:
        pass  # not this process's child
    return process_runs(pid)


def running(cluster: Cluster) -> dict[str, int]:
    """Return role -> process id of the cluster's processes still running."""
    found = {}
    for role in ROLES:
        try:
            pid = int(cluster.pid_file(role).read_text())
        except (OSError, ValueError):
            continue
        if _alive(pid):
            found[role] = pid
    return found


def answers(port: int, host: str = "127.0.0.1") -> bool:
    """Return whether something accepts connections on ``host:port``."""
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((host, port)) == 0


def free_port() -> int:
    """Return a TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _launch(cluster: Cluster, role: str, command: list[str], environment: dict[str, str]) -> subprocess.Popen:
    """Start ``command`` as ``role``, in a session of its own (a Ctrl-C of the caller leaves it running), its output
    in its log file and its id in its pid file."""
    with cluster.log_file(role).open("ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=environment, cwd=cluster.folder, start_new_session=True)
    write_file(cluster.pid_file(role), str(process.pid))
    return process


def _wait_for(cluster: Cluster, role: str, process: subprocess.Popen, port: int, deadline: float) -> None:
    """Wait until ``port`` answers; raise ClusterError (stopping the cluster) if ``process`` ends or time runs out."""
    while not answers(port):
        if process.poll() is not None or time.monotonic() > deadline:
            why = "stopped" if process.poll() is not None else f"did not answer within {STARTUP_SECONDS} s"
            stop(cluster)
            raise ClusterError(f"the Spark {role} {why}: see {cluster.log_file(role)}")
        time.sleep(0.5)


def start(cluster: Cluster, told: Callable[[str], None] = lambda line: None) -> str:
    """Start the cluster's master, workers and Thrift server unless they run already; return the ``--db`` URL once
    the Thrift server answers. ``told`` hears each step. Raises ClusterError when Java or Spark is missing, when
    the port is taken by something else, or when a process does not come up (the others are stopped then)."""
    found = running(cluster)
    if found.keys() == set(cluster.roles) and answers(cluster.port):
        told(f"the cluster in {cluster.folder} is running already")
        return cluster.url
    if found:
        told(f"the cluster in {cluster.folder} runs otherwise (or in part): stopping it to start it as asked")
    stop(cluster)
    if answers(cluster.port):
        raise ClusterError(f"port {cluster.port} is taken by another program: give another (--port)")
    for part in ("logs", "warehouse", "work"):
        (cluster.folder / part).mkdir(parents=True, exist_ok=True)
    cluster = Cluster(cluster.folder.resolve(), cluster.port, cluster.workers)
    java_options = _java_options(cluster)
    environment = _environment(cluster, java_options)
    deadline = time.monotonic() + STARTUP_SECONDS
    if cluster.workers:
        master = _start_master_and_workers(cluster, environment, deadline, told)
        placement = ["--master", master, "--conf", f"spark.executor.memory={WORKER_MEMORY_GB}g",
                     "--conf", "spark.executor.cores=1", "--conf", f"spark.cores.max={cluster.workers}",
                     "--conf", f"spark.executor.extraJavaOptions={java_options}"]
    else:
        placement = ["--master", f"local[{cluster.cores}]", "--driver-memory", f"{cluster.cores * WORKER_MEMORY_GB}g"]
    told(f"starting the Thrift server on 127.0.0.1:{cluster.port} (about a minute)")
    thrift = _launch(cluster, "thrift", [
        str(spark_home() / "bin" / "spark-submit"), "--class", THRIFT_SERVER, *placement,
        "--name", "dicegraph", "--conf", f"spark.sql.warehouse.dir={cluster.folder / 'warehouse'}",
        "--conf", f"spark.driver.extraJavaOptions={java_property('derby.system.home', cluster.folder)} {java_options}",
        "--conf", "spark.ui.enabled=false",
        "--conf", f"spark.sql.shuffle.partitions={PARTITIONS_PER_CORE * cluster.cores}",
        "--conf", "spark.sql.runSQLOnFiles=false",
        "--conf", "spark.locality.wait=0s", "--conf", "spark.sql.adaptive.enabled=false",
        "--conf", "spark.sql.filesourceTableRelationCacheSize=0",
        "--hiveconf", f"hive.server2.thrift.port={cluster.port}",
        "--hiveconf", "hive.server2.thrift.bind.host=127.0.0.1",
        "--hiveconf", f"hive.server2.async.exec.threads={STATEMENT_THREADS}",
        "spark-internal"], environment)
    _wait_for(cluster, "Thrift server", thrift, cluster.port, deadline)
    return cluster.url


def _start_master_and_workers(cluster: Cluster, environment: dict[str, str], deadline: float,
                              told: Callable[[str], None]) -> str:
    """Start the standalone master and ``cluster.workers`` workers of one core each; return the master's URL."""
    home = spark_home()
    master_port = free_port()
    master_url = f"spark://127.0.0.1:{master_port}"
    told(f"starting the master on {master_url}")
    master = _launch(cluster, "master", [str(home / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master",
                                         "--host", "127.0.0.1", "--port", str(master_port), "--webui-port", "0"],
                     environment)
    _wait_for(cluster, "master", master, master_port, deadline)
    for number in range(1, cluster.workers + 1):
        told(f"starting worker {number} of {cluster.workers}")
        _launch(cluster, f"worker{number}", [
            str(home / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker", master_url, "--host",
            "127.0.0.1", "--cores", "1", "--memory", f"{WORKER_MEMORY_GB}g", "--webui-port", "0",
            "--work-dir", str(cluster.folder / "work")], environment)
    return master_url


def stop(cluster: Cluster, told: Callable[[str], None] = lambda line: None, grace: float = 20.0) -> list[str]:
    """Stop the cluster's processes (Thrift server, workers, master: each with SIGTERM, then SIGKILL past ``grace``
    seconds); return the roles stopped. Nothing running is not an error."""
    stopped = []
    for role, pid in sorted(running(cluster).items(), key=lambda item: ROLES.index(item[0])):
        told(f"stopping the {role} (process {pid})")
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        ends = time.monotonic() + grace
        while _alive(pid) and time.monotonic() < ends:
            time.sleep(0.2)
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
        stopped.append(role)
    for role in ROLES:
        cluster.pid_file(role).unlink(missing_ok=True)
    return stopped


WATCH_SECONDS = 1.0  # how often :func:`stop_when_gone`'s watcher looks for the process it waits on


def stop_when_gone(cluster: Cluster, pid: int) -> subprocess.Popen:
    """Start and return a watcher: a process of its own session that stops the cluster (:func:`stop`) once process
    ``pid`` has ended, whether it returned, was stopped by SIGTERM (which runs no ``finally``) or killed. Terminate
    the watcher to call it off, once the cluster is stopped the usual way."""
    code = f"from dicegraph.store.backends.spark.cluster import watch_and_stop; watch_and_stop({pid}, {str(cluster.folder)!r})"
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def watch_and_stop(pid: int, folder: str) -> None:
    """Wait until process ``pid`` has ended, then stop the cluster whose folder is ``folder`` (the watcher's body)."""
    while process_runs(pid):
        time.sleep(WATCH_SECONDS)
    stop(Cluster(Path(folder)))
