#!/usr/bin/env python3
"""The README and docs/*.md hold to the repository and to the binaries.

  check_docs.py --root SOURCE_DIR --receiptd BIN --receiptctl BIN

Fails, listing each problem with its file and line, when:
- a relative link does not resolve: the file (inside the repository) is missing,
  or its #anchor is no heading of the Markdown file it points into;
- an option of receiptd is named that `receiptd --help` does not list: `--db.url`,
  `db.url`, `store-*.max-concurrent` (each store's), and the flat options of a
  `receiptd` command line (--config-file, --help, --version);
- an option of receiptctl is named on a receiptctl command line (a code span or a
  code block line, continuation lines joined) that `receiptctl --help` does not list;
- the text speaks of issue numbers or of paths outside the repository.
"""
import argparse
import pathlib
import re
import subprocess
import sys

SECTIONS = ("http", "db", "auth", "validator", "limits", "outbound", "store-a", "store-b", "store-*",
            "retry", "webhooks", "trace", "log", "metrics", "bootstrap", "scheduler")
# An option's name, not a host name (host=db.internal), a file (var/trace.jsonl) or a
# method call (http.value(…) in Swift).
DOTTED = re.compile(r"(?<![\w/.$=:@-])(?:--)?((?:" + "|".join(re.escape(s) for s in SECTIONS)
                    + r")\.[a-z][a-z0-9-]*)(?![\w.-]*[\w-])(?!\()")
NOT_OPTIONS = {"trace.jsonl"}  # a file name that looks like one
FLAT = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)(?![\w.-])")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
ISSUE = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
OUTSIDE = re.compile(r"\.\./shared\b|/work/")


def help_options(binary):
    text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"^\s+--([a-z][a-z0-9.-]*)(?:=|\[|\s|$)", text, re.MULTILINE))


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    in_code = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def command_lines(text):
    """(line number, text) of code: code block lines (a trailing backslash joins the
    next) and inline code spans."""
    in_code, pending, start = False, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            if not pending:
                start = number
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            yield start, pending + line
            pending = ""
        else:
            for span in re.findall(r"`([^`]+)`", line):
                yield number, span


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--receiptd", required=True)
    p.add_argument("--receiptctl", required=True)
    args = p.parse_args()
    root = pathlib.Path(args.root).resolve()
    receiptd = help_options(args.receiptd) | {"config-file", "help", "version"}
    receiptctl = help_options(args.receiptctl) | {"help", "version"}
    dotted = {o for o in receiptd if "." in o}
    files = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    problems = []

    def problem(path, number, what):
        problems.append(f"{path.relative_to(root)}:{number}: {what}")

    def check_dotted(path, number, name):
        if name in NOT_OPTIONS:
            return
        names = [name.replace("store-*", s) for s in ("store-a", "store-b")] if "store-*" in name else [name]
        if not all(n in dotted for n in names):
            problem(path, number, f"receiptd has no option {name} (receiptd --help)")

    for path in files:
        text = path.read_text()
        for number, line in enumerate(text.splitlines(), 1):
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue  # https:, mailto:
                file_part, _, anchor = target.partition("#")
                dest = (path.parent / file_part).resolve() if file_part else path
                if root not in dest.parents and dest != root:
                    problem(path, number, f"link {target} leaves the repository")
                    continue
                if not dest.exists():
                    problem(path, number, f"link {target}: no such file")
                    continue
                if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    problem(path, number, f"link {target}: no heading #{anchor} in {dest.name}")
            if ISSUE.search(line):
                problem(path, number, f"speaks of an issue number: {ISSUE.search(line).group(0)}")
            if OUTSIDE.search(line):
                problem(path, number, f"names a path outside the repository: {line.strip()[:80]}")
            for name in DOTTED.findall(line):
                check_dotted(path, number, name)
        # The options after the program's name on its command line (a build's
        # "--target receiptd receiptctl" names targets, not a command).
        for number, code in command_lines(text):
            ctl = re.search(r"(?:^|[\s/$(])receiptctl(?=\s|$)", code)
            daemon = re.search(r"(?:^|[\s/])receiptd\s+(?=--)", code)
            if ctl:
                for name in FLAT.findall(code[ctl.end():]):
                    if name not in receiptctl and name not in receiptd:
                        problem(path, number, f"receiptctl has no option --{name} (receiptctl --help)")
            elif daemon:
                for name in FLAT.findall(code[daemon.end():]):
                    if name not in receiptd:
                        problem(path, number, f"receiptd has no option --{name} (receiptd --help)")
    for line in problems:
        print(line)
    print(f"{len(files)} files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
