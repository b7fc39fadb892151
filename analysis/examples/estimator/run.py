"""Train and validate a learned per-flow slowdown estimator on netstep ground truth.

1. Generate the ground truth with ``netstep sweep`` (``OUT/sweep.toml``; rerunning resumes): a
   leaf-spine (4 leaves, 2 spines, 4 hosts per leaf, 10 Gb/s, 1 µs, 256 KB buffers), TCP
   NewReno, Poisson web-search flows at several loads and seeds, written to
   ``OUT/data/load=<l>/seed=<s>/``.
2. Train scikit-learn's ``HistGradientBoostingRegressor`` on log slowdown from features known
   before simulating: log size, log ideal FCT, load, whether source and destination share a
   leaf, and how many flows are active (by their ideal FCT) when the flow starts, overall and at
   its source and destination hosts.
3. Validate on held-out seeds: per load and size bucket, W1, nW1 (W1 / true mean) and p50/p99
   relative error of predicted vs true slowdown; print the table (Markdown) and save it with
   plots in ``OUT``.

Usage: ``python analysis/examples/estimator/run.py [--quick] [--out DIR] [--netstep BIN]``.
``--quick`` runs one load and two seeds of 2 ms traffic (a smoke test, seconds).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import netstep_analysis as na

REPO = Path(__file__).resolve().parents[3]
CDF = REPO / "datasets" / "websearch.toml"

SCENARIO = """\
# Ground truth for the estimator example (written by analysis/examples/estimator/run.py).
name = "estimator-leafspine"

[simulation]
seed = 1

[topology]
kind = "leaf_spine"
leaves = 4
spines = 2
hosts_per_leaf = 4

[topology.links]
rate = "10Gbps"
delay = "1us"
buffer = "256KB"

[transport]
kind = "tcp_newreno"
rto_min = "1ms"
rto_initial = "1ms"

