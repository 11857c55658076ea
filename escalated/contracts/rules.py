"""The rule table: what a call's output controls decides its mode.

Deterministic by construction: pure functions of names and literals seen in
the code, no network, no randomness, sorted results. The recommendation is
the strictest mode among matched rules; every match is shown as a reason.
docs/contracts-scan.md documents the same table for users.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

from escalated.contracts.calls import Finding, Recommendation
from escalated.guard.modes import rank, strictest


@attrs.frozen
class Rule:
    id: str
    mode: str
    kind: str
    title: str


RULES: tuple[Rule, ...] = (
    Rule("R1", "required", "code-execution", "output reaches code execution"),
    Rule("R2", "required", "money", "output moves money"),
    Rule("R3", "required", "deletion", "output triggers irreversible deletion"),
    Rule("R4", "required", "access", "output changes consent, credentials or permissions"),
    Rule("R5", "required", "outbound-message", "output sends messages on someone's behalf"),
    Rule("R6", "reviewed", "write", "output writes to a system of record"),
    Rule("R7", "reviewed", "unresolved-tools", "tools cannot be resolved statically"),
    Rule("R8", "reviewed", "injection-sink", "output flows into SQL or HTML"),
    Rule("R9", "sampled", "read-only-tool", "read-only tools over private data"),
    Rule("R10", "sampled", "branch", "structured choice drives a branch"),
    Rule("R11", "autonomous", "free-text", "free text only"),
)
RULES_BY_ID = {r.id: r for r in RULES}


def rule_number(rule_id: str) -> int:
    return int(rule_id[1:])


def finding(rule_id: str, detail: str, line: int, *, basis: str = "code") -> Finding:
    return Finding(rule=rule_id, kind=RULES_BY_ID[rule_id].kind, detail=detail, line=line, basis=basis)


# -- facts -> rules ----------------------------------------------------------------
# The analysis (scan/) reports what the code does as facts; this table alone says which
# rule each fact supports. The word and SQL classifiers below are the other half.
FACT_RULES: dict[str, str] = {
    "runs-model-code": "R1",  # allow_dangerous_code=True, smolagents CodeAgent: the model writes code that runs
    "code-tool": "R1",  # a shell / REPL / code-interpreter tool is offered
    "file-edit-tool": "R6",
    "payment-tool": "R2",  # a toolkit whose tools move money (the Stripe toolkit)
    "message-tool": "R5",  # a toolkit whose tools send mail or messages (Agno EmailTools, GmailToolkit)
    "deletion-tool": "R3",  # a toolkit whose tools delete files or records  # a hosted text-editor / apply-patch tool edits files
    "tools-unresolved": "R7",  # tools from MCP, a parameter, a run-time call: not knowable statically
    "not-analysed": "R7",  # the file's time limit ran out before this call was followed
    "sql-from-output": "R8",  # SQL text built from values the model chose
    "html-from-output": "R8",  # the output rendered as unescaped HTML
    "tool-reads-only": "R9",  # a tool's body was read and does nothing but read
    "tool-body-unseen": "R9",  # a tool known by name only, and the name says nothing stronger
    "output-drives-branch": "R10",  # the output is tested by if/while/match to choose what happens
    # A Google API client resource's method (service.users().messages().send()): what the request does
    "api-sends": "R5",
    "api-deletes": "R3",
    "api-writes": "R6",
}


# Rules decided by an exact sink (not a name): a recommendation resting on them is high confidence.
EXACT_RULES = frozenset({"R1", "R7", "R8"})
# Rules that are not side effects: they never confirm what a tool's name says.
NOT_SIDE_EFFECTS = frozenset({"R7", "R9", "R10", "R11"})


def fact(kind: str, detail: str, line: int) -> Finding:
    """A finding for a fact the analysis established, under the rule this table maps it to."""
    return finding(FACT_RULES[kind], detail, line)


# A name alone is a signal, not evidence: it never makes a call stricter than this.
NAME_ONLY_CAP = "reviewed"


# -- words ---------------------------------------------------------------
_SPLIT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def words(identifier: str) -> tuple[str, ...]:
    """``sendEmail`` / ``send_email`` / ``stripe.Refund.create`` -> lower-case words."""
    return tuple(w.lower() for w in _SPLIT.findall(identifier))


# "terminal" and "notebook" alone are too common in names (terminal_spans, notebook_id).
_CODE_WORDS = frozenset({"repl", "shell", "bash", "interpreter", "subprocess", "sandbox", "jupyter"})
_RUN_VERBS = frozenset({"run", "execute", "exec", "eval", "evaluate"})
_RUN_OBJECTS = frozenset({
    "code", "command", "commands", "cmd", "script", "python", "sql_code", "snippet", "codex", "aider", "coder", "sql", "query",
})  # fmt: skip
# Deploying puts new code into production (deploy_to_production): code execution, not a record write.
_DEPLOY = frozenset({"deploy", "redeploy"})
_MONEY = frozenset({
    "pay", "pays", "payment", "payments", "charge", "charges", "refund", "refunds", "payout", "payouts",
    "transfer", "transfers", "withdraw", "withdrawal", "purchase", "buy", "checkout", "invoice",
    "wire", "remit", "disburse", "debit", "stripe", "paypal", "braintree", "adyen", "plaid", "venmo",
    "discount", "discounts", "compensation", "reimburse", "reimbursement", "trade", "trades",
})  # fmt: skip
_MONEY_MODULES = frozenset({"stripe", "paypalrestsdk", "braintree", "adyen", "square", "plaid", "coinbase", "web3"})
_READ_VERBS = frozenset({
    "get", "list", "read", "fetch", "search", "find", "lookup", "query", "retrieve", "load", "show", "describe", "count", "check", "view",
})
_DELETE = frozenset({"delete", "destroy", "truncate", "purge", "wipe", "erase", "rmtree", "unlink", "rmdir", "removedirs", "terminate"})
# remove/drop delete only when they name something stored: remove_user, drop_table
# (list.remove, df.drop, remove_reasoning_content edit data in memory).
_DELETE_MULTI = frozenset({"remove", "drop"})
_DELETABLE = frozenset({
    "user", "users", "account", "accounts", "file", "files", "record", "records", "row", "rows", "table",
    "member", "members", "repo", "repository", "branch", "customer", "customers", "order", "orders",
    "document", "documents", "folder", "directory", "dir", "bucket", "object", "objects", "database", "db",
    "collection", "index", "data", "entry", "entries", "item", "items", "post", "posts", "message",
    "messages", "email", "emails", "contact", "contacts", "project", "projects", "instance", "volume",
})  # fmt: skip
_ACCESS = frozenset({
    "grant", "revoke", "role", "roles", "permission", "permissions", "privilege", "privileges",
    "password", "passwd", "credential", "credentials", "consent", "authorize", "authorise",
    "chmod", "chown", "acl", "iam", "sudo", "mfa",
})  # fmt: skip
# Access words that are changes by themselves; the nouns (role, credentials…) need a change
# verb: building OAuth credentials to read a calendar changes no one's access.
_ACCESS_ACTS = frozenset({"grant", "revoke", "authorize", "authorise", "chmod", "chown", "sudo"})
_ACCESS_CHANGES = frozenset({
    "set", "update", "change", "reset", "rotate", "create", "delete", "add", "remove", "assign", "modify",
    "elevate", "give", "edit", "enable", "disable", "share",
})  # fmt: skip
_KEY_VERBS = frozenset({"create", "rotate", "reset", "set", "issue", "generate", "change", "update"})
_KEY_OBJECTS = frozenset({"key", "token", "secret", "apikey"})
_MESSAGE = frozenset({
    "email", "emails", "mail", "sendmail", "smtp", "sms", "tweet", "publish", "notify", "reply",
    "whatsapp", "slack", "telegram", "discord", "twilio", "sendgrid", "mailgun", "dm",
})  # fmt: skip
_MESSAGE_MODULES = frozenset({"smtplib", "twilio", "slack_sdk", "sendgrid", "telegram", "discord", "tweepy", "yagmail", "resend", "postmark"})
_SEND_OBJECTS = frozenset({
    "message", "messages", "text", "notification", "comment", "post", "letter", "reply", "alert", "invite", "invitation",
    "link", "reminder", "instructions",
})  # fmt: skip
_UI_RECEIVERS = frozenset({"websocket", "ws", "socket", "sock", "conn", "response", "stream", "queue", "writer", "self"})
_WRITE_MULTI = frozenset({
    "insert", "upsert", "save", "write", "commit", "push", "store", "persist", "upload", "submit",
    "approve", "archive", "publish", "apply",
})  # fmt: skip
# Verbs that build in-memory things as often as they write records (create_schema,
# update_state, add_item): they count only with a stored object or a record receiver.
_WRITE_OBJECT_VERBS = frozenset({
    "create", "update", "add", "set", "edit", "modify", "patch", "put", "post", "log", "record", "append",
    "register", "schedule", "assign", "close", "cancel", "merge", "move", "rename",
})  # fmt: skip
_STORED_OBJECTS = frozenset({
    "ticket", "tickets", "issue", "issues", "record", "records", "row", "rows", "user", "users", "account",
    "accounts", "customer", "customers", "order", "orders", "contact", "contacts", "lead", "leads", "deal",
    "deals", "event", "events", "appointment", "meeting", "booking", "reservation", "page", "pages", "file",
    "files", "document", "documents", "pr", "pull", "branch", "repo", "release", "case", "incident", "task",
    "tasks", "note", "notes", "calendar", "sheet", "spreadsheet", "entry", "entries", "invoice", "profile",
    "status", "subscription", "database", "db", "table", "item", "items", "product", "products",
})  # fmt: skip
_WRITE_WEAK = frozenset({"set", "add", "log", "record", "append", "put"})
_WRITE_SINGLE = frozenset({
    "save", "commit", "upsert", "upload", "persist", "submit", "push", "insert", "update", "put", "post", "patch", "add", "create", "merge", "write",
    "aput", "asave", "aupsert",
})
_RECORD_RECEIVERS = frozenset({
    "db", "database", "session", "conn", "connection", "cursor", "cur", "collection", "table", "repo",
    "repository", "crm", "sheet", "sheets", "bucket", "s3", "es", "redis", "mongo", "supabase", "firestore",
    "dynamodb", "git", "github", "gitlab", "jira", "salesforce", "hubspot", "notion", "airtable", "zendesk",
    "requests", "httpx", "http", "api", "record", "records", "ticket", "tickets", "issue", "issues",
    "customer", "customers", "user", "users", "account", "accounts", "order", "orders", "file", "f", "fh", "origin",
    "store",  # a LangGraph store: long-term memory kept across runs and users, read by later runs
})  # fmt: skip
# Calls that only display or log: the output stays free text.
_DISPLAY = frozenset({"print", "pprint", "logger", "logging", "log", "st", "console", "click", "echo", "rprint", "display", "gr", "tqdm", "warnings"})
# A console, progress bar or printer anywhere in the receiver: self.progress.console.print(...).
_DISPLAY_RECEIVERS = frozenset({"console", "logger", "progress", "printer", "spinner", "status_bar", "pbar", "tqdm", "bar"})


def _displays(dotted: str) -> bool:
    parts = dotted.split(".")
    return len(parts) > 1 and (bool(set(parts[:-1]) & _DISPLAY_RECEIVERS) or parts[-1] in {"print", "echo", "rprint"})


def only_displays(dotted: str) -> bool:
    """``print(...)``, ``console.print(...)``, ``logger.info(...)``: a call that only shows or logs."""
    return bool(dotted) and (dotted.split(".")[0] in _DISPLAY or _displays(dotted))


# Scheduling machinery: asyncio.create_task is not a task in anyone's tracker.
_CONCURRENCY = frozenset({"asyncio", "threading", "concurrent", "loop", "tg", "task_group", "executor", "anyio", "trio"})
_HTTP_WRITE = frozenset({"post", "put", "patch"})

_EXACT_CODE = frozenset({
    "eval", "exec", "compile", "os.system", "os.popen", "pty.spawn", "os.execv", "os.execvp", "os.execl",
    "os.spawnl", "os.spawnv", "commands.getoutput", "runpy.run_path", "runpy.run_module",
    "asyncio.create_subprocess_shell", "asyncio.create_subprocess_exec",
})  # fmt: skip
# pyautogui's keyboard and mouse actions (not its screenshots or screen size).
_DESKTOP_INPUT = frozenset({
    "write", "typewrite", "press", "hotkey", "keyDown", "keyUp", "click", "doubleClick", "tripleClick",
    "rightClick", "middleClick", "mouseDown", "mouseUp", "dragTo", "dragRel", "drag", "scroll", "hscroll", "vscroll",
})  # fmt: skip
# pynput's keyboard and mouse Controllers (pynput.keyboard.Controller().type(text), mouse clicks).
_PYNPUT_INPUT = frozenset({"type", "press", "release", "tap", "pressed", "click", "scroll", "move"})
# Playwright's (and Pyppeteer's) Page.mouse and Page.keyboard: a browser driven like a person at it.
_BROWSER_INPUT = {
    "mouse": frozenset({"click", "dblclick", "down", "up", "move", "wheel"}),
    "keyboard": frozenset({"type", "press", "down", "up", "insert_text", "insertText"}),
}


def browser_input(dotted: str, *, line: int) -> Finding | None:
    """``page.mouse.click(x, y)``, ``self.page.keyboard.type(text)`` in a module that imports Playwright:
    clicks and keys on a live browser page (forms submitted, purchases made in the user's sessions),
    the computer-use tools' own class."""
    parts = dotted.split(".")
    if len(parts) >= 3 and parts[-1] in _BROWSER_INPUT.get(parts[-2], ()):
        return finding("R1", f"{dotted}() drives a browser page's keyboard and mouse (Playwright)", line)
    return None


# A computer-use SDK's machine (cua's ``computer.Computer().interface``, E2B Desktop's ``Sandbox``): clicks,
# keys, text and shell commands on a real or virtual desktop. Names no other object has, on any receiver in a
# module that imports the SDK; the common verbs only on a receiver named as the machine.
_MACHINE_INPUT = frozenset({
    "left_click", "right_click", "double_click", "middle_click", "triple_click", "move_cursor", "move_mouse",
    "mouse_down", "mouse_up", "mouse_press", "mouse_release", "drag_to", "key_down", "key_up", "type_text",
    "press_key", "hotkey", "scroll_up", "scroll_down", "run_command",
})  # fmt: skip
_MACHINE_VERBS = frozenset({"click", "type", "write", "press", "scroll", "drag", "launch"})
_MACHINE_WORDS = ("interface", "computer", "sandbox", "desktop")


def machine_input(dotted: str, *, sdk: str, line: int) -> Finding | None:
    """``self.interface.left_click(x, y)``, ``sandbox.write(text)`` in a module that imports a computer-use
    SDK (``sdk``): the machine it controls is driven like a person at it (anything they could do, a
    terminal opened and typed into); ``run_command`` runs a shell command there."""
    parts = dotted.split(".")
    if len(parts) < 2:
        return None
    last, receiver = parts[-1], parts[-2].lower()
    if last in _MACHINE_INPUT or (last in _MACHINE_VERBS and any(word in receiver for word in _MACHINE_WORDS)):
        return finding("R1", f"{dotted}() drives a computer's keyboard, mouse or shell ({sdk})", line)
    return None


_SQL_EXECUTE = frozenset({"execute", "executemany", "executescript", "exec_driver_sql", "query", "fetch", "fetchrow", "fetchval"})
# Receivers that make "execute" a database call (executor.execute(name, args) is not).
_DB_WORDS = frozenset({
    "cursor", "cur", "conn", "connection", "db", "database", "session", "engine", "con", "sql", "sqlite",
    "sqlite3", "duckdb", "pg", "postgres", "mysql", "psycopg", "psycopg2", "asyncpg", "pool", "bigquery", "snowflake",
})  # fmt: skip
_SQL_FUNCTIONS = frozenset({"read_sql", "read_sql_query", "from_statement", "RawSQL", "sqlalchemy.text", "sqlalchemy.sql.text"})
_HTML_SINKS = frozenset({"Markup", "mark_safe", "render_template_string", "HTMLResponse", "HTML", "from_string", "Template", "html"})


# An OpenAI Agents guardrail's result: tripwire_triggered stops the run it guards.
_TRIPWIRES = frozenset({"GuardrailFunctionOutput"})


def classify_callee(dotted: str, *, line: int, tainted: bool, qualified: str | None = None) -> list[Finding]:
    """Findings for one called name, e.g. ``stripe.Refund.create`` or ``send_email``.

    ``tainted`` says the model's output is an argument of this call (data
    flow), which is what the injection sinks (R1 eval, R8 SQL/HTML) need; the
    side-effect rules also apply to calls the output merely controls.
    """
    full = qualified or dotted
    parts = full.split(".")
    last = parts[-1]
    root = parts[0]
    if root == "pyautogui" and last in _DESKTOP_INPUT:
        # Keys pressed, text typed, clicks on the user's own desktop: like a computer-use tool, anything
        # a person at the keyboard could do (open a terminal and type into it).
        return [finding("R1", f"{dotted}() drives the desktop's keyboard and mouse", line)]
    if root == "pynput" and last in _PYNPUT_INPUT and "Controller" in parts:
        # keyboard = Controller(); keyboard.type(command): keys typed into whatever window has focus.
        return [finding("R1", f"{dotted}() drives the desktop's keyboard and mouse (pynput)", line)]
    if (root in _DISPLAY | _CONCURRENCY or dotted.split(".")[0] in _DISPLAY | _CONCURRENCY or _displays(dotted)) and full not in _EXACT_CODE:
        # Printing, logging and scheduling decide nothing; asyncio.create_subprocess_shell still starts a process.
        return []
    out: list[Finding] = []
    tainted_code = tainted and (full in _EXACT_CODE or root == "subprocess" or dotted in _EXACT_CODE)
    if tainted_code or root == "subprocess" or full in _EXACT_CODE - {"compile"}:
        out.append(finding("R1", f"{dotted}()", line))
    if tainted and _is_sql_sink(parts, full):
        out.append(finding("R8", f"SQL: {dotted}()", line))
    if tainted and last in _HTML_SINKS and not _class_constructor(parts):
        out.append(finding("R8", f"HTML: {dotted}()", line))
    if last in _TRIPWIRES:  # reached by the output (a tool body never builds one)
        out.append(finding("R10", f"the output decides a guardrail's tripwire: {dotted}() (the SDK stops the run on it)", line))
        return out
    out.extend(classify_name(dotted, line=line, qualified=qualified))
    return out


def _class_constructor(parts: list[str]) -> bool:
    """``Snippets.from_string(text)``: a class's alternate constructor (like ``from_json``) parses the
    text into the class's object; only a Jinja environment's ``from_string`` (``env.from_string``,
    ``Environment().from_string``, ``jinja2.Environment.from_string``) makes it a template."""
    if parts[-1] != "from_string" or len(parts) < 2:
        return False
    owner = parts[-2]
    return owner[:1].isupper() and not owner.endswith("Environment")


def _is_sql_sink(parts: list[str], full: str) -> bool:
    last = parts[-1]
    if last in _SQL_FUNCTIONS or full in _SQL_FUNCTIONS:
        return True
    if last == "raw" and "objects" in parts:  # Django Model.objects.raw(sql)
        return True
    receiver = set(words(".".join(parts[:-1])))
    return last in _SQL_EXECUTE and len(parts) > 1 and bool(receiver & _DB_WORDS)


def classify_name(name: str, *, line: int, qualified: str | None = None, subject: str = "call") -> list[Finding]:
    """Side-effect rules (R1-R6) from the words of a name: a tool or a called function."""
    full = qualified or name
    parts = full.split(".")
    ws = words(parts[-1])
    receiver = set(words(".".join(parts[:-1]))) | {parts[0]}
    everything = set(words(full))
    label = f"{subject} {name}" if subject != "call" else f"{name}()"
    out: list[Finding] = []
    is_read = bool(ws) and ws[0] in _READ_VERBS
    if _code_words(ws) or (len(ws) > 1 and set(ws) & _CODE_WORDS):
        out.append(finding("R1", label, line))
    # The receiver counts for money: stripe_client.payouts.create, billing.refunds.create.
    money = (set(ws) | receiver | set(words(name))) & _MONEY or parts[0] in _MONEY_MODULES or _commits_money(ws)
    if money and not is_read:
        out.append(finding("R2", label, line))
    if set(ws) & _DELETE or (set(ws) & _DELETE_MULTI and set(ws) & _DELETABLE) or full in {"os.remove", "shutil.rmtree"}:
        out.append(finding("R3", label, line))
    if _changes_access(ws, is_read=is_read) or (set(ws) & _KEY_VERBS and set(ws) & _KEY_OBJECTS):
        out.append(finding("R4", label, line))
    if _is_message(ws, receiver, everything, parts[0]):
        out.append(finding("R5", label, line))
    if not out and _is_write(ws, receiver, full):
        out.append(finding("R6", label, line))
    return [_by_code(f, full) if _is_exact(full) else attrs.evolve(f, basis="name") for f in out]


# The fact a side-effect rule stands for, for a library's action known by its documented name.
_ACTION_FACTS = {"R1": "code-tool", "R2": "payment-tool", "R3": "deletion-tool", "R5": "message-tool", "R6": "file-edit-tool"}


def action_facts(name: str) -> list[str]:
    """What a library's documented action does (a Composio slug's ``send_email``), as fact kinds.

    An action on someone's account that does not read changes something there (a star, a label):
    a write, when no stronger rule matches."""
    kinds = [_ACTION_FACTS[f.rule] for f in classify_name(name, line=0, subject="tool") if f.rule in _ACTION_FACTS]
    ws = words(name)
    if not kinds and ws and ws[0] not in _READ_VERBS:
        kinds.append("file-edit-tool")
    return list(dict.fromkeys(kinds))


def _is_exact(full: str) -> bool:
    """SDKs and calls whose identity is the evidence: stripe.Refund.create, smtplib, os.remove, requests.post."""
    root = full.split(".")[0]
    return (
        root in _MONEY_MODULES | _MESSAGE_MODULES | {"subprocess", "shutil"}
        or full in _EXACT_CODE | {"os.remove", "os.unlink", "os.rmdir", "json.dump", "pickle.dump", "yaml.dump"}
        or (root in {"requests", "httpx", "aiohttp"} and full.rpartition(".")[2] in _HTTP_WRITE)
    )


def _by_code(found: Finding, full: str) -> Finding:
    return found


def _changes_access(ws: tuple[str, ...], *, is_read: bool) -> bool:
    if is_read or not set(ws) & _ACCESS:
        return False
    return bool(set(ws) & _ACCESS_ACTS or set(ws) & _ACCESS_CHANGES)


def _commits_money(ws: tuple[str, ...]) -> bool:
    """place_order, book_flight, reserve_room, subscribe: the model spends someone's money."""
    if not ws:
        return False
    if ws[0] == "order":  # order_pizza moves money; order_status, order_id name a record; order_by sorts
        return len(ws) > 1 and ws[1] not in _RECORD_FIELDS | _SORTING
    return ws[0] in {"book", "reserve", "subscribe", "renew"} or (ws[0] in {"place", "submit", "create"} and "order" in ws)


# query.order_by(Feed.created_at.desc()): an ORM's (SQLAlchemy, Django, Peewee) sort order, no purchase.
_SORTING = frozenset({"by", "asc", "desc"})
_RECORD_FIELDS = frozenset({"status", "id", "ids", "details", "info", "history", "number", "lookup", "total", "date", "state", "items"})


def _code_words(ws: tuple[str, ...]) -> bool:
    if len(ws) == 1:
        return ws[0] in {"repl", "shell", "bash", "terminal"}
    return bool(set(ws) & _RUN_VERBS and set(ws) & _RUN_OBJECTS) or (bool(ws) and ws[0] in _DEPLOY)


# Verbs that file a message already there (mark_email_as_read, archive_email, label_message): the
# mailbox changes, nothing is sent.
_FILING_VERBS = frozenset({"mark", "archive", "label", "flag", "star", "tag", "categorize", "categorise"})


def _is_message(ws: tuple[str, ...], receiver: set[str], everything: set[str], root: str) -> bool:
    if root in _MESSAGE_MODULES:
        return bool(ws) and ws[0] not in _READ_VERBS
    if ws and (ws[0] in _READ_VERBS or ws[0] in _FILING_VERBS):
        return False
    if "human" in ws:
        return False  # reply_to_human, ask_human: the answer goes to the person running the agent, as shown
    if set(ws) & _MESSAGE:
        return True
    if "send" in ws or "post" in ws:
        if receiver & _UI_RECEIVERS and not everything & _MESSAGE:
            return False
        return bool((set(ws) - {"send", "post"}) & _SEND_OBJECTS or everything & _MESSAGE)
    return False


# The agent's own bookkeeping: conversation memory, caches, traces are not systems of record.
_BOOKKEEPING = frozenset({
    "memory", "history", "messages", "cache", "buffer", "state", "context", "trace", "tracer", "span", "metrics", "chat_history", "scratchpad",
})


# The agent's own running record: its state, its conversation's messages, its history. A project
# function named for one (add_message_to_project, add_to_current_state) keeps what the agent said
# and did; the session.add() inside it is that bookkeeping, not a write to a system of record.
_OWN_RECORDS = _BOOKKEEPING | {"message", "conversation", "conversations", "transcript", "chat"}


def keeps_own_record(function: str) -> bool:
    """``project_manager.add_message_from_devika``, ``agent_state.add_to_current_state``: a function whose
    name says it keeps the agent's own state, messages or history (and names no stored object such as a
    ticket or an order)."""
    ws = set(words(function.rpartition(".")[2]))
    return bool(ws & _OWN_RECORDS) and not ws & _STORED_OBJECTS


def own_record_writes(function: str | None, found: Iterable[Finding]) -> list[Finding]:
    """What a function keeping the agent's own record does, without the writes only its words made
    look like records (a session.add() there): what its code shows (json.dump, a POST) still counts."""
    if function is None or not keeps_own_record(function):
        return list(found)
    return [f for f in found if not (f.rule == "R6" and f.basis == "name")]


def _is_write(ws: tuple[str, ...], receiver: set[str], full: str) -> bool:
    if not ws or ws[0] in _READ_VERBS or (receiver | set(ws)) & _BOOKKEEPING:
        return False
    if full.split(".")[0] in {"requests", "httpx", "aiohttp"} and ws[0] in _HTTP_WRITE:
        return True
    if full in {"json.dump", "pickle.dump", "yaml.dump", "shutil.copy", "shutil.move", "os.rename", "os.replace"}:
        return True
    if len(ws) > 1 and (ws[0] in _WRITE_MULTI or (ws[0] == "to" and ws[-1] in {"sql", "csv", "parquet", "excel"})):
        return True
    if len(ws) > 1 and ws[0] in _WRITE_OBJECT_VERBS and set(ws[1:]) & _STORED_OBJECTS:
        return True
    if len(ws) > 1 and ws[0] in _FILING_VERBS and set(ws[1:]) & (_MESSAGE | {"message", "messages", "thread", "threads"}):
        return True  # mark_email_as_read: the mailbox changes (reversibly)
    if ws[0] in _WRITE_SINGLE | _WRITE_WEAK and receiver & _RECORD_RECEIVERS:
        return True
    return len(ws) == 1 and ws[0] in {"save", "commit", "upsert"}


# -- what a tool tells the model it does -------------------------------------
# A tool whose body is a stand-in (it only builds its answer: ``return f"Email sent to {to}"``, a
# log line) is judged by its description, the first sentence of its docstring: that is what
# the model is told it does, and what the real body will do. Basis ``declared``: counted like
# code, since the project says so in the tool itself, not only in a name.
_STOP = frozenset({
    "a", "an", "the", "to", "of", "for", "with", "by", "or", "and", "on", "in", "into", "from", "as", "at",
    "is", "are", "be", "it", "its", "this", "that", "their", "his", "her", "s", "given", "specified",
})  # fmt: skip
_VERBS = (
    _READ_VERBS | _WRITE_MULTI | _WRITE_OBJECT_VERBS | _WRITE_SINGLE | _RUN_VERBS | _KEY_VERBS | _ACCESS_CHANGES
    | _DELETE | _DELETE_MULTI | _ACCESS_ACTS | {"send", "post", "pay", "charge", "refund", "transfer", "book", "reserve", "generate"}
)


def _verb(word: str) -> str:
    """``sends`` -> ``send``, ``modifies`` -> ``modify``, ``schedules`` -> ``schedule``."""
    if word.endswith("ies") and word[:-3] + "y" in _VERBS:
        return word[:-3] + "y"
    if word.endswith("s") and word[:-1] in _VERBS:
        return word[:-1]
    return word


def first_sentence(docstring: str) -> str:
    text = " ".join(docstring.strip().split("\n\n")[0].split())
    head, dot, _rest = text.partition(". ")
    return (head + dot).strip() if dot else text


def classify_description(tool: str, docstring: str, *, line: int, body: str = "its body is a stand-in") -> list[Finding]:
    """Side-effect rules from a stand-in or mock tool's description: ``Write and send an email.`` is R5."""
    sentence = first_sentence(docstring)
    ws = [_verb(w) for w in words(sentence) if w not in _STOP and len(w) > 1]
    if not ws:
        return []
    found = classify_name("_".join(ws), line=line, subject="tool")
    # The name must agree (the same rule, or the same action: send_receipt, "Sends an email ..."):
    # a description alone ("Refund policy: explains ...") is prose, not a declaration.
    named = {f.rule for f in classify_name(tool, line=line)}
    same_action = bool(words(tool)) and _verb(words(tool)[0]) == ws[0]
    detail = f"tool {tool}, described as {sentence[:80]!r} ({body})"
    return [attrs.evolve(f, basis="declared", detail=detail) for f in found if f.rule in named or same_action]


# -- SQL in literals ---------------------------------------------------------
_SQL_DELETE = r"(?:DELETE\s+FROM|DROP\s+(?:TABLE|DATABASE|SCHEMA|INDEX)|TRUNCATE\s)"
_SQL_WRITE = r"(?:INSERT\s+INTO|UPDATE\s+\w+\s+SET|REPLACE\s+INTO|MERGE\s+INTO|ALTER\s+TABLE)"
_SQL_GRANT = r"(?:GRANT\s+\w+|REVOKE\s+\w+|CREATE\s+USER|ALTER\s+USER)"


def _sql(pattern: str, text: str) -> str | None:
    """Upper-case SQL anywhere, lower-case only at the start: prose says "delete from" too."""
    found = re.search(rf"\b{pattern}", text) or re.match(rf"\s*{pattern}", text, re.I)
    return found.group(0).split()[0].upper() if found else None


def classify_sql(text: str, *, line: int) -> list[Finding]:
    out = []
    if verb := _sql(_SQL_DELETE, text):
        out.append(finding("R3", f"SQL {verb}", line))
    if verb := _sql(_SQL_GRANT, text):
        out.append(finding("R4", f"SQL {verb}", line))
    if verb := _sql(_SQL_WRITE, text):
        out.append(finding("R6", f"SQL {verb}", line))
    return out


# -- the recommendation ----------------------------------------------------------
def effective_mode(found: Finding) -> str:
    """A rule's mode, except that a name alone never goes past NAME_ONLY_CAP."""
    mode = RULES_BY_ID[found.rule].mode
    return mode if found.basis in EVIDENCE or rank(mode) <= rank(NAME_ONLY_CAP) else NAME_ONLY_CAP


# Bases that decide a mode: what the code does, and what a stand-in tool is declared to do.
EVIDENCE = frozenset({"code", "declared"})


# A reviewer reads a handful of reasons, not hundreds: the JSON's findings list them all.
MAX_REASONS = 5


def recommend(findings: tuple[Finding, ...], *, confidence: str, path: str = "") -> Recommendation:
    """Strictest mode among matched rules; free text only (R11) when nothing matched.

    Findings from names alone count at most as ``reviewed`` and say so; when
    such a finding is what sets the mode, the recommendation's confidence is low.
    At most ``MAX_REASONS`` reasons, the decisive first (the strictest mode, what
    the code does before what names say), each with the file:line of its fact.
    """
    if not findings:
        findings = (finding("R11", "the output reaches no tool, sink, branch or side effect found", 0),)
    mode = strictest([effective_mode(f) for f in findings])
    rule_ids = sorted({f.rule for f in findings}, key=rule_number)
    reasons = tuple(dict.fromkeys(_reason(f, path) for f in _decisive_first(findings)))[:MAX_REASONS]
    decided_by_code = any(f.basis in EVIDENCE and effective_mode(f) == mode for f in findings)
    if not decided_by_code:
        confidence = "low"
    return Recommendation(mode=mode, rules=tuple(rule_ids), reasons=reasons, confidence=confidence)


def _decisive_first(findings: tuple[Finding, ...]) -> list[Finding]:
    """Strictest first, code before names; a finding another one of its rule extends is left out
    (``tool refund`` beside ``tool refund -> stripe.Refund.create()``)."""
    ordered = sorted(
        findings, key=lambda f: (-rank(effective_mode(f)), f.basis not in EVIDENCE, rule_number(f.rule), f.line, f.detail)
    )
    details = {(f.rule, f.detail) for f in findings}
    return [
        f for f in ordered
        if not any(rule == f.rule and other != f.detail and other.startswith(f.detail + " ") for rule, other in details)
    ]  # fmt: skip


def _reason(found: Finding, path: str) -> str:
    where = ""
    if found.line:
        where = f" ({path}:{found.line})" if path else f" (line {found.line})"
    return f"{found.rule} {RULES_BY_ID[found.rule].title}: {found.detail}{where}{_signal(found)}"


def _signal(found: Finding) -> str:
    if found.basis in EVIDENCE:
        return ""
    if effective_mode(found) != RULES_BY_ID[found.rule].mode:
        return f" [name only: a low-confidence signal, counted as {NAME_ONLY_CAP}]"
    return " [name only: a low-confidence signal]"


def deciding_rule(recommendation: Recommendation) -> str:
    """The first rule that sets the recommended mode: the SARIF rule id of a call."""
    top = rank(recommendation.mode)
    for rule_id in recommendation.rules:
        if rank(RULES_BY_ID[rule_id].mode) == top:
            return rule_id
    return "R11"
