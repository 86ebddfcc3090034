"""Tools the help desk calls, the cache they pass through, and the backends behind them."""
