"""Jobs on other machines: the Ray executor, parcels, the per-job relay to the head's
gateway, images on every node, and the Ray cluster (see README.md). Imports no loop code."""
