async for x in tools.stream():
    pass
