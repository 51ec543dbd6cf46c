é = await asyncio.gather(tools.a(q="ü"), tools.b()); z = é +
