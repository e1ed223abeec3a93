"""Finds and reads a bindersim topology as the CLI does (docs/topology-format.md, "Naming and
finding a topology"): an argument that names an existing file, ends in .json or contains a `/`
is a path; anything else is a name, `topologies/<name>.json` in the data directory
($BINDERSIM_DATA_DIR when set and not empty, else this source tree)."""
import json
import os

SOURCE_TREE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def path_of(name_or_path):
    if os.path.isfile(name_or_path) or name_or_path.endswith(".json") or "/" in name_or_path:
        return name_or_path
    data = os.environ.get("BINDERSIM_DATA_DIR") or SOURCE_TREE
    return os.path.join(data, "topologies", f"{name_or_path}.json")


def load(name_or_path):
    """The topology document; raises OSError or ValueError when it cannot be read."""
    with open(path_of(name_or_path), encoding="utf-8") as f:
        return json.load(f)
