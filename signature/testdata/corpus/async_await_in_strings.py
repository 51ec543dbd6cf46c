# await asyncio.gather(x) in a comment stays
msg = "await asyncio.sleep(1)"
doc = """async def f():
    await asyncio.gather(a, b)
"""
r = await tools.get_task(task_id=task_id, note=msg + doc)  # await here too
return r
