"""References resolve inside the tool's schema only: nothing is fetched, from the network or
the disk, by any command, and every other reference is a contract error at load (exit 2,
one line naming the file and the JSON path of the reference).

The loopback test starts an HTTP server on 127.0.0.1 and a FIFO standing in for a local
file, puts each reference form into every tool of the checkout contract, and runs every
command that reads a contract in a child process (a fetch from inside jsonschema-rs holds
the interpreter lock, so the server could not answer a command run in this process). A
request reaching the server, or a reader opening the FIFO, fails the test.
"""

from __future__ import annotations

import copy
import errno
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from txcheck.cli import main
from txcheck.models.errors import ContractError
from txcheck.models.json_path import format_path
from txcheck.models.plan.contract import Contract, Tool
from txcheck.models.plan.contract_loader import parse_contract
from txcheck.models.plan.schema_check import compile_contract
from txcheck.traces.document import content_digest

ROOT = Path(__file__).resolve().parent.parent
CHECKOUT = json.loads((ROOT / "examples/checkout/contract.json").read_text("utf-8"))
VALID_PLAN = ROOT / "examples/proposals/valid_openai_chat.json"
TAU2 = ROOT / "tests/fixtures/tau2/shop"

Form = Callable[[str, str], dict[str, Any]]
"""A reference form: (server URL, FIFO path) -> schema keywords merged into a tool's
``parameters``."""


def _under(name: str, ref: str) -> dict[str, Any]:
    """``ref`` under a property called ``name``, applied to every call through a local
    ``$ref`` to that property (so it is evaluated whatever the arguments)."""
    return {"properties": {name: {"$ref": ref}}, "allOf": [{"$ref": f"#/properties/{name}"}]}


FORMS: dict[str, tuple[Form, tuple[str, ...]]] = {
    "http": (
        lambda url, _: {"allOf": [{"$ref": f"{url}/plain.json"}]},
        ("allOf", 0, "$ref"),
    ),
    "http-under-enum": (
        lambda url, _: _under("enum", f"{url}/enum.json"),
        ("properties", "enum", "$ref"),
    ),
    "http-under-default": (
        lambda url, _: _under("default", f"{url}/default.json"),
        ("properties", "default", "$ref"),
    ),
    "dynamic-ref": (
        lambda url, _: {"allOf": [{"$dynamicRef": f"{url}/dynamic.json#meta"}]},
        ("allOf", 0, "$dynamicRef"),
    ),
    "nested-id": (
        lambda url, _: {"allOf": [{"$id": f"{url}/nested/", "$ref": "inner.json"}]},
        ("allOf", 0, "$id"),
    ),
    "file": (
        lambda _, fifo: _under("default", Path(fifo).as_uri()),
        ("properties", "default", "$ref"),
    ),
    "file-nested-id": (
        lambda _, fifo: {"allOf": [{"$id": Path(fifo).parent.as_uri() + "/", "$ref": "fifo"}]},
        ("allOf", 0, "$id"),
    ),
}


def _with(parameters: dict[str, Any], extra: dict[str, Any]) -> None:
    """``extra``'s keywords added to ``parameters`` (properties and allOf merged)."""
    for key, value in extra.items():
        if key == "properties":
            parameters.setdefault(key, {}).update(value)
        elif key == "allOf":
            parameters.setdefault(key, []).extend(value)
        else:
            parameters[key] = value


def _hostile_tools(tools: list[dict[str, Any]], extra: dict[str, Any]) -> None:
    for tool in tools:
        _with(tool["function"]["parameters"], copy.deepcopy(extra))


# -- the loopback server and the FIFO ------------------------------------------------------


@attrs.define
class Watch:
    """What reached the server (request paths) and how often the FIFO was opened."""

    url: str
    fifo: str
    requests: list[str] = attrs.field(factory=list)
    fifo_reads: int = 0


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every GET with a schema that would accept anything, and records it."""

    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        body = b'{"$dynamicAnchor": "meta"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/schema+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def watch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Watch]:
    seen: list[str] = []
    handler = type("Handler", (_Recorder,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    fifo = tmp_path_factory.mktemp("disk") / "fifo"
    os.mkfifo(fifo)
    done = threading.Event()
    result = Watch(url=f"http://127.0.0.1:{server.server_address[1]}", fifo=str(fifo))
    result.requests = seen

    def feed() -> None:
        # Opening a FIFO for writing without blocking succeeds only once a reader has it
        # open (or is blocked opening it): each success is a read of the "file".
        while not done.is_set():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as error:
                assert error.errno == errno.ENXIO
                done.wait(0.005)
                continue
            result.fifo_reads += 1
            try:
                os.write(fd, b'{"type": "integer"}')
            finally:
                os.close(fd)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        yield result
    finally:
        done.set()
        feeder.join()
        server.shutdown()
        serving.join()
        server.server_close()


_DRIVER = """
import contextlib, io, json, sys
from txcheck.cli import main
results = {}
for name, argv in json.loads(sys.argv[1]).items():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except BaseException as error:  # reported, never swallowed
            code = repr(error)
    results[name] = [code, out.getvalue()[-2000:], err.getvalue()]
