"""The Polyglot judge's knowledge of test files: which tests a file holds (read from the
pristine, un-skipped source before any agent code runs), and canaries added to it.

    names = expected_tests("python", text)             # the keys the report must show PASSED
    text, canaries = add_canaries("python", text)      # canaries drawn afresh for this verdict

A canary is a test the judge writes into the hidden test file itself, so it runs in the
same process, under the same framework, as the real tests. Its name is made of the
words of the file's own test names (no fixed prefix), it sits at a random place among
them, and each must-fail canary uses one of the assertion forms the file itself uses:
patching that assertion, the framework's reporting, or forging the report makes a
must-fail canary pass or go missing. Test keys are each language's plain test name
(`polyglot_reports` reduces report entries to the same key).
"""

from __future__ import annotations

import ast
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from dgm.benchmarks.polyglot.assertions import FORMS as _FORMS

_FILLER = ("value", "empty", "single", "input", "result", "case", "long", "short", "mixed",
           "number", "letters", "valid", "invalid", "edge", "first", "last", "many", "zero",
           "large", "small", "simple", "repeated", "with", "without", "only")  # fmt: skip

_AST_LOCK = threading.Lock()


def _parse(text: str) -> ast.Module:
    """`ast.parse` one thread at a time: CPython 3.11 before 3.11.8 can fail with
    "AST constructor recursion depth mismatch" when two threads parse at once (gh-106905)."""
    with _AST_LOCK:
        return ast.parse(text)


parse_python = _parse


@dataclass(frozen=True)
class Canary:
    name: str
    must_fail: bool
    form: str
    """The assertion form it uses (e.g. `assertEqual`, `toBe`, `REQUIRE`)."""
    key: str = ""
    """Its key in the report (Python: `Class.name`); the name when empty."""

    @property
    def report_key(self) -> str:
        return self.key or self.name


# -- expected tests ------------------------------------------------------------------------
_GO_TEST = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.MULTILINE)
_RUST_TEST = re.compile(r"^\s*#\[test\]\s*\n(?:\s*(?:#\[.*\]|//.*)\s*\n)*\s*(?:pub\s+)?fn\s+(\w+)",
                        re.MULTILINE)  # fmt: skip
_CPP_TEST = re.compile(r'^\s*TEST_CASE\s*\((?:\s*//[^\n]*)*\s*"((?:[^"\\]|\\.)*)"', re.MULTILINE)
_JAVA_TEST = re.compile(r"@(?:Test|ParameterizedTest|RepeatedTest)\b[^;{]*?\bvoid\s+(\w+)\s*\(")
_JS_TEST = re.compile(r"\b(?:test|it)\s*\(\s*(?:'((?:\\.|[^'\\])*)'|\"((?:\\.|[^\"\\])*)\"|"
                      r"`((?:\\.|[^`\\$])*)`)")  # fmt: skip


def expected_tests(language: str, text: str) -> list[str]:
    """The test keys a (pristine, un-skipped) test file defines; [] when none are found."""
    if language == "python":
        return [f"{cls}.{fn}" if cls else fn for cls, fn, _ in _python_tests(text)]
    if language == "go":
        return _GO_TEST.findall(text)
    if language == "rust":
        return _RUST_TEST.findall(without_feature_gated(text, "rust"))
    if language == "cpp":
        return [_unescape(m) for m in _CPP_TEST.findall(without_feature_gated(text, "cpp"))]
    if language == "java":
        return _JAVA_TEST.findall(re.sub(r"//[^\n]*", "", text))
    if language == "javascript":
        return [_unescape(a or b or c) for a, b, c in _JS_TEST.findall(text)]
    return []


_RUST_GATE = re.compile(r"^\s*#\[cfg\(.*\bfeature\s*=")
_RUST_NOISE = re.compile(r'"(?:\\.|[^"\\])*"|//.*')


# The macros the judge's cmake command defines (polyglot_reports.COMMANDS["cpp"] and the
# exercises' CMakeLists); a block behind any other EXERCISM_ macro is not built.
CPP_DEFINED = ("EXERCISM_RUN_ALL_TESTS", "EXERCISM_TEST_SUITE")
_CPP_GATE = re.compile(r"^\s*#\s*(?:ifdef\s+|if\s+defined\s*\(?\s*)(EXERCISM_\w+)")


def without_feature_gated(text: str, language: str = "rust") -> str:
    """The file with what the judge's build leaves out blanked, line numbers kept: Rust
    items behind `#[cfg(... feature = ...)]` (default features only), C++ blocks behind an
    EXERCISM_ macro the build does not define (the benchmark). Those tests never run, and
    a canary placed among them would be compiled out."""
    lines = text.splitlines(keepends=True)
    if language == "cpp":
        return "".join(_without_cpp_gated(lines))
    if language != "rust":
        return text
    index = 0
    while index < len(lines):
        if not _RUST_GATE.match(lines[index]):
            index += 1
            continue
        end = _rust_item_end(lines, index + 1)
        for j in range(index, end + 1):
            lines[j] = "\n" if lines[j].endswith("\n") else ""
        index = end + 1
    return "".join(lines)


