"""The calculator registry and Python calculators, in process: names, module import, the
contract checked at load, the lifecycle, and the ``ovmsx.calculators`` entry point group."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ovmsx.calculators import PythonCalculator, register_calculator
from ovmsx.config.mediapipe_config import MediapipeConfig
from ovmsx.graph import calculator_registry, calculator_table
from ovmsx.graph.calculator import GraphLoad
from ovmsx.graph.calculator_registry import import_modules, known_names, lookup
from ovmsx.graph.graph_config import parse_graph
from ovmsx.graph.graph_plan import build_plan
from ovmsx.graph.graph_run import GraphRun
from ovmsx.servables.graph import Graph
from ovmsx.status import StatusCode, StatusError

INIT_ERROR = "Failed to initialize mediapipe graph - "


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test registers into a copy of the table (built-ins included), imports afresh."""
    monkeypatch.setattr(calculator_table, "_TABLE", dict(calculator_table._TABLE))
    monkeypatch.setattr(calculator_registry, "_imported_files", set())


def _write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


# A module that counts its own imports in a file next to it.
DOUBLER = """
    from pathlib import Path

    from ovmsx.calculators import PythonCalculator, register_calculator

    with Path(__file__).with_suffix(".imports").open("a") as log:
        log.write("x")

    @register_calculator
    class Doubler(PythonCalculator):
        INPUTS = ("IN",)
        OUTPUTS = ("OUT",)

        def process(self, context):
            context.output("OUT", context.input("IN") * 2)
"""


def _calculator_of(name: str) -> type:
    return calculator_table._TABLE[name][1]


# -- names -----------------------------------------------------------------------------------


def test_a_class_registers_under_its_name_or_the_one_given() -> None:
    @register_calculator
    class Plain(PythonCalculator):
        pass

    @register_calculator(name="Renamed")
    class Other(PythonCalculator):
        pass

    assert _calculator_of("Plain") is Plain
    assert _calculator_of("Renamed") is Other
    assert "Other" not in known_names()
    assert {"Plain", "Renamed", "OpenVINOInferenceCalculator"} <= set(known_names())


def test_registering_the_same_class_again_is_harmless() -> None:
    class Again(PythonCalculator):
        pass

    register_calculator(Again)
    register_calculator(Again)
    assert _calculator_of("Again") is Again


def test_a_taken_name_under_another_class_is_refused() -> None:
    class First(PythonCalculator):
        pass

    class Second(PythonCalculator):
        pass

    register_calculator(First, name="Twin")
    with pytest.raises(StatusError) as refused:
        register_calculator(Second, name="Twin")
    assert refused.value.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    where = f"{__name__}.test_a_taken_name_under_another_class_is_refused.<locals>"
    assert str(refused.value) == (
        f"{INIT_ERROR}calculator Twin is registered twice ({where}.First and {where}.Second)"
    )
    assert _calculator_of("Twin") is First


def test_a_built_in_name_cannot_be_taken() -> None:
    class Impostor(PythonCalculator):
        pass

    with pytest.raises(StatusError, match=r"OpenVINOInferenceCalculator is registered twice "):
        register_calculator(Impostor, name="OpenVINOInferenceCalculator")


def test_only_python_calculators_register() -> None:
    with pytest.raises(TypeError, match="register_calculator takes a subclass of PythonCalculator"):
        register_calculator(object)


# -- modules ---------------------------------------------------------------------------------


def test_a_module_file_is_imported_once_for_every_graph_listing_it(tmp_path) -> None:
    module = _write(tmp_path / "calculators.py", DOUBLER)
    import_modules(["../calculators.py"], tmp_path / "first_graph", "first_graph")
    doubler = _calculator_of("Doubler")
    import_modules(["../calculators.py"], tmp_path / "second_graph", "second_graph")
    import_modules([str(module)], tmp_path / "third_graph", "third_graph")  # absolute
    assert _calculator_of("Doubler") is doubler
    assert module.with_suffix(".imports").read_text() == "x"


def test_a_module_by_its_import_name(tmp_path, monkeypatch, request) -> None:
    name = "ovmsx_registry_test_doubler"
    _write(tmp_path / f"{name}.py", DOUBLER)
    monkeypatch.syspath_prepend(str(tmp_path))
    request.addfinalizer(lambda: sys.modules.pop(name, None))
    import_modules([name], tmp_path / "graph", "graph")
    assert _calculator_of("Doubler").__module__ == name


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        (None, "FileNotFoundError: {path} does not exist"),
        ("raise RuntimeError('no weights on purpose')\n", "RuntimeError: no weights on purpose"),
        ("def broken(:\n", "SyntaxError: invalid syntax (calcs.py, line 1)"),
    ],
)
def test_a_module_that_cannot_be_imported_fails_the_graph(tmp_path, source, problem) -> None:
    path = tmp_path / "calcs.py"
    if source is not None:
        path.write_text(source)
    with pytest.raises(StatusError) as failed:
        import_modules(["calcs.py"], tmp_path, "my_graph")
    assert failed.value.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    expected = f"graph my_graph: calculator module calcs.py failed to import: {problem}"
    assert str(failed.value) == INIT_ERROR + expected.format(path=path)


