"""Versioned prompt templates. A template is `<name>.md` in this folder: a front-matter block
with `version:`, then the text with `{{placeholder}}` fields. Changing a prompt means a new file
(minimal_v2.md), so old transcripts stay reproducible; each transcript records the file name,
the version string and the sha256 of the file's bytes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from kernelarena.errors import ConfigError

PROMPTS_DIR = Path(__file__).resolve().parent
_FRONT_MATTER = re.compile(r"\A---\n(?P<meta>.*?)\n---\n", re.DOTALL)
_FIELD = re.compile(r"\{\{\s*(\w+)\s*\}\}")


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    file: str
    version: str
    sha256: str
    body: str

    def render(self, **values: object) -> str:
        missing = sorted({m.group(1) for m in _FIELD.finditer(self.body)} - set(values))
        if missing:
            raise ConfigError(f"prompt {self.file} needs values for {missing}; pass them to render()")
        return _FIELD.sub(lambda m: str(values[m.group(1)]), self.body)

    def record(self) -> dict[str, str]:
        """What a transcript's trial_start stores about the prompt."""
        return {"name": self.name, "file": self.file, "version": self.version, "sha256": self.sha256}


def load_prompt(name: str, directory: Path = PROMPTS_DIR) -> PromptTemplate:
    path = directory / f"{name}.md"
    if not path.is_file():
        known = sorted(p.stem for p in directory.glob("*.md"))
        raise ConfigError(f"no prompt template '{name}'; known: {', '.join(known)}")
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    match = _FRONT_MATTER.match(text)
    meta = dict(
        line.split(":", 1) for line in (match.group("meta").splitlines() if match else []) if ":" in line
    )
    version = meta.get("version", "").strip()
    if not version:
        raise ConfigError(f"prompt {path.name} has no 'version:' front matter; add one")
    return PromptTemplate(
        name=name,
        file=path.name,
        version=version,
        sha256=hashlib.sha256(raw).hexdigest(),
        body=text[match.end():] if match else text,
    )
