"""The documented JSON schema: the doc and the code agree, reports conform, bad ones fail."""

from __future__ import annotations

import copy
import json
import re

import pytest

from bcfront.cli.schema import SCHEMA, validate
from bcfront.report import SCHEMA_VERSION, Report

from .helpers import REPO
from .samples import full_report, source_file

DOC = REPO / "docs" / "explain-schema.md"


def doc_schema() -> dict:
    text = DOC.read_text()
    section = text.split("## JSON Schema", 1)[1]
    block = re.search(r"```json\n(.*?)```", section, re.S).group(1)
    return json.loads(block)


def test_doc_embeds_exactly_the_schema_the_code_checks():
    assert doc_schema() == json.loads(json.dumps(SCHEMA))


def test_doc_states_the_current_version():
    assert f"currently **{SCHEMA_VERSION}**" in DOC.read_text()


def test_doc_example_conforms():
    text = DOC.read_text().split("## Example", 1)[1]
    example = json.loads(re.search(r"```json\n(.*?)```", text, re.S).group(1))
    assert validate(example) == []


def test_hand_built_reports_conform(tmp_path):
    for report in (Report(), full_report(source_file(tmp_path))):
        data = json.loads(report.to_json())
        assert validate(data) == [], validate(data)
        assert data["schema_version"] == SCHEMA_VERSION


def _good(tmp_path) -> dict:
    return json.loads(full_report(source_file(tmp_path)).to_json())


MUTATIONS = {
    "missing top-level key": lambda d: d.pop("functions"),
    "wrong version": lambda d: d.__setitem__("schema_version", SCHEMA_VERSION + 1),
    "extra key": lambda d: d["functions"][0].__setitem__("surprise", 1),
    "missing nested key": lambda d: d["functions"][0]["graph_breaks"][0].pop("reason"),
    "bool is not an int": lambda d: d["functions"][0].__setitem__("calls", True),
    "negative time": lambda d: d["functions"][0].__setitem__("python_seconds", -1.0),
    "count below one": lambda d: d["functions"][0]["graph_breaks"][0].__setitem__("count", 0),
    "string lineno": lambda d: d["functions"][0]["guards"][0]["first_use"].__setitem__("lineno", "3"),
    "list is not an object": lambda d: d["functions"][0]["recompiles"].__setitem__(0, []),
    "null where a string is required": lambda d: d["functions"][0]["graphs"][0].__setitem__("backend", None),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_validator_rejects(tmp_path, name):
    data = _good(tmp_path)
    bad = copy.deepcopy(data)
    MUTATIONS[name](bad)
    errors = validate(bad)
    assert errors, f"{name} was accepted"
    assert all(e.startswith("$") for e in errors)


def test_validator_accepts_nulls_where_documented(tmp_path):
    data = _good(tmp_path)
    fn = data["functions"][0]
    fn["filename"] = fn["lineno"] = None
    fn["guards"][0]["first_use"] = None
    fn["graph_breaks"][0]["filename"] = None
    assert validate(data) == []