def test_a_module_that_failed_is_imported_again_once_fixed(tmp_path) -> None:
    path = _write(tmp_path / "calcs.py", "raise RuntimeError('not yet')\n")
    with pytest.raises(StatusError, match="not yet"):
        import_modules(["calcs.py"], tmp_path, "graph")
    _write(path, DOUBLER)
    import_modules(["calcs.py"], tmp_path, "graph")
    assert "Doubler" in known_names()


# -- the contract, checked when a node is built ----------------------------------------------

OPTIONS = "[type.googleapis.com/mediapipe.PythonCalculatorOptions]"


class Contracted(PythonCalculator):
    INPUTS = ("IN", "EXTRA?")
    OUTPUTS = ("OUT",)
    INPUT_SIDE_PACKETS = ("FACTOR?",)

    @classmethod
    def check_node(cls, node) -> None:
        if node.name == "refused":
            raise ValueError("this node may not be called refused")

    def process(self, context) -> None:
        context.output("OUT", context.input("IN"))


def _node(streams: str, name: str = "n", options: str = ""):
    register_calculator(Contracted)
    text = f'node {{ name: "{name}" calculator: "Contracted" {streams} {options} }}'
    (config,) = parse_graph(text, "test.pbtxt").nodes
    return lookup("Contracted")(config, GraphLoad(Path(".")))


def test_a_node_gets_its_options_and_name() -> None:
    options = f'node_options: {{ {OPTIONS}: {{ params {{ key: "k" value: "v" }} }} }}'
    node = _node('input_stream: "IN:a" output_stream: "OUT:b"', "mine", options)
    assert dict(node.options) == {"k": "v"}
    instance = node.create()
    assert isinstance(instance, Contracted)
    assert (dict(instance.options), instance.node_name) == ({"k": "v"}, "mine")
    assert node.create() is not instance


def test_optional_tags_may_be_used_or_left_out() -> None:
    _node('input_stream: "IN:a" output_stream: "OUT:b"')
    _node('input_stream: "IN:a" input_stream: "EXTRA:e" input_side_packet: "FACTOR:f" '
          'output_stream: "OUT:b"')  # fmt: skip


@pytest.mark.parametrize(
    ("streams", "problem"),
    [
        (
            'input_stream: "IN:a" input_stream: "WRONG:w" output_stream: "OUT:b"',
            'input stream tag "WRONG" is not one it declares (EXTRA, IN)',
        ),
        ('input_stream: "IN:a"', 'the calculator requires the output stream tag "OUT"'),
        (
            'input_stream: "IN:a" output_stream: "OUT:b" input_side_packet: "SESSION:s"',
            'input side packet tag "SESSION" is not one it declares (FACTOR)',
        ),
        (
            'input_stream: "IN:a" output_stream: "OUT:b" output_side_packet: "X:x"',
            'output side packet tag "X" is not one it declares (none)',
        ),
    ],
)
def test_a_node_breaking_the_contract_is_refused_naming_node_and_tag(streams, problem) -> None:
    with pytest.raises(StatusError) as refused:
        _node(streams)
    assert refused.value.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    assert str(refused.value) == f"{INIT_ERROR}node n (Contracted): {problem}"


def test_check_node_may_refuse_a_node() -> None:
    with pytest.raises(StatusError) as refused:
        _node('input_stream: "IN:a" output_stream: "OUT:b"', "refused")
    assert str(refused.value) == (
        f"{INIT_ERROR}node refused (Contracted): this node may not be called refused"
    )


# -- the lifecycle, run in process -----------------------------------------------------------

LIFECYCLE = """
input_stream: "in"
output_stream: "out"
node { name: "times" calculator: "Times" input_stream: "IN:in" output_stream: "OUT:out"
       input_side_packet: "FACTOR:factor" }
node { name: "publish" calculator: "Publish" output_side_packet: "FACTOR:factor" }
"""