print(json.dumps(results))
"""


def _run(cwd: Path, commands: dict[str, list[str]]) -> dict[str, tuple[Any, str, str]]:
    """Each command's (exit code, stdout, stderr), run one after another in one child
    process (one interpreter start for all of them)."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    done = subprocess.run(  # the timeout only stops a hung command from hanging the suite
        [sys.executable, "-c", _DRIVER, json.dumps(commands)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {name: tuple(value) for name, value in json.loads(done.stdout).items()}


@pytest.fixture(scope="module")
def naive_trace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A trace of naive on the checkout contract, to carry a hostile contract into replay."""
    out = tmp_path_factory.mktemp("trace") / "t.json"
    argv = ["explore", "--policy", "naive", "--no-seeds", "--seed", "1", "--plan", str(VALID_PLAN)]
    assert main([*argv, "--engine", "systematic", "--trace-out", str(out), "--json"]) == 1
    return dict(json.loads(out.read_text("utf-8")))


def _commands(
    tmp: Path, extra: dict[str, Any], trace: dict[str, Any]
) -> dict[str, tuple[list[str], int]]:
    """Each command that reads a contract (``extra`` in every tool's schema), with the exit
    code it must give."""
    contract = copy.deepcopy(CHECKOUT)
    _hostile_tools(contract["tools"], extra)
    (tmp / "contract.json").write_text(json.dumps(contract, indent=1), "utf-8")
    twice = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": "get_order", "arguments": json.dumps({"order_id": "o1"})},
            }
            for i in (1, 2)
        ],
    }
    (tmp / "twice.json").write_text(json.dumps(twice), "utf-8")
    case = {"id": "c", "proposal": twice, "expect": {"calls": twice_expected()}}
    (tmp / "cases.jsonl").write_text(json.dumps(case) + "\n", "utf-8")
    document = dict(trace, contract=contract)
    document["digest"] = content_digest(document)
    (tmp / "trace.json").write_text(json.dumps(document), "utf-8")
    domain = tmp / "shop"
    domain.mkdir()
    (domain / "tasks.json").write_bytes((TAU2 / "tasks.json").read_bytes())
    tools = json.loads((TAU2 / "tools.json").read_text("utf-8"))
    _hostile_tools(tools, extra)
    (domain / "tools.json").write_text(json.dumps(tools), "utf-8")
    return {
        "validate": (["validate", "contract.json", str(VALID_PLAN), "twice.json"], 2),
        "validate-json": (["validate", "contract.json", "twice.json", "--json"], 2),
        "score": (["score", "contract.json", "cases.jsonl"], 2),
        "evaluate": (["evaluate", "contract.json", "cases.jsonl"], 2),
        "replay": (["replay", "trace.json"], 2),
        "explore": (
            [
                "explore",
                "--contract",
                "contract.json",
                "--policy",
                "guarded",
                "--max-examples",
                "3",
            ],
            2,
        ),
        "import": (["import", "tau2", str(domain), "--out", "imported.jsonl"], 0),
        "score-imported": (["score", "imported.jsonl"], 2),
    }


def twice_expected() -> list[dict[str, Any]]:
    return [{"name": "get_order", "arguments": {"order_id": "o1"}}] * 2


@pytest.mark.parametrize("form", sorted(FORMS))
def test_no_command_fetches_a_reference(
    form: str, watch: Watch, naive_trace: dict[str, Any], tmp_path: Path
) -> None:
    make, where = FORMS[form]
    before = (len(watch.requests), watch.fifo_reads)
    commands = _commands(tmp_path, make(watch.url, watch.fifo), naive_trace)
    results = _run(tmp_path, {name: argv for name, (argv, _) in commands.items()})
    assert (len(watch.requests), watch.fifo_reads) == before, watch.requests[before[0] :]
    for name, (_, code) in commands.items():
        got, out, err = results[name]
        assert got == code, (name, out, err)
        assert "Traceback" not in err, (name, err)
        if code == 2 and name != "score-imported":
            lines = err.strip().splitlines()
            assert len(lines) == 1, (name, lines)
            assert "contract.json:" in lines[0] or name == "replay", (name, lines)
            assert "parameters" + format_path(where)[1:] in lines[0], (name, lines)


# -- at load: which references are accepted ------------------------------------------------

FAR = "http://127.0.0.1:9"  # never contacted: these contracts are refused before any use


def _load(parameters: dict[str, Any]) -> Contract:
    tool = {"type": "function", "function": {"name": "t", "parameters": parameters}}
    return parse_contract({"tools": [tool]}, source="c.json")


def _refused(parameters: dict[str, Any]) -> ContractError:
    with pytest.raises(ContractError) as caught:
        _load(parameters)
    return caught.value


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_form_is_a_contract_error_naming_the_reference(form: str, tmp_path: Path) -> None:
    make, where = FORMS[form]
    parameters: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}
    _with(parameters, make(FAR, str(tmp_path / "fifo")))
    error = _refused(parameters)
    assert error.path == "$.tools[0].function.parameters" + format_path(where)[1:]
    assert "inside" in error.problem, error.problem  # says what is accepted


def test_the_message_says_what_was_expected_and_what_was_got() -> None:
    error = _refused({"type": "object", "properties": {"enum": {"$ref": f"{FAR}/x.json"}}})
    assert str(error) == (
        "c.json: at $.tools[0].function.parameters.properties.enum.$ref 'parameters' '$ref' "
        f"'{FAR}/x.json' is outside this schema: txcheck resolves references only inside "
        "the tool's schema ('#' or '#/$defs/...') and never fetches one"
    )


@pytest.mark.parametrize(
    "parameters",
    [
        {"$defs": {"n": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
        {"$id": f"{FAR}/root.json", "$defs": {"n": {}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
        {"properties": {"a": {"$ref": "#/properties/b"}, "b": {"type": "integer"}}},
        {"properties": {"t": {"properties": {"c": {"$ref": "#/properties/t"}}}}},
        {"$dynamicAnchor": "node", "properties": {"c": {"$dynamicRef": "#node"}}},
        {"properties": {"a": {"default": {"$ref": f"{FAR}/data.json"}}}},
        {"properties": {"a": {"enum": [{"$ref": f"{FAR}/data.json", "$id": "x"}]}}},
        {"properties": {"a": {"examples": [{"$dynamicRef": f"{FAR}/data.json"}]}}},
        {"properties": {"a": {"type": "string"}}, "x-note": {"$ref": f"{FAR}/unused.json"}},
    ],
    ids=[
        "defs",
        "root-id",
        "sibling",
        "recursion-through-properties",
        "dynamic-anchor-in-schema",
        "ref-in-default-is-data",
        "ref-in-enum-is-data",
        "dynamic-ref-in-examples-is-data",
        "unknown-keyword-is-not-evaluated",
    ],
)
def test_references_inside_the_schema_and_look_alikes_in_data_load(
    parameters: dict[str, Any],
) -> None:
    _load({"type": "object", **parameters})


@pytest.mark.parametrize(
    ("parameters", "where", "says"),
    [
        (
            {"$defs": {"a": {"$ref": "#/$defs/a"}}, "properties": {"x": {"$ref": "#/$defs/a"}}},
            "$defs.a.$ref",
            "loops",
        ),
        ({"allOf": [{"$ref": "#"}]}, "allOf[0].$ref", "loops"),
        (
            {
                "$defs": {
                    "a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/b"}]},
                    "b": {"not": {"$ref": "#/$defs/a"}},
                },
                "properties": {"x": {"$ref": "#/$defs/a"}},
            },
            "$defs.b.not.$ref",
            "loops",
        ),
        (
            {"properties": {"x": {"$ref": "#/$defs/missing"}}},
            "properties.x.$ref",
            "does not resolve",
        ),
        (
            {"properties": {"x": {"description": "d", "$ref": "#/properties/x/description"}}},
            "properties.x.$ref",
            "not a schema",
        ),
        ({"properties": {"x": {"$ref": "#anchor"}}}, "properties.x.$ref", "inside"),
        ({"properties": {"x": {"$dynamicRef": "#nowhere"}}}, "properties.x.$dynamicRef", "inside"),
        ({"$ref": "#/default", "default": {"$ref": f"{FAR}/x.json"}}, "default.$ref", "outside"),
        ({"$ref": "#/default", "default": {"$id": f"{FAR}/x/"}}, "default.$id", "inside"),
    ],
    ids=[
        "loop",
        "loop-to-root",
        "loop-through-any-of-and-not",
        "missing",
        "not-a-schema",
        "anchor",
        "dynamic-ref-without-anchor",
        "ref-into-data-makes-it-a-schema",
        "nested-id-in-data-made-a-schema",
    ],
)
def test_references_that_cannot_be_resolved_inside_are_refused(
    parameters: dict[str, Any], where: str, says: str
) -> None:
    error = _refused({"type": "object", **parameters})
    assert error.path == f"$.tools[0].function.parameters.{where}"
    assert says in error.problem, error.problem


def test_a_contract_built_in_code_is_checked_when_compiled() -> None:
    """A library user may build a ``Contract`` without the loader: compiling it refuses the
    same references (and so never fetches one)."""
    schema = {"type": "object", "properties": {"enum": {"$ref": f"{FAR}/x.json"}}}
    contract = Contract(tools={"t": Tool(name="t", parameters=schema)})
    with pytest.raises(ContractError, match=r"'\$ref' 'http://127.0.0.1:9/x.json' is outside"):
        compile_contract(contract)
