"""Agent versions: every config an agent has had, numbered and hashed; aliases pointing at them."""
