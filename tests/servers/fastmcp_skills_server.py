"""A FastMCP 4.1 server offering the skills of a folder through FastMCP's skills provider, over
stdio: what the tests of mcpmux's skills call. Each subfolder holding a SKILL.md is a skill.

- By default, with the Skills extension (SEP-2640): `skills/list` gives each skill with its
  files' digests and sizes.
- With `--resources`, as FastMCP's `SkillsDirectoryProvider` serves skills unless told
  otherwise, without the extension: each skill is the resource `skill://NAME/SKILL.md`
  beside `skill://NAME/_manifest`, a JSON list of its files with their sizes and hashes.

Either way `resources/read` serves the files as they are on disk (so a test that rewrites a
file after the listing sees mcpmux refuse it), and says on stderr which it read (`read URI`),
so a test sees which files mcpmux asked for.

    python fastmcp_skills_server.py SKILLS_FOLDER [--resources]
"""

import sys
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension


class ReadLog(Middleware):
    """Says on stderr which resource each `resources/read` asked for."""

    async def on_read_resource(self, context, call_next):
        print(f"read {context.message.uri}", file=sys.stderr, flush=True)
        return await call_next(context)


mcp = FastMCP("skills")
mcp.add_middleware(ReadLog())
if "--resources" in sys.argv[2:]:
    mcp.add_provider(SkillsDirectoryProvider(roots=Path(sys.argv[1])))
else:
    provider = SkillsDirectoryProvider(roots=Path(sys.argv[1]), experimental_skills=True)
    mcp.add_provider(provider)
    mcp.add_extension(SkillsExtension(providers=[provider]))

if __name__ == "__main__":
    mcp.run(show_banner=False)
