"""The referee: rules engines (referee.games), the Trio match runner (referee.match), and the
contract every game keeps, as checks its author runs (referee.contract)."""
