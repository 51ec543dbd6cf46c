"""Generates golden.json: Bamboo's reference procedure_tool_name and
code_hash on tricky inputs. Run from this directory: python3 gen.py"""
import hashlib, json, re

def procedure_tool_name(signature):
    base = "proc__" + "__".join(signature)
    base = re.sub(r"[^0-9A-Za-z_]", "_", base)
    if len(base) > 60:
        digest = hashlib.sha256("::".join(signature).encode()).hexdigest()[:8]
        base = base[:51] + "_" + digest
    return base

def code_hash(code):
    lines = [l.rstrip() for l in code.splitlines()]
    return hashlib.sha256("\n".join(l for l in lines if l).encode()).hexdigest()

signatures = [
    [], ["a"], ["get_task_jobs_summary", "retry_task"],
    ["x" * 54], ["x" * 55], ["x" * 56], ["a" * 30, "b" * 30],
    ["café", "名前"], ["é" * 60], ["with-dash", "with.dot", "sp ace"],
    ["proc__inner", "tool"], ["😀" * 3, "b"], ["a" * 20, "é" * 20, "c" * 20],
    ["compare_failed_vs_successful_job_logs", "find_similar_successful_tasks", "get_failed_job_log_summary"],
]
ws = ["\t", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x1f", " ", "\x85", "\xa0", "\u1680",
      "\u2000", "\u200a", "\u200b", "\u180e", "\u2028", "\u2029", "\u202f", "\u205f",
      "\u3000", "\ufeff", "\r", "\r\n", "\n"]
codes = ["", "\n", "   \n\t\n", "x = 1", "x = 1\n", "x = 1   \n\n\n  y = 2\t\n",
         "a\r\nb\rc\nd", "  # comment  \n    indented   ", "a\n\r\nb", "a\r\r\nb",
         "é = 'ü'  \u3000\n", "\u3000x\u3000"]
codes += ["a" + w + "b" + w + "\n" + w + "c" + w for w in ws]
codes += ["line" + w for w in ws] + [w + w + "x" for w in ws]
out = {
    "names": [{"signature": s, "name": procedure_tool_name(s)} for s in signatures],
    "hashes": [{"code": c, "hash": code_hash(c)} for c in codes],
}
with open("golden.json", "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
