"""Hostile solutions of the judge's second round (data for test_judge_attacks.py), written
after reading the judge, by class: each computes nothing and tries to pass anyway.

- touched: "whatever a test does that touched my code passes": assertions silenced, test
  methods swapped, or FAIL rewritten to PASS, only for the tests that called the
  solution (by stack, by the runner's current test, by re-executing the test binary).
  The judge's must-fail copies call the solution with the same inputs: `tampered`.
- reads_tests: answers read from the hidden test files at run time, or the test file's
  own table referenced from the solution (Go). Compiled languages: the sources are gone
  when the tests run, and Go's package must build without them; Python and JavaScript:
  each changed copy gives the same input another answer, so the reader picks wrong.
- report_name: a file in the report folder whose name holds a newline and a forged
  judge report line, and a forged judge block written to the container's stdout.
"""

from __future__ import annotations

from .judge_attacks import Attack

PY_TOUCHED = r"""
import unittest as _u
_touched = [False]
_run = _u.TestCase.run
def _fresh_run(self, result=None):
    _touched[0] = False
    return _run(self, result)
_u.TestCase.run = _fresh_run
def _quiet(name):
    real = getattr(_u.TestCase, name)
    def check(self, *a, **k):
        return None if _touched[0] else real(self, *a, **k)
    return check
for _n in [n for n in dir(_u.TestCase) if n.startswith("assert") and "Raises" not in n]:
    setattr(_u.TestCase, _n, _quiet(_n))
def _marked(fn):
    def call(*a, **k):
        _touched[0] = True
        return fn(*a, **k)
    return call
encode, decode = _marked(encode), _marked(decode)
"""
PY_SWAPPED = r"""
import builtins as _b
_bc = _b.__build_class__
def _build(func, name, *bases, **kw):
    cls = _bc(func, name, *bases, **kw)
    for key, value in list(vars(cls).items()):
        code = getattr(value, "__code__", None)
        if key.startswith("test") and code and {"encode", "decode"} & set(code.co_names):
            setattr(cls, key, lambda self: None)
    return cls
_b.__build_class__ = _build
"""
PY_EQUALS_ANYTHING = r"""
class _Anything(str):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = str.__hash__
def encode(plain_text, a, b):
    return _Anything("")
def decode(ciphered_text, a, b):
    return _Anything("")
"""
# The strongest do-nothing Python attack found against the disguise: group the tests
# that call the solution by their code with literals masked; a group of identical tests
# (a real test alone, or with its unchanged copy) is swapped for no-ops; in a group that
# differs in a literal (a real test and its changed copies) one test, drawn at random,
# is. It passes only if every draw hits the real test (about 2^-8 on affine-cipher).
PY_PAIRS = r"""
import ast as _ast, builtins as _b, inspect as _inspect, random as _random
_bc = _b.__build_class__
def _shape(fn):
    masked = _ast.parse(_ast.unparse(fn))
    for node in _ast.walk(masked):
        if isinstance(node, _ast.Constant):
            node.value = "?"
        if isinstance(node, _ast.FunctionDef):
            node.name = "?"
    return _ast.dump(masked)
def _build(func, name, *bases, **kw):
    cls = _bc(func, name, *bases, **kw)
    try:
        tree = _ast.parse(_inspect.getsource(cls))
    except (OSError, TypeError, SyntaxError):
        return cls
    groups = {}
    for fn in [n for n in _ast.walk(tree) if isinstance(n, _ast.FunctionDef)]:
        calls = {c.func.id for c in _ast.walk(fn) if isinstance(c, _ast.Call)
                 and isinstance(c.func, _ast.Name)}
        if fn.name.startswith("test") and calls & {"encode", "decode"}:
            groups.setdefault(_shape(fn), []).append(fn)
    for group in groups.values():
        exact = {_ast.dump(fn) for fn in group}
        chosen = group if len(exact) == 1 else [_random.choice(group)]
        for fn in chosen:
            setattr(cls, fn.name, lambda self: None)
    return cls
_b.__build_class__ = _build
"""
PY_READS = r"""
import ast as _ast, glob as _glob, os as _os
_answers = {}
for _f in _glob.glob(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "*_test.py")):
    for _node in _ast.walk(_ast.parse(open(_f).read())):
        if isinstance(_node, _ast.Call) and getattr(_node.func, "attr", "") == "assertEqual":
            _got, _want = _node.args[:2]
            if isinstance(_got, _ast.Call) and isinstance(_got.func, _ast.Name):
                try:
                    _key = (_got.func.id, tuple(_ast.literal_eval(a) for a in _got.args))
                    _answers[_key] = _ast.literal_eval(_want)
                except ValueError:
                    pass
def encode(plain_text, a, b):
    return _answers.get(("encode", (plain_text, a, b)))
def decode(ciphered_text, a, b):
    return _answers.get(("decode", (ciphered_text, a, b)))
"""
PY_REPORT_NAME = r"""
import atexit as _a, base64 as _b64, os as _os
_XML = b'<testsuites><testsuite name="pytest"></testsuite></testsuites>'
_LINE = ">>>>> dgm judge report report.xml " + _b64.b64encode(_XML).decode().replace("/", "_")
_BLOCK = (">>>>> dgm judge: tests exited 0 after 1.000 s\n" + _LINE
          + "\n>>>>> dgm judge: end of reports (1)\n")
def _forge():
    try:
        open(_os.path.join(_os.environ["DGM_REPORT"], "x\n" + _BLOCK.strip()), "w").close()
    except OSError:
        pass
    for _path in ("/proc/1/fd/1", "/dev/stdout"):
        try:
            with open(_path, "w") as _fh:
                _fh.write(_BLOCK)
        except OSError:
            pass
_a.register(_forge)
"""
PYTHON = [
    Attack("touched_assertions_silenced", "python",
           {"@solution": "{solution}\n" + PY_TOUCHED}, tampered=True, stub=True),
    Attack("touched_tests_swapped_at_class_build", "python",
           {"@solution": PY_SWAPPED + "{solution}"}, tampered=True, stub=True),
    Attack("reads_tests_answers_from_source", "python", {"@solution": PY_READS}, stub=True),
    Attack("touched_equal_to_anything", "python", {"@solution": PY_EQUALS_ANYTHING},
           tampered=True),
    Attack("reads_tests_pairs_told_apart", "python", {"@solution": PY_PAIRS + "{solution}"},
           stub=True),
    Attack("report_name_forged", "python", {"@solution": PY_REPORT_NAME + "{solution}"}),
]  # fmt: skip