def _without_cpp_gated(lines: list[str]) -> list[str]:
    out, skipping, depth = [], False, 0
    for line in lines:
        gate = _CPP_GATE.match(line)
        if not skipping and gate and gate.group(1) not in CPP_DEFINED:
            skipping, depth = True, 0
        if skipping:
            stripped = line.strip().replace(" ", "")
            depth += stripped.startswith("#if") - stripped.startswith("#endif")
            skipping = depth > 0
            line = "\n" if line.endswith("\n") else ""
        out.append(line)
    return out


def _rust_item_end(lines: list[str], start: int) -> int:
    """The last line of the item starting at `start` (its attributes skipped): the line
    of its closing brace, or of its `;` for an item without a body (`use ...;`)."""
    depth, opened = 0, False
    for j in range(start, len(lines)):
        code = _RUST_NOISE.sub("", lines[j])
        if not opened and code.strip().startswith("#["):
            continue
        for char in code:
            if char == "{":
                depth, opened = depth + 1, True
            elif char == "}":
                depth -= 1
            elif char == ";" and not opened:
                return j
        if opened and depth <= 0:
            return j
    return len(lines) - 1


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _python_tests(text: str) -> list[tuple[str, str, ast.FunctionDef]]:
    tree = _parse(text)
    found: list[tuple[str, str, ast.FunctionDef]] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name.startswith("test"):
                    found.append((node.name, item.name, item))
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            found.append(("", node.name, node))
    return found


# -- names ---------------------------------------------------------------------------------
def _words(names: list[str]) -> list[str]:
    words: set[str] = set()
    for name in names:
        spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
        words |= {w.lower() for w in re.split(r"[^A-Za-z]+", spaced) if 2 <= len(w) <= 14}
    return sorted(words - {"test", "tests"})


def _style(language: str, words: list[str], sample: str) -> str:
    if language == "python":
        return "test_" + "_".join(words)
    if language == "go":
        return "Test" + "".join(w.capitalize() for w in words)
    if language == "rust":
        return "_".join(words)
    if language == "java":
        first = words[0] if not sample.startswith("test") else "test" + words[0].capitalize()
        return first + "".join(w.capitalize() for w in words[1:])
    joiner = "_" if language == "cpp" and " " not in sample else " "
    return joiner.join(words)


def draw_names(language: str, existing: list[str], count: int) -> list[str]:
    """`count` fresh names in the style of `existing`, none equal to any of them."""
    vocab = _words(existing)
    vocab += [w for w in _FILLER if w not in vocab][: max(0, 12 - len(vocab))]
    sample = secrets.choice(existing) if existing else "test"
    taken, names = set(existing), []
    while len(names) < count:
        pick = [secrets.choice(vocab) for _ in range(2 + secrets.randbelow(3))]
        name = _style(language, pick, sample)
        if name not in taken and not any(name in t or t in name for t in taken):
            taken.add(name)
            names.append(name)
    return names


# -- assertion forms -----------------------------------------------------------------------
_DEFAULT_FORM = {"python": "assertEqual", "go": "Fatalf", "rust": "assert_eq", "cpp": "REQUIRE",
                 "java": "throw", "javascript": "toEqual"}  # fmt: skip
MAX_MUST_FAIL = 6


def forms_used(language: str, text: str) -> list[str]:
    """The assertion forms the file uses (the default one when it uses none we know)."""
    forms = _FORMS[language]
    used = [f for f, (pattern, _, _) in forms.items() if re.search(pattern, text, re.MULTILINE)]
    return used or [_DEFAULT_FORM[language]]


def _passing_form(language: str, used: list[str]) -> str:
    forms = _FORMS[language]
    return next((f for f in used if forms[f][2]), _DEFAULT_FORM[language])


def draw_canaries(language: str, text: str, fresh: Callable[[], str] | None = None) -> list[Canary]:
    """Must-fail canaries for the file's assertion forms (up to MAX_MUST_FAIL, in random
    order) and one or two must-pass ones, named in the file's own style."""
    used = forms_used(language, text)
    fail_forms = sorted(used, key=lambda _f: secrets.randbelow(1 << 30))[:MAX_MUST_FAIL]
    passing = [_passing_form(language, used)] * (1 + secrets.randbelow(2))
    count = len(fail_forms) + len(passing)
    names = ([fresh() for _ in range(count)] if fresh
             else draw_names(language, expected_tests(language, text), count))  # fmt: skip
    canaries = [Canary(n, True, f) for n, f in zip(names, fail_forms, strict=False)]
    canaries += [Canary(n, False, f) for n, f in zip(names[len(fail_forms) :], passing,
                                                     strict=False)]  # fmt: skip
    return sorted(canaries, key=lambda _c: secrets.randbelow(1 << 30))