[[traffic]]
kind = "poisson"
load = 0.5
cdf = "{cdf}"
duration = "{duration}"
"""

# rounds: boosting iterations; threads: OpenMP threads for training (None: one per core; the
# quick form's few hundred flows gain nothing from more than one, and on a loaded machine
# every parallel step would wait for a descheduled thread); sweep_timeout_s: the longest
# wait for `netstep sweep` before the example gives up with an error.
FULL: dict[str, Any] = {
    "loads": (0.3, 0.5, 0.7),
    "seeds": tuple(range(1, 17)),
    "test_seeds": 4,
    "ms": 20,
    "rounds": 300,
    "threads": None,
    "sweep_timeout_s": 3600,
}
QUICK: dict[str, Any] = {
    "loads": (0.5,),
    "seeds": (1, 2),
    "test_seeds": 1,
    "ms": 2,
    "rounds": 40,
    "threads": 1,
    "sweep_timeout_s": 300,
}

FEATURES = [
    "log_size",
    "log_ideal_fct",
    "load",
    "same_leaf",
    "n_active",
    "n_active_src",
    "n_active_dst",
]


def netstep_binary(arg: str | None) -> Path:
    """The netstep binary: ``--netstep``, else ``$NETSTEP_BIN``, else the release build."""
    path = Path(arg or os.environ.get("NETSTEP_BIN") or REPO / "target" / "release" / "netstep")
    if not path.exists():
        sys.exit(f"error: {path}: netstep binary not found (cargo build --release, or --netstep)")
    return path


def toml_value(text: str) -> str:
    """A ``--set`` value as a TOML literal: as given when it parses (``8``, ``"1us"``,
    ``{ kind = "step", k = "20KB" }``), else quoted as a string (``dctcp``, ``10Gbps``)."""
    try:
        tomllib.loads(f"v = {text}")
        return text
    except tomllib.TOMLDecodeError:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(
    binary: Path, out: Path, cfg: dict, jobs: int, overrides: list[str] | None = None
) -> Path:
    """Run every (load, seed) of the sweep with ``netstep sweep`` into ``out/data``.

    Writes ``out/scenario.toml`` and ``out/sweep.toml`` (``overrides``, ``KEY=VALUE`` as for
    ``netstep run --set``, go into its ``[set]`` table); points already done (an earlier run of
    this script with the same settings) are skipped. Returns the sweep folder.
    """
    out.mkdir(parents=True, exist_ok=True)
    (out / "scenario.toml").write_text(
        SCENARIO.format(cdf=CDF.as_posix(), duration=f"{cfg['ms']}ms")
    )
    loads = ", ".join(str(lo) for lo in cfg["loads"])
    seeds = ", ".join(str(s) for s in cfg["seeds"])
    sweep = out / "sweep.toml"
    sweep.write_text(
        "# The estimator's ground truth (written by analysis/examples/estimator/run.py).\n"
        'name = "estimator"\n'
        'scenario = "scenario.toml"\n'
        f"seeds = [{seeds}]\n\n"
        "[grid]\n"
        f'load = {{ key = "traffic.0.load", values = [{loads}] }}\n'
    )
    if overrides:
        lines = ["", "[set]"]
        for item in overrides:
            key, sep, value = item.partition("=")
            if not sep:
                raise SystemExit(f"error: --set {item!r}: expected KEY=VALUE")
            lines.append(f'"{key.strip()}" = {toml_value(value.strip())}')
        with sweep.open("a") as f:
            f.write("\n".join(lines) + "\n")
    data = out / "data"
    cmd = [str(binary), "sweep", str(sweep), "--out", str(data), "--jobs", str(jobs), "--quiet"]
    try:
        # subprocess.run kills the driver on timeout, and the driver's runs exit with it.
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=cfg["sweep_timeout_s"])
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(
            f"{' '.join(cmd)} did not finish within {cfg['sweep_timeout_s']} s; stopped"
        ) from e
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
    return data


def features(data: Path) -> tuple[pl.DataFrame, na.RunParams]:
    """Flows of every run with the estimator's features and the sweep's run parameters."""
    frames = na.load(data)
    params = na.run_params(frames)
    flows = frames["flows"].collect()
    links = pl.read_parquet(next(data.glob("**/links.parquet")))
    leaf_of = dict(
        links.filter(pl.col("node_kind").cast(pl.String) == "host")
        .select("node", "peer")
        .iter_rows()
    )
    parts = []
    for (_load, _seed), run in flows.group_by(["load", "seed"], maintain_order=True):
        start = run["start_ns"].to_numpy().astype(np.float64)
        ideal_end = start + run["ideal_fct_ns"].to_numpy().astype(np.float64)
        src, dst = run["src"].to_numpy(), run["dst"].to_numpy()
        # active[i, j]: flow j would still be running when flow i starts (j != i).
        active = (start[None, :] <= start[:, None]) & (start[:, None] < ideal_end[None, :])
        np.fill_diagonal(active, False)
        parts.append(
            run.with_columns(
                n_active=pl.Series(active.sum(axis=1)),
                n_active_src=pl.Series((active & (src[None, :] == src[:, None])).sum(axis=1)),
                n_active_dst=pl.Series((active & (dst[None, :] == dst[:, None])).sum(axis=1)),
            )
        )
    out = pl.concat(parts).with_columns(
        log_size=pl.col("size_bytes").cast(pl.Float64).log10(),
        log_ideal_fct=pl.col("ideal_fct_ns").cast(pl.Float64).log10(),
        same_leaf=(
            pl.col("src").replace_strict(leaf_of) == pl.col("dst").replace_strict(leaf_of)
        ).cast(pl.Int8),
        load=pl.col("load").cast(pl.Float64),
    )
    return out, params


def out_of_fold_residuals(model, train: pl.DataFrame, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Residuals of log slowdown on the training flows, each from a model that did not see it.

    Folds hold out whole runs (load, seed) when there are at least two, so the residuals are
    as large as on unseen seeds rather than the (smaller) in-sample ones.
    """
    from sklearn.base import clone
    from sklearn.model_selection import GroupKFold, KFold, cross_val_predict

    groups = train.select(pl.struct("load", "seed").rank("dense")).to_series().to_numpy()
    n_groups = len(np.unique(groups))
    if n_groups >= 2:
        cv = GroupKFold(n_splits=min(5, n_groups))
        oof = cross_val_predict(clone(model), x, y, cv=cv, groups=groups)
    else:
        cv = KFold(n_splits=max(2, min(5, len(y))), shuffle=True, random_state=0)
        oof = cross_val_predict(clone(model), x, y, cv=cv)
    return y - oof


