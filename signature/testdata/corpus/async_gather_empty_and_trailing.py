x = await asyncio.gather()
y = await asyncio.gather(tools.get_task(task_id=task_id),)
return x + y
