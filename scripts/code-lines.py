#!/usr/bin/env python3
"""Code lines of src/: non-blank, non-comment lines of src/**/*.rs, with test files
(tests.rs, tests_*.rs, loom_tests.rs, anything under a tests/ folder) and #[cfg(test)]
items left out. Prints the whole of src/ and the core (everything but cluster/, console/,
bin/, metrics/ and observe.rs); `--files` also prints each file's count.

Usage: scripts/code-lines.py [--files] [ROOT]   (ROOT defaults to the repository)
"""
import pathlib
import re
import sys

NOT_CORE = ("cluster/", "console/", "bin/", "metrics/", "observe.rs")


def is_test_file(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return (
        name in ("tests.rs", "loom_tests.rs")
        or name.startswith("tests_")
        or "/tests/" in "/" + rel
    )


def code_lines(text: str) -> int:
    lines = text.splitlines()
    count = 0
    i = 0
    in_block = False
    while i < len(lines):
        line = lines[i].strip()
        if in_block:
            if "*/" in line:
                in_block = False
            i += 1
            continue
        if line.startswith("/*"):
            in_block = "*/" not in line
            i += 1
            continue
        if re.match(r"#\[cfg\((all\()?test\b", line):
            # Skip the item the attribute applies to: further attributes, then either a
            # one-line item ending in `;` or a braced item up to its closing brace.
            i += 1
            while i < len(lines) and lines[i].strip().startswith("#["):
                i += 1
            depth = 0
            opened = False
            while i < len(lines):
                code = lines[i].split("//", 1)[0]
                depth += code.count("{") - code.count("}")
                opened = opened or "{" in code
                i += 1
                if (opened and depth <= 0) or (not opened and code.rstrip().endswith(";")):
                    break
            continue
        if line and not line.startswith("//"):
            count += 1
        i += 1
    return count


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parent.parent)
    src = root / "src"
    total = core = 0
    per_file = []
    for path in sorted(src.rglob("*.rs")):
        rel = path.relative_to(src).as_posix()
        if is_test_file(rel):
            continue
        n = code_lines(path.read_text())
        per_file.append((n, rel))
        total += n
        if not rel.startswith(NOT_CORE):
            core += n
    if "--files" in sys.argv:
        for n, rel in per_file:
            print(f"{n:6} {rel}")
    print(f"src  {total}")
    print(f"core {core}")


if __name__ == "__main__":
    main()
