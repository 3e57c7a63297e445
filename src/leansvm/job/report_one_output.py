"""The HTML report of ``leansvm fit`` on regression targets and for novelty detection: the page of
:mod:`leansvm.job.report` (one self-contained file, PNG plots embedded) for a
:class:`leansvm.job.records.LeanResult` of a regression or novelty job.

Sections: the data and the tuned parameters, every decision of the job, the candidate models
(vectors, validation and test error, prediction cost). Plots:

- error against the number of vectors (validation filled, test hollow), with the limit the choice
  used;
- regression: the tuning's cross-validated R^2 over (C, gamma), the chosen cell marked; predicted
  against true values and the residuals' distribution for the exact and the returned model;
- novelty detection: the decision values' distribution of the exact and the returned model (by
  test label when there are labels), with the threshold at 0;
- the prediction cost of every model.
"""

from __future__ import annotations

import numpy as np

from leansvm.job.report import (KIND_STYLE, _esc, _figure, _png, _pyplot, _steps_section, _table, html_page,
                            number_cell, plot_by_kind, plot_prediction_cost, summary_section, write_page)


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


def _models_section(result) -> str:
    extra = sorted({k for c in result.candidates for k in c.test_metrics})
    exact_cost = result.exact.seconds_per_1000
    models = sorted(result.candidates, key=lambda c: (c.kind != "exact", c.kind == "refit", c.kind, c.n_support))
    rows, classes = [], []
    for c in models:
        mark = " (returned)" if c is result.final else " (chosen)" if c is result.chosen else ""
        rows.append((c.name + mark, c.kind, c.n_support,
                     number_cell(c.validation_error), number_cell(c.test_error),
                     *[number_cell(c.test_metrics.get(k)) for k in extra], f"{c.fit_seconds:.2f}",
                     number_cell(None if c.seconds_per_1000 is None else 1000 * c.seconds_per_1000, ".3f"),
                     "-" if not (c.seconds_per_1000 and exact_cost) else f"{exact_cost / c.seconds_per_1000:.1f}x"))
        classes.append("chosen" if c is result.chosen or c is result.final else "")
    name = result.error_name
    header = ("model", "kind", "vectors", f"validation {name}", f"test {name}", *[f"test {k}" for k in extra],
              "fit s", "ms / 1000 predictions", "speed vs exact")
    note = ("" if result.task == "regression" else
            '<p class="note">Disagreement: the share of rows a model labels (inlier / outlier) otherwise than the '
            "exact one-class SVM. Test accuracy and AUC are against the test labels (+1 normal).</p>")
    return ("<h2>Models</h2>" + _table(header, rows, classes) + note
            + '<p class="note">Prediction times are best of 5 on a shared machine; compare ratios.</p>')


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
    sections = summary_section(result) + _steps_section(result) + _models_section(result)
    return html_page(title, headline, sections, figures, [], len(names)), names


def write_one_output_report(result, path, title="leansvm fit report") -> list[str]:
    """Write the report atomically; returns the names of the embedded plots."""
    page, names = render_one_output_report(result, title)
    write_page(page, path)
    return names