def sample_residuals(
    train: pl.DataFrame, residuals: np.ndarray, test: pl.DataFrame, params: na.RunParams
) -> np.ndarray:
    """One residual per test flow, drawn from training flows of the same load and size bucket.

    Falls back to the bucket over all loads when that pool has fewer than 20 flows, and to
    every residual when the bucket has none.
    """
    rng = np.random.default_rng(0)
    bucket = na.size_bucket("size_bytes", params.mtu_bytes, params.bdp_bytes).cast(pl.String)
    key = pl.format("{}|{}", pl.col("load"), bucket)
    train_k = train.select(key).to_series().to_numpy()
    train_b = train.select(bucket).to_series().to_numpy()
    test_k = test.select(key).to_series().to_numpy()
    test_b = test.select(bucket).to_series().to_numpy()
    out = np.zeros(test.height)
    for k in np.unique(test_k):
        idx = np.flatnonzero(test_k == k)
        pool = residuals[train_k == k]
        if pool.size < 20:
            pool = residuals[train_b == test_b[idx[0]]]
        if pool.size == 0:
            pool = residuals
        out[idx] = rng.choice(pool, size=idx.size, replace=True)
    return out


ESTIMATORS = {"point": "point", "sampled": "point + residual"}
"""Prediction columns compared with the truth, and their names in the table."""


def validate(test: pl.DataFrame, params: na.RunParams) -> pl.DataFrame:
    """Per (estimator, load, bucket) comparison with the truth; load ``all`` pools the loads."""
    rows = []
    groups = [("all", test)] + [
        (f"{lo:g}", test.filter(pl.col("load") == lo)) for lo in sorted(test["load"].unique())
    ]
    for column in ESTIMATORS:
        for label, part in groups:
            truth = part.select("size_bytes", "slowdown")
            pred = part.select("size_bytes", pl.col(column).alias("slowdown"))
            table = na.w1_by_bucket(truth, pred, params)
            rows.append(table.with_columns(estimator=pl.lit(column), load=pl.lit(label)))
    return pl.concat(rows).select(
        "estimator",
        "load",
        pl.col("bucket").cast(pl.String),
        "n_a",
        "w1",
        "nw1",
        "rel_err_p50",
        "rel_err_p99",
        "few_samples",
    )


