"""The HTML report of ``leansvm fit``: one self-contained file, plots embedded as PNG.

``write_report(result, path)`` writes a page with the dataset summary, every
decision of the pipeline (with fallbacks), the candidate models, and these
plots (matplotlib, Agg backend, imported only here):

- the hyperparameter surface: cross-validated accuracy over (C, gamma);
- accuracy against the number of support vectors for the exact, compressed
  and budget models;
- test-time cost per 1000 predictions of each model and of LIBSVM's full model;
- the screening rate along the C path (when the screened path search ran);
- decision boundaries (two-feature data only).

A regression or novelty job's page (:func:`render_one_output_report`) has the same sections, with
the task's error in place of accuracy, and these plots: error against the number of vectors, with
the limit the choice used; regression: the tuning's cross-validated R^2 over (C, gamma), predicted
against true values and the residuals of the exact and the returned model; novelty detection: the
decision values of the exact and the returned model, with the threshold at 0; the prediction cost.

No script, no external resource: the page shows the same offline, in any browser.
"""

from __future__ import annotations

import base64
import html
import io as _io
import re

import numpy as np

_NUMBER = re.compile(r"[-+]?[0-9.]+(e[-+]?[0-9]+)?x?")

KIND_STYLE = {"exact": ("tab:blue", "o"), "compressed": ("tab:green", "s"), "budget": ("tab:orange", "^"),
              "refit": ("tab:purple", "D")}   # refit: the choice trained again on all rows (no validation accuracy)


def number_cell(value, spec=".4g") -> str:
    """A number as a table cell, '-' where there is none (None; NaN: e.g. a model refit on all rows
    has no validation accuracy)."""
    return "-" if value is None or not np.isfinite(value) else format(value, spec)


def drop_cell(drop) -> str:
    """'0.31 +- 0.22 (0.67)': a :class:`~leansvm.job.estimates.DropEstimate` in points, or '-'."""
    if drop is None:
        return "-"
    return f"{100 * drop.mean:.2f} +- {100 * drop.se:.2f} ({100 * drop.upper:.2f})"


def accuracy_cell(value) -> str:
    """An accuracy as a table cell: four decimals, '-' where there is none."""
    return number_cell(value, ".4f")


def _label(c, result) -> str:
    """A model's name with its role: chosen on validation, and/or returned."""
    if c is result.chosen:
        return c.name + " (chosen)"
    return c.name + (" (returned)" if c is result.final else "")


def _pyplot():
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def _png(fig) -> str:
    """The figure as a base64 PNG, and closed."""
    plt = _pyplot()
    buffer = _io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


# -- plots -----------------------------------------------------------------------------
def plot_searched_surface(selection) -> str:
    """The wide search's cells on log2 axes: the last round's coloured by CV accuracy, earlier rounds'
    (the gammas halving dropped, and the coarse cells the kept ones were refined from) as grey
    dots, the chosen cell as a red star; edges the search extended are named in the title."""
    plt = _pyplot()
    found = selection.search
    last = found.rounds[-1]["round"]
    final = [c for c in found.cells if c.round == last]
    earlier = [c for c in found.cells if c.round != last]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    if earlier:
        ax.scatter([c.log2_C for c in earlier], [c.log2_gamma for c in earlier], s=10, color="0.75",
                   label="earlier rounds (fewer rows; gammas dropped by halving)")
    points = ax.scatter([c.log2_C for c in final], [c.log2_gamma for c in final], c=[c.accuracy for c in final],
                        cmap="viridis", s=60, marker="s", label=f"last round ({found.rounds[-1]['rows']} rows)")
    ax.scatter([np.log2(selection.C)], [np.log2(selection.gamma / found.scale)], marker="*", s=300,
               color="red", edgecolor="white", label=f"chosen: {found.accuracy:.4f} +- {selection.se:.4f} (SE)")
    ax.set_xlabel("log2 C")
    ax.set_ylabel("log2 (gamma / scale)")
    ax.legend(loc="best", fontsize=8)
    fig.colorbar(points, ax=ax, label=f"{selection.n_folds}-fold CV accuracy (last round)")
    title = "Searched (C, gamma) cells"
    if found.extended:
        title += f"; range extended {len(found.extended)} time(s)"
    ax.set_title(title)
    return _png(fig)


