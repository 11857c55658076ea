-- No query reads an escalation's routes by its id (the list reads them by
-- route, the table's key), and each create wrote this index's b-tree too.
DROP INDEX escalation_routes_by_escalation;
