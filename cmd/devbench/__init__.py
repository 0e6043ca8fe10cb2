"""The benchmark scripts behind make speed, make scale, make gpu and make ray-estimate (entry points)."""
