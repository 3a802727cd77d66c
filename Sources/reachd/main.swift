print("reachd")
