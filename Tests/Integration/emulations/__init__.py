"""In-process emulations of third-party APIs whose auth schemes latchkey reproduces."""
