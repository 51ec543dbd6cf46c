r = await (asyncio
    .gather(
        tools.a(),
        tools.b()))
s = await asyncio \
    .gather(*r)
return r, s
