"""The referee: rules engines (referee.games) and the Trio match runner."""