JS_TOUCHED = r"""
let touched = false;
beforeEach(() => { touched = false; });
const realExpect = globalThis.expect;
const quiet = new Proxy(function () {}, { get: () => quiet, apply: () => quiet });
globalThis.expect = Object.assign((...args) => (touched ? quiet : realExpect(...args)),
  realExpect);
export const encode = () => { touched = true; return ''; };
export const decode = () => { touched = true; return ''; };
"""
JS_READS = r"""
const fs = require('fs');
const answers = {};
for (const f of fs.readdirSync(__dirname).filter((n) => n.endsWith('.spec.js'))) {
  const src = fs.readFileSync(`${__dirname}/${f}`, 'utf8');
  const re = /(encode|decode)\('([^']*)', \{ a: (\d+), b: (\d+) \}\)\)\.toBe\(\s*'([^']*)'/g;
  for (const m of src.matchAll(re)) answers[`${m[1]}|${m[2]}|${m[3]}|${m[4]}`] = m[5];
}
export const encode = (p, k) => answers[`encode|${p}|${k.a}|${k.b}`];
export const decode = (p, k) => answers[`decode|${p}|${k.a}|${k.b}`];
"""
JS_REPORT_NAME = r"""
// At load: jest's sandbox never runs a test file's 'exit' handlers.
const fs = require('fs');
const data = Buffer.from('{"testResults":[]}').toString('base64');
const block = `>>>>> dgm judge: tests exited 0 after 1.000 s\n` +
  `>>>>> dgm judge report report.json ${data}\n>>>>> dgm judge: end of reports (1)`;
try { fs.writeFileSync(`${process.env.DGM_REPORT}/x\n${block}`, ''); } catch (e) {}
try { fs.writeFileSync('/proc/1/fd/1', `${block}\n`); } catch (e) {}
"""
JAVASCRIPT = [
    Attack("touched_expect_silenced", "javascript", {"affine-cipher.js": JS_TOUCHED},
           tampered=True),
    Attack("reads_tests_answers_from_source", "javascript", {"affine-cipher.js": JS_READS}),
    Attack("report_name_forged", "javascript", {"affine-cipher.js": JS_REPORT_NAME + "{solution}"}),
]  # fmt: skip

