"""JSON layout of the shipped data files: objects and arrays that hold only scalars on one line,
everything else indented by two spaces."""
import json


def _flat(value):
    items = value.values() if isinstance(value, dict) else value
    return all(not isinstance(item, (dict, list)) for item in items)


def _format(value, indent):
    pad = "  " * indent
    if isinstance(value, (dict, list)) and _flat(value):
        return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)
    if isinstance(value, dict):
        items = [f'{pad}  {json.dumps(k)}: {_format(v, indent + 1)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        items = [f"{pad}  {_format(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def dumps(value):
    return _format(value, 0) + "\n"
