"""What each call leaves for operators: inferences, trajectory, monitoring."""
