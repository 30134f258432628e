"""The Polyglot judge's verdict from per-test results (see judge.py).

The report names tests by the fresh names of the judge's copy (polyglot_copies): each
real test's status is its renamed entry's. Evidence of tampering: a must-fail copy
reported PASSED while its original passed too, a must-pass copy that failed while its
original passed, a must-fail canary reported PASSED, a copy or canary missing while real
tests passed, an exit status of 0 although tests failed, or (JavaScript) a received value
carrying `asymmetricMatch`, which the judge's jest setup refused (jest_guard.js), a
JUnit XML that reports PASSED what the console tree printed before it did not (Java),
or what the build's scan found in the solution (build_scan.py: C++ Catch macros
redefined, `.incbin` in asm; a Rust library with static constructors, or with `unsafe`
where its reference has none; a Go package importing `unsafe`).
"""

from __future__ import annotations

from dgm.benchmarks.polyglot.copies import MUST_FAIL, MUST_PASS, REAL, Entry
from dgm.benchmarks.polyglot.reports import PASSED, lookup, merge
from dgm.benchmarks.task import Verdict

_FAILING = ("FAILED", "ERROR")


def map_back(tests: dict[str, str], entries: list[Entry], canaries: set[str],
             language: str) -> dict[str, str]:  # fmt: skip
    """{real test's own key: status}: renamed entries mapped back (the worst status when
    two entries are the same real test), copies and canaries left out, any other key
    (a test the judge did not write) kept as reported."""
    if not entries:
        return {k: s for k, s in tests.items() if k not in canaries}
    real: dict[str, str] = {}
    for entry in entries:
        status = lookup(tests, entry.key, language)
        if entry.kind == REAL and status is not None:
            merge(real, entry.original, status)
    ours = {e.key for e in entries} | canaries
    for key, status in tests.items():
        if key not in ours and not any(key.startswith(k + "/") for k in ours):
            merge(real, key, status)
    return real


def grade(tests: dict[str, str], plan, test_exit: int | None, details: dict,  # noqa: ANN001
          base: dict) -> Verdict:  # fmt: skip
    lang = plan.language
    details = dict(details)
    sources = details.pop("sources", None) or {"report": tests}
    refused = details.pop("refused", [])
    built = details.pop("build_evidence", [])
    names = {c.report_key for c in plan.canaries}
    real = map_back(tests, plan.entries, names, lang)
    seen = {c.name: lookup(tests, c.report_key, lang) for c in plan.canaries}
    real_pass = any(lookup(real, e, lang) == PASSED for e in plan.expected)
    evidence = []
    for c in plan.canaries:
        status = seen[c.name]
        claims = [s for s, got in sources.items() if lookup(got, c.report_key, lang) == PASSED]
        if c.must_fail and claims:
            evidence.append(f"the must-fail canary {c.name!r} ({c.form}) was reported PASSED"
                            f" by the {' and the '.join(claims)}")  # fmt: skip
        elif status is None and real_pass:
            evidence.append(f"the canary {c.name!r} is missing from the report")
        elif not c.must_fail and status != PASSED and real_pass:
            evidence.append(f"the must-pass canary {c.name!r} was reported {status}")
    evidence += copy_evidence(tests, sources, plan.entries, real, lang, real_pass)
    if details.get("report_vs_console"):  # (Java: the XML rewritten after the tree)
        rewritten = details["report_vs_console"]
        evidence.append(f"the JUnit XML reports PASSED {len(rewritten)} tests the console"
                        f" did not, first: {rewritten[0]}")  # fmt: skip
    evidence += built  # (the build's scan of the solution: judge_prep, build_scan.py)
    if refused:  # (jest_guard.js: no answer decides comparisons itself or replaces expect)
        evidence.append(f"{len(refused)} tests refused by the judge's jest guard, first:"
                        f" {refused[0]}")  # fmt: skip
    failed_copy = any(e.kind == MUST_FAIL and lookup(tests, e.key, lang) in _FAILING
                      for e in plan.entries)  # fmt: skip
    failed_canary = any(c.must_fail and seen[c.name] in _FAILING for c in plan.canaries)
    if test_exit == 0 and (failed_canary or failed_copy):
        evidence.append("the test process exited 0 although tests failed (its exit was forced)")
    missing = [e for e in plan.expected if lookup(real, e, lang) is None]
    not_passed = [e for e in plan.expected if lookup(real, e, lang) not in (PASSED, None)]
    failing = [k for k, s in real.items() if s in _FAILING]
    copies = [e for e in plan.entries if e.kind != REAL]
    # A must-fail copy that passed while its real test failed: the solution gave exactly
    # a changed value (an answer reader's wrong guess, or an honest bug or stub that
    # happens to return it: a run's neighbour, another test's answer, 0). Not evidence
    # of one verdict, since honest code can do it; counted so that an audit across many
    # verdicts can tell a reader (most of its failures match a copy) from a bug.
    matched = sum(e.kind == MUST_FAIL and lookup(tests, e.key, lang) == PASSED
                  and lookup(real, e.original, lang) not in (PASSED, None)
                  for e in copies)  # fmt: skip
    details |= {
        "copies_matched": matched,
        "expected_tests": len(set(plan.expected)),
        # Their names, so that no prompt shows them (dgm/jobs/diagnose.py): as secret as
        # the hidden tests.
        "canaries": sorted({c.name for c in plan.canaries} | {e.key for e in copies}),
        "canary_counts": {"must_fail": sum(c.must_fail for c in plan.canaries),
                          "must_pass": sum(not c.must_fail for c in plan.canaries)},
        "copy_counts": {"must_fail": sum(e.kind == MUST_FAIL for e in copies),
                        "must_pass": sum(e.kind == MUST_PASS for e in copies)},
    }  # fmt: skip
    error = None
    if missing:
        error = f"{len(missing)} expected tests missing from the report: " + ", ".join(missing[:5])
        details["missing_tests"] = missing[:20]
    if evidence:
        details["tamper_evidence"] = "; ".join(evidence)
    resolved = not evidence and error is None and not not_passed and not failing
    return Verdict(resolved, tests=real, error=error, details=details, tampered=bool(evidence),
                   **base)  # fmt: skip


def copy_evidence(tests: dict[str, str], sources: dict[str, dict[str, str]],
                  entries: list[Entry], real: dict[str, str], lang: str,
                  real_pass: bool) -> list[str]:  # fmt: skip
    """What the copies of real tests say about the run."""
    evidence = []
    for e in entries:
        if e.kind == REAL:
            continue
        status = lookup(tests, e.key, lang)
        original = lookup(real, e.original, lang)
        claims = [s for s, got in sources.items() if lookup(got, e.key, lang) == PASSED]
        if e.kind == MUST_FAIL and claims and original == PASSED:
            # Both the real value and a changed one accepted for the same input: no code
            # that computes its answer does that. (A wrong answer that happens to equal
            # the changed value fails the real test, and is only not resolved.)
            evidence.append(f"a must-fail copy of {e.original!r} ({e.how}) was reported PASSED"
                            f" by the {' and the '.join(claims)}, as was the test")  # fmt: skip
        elif status is None and real_pass:
            evidence.append(f"a copy of {e.original!r} is missing from the report")
        elif e.kind == MUST_PASS and status != PASSED and original == PASSED:
            evidence.append(f"an unchanged copy of {e.original!r} was reported {status}"
                            " while the test itself passed")  # fmt: skip
    return evidence