def markdown(table: pl.DataFrame) -> str:
    """The validation table as Markdown: a row per (load, bucket), the estimators side by side."""
    head = ["load", "bucket", "n"]
    for name in ESTIMATORS.values():
        head += [f"W1 {name}", f"nW1 {name}", f"p99 err {name}"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first = table.filter(pl.col("estimator") == next(iter(ESTIMATORS)))
    for r in first.iter_rows(named=True):
        n = r["n_a"]
        cells = [r["load"], r["bucket"], f"{n}{'*' if r['few_samples'] and n else ''}"]
        for column in ESTIMATORS:
            e = table.filter(
                (pl.col("estimator") == column)
                & (pl.col("load") == r["load"])
                & (pl.col("bucket") == r["bucket"])
            ).row(0, named=True)
            if n == 0:
                cells += ["–", "–", "–"]
            else:
                cells += [f"{e['w1']:.2f}", f"{e['nw1']:.3f}", f"{e['rel_err_p99']:+.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "n: held-out flows (* fewer than 100). W1 in slowdown units; nW1 = W1 / true mean; "
        "p99 err = (p99 predicted - p99 true) / p99 true."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Generate, train, validate; print the validation table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "out" / "estimator"), help="output folder")
    parser.add_argument("--quick", action="store_true", help="one load, 2 seeds, 2 ms")
    parser.add_argument("--netstep", help="netstep binary (default $NETSTEP_BIN or release)")
    parser.add_argument("--jobs", type=int, default=2, help="netstep runs in parallel")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="scenario override for every run, e.g. --set transport.cc=dctcp (repeatable)",
    )
    args = parser.parse_args(argv)
    from sklearn.ensemble import HistGradientBoostingRegressor
    from threadpoolctl import threadpool_limits

    cfg = QUICK if args.quick else FULL
    out = Path(args.out)
    t0 = time.perf_counter()
    generate(netstep_binary(args.netstep), out, cfg, args.jobs, args.overrides)
    t_gen = time.perf_counter() - t0

    flows, params = features(out / "data")
    flows = flows.filter(pl.col("completed"))
    test_seeds = cfg["seeds"][-cfg["test_seeds"] :]
    is_test = pl.col("seed").is_in(list(test_seeds))
    train, test = flows.filter(~is_test), flows.filter(is_test)
    if train.height == 0 or test.height == 0:
        sys.exit("error: no completed flows to train or test on")

    model = HistGradientBoostingRegressor(
        max_iter=cfg["rounds"],
        learning_rate=0.05,
        min_samples_leaf=20 if train.height >= 200 else 2,
        random_state=0,
    )
    x_train, y_train = train.select(FEATURES).to_numpy(), np.log(train["slowdown"].to_numpy())
    with threadpool_limits(limits=cfg["threads"], user_api="openmp"):
        model.fit(x_train, y_train)
        log_pred = model.predict(test.select(FEATURES).to_numpy())
        residuals = out_of_fold_residuals(model, train, x_train, y_train)
    sampled = log_pred + sample_residuals(train, residuals, test, params)
    test = test.with_columns(
        point=pl.Series(np.exp(log_pred)), sampled=pl.Series(np.maximum(np.exp(sampled), 1.0))
    )

    table = validate(test, params)
    table.write_csv(out / "validation.csv")
    md = markdown(table)
    (out / "validation.md").write_text(md + "\n")

    truth = test.select("size_bytes", "slowdown")
    preds = {
        f"estimator: {name}": test.select("size_bytes", pl.col(column).alias("slowdown"))
        for column, name in ESTIMATORS.items()
    }
    cdf = na.plot_slowdown_cdf(
        {"netstep (truth)": truth, **preds},
        params,
        out / "cdf_pred_vs_true.png",
        title="Held-out seeds: predicted vs true slowdown per size bucket",
    )
    bars = na.plot_w1_by_bucket(
        truth,
        {**preds, "baseline: slowdown = 1": truth.with_columns(slowdown=pl.lit(1.0))},
        params,
        out / "w1_by_bucket.png",
        title="Held-out seeds: W1 of slowdown per size bucket vs netstep",
    )
    print(
        f"ground truth: {len(cfg['loads'])} load(s) × {len(cfg['seeds'])} seeds, "
        f"{cfg['ms']} ms of arrivals each, {flows.height} completed flows "
        f"(netstep {t_gen:.1f} s); buckets: {params.describe()}"
    )
    print(
        f"train seeds {list(cfg['seeds'][: -cfg['test_seeds']])}: {train.height} flows; "
        f"held-out seeds {list(test_seeds)}: {test.height} flows"
    )
    print()
    print(md)
    print()
    print(f"table: {out / 'validation.md'}")
    print(f"plots: {cdf} {bars}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
