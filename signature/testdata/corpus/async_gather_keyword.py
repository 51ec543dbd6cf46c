r = await asyncio.gather(
    tools.get_task(task_id=task_id),
    return_exceptions=True,
)
return r
