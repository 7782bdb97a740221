"""The wire contract between the referee and bots: JSON lines on stdin/stdout."""