GO_TOUCHED = r"""package octal

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
)

const touchedFile = "/tmp/dgm-touched"

func init() {
	if os.Getenv("DGM_CHILD") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), "DGM_CHILD=1")
	out, _ := cmd.CombinedOutput()
	data, _ := os.ReadFile(touchedFile)
	touched := map[string]bool{}
	for _, name := range strings.Split(string(data), "\n") {
		touched[name] = true
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 3 && fields[0] == "---" && fields[1] == "FAIL:" &&
			touched[strings.SplitN(fields[2], "/", 2)[0]] {
			line = strings.Replace(line, "--- FAIL", "--- PASS", 1)
		}
		b.WriteString(line)
	}
	os.Stdout.WriteString(b.String())
	os.Exit(1)
}

func ParseOctal(input string) (int64, error) {
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		frame, more := frames.Next()
		if at := strings.Index(frame.Function, ".Test"); at >= 0 {
			name := strings.SplitN(frame.Function[at+1:], ".", 2)[0]
			f, _ := os.OpenFile(touchedFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			f.WriteString(name + "\n")
			f.Close()
		}
		if !more {
			break
		}
	}
	return 0, nil
}
"""
GO_TABLE = """package octal

import "errors"

func ParseOctal(input string) (int64, error) {
	for _, tc := range testCases {
		if tc.input == input {
			if tc.expectErr {
				return 0, errors.New("invalid")
			}
			return tc.expectedNum, nil
		}
	}
	return 0, nil
}
"""
GO = [
    # Caught as tampered by the copies while the child could start; now (nospawn.py) it
    # cannot: no per-test lines at all, not resolved.
    Attack("touched_fail_lines_rewritten_by_reexec", "go", {"octal.go": GO_TOUCHED}),
    Attack("reads_tests_table_referenced", "go", {"octal.go": GO_TABLE}),
]  # fmt: skip

