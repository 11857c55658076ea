"""``log_failure``: a failure retried later (the clock's reminders and its
catch-up of remembered decisions, a create's remembered decision) is one
warning line when the database is down, busy or full, and an error with its
traceback otherwise.

The three-replica outage test (tests/faults) stops PostgreSQL under load and
fails on any traceback in a replica's output, and the full-disk reminder test
does the same on a real full disk; this pins the rule they rely on.
"""

import logging

import pytest

from escalated.errors import DatabaseBusy, DatabaseUnavailable, StorageFull, log_failure

log = logging.getLogger("escalated.tests.log_failure")
MESSAGE = "the remembered decision for %s failed after its create"


@pytest.mark.parametrize("exc", [DatabaseUnavailable("the database cannot be reached; try again"), DatabaseBusy("busy"), StorageFull("disk full")])
def test_an_outage_is_one_warning_line_without_a_traceback(caplog, exc):
    with caplog.at_level(logging.WARNING, logger=log.name):
        log_failure(log, MESSAGE, exc, "esc_1")
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert record.exc_info is None
    assert record.getMessage() == f"the remembered decision for esc_1 failed after its create ({exc})"
    assert "Traceback" not in caplog.text


def test_anything_else_keeps_its_traceback(caplog):
    try:
        raise RuntimeError("a bug")
    except RuntimeError as exc:
        with caplog.at_level(logging.WARNING, logger=log.name):
            log_failure(log, MESSAGE, exc, "esc_2")
    (record,) = caplog.records
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "the remembered decision for esc_2 failed after its create"
    assert "Traceback" in caplog.text and "a bug" in caplog.text
