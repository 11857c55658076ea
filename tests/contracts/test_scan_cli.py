"""``escalated contracts scan`` through the real CLI: exit codes, formats, determinism."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.cli import main

GUARDED = """\
from escalated.guard import guard
from openai import OpenAI

client = OpenAI()


def reply(text):
    return guard("support.reply", lambda: client.chat.completions.create(model="m", messages=[]))
"""
UNGUARDED = GUARDED.replace('guard("support.reply", lambda: ', "").replace("))\n", ")\n")
CONTRACT = """\
version = 1
[contracts."support.reply"]
path = "agent/support.py"
function = "reply"
index = 0
provider = "openai"
api = "chat.completions.create"
mode = "reviewed"
rules = ["R11"]
policy = "agents.support"
question = "Was the reply right?"
choices = [{ id = "ok", label = "OK" }, { id = "wrong", label = "Wrong" }]
approve_choices = ["ok"]
"""


def project(root: Path, *, source: str = GUARDED, contracts: str | None = CONTRACT) -> Path:
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "support.py").write_text(source)
    if contracts is not None:
        (root / "escalated.contracts.toml").write_text(contracts)
    return root


def scan(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["contracts", "scan", *args])
    return result.exit_code, result.output


def test_exit_0_when_every_call_is_covered(tmp_path: Path) -> None:
    code, out = scan(str(project(tmp_path)))
    assert code == 0, out
    assert "covered: yes, by guard 'support.reply'" in out


def test_exit_1_when_a_call_has_no_contract(tmp_path: Path) -> None:
    code, out = scan(str(project(tmp_path, source=UNGUARDED, contracts=None)))
    assert code == 1
    assert "covered: no (no contract)" in out


def test_exit_1_when_a_contract_exists_but_the_guard_is_missing(tmp_path: Path) -> None:
    code, out = scan(str(project(tmp_path, source=UNGUARDED)))
    assert code == 1
    assert "not wrapped in its guard" in out


def test_exit_1_when_a_contract_is_stale(tmp_path: Path) -> None:
    root = project(tmp_path)
    gone = CONTRACT.split("\n", 1)[1].replace("support.reply", "support.gone").replace('"reply"', '"gone"')
    (root / "escalated.contracts.toml").write_text(CONTRACT + gone)
    code, out = scan(str(root), "--format", "json")
    assert code == 1
    assert json.loads(out)["staleContracts"] == [{"contract": "support.gone", "path": "agent/support.py", "function": "gone", "index": 0}]


def test_a_contract_whose_index_another_call_took_is_stale(tmp_path: Path) -> None:
    # A wrapper call site added above the contracted call shifts it to index 1; the
    # wrapper's call (another API) now has index 0, which the contract still names.
    shifted = GUARDED.replace(
        "def reply(text):\n",
        "def ask(text):\n    return client.responses.create(model=\"m\", input=text)\n\n\ndef reply(text):\n    text = ask(text)\n"
    )
    code, out = scan(str(project(tmp_path, source=shifted)), "--format", "json")
    assert code == 1
    assert json.loads(out)["staleContracts"] == [{"contract": "support.reply", "path": "agent/support.py", "function": "reply", "index": 0}]


def test_exit_2_when_a_file_cannot_be_parsed(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "agent" / "broken.py").write_text("import openai\ndef f(:\n    openai.responses.create()\n")
    code, out = scan(str(root))
    assert code == 2
    assert "agent/broken.py: syntax error at line 3" in out


@pytest.mark.parametrize(
    "imports",
    ["from openai.types.chat import ChatCompletionMessageParam", "from agents import Agent", "import langchain_core.messages as m"],
)
def test_exit_2_when_a_file_that_imports_an_sdk_cannot_be_parsed_whatever_the_pre_check_skips(tmp_path: Path, imports: str) -> None:
    # No call-shaped text: the pre-check would not analyse it, but a broken SDK-importing file is still reported.
    root = project(tmp_path)
    (root / "agent" / "types_only.py").write_text(f"{imports}\n\nclass Reply(:\n    text: str\n")
    (root / "agent" / "plain.py").write_text("import json\n\ndef load(:\n    pass\n")  # no SDK: skipped unread, as before
    code, out = scan(str(root), "--format", "json")
    assert code == 2, out
    document = json.loads(out)
    assert [(e["path"], e["message"].split(",")[0]) for e in document["parseErrors"]] == [("agent/types_only.py", "syntax error at line 3")]
    assert [c["path"] for c in document["calls"]] == ["agent/support.py"]


@pytest.mark.parametrize(
    "data",
    [
        b"# -*- coding: no-such-codec -*-\nfrom agents import Agent\n",  # a cookie naming no codec
        b'"""The shop\x92s agent."""\nfrom agents import Agent\n',  # a Windows-1252 quote in a docstring
        b"from agents import Agent\nNAME = '\xe9t\xe9'\n",  # Latin-1 bytes without a cookie
    ],
)
def test_exit_2_when_a_file_that_imports_an_sdk_cannot_be_decoded_whatever_the_pre_check_skips(tmp_path: Path, data: bytes) -> None:
    # Python refuses to run these as it refuses a syntax error; they were read as empty text and passed.
    root = project(tmp_path)
    (root / "agent" / "undecodable.py").write_bytes(data)
    code, out = scan(str(root), "--format", "json")
    assert code == 2, out
    assert [(e["path"], e["message"]) for e in json.loads(out)["parseErrors"]] == [
        ("agent/undecodable.py", "cannot decode the file as Python source text")
    ]


def test_exit_2_on_a_usage_error(tmp_path: Path) -> None:
    code, _ = scan(str(tmp_path / "missing"))
    assert code == 2
    code, _ = scan(str(tmp_path), "--format", "xml")
    assert code == 2


def test_exit_2_on_an_invalid_contracts_file(tmp_path: Path) -> None:
    code, out = scan(str(project(tmp_path, contracts="version = 7\n")))
    assert code == 2
    assert "unsupported version" in out


def test_exit_zero_reports_but_passes(tmp_path: Path) -> None:
    code, out = scan(str(project(tmp_path, contracts=None)), "--exit-zero")
    assert code == 0
    assert "uncovered 1" in out


def test_scanning_a_subfolder_uses_the_project_contracts(tmp_path: Path) -> None:
    code, out = scan(str(project(tmp_path) / "agent"), "--format", "json")
    assert code == 0, out
    document = json.loads(out)
    assert document["calls"][0]["path"] == "support.py"
    assert document["contractsFile"] == "../escalated.contracts.toml"


def test_json_carries_mode_rules_confidence_and_coverage_per_call(tmp_path: Path) -> None:
    _, out = scan(str(project(tmp_path)), "--format", "json")
    document = json.loads(out)
    (call,) = document["calls"]
    assert {k: call[k] for k in ("mode", "rules", "confidence", "callConfidence", "covered", "contract", "function", "index")} == {
        "mode": "autonomous", "rules": ["R11"], "confidence": "low", "callConfidence": "high", "covered": True,
        "contract": "support.reply", "function": "reply", "index": 0,
    }  # fmt: skip
    assert document["summary"]["calls"] == 1 and document["schemaVersion"] == 1


@pytest.mark.parametrize(("source", "covered"), [(GUARDED, True), (UNGUARDED, False)], ids=["covered", "uncovered"])
def test_sarif_and_json_carry_the_same_mode_rules_and_coverage_per_call(tmp_path: Path, source: str, covered: bool) -> None:
    """CONTRACT §9: each SARIF result's properties and each JSON call say the
    same, for a covered call and an uncovered one (mode autonomous, not the default required)."""
    root = project(tmp_path, source=source)
    (call,) = json.loads(scan(str(root), "--format", "json", "--exit-zero")[1])["calls"]
    (result,) = json.loads(scan(str(root), "--format", "sarif", "--exit-zero")[1])["runs"][0]["results"]
    props = result["properties"]
    assert (call["mode"], call["rules"], call["covered"]) == ("autonomous", ["R11"], covered)
    assert (props["mode"], props["rules"], props["confidence"], props["covered"]) == ("autonomous", ["R11"], call["confidence"], covered)


@pytest.mark.parametrize("output_format", ["text", "json", "sarif"])
def test_output_is_byte_identical_across_runs_and_locations(tmp_path: Path, output_format: str) -> None:
    corpus = Path(__file__).parent / "corpus"
    first, second = tmp_path / "one", tmp_path / "elsewhere" / "two"
    shutil.copytree(corpus, first)
    shutil.copytree(corpus, second)
    outputs = {scan(str(p), "--format", output_format)[1] for p in (first, second, first)}
    assert len(outputs) == 1
    (text,) = outputs
    assert str(tmp_path) not in text


def test_scan_writes_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    before = sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*"))
    scan(str(root), "--format", "sarif")
    assert sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*")) == before


def test_real_subprocess_exit_codes(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    ok = subprocess.run([sys.executable, "-m", "escalated", "contracts", "scan", str(root)], capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr == ""  # no progress line when stderr is not a terminal
    (root / "agent" / "more.py").write_text("import litellm\nlitellm.completion(model='m', messages=[{'role': 'user', 'content': 'hi'}])\n")
    bad = subprocess.run(
        [sys.executable, "-m", "escalated", "contracts", "scan", str(root), "--format", "json"], capture_output=True, text=True, env=env, timeout=120
    )
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["summary"]["uncovered"] == 1


def test_explain_lists_the_four_modes() -> None:
    result = CliRunner().invoke(main, ["contracts", "explain"])
    assert result.exit_code == 0
    assert [line.split(":")[0] for line in result.output.splitlines() if line and not line.startswith(" ")] == [
        "required", "reviewed", "sampled", "autonomous", "Where the guard acts",
    ]  # fmt: skip


def test_explain_says_agent_runners_are_guarded_at_their_tools() -> None:
    result = CliRunner().invoke(main, ["contracts", "explain", "required"])
    assert "run their tools inside the call" in result.output and "@guard_tool" in result.output


def test_explain_one_mode() -> None:
    result = CliRunner().invoke(main, ["contracts", "explain", "required"])
    assert result.exit_code == 0
    assert result.output.startswith("required: A human decides before the result is used, every time.")
    assert CliRunner().invoke(main, ["contracts", "explain", "sometimes"]).exit_code == 2


def test_progress_only_on_a_terminal(tmp_path: Path) -> None:
    pty = pytest.importorskip("pty")
    for n in range(60):
        (tmp_path / f"m{n:02d}.py").write_text("x = 1\n")
    master, slave = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "escalated", "contracts", "scan", str(tmp_path)],
            stdout=subprocess.PIPE, stderr=slave, timeout=120,
        )  # fmt: skip
        os.close(slave)
        shown = os.read(master, 65536).decode()
    finally:
        os.close(master)
    assert done.returncode == 0
    assert "scanning… 50 files" in shown
    assert "scanning" not in done.stdout.decode()


def test_source_encodings_are_honoured(tmp_path: Path) -> None:
    latin = "# -*- coding: latin-1 -*-\nimport openai\n# caf\xe9\nopenai.responses.create(model='m', input='x')\n"
    (tmp_path / "latin.py").write_bytes(latin.encode("latin-1"))
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbfimport litellm\nlitellm.completion(model='m', messages=[{'role': 'user', 'content': 'hi'}])\n")
    code, out = scan(str(tmp_path), "--format", "json")
    assert code == 1, out
    assert [c["path"] for c in json.loads(out)["calls"]] == ["bom.py", "latin.py"]


CALL_KEYS = {
    "path": str, "line": int, "column": int, "endLine": int, "endColumn": int, "provider": str, "api": str,
    "function": str, "index": int, "async": bool, "confidence": str, "callConfidence": str, "guarded": bool,
    "guardId": (str, type(None)), "existingGate": (str, type(None)), "covered": bool, "coveredBy": (str, type(None)),
    "contract": (str, type(None)), "contractMode": (str, type(None)), "problem": (str, type(None)), "mode": str, "inTests": bool,
    "rules": list, "reasons": list, "findings": list, "source": str, "runner": bool, "riskyTools": list,
}  # fmt: skip


def test_json_document_matches_the_documented_schema() -> None:
    _, out = scan(str(Path(__file__).parent / "corpus"), "--format", "json")
    document = json.loads(out)
    assert set(document) == {
        "schemaVersion", "tool", "contractsFile", "summary", "calls", "staleContracts", "parseErrors", "notebooksSkipped", "filesSkipped"
    }
    assert set(document["summary"]) == {
        "filesScanned", "linesScanned", "filesWithCalls", "calls", "covered", "uncovered", "stale",
        "parseErrors", "notebooksSkipped", "filesSkipped", "inTests", "byMode",
    }  # fmt: skip
    assert list(document["summary"]["byMode"]) == ["autonomous", "required", "reviewed", "sampled"]  # sorted keys
    for call in document["calls"]:
        assert set(call) == set(CALL_KEYS)
        assert all(isinstance(call[key], kind) for key, kind in CALL_KEYS.items()), call
        assert all(set(f) == {"rule", "kind", "detail", "line", "basis"} for f in call["findings"])
        assert all(f["basis"] in {"code", "declared", "name"} for f in call["findings"])
        assert all(set(t) == {"tool", "path", "line", "function", "guardId", "needsApproval"} for t in call["riskyTools"])


def test_scanning_one_file_checks_only_its_contracts(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "agent" / "other.py").write_text("x = 1\n")
    code, out = scan(str(root / "agent" / "support.py"))
    assert code == 0, out
    code, out = scan(str(root / "agent" / "other.py"), "--format", "json")
    assert code == 0 and json.loads(out)["staleContracts"] == []


def test_a_long_valid_expression_is_analysed_and_its_call_found(tmp_path: Path) -> None:
    # 700 terms nest 700 deep in the syntax tree; the scan used to call such a file unanalysable.
    (tmp_path / "tools.py").write_text(
        "import litellm\nTOOLS = [" + " + ".join(["a"] * 700) + "]\n"
        "def ask():\n    return litellm.completion(model='m', messages=[], tools=TOOLS)\n"
    )
    code, out = scan(str(tmp_path), "--format", "json")
    assert code == 1, out
    document = json.loads(out)
    assert document["parseErrors"] == []
    assert [(c["path"], c["function"]) for c in document["calls"]] == [("tools.py", "ask")]


def test_brackets_nested_deeper_than_python_allows_are_a_syntax_error(tmp_path: Path) -> None:
    # libcst's native parser overflows its stack on these: a subprocess, so a crash cannot take pytest down.
    (tmp_path / "truncated.py").write_text("import openai\nopenai.responses.create()\nx = " + "(" * 5000 + "\n")
    (tmp_path / "agent.py").write_text("import litellm\nlitellm.completion(model='m', messages=[{'role': 'user', 'content': 'hi'}])\n")
    done = subprocess.run(
        [sys.executable, "-m", "escalated", "contracts", "scan", str(tmp_path), "--format", "json"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    document = json.loads(done.stdout)
    assert [(e["path"], e["message"].startswith("syntax error at line 3")) for e in document["parseErrors"]] == [("truncated.py", True)]
    assert [c["path"] for c in document["calls"]] == ["agent.py"]


REALTIME = """\
from openai import AsyncOpenAI

client = AsyncOpenAI()


async def console():
    async with client.beta.realtime.connect(model="gpt-4o-realtime-preview") as connection:
        async for event in connection:
            print(event.type)
"""


def test_a_contracted_realtime_session_is_uncovered_saying_why_it_cannot_be_wrapped(tmp_path: Path) -> None:
    contracts = CONTRACT.replace('"support.reply"', '"voice.console"').replace('"reply"', '"console"')
    contracts = contracts.replace('"chat.completions.create"', '"beta.realtime.connect"')
    code, out = scan(str(project(tmp_path, source=REALTIME, contracts=contracts)))
    assert code == 1
    assert "beta.realtime.connect" in out and "a realtime session (websocket) is a connection, not an answer" in out