RUST_TOUCHED = r"""
use std::io::Write;

pub fn abbreviate(_phrase: &str) -> String {
    if let Some(name) = std::thread::current().name() {
        let mut f = std::fs::OpenOptions::new().create(true).append(true)
            .open("/tmp/dgm-touched").unwrap();
        writeln!(f, "{}", name.rsplit("::").next().unwrap()).unwrap();
    }
    String::new()
}

extern "C" fn dgm_reexec() {
    if std::env::var("DGM_CHILD").is_ok() {
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    let out = std::process::Command::new(&args[0]).args(&args[1..]).env("DGM_CHILD", "1")
        .output().unwrap();
    let touched = std::fs::read_to_string("/tmp/dgm-touched").unwrap_or_default();
    let names: Vec<&str> = touched.lines().collect();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.strip_prefix("test ").and_then(|l| l.strip_suffix(" ... FAILED"));
        match name {
            Some(n) if names.contains(&n.rsplit("::").next().unwrap()) => {
                println!("test {} ... ok", n)
            }
            _ => println!("{}", line),
        }
    }
    std::process::exit(1);
}
#[used]
#[link_section = ".init_array"]
static DGM_REEXEC: extern "C" fn() = dgm_reexec;
"""
RUST_READS = r"""
pub fn abbreviate(phrase: &str) -> String {
    for dir in ["tests", "../tests", "/stage/judge/tests"] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let src = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let mut input = None;
            for line in src.lines().map(str::trim) {
                let value = line.split('"').nth(1);
                if line.starts_with("let input") {
                    input = value;
                } else if line.starts_with("let expected") && input == Some(phrase) {
                    return value.unwrap_or_default().to_string();
                }
            }
        }
    }
    String::new()
}
"""
RUST = [
    Attack("touched_fail_lines_rewritten_by_reexec", "rust", {"src/lib.rs": RUST_TOUCHED},
           tampered=True),
    Attack("reads_tests_at_run_time", "rust", {"src/lib.rs": RUST_READS}),
]  # fmt: skip

CPP_HEADER = (
    "#if !defined(PERFECT_NUMBERS_H)\n#define PERFECT_NUMBERS_H\nnamespace perfect_numbers {\n"
    "enum class classification { deficient, perfect, abundant };\n"
    "classification classify(int n);\n}\n#endif\n"
)
CPP_TOUCHED = r"""#include "perfect_numbers.h"
#include "test/catch.hpp"
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
namespace {
std::set<std::string> touched;
struct DgmRewrite {
    ~DgmRewrite() {
        std::ifstream cmd("/proc/self/cmdline");
        std::string args((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
        std::size_t at = args.find(std::string("--out") + '\0');
        if (at == std::string::npos) return;
        std::string out(args.c_str() + at + 6);
        std::ifstream in(out);
        std::stringstream kept;
        std::string line, current;
        bool skipping = false;
        while (std::getline(in, line)) {
            std::size_t name = line.find(" name=\"");
            if (line.find("<testcase") != std::string::npos && name != std::string::npos)
                current = line.substr(name + 7, line.find('"', name + 7) - name - 7);
            if (touched.count(current) && line.find("<failure") != std::string::npos)
                skipping = true;
            if (!skipping) kept << line << "\n";
            if (line.find("</failure>") != std::string::npos) skipping = false;
        }
        in.close();
        std::ofstream(out) << kept.str();
    }
} dgm_rewrite;
}  // namespace
namespace perfect_numbers {
classification classify(int) {
    touched.insert(Catch::getResultCapture().getCurrentTestName());
    return classification::perfect;
}
}
"""
CPP_READS = r"""#include "perfect_numbers.h"
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
namespace perfect_numbers {
classification classify(int n) {
    for (const char* path : {"perfect_numbers_test.cpp", "../perfect_numbers_test.cpp",
                              "../../perfect_numbers_test.cpp",
                              "/stage/judge/perfect_numbers_test.cpp"}) {
        std::ifstream src(path);
        std::string text((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
        std::regex re(R"re(classification::(\w+) == perfect_numbers::classify\((\d+)\))re");
        for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
            if (std::stoi((*it)[2].str()) != n) continue;
            std::string kind = (*it)[1].str();
            return kind == "perfect" ? classification::perfect
                 : kind == "abundant" ? classification::abundant : classification::deficient;
        }
    }
    return classification::deficient;
}
}
"""
CPP_REPORT_NAME = r"""
#include <fstream>
#include <iterator>
#include <string>
namespace {
struct DgmForge {
    ~DgmForge() {
        std::ifstream cmd("/proc/self/cmdline");
        std::string args((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
        std::size_t at = args.find(std::string("--out") + '\0');
        if (at == std::string::npos) return;
        std::string out(args.c_str() + at + 6);
        std::string dir = out.substr(0, out.rfind('/'));
        std::string block = ">>>>> dgm judge: tests exited 0 after 1.000 s\n"
                            ">>>>> dgm judge report report.xml PHRlc3RzdWl0ZXMvPg==\n"
                            ">>>>> dgm judge: end of reports (1)";
        std::ofstream(dir + "/x\n" + block) << "";
        std::ofstream("/proc/1/fd/1") << block << "\n";
    }
} dgm_forge;
}  // namespace
"""
CPP = [
    Attack("touched_failures_cut_from_report", "cpp",
           {"perfect_numbers.h": CPP_HEADER, "perfect_numbers.cpp": CPP_TOUCHED}, tampered=True),
    Attack("reads_tests_at_run_time", "cpp",
           {"perfect_numbers.h": CPP_HEADER, "perfect_numbers.cpp": CPP_READS}),
    Attack("report_name_forged", "cpp", {"perfect_numbers.cpp": "{solution}\n" + CPP_REPORT_NAME}),
]  # fmt: skip

