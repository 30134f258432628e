"""How to run one Polyglot (Exercism) exercise's tests offline in the toolchain images.

Per language: the image, the test command, and how to un-skip tests. Exercism test
files skip all but the first test (`#[ignore]`, `@Disabled`, `xtest`, a C++ define);
a judge must run them all, the way Aider's benchmark harness does.

    files = exercise_files(exercise_dir)          # from .meta/config.json
    copy_exercise(exercise_dir, workspace)        # without .meta / .docs
    install_reference(exercise_dir, workspace)    # only to validate the setup
    run = run_tests(workspace, "rust")            # in a fresh hardened sandbox
"""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from dgm.errors import DgmError, NotFoundError
from dgm.sandbox import ResourceLimits, SandboxSpec, open_sandbox
from dgm.sandbox.spec import ExecResult

LANGUAGES = ("python", "go", "rust", "cpp", "java", "javascript")
WORKSPACE = "/work"


@dataclass(frozen=True)
class Toolchain:
    language: str
    image: str
    """dgm image name: python needs only `runtime`; the rest need `polyglot`."""
    test_command: str
    """Shell command run in the exercise folder; exit 0 means every test passed."""
    unskip: tuple[tuple[str, str], ...] = ()
    """(regex, replacement) applied to the test files to run skipped tests."""
    test_glob: tuple[str, ...] = field(default_factory=tuple)
    offline_notes: str = ""


TOOLCHAINS: dict[str, Toolchain] = {
    "python": Toolchain(
        "python",
        "runtime",
        "python3 -m pytest -q -p no:cacheprovider",
        (
            (r"^(\s*)@unittest\.skip\b.*$", r"\1"),
            (r"^(\s*)@pytest\.mark\.skip\b.*$", r"\1"),
        ),
    ),
    "go": Toolchain("go", "polyglot", "go test ./..."),
    "rust": Toolchain(
        "rust",
        "polyglot",
        "cargo test --offline --quiet -- --include-ignored",
        offline_notes="crates come from Debian's /usr/share/cargo/registry (anyhow, rand 0.8,"
        " time 0.3); rustc is 1.63, so references using newer syntax do not compile",
    ),
    "cpp": Toolchain(
        "cpp",
        "polyglot",
        "mkdir -p build && cd build && cmake -DEXERCISM_RUN_ALL_TESTS=1 -G 'Unix Makefiles' .."
        " >/dev/null && make -j2",
    ),
    "java": Toolchain(
        "java",
        "polyglot",
        "dgm-java-test",
        ((r"^\s*@Disabled(\([^)]*\))?\s*$", ""),),
        offline_notes="JUnit 5 + AssertJ jars run by a script instead of Gradle; org.json is"
        " Debian's android-json; RxJava is not packaged in Debian",
    ),
    "javascript": Toolchain(
        "javascript",
        "polyglot",
        "cp /usr/local/share/dgm/babel.config.js babel.config.js"
        " && jest --ci --runInBand --no-watchman --rootDir .",
        (
            (r"\bxtest\(", "test("),
            (r"\bxit\(", "it("),
            (r"\bxdescribe\(", "describe("),
            (r"\b(test|it|describe)\.skip\(", r"\1("),
        ),
        offline_notes="Debian's jest 29 + babel preset-env replace the npm devDependencies",
    ),
}


UNSCORABLE = {
    "java__rest-api": "its reference solution cannot pass in this toolchain: the tests compare"
    " JSON strings in org.json's key order, and Debian's android-json (the only org.json in"
    " the image) keeps insertion order (perf/judge_oracle.py java__rest-api:"
    " borrowerHasNegativeBalance fails)",
    "rust__decimal": "its reference solution cannot pass in this toolchain: it needs the"
    " num-bigint crate, which the image does not hold (cargo --offline: no matching package"
    " named `num-bigint`)",
    "rust__alphametics": "its reference solution cannot pass in this toolchain: it needs the"
    " itertools crate, which the image does not hold (cargo --offline: no matching package"
    " named `itertools`)",
    "java__mazy-mice": "its tests cannot build in this toolchain: they call AssertJ's"
    " `hasDimensions`, newer than the image's Debian AssertJ (javac: cannot find symbol)",
}
"""Tasks whose reference solution cannot resolve in this toolchain image, with why: a
true fix could never be scored, so they are left out of subsets (PolyglotTasks.tasks)."""


def toolchain(language: str) -> Toolchain:
    if language not in TOOLCHAINS:
        raise NotFoundError(
            f"no toolchain for language {language!r}", f"use one of: {', '.join(LANGUAGES)}"
        )
    return TOOLCHAINS[language]


@dataclass(frozen=True)
class ExerciseFiles:
    solution: list[str]
    test: list[str]
    example: list[str]


