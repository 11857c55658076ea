"""SARIF 2.1.0 output: the structure GitHub code scanning requires, stable ids and fingerprints.

GitHub reads: version "2.1.0"; runs[].tool.driver.name and .rules[] (unique
ids); results[] with ruleId (a rule of the driver), message.text, a level,
locations[].physicalLocation.artifactLocation.uri relative to the repository
root and region.startLine >= 1; and partialFingerprints to track alerts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.cli import main
from escalated.contracts.scan.discovery import scan_tree

CORPUS = Path(__file__).parent / "corpus"
LEVELS = {"none", "note", "warning", "error"}


def sarif(path: Path) -> dict:
    result = CliRunner().invoke(main, ["contracts", "scan", str(path), "--format", "sarif", "--exit-zero"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture(scope="module")
def document() -> dict:
    return sarif(CORPUS)


def test_top_level_structure(document: dict) -> None:
    assert document["version"] == "2.1.0"
    assert document["$schema"].endswith("sarif-2.1.0.json")
    assert len(document["runs"]) == 1
    driver = document["runs"][0]["tool"]["driver"]
    assert driver["name"] == "escalated-contracts"
    ids = [rule["id"] for rule in driver["rules"]]
    assert ids == [f"R{n}" for n in range(1, 12)] + ["stale-contract", "parse-error"]
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in LEVELS


def test_every_result_is_well_formed(document: dict) -> None:
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    scanned = scan_tree(CORPUS)
    assert len(run["results"]) == len(scanned.calls) + len(scanned.errors)
    for result in (r for r in run["results"] if r["ruleId"] != "parse-error"):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in LEVELS
        assert result["message"]["text"]
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert not artifact["uri"].startswith(("/", "file:")) and "\\" not in artifact["uri"]
        region = location["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert (region["endLine"], region["endColumn"]) > (region["startLine"], region["startColumn"])
        assert all(isinstance(v, str) and v for v in result["partialFingerprints"].values())
        props = result["properties"]
        assert props["mode"] in {"required", "reviewed", "sampled", "autonomous"}
        assert props["rules"] and all(r.startswith("R") for r in props["rules"])
        assert props["confidence"] in {"high", "medium", "low"}
        assert isinstance(props["covered"], bool)


def test_rule_id_is_the_rule_that_set_the_mode(document: dict) -> None:
    results = document["runs"][0]["results"]
    money = next(r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "rules/r02_money.py")
    assert (money["ruleId"], money["level"], money["properties"]["mode"]) == ("R2", "error", "required")


def test_fingerprints_survive_lines_moving(tmp_path: Path) -> None:
    shutil.copytree(CORPUS / "rules", tmp_path / "rules")
    before = sarif(tmp_path)["runs"][0]["results"]
    target = tmp_path / "rules" / "r03_deletion.py"
    target.write_text("# a new comment line\n\n" + target.read_text())
    after = sarif(tmp_path)["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in before] == [r["partialFingerprints"] for r in after]
    assert before != after  # the lines did move


def test_covered_calls_are_suppressed_not_dropped(tmp_path: Path) -> None:
    (tmp_path / "gates.py").write_text((CORPUS / "styles" / "gates.py").read_text())
    results = sarif(tmp_path)["runs"][0]["results"]
    assert len(results) == 2
    assert all(r["suppressions"][0]["kind"] == "inSource" and r["properties"]["covered"] for r in results)


def test_parse_errors_are_results(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("from openai import OpenAI\nOpenAI().responses.create(\nclass :\n")
    result = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path), "--format", "sarif"])
    assert result.exit_code == 2
    (finding,) = json.loads(result.output)["runs"][0]["results"]
    assert finding["ruleId"] == "parse-error"
