"""SIGKILL the saving process at random points, many times: the results directory stays consistent.

Every stored run must be complete and loadable, none stored twice, and none that the saver
reported as stored may be missing afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests._data import PROJECT

KILLS = 60

CHILD = r"""
import json, sys
from pathlib import Path
from memeval_core.store import add_files

results = Path(sys.argv[1])
payloads = [Path(p).read_bytes() for p in sys.argv[2:]]

def validate(name, data):
    json.loads(data)

for i, data in enumerate(payloads):
    for r in add_files(results, [(f"run-{i % 5}.json", data)], validate):
        print(r.status, r.sha256, flush=True)
"""


def test_sigkill_during_saves_never_corrupts_or_loses(tmp_path: Path) -> None:
    rng = random.Random(20261129)
    sources = []
    for i in range(30):
        p = tmp_path / f"src-{i}.json"
        # Large enough that a kill can land mid-write.
        p.write_bytes(json.dumps({"run": i, "cases": [{"id": j, "pad": "x" * 200} for j in range(2000)]}).encode())
        sources.append(p)
    expected = {hashlib.sha256(p.read_bytes()).hexdigest(): p.read_bytes() for p in sources}
    results = tmp_path / "results"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    reported: set[str] = set()
    killed_mid_run = 0
    for _ in range(KILLS):
        order = sources[:]
        rng.shuffle(order)
        proc = subprocess.Popen(
            [sys.executable, str(script), str(results), *map(str, order)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        time.sleep(rng.uniform(0.02, 0.35))
        if proc.poll() is None:
            killed_mid_run += 1
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        for line in out.splitlines():
            status, digest = line.split()
            if status == "stored":
                reported.add(digest)
        stored = [p for p in (results / "uploads").iterdir() if not p.name.startswith(".")] if results.exists() else []
        digests = [hashlib.sha256(p.read_bytes()).hexdigest() for p in stored]
        assert all(d in expected for d in digests), "a stored file is incomplete or corrupt"
        assert len(digests) == len(set(digests)), "a run was stored twice"
        assert reported <= set(digests), "a run reported as stored is missing"
        for p in stored:
            json.loads(p.read_bytes())
    assert killed_mid_run >= KILLS // 2, "most kills must land while the saver is still working"
    out = Path(__file__).parent / "artifacts"
    out.mkdir(exist_ok=True)
    (out / "crash.json").write_text(json.dumps({"kills": KILLS, "killed_mid_run": killed_mid_run}) + "\n")
