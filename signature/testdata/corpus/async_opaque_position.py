r = await asyncio.gather(tools.get_task(task_id=task_id), getattr(tools, "kill_job")(job_id=1))
return r
