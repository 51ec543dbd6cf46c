x, y = await asyncio.gather(tools.a(), tools.b())
z = await tools.c() +
return z