def plot_surface(selection) -> str:
    """Heat map of validation accuracy over gamma (rows) and C (columns), chosen cell outlined
    (a given grid); the wide search's cells on log axes (:func:`plot_searched_surface`)."""
    if getattr(selection, "search", None) is not None:
        return plot_searched_surface(selection)
    plt = _pyplot()
    acc = selection.accuracy
    fig, ax = plt.subplots(figsize=(1.2 * len(selection.Cs) + 2.5, 0.8 * len(selection.gammas) + 2))
    image = ax.imshow(acc, origin="lower", cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(selection.Cs)), [f"{c:g}" for c in selection.Cs])
    ax.set_yticks(range(len(selection.gammas)), [f"{g:.3g}" for g in selection.gammas])
    ax.set_xlabel("C")
    ax.set_ylabel("gamma")
    middle = (np.nanmax(acc) + np.nanmin(acc)) / 2
    for i in range(acc.shape[0]):
        for j in range(acc.shape[1]):
            ax.text(j, i, f"{acc[i, j]:.3f}", ha="center", va="center", fontsize=8,
                    color="black" if acc[i, j] > middle else "white")
    i = int(np.flatnonzero(selection.gammas == selection.gamma)[0])
    j = int(np.flatnonzero(selection.Cs == selection.C)[0])
    ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5))
    fig.colorbar(image, ax=ax, label=f"{selection.n_folds}-fold CV accuracy")
    ax.set_title("Validation accuracy over C and gamma (red: chosen)")
    return _png(fig)


def plot_by_kind(ax, candidates, validation, test):
    """One curve per kind of model (KIND_STYLE) of the attribute ``validation`` against the number
    of vectors (filled markers) and of ``test`` (hollow, dashed) where every model of the kind has it."""
    for kind, (color, marker) in KIND_STYLE.items():
        models = sorted((c for c in candidates if c.kind == kind), key=lambda c: c.n_support)
        if not models:
            continue
        sizes = [c.n_support for c in models]
        ax.plot(sizes, [getattr(c, validation) for c in models], marker=marker, color=color,
                label=f"{kind} (validation)")
        if all(getattr(c, test) is not None for c in models):
            ax.plot(sizes, [getattr(c, test) for c in models], marker=marker, color=color,
                    linestyle="--", markerfacecolor="none", label=f"{kind} (test)")


def plot_accuracy_vs_size(result) -> str:
    """Validation (filled) and test (hollow) accuracy against #SV, by kind of model."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    plot_by_kind(ax, result.candidates, "validation_accuracy", "test_accuracy")
    exact = [c.validation_accuracy for c in result.candidates if c.kind == "exact"]
    reference = result.reference.validation_accuracy if result.reference is not None else \
        exact[0] if exact else np.nanmax([c.validation_accuracy for c in result.candidates])
    ax.axhline(reference - result.max_accuracy_drop, color="grey", linestyle=":",
               label=f"{result.reference_name()} - {100 * result.max_accuracy_drop:g} points")
    ax.scatter([result.chosen.n_support], [result.chosen.validation_accuracy], s=250, facecolors="none",
               edgecolors="red", linewidths=2, label="chosen", zorder=5)
    if result.libsvm_n_support and result.libsvm_test_accuracy is not None:
        ax.scatter([result.libsvm_n_support], [result.libsvm_test_accuracy], marker="x", color="black",
                   s=80, label="LIBSVM full (test)", zorder=4)
    ax.set_xscale("log")
    ax.set_xlabel("number of support vectors (log scale)")
    ax.set_ylabel("accuracy")
    ax.set_title("Accuracy against model size")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))  # outside: never hides a point
    return _png(fig)


def plot_prediction_cost(result) -> str:
    """Horizontal bars: milliseconds per 1000 predictions, LIBSVM's full model included."""
    plt = _pyplot()
    models = sorted(result.candidates, key=lambda c: c.seconds_per_1000)
    names = [_label(c, result) for c in models]
    values = [1000 * c.seconds_per_1000 for c in models]
    colors = [KIND_STYLE[c.kind][0] for c in models]
    if result.libsvm_seconds_per_1000 is not None:
        names.append("LIBSVM full (sklearn SVC)")
        values.append(1000 * result.libsvm_seconds_per_1000)
        colors.append("black")
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(names) + 1.5))
    ax.barh(range(len(names)), values, color=colors)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    for k, v in enumerate(values):
        ax.text(v, k, f" {v:.2f}", va="center", fontsize=8)
    ax.set_xlabel("milliseconds per 1000 predictions (best of 5)")
    ax.set_title("Test-time cost")
    ax.set_xlim(0, 1.2 * max(values))
    return _png(fig)