def exercise_files(exercise_dir: Path) -> ExerciseFiles:
    config_path = Path(exercise_dir) / ".meta" / "config.json"
    try:
        files = json.loads(config_path.read_text())["files"]
    except (OSError, KeyError, json.JSONDecodeError) as exc:
        raise DgmError(
            f"cannot read {config_path}: {exc}", "is this an Exercism exercise?"
        ) from None
    return ExerciseFiles(files["solution"], files["test"], files.get("example", []))


TEST_LIKE = ("*_test.*", "*.spec.js", "src/test/*", "test/*", "tests/*")
"""What a test file or test data looks like, by its path or its name."""


def is_test_like(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in TEST_LIKE)


def configured_tests(exercise_dir: Path, language: str) -> list[str]:
    """The test files the exercise's config names (its tests, and editor files that are
    test-like), with C++'s `test/` runner: the files the judge un-skips (unskip_tests).
    Other test-like files (a bonus test, a step-4 leak test) are hidden but stay as the
    exercise ships them."""
    files = exercise_files(exercise_dir)
    meta = json.loads((Path(exercise_dir) / ".meta" / "config.json").read_text())
    editor = meta["files"].get("editor", [])
    found = list(files.test) + [f for f in editor if is_test_like(f)]
    runner = Path(exercise_dir) / "test"
    if language == "cpp" and runner.is_dir():
        found += [str(p.relative_to(exercise_dir)) for p in runner.rglob("*")]
    return sorted(set(found))


def copy_exercise(exercise_dir: Path, workspace: Path) -> Path:
    """Copy an exercise without its dot-folders and node_modules: `.meta` holds the
    reference solution, `.approaches` and `.articles` hold others in their markdown (red
    team round seven W2: a pasted approach resolved), `.docs` is the problem statement.
    Dot-files stay (JavaScript's `.eslintrc`, `.npmrc`)."""
    shutil.copytree(exercise_dir, workspace, ignore=_not_copied)
    for path in [workspace, *workspace.rglob("*")]:  # the checkout may be read-only
        path.chmod(path.stat().st_mode | 0o200)
    return workspace


def _not_copied(folder: str, names: list[str]) -> set[str]:
    here = Path(folder)
    return {n for n in names if n == "node_modules" or (n.startswith(".") and (here / n).is_dir())}


def reference_target(example: str, solutions: list[str], examples: list[str]) -> str:
    """Where a reference file goes: the solution file of the same name; else, when it is
    the only reference file of its kind, the only solution file of its kind; else next to
    the first solution file of its kind (e.g. Java helper classes)."""
    name, suffix = Path(example).name, Path(example).suffix
    for solution in solutions:
        if Path(solution).name == name:
            return solution
    same_ext = [s for s in solutions if Path(s).suffix == suffix]
    if len(same_ext) == 1 and sum(Path(e).suffix == suffix for e in examples) == 1:
        return same_ext[0]
    folder = Path(same_ext[0] if same_ext else solutions[0]).parent
    return str(folder / name)


def install_reference(exercise_dir: Path, workspace: Path) -> None:
    """Put the exercise's reference solution over the stubs (to validate a setup)."""
    files = exercise_files(exercise_dir)
    for example in files.example:
        target = workspace / reference_target(example, files.solution, files.example)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(exercise_dir) / example, target)
    # Some Rust references need crates the stub's Cargo.toml does not declare.
    cargo_example = Path(exercise_dir) / ".meta" / "Cargo-example.toml"
    if cargo_example.is_file():
        shutil.copyfile(cargo_example, workspace / "Cargo.toml")


def unskip_tests(language: str, workspace: Path, test_files: list[str]) -> None:
    rules = toolchain(language).unskip
    for name in test_files:
        path = workspace / name
        if not rules or not path.is_file():
            continue
        text = path.read_text()
        for pattern, replacement in rules:
            text = re.sub(pattern, replacement, text, flags=re.MULTILINE)
        path.write_text(text)


def run_tests(
    workspace: Path,
    language: str,
    timeout: float = 300,
    limits: ResourceLimits | None = None,
    backend: str = "docker",
    test_files: list[str] | None = None,
) -> ExecResult:
    """Run the exercise's tests in a fresh sandbox (un-skipping them first).

    `test_files` are the names from .meta/config.json; found by naming convention if None.
    """
    chain = toolchain(language)
    unskip_tests(language, workspace, test_files or guess_test_files(workspace))
    spec = SandboxSpec(image=chain.image, limits=limits or ResourceLimits(memory="3g", pids=1024))
    target = f"{WORKSPACE}/{workspace.name}"
    with open_sandbox(spec, backend) as box:
        box.copy_in(workspace, WORKSPACE)
        return box.exec(["/bin/sh", "-c", chain.test_command], timeout, workdir=target)


def guess_test_files(workspace: Path) -> list[str]:
    """Test file names by each track's naming convention."""
    patterns = ("*_test.py", "*_test.go", "tests/*.rs", "*_test.cpp", "src/test/**/*.java")
    found = [p for pattern in (*patterns, "*.spec.js") for p in workspace.glob(pattern)]
    return [str(p.relative_to(workspace)) for p in found]
