import asyncio
return await tools.get_task(task_id=task_id)
