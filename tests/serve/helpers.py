"""Shared by the serve tests."""

SCRIPT_DIFF = '<script>document.title="pwned"</script><img src=x onerror="alert(1)">'
"""A line an agent wrote into its code: the page must show it as text, never run it."""
