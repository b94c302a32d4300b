"""Where the custom-node ABI header and the built-in custom nodes live inside the installed wheel.

    cc -shared -fPIC -I"$(python -c 'import ovmsx.custom_nodes as c; print(c.include_dir())')" \\
        my_node.c -o libmy_node.so
"""

from __future__ import annotations

from pathlib import Path

from ovmsx import _core

# The build installs the header and the nodes next to the compiled core: in the package folder
# of a regular install, in site-packages for an editable one (whose Python files stay in the
# source tree).
_PACKAGE = Path(_core.__file__).resolve().parent


def include_dir() -> Path:
    """The folder holding ``custom_node_interface.h``."""
    return _PACKAGE / "include"


def built_in_dir() -> Path:
    """The folder holding the built-in nodes (``libcustom_node_<name>.so``)."""
    return _PACKAGE / "lib" / "custom_nodes"


def built_in(name: str) -> Path:
    """The path of built-in node ``name`` (e.g. ``add_one``)."""
    return built_in_dir() / f"libcustom_node_{name}.so"
