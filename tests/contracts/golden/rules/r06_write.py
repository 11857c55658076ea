"""R6: the output is written to a system of record (a database row)."""
import sqlite3

import litellm
from escalated.guard import guard


def record_summary(db: sqlite3.Connection, call_notes: str) -> None:
    result = guard("r06_write.record_summary", lambda: litellm.completion(model="gpt-4o-mini", messages=[{"role": "user", "content": call_notes}]))
    summary = result.choices[0].message.content
    db.execute("INSERT INTO summaries (text) VALUES (?)", (summary,))
    db.commit()
