print("3 rows")
