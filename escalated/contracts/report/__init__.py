"""Reports of a scan: coverage by contracts, text, JSON and SARIF."""
