await asyncio.sleep(1)
return await tools.get_task(task_id=task_id)
