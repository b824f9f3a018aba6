"""`orchlog graft-report`: each stage's own error, measured on runs grafted from the reference.

pairs.py walks a grafted run against the reference, local_error.py measures what
each record's error is since its last graft point, result.py holds the report
(GraftReport, its JSON); orchlog/report/graft.py renders it."""

from orchlog.graft_report.result import GraftReport, graft_report

__all__ = ["GraftReport", "graft_report"]
