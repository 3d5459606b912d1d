#!/usr/bin/env python3
"""Every user error code raised in src/ or tools/ must be documented in docs/errors.md and
triggered by at least one test under tests/ (DESIGN.md "Errors"). Also flags documented codes that
no code raises any more. Exits 1 with the list of offenders."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
code_re = re.compile(r'"(NHC_E[A-Z]+[0-9]{3})"')
any_re = re.compile(r"NHC_E[A-Z]+[0-9]{3}")


def codes_in(folder, pattern, regex):
    found = {}
    for path in sorted((root / folder).rglob(pattern)):
        for code in regex.findall(path.read_text(errors="replace")):
            found.setdefault(code, path)
    return found


raised = {}
for folder in ("src", "tools"):
    for pattern in ("*.cpp", "*.h"):
        for code, path in codes_in(folder, pattern, code_re).items():
            raised.setdefault(code, path)
docs = set(any_re.findall((root / "docs" / "errors.md").read_text()))
tested = set()
for pattern in ("*.cpp", "*.h", "*.py", "*.sh", "*.s", "*.txt"):
    tested |= set(codes_in("tests", pattern, any_re))

problems = []
for code, path in sorted(raised.items()):
    if code not in docs:
        problems.append(f"{code} (raised in {path.relative_to(root)}) is not in docs/errors.md")
    if code not in tested:
        problems.append(f"{code} (raised in {path.relative_to(root)}) is not triggered by any test")
for code in sorted(docs - set(raised)):
    problems.append(f"{code} is documented in docs/errors.md but raised nowhere")
print(f"{len(raised)} error codes raised, {len(docs)} documented, {len(tested)} seen in tests")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