def plot_screening(selection) -> str:
    """Screening rate (fraction of non-SVs removed before solving) along the C path at the chosen gamma."""
    plt = _pyplot()
    Cs, rate = selection.screening
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(Cs, rate, marker="o", label=f"Intersection Test, gamma = {selection.gamma:.3g}")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("C (path from small to large, warm start)")
    ax.set_ylabel("screened / non-support vectors")
    ax.set_title("Safe screening along the C path")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def _boundary_models(result):
    """Up to four models to draw: exact, chosen, smallest compressed, largest budget."""
    picks = []
    for pick in ([c for c in result.candidates if c.kind == "exact"][:1], [result.chosen],
                 sorted((c for c in result.candidates if c.kind == "compressed"), key=lambda c: c.n_support)[:1],
                 sorted((c for c in result.candidates if c.kind == "budget"), key=lambda c: -c.n_support)[:1]):
        for c in pick:
            if all(c is not p for p in picks):
                picks.append(c)
    return picks[:4]


def plot_boundaries(result, resolution=150) -> str:
    """Predicted regions of a few models over the 2-D training data, support vectors circled."""
    plt = _pyplot()
    X, y = result.data_2d
    models = _boundary_models(result)
    pad = 0.05 * (X.max(axis=0) - X.min(axis=0)) + 1e-9
    lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution))
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    classes = result.classes
    y_index = np.searchsorted(classes, y)
    fig, axes = plt.subplots(1, len(models), figsize=(4 * len(models), 4), squeeze=False)
    for ax, c in zip(axes[0], models):
        region = np.searchsorted(classes, c.model.predict(grid)).reshape(g0.shape)
        ax.contourf(g0, g1, region, levels=np.arange(len(classes) + 1) - 0.5, cmap="coolwarm", alpha=0.3)
        ax.scatter(X[:, 0], X[:, 1], c=y_index, cmap="coolwarm", s=6, vmin=0, vmax=len(classes) - 1)
        sv = c.model.expansion_.support_vectors
        sv = sv.toarray() if hasattr(sv, "toarray") else sv
        ax.scatter(sv[:, 0], sv[:, 1], s=30, facecolors="none", edgecolors="black", linewidths=0.7)
        ax.set_title(f"{c.name}\n{c.n_support} SV, val acc {c.validation_accuracy:.3f}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle("Decision regions (circles: support vectors)")
    return _png(fig)


# -- page ------------------------------------------------------------------------------
_CSS = """
body { font-family: system-ui, sans-serif; max-width: 1000px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.chosen { background: #fff3c4; font-weight: 600; }
.fallback { color: #a33; }
figure { margin: 1em 0 2em; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; }
.note { color: #666; font-size: 0.9em; }
"""


def _esc(value) -> str:
    return html.escape(str(value))


def _table(header, rows, classes=None) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = []
    for k, row in enumerate(rows):
        cls = f' class="{classes[k]}"' if classes and classes[k] else ""
        cells = "".join(f'<td class="num">{_esc(v)}</td>' if _NUMBER.fullmatch(str(v))
                        else f"<td>{_esc(v)}</td>" for v in row)
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def text_table(rows) -> list[str]:
    """``rows`` of cells (the first the header) as aligned lines for a terminal: the first column
    to the left, the others, numbers, to the right."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
            for r in rows]


def _figure(png: str, name: str, alt: str, caption: str) -> str:
    return (f'<figure class="plot" id="plot-{name}"><img alt="{_esc(alt)}" '
            f'src="data:image/png;base64,{png}"><figcaption>{_esc(caption)}</figcaption></figure>')


#: the summary's words for each task
TASK_WORDS = {"classification": "classification (C-SVC)", "regression": "regression (epsilon-SVR)",
              "novelty": "novelty detection (one-class SVM)"}


def summary_section(result) -> str:
    """The report's 'Dataset' table for a result of any task: the data's sizes and storage, the
    preprocessing, the tuned parameters, what the choice allowed, the total time (classification:
    the classes and the route too)."""
    s = result.summary
    held = f" ({s['n_validation']} held out for validation)" if s.get("n_validation") else ""
    params = ", ".join(f"{k} = {v:.4g}" for k, v in result.params.items()) or "-"
    rows = [("task", _esc(TASK_WORDS.get(result.task, result.task))),
            ("training samples", _esc(f"{s['n_train']}{held}")), ("test samples", _esc(s["n_test"] or "none")),
            ("features", _esc(s["n_features"])),
            ("preprocessing", _esc(result.preprocessing or "none (numeric data used as given)")),
            ("storage", _esc("sparse (density %.3f)" % s["density"] if s["sparse"] else "dense"))]
    if result.task == "classification":
        rows += [("classes (count)", ", ".join(f"{_esc(c)} ({n})" for c, n in zip(s["classes"], s["class_counts"]))),
                 ("route", _esc(result.route))]
    allowed = result.allowed or f"accuracy within {100 * result.max_accuracy_drop:g} percentage points of the " \
                                "exact model's"
    rows += [("parameters", _esc(params)), ("the choice", _esc(allowed)), ("total time", f"{result.seconds:.1f} s")]
    body = "".join(f"<tr><th>{_esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<h2>Dataset</h2><table>{body}</table>"


def _steps_section(result) -> str:
    rows = [(s.stage, s.choice, s.reason, f"{s.seconds:.2f}" if s.seconds else "",
             f"fallback: {s.fallback}" if s.fallback else "") for s in result.steps]
    classes = ["fallback" if s.fallback else "" for s in result.steps]
    return ("<h2>What was chosen, and why</h2>"
            + _table(("stage", "choice", "why", "seconds", "fallback"), rows, classes))


def models_section(result, columns, last_row=None, note="") -> str:
    """The report's Models table for every task: one row per candidate (the exact model first, the refit
    last, the rest by kind and size; the chosen and the returned marked), its name, kind and vectors,
    then ``columns``, (header, cell of a candidate) pairs; ``last_row``: the cells of one more row (LIBSVM's
    full model) or None; ``note``: HTML under the table."""
    models = sorted(result.candidates, key=lambda c: (c.kind != "exact", c.kind == "refit", c.kind, c.n_support))
    rows = [(_label(c, result), c.kind, c.n_support, *(cell(c) for _, cell in columns)) for c in models]
    classes = ["chosen" if c is result.chosen or c is result.final else "" for c in models]
    if last_row is not None:
        rows.append(last_row)
        classes.append("")
    return ("<h2>Models</h2>" + _table(("model", "kind", "vectors", *(h for h, _ in columns)), rows, classes) + note
            + '<p class="note">Prediction times are best of 5 on a shared machine; compare ratios.</p>')


def cost_columns(against, against_seconds) -> list:
    """The Models table's last columns: fit seconds, milliseconds per 1000 predictions and the speed
    against ``against``, whose seconds per 1000 predictions are ``against_seconds`` (None: '-')."""
    def speed(c):
        return "-" if not (c.seconds_per_1000 and against_seconds) else f"{against_seconds / c.seconds_per_1000:.1f}x"

    return [("fit s", lambda c: f"{c.fit_seconds:.2f}"),
            ("ms / 1000 predictions",
             lambda c: number_cell(None if c.seconds_per_1000 is None else 1000 * c.seconds_per_1000, ".3f")),
            (f"speed vs {against}", speed)]


def _models_section(result) -> str:
    lib, against = result.libsvm_seconds_per_1000, result.reference_name()
    columns = [("validation acc", lambda c: accuracy_cell(c.validation_accuracy)),
               (f"drop vs {against} (points, bound)", lambda c: drop_cell(c.drop)),
               ("test acc", lambda c: accuracy_cell(c.test_accuracy))] + cost_columns("LIBSVM", lib)
    libsvm = None if lib is None else ("LIBSVM full model (scikit-learn SVC)", "reference", result.libsvm_n_support,
                                       "-", "-", accuracy_cell(result.libsvm_test_accuracy), "-", f"{1000 * lib:.3f}",
                                       "1.0x")
    return models_section(result, columns, libsvm, (
        f'<p class="note">Drop vs {_esc(against)}: the accuracy the model gives up against '
        + ('the exact model' if against == "exact" else 'this model, more accurate than the exact SVC '
           'trained on a subsample of the rows') + ' on held-out '
        'rows, paired row by row, with the standard error and the one-sided bound the choice used '
        f'({100 * result.confidence:g} % confidence).</p>'))


def html_page(title, headline, sections, figures, notes, n_plots) -> str:
    """The self-contained page: headline, sections (HTML), the plots (``<figure>`` elements), notes."""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="leansvm-plots" content="{n_plots}">
<link rel="icon" href="data:,">
<title>{_esc(title)}</title><style>{_CSS}</style></head>
<body>
<h1>{_esc(title)}</h1>
<p>{headline}</p>
{sections}
<h2>Plots</h2>
{''.join(figures)}
{''.join(f'<p class="note">{_esc(n)}</p>' for n in notes)}
</body></html>
"""


