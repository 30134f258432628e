"""`dgm serve`: a live web app over run folders (read the store; steering requests go in as
rows the loop applies). Imports the store and the report, never the loop."""