def body(language: str, canary: Canary) -> str:
    """The canary's assertion lines (unindented)."""
    a, b = 2 + secrets.randbelow(900), 2 + secrets.randbelow(900)
    values = {"a": a, "b": b, "c": a + b, "w": a + b + 1 + secrets.randbelow(9)}
    _, failing, passing = _FORMS[language][canary.form]
    text = (failing if canary.must_fail else passing).format(**values)
    if language == "cpp":
        text = f"int a = {a};\nint b = {b};\n" + text
    return text


# -- injection -----------------------------------------------------------------------------
_ANCHOR = {
    "go": re.compile(r"^func\s+Test"),
    "rust": re.compile(r"^\s*#\[test\]"),
    "cpp": re.compile(r"^\s*TEST_CASE\s*\("),
    "java": re.compile(r"^\s*@(Test|ParameterizedTest|RepeatedTest)\b"),
    "javascript": re.compile(r"^\s*(test|it)\s*\("),
}
_AT_END = ("go", "rust", "cpp")


def add_canaries(
    language: str, text: str, fresh: Callable[[], str] | None = None
) -> tuple[str, list[Canary]]:
    """The test file with canaries at random places among its tests; `fresh` draws their
    names (the judge's: the generator every test of the file was renamed with)."""
    canaries = draw_canaries(language, text, fresh)
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    if language == "python":
        anchors = _python_anchors(text)
    else:  # never inside a Rust item the build leaves out (same line numbers)
        visible = without_feature_gated(text, language)
        anchors = _anchors(language, visible.splitlines(keepends=True))
    if not anchors:
        return text, []
    module_level = language == "python" and not any(cls for cls, _, _ in _python_tests(text))
    placed = sorted(((secrets.choice(anchors), c) for c in canaries), key=lambda p: -p[0][0])
    for (line, indent), canary in placed:
        if module_level:
            canary = Canary(canary.name, canary.must_fail, "assert")
        lines.insert(line, render(language, canary, indent, text, module_level))
    new_text = "".join(lines)
    keys = expected_tests(language, new_text) if language == "python" else []
    canaries = [
        replace(c, key=next((k for k in keys if k.endswith("." + c.name)), "")) for c in canaries
    ]
    return new_text, canaries


def _anchors(language: str, lines: list[str]) -> list[tuple[int, str]]:
    """(0-based line to insert before, indentation) for each test in the file."""
    found = []
    for index, line in enumerate(lines):
        if _ANCHOR[language].match(line):
            start = index
            while start > 0 and lines[start - 1].strip().startswith(("@", "#[")):
                start -= 1
            found.append((start, line[: len(line) - len(line.lstrip())]))
    if language in _AT_END:
        found.append((len(lines), ""))
    return found


def _python_anchors(text: str) -> list[tuple[int, str]]:
    tests = _python_tests(text)
    if not tests:
        return []
    counts: dict[str, int] = {}
    for cls, _, _ in tests:
        counts[cls] = counts.get(cls, 0) + 1
    main = max(counts, key=lambda c: counts[c])
    found = []
    for cls, _, node in tests:
        if cls == main:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            found.append((first - 1, " " * node.col_offset))
    if main:
        cls_node = next(n for n in _parse(text).body
                        if isinstance(n, ast.ClassDef) and n.name == main)  # fmt: skip
        found.append((cls_node.end_lineno or len(text.splitlines()), found[-1][1]))
    return found


def render(
    language: str, canary: Canary, indent: str, text: str, module_level: bool = False
) -> str:
    lines = body(language, canary).splitlines()
    attrs = [ln for ln in lines if ln.startswith("#[")]
    lines = [ln for ln in lines if not ln.startswith("#[")]
    name = canary.name
    if language == "python":
        # The same parameters as the file's tests (class decorators such as mock.patch
        # pass extra arguments to every test method).
        plain = [node for _, _, node in _python_tests(text) if not node.decorator_list]
        params = ast.unparse(plain[0].args) if plain else ("" if module_level else "self")
        head, inner = f"def {name}({params}):", "    "
        return _block(indent, [head], lines, [], inner) + "\n"
    if language == "go":
        return _block(indent, [f"func {name}(t *testing.T) {{"], lines, ["}"], "\t") + "\n"
    if language == "rust":
        return _block(indent, ["#[test]", *attrs, f"fn {name}() {{"], lines, ["}"], "    ") + "\n"
    if language == "cpp":
        return _block(indent, [f'TEST_CASE("{name}") {{'], lines, ["}"], "    ") + "\n"
    if language == "java":
        imported = re.search(r"import\s+org\.junit\.jupiter\.api\.(Test|\*)\s*;", text)
        annotation = "@Test" if imported else "@org.junit.jupiter.api.Test"
        head = [annotation, f"public void {name}() {{"]
        return _block(indent, head, lines, ["}"], "    ") + "\n"
    call = "test" if re.search(r"^\s*test\s*\(", text, re.MULTILINE) else "it"
    return _block(indent, [f"{call}('{name}', () => {{"], lines, ["});"], "  ") + "\n"


def _block(indent: str, head: list[str], inner: list[str], tail: list[str], step: str) -> str:
    out = [indent + h for h in head] + [indent + step + ln for ln in inner]
    return "\n".join(out + [indent + t for t in tail]) + "\n"