def render_report(result, title="leansvm fit report") -> tuple[str, list[str]]:
    """(HTML text, names of the plots it embeds) of any task's result; a regression or novelty job's
    page is :func:`render_one_output_report`'s."""
    if result.task != "classification":
        return render_one_output_report(result, title)
    sel = result.selection
    figures, names, notes = [], [], []
    figures.append(_figure(plot_surface(sel), "surface", "hyperparameter surface",
                           f"{sel.n_folds}-fold CV accuracy on {sel.n_samples} training samples "
                           f"({sel.method}); chosen C = {sel.C:.4g}, gamma = {sel.gamma:.4g}"
                           + (f"; range extended: {'; '.join(sel.search.extended)}"
                              if sel.search is not None and sel.search.extended else "")
                           + (f"; {sel.search.stopped}" if sel.search is not None and sel.search.stopped else "")
                           + "."))
    names.append("surface")
    figures.append(_figure(plot_accuracy_vs_size(result), "accuracy-size", "accuracy against support vectors",
                           "Exact, compressed and budget models: validation (filled) and test (hollow) accuracy."))
    names.append("accuracy-size")
    figures.append(_figure(plot_prediction_cost(result), "cost", "prediction cost",
                           "Milliseconds per 1000 predictions of each model"
                           + (" and of LIBSVM's full model." if result.libsvm_seconds_per_1000 else ".")))
    names.append("cost")
    if sel.screening is not None:
        figures.append(_figure(plot_screening(sel), "screening", "screening rate along the C path",
                               "Fraction of non-support vectors removed by safe screening before each solve."))
        names.append("screening")
    else:
        notes.append("Screening rate along the C path: not shown, because the screened path "
                     "(leansvm.svm_path) was not available (see the fallback in the table above).")
    if result.data_2d is not None:
        figures.append(_figure(plot_boundaries(result), "boundaries", "decision boundaries",
                               "Decision regions of the exact, chosen, compressed and budget models."))
        names.append("boundaries")
    chosen = result.chosen
    headline = (f"Chosen: <b>{_esc(chosen.name)}</b> with {chosen.n_support} support vectors, "
                f"validation accuracy {chosen.validation_accuracy:.4f}"
                + (f", test accuracy {chosen.test_accuracy:.4f}" if chosen.test_accuracy is not None else "") + "."
                + (f" Its accuracy drop against "
                   f"{'the exact model' if result.reference_name() == 'exact' else _esc(result.reference_name())}: "
                   f"{_esc(chosen.drop.describe())}; it is taken "
                   f"because that bound is within the allowed {100 * result.max_accuracy_drop:g} points."
                   if chosen.drop is not None else ""))
    final = result.final
    if final is not chosen:                  # refit: LeanResult.final defaults to the chosen candidate
        headline += (f" Returned: <b>{_esc(final.name)}</b> ({final.n_support} support vectors"
                     + (f", test accuracy {final.test_accuracy:.4f}" if final.test_accuracy is not None else "")
                     + "), the same kind and size trained again on the training and validation parts.")
    page = html_page(title, headline, summary_section(result) + _steps_section(result) + _models_section(result),
                     figures, notes, len(names))
    return page, names


