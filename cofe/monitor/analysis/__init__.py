"""What the store's traces mean: per-window signals, the judges' sampled measures, canary
rounds, alert rules and the loop that sends their alerts to sinks."""
