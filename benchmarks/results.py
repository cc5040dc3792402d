#!/usr/bin/env python3
"""Results as data: the README's results table, RESULTS.md's status table and the
plot's CSV, generated from the records under benchmarks/results/.

  python3 benchmarks/results.py             # rewrite the generated parts
  python3 benchmarks/results.py --check     # exit 1 if any generated part is out of date
  python3 benchmarks/results.py --self-test # --check must fail on altered copies
  --root DIR                                # the repository (default: this file's ../..)

Inputs (benchmarks/results/):
  measurements.csv  one row per figure (COLUMNS below); `record` is the run's file
                    under runs/, `headline` the row's place in the README's table
  status.csv        the status table's rows: target, latest, met. Cells may name
                    measurements: {ID} is its ratio, {ID.FIELD} another field,
                    {ID:.2f} / {ID.FIELD:.2f} formatted, {range:PATTERNS} /
                    {range:.2f:PATTERNS} the lowest and highest ratio of the rows
                    whose ids match the comma-separated fnmatch PATTERNS ("a-b")
  runs/*.md         the run records, verbatim

Outputs, each between marker comments or whole:
  README.md                 <!-- results-table:begin --> ... <!-- results-table:end -->
  benchmarks/RESULTS.md     <!-- status-table:begin --> ... <!-- status-table:end -->
  benchmarks/results.csv    the headline rows, read by plot_results.py

Both modes first validate the data: ids unique, every record file present, headline
places 1..N, and every figure of a row without `derived` (ours, peer, ratio) written
verbatim in its record, so a figure cannot drift from the run it cites.
Standard library only (Python 3.8+).
"""
import argparse
import csv
import fnmatch
import io
import os
import re
import shutil
import sys
import tempfile

COLUMNS = ["id", "headline", "run", "date", "gpu", "driver", "commit", "command",
           "workload", "kernel", "target", "dtype", "shape", "ours", "ours_unit",
           "peer_name", "peer", "ratio", "rounds", "record", "label", "derived", "note"]
STATUS_COLUMNS = ["target", "latest", "met"]
PLOT_COLUMNS = ["label", "workload", "target", "dtype", "shape", "ours", "unit",
                "peer_name", "peer", "ratio", "gpu", "run", "record"]

MEASUREMENTS = "benchmarks/results/measurements.csv"
STATUS = "benchmarks/results/status.csv"
README = "README.md"
RESULTS_MD = "benchmarks/RESULTS.md"
PLOT_CSV = "benchmarks/results.csv"
README_MARKERS = ("<!-- results-table:begin -->", "<!-- results-table:end -->")
STATUS_MARKERS = ("<!-- status-table:begin -->", "<!-- status-table:end -->")


class DataError(Exception):
    """The records are inconsistent; the message names the file and the row."""


def default_root():
    # abspath, not realpath: under Bazel the script is a symlink in the runfiles
    # tree and the files to check are the runfiles' copies beside it.
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_csv(root, rel, columns):
    path = os.path.join(root, rel)
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != columns:
            raise DataError(f"{rel}: columns {reader.fieldnames} != {columns}")
        return list(reader)


def record_text(root, rel, cache):
    if rel not in cache:
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            raise DataError(f"{MEASUREMENTS}: record {rel} does not exist")
        with open(path, encoding="utf-8") as f:
            cache[rel] = f.read()
    return cache[rel]


def validate(root, rows):
    """Raises DataError on the first inconsistency; returns ({id: row}, headline rows in order)."""
    by_id, places, cache = {}, [], {}
    for n, r in enumerate(rows, 2):  # line 1 is the header
        where = f"{MEASUREMENTS}:{n} ({r['id'] or 'no id'})"
        if not re.fullmatch(r"[a-z0-9][a-z0-9x-]*", r["id"]):
            raise DataError(f"{where}: id must be lower-case letters, digits and '-'")
        if r["id"] in by_id:
            raise DataError(f"{where}: duplicate id")
        by_id[r["id"]] = r
        if not re.fullmatch(r"\d+", r["run"]) or not re.fullmatch(r"\d{4}-\d\d-\d\d", r["date"]):
            raise DataError(f"{where}: run must be a number and date YYYY-MM-DD")
        if not r["record"].startswith("benchmarks/results/runs/"):
            raise DataError(f"{where}: record must be a file under benchmarks/results/runs/")
        text = record_text(root, r["record"], cache)
        if r["headline"]:
            if not r["headline"].isdigit():
                raise DataError(f"{where}: headline must be a number")
            places.append((int(r["headline"]), r))
        if r["derived"]:
            continue
        for field in ("ours", "peer", "ratio"):
            value = r[field]
            # The figure as written in the record, not as part of a longer number.
            if value and not re.search(r"(?<![\d.])" + re.escape(value) + r"(?![\d])", text):
                raise DataError(f"{where}: {field} {value} does not appear in {r['record']} "
                                "(copy it exactly, or say how it follows in `derived`)")
    places.sort(key=lambda p: p[0])
    if [p for p, _ in places] != list(range(1, len(places) + 1)):
        raise DataError(f"{MEASUREMENTS}: headline places must be 1..N once each, "
                        f"got {[p for p, _ in places]}")
    for _, r in places:
        for field in ("label", "shape", "ours", "ours_unit", "peer_name", "peer", "ratio"):
            if not r[field]:
                raise DataError(f"{MEASUREMENTS}: headline row {r['id']} has no {field}")
    return by_id, [r for _, r in places]


