"""Helpers the notebooks share: run routesim, place its outputs, style plots.

The notebooks call the routesim binary named by $ROUTESIM (notebooks/check
builds one from the checkout); without it they build one with `go build`
into a temporary directory. Outputs go under $ROUTESIM_NB_OUT, else a new
temporary directory, never into the repository.
"""

import os
import pathlib
import shutil
import subprocess
import tempfile

import matplotlib as mpl
import pandas as pd
from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

REPO = pathlib.Path(__file__).resolve().parent.parent

# The sweep's default workload (README, "The two commands"), spelled out for
# `routesim run`: the embedded arXiv-trace window of the 8×A100 study.
STUDY = ["--trace", "arxiv-window", "--max-isl", "16384", "--skip", "60",
         "--first", "1000", "--rate-scale", "0.7365", "--max-model-len", "16384"]

# One colour and marker per policy, the same in every notebook.
POLICY_STYLE = {
    "round-robin": {"color": "#1f77b4", "marker": "o"},
    "kv-admission": {"color": "#d62728", "marker": "s"},
    "kv-backpressure": {"color": "#2ca02c", "marker": "^", "ls": "--"},
    "kv": {"color": "#9467bd", "marker": "D"},
    "sglang-cache-aware": {"color": "#ff7f0e", "marker": "v"},
    "llm-d": {"color": "#8c564b", "marker": "P"},
    "session-affinity": {"color": "#e377c2", "marker": "X"},
    "ray-prefix-affinity": {"color": "#17becf", "marker": "<"},
    "aibrix-prefix-cache": {"color": "#bcbd22", "marker": ">"},
    "prefix-aware": {"color": "#7f7f7f", "marker": "*"},
    "prefix-hash": {"color": "#000000", "marker": "h"},
}

_binary = None
_root = None


def binary():
    """Path of the routesim binary: $ROUTESIM, else one built from REPO."""
    global _binary
    if _binary is None:
        path = os.environ.get("ROUTESIM")
        if not path:
            path = os.path.join(tempfile.mkdtemp(prefix="routesim-bin-"), "routesim")
            subprocess.run(["go", "build", "-o", path, "./cmd/routesim"], cwd=REPO, check=True)
        _binary = path
    return _binary


def routesim(*args):
    """Run routesim from the repository root and return its stdout.

    A non-zero exit raises RuntimeError carrying the command and its stderr.
    """
    argv = [binary(), *map(str, args)]
    r = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"routesim {' '.join(argv[1:])} exited {r.returncode}:\n{r.stderr}")
    return r.stdout


def outdir(name):
    """A fresh, empty directory for one command's outputs."""
    global _root
    if _root is None:
        _root = pathlib.Path(os.environ.get("ROUTESIM_NB_OUT") or tempfile.mkdtemp(prefix="routesim-nb-"))
    d = _root / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


def occupancy(starts_ns, ends_ns):
    """How many intervals [start, end) are open over time: the times (s) at
    which the count changes and the count from each on."""
    ev = pd.concat([pd.Series(1, index=starts_ns), pd.Series(-1, index=ends_ns)]).sort_index()
    c = ev.groupby(level=0).sum().cumsum()
    return c.index.values / 1e9, c.values


def printed(text):
    """Print routesim's report without the lines naming output paths."""
    print("\n".join(l for l in text.splitlines() if not l.startswith("wrote ")).rstrip())


def style():
    """Small, legible figures: committed notebooks stay light."""
    mpl.rcParams.update({
        "figure.dpi": 72,
        "savefig.dpi": 72,
        "figure.figsize": (9, 3.4),
        "figure.constrained_layout.use": True,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "font.size": 9,
        "legend.fontsize": 8,
        "legend.frameon": False,
        "axes.spines.top": False,
        "axes.spines.right": False,
    })


def logy(ax):
    """Log-scale y with plain-number labels at 1-2-5 steps, so even a short
    range shows several labelled ticks."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    fmt = ScalarFormatter()
    fmt.set_scientific(False)
    ax.yaxis.set_major_formatter(fmt)
    ax.yaxis.set_minor_formatter(NullFormatter())
