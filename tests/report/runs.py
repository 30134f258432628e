"""Runs to report on: a real small run and a synthetic 1,000-node run.

The small run is built through the store's library API from the real seed_agent/ folder:
real child codebases, and evaluations whose logs come from really running each node's
agent (`run.py solve`) against a scripted OpenAI-compatible server on tiny Python
exercises, judged by really running their unit tests. The gateway's exchange log is
written with the gateway's own ExchangeLog. (When the meta loop lands, a loop-made run
replaces this.)

The 1,000-node run writes its commits with one `git fast-import` and its rows in bulk,
so it builds in a few seconds; a small share of its evaluations have log files.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dgm.config import RunConfig
from dgm.gateway.exchange_log import ExchangeLog
from dgm.gateway.types import JobBinding, Usage
from dgm.store import Evaluation, Run

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "seed_agent"
sys.path.insert(0, str(SEED / "tests"))
from seed_fake_gateway import FakeGateway, tool_call  # noqa: E402

# Tiny exercises in the shape of Polyglot's Python ones: a stub, hidden tests, a solution.
EXERCISES = {
    "python__leap": (
        "leap.py",
        "def leap_year(year):\n    pass\n",
        "def leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n",
        "from leap import leap_year\n\n\nclass LeapTest(unittest.TestCase):\n"
        "    def test_2000(self):\n        self.assertTrue(leap_year(2000))\n\n"
        "    def test_1900(self):\n        self.assertFalse(leap_year(1900))\n\n"
        "    def test_1996(self):\n        self.assertTrue(leap_year(1996))\n",
    ),
    "python__two-fer": (
        "two_fer.py",
        "def two_fer(name='you'):\n    pass\n",
        "def two_fer(name='you'):\n    return f'One for {name}, one for me.'\n",
        "from two_fer import two_fer\n\n\nclass TwoFerTest(unittest.TestCase):\n"
        "    def test_default(self):\n"
        "        self.assertEqual(two_fer(), 'One for you, one for me.')\n\n"
        "    def test_name(self):\n"
        "        self.assertEqual(two_fer('Bo'), 'One for Bo, one for me.')\n",
    ),
    "python__reverse-string": (
        "reverse_string.py",
        "def reverse(text):\n    pass\n",
        "def reverse(text):\n    return text[::-1]\n",
        "from reverse_string import reverse\n\n\nclass ReverseTest(unittest.TestCase):\n"
        "    def test_word(self):\n        self.assertEqual(reverse('robot'), 'tobor')\n\n"
        "    def test_empty(self):\n        self.assertEqual(reverse(''), '')\n",
    ),
}

# node -> (parent, problem statement, file edit, status, {task: behaviour}); behaviour is
# "solve" (correct code), "wrong" (code that fails the tests) or "empty" (no change).
PLAN = [
    (
        None,
        "seed",
        None,
        "active",
        {"python__leap": "solve", "python__two-fer": "wrong", "python__reverse-string": "empty"},
    ),
    (
        0,
        "The agent edits files without running the tests first, so it misses failures it "
        "could have seen. Add to the system prompt: run the tests before calling finish.",
        ("prompts/system.txt", "\nBefore you call finish, run the tests and read their output.\n"),
        "active",
        {"python__leap": "solve", "python__two-fer": "solve", "python__reverse-string": "wrong"},
    ),
    (
        0,
        "Shorten the bash tool's timeout so hanging commands fail fast.",
        ("coder/tools/bash.py", "\nDEFAULT_TIMEOUT_S = 5  # fail fast\n"),
        "rejected",
        {"python__leap": "empty"},
    ),
    (
        1,
        "The agent returns None for empty inputs. Tell it to check edge cases such as "
        "empty strings and zero before finishing.",
        ("prompts/system.txt", "Check edge cases (empty input, zero, negatives) explicitly.\n"),
        "active",
        {"python__leap": "solve", "python__two-fer": "solve", "python__reverse-string": "solve"},
    ),
    (
        1,
        "Give the agent a note on reading the task statement twice.",
        ("prompts/task.txt", "\nRead the task statement twice before you start.\n"),
        "active",
        {"python__leap": "wrong", "python__two-fer": "solve", "python__reverse-string": "empty"},
    ),
]
BEST_NODE = 3


def make_small_run(path: Path) -> Run:
    """The small run described above (about 10 s: it runs the agent 13 times)."""
    run = Run.create(path, RunConfig(name="small"), SEED)
    for node_id, (parent, origin, edit, status, behaviour) in enumerate(PLAN):
        if parent is not None:
            with tempfile.TemporaryDirectory() as tmp:
                code = run.checkout(parent, Path(tmp) / "code")
                target = code / edit[0]
                target.write_text(target.read_text() + edit[1])
                job = f"expand-{node_id}"
                node = run.add_node(parent, tree=code, origin=origin, status=status, job_id=job)
            assert node.id == node_id
            for role, tokens in (("diagnose", 1800), ("self_improve", 5200)):
                _usage(run, node_id, None, role, tokens, 300, job=job)
        for task_id, how in behaviour.items():
            _evaluate(run, node_id, task_id, how)
    return run


def _usage(
    run: Run, node: int, task: str | None, role: str, tin: int, tout: int, job: str = ""
) -> float:
    cost = round(tin * 3e-6 + tout * 15e-6, 6)
    run.record_usage(
        {
            "job_id": job or f"{role}-{node}-{task}",
            "node_id": node,
            "task_id": task,
            "role": role,
            "model": "scripted/demo",
            "input_tokens": tin,
            "output_tokens": tout,
            "cost_usd": cost,
            "latency_s": 0.4,
        }
    )
    return cost


def _script(stub_file: str, how: str, solution: str, wrong: str):
    def answer(request: dict):
        done = [m for m in request["messages"] if m["role"] == "tool"]
        if not done:
            return tool_call("bash", call_id="c1", command="ls && cat " + stub_file)
        if len(done) == 1 and how != "empty":
            text = solution if how == "solve" else wrong
            return tool_call("create", call_id="c2", path=stub_file, file_text=text)
        return tool_call("finish", call_id="c3", summary=f"implemented {stub_file}")

    return answer


def _evaluate(run: Run, node_id: int, task_id: str, how: str) -> None:
    stub_file, stub, solution, tests = EXERCISES[task_id]
    wrong = stub.replace("pass", "return None")
    logs = run.log_dir("eval", str(node_id), task_id)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        agent, work = run.checkout(node_id, tmp / "agent"), tmp / "work"
        work.mkdir()
        (work / stub_file).write_text(stub)
        subprocess.run(["git", "init", "-q", str(work)], check=True)
        subprocess.run(["git", "-C", str(work), "add", "."], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(work),
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "stub",
            ],
            check=True,
        )
        task = {
            "id": task_id,
            "problem_statement": f"Implement {stub_file}.",
            "max_steps": 5,
            "language": "python",
            "time_limit_s": 60,
        }
        (tmp / "task.json").write_text(json.dumps(task))
        started = time.time()
        with FakeGateway(_script(stub_file, how, solution, wrong), unix=False) as gateway:
            subprocess.run(
                [
                    sys.executable,
                    "-B",
                    str(agent / "run.py"),
                    "solve",
                    "--workdir",
                    str(work),
                    "--task",
                    str(tmp / "task.json"),
                    "--out",
                    str(logs),
                ],
                env={"PATH": "/usr/bin:/bin", **gateway.env()},
                capture_output=True,
                check=True,
                timeout=60,
            )
            requests = [r["body"] for r in gateway.requests]
        agent_s = time.time() - started
        _write_exchange_log(
            logs, node_id, task_id, requests, _script(stub_file, how, solution, wrong)
        )
        patch = subprocess.run(
            ["git", "-C", str(work), "diff"], capture_output=True, text=True, check=True
        ).stdout
        (logs / "patch.diff").write_text(patch)
        (work / "test_hidden.py").write_text("import unittest\n\n" + tests)
        judged = subprocess.run(
            [sys.executable, "-m", "unittest", "-v", "test_hidden"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=60,
        )
    output = judged.stdout + judged.stderr
    (logs / "test_output.txt").write_text(output)
    total = output.count(" ... ")
    passed = output.count(" ... ok")
    cost = sum(
        _usage(run, node_id, task_id, "solve", 900 + 400 * i, 120) for i in range(len(requests))
    )
    run.record_evaluation(
        Evaluation(
            node_id=node_id,
            task_id=task_id,
            benchmark="polyglot",
            resolved=judged.returncode == 0,
            empty_patch=not patch.strip(),
            tests_passed=passed,
            tests_total=total,
            agent_seconds=agent_s,
            judge_seconds=0.2,
            cost_usd=cost,
            log_dir=run.relative(logs),
        )
    )


def _write_exchange_log(logs: Path, node: int, task: str, requests: list, script) -> None:
    log = ExchangeLog(logs / "llm.jsonl")
    binding = JobBinding(run="small", job_id=f"eval-{node}-{task}", node_id=node, task_id=task)
    for i, request in enumerate(requests):
        _, response = script(request)
        log.append(
            ts=time.time(),
            call=i + 1,
            binding=binding,
            model="scripted/demo",
            latency_s=0.05,
            attempts=1,
            usage=Usage(900 + 400 * i, 120),
            cost_usd=0.0,
            error=None,
            request=request,
            response=response,
        )


# ---- the synthetic 1,000-node run --------------------------------------------------------
def make_big_run(path: Path, n: int = 1000, tasks: int = 50, seed: int = 7) -> Run:
    """A DGM-shaped run of `n` nodes: wide and shallow, ~10 tasks per node, 50 for some."""
    rng = random.Random(seed)
    seed_dir = path.parent / (path.name + "-seed")
    seed_dir.mkdir(parents=True)
    (seed_dir / "agent.toml").write_text(
        '[agent]\nname = "synthetic"\n[commands]\nsolve = "true"\n'
    )
    (seed_dir / "agent.py").write_text("SKILL = 0\n")
    run = Run.create(path, RunConfig(name="synthetic-1000"), seed_dir)
    shutil.rmtree(seed_dir)
    task_ids = [
        f"{lang}__exercise-{i:02d}"
        for i, lang in zip(
            range(tasks),
            ["python", "go", "rust", "cpp", "java", "javascript"] * tasks,
            strict=False,
        )
    ]
    skill = {0: 0.3}
    parents, depth, status, lines = {0: None}, {0: 0}, {0: "active"}, {0: ["SKILL = 0"]}
    t0 = run.node(0).created_at
    for i in range(1, n):
        # Preferential: better nodes are picked more often, like DGM's score-weighted choice.
        active = [k for k in parents if status[k] == "active"]
        p = rng.choices(active, weights=[0.05 + skill[k] ** 2 for k in active])[0]
        parents[i], depth[i] = p, depth[p] + 1
        status[i] = "rejected" if rng.random() < 0.12 else "active"
        skill[i] = min(0.95, max(0.0, skill[p] + rng.gauss(0.01, 0.06)))
        lines[i] = lines[p] + [f"# node {i}: tweak {rng.randrange(10**6)}"]
    shas = _fast_import(run, parents, lines)
    evals, usage = [], []
    for i in range(1, n):
        created = t0 + i * 36.0
        usage.append((created, f"x{i}", i, None, "self_improve", "m", 6000, 900, 0, 0.032))
        usage.append((created, f"d{i}", i, None, "diagnose", "m", 2000, 300, 0, 0.011))
        if status[i] == "rejected":
            continue
        chosen = task_ids if skill[i] > 0.55 and rng.random() < 0.5 else task_ids[:10]
        for k, task in enumerate(chosen):
            ok = rng.random() < skill[i]
            ts = created + 1 + k * 0.5
            log = f"logs/eval/{i}/{task}" if i % 10 == 0 else None
            evals.append(
                (
                    i,
                    task,
                    "polyglot",
                    int(ok),
                    int(not ok and rng.random() < 0.2),
                    3 if ok else 1,
                    3,
                    40.0,
                    0.005,
                    log,
                    ts,
                )
            )
            usage.append((ts, f"e{i}-{k}", i, task, "solve", "m", 30000, 2500, 0, 0.0055))
    with run.db.transaction() as conn:
        conn.executemany(
            "INSERT INTO nodes(id, parent_id, commit_sha, depth, created_at, status, origin, meta)"
            " VALUES (?,?,?,?,?,?,?,'{}')",
            [
                (
                    i,
                    parents[i],
                    shas[i],
                    depth[i],
                    t0 + i * 36.0,
                    status[i],
                    f"Problem statement {i}: make the agent better at task family {i % 7}.",
                )
                for i in range(1, n)
            ],
        )
        conn.executemany(
            "INSERT INTO evaluations(node_id, task_id, benchmark, resolved, empty_patch,"
            " tests_passed, tests_total, agent_seconds, cost_usd, log_dir, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            evals,
        )
        conn.executemany(
            "INSERT INTO llm_usage(ts, job_id, node_id, task_id, role, model, input_tokens,"
            " output_tokens, cached_tokens, cost_usd) VALUES (?,?,?,?,?,?,?,?,?,?)",
            usage,
        )
    run.archive.set_refs({i: shas[i] for i in range(1, n)})
    for e in evals:
        if e[9]:
            folder = run.path / e[9]
            folder.mkdir(parents=True)
            (folder / "test_output.txt").write_text("ok\n" if e[3] else "FAILED\n")
    return run


def _fast_import(run: Run, parents: dict, lines: dict) -> dict[int, str]:
    """Write one commit per non-seed node in one `git fast-import` process."""
    seed_sha = run.node(0).commit
    stream = []
    for i in sorted(parents):
        if i == 0:
            continue
        body = "\n".join(lines[i]) + "\n"
        message = f"node {i}"
        source = f"from {seed_sha}" if parents[i] == 0 else f"from :{parents[i]}"
        stream += [
            "commit refs/dgm-synthetic/tmp",
            f"mark :{i}",
            "committer dgm <dgm@localhost> 1700000000 +0000",
            f"data {len(message)}",
            message,
            source,
            "M 100644 inline agent.py",
            f"data {len(body.encode())}",
            body,
        ]
    marks = run.path / "marks.tmp"
    subprocess.run(
        [
            "git",
            "--git-dir",
            str(run.archive.path),
            "fast-import",
            "--quiet",
            f"--export-marks={marks}",
        ],
        input="\n".join(stream) + "\n",
        text=True,
        check=True,
    )
    subprocess.run(
        ["git", "--git-dir", str(run.archive.path), "update-ref", "-d", "refs/dgm-synthetic/tmp"],
        check=True,
    )
    shas = {}
    for line in marks.read_text().splitlines():
        mark, sha = line.split()
        shas[int(mark[1:])] = sha
    marks.unlink()
    return shas