def shape_text(shape):
    """'4096x4096x4096' -> '4096^3'; other shapes as recorded."""
    dims = shape.split("x")
    if len(dims) == 3 and len(set(dims)) == 1 and dims[0].isdigit():
        return f"{dims[0]}^3"
    return shape


def link_label(r):
    return f"r{r['run']}"


def readme_table(headline):
    lines = ["| workload | shape | Tessera | peer | ratio | record |",
             "|---|---|---|---|---|---|"]
    for r in headline:
        lines.append(f"| {r['label']} | {shape_text(r['shape'])} | {r['ours']} {r['ours_unit']} "
                     f"| {r['peer_name']} {r['peer']} | {r['ratio']} | [record][{link_label(r)}] |")
    lines.append("")
    links = {}
    for r in headline:
        links.setdefault(link_label(r), r["record"])
    for label in sorted(links, key=lambda s: int(s[1:])):
        lines.append(f"[{label}]: {links[label]}")
    return "\n".join(lines)


PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def fmt(value, spec, where):
    if not spec:
        return value
    try:
        return format(float(value), spec)
    except ValueError as e:
        raise DataError(f"{where}: cannot format {value!r} as {spec}: {e}")


def expand(cell, by_id, where):
    """Replaces a status cell's {...} placeholders with the measurements' figures."""
    def one(m):
        body = m.group(1)
        if body.startswith("range:"):
            rest = body[len("range:"):]
            spec = ""
            if rest.startswith("."):
                spec, rest = rest.split(":", 1)
            ids = []
            for pattern in rest.split(","):
                hit = sorted(i for i in by_id if fnmatch.fnmatchcase(i, pattern.strip()))
                if not hit:
                    raise DataError(f"{where}: no measurement matches {pattern.strip()!r}")
                ids.extend(hit)
            values = [by_id[i]["ratio"] for i in ids]
            if not all(values):
                raise DataError(f"{where}: a row of {rest!r} has no ratio")
            lo = min(values, key=float)
            hi = max(values, key=float)
            return f"{fmt(lo, spec, where)}-{fmt(hi, spec, where)}"
        ref, _, spec = body.partition(":")
        ident, _, field = ref.partition(".")
        if ident not in by_id:
            raise DataError(f"{where}: no measurement {ident!r}")
        field = field or "ratio"
        if field not in COLUMNS:
            raise DataError(f"{where}: no field {field!r}")
        value = by_id[ident][field]
        if not value:
            raise DataError(f"{where}: {ident} has no {field}")
        return fmt(value, spec, where)
    return PLACEHOLDER.sub(one, cell)


def status_table(root, by_id):
    rows = read_csv(root, STATUS, STATUS_COLUMNS)
    lines = ["| target (issue) | latest figure | met? |", "|---|---|---|"]
    for n, r in enumerate(rows, 2):
        where = f"{STATUS}:{n}"
        cells = [expand(r[c], by_id, where) for c in STATUS_COLUMNS]
        if any("|" in c or "\n" in c for c in cells):
            raise DataError(f"{where}: a cell holds '|' or a line break")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_csv(headline):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(PLOT_COLUMNS)
    for r in headline:
        w.writerow([r["label"], r["workload"], r["target"], r["dtype"], r["shape"], r["ours"],
                    r["ours_unit"], r["peer_name"], r["peer"], r["ratio"], r["gpu"], r["run"],
                    r["record"]])
    return out.getvalue()


def splice(text, markers, body, rel):
    """text with the part between the markers replaced by body."""
    begin, end = markers
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i or text.count(begin) != 1 or text.count(end) != 1:
        raise DataError(f"{rel}: needs one {begin} and, after it, one {end}")
    return text[:i + len(begin)] + "\n" + body + "\n" + text[j:]


