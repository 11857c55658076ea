"""R6: the output is written to a system of record (a database row)."""
import sqlite3

import litellm


def record_summary(db: sqlite3.Connection, call_notes: str) -> None:
    result = litellm.completion(model="gpt-4o-mini", messages=[{"role": "user", "content": call_notes}])
    summary = result.choices[0].message.content
    db.execute("INSERT INTO summaries (text) VALUES (?)", (summary,))
    db.commit()
