"""Model objects built in one module and used in another."""

from __future__ import annotations

import functools
from pathlib import Path

import libcst as cst
import pytest

from escalated.contracts.scan import discovery
from escalated.contracts.scan.crossref import module_name
from escalated.contracts.calls import ScanResult
from escalated.contracts.scan.discovery import scan_tree
from escalated.contracts.scan.flows import Loadable, ProjectFlow
from escalated.contracts.scan.index import WorkMeter


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_imports_from_project_modules_resolve(tmp_path: Path) -> None:
    write(tmp_path, "src/app/__init__.py", "")
    write(
        tmp_path, "src/app/models.py",
        "from langchain_openai import ChatOpenAI\nfrom openai import OpenAI\n"
        "writer = ChatOpenAI(model='gpt-4o')\n"
        "def make_client():\n    return OpenAI()\n",
    )  # fmt: skip
    write(
        tmp_path, "src/app/service.py",
        "from .models import writer, make_client\n"
        "from app import models\n"
        "def draft(topic):\n    return writer.invoke(topic).content\n"
        "def ask(q):\n    return make_client().responses.create(model='m', input=q)\n"
        "def again(q):\n    return models.writer.invoke(q)\n",
    )  # fmt: skip
    calls = [c for c in scan_tree(tmp_path).calls if c.location.path == "src/app/service.py"]
    assert [(c.function, c.provider, c.api, c.confidence) for c in calls] == [
        ("draft", "langchain", "invoke", "high"),
        ("ask", "openai", "responses.create", "high"),
        ("again", "langchain", "invoke", "high"),
    ]


def test_module_names_that_disagree_are_not_guessed(tmp_path: Path) -> None:
    write(tmp_path, "a/llm.py", "from langchain_openai import ChatOpenAI\nbot = ChatOpenAI()\n")
    write(tmp_path, "b/llm.py", "from openai import OpenAI\nbot = OpenAI()\n")
    write(tmp_path, "c/use.py", "from llm import bot\ndef f(q):\n    return bot.invoke(q)\n")
    assert [c for c in scan_tree(tmp_path).calls if c.location.path == "c/use.py"] == []


def test_module_names() -> None:
    assert module_name("pkg/sub/llm.py") == "pkg.sub.llm"
    assert module_name("pkg/__init__.py") == "pkg"


def test_tools_imported_from_another_module_are_classified_there(tmp_path: Path) -> None:
    write(
        tmp_path, "bot/tools.py",
        "import shutil\nfrom langchain_core.tools import tool\n"
        "@tool\ndef lookup(q: str) -> str:\n    return DB.get(q)\n"
        "@tool\ndef clean(path: str) -> str:\n    shutil.rmtree(path)\n    return 'ok'\n"
        "TOOLS = [lookup, clean]\n",
    )  # fmt: skip
    write(
        tmp_path, "bot/agent.py",
        "from langchain_openai import ChatOpenAI\nfrom .tools import TOOLS, lookup\n"
        "def run(q):\n    return ChatOpenAI().bind_tools(TOOLS).invoke(q)\n"
        "def ask(q):\n    return ChatOpenAI().bind_tools([lookup]).invoke(q)\n",
    )  # fmt: skip
    calls = {c.function: c for c in scan_tree(tmp_path).calls}
    assert calls["run"].recommendation.rules == ("R3", "R9")
    assert any("(in bot/tools.py)" in r for r in calls["run"].recommendation.reasons)
    assert calls["ask"].recommendation.rules == ("R9",)


def test_names_re_exported_by_a_package_resolve(tmp_path: Path) -> None:
    write(tmp_path, "app/__init__.py", "from .core.models import writer, client as oai\nfrom .core.tools import TOOLS\n")
    write(tmp_path, "app/core/__init__.py", "")
    models = "from langchain_openai import ChatOpenAI\nfrom openai import OpenAI\nwriter = ChatOpenAI()\nclient = OpenAI()\n"
    write(tmp_path, "app/core/models.py", models)
    write(
        tmp_path, "app/core/tools.py",
        "import stripe\nfrom langchain_core.tools import tool\n"
        "@tool\ndef refund(order_id):\n    return stripe.Refund.create(charge=order_id)\nTOOLS = [refund]\n",
    )  # fmt: skip
    write(
        tmp_path, "app/agent.py",
        "from app import writer, oai, TOOLS\n"
        "def draft(topic):\n    return writer.bind_tools(TOOLS).invoke(topic)\n"
        "def run(t):\n    return oai.beta.threads.runs.create(thread_id=t, assistant_id='a')\n",
    )  # fmt: skip
    calls = scan_tree(tmp_path).calls
    assert [(c.function, c.provider, c.api, c.confidence, c.recommendation.rules) for c in calls] == [
        ("draft", "langchain", "invoke", "high", ("R2",)),
        ("run", "openai", "beta.threads.runs.create", "high", ("R11",)),
    ]