def write_report(result, path, title="leansvm fit report") -> list[str]:
    """Write the report atomically; returns the names of the embedded plots."""
    page, names = render_report(result, title)
    write_page(page, path)
    return names


def write_page(page: str, path) -> None:
    """A rendered page to ``path``, atomically (nothing is left half-written)."""
    from leansvm.io import atomic_write

    with atomic_write(path, "w", encoding="utf-8") as f:
        f.write(page)


# the one-output tasks' page: regression and novelty detection

def _error_label(result) -> str:
    return "RMSE" if result.task == "regression" else "share labelled otherwise than the exact model"


def plot_error_vs_size(result) -> str:
    """Validation (filled) and test (hollow) error against the number of vectors, by kind; the
    choice's limit dotted, the chosen model circled."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    plot_by_kind(ax, result.candidates, "validation_error", "test_error")
    ax.axhline(result.limit, color="grey", linestyle=":", label="limit of the choice")
    ax.scatter([result.chosen.n_support], [result.chosen.validation_error], s=250, facecolors="none",
               edgecolors="red", linewidths=2, label="chosen", zorder=5)
    ax.set_xscale("log")
    ax.set_xlabel("number of vectors (log scale)")
    ax.set_ylabel(_error_label(result))
    ax.set_title(f"{result.error_name} against model size")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return _png(fig)


def plot_cv_surface(result) -> str:
    """The tuning's mean CV R^2 per (C, gamma) cell on log axes, the chosen cell starred."""
    plt = _pyplot()
    cv = result.cv_results
    Cs = np.array([p["C"] for p in cv["params"]], dtype=float)
    gammas = np.array([p["gamma"] for p in cv["params"]], dtype=float)
    score = np.asarray(cv["mean_test_score"], dtype=float)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    points = ax.scatter(np.log10(Cs), np.log10(gammas), c=score, cmap="viridis", s=120, marker="s")
    for x, y, v in zip(np.log10(Cs), np.log10(gammas), score):
        ax.annotate(f"{v:.3f}", (x, y), textcoords="offset points", xytext=(0, 9), ha="center", fontsize=7)
    ax.scatter([np.log10(result.params["C"])], [np.log10(result.params["gamma"])], marker="*", s=300,
               color="red", edgecolor="white", label="chosen (smallest C within one SE)")
    fig.colorbar(points, ax=ax, label="mean CV R^2")
    ax.set_xlabel("log10 C")
    ax.set_ylabel("log10 gamma")
    ax.set_title("Cross-validated R^2 over C and gamma")
    ax.legend(fontsize=8, loc="lower right")
    return _png(fig)


