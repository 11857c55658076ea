"""Tool lists built in one module and offered in another (point 5)."""
import shutil

from langchain_core.tools import tool


@tool
def wipe_workspace(path: str) -> str:
    """Remove a workspace folder."""
    shutil.rmtree(path)
    return "wiped"


def make_tools() -> list:
    return [wipe_workspace]
