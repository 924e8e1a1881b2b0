"""The full quality figures of foilkit's foil filters: every report on its whole held-out split.

``foilkit generate quality <report> --sample N`` runs one report on a seeded sample (for CI and
a quick look); this script runs each on every item of the split and writes the reports, as the
``docs/generation.md`` quotes them, to ``benchmarks/results/generation_quality.json``.

    python benchmarks/generation_quality.py --data ../shared/data [--split heldout] [REPORT ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from foilkit.generation.quality import cli

RESULTS = Path(__file__).parent / "results" / "generation_quality.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="*", choices=[[], *cli.REPORTS], default=[])
    parser.add_argument("--data", type=Path, default=cli.DEFAULT_DATA)
    parser.add_argument("--split", choices=("heldout", "tuning"), default="heldout")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    results = json.loads(args.output.read_text()) if args.output.is_file() else {}
    report_parser = argparse.ArgumentParser()
    cli.configure(report_parser)  # each report with the defaults of `foilkit generate quality`
    for name in args.reports or list(cli.REPORTS):
        options = report_parser.parse_args([name, "--data", str(args.data), "--split", args.split])
        started = time.perf_counter()
        report = cli.RUNNERS[name](options)
        print(report.table(), f"({time.perf_counter() - started:.0f} s)\n", flush=True)
        results[f"{name}/{args.split}"] = report.to_record()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
