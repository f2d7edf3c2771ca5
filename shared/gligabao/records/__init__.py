"""What each call leaves for operators: port, model, metering, monitoring, stores."""
