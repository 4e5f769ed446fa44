"""The prompt_toolkit terminal client: lobby, table screens, and its one door to the network."""