def plot_predicted_vs_true(result) -> str:
    """Predicted against true targets on the measured part, for the exact and the returned model."""
    plt = _pyplot()
    ev = result.evaluation
    y = ev["y"]
    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    ax.scatter(y, ev["exact"], s=6, alpha=0.4, color=KIND_STYLE["exact"][0], label="exact SVR")
    ax.scatter(y, ev["chosen"], s=6, alpha=0.4, color="tab:red", label=f"returned: {result.final.name}")
    low, high = float(np.min(y)), float(np.max(y))
    ax.plot([low, high], [low, high], color="black", linewidth=1, label="predicted = true")
    ax.set_xlabel(f"true value ({ev['part']} part)")
    ax.set_ylabel("predicted value")
    ax.set_title("Predicted against true")
    ax.legend(fontsize=8, loc="upper left")
    return _png(fig)


def plot_residuals(result) -> str:
    """Histogram of the residuals (prediction - truth) of the exact and the returned model."""
    plt = _pyplot()
    ev = result.evaluation
    exact, chosen = ev["exact"] - ev["y"], ev["chosen"] - ev["y"]
    bins = np.histogram_bin_edges(np.concatenate([exact, chosen]), bins=50)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.hist(exact, bins=bins, alpha=0.5, color=KIND_STYLE["exact"][0], label="exact SVR")
    ax.hist(chosen, bins=bins, alpha=0.5, color="tab:red", label=f"returned: {result.final.name}")
    ax.axvline(0, color="black", linewidth=1)
    ax.set_xlabel(f"residual: predicted - true ({ev['part']} part)")
    ax.set_ylabel("rows")
    ax.set_title("Residuals")
    ax.legend(fontsize=8)
    return _png(fig)


