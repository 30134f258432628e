"""Entry point named in agent.toml: python3 -B run.py solve --workdir W --task T --out O."""

import os
import sys

sys.dont_write_bytecode = True  # the agent's own dir may be read-only: never write into it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from coder.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
