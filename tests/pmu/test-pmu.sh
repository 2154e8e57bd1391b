echo placeholder; exit 0
