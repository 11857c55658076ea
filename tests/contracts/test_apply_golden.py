"""``contracts apply`` over every call style of the scan corpus, against golden files.

The project is the corpus with a contract for every call (drafted by ``init``,
accepting each). Regenerate the golden files after a deliberate change with
``ESCALATED_UPDATE_GOLDEN=1 pytest tests/contracts/test_apply_golden.py``.
"""

from __future__ import annotations

import ast
import io
import os
import shutil
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.contracts.edit.cli import apply, init
from escalated.contracts.scan.apis import SESSION_APIS
from escalated.guard.contracts import load_contracts, parse_contracts
from escalated.contracts.scan.discovery import scan_source, scan_tree
from escalated.contracts.edit.apply import FileChangedOnDisk, build_change_set, write_change_set

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
GOLDEN = HERE / "golden"
UPDATE = os.environ.get("ESCALATED_UPDATE_GOLDEN") == "1"


def _locations(toml: bytes) -> dict[str, tuple]:
    contracts = parse_contracts(tomllib.loads(toml.decode()))
    return {cid: (c.path, c.function, c.index, c.provider, c.api) for cid, c in contracts.contracts.items()}


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _initialised(root: Path) -> Path:
    """``root`` with an accepted contract for every uncovered call."""
    calls = len(scan_tree(root).calls)
    result = CliRunner().invoke(init, [str(root)], input="a\n" * calls, env={"EDITOR": None, "VISUAL": None})
    assert result.exit_code == 0, result.output
    assert (root / "escalated.contracts.toml").exists()
    return root


@pytest.fixture(scope="module")
def initialised(tmp_path_factory) -> Path:
    """The corpus with an accepted contract for every uncovered call (made once: init is slow-ish)."""
    root = tmp_path_factory.mktemp("initialised") / "project"
    shutil.copytree(CORPUS, root)
    return _initialised(root)


# What apply does around writing (the diff shown, a refused confirmation, --diff, a file changed on
# disk, every file checked before any is replaced) is tested on the corpus's rules/ folder alone:
# 12 files to change, each apply about a seventh of the whole corpus's libcst work (0.4 s of CPU
# against 3 s). The golden test and those on ``applied`` cover every call style.
SMALL = "rules"


@pytest.fixture(scope="module")
def initialised_small(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("initialised-small") / "project"
    shutil.copytree(CORPUS / SMALL, root / SMALL)
    return _initialised(root)


@pytest.fixture
def project(initialised_small, tmp_path) -> Path:
    """A copy of the initialised rules/ project, for a test to apply to."""
    root = tmp_path / "project"
    shutil.copytree(initialised_small, root)
    return root


@pytest.fixture(scope="module")
def applied(initialised, tmp_path_factory) -> tuple[Path, dict[str, bytes], str]:
    """The initialised project after one ``apply --yes``: its root, the files before, the output."""
    root = tmp_path_factory.mktemp("applied") / "project"
    shutil.copytree(initialised, root)
    before = _snapshot(root)
    result = _apply(root, "--yes")
    assert result.exit_code == 0, result.output
    return root, before, result.output


def _apply(root: Path, *args: str, input: str | io.BytesIO | None = None):
    return CliRunner().invoke(apply, [str(root), *args], input=input)


def test_apply_wraps_every_call_style_as_the_golden_files_show(applied):
    project, before, _output = applied
    after = _snapshot(project)
    changed = {rel: data for rel, data in after.items() if before.get(rel) != data}
    assert "escalated.contracts.toml" not in changed  # apply never edits the contracts
    if UPDATE:
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for rel, data in {**changed, "escalated.contracts.toml": after["escalated.contracts.toml"]}.items():
            (GOLDEN / rel).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / rel).write_bytes(data)
    golden = _snapshot(GOLDEN)
    # Contracts: ids and locations are pinned; mode, rules and wording follow
    # the rule table, which is tuned elsewhere and tested there.
    assert _locations(after.pop("escalated.contracts.toml")) == _locations(golden.pop("escalated.contracts.toml"))
    assert changed == golden
    # Every style of the corpus is represented: sync, awaited, chained, streamed.
    text = b"".join(changed.values()).decode()
    assert 'await guard("' in text and ").choices[0]" in text and "messages.stream" in text


def test_every_applied_file_parses_and_compiles(applied):
    project = applied[0]
    for path in project.rglob("*.py"):
        source = path.read_text()
        compile(ast.parse(source), str(path), "exec")


