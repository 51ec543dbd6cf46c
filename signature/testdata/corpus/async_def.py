async def fetch(i):
    return await tools.get_job(job_id=i)

async  def other():
    return await   tools.get_task(task_id=task_id)

return [await fetch(1), await other()]