def test_output_handed_to_a_method_of_another_modules_class_is_followed_from_that_parameter(tmp_path: Path) -> None:
    write(tmp_path, "app/__init__.py", "")
    write(
        tmp_path, "app/runner.py",
        "import os\nimport shutil\n"
        "class Runner:\n"
        "    def run(self, plan, scratch):\n"
        "        shutil.rmtree(scratch)\n"
        "        os.system(plan)\n",
    )  # fmt: skip
    write(
        tmp_path, "app/agent.py",
        "from openai import OpenAI\nfrom app.runner import Runner\n"
        "class Agent:\n"
        "    def __init__(self):\n        self.client = OpenAI()\n        self.runner = Runner()\n"
        "    def act(self, goal):\n"
        "        plan = self.client.responses.create(model='m', input=goal).output_text\n"
        "        self.runner.run(plan, '/tmp/scratch')\n"
        "    def note(self, goal):\n"
        "        note = self.client.responses.create(model='m', input=goal).output_text\n"
        "        Runner().run('true', note)\n",
    )  # fmt: skip
    act, note = scan_tree(tmp_path).calls
    assert act.recommendation.rules == ("R1",)  # the plan reaches os.system; the rmtree is of something else
    assert act.recommendation.reasons[0].startswith("R1 output reaches code execution: self.runner.run() -> os.system()")
    assert note.recommendation.rules == ("R3",)  # here the reply is the folder removed


def test_a_function_only_a_wrapper_caller_imports_is_classified_for_it(tmp_path: Path) -> None:
    # Tools are classified only under names some module imports; brain.py is parsed in the
    # wrapper round (no model-call text of its own), after the first round chose those names.
    write(tmp_path, "ops.py", "import shutil\ndef log(q):\n    print(q)\ndef wipe(path):\n    shutil.rmtree(path)\n")
    write(
        tmp_path, "llm.py",
        "from openai import OpenAI\nfrom ops import log\n"
        "def think(q):\n    log(q)\n    return OpenAI().responses.create(model='m', input=q).output_text\n",
    )  # fmt: skip
    write(tmp_path, "brain.py", "from llm import think\nfrom ops import wipe\ndef act(q):\n    if think(q) == 'yes':\n        wipe('/srv')\n")
    calls = {c.location.path: c for c in scan_tree(tmp_path).calls}
    assert any("(in ops.py)" in r for r in calls["brain.py"].recommendation.reasons)


