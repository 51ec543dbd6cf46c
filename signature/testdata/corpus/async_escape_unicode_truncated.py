p = b"\d" + "C:\Users\x"
return tools.search_logs(pattern=p)
