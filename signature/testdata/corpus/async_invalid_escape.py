p = "\d+"
logs = await tools.search_logs(pattern=p, task_id=task_id)
q = '\w+\.log\s*\8' + "\\d\t" + r"\d" + """
multi \[line]
"""
return [logs, q]
