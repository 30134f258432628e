from tinyutil.text import initials, slugify


def test_slugify_simple():
    assert slugify("Hello World") == "hello-world"


def test_initials():
    assert initials("ada lovelace") == "AL"
