"""Survey weights for the open tier: population margins, raking, weighted estimates."""
