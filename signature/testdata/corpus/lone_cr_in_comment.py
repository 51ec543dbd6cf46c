x = await tools.get_task_jobs_summary(task_id=1)
# notetools.kill_job(panda_id=666)
return x
