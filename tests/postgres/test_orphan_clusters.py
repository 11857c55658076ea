"""A test cluster whose pytest was killed is reaped by the next run, and only such a one.

``pg_ctl`` daemonises PostgreSQL, so SIGKILL on the process that started a
cluster leaves the server running with nobody to stop it. Each cluster's
directory names its owner; ``reap_orphans`` stops the ones whose owner has
ended and leaves alone the ones of runs still going (another checkout's suite
on the same machine) and any it cannot attribute.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.postgres import _owner_mark, reap_orphans
from tests.support.wait import eventually

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[2]
STARTS_A_CLUSTER = (
    "from tests.support.postgres import PostgresServer\n"
    "server = PostgresServer().start()\n"
    "print(server.root, flush=True)\n"
    "import time; time.sleep(600)\n"
)


@pytest.fixture
def shared_tmp():
    """A temp dir of this test's own that the ``postgres`` user can enter
    (pytest's tmp_path is private to root), so reaping never looks at the
    clusters of the session or of other runs on the machine."""
    path = Path(tempfile.mkdtemp(prefix="reap-"))
    path.chmod(0o755)
    yield path
    reap_orphans(str(path))  # a cluster left by a failed assertion below
    subprocess.run(["rm", "-rf", str(path)], check=False)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_the_cluster_of_a_killed_run_is_stopped_and_removed(postgres_server, shared_tmp):
    child = subprocess.Popen(
        [sys.executable, "-c", STARTS_A_CLUSTER], cwd=REPO, env={**os.environ, "TMPDIR": str(shared_tmp)},
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    root = Path(child.stdout.readline().strip())
    postmaster = int((root / "data" / "postmaster.pid").read_text().split()[0])
    assert reap_orphans(str(shared_tmp)) == []  # its owner is still running: not an orphan

    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    assert alive(postmaster), "the server outlives its owner, which is why reaping is needed"

    assert reap_orphans(str(shared_tmp)) == [root]
    eventually(lambda: not alive(postmaster), what="the orphaned postmaster to stop")
    assert not root.exists()


def test_clusters_of_live_owners_and_unmarked_ones_are_left_alone(postgres_server, shared_tmp):
    ours = shared_tmp / "escalated-pg-ours"
    ours.mkdir()
    (ours / "owner").write_text(_owner_mark())
    unmarked = shared_tmp / "escalated-pg-unmarked"
    unmarked.mkdir()
    ended = subprocess.run(
        [sys.executable, "-c", "from tests.support.postgres import _owner_mark; print(_owner_mark())"],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    gone = shared_tmp / "escalated-pg-gone"
    gone.mkdir()
    (gone / "owner").write_text(ended.stdout)

    assert reap_orphans(str(shared_tmp)) == [gone]
    assert ours.exists() and unmarked.exists() and not gone.exists()
    assert postgres_server.root not in reap_orphans()  # the session's own cluster: its owner is this run
    assert postgres_server.root.exists()
