-- SQLite reads an escalation's 'created' entry from its row from here on.
-- PostgreSQL keeps writing it to escalation_events, since the replicas
-- learn of a new escalation from that table's feed (changes_after in
-- sql/postgres.sql). Nothing changes here: the file keeps the two
-- dialects' migrations in step.
SELECT 1;
