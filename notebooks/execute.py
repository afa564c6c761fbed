"""Execute notebooks in place and check what they show (run by notebooks/check).

For each notebook: run every cell with nbclient on the python3 kernel, then
require that

- no cell raised and nothing was written to stderr (warnings included);
- every code cell printed or displayed something, except those tagged
  "no-output" (imports, settings), which must print nothing;
- outputs stay small: PNG figures only (no SVG or HTML images), each under
  MAX_PNG bytes, text under MAX_TEXT bytes, tables under MAX_ROWS rows;
- no output names a temporary path (outputs must not depend on where the
  check ran);
- the regenerated text outputs equal the committed ones, so a committed
  notebook never shows numbers the current code no longer produces (images
  are regenerated but not compared: their bytes depend on the matplotlib
  build). With --update the new outputs are kept without that comparison.
  Printed output is compared as the reader sees it, not as the kernel
  happened to chunk it (streams.py).

The notebook is written back in place either way.
"""

import argparse
import base64
import os
import pathlib
import re
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from streams import merge_streams, texts

MAX_PNG = 90_000
MAX_TEXT = 12_000
MAX_ROWS = 30
TIMEOUT_S = 600


def check_outputs(nb, tmp_roots):
    problems = []
    for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        where = f"code cell {i + 1}"
        outs = cell.get("outputs", [])
        quiet = "no-output" in cell.metadata.get("tags", [])
        if quiet and outs:
            problems.append(f"{where} is tagged no-output but printed {len(outs)} output(s)")
        if not quiet and not outs:
            problems.append(f"{where} produced no output")
        for o in outs:
            if o.output_type == "stream" and o.name == "stderr":
                problems.append(f"{where} wrote to stderr: {o.text.strip()[:200]}")
            if o.output_type == "error":
                problems.append(f"{where} raised {o.ename}: {o.evalue}")
            if o.output_type not in ("execute_result", "display_data", "stream"):
                continue
            data = o.get("data", {"text/plain": o.get("text", "")})
            for mime, v in data.items():
                if mime == "image/png":
                    n = len(base64.b64decode(v))
                    if n > MAX_PNG:
                        problems.append(f"{where}: PNG of {n} bytes (limit {MAX_PNG}); lower the DPI or size")
                elif mime.startswith("image/"):
                    problems.append(f"{where}: {mime} output; figures are committed as PNG only")
                else:
                    text = v if isinstance(v, str) else "".join(v)
                    if len(text) > MAX_TEXT:
                        problems.append(f"{where}: {mime} output of {len(text)} characters (limit {MAX_TEXT})")
                    if mime == "text/html" and text.count("<tr") > MAX_ROWS + 1:
                        problems.append(f"{where}: a table of {text.count('<tr') - 1} rows (limit {MAX_ROWS})")
                    for root in tmp_roots:
                        if root and root in text:
                            problems.append(f"{where}: output names the temporary path {root}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="keep regenerated outputs even where they differ from the committed ones")
    ap.add_argument("notebooks", nargs="+", type=pathlib.Path)
    args = ap.parse_args()
    tmp_roots = [os.environ.get("ROUTESIM_NB_OUT", ""), os.path.dirname(os.environ.get("ROUTESIM", "")), "/tmp/"]
    failed = False
    start = time.monotonic()
    for path in args.notebooks:
        t0 = time.monotonic()
        nb = nbformat.read(path, as_version=4)
        before = texts(nb)
        client = NotebookClient(nb, timeout=TIMEOUT_S, kernel_name="python3", record_timing=False,
                                resources={"metadata": {"path": str(path.parent.resolve())}})
        problems = []
        try:
            client.execute()
        except CellExecutionError as e:
            problems.append(f"a cell failed:\n{str(e)[-2000:]}")
        # How the kernel chunked a cell's prints depends on timing: keep
        # each stream as one output, so the notebook reads the same on
        # every run (texts() merges the committed outputs alike).
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = [nbformat.from_dict(o) for o in merge_streams(cell.outputs)]
        problems += check_outputs(nb, tmp_roots)
        after = texts(nb)
        if not problems and not args.update and before != after:
            changed = [i + 1 for i, (a, b) in enumerate(zip(before, after)) if a != b]
            if len(before) != len(after):
                changed.append("(cell count)")
            problems.append(f"committed outputs are stale: code cells {changed} print something else now; "
                            f"run notebooks/check --update and commit the notebooks")
        nbformat.write(nb, path)
        status = "ok" if not problems else "FAILED"
        print(f"{path}: {status} in {time.monotonic() - t0:.1f} s")
        for p in problems:
            print(f"  {p}")
        failed |= bool(problems)
    print(f"{len(args.notebooks)} notebooks in {time.monotonic() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
