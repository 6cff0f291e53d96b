"""Exercise graders of the classroom labs: `grade("selection.q3", answer)` returns feedback on one lab exercise."""
from .core import grade, exercises, lab_report, assert_solved, Feedback
from . import selection, modelhet, feddiverse, fairness, crowd, clustering
