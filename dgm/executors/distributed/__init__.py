"""Jobs on other machines: parcels, the per-job relay to the head's gateway, images on
every node, and the Ray cluster (see README.md). Imports no loop code: the loop's
`RayExecutor` (dgm/loop/ray_executor.py) builds on this room."""
