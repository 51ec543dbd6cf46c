"""Bamboo-style signature extraction, for BenchmarkAnalyzeVsCPython.
Usage: python3 python_signature.py FILE [N]. Prints the signature and ns/op."""
import ast, sys, textwrap, time

def signature(code):
    tree = ast.parse("async def f():\n" + textwrap.indent(code, "    "))
    return sorted({n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                   and isinstance(n.value, ast.Name) and n.value.id == "tools"})

code, n = open(sys.argv[1]).read(), int(sys.argv[2]) if len(sys.argv) > 2 else 2000
start = time.perf_counter_ns()
for _ in range(n):
    sig = signature(code)
print(",".join(sig), (time.perf_counter_ns() - start) / n, "ns/op")
