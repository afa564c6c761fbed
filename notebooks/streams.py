"""What a notebook shows, independent of how the kernel chunked it.

A kernel sends a cell's printed output as stream messages whose boundaries
depend on when its buffers were flushed: the same print()s arrive as one
stream output on one run and as three on the next. merge_streams joins
consecutive outputs of one stream and applies carriage returns as a
terminal would (what nbconvert's coalesce_streams does), so a notebook
written after it, and texts() read from it, are the same on every run.

Plain Python (no Jupyter): works on nbformat's notebooks and on json.load()s.
"""

import copy
import re

# A line's text before a carriage return that more text on the line
# overwrites (a progress counter), as a terminal shows it.
_OVERWRITTEN = re.compile(r"[^\n]*\r(?=[^\n])")


def _text(t):
    """A notebook's text field: a string, or a list of lines on disk."""
    return "".join(t) if isinstance(t, list) else t


def merge_streams(outputs):
    """outputs with every run of consecutive stream outputs of one name
    (stdout, stderr) joined into one and its carriage returns applied;
    other outputs, and their order, kept. The input is not modified."""
    merged = []
    for o in outputs:
        if o["output_type"] == "stream" and merged and merged[-1]["output_type"] == "stream" \
                and merged[-1]["name"] == o["name"]:
            merged[-1]["text"] += _text(o["text"])
            continue
        o = copy.deepcopy(o)
        if o["output_type"] == "stream":
            o["text"] = _text(o["text"])
        merged.append(o)
    for o in merged:
        if o["output_type"] == "stream" and "\r" in o["text"]:
            o["text"] = _OVERWRITTEN.sub("", o["text"])
    return merged


def texts(nb):
    """The text a reader sees, per code cell: streams (merged), plain
    text, HTML."""
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        parts = []
        for o in merge_streams(cell.get("outputs", [])):
            if o["output_type"] == "stream":
                parts.append(f"[{o['name']}] {o['text']}")
            elif o["output_type"] in ("execute_result", "display_data"):
                for mime in ("text/html", "text/plain"):
                    if mime in o["data"]:
                        parts.append(f"[{mime}] {_text(o['data'][mime])}")
                        break
            elif o["output_type"] == "error":
                parts.append(f"[error] {o['ename']}: {o['evalue']}")
        out.append("".join(parts))
    return out
