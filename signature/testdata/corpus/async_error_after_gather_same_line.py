x = await asyncio.gather(tools.a(), tools.b()); y = x +
