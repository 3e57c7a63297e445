"""The main job, ``leansvm fit`` / :func:`leansvm.fit_lean`: from data to the cheapest accurate model.

The stages every task runs in one order, after its data and tuning (:mod:`~leansvm.job.pipeline`:
its candidates, the reference, the choice, the confirming folds, the refit); one module per task for
its data, tuning, candidates and measurements (:mod:`~leansvm.job.classification`,
:mod:`~leansvm.job.regression`, :mod:`~leansvm.job.novelty`, with the candidates of the last two in
:mod:`~leansvm.job.one_output`); what differs by task (:mod:`~leansvm.job.task_rules`), and one run's
shared state (:mod:`~leansvm.job.context`); the stages they are built of (:mod:`~leansvm.job.data`,
:mod:`~leansvm.job.hyperparameters`, :mod:`~leansvm.job.candidates`, :mod:`~leansvm.job.estimates`,
:mod:`~leansvm.job.choice`, :mod:`~leansvm.job.refit`, :mod:`~leansvm.job.measure`); the records
they fill (:mod:`~leansvm.job.records`); and the HTML report of every task (:mod:`~leansvm.job.report`).
"""