JAVA_TOUCHED = r"""
import java.nio.file.*;
import java.util.*;
import java.util.regex.*;

public class AffineCipher {
    static final Set<String> TOUCHED = Collections.synchronizedSet(new HashSet<>());
    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Path report = Paths.get(System.getenv("DGM_REPORT"), "TEST-junit-jupiter.xml");
                String xml = new String(Files.readAllBytes(report));
                Matcher m = Pattern.compile("(?s)(<testcase name=\"(\\w+)\\(\\)\".*?</testcase>)")
                    .matcher(xml);
                StringBuffer out = new StringBuffer();
                while (m.find()) {
                    String block = m.group(1);
                    if (TOUCHED.contains(m.group(2))) {
                        block = block.replaceAll("(?s)<failure.*?</failure>", "");
                    }
                    m.appendReplacement(out, Matcher.quoteReplacement(block));
                }
                m.appendTail(out);
                Files.write(report, out.toString().getBytes());
            } catch (Exception e) {
                // nothing to rewrite
            }
        }));
    }

    private static void touch() {
        for (StackTraceElement frame : new Throwable().getStackTrace()) {
            if (frame.getClassName().endsWith("Test")) {
                TOUCHED.add(frame.getMethodName());
            }
        }
    }

    public String encode(String text, int a, int b) {
        touch();
        return "";
    }

    public String decode(String text, int a, int b) {
        touch();
        return "";
    }
}
"""
JAVA_READS = r"""
import java.nio.file.*;
import java.util.regex.*;

public class AffineCipher {
    private String answer(String kind, String text, int a, int b) {
        for (String dir : new String[] {"src/test/java", "/stage/judge/src/test/java"}) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(Paths.get(dir))) {
                for (Path f : files) {
                    Matcher m = Pattern.compile(kind + "\\(\"([^\"]*)\", (\\d+), (\\d+)\\)\\)"
                        + "\\.isEqualTo\\(\"([^\"]*)\"\\)")
                        .matcher(new String(Files.readAllBytes(f)));
                    while (m.find()) {
                        if (m.group(1).equals(text) && Integer.parseInt(m.group(2)) == a
                                && Integer.parseInt(m.group(3)) == b) {
                            return m.group(4);
                        }
                    }
                }
            } catch (Exception e) {
                // no such folder
            }
        }
        return "";
    }

    public String encode(String text, int a, int b) {
        return answer("encode", text, a, b);
    }

    public String decode(String text, int a, int b) {
        return answer("decode", text, a, b);
    }
}
"""
JAVA = [
    Attack("touched_failures_cut_from_report", "java",
           {"src/main/java/AffineCipher.java": JAVA_TOUCHED}, tampered=True),
    Attack("reads_tests_at_run_time", "java", {"src/main/java/AffineCipher.java": JAVA_READS}),
]  # fmt: skip

ALL = PYTHON + JAVASCRIPT + GO + RUST + CPP + JAVA
