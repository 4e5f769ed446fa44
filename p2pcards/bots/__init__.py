"""Players that see only their own view: random legal bots and good bots for both games."""
