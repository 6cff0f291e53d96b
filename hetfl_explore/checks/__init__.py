"""Classroom checks: `check("selection.q3", answer)` or `checks.selection.q3(answer)`, one per lab exercise, with feedback."""
from .core import check, exercises, lab_report, assert_solved, Feedback
from . import selection, modelhet, feddiverse, fairness, crowd, clustering
