"""The line above the table: which view, policy and order are in force."""

from __future__ import annotations

from textual.widgets import Static


class FilterBar(Static):
    DEFAULT_CSS = """
    FilterBar { height: 1; padding: 0 1; background: $boost; }
    """

    def show(self, *, view: str, policy: str | None, sort: str, shown: int, total: int) -> None:
        self.update(
            f"[b]View[/] {view} [dim](f)[/]  [b]Policy[/] {policy or 'all'} [dim](p)[/]"
            f"  [b]Sort[/] {sort} [dim](s)[/]  [dim]{shown} of {total}[/]"
        )