def test_every_required_agent_run_is_guarded_at_its_risky_tools_after_apply(applied):
    project = applied[0]
    contracts = load_contracts(project)
    required = {cid for cid, c in contracts.contracts.items() if c.mode == "required"}
    runs = [c for c in scan_tree(project).calls if c.runner and getattr(contracts.match(c), "id", None) in required]
    assert {(c.location.path, c.function) for c in runs} >= {
        ("real/app/support_agent.py", "answer"),  # its refund tool lives in support_tools.py
        ("real/app/handoffs.py", "run_triage"),  # the refund tool is the hand-off's
        ("real/app/streaming.py", "stream_ops"),
        ("real/app/streaming.py", "graph_events"),
        ("real/app/streaming.py", "crew_async"),
        ("heldout/refunds_pydantic.py", "answer"),
    }
    # Every risky tool that is a function of the project is gated; a library's toolkit cannot be,
    # so its run stays uncovered and apply says so in its skips.
    assert [(c.function, t) for c in runs for t in c.unguarded_tools if t.function is not None] == []
    toolkit_runs = {c.function for c in runs if any(t.function is None for t in c.unguarded_tools)}
    # digest: Agno GmailTools; support: an Agno Toolkit subclass in a team; operate: the Microsoft Agent
    # Framework's local shell. A smolagents Tool class's forward is a function of the project (chat's MailTool):
    # guarded there.
    assert toolkit_runs == {"bill", "run", "<module>", "digest", "support", "operate"}
    assert '    @guard_tool("shop_smolagents.chat")\n    def forward(' in (project / "heldout/shop_smolagents.py").read_text()
    assert "StripeAgentToolkit tools is not a function of the project: guard it at the tool by hand" in applied[2]
    # Runner.run under a required contract: the SDK's own approval, answered through the adapter.
    assert "@function_tool(needs_approval=True)\ndef refund_order(" in (project / "real/app/support_tools.py").read_text()
    assert "run_with_approvals(" in (project / "real/app/support_agent.py").read_text()
    assert "@function_tool\ndef lookup_order(" in (project / "real/app/support_tools.py").read_text()
    # A Pydantic AI agent.run: requires_approval on the risky tool, the agent's output_type admitting the deferral.
    pydantic = (project / "heldout/refunds_pydantic.py").read_text()
    assert "@support.tool(requires_approval=True)\ndef issue_refund(" in pydantic
    assert "@support.tool_plain\ndef opening_hours(" in pydantic
    assert 'Agent[Shop, Answer]("openai:gpt-4o", deps_type=Shop, output_type=[Answer, DeferredToolRequests])' in pydantic
    assert "lambda: run_with_approvals(support, question, deps=Shop(customer_id), policy=" in pydantic


def test_a_realtime_session_is_skipped_with_the_reason_not_wrapped(applied):
    project, _before, output = applied
    assert "client.beta.realtime.connect(" in (project / "real/app/streaming.py").read_text()
    assert "skipped real/app/streaming.py:48:15 (streaming.voice_console): a realtime session" in output
    assert "GradioUI(coder).launch()" in (project / "heldout/shop_smolagents.py").read_text()
    assert "(shop_smolagents.module): a smolagents GradioUI serves runs of its agent" in output


def test_a_second_apply_changes_nothing(applied, tmp_path):
    project = tmp_path / "again"
    shutil.copytree(applied[0], project)
    result = _apply(project, "--yes")
    assert result.exit_code == 0
    assert "Nothing to apply:" in result.output and "already guarded" in result.output
    assert _snapshot(project) == _snapshot(applied[0])


def test_every_contracted_call_scans_as_covered_after_apply(applied):
    project = applied[0]
    contracts = load_contracts(project)
    for call in scan_tree(project).calls:
        # A session, and a smolagents GradioUI(code_agent).launch(): nothing to wrap, and the model's code is no tool to gate.
        if call.existing_gate is None and call.api not in {*SESSION_APIS, "launch"}:
            contract = contracts.match(call)
            assert contract is not None and call.guarded and call.guard_id == contract.id, call.location


def test_the_diff_is_shown_and_a_refused_confirmation_writes_nothing(project):
    before = _snapshot(project)
    result = _apply(project, input="n\n")
    assert result.exit_code == 1
    assert "+from escalated.guard import guard" in result.output and "Nothing was written." in result.output
    assert _snapshot(project) == before


def test_diff_only_writes_nothing(project):
    before = _snapshot(project)
    result = _apply(project, "--diff")
    assert result.exit_code == 0 and "--- a/rules/r02_money.py" in result.output
    assert _snapshot(project) == before


class _EditsWhileAsking(io.BytesIO):
    """Stdin that changes a project file at the moment the confirmation is read."""

    def __init__(self, path: Path, answer: bytes):
        super().__init__(answer)
        self._path = path

    def _touch(self, *args) -> None:
        # click probes the stream with read(0) when it is handed over; only a
        # real read is the moment the answer is read.
        if self._path is not None and args[:1] != (0,):
            self._path.write_text(self._path.read_text() + "\n# edited by someone else\n")
            self._path = None

    def read(self, *args):
        self._touch(*args)
        return super().read(*args)

    def read1(self, *args):
        self._touch(*args)
        return super().read1(*args)

    def readline(self, *args):
        self._touch(*args)
        return super().readline(*args)


def test_a_file_changed_on_disk_after_reading_aborts_and_leaves_every_file_untouched(project):
    edited = project / "rules" / "r06_write.py"
    result = _apply(project, input=_EditsWhileAsking(edited, b"y\n"))
    assert result.exit_code == 1
    assert "r06_write.py changed on disk since it was read; nothing was written" in result.output
    after = _snapshot(project)
    corpus = {f"{SMALL}/{rel}": data for rel, data in _snapshot(CORPUS / SMALL).items()}
    assert len(corpus) > 2 and after.keys() == {*corpus, "escalated.contracts.toml"}
    for rel, data in corpus.items():
        expected = data + b"\n# edited by someone else\n" if rel == "rules/r06_write.py" else data
        assert after[rel] == expected, rel


def test_write_change_set_checks_every_file_before_replacing_any(project):
    scanned = scan_tree(project)
    change_set = build_change_set(
        project, calls=scanned.calls, contracts=load_contracts(project), scan_source=scan_source
    )
    assert len(change_set.changes) > 2
    before = _snapshot(project)
    last = project / change_set.changes[-1].path
    last.write_bytes(last.read_bytes() + b"\n")
    with pytest.raises(FileChangedOnDisk):
        write_change_set(project, change_set)
    assert _snapshot(project) == {**before, change_set.changes[-1].path: last.read_bytes()}
    assert not list(project.rglob("*.escalated-tmp"))
