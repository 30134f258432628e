"""What prompt caching saves: recorded agent trajectories priced with and without it.

    DGM_POLYGLOT_DIR=... dgm run /tmp/x --dry-run      # records the trajectories
    python perf/bench_prompt_cache.py /tmp/x

Every request of the run's exchange logs (`logs/**/llm*.jsonl`) is sent again, byte for
byte, through the real gateway bound to `anthropic/claude-sonnet-4-5` at its list
prices ($3/Mtok input, $3.75 cache write, $0.30 cache read, $15 output), against a
local fake of the Messages API that caches prefixes the way Anthropic documents
(tests/gateway/fake_prompt_cache.py): once with `llm.prompt_caching = false`, once with
it on. Output tokens are the recorded ones in both, so only the input side differs.
Printed: the longest trajectory alone, then the whole run (jobs in their recorded
order, sharing one cache as one API account does).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dgm.gateway import Gateway, GatewaySettings, JobBinding, RetryPolicy  # noqa: E402
from dgm.gateway.exchange_log import read_exchanges  # noqa: E402
from tests.gateway.fake_prompt_cache import PromptCacheModel  # noqa: E402
from tests.gateway.fake_upstream import FakeUpstream, reply  # noqa: E402

MODEL = "anthropic/claude-sonnet-4-5"
INPUT, OUTPUT = 3.0, 15.0  # $/Mtok, for the "no caching" column's check

Line = dict[str, Any]


def trajectories(run_dir: Path) -> dict[str, list[Line]]:
    """Each exchange log's successful calls, keyed by the log's path in the run."""
    found = {}
    for path in sorted((run_dir / "logs").rglob("llm*.jsonl")):
        lines = [line for line in read_exchanges(path) if line.get("response")]
        if lines:
            found[str(path.relative_to(run_dir))] = lines
    return found


def price(logs: dict[str, list[Line]], caching: bool) -> dict[str, float]:
    """Replay the requests (in recorded order) and return the gateway's booked totals."""
    upstream = FakeUpstream().start()
    os.environ["ANTHROPIC_BASE_URL"] = upstream.url
    os.environ["ANTHROPIC_API_KEY"] = "benchmark-no-key"  # a real key never leaves here
    cache = PromptCacheModel()
    gw = Gateway(GatewaySettings(MODEL, prompt_caching=caching, retry=RetryPolicy(max_retries=0)))
    gw.start()
    try:
        order = sorted(
            ((line["ts"], name, i) for name, lines in logs.items() for i, line in enumerate(lines))
        )
        for _, name, i in order:
            line = logs[name][i]
            out = (line.get("usage") or {}).get("output_tokens", 0)
            upstream.push(reply("ok", usage=(0, out, 0), cache=cache))
            binding = JobBinding("bench", name, role=line.get("role") or "solve")
            gw.complete(binding, line["request"])
        run = gw.totals().run
    finally:
        gw.stop()
        upstream.stop()
    output_usd = run.output_tokens * OUTPUT / 1e6
    return {
        "calls": run.calls,
        "input_tokens": run.input_tokens,
        "cache_read": run.cached_tokens,
        "cache_write": run.cache_write_tokens,
        "input_usd": run.cost_usd - output_usd,
        "output_usd": output_usd,
    }


def show(title: str, logs: dict[str, list[Line]]) -> float:
    plain, cached = price(logs, caching=False), price(logs, caching=True)
    assert abs(plain["input_usd"] - plain["input_tokens"] * INPUT / 1e6) < 1e-9
    ratio = plain["input_usd"] / cached["input_usd"] if cached["input_usd"] else float("inf")
    print(f"\n{title}: {plain['calls']} calls, {plain['input_tokens']:,} input tokens")
    print(f"  {'':24}{'no caching':>14}{'caching':>14}")
    for label, key, fmt in (
        ("cache reads (tokens)", "cache_read", "{:,}"),
        ("cache writes (tokens)", "cache_write", "{:,}"),
        ("input $", "input_usd", "${:.4f}"),
        ("output $", "output_usd", "${:.4f}"),
    ):
        print(f"  {label:24}{fmt.format(plain[key]):>14}{fmt.format(cached[key]):>14}")
    total_plain = plain["input_usd"] + plain["output_usd"]
    total_cached = cached["input_usd"] + cached["output_usd"]
    print(f"  {'total $':24}{f'${total_plain:.4f}':>14}{f'${total_cached:.4f}':>14}")
    print(f"  input {ratio:.1f}x cheaper with caching; total {total_plain / total_cached:.1f}x")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path, help="a run folder with logs/ (e.g. a dry run)")
    args = parser.parse_args()
    logs = trajectories(args.run_dir)
    if not logs:
        sys.exit(f"no exchange logs under {args.run_dir}/logs: record a run first (see --help)")
    longest = max(logs, key=lambda name: len(logs[name]))
    print(f"{MODEL} list prices; recordings from {args.run_dir}")
    show(f"longest trajectory ({longest})", {longest: logs[longest]})
    show(f"whole run ({len(logs)} trajectories)", logs)


if __name__ == "__main__":
    main()
