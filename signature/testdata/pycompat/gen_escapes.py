"""Writes escapes.json: what CPython makes of string literals with escapes
Python keeps as they are (and some it interprets), for TestEscapesAsCPython.
A bytes literal's value is written as the string of its bytes (latin-1),
with "bytes": true.
Run: python3 gen_escapes.py (any CPython 3.8+)."""
import json
import warnings

LITERALS = [
    r'"\d+"',
    r"'\w+\.\s*'",
    r'"\\d"',
    r'"\\\d"',
    r'"a\qb"',
    r'"\8\9"',
    r'"\é"',
    r'"""x\[y\]\n"""',
    r'"\x41\101\u0042\t"',
    r'"\d\
e"',
    r"'\{\}\-\/'",
    r'"^\s*ERROR\s+\[(\d+)\]$"',
    r'"\\"',
    r'"\'\" \a\b\f\v\r"',
    # In bytes, \u, \U and \N are not escapes: CPython keeps them.
    r'b"\u00e9\U0001F600"',
    r'b"\N{EM DASH}"',
    r'b"\d\x41\101\t"',
    r"b'\w\u'",
]

out = []
for lit in LITERALS:
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        value = eval(compile(lit, "<literal>", "eval"))
    case = {"literal": lit, "value": value, "warnings": len(ws)}
    if isinstance(value, bytes):
        case["value"], case["bytes"] = value.decode("latin-1"), True
    out.append(case)
with open("escapes.json", "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")