def plot_score_distributions(result) -> str:
    """Histograms of the decision values of the exact and the returned one-class model (split by
    the test labels when there are labels: +1 normal, else outlier); the threshold 0 marked."""
    plt = _pyplot()
    ev = result.evaluation
    labels = ev.get("labels")
    panels = [("exact one-class SVM", ev["exact"]), (f"returned: {result.final.name}", ev["chosen"])]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    bins = np.histogram_bin_edges(np.concatenate([ev["exact"], ev["chosen"]]), bins=50)
    for ax, (name, scores) in zip(axes, panels):
        if labels is None:
            ax.hist(scores, bins=bins, color="tab:blue", alpha=0.7, label=f"{ev['part']} rows")
        else:
            normal = labels == 1
            ax.hist(scores[normal], bins=bins, color="tab:blue", alpha=0.6, label="normal (label +1)")
            ax.hist(scores[~normal], bins=bins, color="tab:red", alpha=0.6, label="outlier (other labels)")
        ax.axvline(0, color="black", linewidth=1, label="threshold: outside below 0")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("decision value")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("rows")
    fig.suptitle(f"Decision values on the {ev['part']} part")
    return _png(fig)


def _one_output_models_section(result) -> str:
    extra = sorted({k for c in result.candidates for k in c.test_metrics})
    name = result.error_name
    columns = [(f"validation {name}", lambda c: number_cell(c.validation_error)),
               (f"test {name}", lambda c: number_cell(c.test_error))] + \
        [(f"test {k}", lambda c, k=k: number_cell(c.test_metrics.get(k))) for k in extra] + \
        cost_columns("exact", result.exact.seconds_per_1000)
    note = ("" if result.task == "regression" else
            '<p class="note">Disagreement: the share of rows a model labels (inlier / outlier) otherwise than the '
            "exact one-class SVM. Test accuracy and AUC are against the test labels (+1 normal).</p>")
    return models_section(result, columns, note=note)


def render_one_output_report(result, title="leansvm fit report") -> tuple[str, list[str]]:
    """(HTML text, names of the plots it embeds) of a regression or novelty job's result."""
    figures, names = [], []

    def add(png, name, alt, caption):
        figures.append(_figure(png, name, alt, caption))
        names.append(name)

    add(plot_error_vs_size(result), "error-size", f"{result.error_name} against vectors",
        f"Exact, compressed and budget models: validation (filled) and test (hollow) {result.error_name}; "
        f"dotted: the limit of the choice ({result.allowed}).")
    part = result.evaluation["part"]
    if result.task == "regression":
        if result.cv_results is not None:
            add(plot_cv_surface(result), "surface", "hyperparameter surface",
                f"Mean 3-fold CV R^2 of the tuning (SVR paths over C); chosen C = {result.params['C']:.4g}, "
                f"gamma = {result.params['gamma']:.4g}.")
        add(plot_predicted_vs_true(result), "predicted-true", "predicted against true",
            f"Predictions of the exact SVR and of the returned model on the {part} part.")
        add(plot_residuals(result), "residuals", "residuals", f"Residuals on the {part} part.")
    else:
        add(plot_score_distributions(result), "scores", "score distributions",
            f"Decision values of the exact and the returned one-class model on the {part} part; below 0: "
            "flagged as outside.")
    add(plot_prediction_cost(result), "cost", "prediction cost", "Milliseconds per 1000 predictions of each model.")
    chosen, final = result.chosen, result.final
    headline = (f"Chosen: <b>{_esc(chosen.name)}</b> with {chosen.n_support} vectors (the exact model has "
                f"{result.exact.n_support}), validation {_esc(result.error_name)} {number_cell(chosen.validation_error)}"
                + (f"; returned: <b>{_esc(final.name)}</b>" if final is not chosen else "")
                + (f", test {_esc(result.error_name)} {number_cell(final.test_error)}" if final.test_error is not None
                   else "")
                + "".join(f", test {_esc(k)} {number_cell(v)}" for k, v in final.test_metrics.items()) + ".")
    sections = summary_section(result) + _steps_section(result) + _one_output_models_section(result)
    return html_page(title, headline, sections, figures, [], len(names)), names
