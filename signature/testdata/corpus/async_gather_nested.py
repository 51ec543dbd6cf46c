a, (b, c) = await asyncio.gather(
    tools.get_task(task_id=task_id),  # first
    asyncio.gather(tools.get_job(job_id=1), tools.get_job(job_id=2)),
)
return [a, b, c]
