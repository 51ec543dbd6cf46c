summary, logs = await asyncio.gather(
    tools.get_task_jobs_summary(task_id=42),
    tools.fetch_logs(job_id=-7, pattern="ERROR \d+"),
)
x = await tools.search(query="why did task 42 fail?", top_k=5)  # 42 in a comment
return {"s": summary, "l": logs, "x": x}
