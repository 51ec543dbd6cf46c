r = await asyncio.gather(tools.get_task(task_id=task_id), *more)
return r