def test_trees_held_between_rounds_give_the_scan_parsing_every_round_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan holds some modules' libcst trees from their tables to their own analysis
    instead of parsing them again: the same result as parsing each round anew, in fewer parses."""
    corpus = Path(__file__).parent / "corpus"
    parses: list[str] = []
    parse = discovery.parse_module

    def counted(source: str) -> cst.Module:
        parses.append(source)
        return parse(source)

    monkeypatch.setattr(discovery, "parse_module", counted)
    held = scan_tree(corpus)
    held_parses = len(parses)
    parses.clear()
    monkeypatch.setattr(discovery, "_HELD_ALLOWANCE", 0)
    anew = scan_tree(corpus)
    assert len(anew.calls) > 50 and held.calls == anew.calls
    assert (held.errors, held.skipped, held.context) == (anew.errors, anew.skipped, anew.context)
    assert held_parses < len(parses)


def _scans_skipping_and_not(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ScanResult, int, ScanResult, int]:
    """The scan of ``root`` as it is and with every wrapper round analysing again all it may, with their parses."""
    parses: list[str] = []
    parse = discovery.parse_module

    def counted(source: str) -> cst.Module:
        parses.append(source)
        return parse(source)

    with monkeypatch.context() as patched:
        patched.setattr(discovery, "parse_module", counted)
        skipping = scan_tree(root)
        skipping_parses = len(parses)
        parses.clear()
        patched.setattr(discovery._WrapperWords, "in_module", lambda _self, _source, _targets: True)
        every = scan_tree(root)
    assert skipping.calls == every.calls
    assert (skipping.errors, skipping.skipped, skipping.context) == (every.errors, every.skipped, every.context)
    return skipping, skipping_parses, every, len(parses)


def test_the_wrapper_rounds_skip_a_module_that_names_no_wrapper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # shell.py matched nothing and imports from llm.py, whose ask() is a wrapper: it writes no "ask",
    # so the wrapper round does not parse it again; fix.py calls ask() and is analysed again.
    write(
        tmp_path, "llm.py",
        "import litellm\nMODEL = 'm'\n\ndef ask(prompt):\n"
        "    return litellm.completion(model=MODEL, messages=[{'role': 'user', 'content': prompt}]).choices[0].message.content\n",
    )  # fmt: skip
    write(tmp_path, "shell.py", "import subprocess\nfrom openai import OpenAIError\nfrom llm import MODEL\n\ndef run(x):\n    subprocess.run(x)\n")
    write(
        tmp_path, "fix.py",
        "import subprocess\nfrom openai import OpenAIError\nfrom llm import ask\n\ndef fix(c):\n    subprocess.run(ask(c), shell=True)\n",
    )  # fmt: skip
    skipping, skipping_parses, _every, every_parses = _scans_skipping_and_not(tmp_path, monkeypatch)
    assert [(c.location.path, c.api) for c in skipping.calls] == [("fix.py", "ask"), ("llm.py", "completion")]
    assert (skipping_parses, every_parses) == (4, 5)


def test_the_wrapper_rounds_skipping_gives_the_corpus_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    skipping, _parses, _every, _every_parses = _scans_skipping_and_not(Path(__file__).parent / "corpus", monkeypatch)
    assert len(skipping.calls) > 50


def test_a_wrapper_named_only_by_a_string_split_over_lines_is_still_matched(tmp_path: Path) -> None:
    # The annotation's value is "llm.Caller": the module writes "Cal" and "ler", and is analysed again.
    write(
        tmp_path, "llm.py",
        "import litellm\n\nclass Caller:\n    def ask(self, prompt):\n"
        "        return litellm.completion(model='m', messages=[{'role': 'user', 'content': prompt}]).choices[0].message.content\n",
    )  # fmt: skip
    write(
        tmp_path, "app.py",
        "import subprocess\nfrom openai import OpenAIError\nimport llm\n\n"
        "def fix(c: 'llm.Cal\\\nler', command):\n    subprocess.run(c.ask(command), shell=True)\n",
    )  # fmt: skip
    calls = {(c.location.path, c.api) for c in scan_tree(tmp_path).calls}
    assert ("app.py", "Caller.ask") in calls


def test_the_wrapper_rounds_skip_a_module_with_calls_that_names_no_new_wrapper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # plan.py has a model call of its own and imports MODEL from llm.py, whose ask() becomes a wrapper:
    # it was analysed with the same tables and writes no "ask", so the wrapper round does not parse it
    # again (the same calls either way); fix.py calls ask() and is analysed again.
    write(
        tmp_path, "llm.py",
        "import litellm\nMODEL = 'm'\n\ndef ask(prompt):\n"
        "    return litellm.completion(model=MODEL, messages=[{'role': 'user', 'content': prompt}]).choices[0].message.content\n",
    )  # fmt: skip
    write(
        tmp_path, "plan.py",
        "import subprocess\nimport litellm\nfrom llm import MODEL\n\ndef run(x):\n"
        "    subprocess.run(litellm.completion(model=MODEL, messages=[{'role': 'user', 'content': x}]).choices[0].message.content, shell=True)\n",
    )  # fmt: skip
    write(
        tmp_path, "fix.py",
        "import subprocess\nfrom openai import OpenAIError\nfrom llm import ask\n\ndef fix(c):\n    subprocess.run(ask(c), shell=True)\n",
    )  # fmt: skip
    skipping, skipping_parses, _every, every_parses = _scans_skipping_and_not(tmp_path, monkeypatch)
    assert [(c.location.path, c.api) for c in skipping.calls] == [("fix.py", "ask"), ("llm.py", "completion"), ("plan.py", "completion")]
    assert skipping_parses < every_parses


def test_callers_named_after_a_wrapper_class_are_found_as_a_search_of_the_whole_text_finds_them(monkeypatch: pytest.MonkeyPatch) -> None:
    # The wrapper rounds look for a receiver named after a wrapper's class (ai.run( for AI.run) or for a model
    # (self.llm_handler.chat_completion( for a provider family) only on the lines calling one of the methods:
    # the modules found are those a search of every character finds.
    wrappers = {
        "llm.AI": {"run": ("openai", "create")},
        "llm.BaseLLM": {"aask": ("openai", "create")},
        "providers.OpenAiLlm": {"chat_completion": ("openai", "create")},
        "other.ClaudeLlm": {"chat_completion": ("anthropic", "create")},
        "llm.ask": {"": ("openai", "create")},
        "agents.BaseAgent": {"get_llm()": ("openai", "create")},
        "agents.Planner": {"get_llm": ("openai", "create")},  # a method of the same name, not handing one out
    }
    sources = {
        "plain.py": "ai.run(x)\n",
        "upper.py": "x = globals.AI.RUN (q)\n",
        "inside_a_name.py": "xai.run(x)\n",  # \b: not named after AI
        "ending.py": "self.llm.aask(prompt)\n",  # BaseLLM's ending
        "split.py": "result = self.llm.aask\\\n(prompt)\nother.aask(\n  prompt)\n",  # a backslash is no space
        "across_lines.py": "self.llm.aask\n\n    (prompt)\n",
        "family.py": "reply = self.ai_handler.chat_completion(messages)\n",
        "family_camel.py": "reply = self.myLLMthing.chatcompletion  (messages)\n",  # underscores are dropped first
        "family_not.py": "reply = self.client.chat_completion(messages)\n",
        "earlier_on_the_line.py": "ai.run(a) or client.aask(b)\n",
        "later_on_the_line.py": "client.aask(b) or ai.run(a)\n",
        "no_call.py": "ai.run = None\nllm.aask\n",
        "long_s.py": "reply = self.llm.aa\u017fk(prompt)\n",  # a long s is an s to a case-insensitive search
        "kelvin.py": "\u212aeeper.run(x)\nAi.\u0280un(x)\n",
        "function.py": "ask(x)\n",  # a function is no receiver's method
        "dotted.py": "a.b.c.ai.run(1)\n",
        "empty.py": "",
        "handed_out.py": "reply = self.agent.get_llm()(prompt)\n",  # get_llm() hands out a wrapper: its call
        "handed_out_spaced.py": "reply = agent.get_llm() \n  (prompt)\n",
        "handed_out_not.py": "x = self.client.get_llm(); y = other.get_llm()\n",
    }
    entries = [discovery._Module(rel, text, discovery.Imports()) for rel, text in sources.items()]
    fast = discovery._named_callers(entries, wrappers)
    with monkeypatch.context() as patched:
        patched.setattr(discovery, "_calls_named", lambda text, calling, _spot: calling.search(text) is not None)
        whole = discovery._named_callers(entries, wrappers)
    assert fast == whole
    assert fast == {
        "plain.py", "upper.py", "ending.py", "across_lines.py", "family.py", "family_camel.py",
        "earlier_on_the_line.py", "later_on_the_line.py", "long_s.py", "dotted.py", "handed_out.py", "handed_out_spaced.py",
    }  # fmt: skip


def test_an_analysis_reads_the_same_of_taint_by_parameter_until_a_module_it_looked_up_changes() -> None:
    # The wrapper rounds analyse a module again when taint by parameter knows more modules only if its
    # analysis looked one of them up (or a summary it cut short has been made since).
    def loadable(rel: str, source: str) -> Loadable:
        entry = discovery._Module(rel, source, discovery.Imports())
        return rel, functools.partial(entry.parsed_apart, WorkMeter()), None, entry.lookups

    project = ProjectFlow([loadable("app/db.py", "def save(x):\n    return x\n")], externals={}, tools={})
    call = cst.ensure_type(cst.parse_expression("run(answer)"), cst.Call)
    with project.reading() as reads:
        assert project.param_findings("app.executor.run", call, call.args[0]) is None  # not a module it knows
        assert project.param_findings("app.db.save", call, call.args[0]) == ()
    assert {"app.executor", "app.db"} <= reads.names.keys() and project.unchanged(reads)
    project.add([loadable("app/mail.py", "def send(x):\n    pass\n")])
    assert project.unchanged(reads)  # app.mail, mail: looked up by no one
    project.add([loadable("app/executor.py", "import os\n\ndef run(command):\n    os.system(command)\n")])
    assert not project.unchanged(reads)
    with project.reading() as again:
        assert project.param_findings("app.executor.run", call, call.args[0])
    assert project.unchanged(again)
    project.add([loadable("other/db.py", "def save(x):\n    pass\n")])  # db: now two modules, so no longer followed
    assert project.unchanged(again) and "db" not in again.names


def test_a_module_writing_a_wrapper_class_but_none_of_its_new_methods_is_not_analysed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Caller.ask asks the model; Caller.summarise becomes a wrapper one round later (it returns relay(), a
    # wrapper of helper.py). app.py writes Caller and calls only ask: once summarise is known, the class's
    # instances are of the same kind and app.py names none of its new methods, so it is not parsed again;
    # report.py calls summarise and is.
    write(
        tmp_path, "helper.py",
        "import litellm\n\ndef relay(text):\n"
        "    return litellm.completion(model='m', messages=[{'role': 'user', 'content': text}]).choices[0].message.content\n",
    )  # fmt: skip
    write(
        tmp_path, "llm.py",
        "import litellm\nfrom helper import relay\n\nclass Caller:\n    def ask(self, prompt):\n"
        "        return litellm.completion(model='m', messages=[{'role': 'user', 'content': prompt}]).choices[0].message.content\n\n"
        "    def summarise(self, text):\n        return relay(text)\n",
    )  # fmt: skip
    write(
        tmp_path, "app.py",
        "import subprocess\nfrom openai import OpenAIError\nfrom llm import Caller\n\n"
        "def fix(c: Caller, command):\n    subprocess.run(c.ask(command), shell=True)\n",
    )  # fmt: skip
    write(
        tmp_path, "report.py",
        "import subprocess\nfrom openai import OpenAIError\nfrom llm import Caller\n\n"
        "def mail(c: Caller, text):\n    subprocess.run(['mail', c.summarise(text)])\n",
    )  # fmt: skip
    parses: list[str] = []
    parse, delta = discovery.parse_module, discovery._wrappers_delta

    def counted(source: str) -> cst.Module:
        parses.append(source)
        return parse(source)

    monkeypatch.setattr(discovery, "parse_module", counted)
    skipping = scan_tree(tmp_path)
    app, report = (tmp_path / "app.py").read_text(), (tmp_path / "report.py").read_text()
    assert (parses.count(app), parses.count(report)) == (2, 3)  # its own, then the round finding Caller.ask
    parses.clear()
    # Every class whose methods changed counted whole, as before: app.py writes Caller, so it is parsed again.
    monkeypatch.setattr(
        discovery, "_wrappers_delta",
        lambda before, now: ({owner: now.get(owner, before.get(owner)) for owner in {*now, *before} if now.get(owner) != before.get(owner)}, set()),
    )  # fmt: skip
    whole = scan_tree(tmp_path)
    assert (parses.count(app), parses.count(report)) == (3, 3)
    assert skipping.calls == whole.calls and (skipping.errors, skipping.context) == (whole.errors, whole.context)
    found = {(c.location.path, c.api) for c in skipping.calls}
    assert {("app.py", "Caller.ask"), ("report.py", "Caller.summarise")} <= found
    assert delta(
        {"llm.Caller": {"ask": ("litellm", "completion")}, "llm.ask": {"": ("openai", "create")}},
        {"llm.Caller": {"ask": ("litellm", "completion"), "summarise": ("litellm", "completion")}, "llm.ask": {"": ("openai", "create")}},
    ) == ({}, {"summarise"})
    # A class whose instances' kind changes (its first answer's provider) counts whole, as does a function's.
    assert delta(
        {"llm.Caller": {"ask": ("openai", "create")}, "llm.ask": {"": ("openai", "create")}},
        {"llm.Caller": {"ask": ("openai", "create"), "a": ("anthropic", "create")}, "llm.ask": {"": ("openai", "responses")}},
    )[0].keys() == {"llm.Caller", "llm.ask"}

