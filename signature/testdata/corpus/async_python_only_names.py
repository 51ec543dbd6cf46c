r = await tools.get_task(task_id=task_id)
return json.dumps(r)
