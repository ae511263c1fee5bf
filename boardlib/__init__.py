"""Board-side building blocks: input conditioning, shot assembly, display, link, journal."""