def test_open_process_close_and_a_side_packet_published_in_open() -> None:
    calls: list[tuple[str, str]] = []

    @register_calculator
    class Publish(PythonCalculator):
        OUTPUT_SIDE_PACKETS = ("FACTOR",)

        def open(self, context) -> None:
            calls.append((self.node_name, "open"))
            context.set_side_packet("FACTOR", 10)

        def close(self, context) -> None:
            calls.append((self.node_name, "close"))

    @register_calculator
    class Times(PythonCalculator):
        INPUTS = ("IN",)
        OUTPUTS = ("OUT",)
        INPUT_SIDE_PACKETS = ("FACTOR",)

        def open(self, context) -> None:
            calls.append((self.node_name, "open"))
            self.factor = context.side_packet("FACTOR")

        def process(self, context) -> None:
            calls.append((self.node_name, "process"))
            context.output("OUT", context.input("IN") * self.factor)

        def close(self, context) -> None:
            calls.append((self.node_name, "close"))

    config = parse_graph(LIFECYCLE, "test.pbtxt")
    nodes = [lookup(n.calculator)(n, GraphLoad(Path("."))) for n in config.nodes]
    outputs = []
    run = GraphRun(build_plan(config, nodes), {}, lambda stream, packet: outputs.append(packet))
    for timestamp, value in ((1, 2), (2, 5)):
        run.add_packet("in", value, timestamp)
    run.close_inputs()
    run.drain()
    assert run.error is None
    assert [(p.value, p.timestamp) for p in outputs] == [(20, 1), (50, 2)]
    # The publisher opens first (its side packet is the other's input); each node opens and
    # closes once, and the publisher, with no input to wait for, may close at once.
    assert [call for call in calls if call[0] == "times"] == [
        ("times", "open"),
        ("times", "process"),
        ("times", "process"),
        ("times", "close"),
    ]
    assert [call for call in calls if call[0] == "publish"] == [
        ("publish", "open"),
        ("publish", "close"),
    ]
    assert calls.index(("publish", "open")) < calls.index(("times", "open"))


# -- the ovmsx.calculators entry point group ---------------------------------------------------

PLUGIN = """
    from ovmsx.calculators import PythonCalculator

    class PluginNegate(PythonCalculator):
        INPUTS = ("IN",)
        OUTPUTS = ("OUT",)

        def process(self, context):
            context.output("OUT", -context.input("IN"))

    class NotACalculator:
        pass
"""
ENTRY_POINTS = """
    [ovmsx.calculators]
    RegistryTestNegate = ovmsx_registry_test_plugin:PluginNegate
    RegistryTestMissing = ovmsx_registry_test_nowhere:Nothing
    RegistryTestNotACalculator = ovmsx_registry_test_plugin:NotACalculator
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch) -> Iterator[Path]:
    """An installed distribution offering calculators: a module and its dist-info."""
    _write(tmp_path / "ovmsx_registry_test_plugin.py", PLUGIN)
    info = tmp_path / "ovmsx_registry_test_plugin-1.0.dist-info"
    _write(info / "METADATA", "Metadata-Version: 2.1\nName: ovmsx-registry-test-plugin\n"
                              "Version: 1.0\n")  # fmt: skip
    _write(info / "entry_points.txt", ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("ovmsx_registry_test_plugin", None)


def test_an_entry_point_calculator_is_found_when_a_graph_names_it(plugin) -> None:
    assert "RegistryTestNegate" not in known_names()  # loaded on demand, not at start
    assert lookup("RegistryTestNegate") is not None
    assert _calculator_of("RegistryTestNegate").__name__ == "PluginNegate"
    assert "RegistryTestNegate" in known_names()


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        (
            "RegistryTestMissing",
            "entry point ovmsx_registry_test_nowhere:Nothing failed to load: "
            "ModuleNotFoundError: No module named 'ovmsx_registry_test_nowhere'",
        ),
        (
            "RegistryTestNotACalculator",
            "entry point ovmsx_registry_test_plugin:NotACalculator failed to load: "
            "TypeError: register_calculator takes a subclass of PythonCalculator",
        ),
    ],
)
def test_a_broken_entry_point_fails_the_graph_naming_it(plugin, name, problem) -> None:
    with pytest.raises(StatusError) as failed:
        lookup(name)
    assert failed.value.code is StatusCode.MEDIAPIPE_GRAPH_INITIALIZATION_ERROR
    assert str(failed.value) == f"{INIT_ERROR}calculator {name}: {problem}"


def test_a_graph_runs_an_entry_point_calculator_without_listing_modules(plugin) -> None:
    folder = plugin / "negate"
    _write(folder / "graph.pbtxt", """
        input_stream: "in"
        output_stream: "out"
        node { calculator: "RegistryTestNegate" input_stream: "IN:in" output_stream: "OUT:out" }
    """)  # fmt: skip
    config = MediapipeConfig.model_validate({"name": "negate"}, context={"config_dir": plugin})
    graph = Graph("negate", config)
    graph.load()
    outputs = []
    run = GraphRun(graph.plan, {}, lambda stream, packet: outputs.append((stream, packet.value)))
    run.add_packet("in", 4, 1)
    run.close_inputs()
    run.drain()
    assert (run.error, outputs) == (None, [("out", -4)])


@pytest.mark.parametrize(
    "first",
    ["ovmsx.calculators", "ovmsx.graph.calculator_registry", "ovmsx.graph.python_calculator"],
)
def test_the_public_module_imports_first_in_a_fresh_interpreter(first: str, tmp_path) -> None:
    # Users unit-test their calculators without a server: no import order may be required.
    code = (
        f"import {first}\n"
        "from ovmsx.calculators import PythonCalculator, register_calculator\n"
        "from ovmsx.graph.calculator_registry import lookup\n"
        "assert lookup('OpenVINOInferenceCalculator') is not None\n"
    )
    # Away from the source tree, which would shadow the installed package.
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
