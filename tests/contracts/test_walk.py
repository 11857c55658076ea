"""Which files a scan reads: .gitignore, virtualenvs, site-packages, the text pre-check."""

from __future__ import annotations

from pathlib import Path

from escalated.contracts.scan.files import iter_files, might_call_llm


def write(root: Path, rel: str, text: str = "import openai\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_gitignore_patterns_are_honoured(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "generated/\n*_pb2.py\n/top_only.py\n!keep_pb2.py\n")
    for rel in ["app/main.py", "generated/x.py", "app/api_pb2.py", "app/keep_pb2.py", "top_only.py", "app/top_only.py"]:
        write(tmp_path, rel)
    assert list(iter_files(tmp_path)) == ["app/keep_pb2.py", "app/main.py", "app/top_only.py"]


def test_nested_gitignore_applies_below_its_folder(tmp_path: Path) -> None:
    write(tmp_path, "pkg/.gitignore", "scratch.py\n")
    write(tmp_path, "pkg/scratch.py")
    write(tmp_path, "scratch.py")
    assert list(iter_files(tmp_path)) == ["scratch.py"]


def test_virtualenvs_and_site_packages_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "myenv/pyvenv.cfg", "home = /usr\n")
    write(tmp_path, "myenv/lib/x.py")
    write(tmp_path, ".venv/lib/y.py")
    write(tmp_path, "vendor/site-packages/openai/z.py")
    write(tmp_path, "src/agent.py")
    assert list(iter_files(tmp_path)) == ["src/agent.py"]


def test_paths_are_sorted_and_relative(tmp_path: Path) -> None:
    for rel in ["b.py", "a/z.py", "a/b.py", "c.ipynb"]:
        write(tmp_path, rel)
    assert list(iter_files(tmp_path)) == ["a/b.py", "a/z.py", "b.py", "c.ipynb"]


def test_text_precheck() -> None:
    assert might_call_llm(b"from langchain_openai import ChatOpenAI\nllm = ChatOpenAI()\nllm.invoke(q)")
    assert might_call_llm(b"resp = self.client.chat.completions.create(")
    assert not might_call_llm(b"import os\nprint('hello')\n")


def test_gitignore_above_a_scanned_subfolder_counts_inside_a_repository(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "app/generated/\n*.tmp.py\n")
    write(tmp_path, "app/main.py")
    write(tmp_path, "app/x.tmp.py")
    write(tmp_path, "app/generated/g.py")
    assert list(iter_files(tmp_path / "app")) == ["main.py"]


def test_a_file_that_only_imports_an_sdks_types_is_not_parsed_for_calls() -> None:
    # It is parsed only when a parsed file imports it (for what it defines).
    assert not might_call_llm(b"from openai.types import ChatCompletion\n\ndef total(rows):\n    return sum(r.n for r in rows)\n")
