"""Every `dgm <cmd>`: parse the arguments, call the library, render the result.

Nothing in dgm/ imports this package; business logic lives in the rooms below it.
"""