def expected(root):
    """{relative path: the file's text as the data says it should be}."""
    rows = read_csv(root, MEASUREMENTS, COLUMNS)
    by_id, headline = validate(root, rows)
    out = {}
    for rel, markers, body in ((README, README_MARKERS, readme_table(headline)),
                               (RESULTS_MD, STATUS_MARKERS, status_table(root, by_id))):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            out[rel] = splice(f.read(), markers, body, rel)
    out[PLOT_CSV] = plot_csv(headline)
    return out


def current(root, rel):
    try:
        with open(os.path.join(root, rel), encoding="utf-8", newline="") as f:
            return f.read()
    except FileNotFoundError:
        return None


def stale(root):
    """The generated files whose text differs from what the data gives."""
    return [rel for rel, text in expected(root).items() if current(root, rel) != text]


def check(root):
    try:
        out_of_date = stale(root)
    except DataError as e:
        print(f"results.py: {e}")
        return 1
    if out_of_date:
        print(f"results.py: out of date: {', '.join(out_of_date)}; "
              "run `python3 benchmarks/results.py`")
        return 1
    return 0


def write(root, quiet=False):
    try:
        texts = expected(root)
    except DataError as e:
        print(f"results.py: {e}")
        return 1
    for rel, text in texts.items():
        if current(root, rel) != text:
            with open(os.path.join(root, rel), "w", encoding="utf-8", newline="") as f:
                f.write(text)
            if not quiet:
                print(f"results.py: wrote {rel}")
    return 0


def self_test(root):
    """--check passes on a copy of the inputs and fails on each kind of alteration."""
    failures = []

    def copy(tmp):
        for rel in (README, RESULTS_MD, PLOT_CSV):
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)) or tmp, exist_ok=True)
            shutil.copyfile(os.path.join(root, rel), os.path.join(tmp, rel))
        shutil.copytree(os.path.join(root, "benchmarks/results"),
                        os.path.join(tmp, "benchmarks/results"))

    def edit(tmp, rel, old, new):
        path = os.path.join(tmp, rel)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if old not in text:
            failures.append(f"{rel}: {old!r} not found to alter")
            return
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))

    def expect(name, tmp, want_stale=None, want_error=None):
        try:
            got = stale(tmp)
        except DataError as e:
            if want_error is None or want_error not in str(e):
                failures.append(f"{name}: unexpected error: {e}")
            return
        if want_error is not None:
            failures.append(f"{name}: expected an error naming {want_error!r}, got none")
        elif got != (want_stale or []):
            failures.append(f"{name}: stale {got}, expected {want_stale or []}")

    rows = read_csv(root, MEASUREMENTS, COLUMNS)
    first = next(r for r in rows if r["headline"] == "1")
    row_text = f"| {first['ours']} {first['ours_unit']} |"
    cases = [  # (name, (file, old text, new text) or None, what --check must say)
        ("unchanged", None, {}),
        ("README figure", (README, row_text, f"| 1{first['ours']} {first['ours_unit']} |"),
         {"want_stale": [README]}),
        ("status table", (RESULTS_MD, STATUS_MARKERS[0] + "\n|", STATUS_MARKERS[0] + "\n|x"),
         {"want_stale": [RESULTS_MD]}),
        ("results.csv", (PLOT_CSV, f",{first['ratio']},", ",9.999,"), {"want_stale": [PLOT_CSV]}),
        ("README marker", (README, README_MARKERS[1], ""), {"want_error": README}),
        ("figure not in its record",
         (MEASUREMENTS, f",{first['peer']},", f",{first['peer']}9,"),
         {"want_error": "does not appear in"}),
        ("unknown id in status.csv", (STATUS, "{r", "{nosuch"), {"want_error": "no measurement"}),
    ]
    for name, change, want in cases:
        with tempfile.TemporaryDirectory() as tmp:
            copy(tmp)
            if change:
                edit(tmp, *change)
            expect(name, tmp, **want)
            if want.get("want_stale"):
                write(tmp, quiet=True)  # rewriting makes the copy current again
                expect(name + ", rewritten", tmp)
    if failures:
        for f in failures:
            print(f"results.py --self-test: {f}")
        return 1
    print(f"results.py --self-test: {len(cases)} cases passed")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if a generated part is stale")
    mode.add_argument("--self-test", action="store_true", help="check that --check can fail")
    p.add_argument("--root", default=default_root(), help="the repository root")
    args = p.parse_args(argv)
    if args.check:
        return check(args.root)
    if args.self_test:
        return self_test(args.root)
    return write(args.root)


if __name__ == "__main__":
    sys.exit(main())
