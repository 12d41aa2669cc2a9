"""The restricted tier's jobs: what a team asks (``requests``), each job run once per agent through the door
(``lifecycle``), and what a team sees of its own project (``activity``)."""
