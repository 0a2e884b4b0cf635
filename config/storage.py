"""Static files with DEBUG off: hashed, compressed names once collectstatic ran; plain
names (served by whitenoise from the app folders) when it did not."""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    def stored_name(self, name: str) -> str:
        try:
            return str(super().stored_name(name))
        except ValueError:
            # No manifest (collectstatic never ran) and no collected file to hash:
            # the plain name, which whitenoise serves from the finders.
            return name
