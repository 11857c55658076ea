"""A remembered decision that fails after its create committed is logged
(Service.create answers 201 whatever happens): an outage is one warning line,
anything else an error with its traceback.

The three-replica outage test (tests/faults) stops PostgreSQL under load and
fails on any traceback in a replica's output; this pins the rule it relies on.
"""

import logging

import pytest

from escalated.core.service import log_missed_decision
from escalated.errors import DatabaseBusy, DatabaseUnavailable, StorageFull


@pytest.mark.parametrize("exc", [DatabaseUnavailable("the database cannot be reached; try again"), DatabaseBusy("busy"), StorageFull("disk full")])
def test_an_outage_is_one_warning_line_without_a_traceback(caplog, exc):
    with caplog.at_level(logging.WARNING, logger="escalated.core.service"):
        log_missed_decision("esc_1", exc)
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert record.exc_info is None
    assert "esc_1" in record.getMessage() and str(exc) in record.getMessage()
    assert "Traceback" not in caplog.text


def test_anything_else_keeps_its_traceback(caplog):
    try:
        raise RuntimeError("a bug")
    except RuntimeError as exc:
        with caplog.at_level(logging.WARNING, logger="escalated.core.service"):
            log_missed_decision("esc_2", exc)
    (record,) = caplog.records
    assert record.levelno == logging.ERROR
    assert "Traceback" in caplog.text and "a bug" in caplog.text
