p = "\d\d" + tools.search_logs(x=1) + = 2
